"""Nova's flavors (microversion 2.61 shapes): devstack's, plus those Warden's tests name."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simcloud.errors import SimError, bad_request
from simcloud.flavor_catalog import FLAVORS, Flavor
from simcloud.identity import AuthToken, base_url
from simcloud.image.state import ImageRecord
from simcloud.state import SimState, Token, state_of

router = APIRouter(prefix="/compute/v2.1")
GIB = 1024**3


BY_ID = {f.id: f for f in FLAVORS}
#: Query parameters that filter a flavor list by a lower bound.
MINIMUMS = {"minRam": "ram", "minDisk": "disk"}
SORT_KEYS = (
    "created_at",
    "description",
    "disabled",
    "ephemeral_gb",
    "flavorid",
    "id",
    "is_public",
    "memory_mb",
    "name",
    "root_gb",
    "rxtx_factor",
    "swap",
    "vcpus",
)
_SORT_ATTRS = {"flavorid": "id", "id": "id", "memory_mb": "ram", "root_gb": "disk"}
_SORT_ATTRS |= {"name": "name", "vcpus": "vcpus", "swap": "swap", "ephemeral_gb": "ephemeral"}


def find_flavor(state: SimState, ref: str) -> Flavor | None:
    """The flavor `ref` names by id (or by a URL ending in the id, as Nova accepts)."""
    found: Flavor | None = state.flavors.get(ref.rstrip("/").rsplit("/", maxsplit=1)[-1])
    return found


def flavor_named(state: SimState, name: str) -> Flavor | None:
    """The flavor called `name` (for clients that resolve names, like Heat)."""
    return next((f for f in state.flavors.values() if f.name == name), None)


def check_image_fits(flavor: Flavor, image: ImageRecord) -> None:
    """Nova's server-create checks of a flavor against its image's size and minimums."""
    if flavor.ram < image.min_ram:
        raise bad_request("Flavor's memory is too small for requested image.")
    if flavor.disk == 0:  # a zero-disk flavor boots from a volume sized elsewhere
        return
    disk_bytes = flavor.disk * GIB
    if image.size is not None and image.size > disk_bytes:
        raise bad_request(
            f"Flavor's disk is too small for requested image. Flavor disk is {disk_bytes} "
            f"bytes, image is {image.size} bytes."
        )
    if image.min_disk * GIB > disk_bytes:
        raise bad_request(
            "Flavor's disk is smaller than the minimum size specified in image metadata. "
            f"Flavor disk is {disk_bytes} bytes, minimum size is {image.min_disk * GIB} bytes."
        )


def _links(base: str, flavor_id: str) -> list[dict[str, str]]:
    return [
        {"href": f"{base}/compute/v2.1/flavors/{flavor_id}", "rel": "self"},
        {"href": f"{base}/compute/flavors/{flavor_id}", "rel": "bookmark"},
    ]


def summary(flavor: Flavor, base: str) -> dict[str, Any]:
    """A flavor in `GET /flavors`."""
    return {
        "id": flavor.id,
        "links": _links(base, flavor.id),
        "name": flavor.name,
        "description": None,
    }


def detail(flavor: Flavor, base: str) -> dict[str, Any]:
    """A flavor in show and `GET /flavors/detail` (`swap` is "" when 0, before 2.75)."""
    return summary(flavor, base) | {
        "OS-FLV-DISABLED:disabled": False,
        "disk": flavor.disk,
        "OS-FLV-EXT-DATA:ephemeral": flavor.ephemeral,
        "os-flavor-access:is_public": True,
        "ram": flavor.ram,
        "swap": flavor.swap or "",
        "vcpus": flavor.vcpus,
        "rxtx_factor": 1.0,
        "extra_specs": dict(flavor.extra_specs),
    }


def _select(request: Request) -> tuple[list[Flavor], bool]:
    params = request.query_params
    flavors: list[Flavor] = list(state_of(request).flavors.values())
    for param, attr in MINIMUMS.items():
        if param in params:
            if not params[param].isdigit():
                raise bad_request(f"Invalid {param} filter [{params[param]}]")
            flavors = [f for f in flavors if getattr(f, attr) >= int(params[param])]
    sort_key, sort_dir = params.get("sort_key", "flavorid"), params.get("sort_dir", "asc")
    if sort_key not in SORT_KEYS or sort_dir not in ("asc", "desc"):
        raise bad_request(f"Invalid input for query parameters sort_key. Value: {sort_key}.")
    attr = _SORT_ATTRS.get(sort_key, "id")
    flavors.sort(key=lambda f: getattr(f, attr), reverse=sort_dir == "desc")
    if "marker" in params:
        ids = [f.id for f in flavors]
        if params["marker"] not in ids:
            raise bad_request(f"marker [{params['marker']}] not found")
        flavors = flavors[ids.index(params["marker"]) + 1 :]
    raw_limit = params.get("limit", "1000")
    if not raw_limit.isdigit():
        raise bad_request("limit param must be an integer")
    limit = min(int(raw_limit), 1000)
    return flavors[:limit], len(flavors) > limit


def _listed(request: Request, view: Any, path: str) -> JSONResponse:
    base = base_url(request)
    page, more = _select(request)
    body: dict[str, Any] = {"flavors": [view(f, base) for f in page]}
    if page and more:
        query = urlencode(dict(request.query_params) | {"marker": page[-1].id})
        href = f"{base}/compute/v2.1/{path}?{query}"
        body["flavors_links"] = [{"href": href, "rel": "next"}]
    return JSONResponse(body)


@router.get("/flavors")
async def list_flavors(request: Request, _: AuthToken) -> JSONResponse:
    """Nova flavor list: ids, names and links; `minRam`, `minDisk`, sorting, pages."""
    return _listed(request, summary, "flavors")


@router.get("/flavors/detail")
async def list_flavors_detail(request: Request, _: AuthToken) -> JSONResponse:
    """Nova flavor list with every field."""
    return _listed(request, detail, "flavors/detail")


@router.get("/flavors/{flavor_id}")
async def show_flavor(request: Request, flavor_id: str, _: AuthToken) -> JSONResponse:
    """One flavor, or Nova's 404."""
    flavor = state_of(request).flavors.get(flavor_id)
    if flavor is None:
        raise SimError(404, f"Flavor {flavor_id} could not be found.")
    return JSONResponse({"flavor": detail(flavor, base_url(request))})


