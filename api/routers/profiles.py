"""`/v1/profiles`: written by the API directly (profiles have no lifecycle)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Response, status
from sqlmodel import Session

from api.auth import CallerDep, WriterDep
from api.deps import DbDep, TemporalDep
from api.schemas.common import ERROR_RESPONSES
from api.schemas.profiles import (
    ProfileCreate,
    ProfileEnvelope,
    ProfileList,
    ProfilePublic,
    ProfileUpdate,
    ProfileValidate,
)
from api.senlin_lists import ProfilesQuery, filter_and_page
from api.stack_service import validated_template
from domain.cluster.profile_checks import server_profile_checks
from domain.cluster.profiles import AnyProfileSpec, ProfileSpec, parse_profile_spec
from domain.cluster.stack_profile import StackProfileSpec, no_template_message
from domain.errors import Conflict, InvalidRequest, NotFound
from domain.hot.environment import (
    expand_template,
    parse_environment,
    stack_parameters,
    template_data,
)
from store.clusters import count_clusters_using_profile, count_nodes_using_profile
from store.columns import now_utc
from store.profiles import ProfileRecord, get_profile, list_profiles

router = APIRouter(prefix="/v1/profiles", tags=["profiles"], responses=ERROR_RESPONSES)
ProfileId = Annotated[str, Path(max_length=255)]


def checked_spec(raw: object, profile_name: str, *, creating: bool) -> AnyProfileSpec:
    """A profile's spec, checked as Senlin's `profile.validate(validate_props=True)` does.

    A stack profile's template goes through every check a stack create makes (Senlin
    previews it on Heat): a template that cannot make a stack makes no profile. A create
    says which profile it failed to make, as Senlin's `Profile.create` does.
    """
    try:
        spec = parse_profile_spec(raw, prefix="profile.spec")
    except InvalidRequest as exc:
        if not creating:
            raise
        raise InvalidRequest(f"Failed in creating profile {profile_name}: {exc.message}") from None
    if isinstance(spec, StackProfileSpec):
        _check_stack_template(spec, profile_name)
    return spec


def _check_stack_template(spec: StackProfileSpec, profile_name: str) -> None:
    props = spec.properties
    if not props.template:
        raise InvalidRequest(no_template_message(profile_name))
    try:
        env = parse_environment(dict(props.environment))
        template = expand_template(template_data(dict(props.template)), props.files, env)
        declared = template.get("parameters")
        parameters = stack_parameters(
            declared if isinstance(declared, dict) else {}, env, dict(props.parameters)
        )
        validated_template(template, parameters)
    except InvalidRequest as exc:
        raise InvalidRequest(f"Failed in validating template: {exc.message}") from None


def _insert(
    session: Session, project_id: str, body: ProfileCreate, spec: AnyProfileSpec
) -> ProfileRecord:
    now = now_utc()
    record = ProfileRecord(
        id=str(uuid.uuid4()),
        project_id=project_id,
        name=body.profile.name,
        type=spec.type,
        version=spec.version,
        spec=spec.to_json(),
        metadata_=body.profile.metadata,
        created_at=now,
        updated_at=now,
    )
    session.add(record)
    return record


def _delete(session: Session, project_id: str, profile_id: str) -> None:
    record = get_profile(session, project_id, profile_id)
    if record is None:
        raise NotFound(f"The profile '{profile_id}' could not be found.")
    if count_clusters_using_profile(session, record.id) or count_nodes_using_profile(
        session, record.id
    ):
        raise Conflict(
            f"The profile '{profile_id}' cannot be deleted: still referenced by some "
            "clusters and/or nodes."
        )
    session.delete(record)


@router.post("", status_code=status.HTTP_201_CREATED, response_model=ProfileEnvelope)
async def create_profile(caller: WriterDep, db: DbDep, body: ProfileCreate) -> ProfileEnvelope:
    """Create a profile (`os.nova.server` 1.0 or 1.1); an invalid spec is a 400."""
    spec = checked_spec(body.profile.spec, body.profile.name, creating=True)
    record = await db.run(_insert, caller.project_id, body, spec)
    return ProfileEnvelope(profile=ProfilePublic.of(record))


@router.post("/validate", response_model=ProfileEnvelope)
async def validate_profile(
    caller: CallerDep, temporal: TemporalDep, body: ProfileValidate
) -> ProfileEnvelope:
    """Check a spec as a create would and, as Senlin's validate does, that the cloud has
    the zone, flavor, image, key pair and networks a server spec names; store nothing
    (Senlin API 1.2). The profile it would make, without an id."""
    spec = checked_spec(body.profile.spec, "validated_profile", creating=False)
    if isinstance(spec, ProfileSpec):
        problem = await temporal.cloud_problem(server_profile_checks(spec.properties))
        if problem is not None:
            raise InvalidRequest(problem)
    now = now_utc()
    profile = ProfilePublic(
        id=None,
        name="validated_profile",
        type=f"{spec.type}-{spec.version}",
        version=spec.version,
        spec=body.profile.spec,
        metadata={},
        project_id=caller.project_id,
        created_at=now,
        updated_at=now,
    )
    return ProfileEnvelope(profile=profile)


def _update(
    session: Session, project_id: str, profile_id: str, body: ProfileUpdate
) -> ProfileRecord:
    changes = body.profile.model_dump(exclude_none=True)
    if not changes:
        raise InvalidRequest("No property needs an update.")
    record = get_profile(session, project_id, profile_id)
    if record is None:
        raise NotFound(f"The profile '{profile_id}' could not be found.")
    if "name" in changes:
        record.name = changes["name"]
    if "metadata" in changes:
        record.metadata_ = changes["metadata"]
    record.updated_at = now_utc()
    session.add(record)
    return record


@router.patch("/{profile_id}", response_model=ProfileEnvelope)
async def update_profile(
    caller: WriterDep, db: DbDep, profile_id: ProfileId, body: ProfileUpdate
) -> ProfileEnvelope:
    """Rename a profile or replace its metadata (Senlin's profile update)."""
    record = await db.run(_update, caller.project_id, profile_id, body)
    return ProfileEnvelope(profile=ProfilePublic.of(record))


@router.get("", response_model=ProfileList)
async def list_profiles_route(caller: CallerDep, db: DbDep, query: ProfilesQuery) -> ProfileList:
    """Profiles of the caller's project."""
    records = await db.run(list_profiles, caller.project_id)
    views = [ProfilePublic.of(r) for r in records]
    return ProfileList(profiles=filter_and_page(views, query))


@router.get("/{profile_id}", response_model=ProfileEnvelope)
async def get_profile_route(caller: CallerDep, db: DbDep, profile_id: ProfileId) -> ProfileEnvelope:
    """One profile by id or unique name."""
    record = await db.run(get_profile, caller.project_id, profile_id)
    if record is None:
        raise NotFound(f"The profile '{profile_id}' could not be found.")
    return ProfileEnvelope(profile=ProfilePublic.of(record))


@router.delete("/{profile_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_profile(caller: WriterDep, db: DbDep, profile_id: ProfileId) -> Response:
    """Delete a profile no cluster uses (409 otherwise)."""
    await db.run(_delete, caller.project_id, profile_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
