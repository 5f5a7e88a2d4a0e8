"""Process settings: `WARDEN_*` environment variables (and Temporal's own)."""

from __future__ import annotations

import uuid
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def simulated_project_id(project_name: str) -> str:
    """The id simcloud's Keystone gives the project `project_name`: hex, as Keystone's
    ids are, and the same across restarts."""
    return uuid.uuid5(uuid.NAMESPACE_DNS, f"{project_name}.project").hex


class Settings(BaseSettings):
    """Everything a Warden process can be told, read once by `get_settings()`."""

    model_config = SettingsConfigDict(env_prefix="WARDEN_", extra="ignore")

    var_dir: Path = Field(Path("var"), description="Local state: databases, tokens, logs")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="The worker's and `warden dev`'s log level (config/logs.py)"
    )
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default sqlite:///<var_dir>/warden.db"
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _level_in_any_case(cls, level: object) -> object:
        """`debug` is `DEBUG`, as Python's logging reads it."""
        return level.upper() if isinstance(level, str) else level

    @field_validator("database_url")
    @classmethod
    def _sqlite_or_postgresql(cls, url: str | None) -> str | None:
        """Projection writes use SQLite's and PostgreSQL's INSERT … ON CONFLICT: refuse any
        other database when the process starts, not at its first write."""
        if url is not None and not url.startswith(("sqlite:", "postgresql:", "postgresql+")):
            raise ValueError("must be a sqlite:/// or postgresql:// URL")
        return url

    temporal_address: str = Field(
        "localhost:7233",
        validation_alias=AliasChoices("TEMPORAL_ADDRESS", "WARDEN_TEMPORAL_ADDRESS"),
    )
    temporal_namespace: str = Field(
        "default",
        validation_alias=AliasChoices("TEMPORAL_NAMESPACE", "WARDEN_TEMPORAL_NAMESPACE"),
    )
    temporal_ui_port: int = 8233
    temporal_dev_sync: Literal["normal", "full"] = Field(
        "normal",
        description="How `warden dev`'s Temporal server syncs its SQLite file (WAL): "
        "`normal` survives a killed server, `full` also a power cut, at an fsync per commit",
    )
    temporal_rpc_timeout_s: float = Field(10.0, gt=0, le=300)
    task_queue: str = "warden"
    worker_sticky_timeout_s: float = Field(
        10.0,
        gt=0,
        le=600,
        description="How long a workflow waits for the worker that ran it last before any "
        "worker takes it (Temporal's sticky queue timeout): a dead worker's workflows move "
        "on after this",
    )
    # Worker tuning (docs/operating.md §Worker tuning; the defaults come from `python -m bench`).
    worker_max_cached_workflows: int = Field(
        1000,
        ge=0,
        le=100_000,
        description="Workflows kept in memory between tasks (Temporal's sticky cache); one "
        "evicted replays its history at its next task",
    )
    worker_max_concurrent_activities: int = Field(
        100, ge=1, le=10_000, description="Activities one worker runs at once"
    )
    worker_max_concurrent_workflow_tasks: int = Field(
        100, ge=1, le=10_000, description="Workflow tasks one worker runs at once"
    )
    worker_activity_threads: int = Field(
        16,
        ge=1,
        le=1_000,
        description="Threads for the blocking activities (database writes); the cloud calls "
        "are async and need none",
    )

    # --- payload encryption and the codec server ---
    # TLS, client certificates, API keys and profiles come from Temporal's own environment
    # configuration (TEMPORAL_TLS_*, TEMPORAL_API_KEY, TEMPORAL_PROFILE; config/temporal_client).
    codec_keys_file: Path | None = Field(
        None, description='JSON {"current": id, "keys": {id: base64}}; unset = no encryption'
    )
    codec_keys: SecretStr | None = Field(
        None, description="The same JSON inline (takes precedence over codec_keys_file)"
    )
    codec_cors_origins: list[str] | None = Field(
        None,
        description="Origins (the Temporal UI) allowed to call /codec; default the dev UI "
        "at http://localhost:<temporal_ui_port> and http://127.0.0.1:<temporal_ui_port>",
    )
    codec_allow_anonymous: bool = Field(
        False,
        description="Serve /codec without a token (`warden dev` only: the UI sends none)",
    )
    codec_compression: bool = Field(
        True,
        description="Compress payloads of 512 bytes or more before they are encrypted and "
        "stored (compressed payloads are read either way; see config/codec.py)",
    )
    # --- end payload encryption ---

    api_host: str = "127.0.0.1"
    api_port: int = 8004
    api_max_body_bytes: int = Field(1_048_576, gt=0)
    public_url: str | None = Field(None, description="Base URL the API is reachable at")

    tokens_file: Path | None = Field(None, description="YAML/JSON tokens file")
    dev_token: str | None = None

    healthcheck_uri: str = "tcp://127.0.0.1:8005"
    healthcheck_ttl: int = Field(300, ge=0)
    healthcheck_cache_control: int | None = Field(None, ge=-1)

    simcloud_host: str = "127.0.0.1"
    simcloud_port: int = 8774

    health_check_interval_min: int = Field(60, ge=1)
    health_listing_max_age_s: float = Field(
        1.0,
        ge=0,
        le=30,
        description="How long one compute listing serves other clusters' health rounds",
    )
    hidden_stack_tags: list[str] = Field(
        default_factory=lambda: ["data-processing-cluster"],
        description="Stacks with any of these tags are left out of stack lists unless "
        "`show_hidden=true` (Heat's `hidden_stack_tags`, same default)",
    )
    hook_url_allowlist: list[str] = Field(
        default_factory=list,
        description="Hosts (`api.example.com`, `*.example.com`) or URL prefixes hook and "
        "probe URLs must match; empty allows any http(s) URL",
    )
    hook_server_poll_interval_s: int = Field(
        30, ge=1, le=3600, description="How often servers of nodes waiting on a hook are checked"
    )

    # --- cloud ---
    # Keystone credentials of the compute backend; the defaults reach the local simcloud.
    # With OS_CLOUD set, that entry of clouds.yaml is used instead (activities/cloud/config.py).
    cloud_name: str | None = Field(
        None,
        validation_alias=AliasChoices("OS_CLOUD", "WARDEN_CLOUD_NAME"),
        description="clouds.yaml entry to use instead of the cloud_* credentials",
    )
    cloud_auth_url: str | None = Field(
        None,
        description="Keystone v3 URL; default http://<simcloud_host>:<simcloud_port>/identity/v3",
    )
    cloud_username: str = "warden"
    cloud_password: SecretStr = SecretStr("warden-secret")
    cloud_project_name: str = "demo"
    cloud_user_domain_name: str = "Default"
    cloud_project_domain_name: str = "Default"
    cloud_application_credential_id: str | None = Field(
        None, description="Use this application credential instead of username/password"
    )
    cloud_application_credential_secret: SecretStr | None = None
    cloud_region_name: str | None = None
    cloud_interface: str = Field("public", pattern="^(public|internal|admin)$")
    cloud_verify: bool = True
    cloud_ca_file: Path | None = None
    cloud_timeout_s: float = Field(30.0, gt=0, le=600)
    cloud_connect_timeout_s: float = Field(5.0, gt=0, le=120)
    cloud_max_connections: int = Field(100, ge=1, le=10_000)
    cloud_endpoint_overrides: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Service type -> URL used instead of the Keystone catalog's, as JSON "
            '(e.g. {"compute": "https://nova.internal:8774/v2.1"}); clouds.yaml\'s '
            "<service>_endpoint_override keys are read too"
        ),
    )
    simcloud_notify_url: str | None = Field(
        None, description="Where simcloud POSTs Nova-style notifications"
    )
    simcloud_notify_token: str | None = Field(
        None, description="X-Auth-Token simcloud sends with notifications"
    )
    simcloud_build_latency_ms: int = Field(0, ge=0, le=3_600_000)
    simcloud_action_latency_ms: int = Field(0, ge=0, le=3_600_000)
    simcloud_max_limit: int = Field(1000, ge=0, description="Nova osapi_max_limit; 0 = none")
    simcloud_warden_url: str | None = Field(
        None, description="Warden's API URL in simcloud's catalog (orchestration, clustering)"
    )
    # --- end cloud ---

    # --- Nova notifications on the message bus (LIFECYCLE_EVENTS) ---
    notification_transport_url: SecretStr | None = Field(
        None,
        description="oslo.messaging transport URL of the bus Nova notifies on "
        "(`rabbit://user:pass@host:5672/vhost`, Nova's `[oslo_messaging_notifications] "
        "transport_url`); unset = no listener, notifications only by POST /v1/notifications",
    )

    @field_validator("notification_transport_url")
    @classmethod
    def _rabbit(cls, url: SecretStr | None) -> SecretStr | None:
        """Nova's bus is RabbitMQ in practice: refuse kafka:// and the rest at start."""
        if url is not None and not url.get_secret_value().startswith(
            ("rabbit://", "amqp://", "amqps://")
        ):
            raise ValueError("must be a rabbit://, amqp:// or amqps:// URL")
        return url

    notification_exchange: str = Field("nova", min_length=1, max_length=255)
    notification_topics: list[str] = Field(
        default_factory=lambda: ["versioned_notifications", "notifications"],
        min_length=1,
        description="Topics Nova notifies on: versioned, legacy, or both (they are read alike)",
    )
    notification_pool: str = Field(
        "warden-listeners",
        min_length=1,
        max_length=255,
        description="Queue shared by every worker: each notification reaches one of them",
    )
    notification_durable: bool = Field(
        False, description="Declare durable, as oslo.messaging's `amqp_durable_queues`"
    )

    # --- Keystone auth of the API ---
    keystone_url: str | None = Field(
        None,
        description="Keystone v3 URL that validates X-Auth-Token values not in the tokens "
        "file; unset = tokens file only",
    )
    # The service user Warden validates tokens with; unset = the cloud_* credentials. On a
    # real Keystone it needs the `service` role (or system reader) to validate others' tokens.
    keystone_username: str | None = None
    keystone_password: SecretStr | None = None
    keystone_project_name: str | None = None
    keystone_cache_ttl_s: int = Field(
        300,
        ge=0,
        le=86_400,
        description="How long a validated token is trusted before Keystone is asked again "
        "(never past its expires_at), like keystonemiddleware's token_cache_time",
    )
    keystone_timeout_s: float = Field(5.0, gt=0, le=120)
    # --- end Keystone auth ---

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to the SQLite file under `var_dir`."""
        return self.database_url or f"sqlite:///{self.var_dir / 'warden.db'}"

    @property
    def dev_project_id(self) -> str:
        """The dev token's project: the one simcloud's Keystone scopes the dev user's
        tokens to, so that the dev token, the `openstack` CLI and openstacksdk under
        `warden dev` see the same stacks and clusters."""
        return simulated_project_id(self.cloud_project_name)

    @property
    def resolved_tokens_file(self) -> Path:
        """Where tokens are read from (created by `warden dev` when absent)."""
        return self.tokens_file or self.var_dir / "tokens.yaml"

    @property
    def resolved_codec_cors_origins(self) -> list[str]:
        """Origins allowed to call the codec server from a browser."""
        if self.codec_cors_origins is not None:
            return self.codec_cors_origins
        port = self.temporal_ui_port
        return [f"http://localhost:{port}", f"http://127.0.0.1:{port}"]

    @property
    def api_url(self) -> str:
        """Base URL of the API as clients should use it."""
        return self.public_url or f"http://{self.api_host}:{self.api_port}"


class SettingsError(ValueError):
    """The environment holds a setting Warden cannot use; the message names each one."""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, built once from the environment.

    Raises `SettingsError`, one line per bad variable (`WARDEN_API_PORT: Input should be
    a valid integer…`), so a process can stop with that instead of a traceback.
    """
    try:
        return Settings()
    except ValidationError as err:
        raise SettingsError(settings_error_text(err)) from None


def settings_error_text(err: ValidationError) -> str:
    """Each error of `err` as `<environment variable>: <what is wrong>`."""
    lines = []
    for error in err.errors(include_url=False):
        field = str(error["loc"][0]) if error["loc"] else ""
        # A field read under its own name is WARDEN_<NAME>; an alias (TEMPORAL_ADDRESS)
        # is its own variable's name already.
        name = f"WARDEN_{field.upper()}" if field.islower() else field
        lines.append(f"{name}: {error['msg']}")
    return "Invalid settings: " + "; ".join(lines)