class FlavorCreate(BaseModel):
    """Nova's `flavor-manage` create body (`POST /flavors`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1, max_length=255)
    ram: int = Field(ge=1)
    vcpus: int = Field(ge=1)
    disk: int = Field(ge=0)
    id: str | None = Field(None, min_length=1, max_length=255)
    ephemeral: int = Field(0, ge=0, alias="OS-FLV-EXT-DATA:ephemeral")
    swap: int = Field(0, ge=0)
    rxtx_factor: float = Field(1.0, gt=0)
    is_public: bool = Field(True, alias="os-flavor-access:is_public")
    description: str | None = Field(None, max_length=65535)


def _ensure_admin(token: Token, rule: str) -> None:
    if "admin" not in token.roles:
        raise SimError(
            403, f"Policy doesn't allow os_compute_api:os-flavor-manage:{rule} to be performed."
        )


@router.post("/flavors")
async def create_flavor(request: Request, token: AuthToken) -> JSONResponse:
    """Nova's flavor-manage create (admin): 200 with the flavor; 409 for a name or id
    in use."""
    _ensure_admin(token, "create")
    state = state_of(request)
    try:
        raw = (await request.json())["flavor"]
        body = FlavorCreate.model_validate(raw)
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise bad_request(f"Invalid input for field/attribute flavor. {exc}") from exc
    if flavor_named(state, body.name) is not None:
        raise SimError(409, f"Flavor with name {body.name} already exists.")
    flavor_id = body.id or str(uuid.uuid4())
    if flavor_id in state.flavors:
        raise SimError(409, f"Flavor with ID {flavor_id} already exists.")
    flavor = Flavor(
        flavor_id, body.name, body.ram, body.disk, body.vcpus, body.ephemeral, body.swap
    )
    state.flavors[flavor_id] = flavor
    return JSONResponse({"flavor": detail(flavor, base_url(request))})


@router.delete("/flavors/{flavor_id}", status_code=202)
async def delete_flavor(request: Request, flavor_id: str, token: AuthToken) -> Response:
    """Nova's flavor-manage delete (admin); servers keep the flavor they were made with."""
    _ensure_admin(token, "delete")
    if state_of(request).flavors.pop(flavor_id, None) is None:
        raise SimError(404, f"Flavor {flavor_id} could not be found.")
    return Response(status_code=202)
