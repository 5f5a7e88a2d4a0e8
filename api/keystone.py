"""Keystone v3 token validation for the API, with keystonemiddleware's semantics.

A token that is not in the tokens file is checked with `GET /v3/auth/tokens`
(`X-Subject-Token: <token>`), sent with a service token Warden gets with its own
credentials. The answer is cached by the token's SHA-256: a valid token for
`keystone_cache_ttl_s` but never past its `expires_at`, an invalid one briefly. The
service token is renewed before it expires and whenever Keystone answers 401.

The API never imports the cloud driver (`activities/`, docs/api-contract.md §Layout):
this is its own small async client, the same protocol as `activities.cloud.auth`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from pydantic import SecretStr

from api.auth import Caller, Role
from api.token_cache import Answer, AnswerCache
from config import Settings
from domain.errors import BackendUnavailable, Forbidden, Unauthenticated

logger = logging.getLogger(__name__)

#: Keystone role names → Warden roles (`_member_` is the pre-Queens member role).
ROLE_NAMES: dict[str, Role] = {
    "admin": Role.ADMIN,
    "member": Role.MEMBER,
    "_member_": Role.MEMBER,
    "reader": Role.READER,
}
#: How long an invalid, unscoped or role-less token is answered from the cache.
NEGATIVE_TTL_S = 10.0
#: Renew the service token this long before Keystone's `expires_at`.
EXPIRY_MARGIN_S = 60.0
#: Longer tokens are not even sent to Keystone (its own limit is 8 KiB).
MAX_TOKEN_CHARS = 8192

INVALID = "The token is not valid (unknown, expired or revoked)."


@dataclass(frozen=True)
class KeystoneConfig:
    """Where Keystone is and the service credentials Warden validates tokens with."""

    url: str
    username: str
    password: SecretStr
    project_name: str
    user_domain_name: str = "Default"
    project_domain_name: str = "Default"
    application_credential_id: str | None = None
    application_credential_secret: SecretStr | None = None
    cache_ttl_s: float = 300.0
    timeout_s: float = 5.0

    @property
    def identity_url(self) -> str:
        """The Keystone v3 base URL (`/v3` appended when the URL is the service root)."""
        url = self.url.rstrip("/")
        return url if url.endswith("/v3") else f"{url}/v3"

    @classmethod
    def from_settings(cls, settings: Settings) -> KeystoneConfig | None:
        """The `keystone_*` settings (falling back to `cloud_*`); None when Keystone is off."""
        if not settings.keystone_url:
            return None
        # The cloud's application credential stands in, unless a service user is named.
        app_credential = not settings.keystone_username
        return cls(
            url=settings.keystone_url,
            username=settings.keystone_username or settings.cloud_username,
            password=settings.keystone_password or settings.cloud_password,
            project_name=settings.keystone_project_name or settings.cloud_project_name,
            user_domain_name=settings.cloud_user_domain_name,
            project_domain_name=settings.cloud_project_domain_name,
            cache_ttl_s=settings.keystone_cache_ttl_s,
            timeout_s=settings.keystone_timeout_s,
            application_credential_id=(
                settings.cloud_application_credential_id if app_credential else None
            ),
            application_credential_secret=(
                settings.cloud_application_credential_secret if app_credential else None
            ),
        )


@dataclass(frozen=True, slots=True)
class ServiceToken:
    """Warden's own token, used to ask Keystone about others."""

    value: str
    renew_at: float
    #: The catalog Keystone issued with it (Warden's cloud account's services).
    catalog: tuple[Any, ...] = ()


def expires_at(raw: Any) -> float:
    """Epoch seconds of Keystone's `expires_at` (`2026-01-01T00:00:00.000000Z`)."""
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise BackendUnavailable(f"Keystone returned an unreadable expires_at: {raw!r}") from None


def caller_of(token: dict[str, Any]) -> Caller:
    """The caller a validated token body names (401 unscoped, 403 without a Warden role)."""
    project_id = (token.get("project") or {}).get("id")
    if not project_id:
        raise Unauthenticated(
            "The token is not scoped to a project; ask Keystone for a project-scoped token "
            "(for example with --os-project-name)."
        )
    names = sorted({str(r.get("name")) for r in token.get("roles") or [] if isinstance(r, dict)})
    roles = frozenset(ROLE_NAMES[n] for n in names if n in ROLE_NAMES)
    if not roles:
        raise Forbidden(
            f"The token's roles ({', '.join(names) or 'none'}) include none of admin, member, "
            f"reader on project {project_id}."
        )
    return Caller(project_id=str(project_id), roles=roles)


