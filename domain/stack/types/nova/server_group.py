"""`OS::Nova::ServerGroup`: a Nova server group; servers join it through the scheduler
hint `group` (`scheduler_hints: {group: {get_resource: <it>}}`). Every property
replaces it, as in Heat (Nova cannot change a group)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.stack.types.api_object import ApiObjectType, Request
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Nova::ServerGroup"


def _body(props: Mapping[str, Any], name: str) -> Request:
    """Heat's create at microversion 2.64: the first policy (Heat sends only that one)
    and the rules."""
    policies = props.get("policies") or ["anti-affinity"]
    body: dict[str, Any] = {"name": props.get("name") or name, "policy": policies[0]}
    if props.get("rules"):
        body["rules"] = dict(props["rules"])
    return Request(body)


TYPE: Final = heat_type(NAME)
API: Final = ApiObjectType(rtype=TYPE, kind="server_group", body=_body)
