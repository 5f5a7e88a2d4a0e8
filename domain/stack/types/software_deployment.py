"""Heat's software deployments (`/software_deployments`): a config applied to a server,
with the status the in-guest agent reports back."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

#: Heat's deployment statuses.
IN_PROGRESS: Final = "IN_PROGRESS"
COMPLETE: Final = "COMPLETE"
FAILED: Final = "FAILED"


class SoftwareDeployment(BaseModel):
    """A stored deployment, as Heat's `format_software_deployment` shows it."""

    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    config_id: str
    server_id: str
    input_values: dict[str, Any] | None = None
    output_values: dict[str, Any] | None = None
    action: str | None = None
    status: str | None = None
    status_reason: str | None = None
    stack_user_project_id: str | None = None
    created_at: datetime
    updated_at: datetime | None = None


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def deployment_view(deployment: SoftwareDeployment) -> dict[str, Any]:
    """Heat's view of a deployment (`updated_time` once it was updated)."""
    view: dict[str, Any] = {
        "id": deployment.id,
        "server_id": deployment.server_id,
        "input_values": deployment.input_values,
        "output_values": deployment.output_values,
        "action": deployment.action,
        "status": deployment.status,
        "status_reason": deployment.status_reason,
        "config_id": deployment.config_id,
        "creation_time": _iso(deployment.created_at),
    }
    if deployment.updated_at is not None:
        view["updated_time"] = _iso(deployment.updated_at)
    return view
