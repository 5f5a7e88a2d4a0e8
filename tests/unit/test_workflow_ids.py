"""Ids built in workflows: the cheap UUID text is `workflow.uuid4()`'s, bit for bit."""

from __future__ import annotations

import random
import uuid

from hypothesis import given
from hypothesis import strategies as st

from workflows import ids


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_uuid_text_is_the_text_of_the_sdks_uuid4(bits: int) -> None:
    expected = uuid.UUID(bytes=bits.to_bytes(16, "big"), version=4)

    assert ids.uuid_text(bits) == str(expected)


def test_uuid_text_reads_back_as_a_version_4_uuid() -> None:
    parsed = uuid.UUID(ids.uuid_text(random.Random(7).getrandbits(128)))

    assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
