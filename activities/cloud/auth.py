"""Keystone v3 authentication: one cached token per session, endpoints from its catalog."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx

from activities.cloud.config import CloudConfig
from activities.cloud.errors import error_for_transport, json_body, raise_for_response
from domain.errors import BackendError

logger = logging.getLogger(__name__)

#: Re-authenticate this long before Keystone's `expires_at`.
EXPIRY_MARGIN_S = 60.0


class EndpointNotFound(BackendError):
    """The catalog has no endpoint of the service for the interface and region asked."""


@dataclass(frozen=True)
class Endpoint:
    """One catalog endpoint."""

    service_type: str
    interface: str
    region: str | None
    url: str


@dataclass(frozen=True)
class Token:
    """A scoped Keystone token and the catalog that came with it."""

    value: str
    expires_at: float
    project_id: str | None
    endpoints: tuple[Endpoint, ...]

    def endpoint(self, service_type: str, interface: str, region: str | None) -> str:
        """The URL of `service_type` for `interface` (and `region`, when given)."""
        for ep in self.endpoints:
            wanted = ep.service_type == service_type and ep.interface == interface
            if wanted and (region is None or ep.region == region):
                return ep.url.rstrip("/")
        if region is not None and any(ep.service_type == service_type for ep in self.endpoints):
            raise EndpointNotFound(
                f"{interface} endpoint for {service_type} service in {region} region not found"
            )
        where = f"interface {interface}" + (f", region {region}" if region else "")
        raise EndpointNotFound(f"no {service_type} endpoint in the Keystone catalog for {where}")


def _expiry(raw: Any) -> float:
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise BackendError(f"Keystone returned an unreadable expires_at: {raw!r}") from None


def parse_token(value: str, body: Any) -> Token:
    """A `Token` from Keystone's `{"token": {...}}` body."""
    if not isinstance(body, dict):
        raise BackendError("Keystone answered a token without a body")
    endpoints = [
        Endpoint(
            service_type=str(service.get("type")),
            interface=str(ep.get("interface")),
            region=ep.get("region_id") or ep.get("region"),
            url=str(ep.get("url")),
        )
        for service in body.get("catalog") or []
        for ep in service.get("endpoints") or []
    ]
    project = body.get("project") or {}
    return Token(value, _expiry(body.get("expires_at")), project.get("id"), tuple(endpoints))


def auth_body(cfg: CloudConfig) -> dict[str, Any]:
    """The `POST /v3/auth/tokens` body for the configured credentials."""
    if cfg.uses_application_credential:
        secret = cfg.application_credential_secret
        credential = {
            "id": cfg.application_credential_id,
            "secret": secret.get_secret_value() if secret else "",
        }
        methods: list[str] = ["application_credential"]
        return {"auth": {"identity": {"methods": methods, "application_credential": credential}}}
    password = cfg.password.get_secret_value() if cfg.password else ""
    user = {
        "name": cfg.username,
        "password": password,
        "domain": _domain(cfg.user_domain_id, cfg.user_domain_name),
    }
    project: dict[str, Any] = (
        {"id": cfg.project_id}
        if cfg.project_id
        else {
            "name": cfg.project_name,
            "domain": _domain(cfg.project_domain_id, cfg.project_domain_name),
        }
    )
    identity = {"methods": ["password"], "password": {"user": user}}
    return {"auth": {"identity": identity, "scope": {"project": project}}}


class KeystoneAuth:
    """Gets and caches a project-scoped token; concurrent callers share one request."""

    def __init__(
        self,
        config: CloudConfig,
        http: httpx.AsyncClient,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._http = http
        self._clock = clock
        self._token: Token | None = None
        self._lock = asyncio.Lock()

    async def token(self) -> Token:
        """A valid token, authenticating only when none is cached or it nears expiry."""
        token = self._token
        if token is not None and token.expires_at - EXPIRY_MARGIN_S > self._clock():
            return token
        async with self._lock:
            token = self._token
            if token is not None and token.expires_at - EXPIRY_MARGIN_S > self._clock():
                return token
            self._token = await self._authenticate()
            return self._token

    def invalidate(self, value: str) -> None:
        """Drop the cached token if it is still `value` (the cloud rejected it)."""
        if self._token is not None and self._token.value == value:
            logger.info("Keystone token rejected by the cloud; re-authenticating")
            self._token = None

    async def _authenticate(self) -> Token:
        url = f"{self._config.identity_url}/auth/tokens"
        what = "Keystone authentication"
        try:
            response = await self._http.post(url, json=auth_body(self._config))
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise error_for_transport(exc, what) from None
        raise_for_response(response, what)
        value = response.headers.get("X-Subject-Token")
        if not value:
            raise BackendError("Keystone answered without X-Subject-Token")
        token = parse_token(value, json_body(response, what, "token"))
        logger.info("Keystone token issued for project %s", token.project_id)
        return token


def _domain(domain_id: str | None, domain_name: str | None) -> dict[str, str]:
    if domain_id:
        return {"id": domain_id}
    return {"name": domain_name or "Default"}
