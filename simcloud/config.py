"""What a simcloud instance is told when it starts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SimConfig(BaseModel):
    """Behaviour of one simulated cloud: latencies, credentials, limits.

    Latencies are how long a server stays in a transitional status (BUILD, REBOOT,
    HARD_REBOOT, REBUILD, DELETED); 0 makes every transition immediate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    build_latency_ms: int = Field(0, ge=0, le=3_600_000)
    action_latency_ms: int = Field(0, ge=0, le=3_600_000)
    notify_url: str | None = Field(None, description="Where Nova-style notifications go")
    notify_token: str | None = Field(
        None, description="Sent as X-Auth-Token with notifications (Warden requires one)"
    )

    username: str = "warden"
    password: str = "warden-secret"  # noqa: S105 - the documented dev credential
    project_name: str = "demo"
    domain_name: str = "Default"
    application_credential_id: str = "warden-app-cred"
    application_credential_secret: str = "warden-app-secret"  # noqa: S105 - dev credential
    region: str = "RegionOne"
    #: Warden's API base URL: the catalog then lists `orchestration` (Heat) at
    #: `<url>/v1/<project id>` and `clustering` (Senlin) at `<url>/cluster`.
    warden_url: str | None = Field(None, pattern=r"^https?://")
    token_ttl_s: int = Field(3600, gt=0)

    #: Nova's `osapi_max_limit`: the largest page a list returns (0 = no limit).
    max_limit: int = Field(1000, ge=0)
    #: Seed of the random source behind `/sim/api-faults` error rates.
    seed: int | None = None
