"""Security group rules: Neutron's conversions, checks and duplicate detection.

The conversions and checks are those of `neutron.extensions.securitygroup` and
`SecurityGroupDbMixin`: protocols by name or number, `any` meaning none, ports only
for TCP/UDP/SCTP/DCCP/UDPLITE, ICMP type and code in 0-255, the full port range
stored as no range, and a rule equal to an existing one refused with its id.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from simcloud.identity import AuthToken
from simcloud.network.bodies import Description, read_create, read_update
from simcloud.network.exceptions import fault
from simcloud.network.listing import list_response
from simcloud.network.records import ensure_quota, find, new_record, owned, touch
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/security-group-rules")

PROTOCOLS = {
    "ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1,
    "igmp": 2, "ip": 0, "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58,
    "icmpv6": 58, "ipv6-nonxt": 59, "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89,
    "pgm": 113, "rsvp": 46, "sctp": 132, "tcp": 6, "udp": 17, "udplite": 136, "vrrp": 112,
}  # fmt: skip
PORT_PROTOCOLS = frozenset({6, 17, 33, 132, 136})
ICMP_PROTOCOLS = frozenset({1, 58})
IPV6_ONLY = frozenset({"ipv6-encap", "ipv6-frag", "ipv6-icmp", "icmpv6", "ipv6-nonxt"})
ETHERTYPES = ("IPv4", "IPv6")
PortValue = StrictInt | StrictStr | None


class RuleCreate(BaseModel):
    """Neutron's `security_group_rule` for create."""

    model_config = ConfigDict(extra="forbid")

    security_group_id: Annotated[StrictStr, Field(max_length=36)]
    direction: Literal["ingress", "egress"]
    ethertype: StrictStr = "IPv4"
    protocol: StrictInt | StrictStr | None = None
    port_range_min: PortValue = None
    port_range_max: PortValue = None
    remote_ip_prefix: StrictStr | None = None
    remote_group_id: StrictStr | None = None
    description: Description = ""


class RuleUpdate(BaseModel):
    """Only a rule's description changes after creation."""

    model_config = ConfigDict(extra="forbid")

    description: Description


def add_rule(state: SimState, group: Record, fields: dict[str, Any]) -> Record:
    """Store a rule in `group` as given (defaults filled, no checks)."""
    defaults: dict[str, Any] = {
        "ethertype": "IPv4",
        "protocol": None,
        "port_range_min": None,
        "port_range_max": None,
        "remote_ip_prefix": None,
        "remote_group_id": None,
    }
    rule = new_record(
        state,
        group["project_id"],
        security_group_id=group["id"],
        belongs_to_default_sg=group["name"] == "default",
        **(defaults | fields),
    )
    prefix = rule["remote_ip_prefix"]
    rule["normalized_cidr"] = (
        str(ipaddress.ip_network(prefix, strict=False)) if prefix is not None else None
    )
    state.network.add("security_group_rules", rule)
    state.network.group_rules.setdefault(group["id"], {})[rule["id"]] = None
    return rule


def rules_of(state: SimState, group_id: str) -> list[Record]:
    """A group's rules, oldest first."""
    rules = state.network.security_group_rules
    return [rules[i] for i in state.network.group_rules.get(group_id, {})]


def create_rule(state: SimState, project_id: str, body: RuleCreate) -> Record:
    """Neutron's rule create: convert, check, refuse duplicates, store."""
    group = owned(state, "security_groups", body.security_group_id, project_id, "update")
    ensure_quota(state, project_id, "security_group_rule")
    rule = _normalized(body)
    _check_ports(rule)
    _check_remote(state, rule, project_id)
    key = _key(rule)
    for existing in rules_of(state, group["id"]):
        if _key(existing) == key:
            raise fault("SecurityGroupRuleExists", rule_id=existing["id"])
    rule |= {"description": body.description}
    return add_rule(state, group, rule)


def _normalized(body: RuleCreate) -> dict[str, Any]:
    ethertype = next((e for e in ETHERTYPES if e.lower() == body.ethertype.lower()), None)
    if ethertype is None:
        raise fault(
            "SecurityGroupRuleInvalidEtherType", ethertype=body.ethertype, values=list(ETHERTYPES)
        )
    protocol = _protocol(body.protocol)
    if ethertype == "IPv6" and protocol in ("icmp", "icmpv6"):
        protocol = "ipv6-icmp"  # the legacy names, as Neutron converts them
    elif ethertype == "IPv4" and protocol in IPV6_ONLY:
        raise fault(
            "SecurityGroupEthertypeConflictWithProtocol", ethertype=ethertype, protocol=protocol
        )
    low, high = _port(body.port_range_min), _port(body.port_range_max)
    if (low, high) == (1, 65535):
        low = high = None
    return {
        "direction": body.direction,
        "ethertype": ethertype,
        "protocol": protocol,
        "port_range_min": low,
        "port_range_max": high,
        "remote_ip_prefix": _prefix(body.remote_ip_prefix, ethertype),
        "remote_group_id": body.remote_group_id,
    }


