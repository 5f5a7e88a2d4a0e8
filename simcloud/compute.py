"""Nova compute v2.1: servers and their actions (subset, Nova 2.73 shapes)."""

from __future__ import annotations

import json
import secrets
from functools import partial
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from simcloud.compute_quotas import check_create
from simcloud.compute_services import schedule
from simcloud.errors import ModelT, SimError, bad_request, describe, read_body
from simcloud.flavors import check_image_fits, find_flavor
from simcloud.identity import AuthToken, base_url
from simcloud.image.images import find_image
from simcloud.keypairs import find_keypair
from simcloud.listing import select
from simcloud.network.devices import addresses_of_device, release_device_ports
from simcloud.notifications import notifier_of
from simcloud.ports import plug_server
from simcloud.server_groups import group_of_hints
from simcloud.server_resize import RESIZE_ACTIONS, resize_action
from simcloud.servers import (
    check_action,
    live,
    mark_deleted,
    new_server,
    start_action,
    to_json,
    to_json_text,
)
from simcloud.state import ServerRecord, SimState, state_of
from simcloud.volume.block_devices import (
    BlockDeviceMapping,
    PlannedDevice,
    attach_block_devices,
    plan_block_devices,
    release_volumes,
)

router = APIRouter(prefix="/compute/v2.1")

MetaKey = Annotated[StrictStr, Field(min_length=1, max_length=255, pattern=r"^[\w.:\- ]+$")]
MetaValue = Annotated[StrictStr, Field(max_length=255)]
Metadata = Annotated[dict[MetaKey, MetaValue], Field(max_length=128)]
Text = Annotated[StrictStr, Field(max_length=255)]


class ServerCreate(BaseModel):
    """Nova's `server` object for create (the keys simcloud understands)."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[StrictStr, Field(min_length=1, max_length=255)]
    #: "" (or absent) boots from a volume of `block_device_mapping_v2`.
    imageRef: Annotated[StrictStr, Field(max_length=255)] = ""  # noqa: N815 - Nova's key
    flavorRef: Annotated[StrictStr, Field(min_length=1, max_length=255)] | StrictInt  # noqa: N815
    metadata: Metadata = Field(default_factory=dict)
    networks: Literal["auto", "none"] | list[dict[str, StrictStr]] | None = None
    key_name: Text | None = None
    availability_zone: Text | None = None
    user_data: Annotated[StrictStr, Field(max_length=65535)] | None = None
    security_groups: list[dict[str, StrictStr]] | None = None
    description: Text | None = None
    config_drive: StrictBool | None = None
    adminPass: Text | None = None  # noqa: N815
    tags: Annotated[list[Annotated[StrictStr, Field(max_length=60)]], Field(max_length=50)] = []
    block_device_mapping_v2: Annotated[list[BlockDeviceMapping], Field(max_length=32)] = []
    min_count: Annotated[StrictInt, Field(ge=1, le=1)] = 1
    max_count: Annotated[StrictInt, Field(ge=1, le=1)] = 1

    @field_validator("name")
    @classmethod
    def _no_outer_space(cls, value: str) -> str:
        if value.strip() != value:
            raise ValueError("name may not have leading or trailing whitespace")
        return value


class ServerCreateBody(BaseModel):
    """`POST /servers` body."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    server: ServerCreate
    scheduler_hints: dict[str, Any] | None = Field(None, alias="os:scheduler_hints")


class Rebuild(BaseModel):
    """`rebuild` action arguments."""

    model_config = ConfigDict(extra="forbid")

    imageRef: Annotated[StrictStr, Field(min_length=1, max_length=255)]  # noqa: N815
    name: Annotated[StrictStr, Field(min_length=1, max_length=255)] | None = None
    metadata: Metadata | None = None
    adminPass: Text | None = None  # noqa: N815
    description: Text | None = None
    preserve_ephemeral: StrictBool | None = None
    #: New user data, base64 (2.57); None keeps the server's.
    user_data: StrictStr | None = None


class Reboot(BaseModel):
    """`reboot` action arguments."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["SOFT", "Soft", "soft", "HARD", "Hard", "hard"]


class Lock(BaseModel):
    """`lock` action arguments (microversion 2.73)."""

    model_config = ConfigDict(extra="forbid")

    locked_reason: Text | None = None


NULL_ACTIONS = ("os-start", "os-stop", "pause", "unpause", "unlock")


def _group_name(state: SimState, ref: str) -> str:
    """Nova shows a server's security groups by name, whichever way they were given."""
    group = state.network.security_groups.get(ref)
    return str(group["name"]) if group is not None else ref


def _group_names(body: ServerCreate) -> list[str] | None:
    return [g["name"] for g in body.security_groups] if body.security_groups else None


