"""Senlin's version documents at `/cluster` and `/cluster/v1` (keystoneauth discovers them)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["clustering"])

#: What `GET /cluster/v1` advertises; `api.senlin_prefix` enforces the same range.
MIN_API_VERSION = "1.0"
MAX_API_VERSION = "1.14"


def version_info(request: Request) -> dict[str, Any]:
    """Senlin's description of API v1, linked below the request's base URL."""
    base = str(request.base_url).rstrip("/")
    return {
        "id": "1.0",
        "status": "CURRENT",
        "updated": "2016-01-18T00:00:00Z",
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.clustering-v1+json"}
        ],
        "links": [
            {"href": f"{base}/cluster/v1", "rel": "self"},
            {"rel": "help", "href": "https://docs.openstack.org/api-ref/clustering"},
        ],
        "min_version": MIN_API_VERSION,
        "max_version": MAX_API_VERSION,
    }


@router.get("/cluster", status_code=300)
async def clustering_versions(request: Request) -> JSONResponse:
    """Clustering API versions (300 Multiple Choices, as Senlin answers)."""
    return JSONResponse({"versions": [version_info(request)]}, status_code=300)


@router.get("/cluster/", status_code=300, include_in_schema=False)
async def clustering_versions_slash(request: Request) -> JSONResponse:
    """`/cluster/` answers like `/cluster`."""
    return await clustering_versions(request)


@router.get("/cluster/v1")
async def clustering_v1(request: Request) -> dict[str, Any]:
    """The clustering API v1 and its microversion range."""
    return {"version": version_info(request)}


@router.get("/cluster/v1/", include_in_schema=False)
async def clustering_v1_slash(request: Request) -> dict[str, Any]:
    """`/cluster/v1/` answers like `/cluster/v1`."""
    return await clustering_v1(request)
