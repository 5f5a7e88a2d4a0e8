"""Trunks (`/v2.0/trunks`, Neutron's `trunk` extension): a parent port and sub-ports.

A trunk's parent port shows `trunk_details` (the trunk's id and sub-ports, each with its
MAC); a sub-port is owned by the trunk (`device_owner` `trunk:subport`). Neutron's
refusals: a parent port already a trunk's, or a port already a sub-port (409), a
segmentation (type, id) used twice on one trunk (409), a sub-port the trunk has not
got (404), a trunk whose parent port a server holds cannot be deleted (409), and a
trunk's ports cannot be deleted while they are its ports (409).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from simcloud.identity import AuthToken
from simcloud.network.bodies import Description, Name, Uuid, read_create, read_json, read_update
from simcloud.network.exceptions import fault, http_bad_request
from simcloud.network.listing import list_response
from simcloud.network.ports import set_device
from simcloud.network.records import find, new_record, owned, touch
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/trunks")

SUBPORT_OWNER = "trunk:subport"


class SubPort(BaseModel):
    """One sub-port to add: its port and segmentation."""

    model_config = ConfigDict(extra="forbid")

    port_id: Uuid
    segmentation_type: Literal["vlan", "inherit"] = "vlan"
    segmentation_id: Annotated[int, Field(ge=1, le=4094)] | None = None


class TrunkUpdate(BaseModel):
    """Neutron's `trunk` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None


class TrunkCreate(TrunkUpdate):
    """Neutron's `trunk` for create."""

    port_id: Uuid
    name: Name = ""
    description: Description = ""
    admin_state_up: bool = True
    sub_ports: list[SubPort] = []


def trunk_of_port(state: SimState, port_id: str) -> Record | None:
    """The trunk whose parent `port_id` is, if any."""
    return next((t for t in state.network.trunks.values() if t["port_id"] == port_id), None)


def check_port_deletable(state: SimState, port: Record) -> None:
    """A trunk's parent port or one of its sub-ports answers 409 to a delete."""
    trunk = trunk_of_port(state, port["id"])
    if trunk is not None:
        raise fault("PortInUseAsTrunkParent", port_id=port["id"], trunk_id=trunk["id"])
    if port["device_owner"] == SUBPORT_OWNER and port["device_id"] in state.network.trunks:
        raise fault("PortInUseAsSubPort", port_id=port["id"], trunk_id=port["device_id"])


def _shown(state: SimState, trunk: Record) -> Record:
    parent = state.network.ports.get(trunk["port_id"])
    status = "ACTIVE" if parent is not None and parent["device_id"] else "DOWN"
    return dict(trunk) | {"status": status, "sub_ports": [dict(s) for s in trunk["sub_ports"]]}


def _details(state: SimState, trunk: Record) -> None:
    """The parent port's `trunk_details`, as Neutron's trunk extension shows them."""
    parent = state.network.ports[trunk["port_id"]]
    parent["trunk_details"] = {
        "trunk_id": trunk["id"],
        "sub_ports": [
            {
                "segmentation_id": s["segmentation_id"],
                "segmentation_type": s["segmentation_type"],
                "port_id": s["port_id"],
                "mac_address": state.network.ports[s["port_id"]]["mac_address"],
            }
            for s in trunk["sub_ports"]
        ],
    }
    touch(state, parent)


def _add(state: SimState, trunk: Record, wanted: list[SubPort], project_id: str) -> None:
    """Check every sub-port first (nothing changes on a refusal), then add them."""
    used = {(s["segmentation_type"], s["segmentation_id"]) for s in trunk["sub_ports"]}
    ports = []
    for sub in wanted:
        port = find(state, "ports", sub.port_id, project_id)
        holder = port["device_id"] if port["device_owner"] == SUBPORT_OWNER else None
        if holder or trunk_of_port(state, port["id"]) is not None or port["id"] == trunk["port_id"]:
            raise fault("PortInUseAsSubPort", port_id=port["id"], trunk_id=holder or trunk["id"])
        if sub.segmentation_type == "vlan" and sub.segmentation_id is None:
            raise http_bad_request(
                "Invalid input for operation: Segmentation ID is required for the vlan "
                "segmentation type."
            )
        key = (sub.segmentation_type, sub.segmentation_id)
        if key in used:
            raise fault(
                "DuplicateSubPort",
                segmentation_type=sub.segmentation_type,
                segmentation_id=sub.segmentation_id,
                trunk_id=trunk["id"],
            )
        used.add(key)
        ports.append((port, sub))
    for port, sub in ports:
        set_device(state, port, trunk["id"], SUBPORT_OWNER)
        trunk["sub_ports"].append(
            {
                "port_id": port["id"],
                "segmentation_type": sub.segmentation_type,
                "segmentation_id": sub.segmentation_id,
            }
        )


def _release(state: SimState, port_ids: list[str]) -> None:
    """Sub-ports the trunk no longer holds: owned by nothing again."""
    for port_id in port_ids:
        port = state.network.ports.get(port_id)
        if port is not None:
            set_device(state, port, "", "")


