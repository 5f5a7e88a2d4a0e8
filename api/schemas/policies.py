"""Policy schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from api.schemas.common import StrictModel
from store.policies import PolicyRecord


class PolicyBody(StrictModel):
    """The inside of `{"policy": {...}}`; `spec` is checked by `domain.cluster.policies.specs`."""

    name: str = Field(min_length=1, max_length=255)
    spec: dict[str, Any]


class PolicyCreate(StrictModel):
    """`POST /v1/policies`."""

    policy: PolicyBody


class PolicyValidateBody(StrictModel):
    """The inside of `POST /v1/policies/validate` (Senlin 1.2): a spec, nothing stored."""

    spec: dict[str, Any]


class PolicyValidate(StrictModel):
    """`POST /v1/policies/validate`."""

    policy: PolicyValidateBody


class PolicyUpdateBody(StrictModel):
    """The inside of `PATCH /v1/policies/{id}`: Senlin renames a policy, nothing else."""

    name: str = Field(min_length=1, max_length=255)


class PolicyUpdate(StrictModel):
    """`PATCH /v1/policies/{policy_id}`."""

    policy: PolicyUpdateBody


class PolicyPublic(BaseModel):
    """A policy as the API shows it: never its secret, only whether one is set."""

    #: Senlin's id; None for a policy only validated.
    id: str | None
    name: str
    #: Senlin's `<type>-<version>`, e.g. `senlin.policy.deletion-1.1`.
    type: str
    version: str
    spec: dict[str, Any]
    has_secret: bool
    project_id: str
    created_at: datetime
    updated_at: datetime
    #: Senlin's runtime data of a policy (Warden keeps none).
    data: dict[str, Any] = Field(default_factory=dict)
    # Senlin's owner fields, as openstacksdk reads them (Warden keeps no user or domain).
    user: str | None = None
    domain: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def project(self) -> str:
        """Senlin's name for `project_id`."""
        return self.project_id

    @classmethod
    def of(cls, record: PolicyRecord) -> PolicyPublic:
        """From the database row."""
        return cls(
            id=record.id,
            name=record.name,
            type=f"{record.type}-{record.version}",
            version=record.version,
            spec=record.spec,
            has_secret=bool(record.secret),
            project_id=record.project_id,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class PolicyEnvelope(BaseModel):
    """`{"policy": {...}}`."""

    policy: PolicyPublic


class PolicyList(BaseModel):
    """`{"policies": [...]}`."""

    policies: list[PolicyPublic]
