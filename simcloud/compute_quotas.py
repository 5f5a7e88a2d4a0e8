"""Nova's `os-quota-sets` for instances, cores and ram, enforced on server create.

Nova checks these at `POST /servers` and answers 403 "Quota exceeded for instances:
Requested 1, but already used 1 of 1 instances" (seen on real Nova 34). Unlike Nova,
whose defaults are 10 instances, 20 cores and 50 GiB, simcloud starts with no limit, so
benchmarks of thousands of servers run; `PUT` sets one, as an admin would.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from simcloud.errors import SimError, bad_request, read_body
from simcloud.identity import AuthToken
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/compute/v2.1")

Limit = Annotated[int, Field(ge=-1, le=2**31 - 1)]
#: What Nova shows beside the three limits simcloud enforces (its defaults).
FIXED = {"key_pairs": 100, "metadata_items": 128, "server_groups": 10, "server_group_members": 10}


class QuotaSet(BaseModel):
    """The limits an admin may change (-1: none); Nova 400s any other key."""

    model_config = ConfigDict(extra="forbid")

    instances: Limit | None = None
    cores: Limit | None = None
    ram: Limit | None = None
    force: bool = False


class QuotaSetBody(BaseModel):
    """`PUT /os-quota-sets/{project_id}` body."""

    model_config = ConfigDict(extra="forbid")

    quota_set: QuotaSet


def in_use(state: SimState) -> dict[str, int]:
    """Instances, cores and ram the project's live servers hold."""
    live = [r for r in state.servers.values() if r.vm_state != "deleted"]
    flavors = [state.flavors.get(r.flavor_ref) or r.flavor for r in live]
    return {
        "instances": len(live),
        "cores": sum(f.vcpus if f else 1 for f in flavors),
        "ram": sum(f.ram if f else 512 for f in flavors),
    }


def check_create(state: SimState, flavor_ref: str) -> None:
    """Nova's 403 when one more server of this flavor would pass a limit."""
    limits = {resource: limit for resource, limit in state.compute_quotas.items() if limit >= 0}
    if not limits:
        return  # no limit set: no count of every server at every create
    flavor = state.flavors.get(flavor_ref)
    wanted = {
        "instances": 1,
        "cores": flavor.vcpus if flavor else 1,
        "ram": flavor.ram if flavor else 512,
    }
    used = in_use(state)
    for resource, limit in limits.items():
        if used[resource] + wanted[resource] > limit:
            raise SimError(
                403,
                f"Quota exceeded for {resource}: Requested {wanted[resource]}, but already "
                f"used {used[resource]} of {limit} {resource}",
            )


def _quota_set(state: SimState) -> dict[str, int]:
    return {**FIXED, **state.compute_quotas}


@router.get("/os-quota-sets/{project_id}")
async def show_quota_set(request: Request, _: AuthToken, project_id: str) -> JSONResponse:
    """The project's limits."""
    return JSONResponse({"quota_set": {"id": project_id, **_quota_set(state_of(request))}})


@router.put("/os-quota-sets/{project_id}")
async def update_quota_set(request: Request, _: AuthToken, project_id: str) -> JSONResponse:
    """Change limits; below what is in use is a 400 unless `force`, as in Nova."""
    state = state_of(request)
    body = (await read_body(request, QuotaSetBody)).quota_set
    used = in_use(state)
    changes = body.model_dump(exclude_none=True, exclude={"force"})
    for resource, limit in changes.items():
        if not body.force and limit >= 0 and limit < used[resource]:
            raise bad_request(
                f"Quota limit {limit} for {resource} must be greater than or equal to "
                f"already used and reserved {used[resource]}."
            )
    state.compute_quotas.update(changes)
    return JSONResponse({"quota_set": _quota_set(state)})
