"""Heat and Senlin features Warden does not implement, answered as Heat answers a feature
it has turned off: 400 `<feature> is not supported.`

Without these routes the clients' calls met a 404, which `openstack` prints as "Stack
not found: shop" or "Not Found": a wrong lead for whoever reads it. Each path is
declared once here, with every method the clients use on it. A method missing on a path
Warden serves (`PATCH /v1/receivers/{id}`) stays a 405, as the OpenAPI document says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from fastapi import APIRouter

from api.auth import Caller, CallerDep
from api.schemas.common import ERROR_RESPONSES
from domain.errors import InvalidRequest

router = APIRouter(tags=["not supported"], responses=ERROR_RESPONSES)

_STACK = "/v1/{project_id}/stacks/{stack_name}/{stack_id}"
#: path → (feature, methods), Heat's then Senlin's.
UNSUPPORTED: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    f"{_STACK}/snapshots": ("Stack Snapshot", ("GET", "POST")),
    f"{_STACK}/snapshots/{{snapshot_id}}": ("Stack Snapshot", ("GET", "DELETE")),
    f"{_STACK}/snapshots/{{snapshot_id}}/restore": ("Stack Snapshot", ("POST",)),
    f"{_STACK}/abandon": ("Stack Abandon", ("DELETE",)),
    f"{_STACK}/export": ("Stack Export", ("GET",)),
    "/v1/receivers/{receiver_id}/notify": ("Message Receiver", ("POST",)),
    "/v1/nodes/adopt": ("Node Adopt", ("POST",)),
    "/v1/nodes/adopt-preview": ("Node Adopt", ("POST",)),
}


def _refuse(feature: str) -> Callable[[Caller], Awaitable[None]]:
    async def refuse(_: CallerDep) -> None:
        raise InvalidRequest(f"{feature} is not supported.")

    refuse.__doc__ = f"{feature}: not supported by Warden (400)."
    return refuse


for _path, (_feature, _methods) in UNSUPPORTED.items():
    # Not in the OpenAPI document: it lists what Warden does.
    router.add_api_route(
        _path, _refuse(_feature), methods=list(_methods), status_code=400, include_in_schema=False
    )
