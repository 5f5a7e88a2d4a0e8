"""Octavia v2 routes, under the catalog's `load-balancer` endpoint (`/load-balancer`).

Every route first completes the provisioning operations that are due (`settle_all`),
so what a request sees, and what it may change, is as of its own moment.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from simcloud.identity import base_url
from simcloud.octavia import (
    healthmonitors,
    listeners,
    loadbalancers,
    members,
    pools,
    quotas,
)
from simcloud.octavia.provisioning import settle_all
from simcloud.state import state_of

#: When each Octavia API minor version (v2.0, v2.1, ...) appeared; the last is CURRENT.
#: All are served at `/v2` (minor versions only add to the API).
VERSION_DATES = (
    "2016-12-11", "2018-04-20", "2018-07-31", "2018-12-18", "2018-12-19", "2019-01-21",
    "2019-01-25", "2018-01-25", "2019-02-12", "2019-03-04", "2019-03-05", "2019-06-24",
    "2019-09-11", "2019-09-13", "2019-11-10", "2020-03-10", "2020-03-15", "2020-04-29",
    "2020-04-29", "2020-05-12", "2020-08-02", "2020-09-03", "2020-09-04", "2020-09-07",
    "2020-10-15", "2021-10-02", "2022-08-29", "2023-05-05", "2023-11-08", "2024-10-15",
    "2025-02-26",
)  # fmt: skip


def _settle(request: Request) -> None:
    settle_all(state_of(request))


router = APIRouter(prefix="/load-balancer")
resources = APIRouter(dependencies=[Depends(_settle)])
for module in (loadbalancers, listeners, pools, members, healthmonitors, quotas):
    resources.include_router(module.router)


@router.get("")
@router.get("/", include_in_schema=False)
async def list_versions(request: Request) -> JSONResponse:
    """Octavia's version discovery (no token needed)."""
    href = f"{base_url(request)}/load-balancer/v2"
    last = len(VERSION_DATES) - 1
    versions = [
        {
            "id": f"v2.{minor}",
            "status": "CURRENT" if minor == last else "SUPPORTED",
            "updated": f"{date}T00:00:00Z",
            "links": [{"href": href, "rel": "self"}],
        }
        for minor, date in enumerate(VERSION_DATES)
    ]
    return JSONResponse({"versions": versions})


@router.get("/v2")
@router.get("/v2/", include_in_schema=False)
async def show_v2() -> JSONResponse:
    """What Octavia's `V2Controller` answers: the bare string "v2"."""
    return JSONResponse("v2")


router.include_router(resources)