class KeystoneValidator:
    """Validates tokens against Keystone, caching the answers."""

    def __init__(
        self,
        config: KeystoneConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Create the validator; nothing is sent before the first unknown token.

        Args:
            config: Keystone's URL, the service credentials, cache and timeout.
            transport: An httpx transport to use instead of the network (tests).
            clock: Epoch seconds (tests move it).
        """
        self.config = config
        self._clock = clock
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(config.timeout_s),
            transport=transport,
            headers={"Accept": "application/json", "User-Agent": "warden-api/1.0"},
        )
        self.cache = AnswerCache()
        self._service: ServiceToken | None = None
        self._lock = asyncio.Lock()

    async def caller(self, token: str) -> Caller:
        """Who `token` belongs to.

        Raises:
            Unauthenticated: The token is unknown, expired, revoked or unscoped (401).
            Forbidden: The token has none of Warden's roles (403).
            BackendUnavailable: Keystone cannot be asked right now (503).
        """
        if len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise Unauthenticated(INVALID)
        key = hashlib.sha256(token.encode()).hexdigest()
        answer = self.cache.get(key, self._clock())
        if answer is None:
            answer = await self._ask(token)
            self.cache.put(key, answer)
        return answer.unwrap()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _ask(self, token: str) -> Answer:
        for attempt in (1, 2):
            service = await self._service_token()
            response = await self._send(
                "GET",
                "/auth/tokens",
                params={"nocatalog": "1"},
                headers={"X-Auth-Token": service.value, "X-Subject-Token": token},
            )
            if response.status_code != httpx.codes.UNAUTHORIZED or attempt == 2:
                break
            logger.info("Keystone rejected Warden's service token; authenticating again")
            self._drop(service)
        now = self._clock()
        if response.status_code == httpx.codes.NOT_FOUND:
            return Answer(until=now + NEGATIVE_TTL_S, error=Unauthenticated(INVALID))
        body = self._body(response, "token validation")
        try:
            caller = caller_of(body)
        except (Unauthenticated, Forbidden) as err:
            return Answer(until=now + NEGATIVE_TTL_S, error=err)
        until = min(expires_at(body.get("expires_at")), now + self.config.cache_ttl_s)
        if until <= now:
            return Answer(until=now + NEGATIVE_TTL_S, error=Unauthenticated(INVALID))
        return Answer(until=until, caller=caller)

    async def catalog(self, token: str | None) -> tuple[str, list[Any]]:
        """A token to call the cloud's services with and its catalog: the caller's own
        Keystone token (`token`), else Warden's service token."""
        service = await self._service_token()
        if token is None:
            return service.value, list(service.catalog)
        response = await self._send(
            "GET",
            "/auth/tokens",
            headers={"X-Auth-Token": service.value, "X-Subject-Token": token},
        )
        if response.status_code == httpx.codes.NOT_FOUND:
            raise Unauthenticated(INVALID)
        return token, list(self._body(response, "token validation").get("catalog") or [])

    async def _service_token(self) -> ServiceToken:
        service = self._service
        if service is not None and service.renew_at > self._clock():
            return service
        async with self._lock:
            service = self._service
            if service is None or service.renew_at <= self._clock():
                service = self._service = await self._authenticate()
            return service

    def _drop(self, service: ServiceToken) -> None:
        if self._service is service:
            self._service = None

    async def _authenticate(self) -> ServiceToken:
        response = await self._send("POST", "/auth/tokens", json=self._auth_body())
        body = self._body(response, "authentication of Warden's service user")
        value = response.headers.get("X-Subject-Token")
        if not value:
            raise BackendUnavailable("Keystone issued a service token without X-Subject-Token.")
        now = self._clock()
        expiry = expires_at(body.get("expires_at"))
        logger.info("Keystone service token issued for user %s", self.config.username)
        catalog = tuple(body.get("catalog") or ())
        renew_at = expiry - min(EXPIRY_MARGIN_S, (expiry - now) / 2)
        return ServiceToken(value, renew_at=renew_at, catalog=catalog)

    def _auth_body(self) -> dict[str, Any]:
        cfg = self.config
        if cfg.application_credential_id:
            secret = cfg.application_credential_secret
            credential = {
                "id": cfg.application_credential_id,
                "secret": secret.get_secret_value() if secret else "",
            }
            identity = {"methods": ["application_credential"], "application_credential": credential}
            return {"auth": {"identity": identity}}
        user = {
            "name": cfg.username,
            "password": cfg.password.get_secret_value(),
            "domain": {"name": cfg.user_domain_name},
        }
        project = {"name": cfg.project_name, "domain": {"name": cfg.project_domain_name}}
        identity = {"methods": ["password"], "password": {"user": user}}
        return {"auth": {"identity": identity, "scope": {"project": project}}}

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = self.config.identity_url + path
        try:
            return await self._http.request(method, url, **kwargs)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            logger.warning("Keystone at %s unreachable: %s", url, exc)
            raise BackendUnavailable(
                "Keystone cannot be reached to validate the token; try again."
            ) from None

    def _body(self, response: httpx.Response, what: str) -> dict[str, Any]:
        if response.status_code >= httpx.codes.BAD_REQUEST:
            logger.warning("Keystone %s answered %s", what, response.status_code)
            raise BackendUnavailable(f"Keystone refused the {what} (HTTP {response.status_code}).")
        try:
            token = response.json()["token"]
        except (ValueError, KeyError, TypeError):
            token = None
        if not isinstance(token, dict):
            raise BackendUnavailable(f"Keystone answered the {what} without a token.")
        return token


def keystone_validator(settings: Settings) -> KeystoneValidator | None:
    """The validator for `settings`, or None when `keystone_url` is unset."""
    config = KeystoneConfig.from_settings(settings)
    return KeystoneValidator(config) if config is not None else None
