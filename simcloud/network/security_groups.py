"""Security groups, and each project's `default` group, made on first need.

As Neutron does, a project's `default` group appears when it first lists groups,
creates one, or creates a port without naming groups; it allows all egress and
ingress from its own members. Other groups start with the two egress rules. The
`default` group may be neither renamed nor deleted, and no other group may take
its name; a group that a port uses may not be deleted.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict

from simcloud.identity import AuthToken
from simcloud.network.bodies import Description, Name, read_create, read_update
from simcloud.network.exceptions import fault
from simcloud.network.listing import list_response
from simcloud.network.records import ensure_quota, find, new_record, owned, touch
from simcloud.network.security_group_rules import add_rule, drop_rule, rules_of
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/security-groups")

#: Neutron's default rule templates: every group may send anything...
EGRESS_RULES = [{"direction": "egress", "ethertype": e} for e in ("IPv4", "IPv6")]


def _not_default(name: str) -> str:
    # Neutron raises this 409 from the attribute validator itself.
    if name.lower() == "default":
        raise fault("SecurityGroupDefaultAlreadyExists")
    return name


GroupName = Annotated[Name, AfterValidator(_not_default)]


class SecurityGroupCreate(BaseModel):
    """Neutron's `security_group` for create."""

    model_config = ConfigDict(extra="forbid")

    name: GroupName = ""
    description: Description = ""
    stateful: bool = True


class SecurityGroupUpdate(BaseModel):
    """Neutron's `security_group` for update."""

    model_config = ConfigDict(extra="forbid")

    name: GroupName | None = None
    description: Description | None = None
    stateful: bool | None = None


def show(state: SimState, group: Record) -> Record:
    """A group as Neutron shows it: with its rules."""
    return group | {"security_group_rules": [dict(r) for r in rules_of(state, group["id"])]}


def default_group(state: SimState, project_id: str) -> Record:
    """The project's `default` group, created with its four rules if need be."""
    net = state.network
    group_id = net.default_groups.get(project_id)
    if group_id is not None:
        return net.security_groups[group_id]
    group = _new_group(state, project_id, name="default", description="Default security group")
    net.default_groups[project_id] = group["id"]
    for rule in EGRESS_RULES:
        add_rule(state, group, rule)
    # ...and the default group also admits whatever comes from its own members.
    for ethertype in ("IPv4", "IPv6"):
        rule = {"direction": "ingress", "ethertype": ethertype, "remote_group_id": group["id"]}
        add_rule(state, group, rule)
    return group


def _new_group(state: SimState, project_id: str, **fields: Any) -> Record:
    group = new_record(state, project_id, **({"stateful": True, "shared": False} | fields))
    state.network.add("security_groups", group)
    return group


def create_group(state: SimState, project_id: str, body: SecurityGroupCreate) -> Record:
    """A new group with Neutron's two egress rules."""
    default_group(state, project_id)
    ensure_quota(state, project_id, "security_group")
    ensure_quota(state, project_id, "security_group_rule", len(EGRESS_RULES))
    fields = body.model_dump()
    group = _new_group(state, project_id, **fields)
    for rule in EGRESS_RULES:
        add_rule(state, group, rule)
    return group


def resolve_groups(state: SimState, names_or_ids: list[str], project_id: str) -> list[str]:
    """Group ids for ids or names (Nova passes names); 404 naming those not found."""
    net = state.network
    found: list[str] = []
    missing: list[str] = []
    for key in names_or_ids:
        group = net.security_groups.get(key)
        if group is None and key == "default":
            group = default_group(state, project_id)
        elif group is None:
            group = next((g for g in net.security_groups.values() if g["name"] == key), None)
        if group is None or group["project_id"] != project_id:
            missing.append(key)
        elif group["id"] not in found:
            found.append(group["id"])
    if missing:
        raise fault("SecurityGroupNotFound", id=", ".join(missing))
    return found


def delete_group(state: SimState, group: Record) -> None:
    """Delete an unused, non-default group, its rules and the rules naming it."""
    net = state.network
    if net.group_ports.get(group["id"]):
        raise fault("SecurityGroupInUse", id=group["id"])
    if group["name"] == "default":
        raise fault("SecurityGroupCannotRemoveDefault")
    for rule in rules_of(state, group["id"]):
        drop_rule(state, rule["id"])
    naming = [
        r["id"] for r in net.security_group_rules.values() if r["remote_group_id"] == group["id"]
    ]
    for rule_id in naming:
        drop_rule(state, rule_id)
    net.group_rules.pop(group["id"], None)
    net.drop("security_groups", group["id"])


@router.get("")
async def list_groups(request: Request, token: AuthToken) -> Response:
    """Neutron group list (the caller's `default` group appears here first)."""
    state = state_of(request)
    default_group(state, token.project_id)
    return list_response(
        request, state, "security_groups", token.project_id, lambda g: show(state, g)
    )


@router.get("/{security_group_id}")
async def show_group(request: Request, security_group_id: str, token: AuthToken) -> Response:
    """Neutron group show."""
    state = state_of(request)
    group = find(state, "security_groups", security_group_id, token.project_id)
    return JSONResponse({"security_group": show(state, group)})


@router.post("", status_code=201)
async def post_group(request: Request, token: AuthToken) -> Response:
    """Neutron group create."""
    state = state_of(request)
    body = await read_create(request, "security_group", SecurityGroupCreate, token.project_id)
    group = create_group(state, token.project_id, body)
    return JSONResponse({"security_group": show(state, group)}, status_code=201)


@router.put("/{security_group_id}")
async def put_group(request: Request, security_group_id: str, token: AuthToken) -> Response:
    """Neutron group update; the `default` group keeps its name."""
    state = state_of(request)
    group = owned(state, "security_groups", security_group_id, token.project_id, "update")
    body = await read_update(
        request, "security_group", SecurityGroupUpdate, SecurityGroupCreate, group
    )
    changes = body.model_dump(exclude_unset=True)
    if group["name"] == "default" and "name" in changes:
        raise fault("SecurityGroupCannotUpdateDefault")
    if changes.get("stateful", group["stateful"]) != group["stateful"] and (
        state.network.group_ports.get(group["id"])
    ):
        raise fault("SecurityGroupInUse", id=group["id"])
    group.update({k: v for k, v in changes.items() if v is not None})
    touch(state, group)
    return JSONResponse({"security_group": show(state, group)})


@router.delete("/{security_group_id}", status_code=204)
async def delete_group_route(
    request: Request, security_group_id: str, token: AuthToken
) -> Response:
    """Neutron group delete: 409 while a port uses it, or for `default`."""
    state = state_of(request)
    group = owned(state, "security_groups", security_group_id, token.project_id, "delete")
    delete_group(state, group)
    return Response(status_code=204)
