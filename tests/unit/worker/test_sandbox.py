"""The worker's sandbox passes Warden's workflow modules through; the strict one still
accepts every workflow (docs/operating.md §Worker tuning)."""

from __future__ import annotations

import pytest
from temporalio import workflow
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from worker.main import sandbox_runner
from worker.registry import WORKFLOWS

DEFINITIONS = [workflow._Definition.must_from_class(cls) for cls in WORKFLOWS]


@pytest.mark.parametrize("defn", DEFINITIONS, ids=lambda d: d.name)
async def test_every_workflow_is_valid_in_the_strict_sandbox_and_the_workers(
    defn: workflow._Definition,
) -> None:
    # prepare_workflow imports the workflow's module in a fresh sandbox and runs
    # Temporal's validation: an import-time forbidden call fails it.
    SandboxedWorkflowRunner().prepare_workflow(defn)
    sandbox_runner().prepare_workflow(defn)


def test_the_worker_passes_only_warden_workflow_modules_through() -> None:
    added = sandbox_runner().restrictions.passthrough_modules - (
        SandboxRestrictions.default.passthrough_modules
    )
    assert added == {"workflows"}
    # Every workflow the worker runs lives there (else it would be re-imported per run).
    assert {cls.__module__.split(".")[0] for cls in WORKFLOWS} == {"workflows"}
