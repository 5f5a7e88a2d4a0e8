"""Cluster and node schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    computed_field,
    field_validator,
    model_validator,
)

from api.schemas.common import Metadata, StrictModel
from domain.cluster.nodes import MARKED_UNHEALTHY, NODE_NAME_FORMAT
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
    #: Senlin's default action timeout of the cluster (seconds): kept and shown, not
    #: applied (Warden's waits keep their own limits, docs/api-contract.md).
    timeout: int | None = Field(None, ge=0, le=86_400)
    #: Senlin's cluster config, kept as given (null is {}); `node.name.format` (`$nI`
    #: the index, `$nR` random characters) names the nodes the cluster creates.
    config: dict[str, Any] | None = Field(None, max_length=64)

    @field_validator("config")
    @classmethod
    def _name_format(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        fmt = (value or {}).get(NODE_NAME_FORMAT)
        if fmt is not None and (not isinstance(fmt, str) or len(fmt) > 200):
            raise ValueError(f"'{NODE_NAME_FORMAT}' must be a string of at most 200 characters")
        return value


class ClusterCreate(StrictModel):
    """`POST /v1/clusters`."""

    cluster: ClusterBody


class ClusterUpdateBody(StrictModel):
    """The inside of `PATCH /v1/clusters/{id}` `{"cluster": {...}}` (null = keep).

    `profile_id` rolls every node onto the new profile (in the batch policy's batches);
    with `profile_only` the cluster takes the profile for the nodes it makes from now on
    and its nodes stay as they are. The rest changes at once.
    """

    profile_id: str | None = Field(None, min_length=1, max_length=255)
    profile_only: bool | None = None
    name: str | None = Field(
        None, min_length=1, max_length=255, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
    )
    metadata: Metadata | None = None
    timeout: int | None = Field(None, ge=0, le=86_400)
    config: dict[str, Any] | None = Field(None, max_length=64)

    def properties(self) -> dict[str, Any]:
        """The properties changed at once (name, metadata, timeout, config)."""
        return self.model_dump(include={"name", "metadata", "timeout", "config"}, exclude_none=True)


class ClusterUpdate(StrictModel):
    """`PATCH /v1/clusters/{cluster_id}` (no `cluster`: Senlin's own 400, in the route)."""

    cluster: ClusterUpdateBody | None = None


class EmptyBody(StrictModel):
    """`{}` for actions without parameters."""


class LockBody(StrictModel):
    """`lock {reason?, owner?}`."""

    reason: str = Field("", max_length=255)
    owner: str = Field("", max_length=255)


def senlin_int(name: str, value: object) -> int:
    """An integer parameter as Senlin's `parse_int_param` reads one (`"2"` is 2)."""
    if isinstance(value, bool):
        raise InvalidRequest(f"The value for {name} must be an integer: '{value}'.")
    try:
        return int(str(value).strip())
    except ValueError as err:
        raise InvalidRequest(f"The value for {name} must be an integer: '{value}'.") from err


class ScaleBody(StrictModel):
    """`scale_out {count}` / `scale_in {count}`. No count (openstacksdk sends null) is
    the attached scaling policy's for that event, else 1 (the cluster decides:
    `domain.cluster.scale_actions`). Checked in Senlin's words before the cluster is
    looked up."""

    count: int | None = Field(None, ge=1, le=MAX_CAPACITY)

    @field_validator("count", mode="before")
    @classmethod
    def _senlin_count(cls, value: object) -> object:
        if value is None:
            return None
        count = senlin_int("count", value)
        if count < 0:
            raise InvalidRequest("Value must be >= 0 for field 'count'.")
        if count == 0:
            raise InvalidRequest("Count for a scale request cannot be 0.")
        if count > MAX_CAPACITY:
            raise InvalidRequest(f"Value must be <= {MAX_CAPACITY} for field 'count'.")
        return count


class ResizeBody(StrictModel):
    """`resize {...}` with Senlin's parameters, checked as Senlin's API checks them
    (before the cluster is looked up); sizes against the cluster, by the cluster."""

    adjustment_type: AdjustmentType | None = None
    number: float | None = Field(None, ge=-MAX_CAPACITY * 100, le=MAX_CAPACITY * 100)
    min_size: int | None = Field(None, ge=0, le=MAX_CAPACITY)
    max_size: int | None = Field(None, ge=-1, le=MAX_CAPACITY)
    min_step: int | None = Field(None, ge=0, le=MAX_CAPACITY)
    strict: bool = True

    @field_validator("adjustment_type", mode="before")
    @classmethod
    def _known_type(cls, value: object) -> object:
        if value is not None and value not in {t.value for t in AdjustmentType}:
            raise InvalidRequest(f"Value '{value}' is not acceptable for field 'adjustment_type'.")
        return value

    @field_validator("min_size", "max_size", "min_step", mode="before")
    @classmethod
    def _integer(cls, value: object, info: ValidationInfo) -> object:
        return None if value is None else senlin_int(str(info.field_name), value)

    @model_validator(mode="after")
    def _senlin_rules(self) -> ResizeBody:
        given = (self.adjustment_type, self.number, self.min_size, self.max_size)
        if all(v is None for v in given):
            raise InvalidRequest("Not enough parameters to do resize action.")
        if self.adjustment_type is not None and self.number is None:
            raise InvalidRequest("Missing number value for size adjustment.")
        if self.number is not None and self.adjustment_type is None:
            raise InvalidRequest("Missing adjustment_type value for size adjustment.")
        if self.adjustment_type == AdjustmentType.EXACT_CAPACITY and (self.number or 0) < 0:
            raise InvalidRequest(
                "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'."
            )
        low, high = self.min_size, self.max_size
        if low is not None and high is not None and high > 0 and low > high:
            raise InvalidRequest(
                f"The specified min_size ({low}) is greater than the specified max_size ({high})."
            )
        return self


#: What oslo's `bool_from_string` takes (Senlin's boolean parameters), and means.
_BOOLEAN_WORDS = {
    **dict.fromkeys(("1", "t", "true", "on", "y", "yes"), True),
    **dict.fromkeys(("0", "f", "false", "off", "n", "no"), False),
}


def senlin_bool(value: object) -> bool:
    """A boolean parameter as Senlin reads one, with its refusal's wording."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word not in _BOOLEAN_WORDS:
        allowed = ", ".join(f"'{w}'" for w in sorted(_BOOLEAN_WORDS))
        raise InvalidRequest(f"Unrecognized value '{value}', acceptable values are: {allowed}")
    return _BOOLEAN_WORDS[word]


def senlin_identities(value: object, attr: str = "nodes") -> list[str]:
    """Senlin's `IdentityListField(min_items=1)`: a list of unique ids or names (a
    string is taken as its characters, as oslo's list coercion does)."""
    items = [] if value is None else list(value) if isinstance(value, (list, str)) else [value]
    if not items:
        raise InvalidRequest(f"Value for '{attr}' must have at least 1 item(s).")
    if len(set(map(str, items))) != len(items):
        raise InvalidRequest(f"Items for '{attr}' must be unique")
    if len(items) > MAX_CAPACITY:
        raise InvalidRequest(f"Value for '{attr}' must have at most {MAX_CAPACITY} item(s).")
    return [str(item)[:255] for item in items]


class NodeIdsBody(StrictModel):
    """`add_nodes {nodes: [node ids or names]}`; checked as Senlin checks it (`ids()`)."""

    nodes: Any = None

    def ids(self) -> list[str]:
        """The node ids or names, or Senlin's 400."""
        return senlin_identities(self.nodes)


class DelNodesBody(NodeIdsBody):
    """`del_nodes {nodes: [node ids or names], destroy_after_deletion?}`."""

    destroy_after_deletion: Any = None

    def destroy(self) -> bool | None:
        """The caller's `destroy_after_deletion` (None: not given), or Senlin's 400."""
        given = self.destroy_after_deletion
        return None if given is None else senlin_bool(given)


class ReplaceNodesBody(StrictModel):
    """`replace_nodes {nodes: {member: standalone node}}` (ids or names); checked as
    Senlin checks it (`pairs()`)."""

    nodes: Any = None

    def pairs(self) -> dict[str, str]:
        """The map of replacements, or Senlin's 400."""
        if not self.nodes or not isinstance(self.nodes, dict):
            raise InvalidRequest("The data provided is not a map")
        for old, new in self.nodes.items():
            if new is None:
                raise InvalidRequest(f"Field `nodes[{old}]' cannot be None")
        pairs = {str(old)[:255]: str(new)[:255] for old, new in self.nodes.items()}
        if len(set(pairs.values())) != len(pairs):
            raise InvalidRequest("Map contains duplicated values")
        return pairs


class PolicyAttachBody(StrictModel):
    """`policy_attach {policy_id, enabled?}` (`enabled` read as Senlin reads a boolean)."""

    policy_id: str = Field(min_length=1, max_length=255)
    enabled: bool = True

    @field_validator("enabled", mode="before")
    @classmethod
    def _senlin_bool(cls, value: object) -> object:
        return True if value is None else senlin_bool(value)


class PolicyUpdateBody(StrictModel):
    """`policy_update {policy_id, enabled?}` (`enabled` read as Senlin reads a boolean)."""

    policy_id: str = Field(min_length=1, max_length=255)
    enabled: bool | None = None

    @field_validator("enabled", mode="before")
    @classmethod
    def _senlin_bool(cls, value: object) -> object:
        return None if value is None else senlin_bool(value)


class PolicyDetachBody(StrictModel):
    """`policy_detach {policy_id}`."""

    policy_id: str = Field(min_length=1, max_length=255)


class CheckBody(BaseModel):
    """`check {...}`: Senlin takes any parameters and uses none."""

    model_config = ConfigDict(extra="allow")


class RecoverBody(BaseModel):
    """`recover {operation?, operation_params?, check?, check_capacity?}`: operation is
    REBOOT|REBUILD|RECREATE, any case; `check` refreshes the nodes' status from the cloud
    first and recovers only the unhealthy; `check_capacity: true` is refused (400)."""

    #: Other keys are Senlin's 400 once the cluster is found (`unrecognized()`).
    model_config = ConfigDict(extra="allow")

    operation: str | None = Field(None, min_length=1, max_length=32)
    operation_params: dict[str, str] = Field(default_factory=dict, max_length=4)
    check: bool | None = None
    check_capacity: bool | None = None

    def ensure_recognized(self) -> None:
        """Senlin's 400 for parameters a recover does not take."""
        extra = sorted(self.model_extra or {})
        if extra:
            raise InvalidRequest(f"Action parameter {extra} is not recognizable.")

    def known(self) -> dict[str, Any]:
        """The parameters a recover takes, as given."""
        return self.model_dump(exclude_none=True, exclude=set(self.model_extra or {}))


class LifecycleBody(StrictModel):
    """`complete_lifecycle` / `heartbeat_lifecycle {lifecycle_action_token}`."""

    lifecycle_action_token: str = Field(min_length=1, max_length=64)


class OneActionRequest(BaseModel):
    """A body naming exactly one action (Senlin's rule), its fields declared by subclasses.

    The body is judged as Senlin judges it before any field is: no key, several keys,
    an unknown key, a value that is not a map, each a 400 in the words of `WORDS`.
    """

    model_config = ConfigDict(extra="forbid")

    #: Senlin's refusals: no action, several, an unknown one, parameters not a map.
    WORDS: ClassVar[tuple[str, str, str, str]] = (
        "No action specified",
        "Multiple actions specified",
        "Unrecognized action '{}' specified",
        "The data provided is not a map",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_action(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        none, several, unknown, not_map = cls.WORDS
        if not data:
            raise InvalidRequest(none)
        if len(data) > 1:
            raise InvalidRequest(several)
        [(name, value)] = data.items()
        if name not in cls.model_fields:
            raise InvalidRequest(unknown.format(name))
        if value is not None and not isinstance(value, dict):
            raise InvalidRequest(not_map)
        return data

    def only_action(self) -> tuple[str, BaseModel]:
        """The single action named (the body has exactly one: `_one_action`)."""
        [name] = sorted(self.model_fields_set)
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

    check: CheckBody | None = None
    recover: RecoverBody | None = None
    lock: LockBody | None = None
    unlock: EmptyBody | None = None
    scale_out: ScaleBody | None = None
    scale_in: ScaleBody | None = None
    resize: ResizeBody | None = None
    del_nodes: DelNodesBody | None = None
    add_nodes: NodeIdsBody | None = None
    replace_nodes: ReplaceNodesBody | None = None
    policy_attach: PolicyAttachBody | None = None
    policy_detach: PolicyDetachBody | None = None
    policy_update: PolicyUpdateBody | None = None
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
            config=record.config,
            timeout=record.timeout,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class CollectedAttribute(BaseModel):
    """One member's value of a collected attribute."""

    id: str
    value: Any


class CollectedAttributes(BaseModel):
    """`GET /v1/clusters/{id}/attrs/{path}`: `{"cluster_attributes": [{id, value}]}`."""

    cluster_attributes: list[CollectedAttribute]


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
            role=record.role,
            metadata=record.metadata_,
        )


class NodeShown(BaseModel):
    """A node as `/v1/nodes` answers it (the OpenAPI document's schema): `NodePublic`'s
    fields, with `details` only when asked (`show_details`) and `tainted` only from API
    1.13, as Senlin shows them (`api.routers.nodes.node_document`)."""

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
    profile_name: str = ""
    user: str | None = None
    domain: str | None = None
    role: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    dependents: dict[str, Any] = Field(default_factory=dict)
    project: str = ""
    init_at: datetime | None = None
    details: dict[str, Any] | None = None
    tainted: bool | None = None


class NodeShownEnvelope(BaseModel):
    """`{"node": {...}}` as the node routes answer it."""

    node: NodeShown


class NodeShownList(BaseModel):
    """`{"nodes": [...]}` as `GET /v1/nodes` answers it."""

    nodes: list[NodeShown]


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

    WORDS: ClassVar[tuple[str, str, str, str]] = (
        "No action specified.",
        "Multiple actions specified.",
        "Unrecognized action '{}' specified",
        "The params provided is not a map.",
    )

    check: CheckBody | None = None
    recover: RecoverBody | None = None
