"""Node bodies: `POST /v1/nodes` and `PATCH /v1/nodes/{node_id}` (Senlin's)."""

from __future__ import annotations

from pydantic import Field, model_validator

from api.schemas.common import Metadata, StrictModel


class NodeBody(StrictModel):
    """The inside of `{"node": {...}}`: a node of a cluster, or standalone without one."""

    name: str = Field(min_length=1, max_length=255)
    profile_id: str = Field(min_length=1, max_length=255)
    cluster_id: str | None = Field(None, max_length=255)
    role: str | None = Field(None, max_length=255)
    metadata: Metadata = Field(default_factory=dict)


class NodeCreate(StrictModel):
    """`POST /v1/nodes`."""

    node: NodeBody


class NodeChanges(StrictModel):
    """The inside of `PATCH /v1/nodes/{id}` `{"node": {...}}` (null = keep). `tainted`
    (Senlin 1.13) is Warden's unhealthy mark: the first victim of the next scale-in."""

    name: str | None = Field(None, min_length=1, max_length=255)
    role: str | None = Field(None, max_length=255)
    metadata: Metadata | None = None
    profile_id: str | None = Field(None, min_length=1, max_length=255)
    tainted: bool | None = None


class NodePatch(StrictModel):
    """`PATCH /v1/nodes/{id}`: Senlin's `{"node": {...}}`, or Warden's mark
    `{"mark_unhealthy": bool, "status_reason"?}`."""

    node: NodeChanges | None = None
    mark_unhealthy: bool | None = Field(None, strict=True)
    status_reason: str = Field("", max_length=255)

    @model_validator(mode="after")
    def _one_form(self) -> NodePatch:
        if (self.node is None) == (self.mark_unhealthy is None):
            raise ValueError("give either 'node' or 'mark_unhealthy'")
        return self
