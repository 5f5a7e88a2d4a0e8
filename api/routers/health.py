"""`GET /health`: the API's cached health, `application/health+json`.

The contract: docs/api-contract.md §Process health.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

router = APIRouter(tags=["health"])


@router.get(
    "/health",
    response_class=Response,
    responses={
        200: {"content": {"application/health+json": {}}, "description": "pass or warn"},
        503: {"content": {"application/health+json": {}}, "description": "fail"},
    },
)
async def health(request: Request) -> Response:
    """Cached check results: no probe runs on request, no versions are shown."""
    status_code, headers, body = request.app.state.health.response()
    return Response(content=body, status_code=status_code, headers=headers)
