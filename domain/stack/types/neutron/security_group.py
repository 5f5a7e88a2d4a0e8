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
            f'{field}.name: Security groups cannot be assigned the name "default".'
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


#: Neutron's rules of a new group, which an update keeps when the template names no
#: egress rule (Heat's `default_egress_rules`).
DEFAULT_EGRESS: Final = (
    {"direction": "egress", "ethertype": "IPv4"},
    {"direction": "egress", "ethertype": "IPv6"},
)
#: What makes two rules the same rule (Heat's `_COMPARABLE_RULE_KEYS`).
COMPARABLE: Final = (
    "direction",
    "ethertype",
    "protocol",
    "port_range_min",
    "port_range_max",
    "remote_group_id",
    "remote_ip_prefix",
    "security_group_id",
)


def rule_key(rule: Mapping[str, Any]) -> tuple[str | None, ...]:
    """A rule's identity (Heat's `_rule_key`): its comparable fields as text."""
    return tuple(None if rule.get(k) is None else str(rule[k]) for k in COMPARABLE)


def reconcile(
    rules: Sequence[Mapping[str, Any]], group_id: str, current: Sequence[Mapping[str, Any]]
) -> tuple[list[str], list[Request]]:
    """Heat's `_update_rules`: (ids of rules to delete, rules to create) so that the group
    holds exactly `rules`, plus the default egress rules when `rules` has no egress."""
    wanted = list(rules) if has_egress(rules) else [*rules, *DEFAULT_EGRESS]
    desired = {rule_key(r.body): r for r in (rule_request(w, group_id) for w in wanted)}
    have = {rule_key(r): str(r["id"]) for r in current}
    stale = [rule_id for key, rule_id in have.items() if key not in desired]
    return stale, [request for key, request in desired.items() if key not in have]


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
