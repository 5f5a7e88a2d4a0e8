"""Health probes: every node of a cluster checked with the policy's detection modes at once.

| mode                 | asks                              | UNHEALTHY                         |
|----------------------|-----------------------------------|-----------------------------------|
| NODE_STATUS_POLLING  | one compute `detail` list         | ERROR SHUTOFF PAUSED SUSPENDED    |
|                      |                                   | DELETED, or the server is missing |
| NODE_STATUS_POLL_URL | one GET per node (+ retries)      | not 2xx, body misses the regex,   |
|                      |                                   | connection error (if configured)  |
| LB_STATUS_POLLING    | one member list of the pool       | member ERROR or OFFLINE           |
| LIFECYCLE_EVENTS     | nothing: the workflow gets events | —                                 |

Everything else is UNKNOWN, which never triggers recovery: servers in transition,
nodes without a server or outside the pool, and above all a cloud API that cannot be
asked — then the mode's nodes are UNKNOWN and `ProbeResult.cloud_error` says why, so
an outage of the control plane never looks like a cluster full of dead nodes. Probes
never raise for what they find; only a malformed request does.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cloud.compute import Server
from activities.cloud.loadbalancer import Member
from activities.cloud.session import CloudSession
from activities.listings import DEFAULT_MAX_AGE_S, SharedListing
from activities.stack_nodes import StackNodeActivities
from domain.cluster.health import NodeProbe, ProbeRequest, ProbeResult, ProbeState, ProbeTarget
from domain.cluster.policies.health import (
    Detection,
    DetectionMode,
    DetectionType,
    LbStatusPolling,
    NodeStatusPolling,
    NodeStatusPollUrl,
    PollUrlOptions,
    RecoveryConditional,
)
from domain.cluster.recovery import in_transition
from domain.cluster.stack_calls import StackRef
from domain.cluster.stack_profile import StackHealth, StackVerdict
from domain.errors import InvalidRequest, WardenError
from domain.hook_urls import expand_poll_url, validate_hook_url

#: Server statuses NODE_STATUS_POLLING counts as failed (SOFT_DELETED: Nova's trash).
FAILED_STATUSES = frozenset({"ERROR", "SHUTOFF", "PAUSED", "SUSPENDED", "DELETED", "SOFT_DELETED"})
USER_AGENT = "warden-health-probe"
#: Most of a poll URL's body searched for the healthy response.
MAX_BODY_BYTES = 65_536
#: Connection pool size; `ProbeRequest.concurrency` is at most this.
MAX_CONNECTIONS = 500
HEARTBEAT_EVERY = 50
#: Longest sleep between heartbeats while waiting to retry a poll URL.
HEARTBEAT_PAUSE_S = 5.0


@dataclass(frozen=True)
class Finding:
    """What one detection mode found about one node."""

    state: ProbeState
    reason: str
    server_status: str | None = None


#: node_id → what one mode found.
Findings = dict[str, Finding]


def _all(targets: Sequence[ProbeTarget], state: ProbeState, reason: str) -> Findings:
    return {t.node_id: Finding(state, reason) for t in targets}


def _display_url(url: str) -> str:
    """The URL without query or fragment (they may carry tokens): safe for reasons."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


