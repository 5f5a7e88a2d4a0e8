"""The API's door to Temporal: connect lazily, map every failure to a domain error."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from datetime import UTC, timedelta
from typing import Any, TypeVar

from pydantic import BaseModel
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import (
    Client,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from config import Settings
from config.temporal_client import TemporalConfigError, connect_temporal
from domain.cluster.server_details import details_error
from domain.engine_services import Poller
from domain.errors import NotFound, TemporalUnavailable, WardenError, error_from_type
from domain.hot.cloud_lookups import ConstraintCheck
from healthcheck import HealthManager
from workflows.node.messages import NODE_DETAILS_WORKFLOW
from workflows.operation import ActionRequest, Operation
from workflows.stack.messages import CLOUD_CHECKS_WORKFLOW

logger = logging.getLogger(__name__)
T = TypeVar("T")
AnswerT = TypeVar("AnswerT")
RequestT = TypeVar("RequestT", bound=ActionRequest)


#: Reads that include a workflow's `describe` stay fast even when no worker answers.
DESCRIBE_TIMEOUT = timedelta(seconds=2)
#: How long a GET waits for the worker to read servers' details.
DETAILS_TIMEOUT = timedelta(seconds=20)
#: How long a create, preview or validate waits for the worker's lookups of the
#: flavors, images, networks… its template names, before it goes on without them.
CHECKS_TIMEOUT = timedelta(seconds=10)


class TemporalGateway:
    """One client per process, connected on first use and health-recorded."""

    def __init__(self, settings: Settings, health: HealthManager) -> None:
        self.settings = settings
        self._health = health
        self._client: Client | None = None
        self._connecting: asyncio.Task[Client] | None = None
        self._lock = asyncio.Lock()

    @property
    def rpc_timeout(self) -> timedelta:
        """Deadline of one Temporal call made on behalf of a request."""
        return timedelta(seconds=self.settings.temporal_rpc_timeout_s)

    async def client(self) -> Client:
        """The connected client (503 when Temporal cannot be reached)."""
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                try:
                    self._client = await self._connect()
                except TemporalConfigError as err:
                    logger.warning("cannot connect to Temporal: %s", err)
                    self._health.record_failure("temporal:connection", output=str(err))
                    raise TemporalUnavailable(
                        "Temporal client configuration is invalid; see the API's log."
                    ) from err
                except (RuntimeError, OSError, TimeoutError) as err:
                    self._health.record_failure("temporal:connection", output=str(err))
                    raise TemporalUnavailable("Temporal is not reachable; try again.") from err
                self._health.record_pass("temporal:connection")
            return self._client

    async def _connect(self) -> Client:
        """Connect within the RPC timeout. The connect runs as a task of its own that a
        timeout or a cancellation leaves running: Temporal's native connect ignores
        cancellation until its own retries end, and `asyncio.wait_for` would wait for it
        (and, on Python 3.11, may swallow the caller's cancellation, so a cancelled
        pinger kept pinging). A later call picks up the same attempt."""
        attempt = self._connecting
        if attempt is None or (attempt.done() and not _connected(attempt)):
            attempt = self._connecting = asyncio.create_task(connect_temporal(self.settings))
            # An attempt nobody waits for any more still has its failure looked at, so
            # asyncio does not log "Task exception was never retrieved" for it.
            attempt.add_done_callback(_connected)
        done, _ = await asyncio.wait({attempt}, timeout=self.settings.temporal_rpc_timeout_s)
        if not done:
            raise TimeoutError("Temporal did not answer the connect in time")
        self._connecting = None
        return attempt.result()

    def close(self) -> None:
        """Stop a connect still under way (shutdown does not wait for it)."""
        if self._connecting is not None:
            self._connecting.cancel()

    async def call(self, awaitable: Awaitable[T], *, subject: str) -> T:
        """Await a Temporal call, turning its failures into domain errors."""
        try:
            result = await awaitable
        except WorkflowUpdateFailedError as err:
            raise rejection_to_domain(err) from err
        except WorkflowUpdateRPCTimeoutOrCancelledError as err:
            self._health.record_failure("temporal:connection", output=str(err))
            raise TemporalUnavailable(
                f"{subject} did not answer in time; is a worker running? Try again."
            ) from err
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise NotFound(f"{subject} could not be found.") from err
            if err.status in (
                RPCStatusCode.DEADLINE_EXCEEDED,
                RPCStatusCode.UNAVAILABLE,
                RPCStatusCode.CANCELLED,
            ):
                self._health.record_failure("temporal:connection", output=err.message)
                raise TemporalUnavailable(
                    f"Temporal did not answer for {subject} in time; is a worker running?"
                ) from err
            raise
        self._health.record_pass("temporal:connection")
        return result

    async def update(
        self,
        workflow_id: str,
        operation: Operation[Any, RequestT, AnswerT],
        request: RequestT,
        *,
        subject: str,
    ) -> AnswerT:
        """Send an operation to an entity workflow; rejections become domain errors.

        The request's action id is the update id, so a client retry is deduplicated.
        """
        client = await self.client()
        handle = client.get_workflow_handle(workflow_id)
        return await self.call(
            handle.execute_update(
                operation.name,
                request,
                id=request.action_id,
                result_type=operation.answer,
                rpc_timeout=self.rpc_timeout,
            ),
            subject=subject,
        )

    async def _short(
        self, workflow: str, arg: Any, prefix: str, runs_for: timedelta, subject: str
    ) -> Any:
        """Run a short read-only workflow on the worker (`<prefix>:<uuid>` in the UI)
        and wait for its answer."""
        client = await self.client()
        return await self.call(
            client.execute_workflow(
                workflow,
                arg,
                id=f"{prefix}:{uuid.uuid4()}",
                task_queue=self.settings.task_queue,
                execution_timeout=runs_for,
                rpc_timeout=max(self.rpc_timeout, runs_for),
            ),
            subject=subject,
        )

    async def server_details(self, physical_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Senlin's details of these servers, read by the worker (`NodeDetailsWorkflow`);
        each an `Error` entry when the worker did not answer in time."""
        try:
            details: dict[str, dict[str, Any]] = await self._short(
                NODE_DETAILS_WORKFLOW,
                physical_ids,
                "node-details",
                DETAILS_TIMEOUT,
                "the servers' details",
            )
        except WorkflowFailureError as err:
            reason = details_error(500, f"The servers could not be read: {err.cause or err}")
            return dict.fromkeys(physical_ids, reason)
        return details

    async def cloud_problem(self, checks: list[ConstraintCheck]) -> str | None:
        """What the cloud lacks of the objects a template names (`CloudChecksWorkflow`),
        as Heat's 400 words it; None when it has them all. When the worker or the cloud
        cannot tell in time, the request goes on: the resource's create then says it,
        as it would of an object deleted after the check."""
        if not checks:
            return None
        try:
            problem: str | None = await self._short(
                CLOUD_CHECKS_WORKFLOW, checks, "cloud-checks", CHECKS_TIMEOUT, "the cloud lookups"
            )
        except (WardenError, WorkflowFailureError, RPCError) as err:
            logger.warning("Named cloud objects not checked (%d): %s", len(checks), err)
            return None
        return problem

    async def describe(self, workflow_id: str, result_type: type[BaseModel]) -> dict[str, Any]:
        """The workflow's `describe` query as JSON with `available: true`, or
        `available: false` and why: a read that shows it must never fail or hang on it."""
        try:
            client = await self.client()
            handle = client.get_workflow_handle(workflow_id)
            view = await handle.query(
                "describe", result_type=result_type, rpc_timeout=DESCRIBE_TIMEOUT
            )
        except (TimeoutError, RPCError, WardenError) as err:
            return {"available": False, "reason": str(err) or type(err).__name__}
        return {"available": True, **view.model_dump(mode="json")}

    async def pollers(self) -> list[Poller]:
        """The workers polling Warden's task queue for each kind of task, as Temporal
        last saw them."""
        client = await self.client()
        kinds = {
            "workflow": TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            "activity": TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        }
        found: list[Poller] = []
        for kind, queue_type in kinds.items():
            request = DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=self.settings.task_queue),
                task_queue_type=queue_type,
            )
            answer = await self.call(
                client.workflow_service.describe_task_queue(request, timeout=self.rpc_timeout),
                subject=f"Task queue {self.settings.task_queue}",
            )
            found += [
                Poller(
                    identity=p.identity,
                    last_access=p.last_access_time.ToDatetime(tzinfo=UTC),
                    kind=kind,
                )
                for p in answer.pollers
            ]
        return found

    async def ping(self) -> None:
        """Record whether Temporal answers (run periodically, not per request)."""
        try:
            client = await self.client()
            await client.service_client.check_health(timeout=timedelta(seconds=5))
        except (WardenError, RPCError, RuntimeError, OSError) as err:
            self._health.record_failure("temporal:connection", output=str(err))
            return
        self._health.record_pass("temporal:connection")


def _connected(attempt: asyncio.Task[Client]) -> bool:
    """Whether a finished connect attempt succeeded (its failure counts as looked at)."""
    return not attempt.cancelled() and attempt.exception() is None


def rejection_to_domain(err: WorkflowUpdateFailedError) -> WardenError:
    """An update rejected by a validator (or failed in its handler) as a domain error."""
    cause: Any = err.cause
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = getattr(cause, "cause", None) or cause.__cause__
    if isinstance(cause, ApplicationError):
        return error_from_type(cause.type, cause.message)
    return error_from_type(None, str(err))
