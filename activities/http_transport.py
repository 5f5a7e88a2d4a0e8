"""The worker's outbound HTTP to the cloud and to webhooks: httpx's API over aiohttp's pool.

Warden's activities speak httpx (requests, responses, timeouts, errors, and the mock
transports of the tests). Under load, though, httpx's own connection pool costs the
worker most of its CPU per call: in a 1,000-node scale-in the worker spent 23 % of its
busy time in `AsyncClient.request`, for three calls per node (docs/performance.md). Measured
on this machine against a local server (client CPU per request): httpx's own pool
0.88 ms one at a time and 2.06 ms at 20 at once; the same httpx client over aiohttp's
pool 0.30-0.39 ms at any concurrency.

`AiohttpTransport` is that transport: httpx builds and encodes the request (URL, headers,
body, timeouts) and reads the response; aiohttp only carries the bytes, with its pool.
It follows no redirect and decompresses nothing (httpx does both, as configured), keeps
no cookies (httpx's client keeps them), and re-quotes no URL (httpx encoded it).
Every failure reaches the caller as the `httpx` exception httpx's own pool would raise:
a refused or unresolvable connection is `ConnectError`, a connect or pool-wait timeout
`ConnectTimeout`, a read timeout `ReadTimeout`, a connection the server dropped
`RemoteProtocolError`, a body cut short `ReadError`. aiohttp does not tell a full pool
from a slow connect, so a caller that must tell them apart (the health policy's URL
probes, which report "no free connection" on their own) keeps httpx's own pool.
(The `httpx-aiohttp` package does the same job, but reports a refused connection as a
`ConnectTimeout`: an operator would read "timed out" for "refused".)
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import aiohttp
import httpx
from yarl import URL

#: As httpx's default: connections to one cloud or webhook receiver at once.
DEFAULT_MAX_CONNECTIONS = 100
CHUNK_BYTES = 64 * 1024

#: aiohttp's failure → the httpx one, most specific first.
_ERRORS: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (TimeoutError, httpx.TimeoutException),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.ReadError),
    (aiohttp.ClientConnectionError, httpx.NetworkError),
    (aiohttp.ClientError, httpx.TransportError),
)


@contextmanager
def _as_httpx_errors(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except (aiohttp.ClientError, TimeoutError) as exc:
        mapped = next(target for source, target in _ERRORS if isinstance(exc, source))
        message = str(exc) or type(exc).__name__
        raise mapped(message, request=request) from exc


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors(self._request):
            async for chunk in self._response.content.iter_chunked(CHUNK_BYTES):
                yield chunk

    async def aclose(self) -> None:
        self._response.release()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx requests sent through one aiohttp pool (see the module's doc)."""

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | bool = True,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        """`verify`: an SSL context (a CA file), True for the system's CAs, False for none.
        The pool is made at the first request, in the running event loop."""
        self._ssl = httpx.create_ssl_context(verify=verify)
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _pool(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._max_connections, ssl=self._ssl),
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                skip_auto_headers=("User-Agent", "Accept-Encoding", "Accept"),
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeout = request.extensions.get("timeout", {})
        body = await request.aread()
        with _as_httpx_errors(request):
            response = await self._pool().request(
                request.method,
                URL(str(request.url), encoded=True),
                headers=request.headers.multi_items(),
                data=body or None,
                allow_redirects=False,
                compress=None,
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    connect=timeout.get("pool"),
                    sock_connect=timeout.get("connect"),
                    sock_read=timeout.get("read"),
                ),
            )
        extensions = {"http_version": b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_ResponseStream(response, request),
            request=request,
            extensions=extensions,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
