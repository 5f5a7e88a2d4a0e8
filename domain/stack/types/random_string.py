"""`OS::Heat::RandomString`: a random value, replaced on any change of its properties."""

from __future__ import annotations

import random
import string
from collections.abc import Mapping
from typing import Any, Final

from domain.hot.properties import ResourceType, prop

NAME: Final = "OS::Heat::RandomString"

#: The characters of each `sequence`.
SEQUENCES: Final = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": string.digits + "abcdef",
    "octdigits": string.octdigits,
}

TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "length": prop("integer", default=32, minimum=1, maximum=512),
        "sequence": prop("string", default="lettersdigits", allowed_values=tuple(SEQUENCES)),
        "salt": prop("string"),
    },
    attributes=frozenset({"value"}),
    replace_on_any_change=True,
)


def random_value(props: Mapping[str, Any], rnd: random.Random) -> str:
    """The string for these properties, drawn from `rnd` (in a workflow: replay-safe)."""
    chars = SEQUENCES.get(str(props.get("sequence") or "lettersdigits"), SEQUENCES["letters"])
    return "".join(rnd.choice(chars) for _ in range(int(props.get("length") or 32)))
