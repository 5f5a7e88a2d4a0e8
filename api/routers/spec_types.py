"""Senlin's discovery routes: profile types, policy types and build info.

`openstack cluster profile type list|show`, `cluster policy type list|show` and
`cluster build info` read these. Lists follow the request's clustering microversion as
Senlin does: `{name: "<name>-<version>"}` up to 1.4, `{name, version, support_status}`
from 1.5 (the CLI asks for 1.14).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel

from api.auth import CallerDep
from api.schemas.common import ERROR_RESPONSES
from api.senlin_prefix import requested_version, require_version
from domain.cluster.server_ops import operations_of
from domain.cluster.type_catalog import POLICY_TYPES, PROFILE_TYPES, find_type

router = APIRouter(prefix="/v1", tags=["clustering"], responses=ERROR_RESPONSES)

#: The microversion from which types are listed with their version and support status.
VERSIONED_LISTS = (1, 5)
#: The revisions `build-info` reports: the API's (Senlin's v1) and Warden's own.
API_REVISION = "1.0"
TypeName = Annotated[str, Path(max_length=255)]


def _versioned(request: Request) -> bool:
    return requested_version(request.headers) >= VERSIONED_LISTS


Versioned = Annotated[bool, Depends(_versioned)]


class ProfileTypeList(BaseModel):
    """`GET /v1/profile-types`."""

    profile_types: list[dict[str, Any]]


class ProfileTypeEnvelope(BaseModel):
    """`GET /v1/profile-types/{type_name}`: the type and its property schema."""

    profile_type: dict[str, Any]


class PolicyTypeList(BaseModel):
    """`GET /v1/policy-types`."""

    policy_types: list[dict[str, Any]]


class PolicyTypeEnvelope(BaseModel):
    """`GET /v1/policy-types/{type_name}`: the type and its property schema."""

    policy_type: dict[str, Any]


class BuildInfo(BaseModel):
    """`GET /v1/build-info`."""

    build_info: dict[str, dict[str, str]]


@router.get("/profile-types", response_model=ProfileTypeList)
async def list_profile_types_route(_: CallerDep, versioned: Versioned) -> ProfileTypeList:
    """The profile types Warden runs."""
    return ProfileTypeList(profile_types=[t.listed(versioned=versioned) for t in PROFILE_TYPES])


@router.get("/profile-types/{type_name}", response_model=ProfileTypeEnvelope)
async def get_profile_type_route(
    _: CallerDep, versioned: Versioned, type_name: TypeName
) -> ProfileTypeEnvelope:
    """One profile type (`os.nova.server-1.0`) with its schema."""
    found = find_type(PROFILE_TYPES, type_name, "profile_type")
    return ProfileTypeEnvelope(profile_type=found.shown(versioned=versioned))


class ProfileTypeOperations(BaseModel):
    """`GET /v1/profile-types/{type_name}/ops` (API 1.4)."""

    operations: dict[str, Any]


@router.get("/profile-types/{type_name}/ops", response_model=ProfileTypeOperations)
async def profile_type_operations_route(
    _: CallerDep, request: Request, type_name: TypeName
) -> ProfileTypeOperations:
    """The operations nodes of a profile type take (Senlin's table; Warden carries out
    those `domain.cluster.server_ops.CARRIED_OUT` names and refuses the rest)."""
    require_version(request.headers, (1, 4))
    found = find_type(PROFILE_TYPES, type_name, "profile_type")
    listed = found.listed(versioned=False)["name"]
    return ProfileTypeOperations(operations=operations_of(listed))


@router.get("/policy-types", response_model=PolicyTypeList)
async def list_policy_types_route(_: CallerDep, versioned: Versioned) -> PolicyTypeList:
    """The policy types Warden runs."""
    return PolicyTypeList(policy_types=[t.listed(versioned=versioned) for t in POLICY_TYPES])


@router.get("/policy-types/{type_name}", response_model=PolicyTypeEnvelope)
async def get_policy_type_route(
    _: CallerDep, versioned: Versioned, type_name: TypeName
) -> PolicyTypeEnvelope:
    """One policy type (`senlin.policy.deletion-1.1`) with its schema."""
    found = find_type(POLICY_TYPES, type_name, "policy_type")
    return PolicyTypeEnvelope(policy_type=found.shown(versioned=versioned))


@router.get("/build-info", response_model=BuildInfo)
async def build_info_route(_: CallerDep) -> BuildInfo:
    """Senlin's build info: the API's revision, and Warden's version as the engine's."""
    return BuildInfo(
        build_info={"api": {"revision": API_REVISION}, "engine": {"revision": _warden_version()}}
    )


def _warden_version() -> str:
    try:
        return version("warden")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"
