"""`CloudSession`: one pooled HTTP client, one Keystone token, the service clients.

An activities class holds one session for the worker's lifetime::

    session = CloudSession(CloudConfig.from_settings(settings))
    server = await session.compute.create_server("web-1", "cirros", "m1.small",
                                                 request_id=node_id)
    ...
    await session.aclose()
"""

from __future__ import annotations

import ssl
from types import TracebackType
from typing import Any

import httpx

from activities.cloud.auth import KeystoneAuth, Token
from activities.cloud.collections import CollectionClient
from activities.cloud.compute import ComputeClient
from activities.cloud.config import CloudConfig
from activities.cloud.errors import error_for_transport, raise_for_response
from activities.cloud.loadbalancer import LoadBalancerClient
from activities.cloud.messaging import MessagingClient
from activities.cloud.orchestration import OrchestrationClient
from activities.http_transport import AiohttpTransport


def _verify(config: CloudConfig) -> ssl.SSLContext | bool:
    if config.ca_file is not None:
        return ssl.create_default_context(cafile=str(config.ca_file))
    return config.verify


class CloudSession:
    """Authenticated access to one cloud's compute, messaging, load-balancer and
    orchestration APIs."""

    def __init__(
        self, config: CloudConfig, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        """Create the session; nothing is sent before the first call.

        Args:
            config: Credentials and transport options.
            transport: An httpx transport to use instead of the network (tests); by
                default httpx over an aiohttp pool (`activities.http_transport`).
        """
        self.config = config
        timeout = httpx.Timeout(config.timeout_s, connect=config.connect_timeout_s)
        self._http = httpx.AsyncClient(
            timeout=timeout,
            transport=transport
            or AiohttpTransport(verify=_verify(config), max_connections=config.max_connections),
            headers={"Accept": "application/json", "User-Agent": "warden-cloud-driver/1.0"},
        )
        self.auth = KeystoneAuth(config, self._http)
        self.compute = ComputeClient(self)
        self.collections = CollectionClient(self)
        self.messaging = MessagingClient(self)
        self.loadbalancer = LoadBalancerClient(self)
        self.orchestration = OrchestrationClient(self)

    async def endpoint(self, service_type: str, region: str | None = None) -> str:
        """The catalog URL of `service_type` for the configured interface, in `region`
        (by default the configured one); EndpointNotFound when the catalog has none."""
        return self._url_of(await self.auth.token(), service_type, region)

    def _url_of(self, token: Token, service_type: str, region: str | None = None) -> str:
        override = self.config.endpoint_overrides.get(service_type)
        if override is not None and region is None:
            return override.replace("%(project_id)s", token.project_id or "")
        return token.endpoint(
            service_type, self.config.interface, region or self.config.region_name
        )

    async def request(
        self,
        service_type: str,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
        region: str | None = None,
    ) -> httpx.Response:
        """Call `path` under the service's endpoint (in `region`, by default the
        configured one); the one door to the cloud.

        A 401 drops the cached token and the call is repeated once with a new one.
        Every failure comes out as a `domain.errors` exception.
        """
        what = f"{service_type} {method} {path}"
        send_timeout = httpx.Timeout(timeout_s) if timeout_s is not None else self._http.timeout
        for attempt in (1, 2):
            token = await self.auth.token()
            url = self._url_of(token, service_type, region)
            try:
                response = await self._http.request(
                    method,
                    url + path,
                    json=json,
                    params=params,
                    headers={"X-Auth-Token": token.value, **(headers or {})},
                    timeout=send_timeout,
                )
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise error_for_transport(exc, what) from None
            if response.status_code == 401 and attempt == 1:
                self.auth.invalidate(token.value)
                continue
            raise_for_response(response, what)
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        """Close every pooled connection."""
        await self._http.aclose()

    async def __aenter__(self) -> CloudSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
