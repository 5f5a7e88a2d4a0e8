"""The resource handler registry: every handler belongs to a registered type, and the
flags the stack operation reads (pure, nested, lock state) are those of each type."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.stack.resource_types import (
    AUTO_SCALING_GROUP,
    NONE,
    RANDOM_STRING,
    RESOURCE_TYPES,
    SCALING_POLICY,
    SERVER,
    STACK,
    TEST_RESOURCE,
)
from domain.stack.state import ResourceState
from workflows.stack.resources.base import ResourceHandler
from workflows.stack.resources.registry import HANDLERS, handler_for

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def resource(rtype: str, physical_id: str | None) -> ResourceState:
    return ResourceState(
        name="r",
        type=rtype,
        resource_id="id",
        physical_id=physical_id,
        created_at=NOW,
        updated_at=NOW,
    )


def test_every_handler_is_for_a_registered_type() -> None:
    assert set(HANDLERS) <= set(RESOURCE_TYPES)


def test_a_type_without_a_handler_gets_the_base_handler() -> None:
    assert type(handler_for(NONE)) is ResourceHandler


@pytest.mark.parametrize(
    ("rtype", "pure", "nested"),
    [
        (NONE, True, False),
        (RANDOM_STRING, True, False),
        (TEST_RESOURCE, True, False),
        (SCALING_POLICY, True, False),
        (SERVER, False, False),
        (STACK, False, True),
        (AUTO_SCALING_GROUP, False, True),
    ],
)
def test_only_types_with_a_cloud_side_are_not_pure(rtype: str, pure: bool, nested: bool) -> None:
    handler = handler_for(rtype)
    assert (handler.pure, handler.nested) == (pure, nested)


@pytest.mark.parametrize("rtype", [SERVER, STACK, AUTO_SCALING_GROUP])
def test_created_servers_and_nested_stacks_have_a_lock_state(rtype: str) -> None:
    assert handler_for(rtype).has_lock_state(resource(rtype, "p1"))
    assert not handler_for(rtype).has_lock_state(resource(rtype, None))


@pytest.mark.parametrize("rtype", [NONE, RANDOM_STRING, TEST_RESOURCE, SCALING_POLICY])
def test_types_without_a_physical_side_have_no_lock_state(rtype: str) -> None:
    assert not handler_for(rtype).has_lock_state(resource(rtype, "p1"))
