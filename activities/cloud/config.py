"""How to reach the cloud: Keystone credentials from settings, or `OS_CLOUD` + clouds.yaml.

Two ways to point Warden at a cloud (the defaults reach the local simcloud):

1. Settings: `WARDEN_CLOUD_AUTH_URL`, `WARDEN_CLOUD_USERNAME`, `WARDEN_CLOUD_PASSWORD`,
   `WARDEN_CLOUD_PROJECT_NAME`, `WARDEN_CLOUD_USER_DOMAIN_NAME`,
   `WARDEN_CLOUD_PROJECT_DOMAIN_NAME` — or `WARDEN_CLOUD_APPLICATION_CREDENTIAL_ID` and
   `..._SECRET` — plus `WARDEN_CLOUD_REGION_NAME`, `WARDEN_CLOUD_INTERFACE`,
   `WARDEN_CLOUD_VERIFY`, `WARDEN_CLOUD_CA_FILE`.
2. `OS_CLOUD=<name>`: that entry of the first clouds.yaml found in `OS_CLIENT_CONFIG_FILE`,
   `./clouds.yaml`, `~/.config/openstack/clouds.yaml`, `/etc/openstack/clouds.yaml`
   (a `secure.yaml` next to it is merged in, as openstacksdk does).

Either way a service can be reached somewhere else than its catalog URL:
`WARDEN_CLOUD_ENDPOINT_OVERRIDES` (JSON, service type → URL), or clouds.yaml's
`<service>_endpoint_override` keys (`compute_endpoint_override: https://...`); the
setting wins for the services it names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from config import Settings

APP_CREDENTIAL_AUTH_TYPES = ("v3applicationcredential", "applicationcredential")
#: clouds.yaml keys `<service type>_endpoint_override`, as openstacksdk reads them.
ENDPOINT_OVERRIDE = "_endpoint_override"


class CloudConfig(BaseModel):
    """Keystone credentials and transport options of one cloud.

    Password auth needs `username`, `password` and a project (`project_name` or
    `project_id`); application-credential auth needs its id and secret.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    auth_url: str = Field(min_length=1)
    username: str | None = None
    password: SecretStr | None = None
    user_domain_name: str | None = "Default"
    user_domain_id: str | None = None
    project_name: str | None = None
    project_id: str | None = None
    project_domain_name: str | None = "Default"
    project_domain_id: str | None = None
    application_credential_id: str | None = None
    application_credential_secret: SecretStr | None = None
    region_name: str | None = None
    interface: str = Field("public", pattern="^(public|internal|admin)$")
    verify: bool = True
    ca_file: Path | None = None
    timeout_s: float = Field(30.0, gt=0)
    connect_timeout_s: float = Field(5.0, gt=0)
    max_connections: int = Field(100, ge=1)
    #: Service type → the URL to use instead of the catalog's (openstacksdk's
    #: `<service>_endpoint_override`); `%(project_id)s` is replaced by the token's project.
    endpoint_overrides: dict[str, str] = Field(default_factory=dict)

    @field_validator("endpoint_overrides")
    @classmethod
    def _urls(cls, value: dict[str, str]) -> dict[str, str]:
        for service_type, url in value.items():
            if not service_type or urlsplit(url).scheme not in ("http", "https"):
                msg = f"endpoint override of {service_type!r} is not an http(s) URL: {url!r}"
                raise ValueError(msg)
        return {service_type: url.rstrip("/") for service_type, url in value.items()}

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.uses_application_credential:
            if self.application_credential_secret is None:
                msg = "application_credential_id needs application_credential_secret"
                raise ValueError(msg)
        elif not (self.username and self.password and (self.project_name or self.project_id)):
            msg = "password auth needs username, password and project_name or project_id"
            raise ValueError(msg)
        return self

    @property
    def uses_application_credential(self) -> bool:
        """Whether Keystone is asked with the application credential."""
        return self.application_credential_id is not None

    @property
    def identity_url(self) -> str:
        """The Keystone v3 base URL (`/v3` appended when the URL is the service root)."""
        url = self.auth_url.rstrip("/")
        return url if url.endswith("/v3") else f"{url}/v3"

    @classmethod
    def from_settings(
        cls, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> CloudConfig:
        """The cloud of `OS_CLOUD` (`settings.cloud_name`) if set, else the `cloud_*` settings."""
        transport = {
            "timeout_s": settings.cloud_timeout_s,
            "connect_timeout_s": settings.cloud_connect_timeout_s,
            "max_connections": settings.cloud_max_connections,
        }
        if settings.cloud_name:
            entry = from_clouds_yaml(settings.cloud_name, environ=environ, overrides=transport)
            if not settings.cloud_endpoint_overrides:
                return entry
            overrides = entry.endpoint_overrides | settings.cloud_endpoint_overrides
            return entry.model_copy(update={"endpoint_overrides": overrides})
        auth_url = settings.cloud_auth_url or (
            f"http://{settings.simcloud_host}:{settings.simcloud_port}/identity/v3"
        )
        return cls(
            auth_url=auth_url,
            username=settings.cloud_username,
            password=settings.cloud_password,
            user_domain_name=settings.cloud_user_domain_name,
            project_name=settings.cloud_project_name,
            project_domain_name=settings.cloud_project_domain_name,
            application_credential_id=settings.cloud_application_credential_id,
            application_credential_secret=settings.cloud_application_credential_secret,
            region_name=settings.cloud_region_name,
            interface=settings.cloud_interface,
            verify=settings.cloud_verify,
            ca_file=settings.cloud_ca_file,
            endpoint_overrides=settings.cloud_endpoint_overrides,
            **transport,
        )


def clouds_yaml_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where clouds.yaml is looked for, in openstacksdk's order."""
    env = os.environ if environ is None else environ
    paths = [Path(env["OS_CLIENT_CONFIG_FILE"])] if env.get("OS_CLIENT_CONFIG_FILE") else []
    home = Path(env.get("HOME", str(Path.home())))
    paths += [
        Path.cwd() / "clouds.yaml",
        home / ".config" / "openstack" / "clouds.yaml",
        Path("/etc/openstack/clouds.yaml"),
    ]
    return paths


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _load_entry(cloud: str, paths: list[Path]) -> tuple[dict[str, Any], Path]:
    for path in paths:
        if not path.is_file():
            continue
        document = yaml.safe_load(path.read_text()) or {}
        entry = (document.get("clouds") or {}).get(cloud)
        if entry is None:
            continue
        secure = path.with_name("secure.yaml")
        if secure.is_file():
            secrets = (yaml.safe_load(secure.read_text()) or {}).get("clouds") or {}
            entry = _merge(entry, secrets.get(cloud) or {})
        return entry, path
    searched = ", ".join(str(p) for p in paths)
    msg = f"cloud {cloud!r} not found in any clouds.yaml (searched {searched})"
    raise ValueError(msg)


def from_clouds_yaml(
    cloud: str,
    *,
    environ: Mapping[str, str] | None = None,
    paths: list[Path] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> CloudConfig:
    """The `CloudConfig` of entry `cloud` of the first clouds.yaml that has it.

    Args:
        cloud: The entry name (what `OS_CLOUD` says).
        environ: Environment to read `OS_CLIENT_CONFIG_FILE` and `HOME` from.
        paths: Files to search instead of the standard locations.
        overrides: Extra `CloudConfig` fields (timeouts, connection limits).
    """
    entry, path = _load_entry(cloud, paths or clouds_yaml_paths(environ))
    auth = entry.get("auth") or {}
    auth_type = str(entry.get("auth_type", "password"))
    app_cred = auth_type in APP_CREDENTIAL_AUTH_TYPES
    verify = entry.get("verify", True)
    fields: dict[str, Any] = {
        "auth_url": auth.get("auth_url", ""),
        "region_name": entry.get("region_name"),
        "interface": entry.get("interface", "public"),
        "verify": bool(verify),
        "ca_file": entry.get("cacert"),
        "endpoint_overrides": {
            key.removesuffix(ENDPOINT_OVERRIDE).replace("_", "-"): str(value)
            for key, value in entry.items()
            if key.endswith(ENDPOINT_OVERRIDE) and key != ENDPOINT_OVERRIDE.lstrip("_")
        },
        **(overrides or {}),
    }
    if app_cred:
        fields["application_credential_id"] = auth.get("application_credential_id")
        fields["application_credential_secret"] = auth.get("application_credential_secret")
        fields["user_domain_name"] = fields["project_domain_name"] = None
    else:
        domain = auth.get("domain_name")
        for key in ("username", "password", "project_name", "project_id", "user_domain_id"):
            fields[key] = auth.get(key)
        fields["project_domain_id"] = auth.get("project_domain_id")
        fields["user_domain_name"] = auth.get("user_domain_name", domain or "Default")
        fields["project_domain_name"] = auth.get("project_domain_name", domain or "Default")
        if auth.get("tenant_name") and not fields["project_name"]:
            fields["project_name"] = auth["tenant_name"]
    try:
        return CloudConfig(**fields)
    except ValueError as exc:
        msg = f"cloud {cloud!r} in {path} is incomplete: {exc}"
        raise ValueError(msg) from exc
