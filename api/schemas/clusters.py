"""Cluster and node schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, field_validator

from api.schemas.common import Metadata, StrictModel
from domain.cluster.nodes import MARKED_UNHEALTHY
from domain.cluster.scaling import AdjustmentType
from domain.cluster.state import MAX_CAPACITY
from domain.errors import InvalidRequest
from store.clusters import ClusterRecord, NodeRecord


class ClusterBody(StrictModel):
    """The inside of `{"cluster": {...}}`."""

    name: str = Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    profile_id: str = Field(min_length=1, max_length=255)
    desired_capacity: int = Field(0, ge=0, le=MAX_CAPACITY)
    min_size: int = Field(0, ge=0, le=MAX_CAPACITY)
    max_size: int = Field(-1, ge=-1, le=MAX_CAPACITY)
    #: Any JSON map, as Senlin's `JsonField` takes; null (senlinclient's default) is {}.
    metadata: Metadata = Field(default_factory=dict)
    #: Senlin's per-cluster action timeout and config: the openstack CLI always sends
    #: both (null and {} unless asked); Warden has neither, so a value is refused.
    timeout: int | None = Field(None, ge=0, le=86_400)
    config: dict[str, Any] | None = Field(None, max_length=64)

    @field_validator("timeout", "config")
    @classmethod
    def _not_supported(cls, value: object) -> object:
        if value:
            raise ValueError("not supported by Warden: leave it out (or null)")
        return value


class ClusterCreate(StrictModel):
    """`POST /v1/clusters`."""

    cluster: ClusterBody


class ClusterUpdateBody(StrictModel):
    """The inside of `PATCH /v1/clusters/{id}` `{"cluster": {...}}`: a new profile.

    The openstack CLI sends every field it knows, null (or false) unless asked; Warden
    updates the profile only, so a value for anything else is refused.
    """

    profile_id: str | None = Field(None, min_length=1, max_length=255)
    profile_only: bool | None = None
    name: str | None = Field(None, max_length=255)
    metadata: dict[str, str] | None = Field(None, max_length=64)
    timeout: int | None = Field(None, ge=0, le=86_400)
    config: dict[str, Any] | None = Field(None, max_length=64)

    @field_validator("profile_only", "name", "metadata", "timeout", "config")
    @classmethod
    def _not_supported(cls, value: object) -> object:
        if value:
            raise ValueError("not supported by Warden's cluster update: only profile_id is")
        return value


class ClusterUpdate(StrictModel):
    """`PATCH /v1/clusters/{cluster_id}`."""

    cluster: ClusterUpdateBody


class EmptyBody(StrictModel):
    """`{}` for actions without parameters."""


class LockBody(StrictModel):
    """`lock {reason?, owner?}`."""

    reason: str = Field("", max_length=255)
    owner: str = Field("", max_length=255)


class ScaleBody(StrictModel):
    """`scale_out {count}` / `scale_in {count}`. No count (openstacksdk sends null) is
    the attached scaling policy's for that event, else 1 (`api.routers.clusters`)."""

    count: int | None = Field(None, ge=1, le=MAX_CAPACITY)


class ResizeBody(StrictModel):
    """`resize {...}` with Senlin's parameters; sizes are checked by the cluster."""

    adjustment_type: AdjustmentType | None = None
    number: float | None = Field(None, ge=-MAX_CAPACITY * 100, le=MAX_CAPACITY * 100)
    min_size: int | None = Field(None, ge=0, le=MAX_CAPACITY)
    max_size: int | None = Field(None, ge=-1, le=MAX_CAPACITY)
    min_step: int | None = Field(None, ge=0, le=MAX_CAPACITY)
    strict: bool = True


class DelNodesBody(StrictModel):
    """`del_nodes {nodes: [node ids or names]}`."""

    nodes: list[str] = Field(min_length=1, max_length=1000)


class PolicyAttachBody(StrictModel):
    """`policy_attach {policy_id, enabled?}`."""

    policy_id: str = Field(min_length=1, max_length=255)
    enabled: bool = True


class PolicyDetachBody(StrictModel):
    """`policy_detach {policy_id}`."""

    policy_id: str = Field(min_length=1, max_length=255)


class RecoverBody(StrictModel):
    """`recover {operation?, operation_params?, check?, check_capacity?}`: operation is
    REBOOT|REBUILD|RECREATE, any case; `check` refreshes the nodes' status from the cloud
    first and recovers only the unhealthy; `check_capacity: true` is refused (400)."""

    operation: str | None = Field(None, min_length=1, max_length=32)
    operation_params: dict[str, str] = Field(default_factory=dict, max_length=4)
    check: bool | None = None
    check_capacity: bool | None = None


class LifecycleBody(StrictModel):
    """`complete_lifecycle` / `heartbeat_lifecycle {lifecycle_action_token}`."""

    lifecycle_action_token: str = Field(min_length=1, max_length=64)


class OneActionRequest(BaseModel):
    """A body naming exactly one action (Senlin's rule), its fields declared by subclasses."""

    model_config = ConfigDict(extra="allow")

    def only_action(self) -> tuple[str, BaseModel]:
        """The single action named, or a 400 with Senlin's wording."""
        extra = sorted((self.model_extra or {}).keys())
        if extra:
            raise InvalidRequest(f"Invalid action {extra[0]} specified")
        named = sorted(self.model_fields_set)
        if not named:
            raise InvalidRequest("No action specified")
        if len(named) > 1:
            raise InvalidRequest("Multiple actions specified")
        name = named[0]
        body: BaseModel | None = getattr(self, name)
        if body is None:  # `{"scale_in": null}` means the action's defaults, if it has them
            model = next(
                a for a in get_args(type(self).model_fields[name].annotation) if a is not type(None)
            )
            try:
                body = model()
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join([name, *(str(p) for p in first["loc"])])
                raise InvalidRequest(f"{where}: {first['msg']}") from err
        return name, body