def _sub_ports(items: list[dict[str, Any]]) -> list[SubPort]:
    try:
        return [SubPort.model_validate(item) for item in items]
    except ValueError as exc:
        raise http_bad_request(f"Invalid input for sub_ports: {exc}") from exc


@router.get("")
async def list_trunks(request: Request, token: AuthToken) -> Response:
    """Neutron trunk list."""
    state = state_of(request)
    return list_response(request, state, "trunks", token.project_id, lambda t: _shown(state, t))


@router.get("/{trunk_id}")
async def show_trunk(request: Request, trunk_id: str, token: AuthToken) -> Response:
    """Neutron trunk show."""
    state = state_of(request)
    trunk = find(state, "trunks", trunk_id, token.project_id)
    return JSONResponse({"trunk": _shown(state, trunk)})


@router.post("", status_code=201)
async def post_trunk(request: Request, token: AuthToken) -> Response:
    """Neutron trunk create: the parent port and any sub-ports, checked at once."""
    state = state_of(request)
    body = await read_create(request, "trunk", TrunkCreate, token.project_id)
    parent = find(state, "ports", body.port_id, token.project_id)
    if trunk_of_port(state, parent["id"]) is not None:
        raise fault("TrunkPortInUse", port_id=parent["id"])
    if parent["device_owner"] == SUBPORT_OWNER:
        raise fault("ParentPortInUse", port_id=parent["id"])
    trunk = new_record(
        state,
        token.project_id,
        name=body.name,
        description=body.description,
        admin_state_up=body.admin_state_up,
        port_id=parent["id"],
        sub_ports=[],
    )
    _add(state, trunk, body.sub_ports, token.project_id)
    state.network.trunks[trunk["id"]] = trunk
    _details(state, trunk)
    return JSONResponse({"trunk": _shown(state, trunk)}, status_code=201)


@router.put("/{trunk_id}")
async def put_trunk(request: Request, trunk_id: str, token: AuthToken) -> Response:
    """Neutron trunk update: name, description, admin_state_up."""
    state = state_of(request)
    trunk = owned(state, "trunks", trunk_id, token.project_id, "update")
    body = await read_update(request, "trunk", TrunkUpdate, TrunkCreate, trunk)
    for key in ("name", "description", "admin_state_up"):
        if getattr(body, key) is not None:
            trunk[key] = getattr(body, key)
    touch(state, trunk)
    return JSONResponse({"trunk": _shown(state, trunk)})


@router.put("/{trunk_id}/add_subports")
async def add_subports(request: Request, trunk_id: str, token: AuthToken) -> Response:
    """Add sub-ports; the trunk as it is then."""
    state = state_of(request)
    trunk = owned(state, "trunks", trunk_id, token.project_id, "update")
    _add(state, trunk, _sub_ports(await _sub_port_items(request)), token.project_id)
    touch(state, trunk)
    _details(state, trunk)
    return JSONResponse(_shown(state, trunk))


@router.put("/{trunk_id}/remove_subports")
async def remove_subports(request: Request, trunk_id: str, token: AuthToken) -> Response:
    """Remove sub-ports by port id (404 for one the trunk has not got)."""
    state = state_of(request)
    trunk = owned(state, "trunks", trunk_id, token.project_id, "update")
    ids = [str(item.get("port_id", "")) for item in await _sub_port_items(request)]
    held = {s["port_id"] for s in trunk["sub_ports"]}
    for port_id in ids:
        if port_id not in held:
            raise fault("SubPortNotFound", trunk_id=trunk["id"], port_id=port_id)
    gone = set(ids)
    trunk["sub_ports"] = [s for s in trunk["sub_ports"] if s["port_id"] not in gone]
    _release(state, ids)
    touch(state, trunk)
    _details(state, trunk)
    return JSONResponse(_shown(state, trunk))


@router.get("/{trunk_id}/get_subports")
async def get_subports(request: Request, trunk_id: str, token: AuthToken) -> Response:
    """The trunk's sub-ports."""
    state = state_of(request)
    trunk = find(state, "trunks", trunk_id, token.project_id)
    return JSONResponse({"sub_ports": _shown(state, trunk)["sub_ports"]})


@router.delete("/{trunk_id}", status_code=204)
async def delete_trunk(request: Request, trunk_id: str, token: AuthToken) -> Response:
    """Neutron trunk delete: 409 while a server holds the parent port."""
    state = state_of(request)
    trunk = owned(state, "trunks", trunk_id, token.project_id, "delete")
    parent = state.network.ports.get(trunk["port_id"])
    if parent is not None and parent["device_id"]:
        raise fault("TrunkInUse", trunk_id=trunk["id"])
    _release(state, [s["port_id"] for s in trunk["sub_ports"]])
    if parent is not None:
        parent.pop("trunk_details", None)
        touch(state, parent)
    del state.network.trunks[trunk["id"]]
    return Response(status_code=204)


async def _sub_port_items(request: Request) -> list[dict[str, Any]]:
    """The `{"sub_ports": [{...}, ...]}` of an add or remove (400 for any other body)."""
    body = await read_json(request)
    items = body.get("sub_ports") if isinstance(body, dict) and set(body) == {"sub_ports"} else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise http_bad_request("Invalid input: a list of sub_ports is required")
    return items
