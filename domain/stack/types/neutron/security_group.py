"""`OS::Neutron::SecurityGroup` and `OS::Neutron::SecurityGroupRule`.

A group's `rules` are made after the group, as Heat makes them: the first egress rule
first deletes Neutron's two default allow-all egress rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from domain.cloud_objects import Lookup
from domain.errors import InvalidRequest
from domain.stack.types.api_object import ApiObjectType, Request, fields_of, given, lookup
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Neutron::SecurityGroup"
RULE_NAME: Final = "OS::Neutron::SecurityGroupRule"
FIELDS: Final = {"name": "name", "description": "description", "stateful": "stateful"}
RULE_FIELDS: Final = {
    "direction": "direction",
    "ethertype": "ethertype",
    "port_range_min": "port_range_min",
    "port_range_max": "port_range_max",
    "protocol": "protocol",
    "remote_ip_prefix": "remote_ip_prefix",
    "description": "description",
}


def _check_group(props: Mapping[str, Any], field: str) -> None:
    if props.get("name") == "default":
        raise InvalidRequest(
            f"{field}.name: Security groups cannot be assigned the name 'default'."
        )


def _body(props: Mapping[str, Any], name: str) -> Request:
    return Request(given(props, FIELDS) | {"name": props.get("name") or name})


def rule_request(rule: Mapping[str, Any], group_id: str) -> Request:
    """One rule of a group's `rules` (Heat's `_format_rule`) as Neutron's body."""
    body = given(rule, RULE_FIELDS) | {"security_group_id": group_id}
    body.setdefault("direction", "ingress")
    body.setdefault("ethertype", "IPv4")
    lookups: tuple[Lookup, ...] = ()
    if rule.get("remote_mode") == "remote_group_id":
        body.pop("remote_ip_prefix", None)
        remote = rule.get("remote_group_id")
        if remote:
            body["remote_group_id"] = remote
            lookups = (lookup(("remote_group_id",), "security_group", remote),)
        else:
            body["remote_group_id"] = group_id
    return Request(body, lookups)


def has_egress(rules: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the rules name an egress rule (the default egress rules then go)."""
    return any((r.get("direction") or "ingress") == "egress" for r in rules)


def _rule_body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, RULE_FIELDS) | {"security_group_id": props["security_group"]}
    lookups = [lookup(("security_group_id",), "security_group", props["security_group"])]
    if props.get("remote_group"):
        body["remote_group_id"] = props["remote_group"]
        lookups.append(lookup(("remote_group_id",), "security_group", props["remote_group"]))
    return Request(body, tuple(lookups))


TYPE: Final = heat_type(NAME, check=_check_group)
API: Final = ApiObjectType(rtype=TYPE, kind="security_group", body=_body, fields=fields_of(FIELDS))
RULE_TYPE: Final = heat_type(RULE_NAME)
RULE_API: Final = ApiObjectType(rtype=RULE_TYPE, kind="security_group_rule", body=_rule_body)