class ClusterActionRequest(OneActionRequest):
    """`POST /v1/clusters/{cluster_id}/actions`: exactly one of these keys."""

    check: EmptyBody | None = None
    recover: RecoverBody | None = None
    lock: LockBody | None = None
    unlock: EmptyBody | None = None
    scale_out: ScaleBody | None = None
    scale_in: ScaleBody | None = None
    resize: ResizeBody | None = None
    del_nodes: DelNodesBody | None = None
    policy_attach: PolicyAttachBody | None = None
    policy_detach: PolicyDetachBody | None = None
    complete_lifecycle: LifecycleBody | None = None
    heartbeat_lifecycle: LifecycleBody | None = None


class LockPublic(BaseModel):
    """Maintenance mode as the API shows it."""

    reason: str
    owner: str
    locked_at: datetime


class ClusterPublic(BaseModel):
    """A cluster as `GET /v1/clusters/{cluster_id}` shows it."""

    id: str
    name: str
    profile_id: str
    project_id: str
    status: str
    status_reason: str
    desired_capacity: int
    min_size: int
    max_size: int
    nodes: list[str]
    policies: list[dict[str, Any]]
    lock: LockPublic | None
    metadata: dict[str, Any]
    #: The health manager's `describe` (per-node state, recoveries) when a policy watches.
    health: dict[str, Any] | None = None
    created_at: datetime
    updated_at: datetime
    # Senlin's fields, as openstacksdk's Cluster reads them. Warden keeps no user or
    # domain, no per-cluster timeout and no config, so those stay empty.
    profile_name: str = ""
    user: str | None = None
    domain: str | None = None
    timeout: int | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    dependents: dict[str, Any] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def project(self) -> str:
        """Senlin's name for `project_id`."""
        return self.project_id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def init_at(self) -> datetime:
        """When the cluster was initialised (Warden: when it was accepted)."""
        return self.created_at

    @classmethod
    def of(
        cls, record: ClusterRecord, node_ids: list[str], profile_name: str = ""
    ) -> ClusterPublic:
        """From the database rows."""
        return cls(
            profile_name=profile_name,
            id=record.id,
            name=record.name,
            profile_id=record.profile_id,
            project_id=record.project_id,
            status=record.status,
            status_reason=record.status_reason,
            desired_capacity=record.desired_capacity,
            min_size=record.min_size,
            max_size=record.max_size,
            nodes=node_ids,
            policies=record.policies,
            lock=LockPublic.model_validate(record.lock) if record.lock else None,
            metadata=record.metadata_,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class ClusterEnvelope(BaseModel):
    """`{"cluster": {...}}`, the one key Senlin answers (tempest's client unwraps a body of
    one key); a 202's action is in its `Location` header, as Senlin's is."""

    cluster: ClusterPublic


class ClusterList(BaseModel):
    """`{"clusters": [...]}`."""

    clusters: list[ClusterPublic]


class NodePublic(BaseModel):
    """A node as `GET /v1/nodes/{node_id}` shows it."""

    id: str
    name: str
    cluster_id: str
    project_id: str
    profile_id: str
    physical_id: str | None
    status: str
    status_reason: str
    index: int
    data: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    # Senlin's fields, as openstacksdk's Node reads them.
    profile_name: str = ""
    user: str | None = None
    domain: str | None = None
    role: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    dependents: dict[str, Any] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def project(self) -> str:
        """The node's project (Senlin's `project`)."""
        return self.project_id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def init_at(self) -> datetime:
        """When the node was initialised (Warden: created)."""
        return self.created_at

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tainted(self) -> bool:
        """Senlin 1.13: marked as the first victim of the next scale-in (`mark_unhealthy`)."""
        return bool(self.data.get(MARKED_UNHEALTHY))

    @classmethod
    def of(cls, record: NodeRecord, profile_name: str = "") -> NodePublic:
        """From the database row."""
        return cls(
            id=record.id,
            name=record.name,
            cluster_id=record.cluster_id,
            project_id=record.project_id,
            profile_id=record.profile_id,
            physical_id=record.physical_id,
            status=record.status,
            status_reason=record.status_reason,
            index=record.index,
            data=record.data,
            created_at=record.created_at,
            updated_at=record.updated_at,
            profile_name=profile_name,
        )


class NodeEnvelope(BaseModel):
    """`{"node": {...}}`."""

    node: NodePublic


class NodeList(BaseModel):
    """`{"nodes": [...]}`."""

    nodes: list[NodePublic]


class MarkUnhealthyRequest(StrictModel):
    """`PATCH /v1/nodes/{node_id}`."""

    mark_unhealthy: bool = Field(strict=True)
    status_reason: str = Field("", max_length=255)


class NodeActionRequest(OneActionRequest):
    """`POST /v1/nodes/{node_id}/actions`: `check {}` or `recover {...}`."""

    check: EmptyBody | None = None
    recover: RecoverBody | None = None
