"""Nova's resize and password actions: `resize`, `confirmResize`, `revertResize`,
`changePassword` (`nova/api/openstack/compute/servers.py`, `admin_password.py`).

A resize moves the server to its new flavor through RESIZE to VERIFY_RESIZE (vm_state
`resized`), where it waits to be confirmed (204, back to the state it was in, the old
flavor forgotten) or reverted (202, REVERT_RESIZE, then the old flavor again). Nova's
refusals: a locked server or a state the action does not allow (409, `check_action`),
an unknown flavor or the same one (400), `confirmResize`/`revertResize` of a server
that is not waiting to be confirmed (409). The project's quotas are not checked for
the new flavor (simcloud checks them at create only).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from simcloud.errors import bad_request, describe
from simcloud.flavors import find_flavor
from simcloud.notifications import notifier_of
from simcloud.servers import check_action, start_action
from simcloud.state import ServerRecord, SimState

RESIZE_ACTIONS: Final = frozenset({"resize", "confirmResize", "revertResize", "changePassword"})


class Resize(BaseModel):
    """`resize` action arguments."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    flavorRef: Annotated[StrictStr, Field(min_length=1, max_length=255)] | StrictInt  # noqa: N815
    disk_config: StrictStr | None = Field(None, alias="OS-DCF:diskConfig")


class ChangePassword(BaseModel):
    """`changePassword` action arguments."""

    model_config = ConfigDict(extra="forbid")

    adminPass: StrictStr  # noqa: N815


def resize_action(
    request: Request, state: SimState, record: ServerRecord, action: str, args: Any
) -> Response:
    """Carry out one of `RESIZE_ACTIONS` on a live server."""
    if action == "resize":
        resize = _parse(Resize, args, action)
        check_action(record, "resize")
        flavor = find_flavor(state, str(resize.flavorRef))
        if flavor is None:
            raise bad_request(f"Flavor {resize.flavorRef} could not be found.")
        if flavor.id == record.flavor_ref:
            raise bad_request("When resizing, instances must change flavor!")
        record.old_flavor = (record.flavor_ref, record.flavor)
        record.before_resize = record.vm_state
        record.flavor_ref, record.flavor = flavor.id, flavor
        _started(request, state, record, action)
        return Response(status_code=202)
    if action in ("confirmResize", "revertResize") and args is not None:
        raise bad_request(f"Invalid input for field/attribute {action}. Value: {args!r}")
    if action == "confirmResize":
        check_action(record, action)
        record.vm_state, record.old_flavor = record.before_resize, None
        record.updated_at = state.now()
        return Response(status_code=204)
    if action == "revertResize":
        check_action(record, action)
        assert record.old_flavor is not None  # set by the resize that left it resized
        (record.flavor_ref, record.flavor), record.old_flavor = record.old_flavor, None
        _started(request, state, record, action)
        return Response(status_code=202)
    password = _parse(ChangePassword, args, action)
    check_action(record, action)
    record.admin_pass = password.adminPass
    return Response(status_code=202)


def _started(request: Request, state: SimState, record: ServerRecord, action: str) -> None:
    task = start_action(state, record, action)
    if task.event is not None:
        delay = state.config.action_latency_ms / 1000
        notifier_of(request).emit(task.event, record, task.vm_state, delay)


def _parse(model: type[Resize] | type[ChangePassword], args: Any, action: str) -> Any:
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        raise bad_request(f"Invalid input for field/attribute {action}. {describe(exc)}") from exc
