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
    #: A second user of the project with the `admin` role (devstack's `admin`): what
    #: admin-only calls (Nova's flavor-manage, Senlin's service list) need.
    admin_username: str = "admin"
    admin_password: str = "admin-secret"  # noqa: S105 - the documented dev credential
    project_name: str = "demo"
    domain_name: str = "Default"
    application_credential_id: str = "warden-app-cred"
    application_credential_secret: str = "warden-app-secret"  # noqa: S105 - dev credential
    region: str = "RegionOne"
    #: Nova's availability zones (`os-availability-zone`); a server asks for one of them.
    availability_zones: tuple[str, ...] = ("nova",)
    #: Nova's compute hosts, each with its nova-compute service: the scheduler spreads
    #: servers over them and honours server groups' (anti-)affinity on them.
    compute_hosts: tuple[str, ...] = Field(("simcloud",), min_length=1, max_length=1000)
    #: Warden's API base URL: the catalog then lists `orchestration` (Heat) at
    #: `<url>/v1/<project id>` and `clustering` (Senlin) at `<url>/cluster`.
    warden_url: str | None = Field(None, pattern=r"^https?://")
    token_ttl_s: int = Field(3600, gt=0)

    #: Nova's `osapi_max_limit`: the largest page a list returns (0 = no limit).
    max_limit: int = Field(1000, ge=0)
    #: Seed of the random source behind `/sim/api-faults` error rates.
    seed: int | None = None

    #: Glance's seeded images: public, active, id `uuid5(NAMESPACE_DNS, name)`. Devstack's
    #: CirrOS (today's, and the one senlin-tempest-plugin's profile names), then the
    #: names Warden's tests and examples pass as `image`.
    images: tuple[str, ...] = Field(
        (
            "cirros-0.6.2-x86_64-disk",
            "cirros-0.4.0-x86_64-disk",
            "cirros",
            "cirros-v2",
            "a",
            "b",
            "x",
            "img-2",
            "ubuntu-22.04",
            "fedora-coreos",
        ),
        max_length=1000,
    )
    #: How long a Glance `web-download` import stays `importing` before `active`.
    import_latency_ms: int = Field(0, ge=0, le=3_600_000)
    #: How long a Cinder volume stays `creating`, `extending` or `deleting`.
    volume_latency_ms: int = Field(0, ge=0, le=3_600_000)
    #: Neutron quotas replacing its defaults, e.g. `{"port": -1}` (no limit) for clouds
    #: of thousands of servers (every server made through the API holds a port).
    network_quotas: dict[str, int] = Field(default_factory=dict)
    #: The project's own network, as devstack makes it: a server asking for `auto`
    #: networking gets a port on it. (Its name, subnet `<name>-subnet` and CIDR.)
    private_network: str | None = "private"
    private_cidr: str = Field("10.0.0.0/16", pattern=r"^[0-9.]+/[0-9]+$")
    #: How long an Octavia load balancer stays PENDING_* after a change to it or to
    #: one of its listeners, pools, members or health monitors.
    lb_latency_ms: int = Field(0, ge=0, le=3_600_000)
    #: Octavia quotas replacing simcloud's defaults (`load_balancer`, `listener`,
    #: `pool`, `health_monitor`, `member`), -1 for no limit.
    lb_quotas: dict[str, int] = Field(default_factory=dict)
