"""Nova's `os-interface`: list, attach and detach a server's ports.

Detaching a port Nova made deletes it; a port the user made is unbound and kept, as
Nova does. Heat detaches a server's ports this way before it replaces the server, so
the replacement can bind them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.errors import SimError, read_body
from simcloud.identity import AuthToken
from simcloud.network.devices import ports_of_device
from simcloud.network.ports import delete_port, set_device
from simcloud.ports import plug_server
from simcloud.servers import live
from simcloud.state import state_of

router = APIRouter(prefix="/compute/v2.1/servers/{server_id}/os-interface")


class InterfaceAttachment(BaseModel):
    """Nova's `interfaceAttachment` for attach: a port, or a network (and address)."""

    model_config = ConfigDict(extra="forbid")

    port_id: StrictStr | None = None
    net_id: StrictStr | None = None
    fixed_ips: Annotated[list[dict[str, StrictStr]], Field(max_length=1)] | None = None
    tag: Annotated[StrictStr, Field(max_length=60)] | None = None


class InterfaceAttachBody(BaseModel):
    """`POST .../os-interface` body."""

    model_config = ConfigDict(extra="forbid")

    interfaceAttachment: InterfaceAttachment  # noqa: N815 - Nova's key


def _shown(port: dict[str, Any]) -> dict[str, Any]:
    return {
        "port_id": port["id"],
        "net_id": port["network_id"],
        "mac_addr": port["mac_address"],
        "port_state": port["status"],
        "fixed_ips": [dict(ip) for ip in port["fixed_ips"]],
    }


@router.get("")
async def list_interfaces(request: Request, server_id: str, _: AuthToken) -> Response:
    """The server's ports."""
    state = state_of(request)
    live(state, server_id)
    ports = ports_of_device(state, server_id)
    return JSONResponse({"interfaceAttachments": [_shown(p) for p in ports]})


@router.post("")
async def attach_interface(request: Request, server_id: str, _: AuthToken) -> Response:
    """Plug the server into a port or a network."""
    state = state_of(request)
    body = (await read_body(request, InterfaceAttachBody)).interfaceAttachment
    live(state, server_id)
    if body.port_id and body.net_id:
        raise SimError(400, "Must not input both network_id and port_id")
    nic: dict[str, Any] = {"port": body.port_id} if body.port_id else {"uuid": body.net_id}
    if body.fixed_ips:
        nic["fixed_ip"] = body.fixed_ips[0].get("ip_address")
    (port,) = plug_server(state, server_id, [nic], None)
    return JSONResponse({"interfaceAttachment": _shown(port)})


@router.delete("/{port_id}", status_code=202)
async def detach_interface(
    request: Request, server_id: str, port_id: str, _: AuthToken
) -> Response:
    """Unplug a port: deleted if Nova made it, unbound if the user did."""
    state = state_of(request)
    live(state, server_id)
    port = state.network.ports.get(port_id)
    if port is None or port["device_id"] != server_id:
        raise SimError(404, f"Port {port_id} is not attached")
    if port_id in state.network.nova_ports:
        delete_port(state, port)
    else:
        set_device(state, port, "", "")
    return Response(status_code=202)