class HealthActivities:
    """Health probes over one cloud session and one HTTP client for poll URLs."""

    def __init__(
        self,
        session: CloudSession,
        *,
        url_allowlist: Sequence[str] = (),
        http: httpx.AsyncClient | None = None,
        poll_timeout_s: float = 10.0,
        listing_max_age_s: float = DEFAULT_MAX_AGE_S,
    ) -> None:
        """Hold the clients for the worker's lifetime.

        Args:
            session: Cloud session for the compute and load-balancer APIs.
            url_allowlist: Hosts, `*.suffix` or URL prefixes poll URLs may target; empty = any.
            http: A client for poll URLs to use instead of creating one (closed by its owner).
            poll_timeout_s: Bound on one poll URL request, connect to last byte.
            listing_max_age_s: How long one server listing serves other clusters' probes.
        """
        self._session = session
        self._servers = SharedListing(self._list_servers, max_age_s=listing_max_age_s)
        self._stacks = StackNodeActivities(session.orchestration)
        self._allowlist = tuple(url_allowlist)
        self._timeout = httpx.Timeout(poll_timeout_s)
        self._owns_http = http is None
        self._http = http or self._new_client(verify=True)
        self._insecure: httpx.AsyncClient | None = None

    def _new_client(self, *, verify: bool) -> httpx.AsyncClient:
        # Redirects are not followed: they could lead outside the allow-list.
        return httpx.AsyncClient(
            timeout=self._timeout,
            follow_redirects=False,
            verify=verify,
            limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=50),
            headers={"User-Agent": USER_AGENT},
        )

    def _client_for(self, options: PollUrlOptions) -> httpx.AsyncClient:
        if options.poll_url_ssl_verify:
            return self._http
        if self._insecure is None:
            # The policy's owner turned verification off (`poll_url_ssl_verify: false`).
            self._insecure = self._new_client(verify=False)
        return self._insecure

    async def aclose(self) -> None:
        """Close the HTTP clients this object created."""
        if self._owns_http:
            await self._http.aclose()
        if self._insecure is not None:
            await self._insecure.aclose()

    @activity.defn(name="probe_nodes")
    async def probe_nodes(self, request: ProbeRequest) -> ProbeResult:
        """Probe every target with every detection mode; never raises for what it finds."""
        detection = _parse_detection(request)
        per_mode: list[tuple[DetectionType, Findings]] = []
        errors: list[str] = []
        for mode in detection.detection_modes:
            findings, error = await self._probe_mode(mode, request)
            per_mode.append((mode.type, findings))
            if error:
                errors.append(error)
        probes = [
            _combine(target.node_id, per_mode, detection.recovery_conditional)
            for target in request.targets
        ]
        counts = {state: sum(p.state is state for p in probes) for state in ProbeState}
        activity.logger.info(
            "Probed %d nodes of cluster %s: %d healthy, %d unhealthy, %d unknown%s",
            len(probes),
            request.cluster_id,
            counts[ProbeState.HEALTHY],
            counts[ProbeState.UNHEALTHY],
            counts[ProbeState.UNKNOWN],
            f" (cloud error: {'; '.join(errors)})" if errors else "",
        )
        return ProbeResult(probes=probes, cloud_error="; ".join(errors), at=datetime.now(UTC))

    async def _probe_mode(self, mode: DetectionMode, request: ProbeRequest) -> tuple[Findings, str]:
        targets = request.targets
        if isinstance(mode, NodeStatusPolling):
            return await self._poll_node_status(targets, shared=request.share_listing)
        if isinstance(mode, NodeStatusPollUrl):
            return await self._poll_urls(targets, mode.options, request.concurrency), ""
        if isinstance(mode, LbStatusPolling):
            if mode.options.pool_id is None:
                why = "no pool to read: set options.pool_id or attach a load-balancing policy"
                return _all(targets, ProbeState.UNKNOWN, why), ""
            return await self._poll_lb(targets, mode.options.pool_id)
        # LIFECYCLE_EVENTS: the workflow receives the backend's notifications itself.
        return _all(targets, ProbeState.UNKNOWN, "event-driven, not polled"), ""

    # --- NODE_STATUS_POLLING ---------------------------------------------------------

    async def _poll_node_status(
        self, targets: Sequence[ProbeTarget], *, shared: bool
    ) -> tuple[Findings, str]:
        stacks = [t for t in targets if t.stack_name]
        if stacks:
            servers = [t for t in targets if not t.stack_name]
            findings: Findings = {}
            error = ""
            if servers:
                findings, error = await self._poll_node_status(servers, shared=shared)
            stack_findings, stack_error = await self._poll_stacks(stacks)
            return {**findings, **stack_findings}, "; ".join(e for e in (error, stack_error) if e)
        if not any(t.physical_id for t in targets):
            return _all(targets, ProbeState.UNKNOWN, "Node has no server yet"), ""
        try:
            by_id = await (self._servers.get() if shared else self._list_servers())
        except WardenError as err:
            why = f"compute API: {err.message}"
            return _all(targets, ProbeState.UNKNOWN, f"Could not ask the {why}"), why
        activity.heartbeat(f"listed {len(by_id)} servers")
        return {t.node_id: _server_finding(t.physical_id, by_id) for t in targets}, ""

    async def _poll_stacks(self, targets: Sequence[ProbeTarget]) -> tuple[Findings, str]:
        """Stack nodes: the stack's status and its resources' (a mark is CHECK_FAILED)."""
        refs = {
            t.node_id: StackRef(name=str(t.stack_name), id=str(t.physical_id))
            for t in targets
            if t.physical_id
        }
        try:
            verdicts = await self._stacks.judge(list(refs.values()))
        except WardenError as err:
            why = f"orchestration API: {err.message}"
            return _all(targets, ProbeState.UNKNOWN, f"Could not ask the {why}"), why
        findings: Findings = {}
        for target in targets:
            ref = refs.get(target.node_id)
            verdict = verdicts.get(ref.id) if ref else None
            findings[target.node_id] = _stack_finding(verdict)
        return findings, ""

    async def _list_servers(self) -> dict[str, Server]:
        return {server.id: server for server in await self._session.compute.list_servers()}

    # --- LB_STATUS_POLLING -----------------------------------------------------------

    async def _poll_lb(self, targets: Sequence[ProbeTarget], pool_id: str) -> tuple[Findings, str]:
        try:
            members = await self._session.loadbalancer.list_members(pool_id)
        except WardenError as err:
            why = f"load-balancer API (pool {pool_id}): {err.message}"
            return _all(targets, ProbeState.UNKNOWN, f"Could not ask the {why}"), why
        activity.heartbeat(f"listed {len(members)} members of pool {pool_id}")
        return {t.node_id: _member_finding(t, members, pool_id) for t in targets}, ""

    # --- NODE_STATUS_POLL_URL --------------------------------------------------------

    async def _poll_urls(
        self, targets: Sequence[ProbeTarget], options: PollUrlOptions, concurrency: int
    ) -> Findings:
        # In-flight requests are bounded, not nodes: a node waiting to retry holds no slot.
        slots = asyncio.Semaphore(concurrency)
        pattern = re.compile(options.poll_url_healthy_response)
        findings: Findings = {}

        async def check(target: ProbeTarget) -> None:
            findings[target.node_id] = await self._check_url(target, options, pattern, slots)
            if len(findings) % HEARTBEAT_EVERY == 0:
                activity.heartbeat(f"{len(findings)}/{len(targets)} poll URLs checked")

        async with asyncio.TaskGroup() as group:
            for target in targets:
                group.create_task(check(target))
        return findings

    async def _check_url(
        self,
        target: ProbeTarget,
        options: PollUrlOptions,
        pattern: re.Pattern[str],
        slots: asyncio.Semaphore,
    ) -> Finding:
        url = expand_poll_url(options.poll_url, target.name)
        try:
            # Re-checked per node (`http://{nodename}/…` puts the name in the host) and
            # because the allow-list may have changed since the policy was created.
            validate_hook_url(url, self._allowlist, field="poll_url")
        except InvalidRequest as err:
            return Finding(ProbeState.UNKNOWN, f"Not polled: {err.message}")
        attempts = 1 + options.poll_url_retry_limit
        for attempt in range(1, attempts + 1):
            async with slots:
                finding = await self._fetch(url, options, pattern)
            if finding.state is ProbeState.HEALTHY or attempt == attempts:
                break
            await _pause(options.poll_url_retry_interval)
        if attempt > 1:
            finding = replace(finding, reason=f"{finding.reason} (after {attempt} attempts)")
        return finding

    async def _fetch(self, url: str, options: PollUrlOptions, pattern: re.Pattern[str]) -> Finding:
        shown = _display_url(url)
        try:
            async with self._client_for(options).stream("GET", url) as response:
                body = await _read_limited(response)
        except httpx.PoolTimeout:
            # Our own connection pool was full: says nothing about the node.
            return Finding(ProbeState.UNKNOWN, f"GET {shown}: no free connection to probe with")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            failed = options.poll_url_conn_error_as_unhealthy
            state = ProbeState.UNHEALTHY if failed else ProbeState.UNKNOWN
            return Finding(state, f"GET {shown} failed: {type(exc).__name__}")
        status = response.status_code
        if not response.is_success:
            return Finding(ProbeState.UNHEALTHY, f"GET {shown} answered HTTP {status}")
        if pattern.pattern and pattern.search(body) is None:
            return Finding(
                ProbeState.UNHEALTHY,
                f"GET {shown} answered HTTP {status} without a match for {pattern.pattern!r}",
            )
        return Finding(ProbeState.HEALTHY, f"GET {shown} answered HTTP {status}")