def _use_ports(state: SimState, record: ServerRecord, ports: list[dict[str, Any]]) -> None:
    """The server's addresses are its ports' from now on (its first fixed IP indexed)."""
    record.addresses = partial(addresses_of_device, state, record.id)
    state.by_address.pop(record.address, None)
    fixed = [ip["ip_address"] for port in ports for ip in port["fixed_ips"]]
    record.address = fixed[0] if fixed else ""
    if fixed:
        state.by_address[record.address] = record.id


def _check_boot(state: SimState, body: ServerCreate) -> list[PlannedDevice]:
    """Nova's 400s for the image, flavor, keypair and block devices of a create."""
    flavor = find_flavor(state, str(body.flavorRef))
    if flavor is None:
        raise bad_request(f"Flavor {body.flavorRef} could not be found.")
    if body.imageRef:
        image = find_image(state, body.imageRef)
        if image is None:
            raise bad_request(f"Image {body.imageRef} could not be found.")
        if image.status != "active":
            raise bad_request(f"Image {image.id} is not active.")
        check_image_fits(flavor, image)
    elif not body.block_device_mapping_v2:
        raise bad_request("Block Device Mapping is Invalid: You specified no boot device.")
    if body.key_name is not None and find_keypair(state, body.key_name) is None:
        raise bad_request("Invalid key_name provided.")
    return plan_block_devices(state, body.block_device_mapping_v2, body.imageRef or None)


def dumps(payload: dict[str, Any], status_code: int = 200) -> Response:
    """Compact JSON without FastAPI's encoder (ten thousand servers stay cheap)."""
    body = json.dumps(payload, separators=(",", ":"))
    return Response(body, status_code=status_code, media_type="application/json")


@router.get("/")
async def version(request: Request, _: AuthToken) -> Response:
    """Nova's version document for v2.1 (the driver's reachability check)."""
    link = {"rel": "self", "href": f"{base_url(request)}/compute/v2.1/"}
    doc = {"id": "v2.1", "status": "CURRENT", "version": "2.73", "min_version": "2.1"}
    return dumps({"version": doc | {"updated": "2013-07-23T11:33:21Z", "links": [link]}})


@router.get("/os-availability-zone")
async def list_availability_zones(request: Request, _: AuthToken) -> Response:
    """Nova's availability zones a member sees (no hosts)."""
    zones = [
        {"zoneName": name, "zoneState": {"available": True}, "hosts": None}
        for name in state_of(request).config.availability_zones
    ]
    return dumps({"availabilityZoneInfo": zones})


@router.post("/servers", status_code=202)
async def create_server(request: Request, _: AuthToken) -> Response:
    """Nova create: 202 with the new id; BUILD until the build latency has passed."""
    sent = await read_body(request, ServerCreateBody)
    body = sent.server
    state = state_of(request)
    devices = _check_boot(state, body)
    if body.availability_zone and body.availability_zone not in state.config.availability_zones:
        raise bad_request("The requested availability zone is not available")
    check_create(state, str(body.flavorRef))
    group = group_of_hints(state, sent.scheduler_hints)
    record = new_server(state, body.name, body.imageRef, str(body.flavorRef), body.metadata)
    record.tags = list(body.tags)
    schedule(state, record, group)
    record.static |= {
        "key_name": body.key_name,
        "config_drive": "True" if body.config_drive else "",
        "OS-EXT-AZ:availability_zone": body.availability_zone or "nova",
        "security_groups": [
            {"name": _group_name(state, g["name"])} for g in body.security_groups or ()
        ]
        or [{"name": "default"}],
        "description": body.description,
        # Nova shows it (base64, as sent) from microversion 2.3 on, to admins.
        "OS-EXT-SRV-ATTR:user_data": body.user_data,
    }
    try:
        ports = plug_server(state, record.id, body.networks, _group_names(body))
    except SimError:
        state.drop_server(record.id)
        raise
    _use_ports(state, record, ports)
    attach_block_devices(state, record.id, devices)
    url = f"{base_url(request)}/compute/v2.1/servers/{record.id}"
    server = {
        "id": record.id,
        "links": [{"rel": "self", "href": url}],
        "OS-DCF:diskConfig": "MANUAL",
        "security_groups": [{"name": "default"}],
        "adminPass": body.adminPass or secrets.token_urlsafe(9),
    }
    return JSONResponse({"server": server}, status_code=202, headers={"Location": url})


@router.get("/servers")
async def list_servers(request: Request, _: AuthToken) -> Response:
    """Nova list: ids, names and links."""
    base = base_url(request)
    page, more = select(state_of(request), request.query_params)
    body: dict[str, Any] = {
        "servers": [{"id": r.id, "name": r.name, "links": to_json(r, base)["links"]} for r in page]
    }
    if page and more:
        body["servers_links"] = _next_links(request, page[-1].id)
    return dumps(body)


