"""`OS::Nova::KeyPair`: an SSH keypair; its reference is its name, as in Heat."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Nova::KeyPair"
TYPE: Final = heat_type(NAME)


class KeypairRequest(BaseModel):
    """Create one keypair. Without a public key, the activity makes an ed25519 key
    from `seed` (drawn by the workflow, so a retried create makes the same key and
    adopts the keypair an earlier attempt made)."""

    model_config = ConfigDict(frozen=True)

    name: str
    public_key: str | None = None
    type: str | None = None
    user: str | None = None
    seed: str


class Keypair(BaseModel):
    """A keypair as Nova shows it, with the private key when Warden made it."""

    model_config = ConfigDict(frozen=True)

    name: str
    public_key: str
    private_key: str | None = None
    body: dict[str, Any] = {}


def keypair_request(props: Mapping[str, Any], seed: str) -> KeypairRequest:
    """The create request of a keypair resource."""
    return KeypairRequest(
        name=str(props["name"]),
        public_key=props.get("public_key") or None,
        type=props.get("type") or None,
        user=props.get("user") or None,
        seed=seed,
    )


def keypair_attributes(keypair: Keypair, save_private_key: bool) -> dict[str, Any]:
    """`public_key`, `private_key` (only when `save_private_key`, else ""), `show`."""
    return {
        "public_key": keypair.public_key,
        "private_key": (keypair.private_key or "") if save_private_key else "",
        "show": keypair.body,
    }