def _parse_detection(request: ProbeRequest) -> Detection:
    try:
        return Detection.model_validate(request.detection)
    except ValidationError as exc:
        raise ApplicationError(
            f"Cluster {request.cluster_id}: invalid detection section: {exc}",
            type="InvalidRequest",
            non_retryable=True,
        ) from None


def _server_finding(physical_id: str | None, by_id: Mapping[str, Server]) -> Finding:
    if not physical_id:
        return Finding(ProbeState.UNKNOWN, "Node has no server yet")
    server = by_id.get(physical_id)
    if server is None:
        return Finding(ProbeState.UNHEALTHY, f"Server {physical_id} not found", "DELETED")
    status = server.status.upper()
    if status == "ACTIVE":
        return Finding(ProbeState.HEALTHY, "Server status is ACTIVE", status)
    if status in FAILED_STATUSES and not in_transition(status, server.task_state):
        return Finding(ProbeState.UNHEALTHY, f"Server status is {status}", status)
    task = f" (task {server.task_state})" if server.task_state else ""
    return Finding(ProbeState.UNKNOWN, f"Server status is {status}{task}", status)


def _stack_finding(verdict: StackVerdict | None) -> Finding:
    if verdict is None:
        return Finding(ProbeState.UNKNOWN, "Node has no stack yet")
    state = {
        StackHealth.HEALTHY: ProbeState.HEALTHY,
        StackHealth.UNHEALTHY: ProbeState.UNHEALTHY,
        StackHealth.BUSY: ProbeState.UNKNOWN,
    }[verdict.health]
    return Finding(state, verdict.reason, verdict.status)


