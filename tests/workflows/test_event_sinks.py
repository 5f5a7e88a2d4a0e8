"""Heat's event sinks through the stack workflow: every event of the stack and of its
nested stacks is posted to the environment's Zaqar queue after it is recorded
(heat-tempest-plugin's `test_event_sinks`)."""

from __future__ import annotations

from typing import Any

from tests.support.eventually import eventually
from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import create_stack

TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2013-05-23",
    "resources": {
        "test_resource": {"type": "OS::Heat::TestResource", "properties": {"value": "ok"}}
    },
}
NESTED: dict[str, Any] = {
    "heat_template_version": "2015-04-30",
    "resources": {"inner": {"type": "OS::Heat::Stack", "properties": {"template": TEMPLATE}}},
}
SINKS = [{"type": "zaqar-queue", "target": "q1", "ttl": 120}]


async def test_a_stacks_events_go_to_its_sink(harness: Harness) -> None:
    await create_stack(harness, TEMPLATE, event_sinks=SINKS)

    async def four() -> list[tuple[str, str, str]] | None:
        seen = [(e.obj_name, e.action, e.status) for q, e in harness.cloud.queued if q == "q1"]
        return seen if len(seen) >= 4 else None

    assert await eventually(four) == [
        ("shop", "CREATE", "IN_PROGRESS"),
        ("test_resource", "CREATE", "IN_PROGRESS"),
        ("test_resource", "CREATE", "COMPLETE"),
        ("shop", "CREATE", "COMPLETE"),
    ]


async def test_nested_stacks_post_to_their_parents_sink(harness: Harness) -> None:
    _, stack_id = await create_stack(harness, NESTED, event_sinks=SINKS)

    async def nested_events() -> list[str] | None:
        names = {e.obj_name for _, e in harness.cloud.queued if e.stack_id != stack_id}
        return sorted(names) if "test_resource" in names else None

    names = await eventually(nested_events)
    assert "test_resource" in names and any(n.startswith("shop-inner-") for n in names)


async def test_no_sink_posts_nothing(harness: Harness) -> None:
    await create_stack(harness, TEMPLATE)
    assert harness.cloud.queued == []
