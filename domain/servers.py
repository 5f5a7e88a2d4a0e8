"""What cluster and stack workflows ask of the compute API (activity I/O)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ServerRequest(BaseModel):
    """Create one server; `request_id` makes a retried create find the first one."""

    model_config = ConfigDict(frozen=True)

    name: str
    image: str
    flavor: str
    metadata: dict[str, str] = Field(default_factory=dict)
    request_id: str


class ServerInfo(BaseModel):
    """A server as the compute API reports it."""

    model_config = ConfigDict(frozen=True)

    physical_id: str
    name: str
    status: str
    locked: bool = False


class ServerStatuses(BaseModel):
    """Status of each asked-for server id; `None` means the server is gone."""

    model_config = ConfigDict(frozen=True)

    statuses: dict[str, str | None]
