"""Senlin's in-place update of a node's server (`ServerProfile.do_update`): pure.

A cluster update changes a node's server in place, keeping the node and its server,
when every `os.nova.server` property that differs between the profile the node runs
and the new one is one Senlin updates in place: `image` (Nova's rebuild), `flavor` (a
resize, confirmed), `metadata`, `admin_pass` (`changePassword`) and `name` (nothing to
do: Warden names a server after its node). A change of any other property (networks,
key_name, user_data, block devices, …) replaces the node, batch by batch, as Warden's
roll does; Senlin fails the node instead ("The following properties are not
updatable"). A node that failed or is marked unhealthy is replaced too: the update is
what heals it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from domain.cluster.profiles import nova_metadata

#: Properties Senlin's server profile updates on the same server.
IN_PLACE: Final = frozenset({"image", "flavor", "metadata", "admin_pass", "name"})


class ServerChanges(BaseModel):
    """What an in-place update does to each server (None: unchanged)."""

    model_config = ConfigDict(frozen=True)

    image: str | None = None
    flavor: str | None = None
    #: The profile's metadata as Nova takes it (Warden's own keys are kept beside it).
    metadata: dict[str, str] | None = None
    admin_pass: str | None = None


def _properties(spec: Mapping[str, Any]) -> dict[str, Any]:
    props = spec.get("properties")
    return dict(props) if isinstance(props, Mapping) else {}


def server_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> ServerChanges | None:
    """The in-place update from profile spec `old` to `new`, or None when a changed
    property needs a new server (or the new image is none: Nova cannot rebuild so)."""
    if old.get("type") != new.get("type"):
        return None
    before, after = _properties(old), _properties(new)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    if changed - IN_PLACE:
        return None
    if "image" in changed and not after.get("image"):
        return None
    return ServerChanges(
        image=str(after["image"]) if "image" in changed else None,
        flavor=str(after["flavor"]) if "flavor" in changed else None,
        metadata=nova_metadata(after.get("metadata")) if "metadata" in changed else None,
        admin_pass=str(after.get("admin_pass") or "") if "admin_pass" in changed else None,
    )
