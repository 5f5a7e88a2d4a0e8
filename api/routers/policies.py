"""`/v1/policies`: written by the API directly (policies have no lifecycle)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Response, status
from sqlmodel import Session

from api.auth import CallerDep, WriterDep
from api.deps import DbDep, SettingsDep, TemporalDep
from api.schemas.common import ERROR_RESPONSES
from api.schemas.policies import (
    PolicyCreate,
    PolicyEnvelope,
    PolicyList,
    PolicyPublic,
    PolicyUpdate,
    PolicyValidate,
)
from api.senlin_lists import PoliciesQuery, filter_and_page
from domain.cluster.policies.affinity import AffinityProperties
from domain.cluster.policies.specs import ParsedPolicy, parse_policy_spec
from domain.cluster.policies.zone_placement import ZonePlacementProperties
from domain.errors import Conflict, InvalidRequest, NotFound
from domain.hot.cloud_lookups import AVAILABILITY_ZONE, ConstraintCheck
from store.clusters import cluster_names_using_policy
from store.columns import now_utc
from store.policies import PolicyRecord, get_policy, list_policies

router = APIRouter(prefix="/v1/policies", tags=["policies"], responses=ERROR_RESPONSES)
PolicyId = Annotated[str, Path(max_length=255)]


def _insert(session: Session, project_id: str, name: str, parsed: ParsedPolicy) -> PolicyRecord:
    now = now_utc()
    record = PolicyRecord(
        id=str(uuid.uuid4()),
        project_id=project_id,
        name=name,
        type=parsed.type.value,
        version=parsed.version,
        spec=parsed.public_spec(),
        secret=getattr(parsed.properties, "secret", None),
        created_at=now,
        updated_at=now,
    )
    session.add(record)
    return record


def _delete(session: Session, project_id: str, policy_id: str) -> None:
    record = get_policy(session, project_id, policy_id)
    if record is None:
        raise NotFound(f"The policy '{policy_id}' could not be found.")
    users = cluster_names_using_policy(session, project_id, record.id)
    if users:
        raise Conflict(
            f"The policy '{policy_id}' cannot be deleted: still attached to some clusters."
        )
    session.delete(record)


def zone_checks(parsed: ParsedPolicy) -> list[ConstraintCheck]:
    """A zone placement policy's zones, or an affinity policy's zone, which Nova must
    have (Senlin checks them at create, not at validate: its `validate_props`)."""
    props = parsed.properties
    if isinstance(props, AffinityProperties) and props.availability_zone:
        zone = props.availability_zone
        missing = f"The specified availability_zone '{zone}' could not be found."
        field = "policy.spec.properties.availability_zone"
        return [
            ConstraintCheck(constraint=AVAILABILITY_ZONE, value=zone, field=field, missing=missing)
        ]
    if not isinstance(props, ZonePlacementProperties):
        return []
    return [
        ConstraintCheck(
            constraint=AVAILABILITY_ZONE,
            value=zone.name,
            field="policy.spec.properties.zones",
            missing=f"The specified name '{[zone.name]}' could not be found.",
        )
        for zone in props.zones
    ]


@router.post("", status_code=status.HTTP_201_CREATED, response_model=PolicyEnvelope)
async def create_policy(
    caller: WriterDep, db: DbDep, settings: SettingsDep, temporal: TemporalDep, body: PolicyCreate
) -> PolicyEnvelope:
    """Create a policy; an invalid spec, or zones Nova does not have, is a 400."""
    parsed = parse_policy_spec(
        body.policy.spec,
        min_interval=settings.health_check_interval_min,
        url_allowlist=settings.hook_url_allowlist,
    )
    problem = await temporal.cloud_problem(zone_checks(parsed))
    if problem is not None:
        raise InvalidRequest(problem)
    record = await db.run(_insert, caller.project_id, body.policy.name, parsed)
    return PolicyEnvelope(policy=PolicyPublic.of(record))


@router.post("/validate", response_model=PolicyEnvelope)
async def validate_policy(
    caller: CallerDep, settings: SettingsDep, body: PolicyValidate
) -> PolicyEnvelope:
    """Check a spec as a create would, store nothing (Senlin API 1.2)."""
    parsed = parse_policy_spec(
        body.policy.spec,
        min_interval=settings.health_check_interval_min,
        url_allowlist=settings.hook_url_allowlist,
    )
    now = now_utc()
    policy = PolicyPublic(
        id=None,
        name="validated_policy",
        type=f"{parsed.type.value}-{parsed.version}",
        version=parsed.version,
        spec=parsed.public_spec(),
        has_secret=getattr(parsed.properties, "secret", None) is not None,
        project_id=caller.project_id,
        created_at=now,
        updated_at=now,
    )
    return PolicyEnvelope(policy=policy)


def _rename(session: Session, project_id: str, policy_id: str, name: str | None) -> PolicyRecord:
    if name is None:
        raise InvalidRequest("No property needs an update.")
    record = get_policy(session, project_id, policy_id)
    if record is None:
        raise NotFound(f"The policy '{policy_id}' could not be found.")
    record.name = name
    record.updated_at = now_utc()
    session.add(record)
    return record


@router.patch("/{policy_id}", response_model=PolicyEnvelope)
async def update_policy(
    caller: WriterDep, db: DbDep, policy_id: PolicyId, body: PolicyUpdate
) -> PolicyEnvelope:
    """Rename a policy (Senlin's policy update)."""
    record = await db.run(_rename, caller.project_id, policy_id, body.policy.name)
    return PolicyEnvelope(policy=PolicyPublic.of(record))


@router.get("", response_model=PolicyList)
async def list_policies_route(caller: CallerDep, db: DbDep, query: PoliciesQuery) -> PolicyList:
    """Policies of the caller's project."""
    records = await db.run(list_policies, caller.project_id)
    views = [PolicyPublic.of(r) for r in records]
    return PolicyList(policies=filter_and_page(views, query))


@router.get("/{policy_id}", response_model=PolicyEnvelope)
async def get_policy_route(caller: CallerDep, db: DbDep, policy_id: PolicyId) -> PolicyEnvelope:
    """One policy by id or unique name."""
    record = await db.run(get_policy, caller.project_id, policy_id)
    if record is None:
        raise NotFound(f"The policy '{policy_id}' could not be found.")
    return PolicyEnvelope(policy=PolicyPublic.of(record))


@router.delete("/{policy_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_policy(caller: WriterDep, db: DbDep, policy_id: PolicyId) -> Response:
    """Delete a policy no cluster has attached (409 otherwise)."""
    await db.run(_delete, caller.project_id, policy_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
