"""`CloudRequests`: the one call the service clients make, as a protocol.

`ComputeClient`, `MessagingClient` and `LoadBalancerClient` depend on this, not on
`CloudSession`, which builds them: the session implements it (token, endpoint lookup,
retry after a 401, errors mapped to `domain.errors`), and a test may hand a client
anything else that does.
"""

from __future__ import annotations

from typing import Any, Protocol

import httpx

__all__ = ["CloudRequests"]


class CloudRequests(Protocol):
    """Sends one request to a service of the cloud's catalog."""

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
        """Call `path` under the endpoint of `service_type` (in `region`, by default the
        configured one); failures are `domain.errors`."""
