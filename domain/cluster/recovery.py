"""Recovery steps on one server: what the recovery activities are asked, and server states.

Workflows build these requests; `activities/recovery.py` carries them out. Kept apart
from the activities so workflow code never imports an activity module for its types.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from domain.cluster.policies.health import RebootType

#: Nova statuses that say an operation is still running on the server.
TRANSITIONAL_STATUSES: Final = frozenset(
    {
        "BUILD",
        "REBUILD",
        "REBOOT",
        "HARD_REBOOT",
        "RESIZE",
        "REVERT_RESIZE",
        "MIGRATING",
        "PASSWORD",
    }
)


class RebootRequest(BaseModel):
    """Reboot a server (REBOOT recovery action)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    physical_id: str = Field(min_length=1, max_length=255)
    type: RebootType = RebootType.SOFT


class RebuildRequest(BaseModel):
    """Rebuild a server from `image` (None = the image it runs now), with new
    `user_data` when given (None = keep the server's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    physical_id: str = Field(min_length=1, max_length=255)
    image: str | None = Field(None, min_length=1, max_length=255)
    user_data: str | None = None


def in_transition(status: str, task_state: str | None) -> bool:
    """Whether the server is between states (Nova shows e.g. SHUTOFF while powering on)."""
    return task_state is not None or status.upper() in TRANSITIONAL_STATUSES


def effective_reboot_type(requested: RebootType, status: str) -> RebootType:
    """The reboot that can work: Nova soft-reboots only ACTIVE servers.

    A soft reboot asked for a SHUTOFF, PAUSED or ERROR server can only mean a hard
    one; asking Nova for SOFT there just gets 409.
    """
    if requested is RebootType.SOFT and status.upper() != "ACTIVE":
        return RebootType.HARD
    return requested