def _protocol(value: int | str | None) -> str | None:
    if value is None or value == "any":
        return None
    text = str(value)
    if text.isdigit() and 0 <= int(text) <= 255:
        return text
    if isinstance(value, str) and value.lower() in PROTOCOLS:
        return value.lower()
    supported = (None, "any", *PROTOCOLS)
    raise fault("SecurityGroupRuleInvalidProtocol", protocol=value, values=supported)


def _port(value: int | str | None) -> int | None:
    if value is None:
        return None
    if str(value).isdigit() and 0 <= int(value) <= 65535:
        return int(value)
    raise fault("SecurityGroupInvalidPortValue", port=value)


def _prefix(value: str | None, ethertype: str) -> str | None:
    if not value:
        return None
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise fault("InvalidCIDR", input=value) from None
    if ethertype != f"IPv{network.version}":
        raise fault("SecurityGroupRuleParameterConflict", ethertype=ethertype, cidr=value)
    # Neutron keeps the address as given, adding the mask (192.168.1.10 -> /32).
    address = value.split("/")[0]
    return f"{ipaddress.ip_address(address)}/{network.prefixlen}"


def _number(protocol: str | None) -> int | None:
    if protocol is None:
        return None
    return int(protocol) if protocol.isdigit() else PROTOCOLS[protocol]


def _check_ports(rule: dict[str, Any]) -> None:
    low, high = rule["port_range_min"], rule["port_range_max"]
    if low is None and high is None:
        return
    number = _number(rule["protocol"])
    if number is None:
        raise fault("SecurityGroupProtocolRequiredWithPorts")
    if number in PORT_PROTOCOLS:
        if low == 0 or high == 0:
            raise fault("SecurityGroupInvalidPortValue", port=0)
        if low is None or high is None or low > high:
            raise fault("SecurityGroupInvalidPortRange")
    elif number in ICMP_PROTOCOLS:
        for attr, field, value in (
            ("port_range_min", "type", low),
            ("port_range_max", "code", high),
        ):
            if value is not None and not 0 <= value <= 255:
                raise fault("SecurityGroupInvalidIcmpValue", field=field, attr=attr, value=value)
        if low is None:
            raise fault("SecurityGroupMissingIcmpType", value=high)
    else:
        names = ", ".join(n.upper() for n in ("dccp", "sctp", "tcp", "udp", "udplite"))
        raise fault(
            "SecurityGroupInvalidProtocolForPort", protocol=number, valid_port_protocols=names
        )


def _check_remote(state: SimState, rule: dict[str, Any], project_id: str) -> None:
    if rule["remote_group_id"] is not None:
        if rule["remote_ip_prefix"] is not None:
            raise fault("SecurityGroupMultipleRemoteEntites")
        find(state, "security_groups", rule["remote_group_id"], project_id)


def _key(rule: dict[str, Any]) -> tuple[object, ...]:
    prefix = rule["remote_ip_prefix"]
    if prefix in ("0.0.0.0/0", "::/0"):
        prefix = None
    return (
        rule["direction"],
        rule["ethertype"],
        rule["port_range_max"],
        rule["port_range_min"],
        _number(rule["protocol"]),
        rule["remote_group_id"],
        prefix,
    )


def drop_rule(state: SimState, rule_id: str) -> None:
    """Forget a rule and take it out of its group."""
    rule = state.network.drop("security_group_rules", rule_id)
    state.network.group_rules.get(rule["security_group_id"], {}).pop(rule_id, None)


@router.get("")
async def list_rules(request: Request, token: AuthToken) -> Response:
    """Neutron rule list."""
    state = state_of(request)
    return list_response(request, state, "security_group_rules", token.project_id)


@router.get("/{rule_id}")
async def show_rule(request: Request, rule_id: str, token: AuthToken) -> Response:
    """Neutron rule show."""
    rule = find(state_of(request), "security_group_rules", rule_id, token.project_id)
    return JSONResponse({"security_group_rule": dict(rule)})


@router.post("", status_code=201)
async def post_rule(request: Request, token: AuthToken) -> Response:
    """Neutron rule create."""
    state = state_of(request)
    body = await read_create(request, "security_group_rule", RuleCreate, token.project_id)
    rule = create_rule(state, token.project_id, body)
    return JSONResponse({"security_group_rule": dict(rule)}, status_code=201)


@router.put("/{rule_id}")
async def put_rule(request: Request, rule_id: str, token: AuthToken) -> Response:
    """Neutron rule update (its description)."""
    state = state_of(request)
    rule = owned(state, "security_group_rules", rule_id, token.project_id, "update")
    body = await read_update(request, "security_group_rule", RuleUpdate, RuleCreate, rule)
    rule["description"] = body.description
    touch(state, rule)
    return JSONResponse({"security_group_rule": dict(rule)})


@router.delete("/{rule_id}", status_code=204)
async def delete_rule(request: Request, rule_id: str, token: AuthToken) -> Response:
    """Neutron rule delete."""
    state = state_of(request)
    owned(state, "security_group_rules", rule_id, token.project_id, "delete")
    drop_rule(state, rule_id)
    return Response(status_code=204)