@router.get("/servers/detail")
async def list_servers_detail(request: Request, _: AuthToken) -> Response:
    """Nova detail list with filters (`name` regex, `status`, `changes-since`, ...)."""
    base = base_url(request)
    page, more = select(state_of(request), request.query_params)
    links = _next_links(request, page[-1].id) if page and more else None
    # Servers are spliced in as cached JSON text: a 10,000-server page costs a join.
    parts = ['{"servers":[', ",".join(to_json_text(r, base) for r in page), "]"]
    if links is not None:
        parts.append(',"servers_links":' + json.dumps(links))
    parts.append("}")
    return Response("".join(parts), media_type="application/json")


def _next_links(request: Request, marker: str) -> list[dict[str, str]]:
    query = dict(request.query_params) | {"marker": marker}
    href = f"{base_url(request)}{request.url.path}?{urlencode(query)}"
    return [{"rel": "next", "href": href}]


@router.get("/servers/{server_id}")
async def show_server(request: Request, server_id: str, _: AuthToken) -> Response:
    """Nova show: 404 for unknown or fully deleted servers."""
    record = live(state_of(request), server_id)
    return dumps({"server": to_json(record, base_url(request))})


@router.delete("/servers/{server_id}", status_code=204)
async def delete_server(request: Request, server_id: str, _: AuthToken) -> Response:
    """Nova delete: DELETED for the action latency, then 404; 409 when locked."""
    state = state_of(request)
    record = live(state, server_id)
    if record.vm_state != "deleted":
        check_action(record, "delete")
        mark_deleted(state, record)
        release_volumes(state, record.id)
        release_device_ports(state, record.id)
        notifier_of(request).emit("compute.instance.shutdown.end", record, "deleted", _delay(state))
    return Response(status_code=204)


def _delay(state: SimState) -> float:
    return state.config.action_latency_ms / 1000


@router.post("/servers/{server_id}/action", status_code=202)
async def server_action(request: Request, server_id: str, _: AuthToken) -> Response:
    """Nova server actions: reboot, rebuild, os-start, os-stop, pause, unpause, lock, unlock."""
    state = state_of(request)
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError as exc:
        raise bad_request("Malformed request body") from exc
    if not isinstance(body, dict) or len(body) != 1:
        raise bad_request("Exactly one server action must be given")
    ((action, args),) = body.items()
    record = live(state, server_id)
    if record.vm_state == "deleted":
        raise SimError(409, f"Cannot '{action}' instance {server_id} while it is being deleted")
    if action in RESIZE_ACTIONS:
        return resize_action(request, state, record, action, args)
    return _dispatch(request, state, record, action, args)


def _check_rebuild_image(state: SimState, rebuild: Rebuild | None) -> None:
    if rebuild is not None and find_image(state, rebuild.imageRef) is None:
        raise bad_request(f"Image {rebuild.imageRef} could not be found.")


def _dispatch(
    request: Request, state: SimState, record: ServerRecord, action: str, args: Any
) -> Response:
    if action in NULL_ACTIONS:
        if args is not None:
            raise bad_request(f"Invalid input for field/attribute {action}. Value: {args!r}")
        rule = action
    elif action == "reboot":
        rule = "reboot_" + _parse(Reboot, args, action).type.lower()
    elif action == "rebuild":
        rule = "rebuild"
    elif action == "lock":
        reason = _parse(Lock, args or {}, action).locked_reason
        check_action(record, "lock")
        record.locked, record.locked_reason = True, reason
        return Response(status_code=202)
    else:
        raise bad_request(f"There is no such action: {action}")
    rebuild = _parse(Rebuild, args, action) if rule == "rebuild" else None
    check_action(record, rule)
    # Nova checks the server's state (409) before it fetches the image (400).
    _check_rebuild_image(state, rebuild)
    if rule == "unlock":
        record.locked, record.locked_reason = False, None
        return Response(status_code=202)
    task = start_action(state, record, rule)
    if rebuild is not None:
        _rebuilt(state, record, rebuild)
    if task.event is not None:
        notifier_of(request).emit(task.event, record, task.vm_state, _delay(state))
    if rebuild is not None:
        return dumps({"server": to_json(record, base_url(request))}, status_code=202)
    return Response(status_code=202)


def _rebuilt(state: SimState, record: ServerRecord, rebuild: Rebuild) -> None:
    """What a rebuild changes: the image, and the metadata, name and user data given."""
    record.image_ref = rebuild.imageRef
    if rebuild.metadata is not None:
        record.metadata = dict(rebuild.metadata)
    if rebuild.name is not None:
        state.rename(record, rebuild.name)
    if rebuild.user_data is not None:
        record.static = record.static | {"OS-EXT-SRV-ATTR:user_data": rebuild.user_data}


def _parse(model: type[ModelT], args: Any, action: str) -> ModelT:
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        raise bad_request(f"{action}: {describe(exc)}") from exc
