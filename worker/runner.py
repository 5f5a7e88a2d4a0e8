"""The worker's workflow runner: Temporal's sandbox, without a per-payload trip into it.

For every run of payloads it encodes or decodes, the Temporal SDK (1.35) asks the
workflow instance which serialization context applies, and which external-storage
context (`_CommandAwareDataConverter` in `temporalio/worker/_workflow.py`). In the
sandbox each question `exec`s a code string inside the sandbox, with its importer
applied: three to six of them per payload run, 12.6 % of the worker's busy time in a
profile of lock/unlock cycles (docs/performance.md).

The answers only matter to a converter that uses them. Warden's converter ignores
serialization context (`DataConverter.with_context` returns the converter itself) and
has no external storage, so whatever the sandbox answers, the SDK ends up with the very
same converter. `ContextFreeRunner` wraps the sandbox runner and answers those two
questions itself, outside the sandbox; everything else (activations, the workflow code,
its restrictions) still runs in the sandbox. `workflow_runner_for` uses it only for a
converter that provably ignores the answers; any other converter keeps the SDK's path.

It also ends an eviction the SDK would retry for ever: when a run's eviction keeps
failing because some of its tasks will not end (`STUCK_EVICTION`), the third failure is
reported as a completed eviction and the instance is kept aside, never run again.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Final

from temporalio import workflow
from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import Success, WorkflowActivationCompletion
from temporalio.converter import (
    ActivitySerializationContext,
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    WorkflowSerializationContext,
)
from temporalio.worker import (
    WorkflowInstance,
    WorkflowInstanceDetails,
    WorkflowRunner,
)

logger = logging.getLogger(__name__)

# Contexts of every kind the SDK hands a workflow's converter, to prove it ignores them.
_PROBES: tuple[SerializationContext, ...] = (
    WorkflowSerializationContext(namespace="probe", workflow_id="probe"),
    ActivitySerializationContext(
        namespace="probe",
        activity_id="probe",
        activity_type="probe",
        activity_task_queue="probe",
        workflow_id="probe",
        workflow_type="probe",
        is_local=False,
    ),
)


def ignores_context(converter: DataConverter) -> bool:
    """True when no serialization context or store context can change `converter`."""
    return converter.external_storage is None and all(
        converter.with_context(probe) is converter for probe in _PROBES
    )


#: What the SDK (1.35) raises when a run's eviction leaves tasks that would not end. Seen
#: after Temporal's deadlock detector interrupted a slow activation: the interrupt landed
#: inside the workflow's event loop and lost a task's wake-up, so that task could never
#: finish and every later eviction of the run failed the same way.
STUCK_EVICTION: Final = "Eviction processed, but"
#: Failed evictions of one run (the SDK retries every 2 s) before it is evicted anyway.
EVICTION_ATTEMPTS: Final = 3
#: Instances evicted with tasks left: referenced for the process's life, never run again.
ABANDONED: list[WorkflowInstance] = []


def _is_eviction(act: WorkflowActivation) -> bool:
    return any(job.HasField("remove_from_cache") for job in act.jobs)


class ContextFreeInstance(WorkflowInstance):
    """A sandboxed workflow instance whose converter questions are answered outside it."""

    def __init__(self, inner: WorkflowInstance) -> None:
        self.inner = inner
        #: Evictions of this run that failed because tasks would not end.
        self.stuck_evictions = 0

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        try:
            return self.inner.activate(act)
        except RuntimeError as err:
            if not _is_eviction(act) or STUCK_EVICTION not in str(err):
                raise
            self.stuck_evictions += 1
            if self.stuck_evictions < EVICTION_ATTEMPTS:
                raise
        # The SDK retries a failed eviction every 2 s for ever, holding the slot, and the
        # worker's shutdown waits on it (a test session hung so). Evicted anyway: the run
        # replays from its history in a new instance; this one, with the tasks that would
        # not end, is kept referenced so that they are never collected (and so never
        # resumed), as the SDK warns they might be.
        ABANDONED.append(self.inner)
        logger.error(
            "workflow run %s: evicted after %d failed evictions (%s); its instance is kept, "
            "never resumed, and the run carries on from its history",
            act.run_id,
            self.stuck_evictions,
            STUCK_EVICTION,
        )
        return WorkflowActivationCompletion(run_id=act.run_id, successful=Success())

    def get_serialization_context(self, command_info: object) -> SerializationContext | None:
        # None selects the worker's context-free converter, the same object that
        # `with_context` would have returned for any answer (`ignores_context`).
        return None

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        # Read only when external storage is set; `ignores_context` requires none.
        return StorageDriverStoreContext()

    def get_info(self) -> workflow.Info:
        return self.inner.get_info()

    def get_thread_id(self) -> int | None:
        # The deadlock detector interrupts the sandbox's thread through this.
        return self.inner.get_thread_id()


class ContextFreeRunner(WorkflowRunner):
    """`inner` (the sandbox runner) with `ContextFreeInstance`s (see the module's doc)."""

    def __init__(self, inner: WorkflowRunner) -> None:
        self.inner = inner

    def prepare_workflow(self, defn: workflow._Definition) -> None:
        self.inner.prepare_workflow(defn)

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return ContextFreeInstance(self.inner.create_instance(det))

    def set_worker_level_failure_exception_types(
        self, types: Sequence[type[BaseException]]
    ) -> None:
        self.inner.set_worker_level_failure_exception_types(types)


def workflow_runner_for(converter: DataConverter, sandbox: WorkflowRunner) -> WorkflowRunner:
    """`sandbox`, wrapped in `ContextFreeRunner` when `converter` ignores context.

    Under Temporal's debug mode (`TEMPORAL_DEBUG` set) `sandbox` is returned as is: the
    SDK lets `breakpoint()` through only a sandbox runner it is handed directly.
    """
    if os.environ.get("TEMPORAL_DEBUG") or not ignores_context(converter):
        return sandbox
    return ContextFreeRunner(sandbox)
