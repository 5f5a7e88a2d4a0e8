"""Nova's `os-server-groups`, and the host each server of a group may land on.

A group has one policy: `affinity` (its servers share a host), `anti-affinity` (each
on a host of its own), or their `soft-` forms (preferred, never a reason to fail). A
server created with the scheduler hint `group` joins it; `schedule_in_group` then picks
its host among the enabled nova-compute hosts (`SimConfig.compute_hosts`), and when no
host suits a hard policy the build fails as Nova's scheduler fails it (ERROR, "No valid
host was found…"). Shapes follow the microversion asked for: `policies` (a list) and
`metadata` up to 2.63, `policy` and `rules` from 2.64; `project_id` and `user_id` from
2.13.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.errors import SimError, bad_request, read_body
from simcloud.identity import AuthToken
from simcloud.state import ServerGroup, ServerRecord, SimState, state_of

router = APIRouter(prefix="/compute/v2.1")

POLICIES: Final = ("affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity")
#: Nova's default `server_groups` and `server_group_members` quotas.
GROUP_QUOTA: Final = 10
MEMBER_QUOTA: Final = 10


class GroupCreate(BaseModel):
    """`server_group` of a create: `policies` before 2.64, `policy` (+ `rules`) after."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[StrictStr, Field(min_length=1, max_length=255)]
    policies: list[Literal[POLICIES]] | None = Field(None, min_length=1, max_length=1)  # type: ignore[valid-type]
    policy: Literal[POLICIES] | None = None  # type: ignore[valid-type]
    rules: dict[str, Any] | None = None


class GroupCreateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server_group: GroupCreate


def microversion(request: Request) -> tuple[int, int]:
    """The compute microversion the request asks for (2.1 when it names none)."""
    header = request.headers.get("OpenStack-API-Version", "")
    text = header.split()[-1] if header.startswith("compute ") else ""
    text = text or request.headers.get("X-OpenStack-Nova-API-Version", "2.1")
    major, _, minor = text.partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        return 2, 1


def groups_of(state: SimState) -> dict[str, ServerGroup]:
    """This simcloud's server groups by id."""
    return state.server_groups


def _shown(group: ServerGroup, version: tuple[int, int]) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": group.id, "name": group.name, "members": list(group.members)}
    if version >= (2, 64):
        shown |= {"policy": group.policy, "rules": dict(group.rules)}
    else:
        shown |= {"policies": [group.policy], "metadata": {}}
    if version >= (2, 13):
        shown |= {"project_id": group.project_id, "user_id": group.user_id}
    return shown


def _group(state: SimState, group_id: str) -> ServerGroup:
    group = groups_of(state).get(group_id)
    if group is None:
        raise SimError(404, f"Instance group {group_id} could not be found.")
    return group


@router.post("/os-server-groups")
async def create_server_group(request: Request, token: AuthToken) -> JSONResponse:
    """A new group (200, as Nova answers it)."""
    body = (await read_body(request, GroupCreateBody)).server_group
    version = microversion(request)
    if version >= (2, 64):
        if body.policies is not None or body.policy is None:
            raise bad_request(
                "Invalid input for field/attribute server_group. Value: "
                f"{body.model_dump(exclude_none=True)}. 'policy' is a required property"
            )
        policy = body.policy
    else:
        if body.policy is not None or body.rules is not None or body.policies is None:
            raise bad_request(
                "Invalid input for field/attribute server_group. Value: "
                f"{body.model_dump(exclude_none=True)}. 'policies' is a required property"
            )
        policy = body.policies[0]
        if policy.startswith("soft-") and version < (2, 15):
            raise bad_request(
                f"Invalid input for field/attribute 0. Value: {policy}. "
                f"'{policy}' is not one of ['anti-affinity', 'affinity']"
            )
    state = state_of(request)
    groups = groups_of(state)
    if len(groups) >= GROUP_QUOTA:
        raise SimError(403, "Quota exceeded, too many server groups.")
    group = ServerGroup(
        id=str(uuid.uuid4()),
        name=body.name,
        policy=policy,
        rules=dict(body.rules or {}),
        project_id=token.project_id,
        user_id=token.user_id,
    )
    groups[group.id] = group
    return JSONResponse({"server_group": _shown(group, version)})


@router.get("/os-server-groups")
async def list_server_groups(request: Request, _: AuthToken) -> JSONResponse:
    """The project's groups, `limit`/`offset` paged."""
    version = microversion(request)
    groups = sorted(groups_of(state_of(request)).values(), key=lambda g: g.id)
    offset, limit = _int(request, "offset", 0), _int(request, "limit", 1000)
    page = groups[offset : offset + limit]
    return JSONResponse({"server_groups": [_shown(g, version) for g in page]})


def _int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit():
        raise bad_request(
            f"Invalid input for query parameters {name}. Value: {raw}. "
            f"'{raw}' does not match '^[0-9]*$'"
        )
    return int(raw)


@router.get("/os-server-groups/{group_id}")
async def show_server_group(request: Request, _: AuthToken, group_id: str) -> JSONResponse:
    """One group with its members."""
    group = _group(state_of(request), group_id)
    return JSONResponse({"server_group": _shown(group, microversion(request))})


@router.delete("/os-server-groups/{group_id}", status_code=204)
async def delete_server_group(request: Request, _: AuthToken, group_id: str) -> Response:
    """Forget the group (its servers stay where they are)."""
    state = state_of(request)
    _group(state, group_id)
    del groups_of(state)[group_id]
    return Response(status_code=204)


def group_of_hints(state: SimState, hints: dict[str, Any] | None) -> ServerGroup | None:
    """The group a create's `os:scheduler_hints` name, or Nova's 400."""
    wanted = (hints or {}).get("group")
    if wanted is None:
        return None
    if not isinstance(wanted, str):
        raise bad_request(f"Invalid input for field/attribute group. Value: {wanted}.")
    try:
        uuid.UUID(wanted)
    except ValueError:
        raise bad_request(
            f"Invalid input for field/attribute group. Value: {wanted}. '{wanted}' is not a 'uuid'"
        ) from None
    group = groups_of(state).get(wanted)
    if group is None:
        raise bad_request(f"Instance group {wanted} could not be found.")
    if len(group.members) >= MEMBER_QUOTA:
        raise SimError(403, "Quota exceeded, too many servers in group")
    return group


def pick_host(state: SimState, hosts: list[str], group: ServerGroup | None) -> str | None:
    """Nova's choice among `hosts` (the enabled ones): the least loaded, within what the
    group's policy allows; None when a hard policy allows none."""
    load = dict.fromkeys(hosts, 0)
    for server in state.servers.values():
        if server.host in load and server.vm_state != "deleted":
            load[server.host] += 1
    if group is None:
        return min(hosts, key=lambda h: (load[h], h)) if hosts else None
    used = {
        state.servers[m].host
        for m in group.members
        if m in state.servers and state.servers[m].vm_state != "deleted"
    }
    if group.policy.endswith("anti-affinity"):
        allowed = [h for h in hosts if h not in used] or (
            hosts if group.policy.startswith("soft-") else []
        )
    else:
        allowed = [h for h in hosts if h in used] or (
            hosts if not used or group.policy.startswith("soft-") else []
        )
    return min(allowed, key=lambda h: (load[h], h)) if allowed else None


def join(group: ServerGroup | None, record: ServerRecord) -> None:
    """The server is a member of the group from its create on."""
    if group is not None and record.id not in group.members:
        group.members.append(record.id)
