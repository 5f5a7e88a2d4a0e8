"""Each operation is declared once; the workflows' Temporal handlers follow the tables."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.workflow import _Definition

from workflows.cluster.messages import ClusterOperations
from workflows.cluster.workflow import ClusterWorkflow
from workflows.operation import Operation
from workflows.stack.messages import StackOperations
from workflows.stack.workflow import StackWorkflow

ENTITIES = [(StackWorkflow, StackOperations.all()), (ClusterWorkflow, ClusterOperations.all())]
#: Signals that are not operations: the health manager's verdict.
INTERNAL_SIGNALS = {"health_report"}


@pytest.mark.parametrize(("workflow_class", "operations"), ENTITIES)
def test_every_operation_has_its_update_and_declared_signal_twin(
    workflow_class: type, operations: list[Operation[Any, Any, Any]]
) -> None:
    definition = _Definition.must_from_class(workflow_class)

    assert set(definition.updates) == {op.name for op in operations}
    assert set(definition.signals) - INTERNAL_SIGNALS == {op.name for op in operations if op.signal}
    for op in operations:
        update = definition.updates[op.name]
        assert update.validator is not None, op.name
        assert update.arg_types == [op.request], op.name
        assert update.ret_type is op.answer, op.name


@pytest.mark.parametrize(("workflow_class", "operations"), ENTITIES)
def test_operation_names_are_unique_and_documented(
    workflow_class: type, operations: list[Operation[Any, Any, Any]]
) -> None:
    names = [op.name for op in operations]
    assert len(names) == len(set(names))
    assert all(op.doc for op in operations)