def _member_finding(target: ProbeTarget, members: Sequence[Member], pool_id: str) -> Finding:
    # Addresses first: a member named after the node may belong to its old server.
    mine = [m for m in members if m.address in target.addresses] or [
        m for m in members if m.name and m.name == target.name
    ]
    if not mine:
        return Finding(ProbeState.UNKNOWN, f"Not a member of pool {pool_id}")
    for member in mine:
        if member.failed:
            return Finding(
                ProbeState.UNHEALTHY,
                f"Pool {pool_id} member {member.address} is {member.operating_status}",
            )
    odd = [m for m in mine if m.operating_status != "ONLINE"]
    if odd:
        return Finding(
            ProbeState.UNKNOWN,
            f"Pool {pool_id} member {odd[0].address} is {odd[0].operating_status}",
        )
    return Finding(ProbeState.HEALTHY, f"Pool {pool_id} member is ONLINE")


def _combine(
    node_id: str,
    per_mode: Sequence[tuple[DetectionType, Findings]],
    conditional: RecoveryConditional,
) -> NodeProbe:
    """One node's verdict: ANY_FAILED = any mode failed; ALL_FAILED = every mode did."""
    found = [(mode, findings[node_id]) for mode, findings in per_mode]
    states = [finding.state for _, finding in found]
    failed = [s is ProbeState.UNHEALTHY for s in states]
    if all(failed) if conditional is RecoveryConditional.ALL_FAILED else any(failed):
        state = ProbeState.UNHEALTHY
    elif ProbeState.HEALTHY in states:
        state = ProbeState.HEALTHY
    else:
        state = ProbeState.UNKNOWN
    deciding = [(m, f) for m, f in found if f.state is state] or found
    return NodeProbe(
        node_id=node_id,
        state=state,
        reason="; ".join(f"{mode}: {finding.reason}" for mode, finding in deciding),
        server_status=next((f.server_status for _, f in found if f.server_status), None),
    )


async def _read_limited(response: httpx.Response) -> str:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BODY_BYTES:
            break
    return b"".join(chunks)[:MAX_BODY_BYTES].decode("utf-8", "replace")


async def _pause(seconds: float) -> None:
    """Wait between poll URL attempts, heartbeating so long intervals do not time out."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (left := deadline - loop.time()) > 0:
        await asyncio.sleep(min(left, HEARTBEAT_PAUSE_S))
        activity.heartbeat("waiting to retry a poll URL")
