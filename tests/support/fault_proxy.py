"""A reverse proxy that breaks calls to a real cloud service on purpose.

simcloud injects its faults itself (`/sim/api-faults`); a real Nova cannot be asked to
answer 500 or to answer late, so the conformance stage puts this proxy between Warden
and the service (Warden's endpoint override) and sets rules on it:

- `fail(method, path, status)`: answer `status` with the service's error body instead of
  forwarding the call (a broken service);
- `hold(method, path, seconds)`: forward the call only after `seconds` and answer it then
  (a request queued upstream that lands after the client gave up). The call is carried
  out even when the client has hung up by then, as a queued request would be.

Every other call is forwarded unchanged. Rules match `"METHOD /path"` (the path under the
proxy, query string excluded; `path` is a regular expression searched from any prefix,
such as `/servers$`) and apply `times` times, or until `clear()`.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from simcloud.server import serve_in_thread

#: Hop-by-hop headers, and those the proxy recomputes.
SKIPPED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade"}
)
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]


@dataclass
class Rule:
    """What to do with the calls `pattern` matches."""

    pattern: re.Pattern[str]
    status: int | None = None
    body: dict[str, Any] | None = None
    hold_s: float = 0.0
    times: int | None = None

    def takes(self, call: str) -> bool:
        """Whether the rule applies to `call`, using up one of its `times` if so."""
        if self.times == 0 or not self.pattern.search(call):
            return False
        if self.times is not None:
            self.times -= 1
        return True


@dataclass
class FaultProxy:
    """The proxy's rules and record of calls; `url` is where it listens."""

    upstream: str
    url: str = ""
    #: `"METHOD /path" -> status` of every call, in order (held ones when answered).
    calls: list[tuple[str, int]] = field(default_factory=list)
    _rules: list[Rule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        body: dict[str, Any] | None = None,
        *,
        times: int | None = None,
    ) -> None:
        """Answer matching calls with `status` and `body`, without forwarding them."""
        self._add(Rule(_pattern(method, path), status=status, body=body, times=times))

    def hold(self, method: str, path: str, seconds: float, *, times: int | None = 1) -> None:
        """Forward matching calls only after `seconds`."""
        self._add(Rule(_pattern(method, path), hold_s=seconds, times=times))

    def clear(self) -> None:
        """Forward every call again, and forget the calls recorded so far."""
        with self._lock:
            self._rules.clear()
            self.calls.clear()

    def answered(self, method: str, path: str) -> list[int]:
        """The statuses the proxy answered to the calls matching `method` and `path`."""
        pattern = _pattern(method, path)
        with self._lock:
            return [status for call, status in self.calls if pattern.search(call)]

    def _add(self, rule: Rule) -> None:
        with self._lock:
            self._rules.append(rule)

    def _rule_for(self, call: str) -> Rule | None:
        with self._lock:
            return next((rule for rule in self._rules if rule.takes(call)), None)

    def _record(self, call: str, status: int) -> None:
        with self._lock:
            self.calls.append((call, status))

    def app(self) -> Starlette:
        """The ASGI app: every path, every method."""
        client: httpx.AsyncClient | None = None

        @asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            nonlocal client
            async with httpx.AsyncClient(base_url=self.upstream, timeout=300) as client:
                yield

        async def proxy(request: Request) -> Response:
            assert client is not None
            call = f"{request.method} {request.url.path}"
            rule = self._rule_for(call)
            if rule is not None and rule.status is not None:
                self._record(call, rule.status)
                return JSONResponse(rule.body or {}, status_code=rule.status)
            body = await request.body()
            forwarded = asyncio.ensure_future(
                self._forward(client, request, body, rule.hold_s if rule else 0.0)
            )
            # A client that hangs up cancels this handler, never the forwarded call.
            return await asyncio.shield(forwarded)

        routes = [Route("/{path:path}", proxy, methods=METHODS)]
        return Starlette(routes=routes, lifespan=lifespan)

    async def _forward(
        self, client: httpx.AsyncClient, request: Request, body: bytes, hold_s: float
    ) -> Response:
        if hold_s:
            await asyncio.sleep(hold_s)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in SKIPPED_HEADERS}
        upstream = await client.request(
            request.method,
            request.url.path,
            params=request.url.query or None,
            content=body,
            headers=headers,
        )
        self._record(f"{request.method} {request.url.path}", upstream.status_code)
        kept = {k: v for k, v in upstream.headers.items() if k.lower() not in SKIPPED_HEADERS}
        kept.pop("content-encoding", None)  # httpx has decoded the body
        return Response(upstream.content, status_code=upstream.status_code, headers=kept)


def _pattern(method: str, path: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(method.upper())} .*{path}")


@contextmanager
def running_fault_proxy(upstream: str) -> Iterator[FaultProxy]:
    """A proxy to `upstream` (scheme and host; paths pass through) until the block exits."""
    proxy = FaultProxy(upstream)
    with serve_in_thread(proxy.app()) as served:
        proxy.url = served.url
        yield proxy
