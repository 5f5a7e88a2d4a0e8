"""Scale-in lifecycle hooks: the message an app receives before its node is deleted."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

#: The only transition Warden announces (AWS calls it `autoscaling:EC2_INSTANCE_TERMINATING`).
TERMINATION = "termination"
#: Header carrying `sha256=<hex HMAC-SHA256 of the raw body>` when the policy has a secret.
SIGNATURE_HEADER = "X-Warden-Signature"


class HookType(StrEnum):
    """Where a deletion policy sends lifecycle messages."""

    WEBHOOK = "webhook"
    ZAQAR = "zaqar"


class LifecycleMessage(BaseModel):
    """The body of a webhook POST or Zaqar message (docs/api-contract.md §Lifecycle hooks)."""

    model_config = ConfigDict(frozen=True)

    lifecycle_action_token: str
    node_id: str
    node_name: str
    resource_id: str = Field(description="The node's server id (physical id)")
    cluster_id: str
    lifecycle_transition_type: str = TERMINATION
    timeout: int = Field(description="Seconds the deletion waits, counted from this message")
    deadline: datetime = Field(description="When deletion proceeds without completion")
    complete_url: str = Field(description="POST complete_lifecycle / heartbeat_lifecycle here")


class HookDelivery(BaseModel):
    """One message to deliver. Carries no secret: the activity looks it up by policy id."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    policy_id: str
    hook_type: HookType
    url: str | None = None
    queue: str | None = None
    message: LifecycleMessage
    #: Attempts made before this activity's first one (a victim's first attempt runs as
    #: a local activity; its retries continue the count in events and logs).
    prior_attempts: int = Field(default=0, ge=0)


class HookDeliveryResult(BaseModel):
    """How a delivery went (failures that should be retried raise instead)."""

    model_config = ConfigDict(frozen=True)

    delivered: bool
    detail: str = ""


class HookTarget(BaseModel):
    """Where a cluster's deletion policy sends lifecycle messages.

    No secret: secrets never enter workflow history (docs/api-contract.md §Reliability).
    """

    model_config = ConfigDict(frozen=True)

    policy_id: str
    type: HookType
    url: str | None = None
    queue: str | None = None
    timeout: int = Field(0, ge=0, description="Seconds to wait; 0 = message only, no wait")


class DeletionSettings(BaseModel):
    """What removing nodes needs from the attached deletion policy (defaults without one)."""

    model_config = ConfigDict(frozen=True)

    destroy_after_deletion: bool = True
    grace_period: int = 0
    reduce_desired_capacity: bool = True
    hook: HookTarget | None = None


class LifecycleNote(BaseModel):
    """Optional argument of the `complete_lifecycle` / `heartbeat_lifecycle` signals."""

    model_config = ConfigDict(frozen=True)

    reason: str = Field("", max_length=255)
    source: str = Field("", max_length=64, description="api, temporal, … (shown in events)")
