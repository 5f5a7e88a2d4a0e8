"""Event sinks through the API, the real workflows and simcloud's Zaqar: each event of
the stack is a message on the environment's queue, in Heat's `os.heat.event` shape."""

from __future__ import annotations

import uuid
from typing import Any

from tests.api.test_cloud_resources_through_workflows import hot
from tests.api.test_stacks_through_workflows import settled
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

STACKS = "/v1/demo/stacks"
RESOURCES = {"test_resource": {"type": "OS::Heat::TestResource", "properties": {"value": "ok"}}}


async def test_a_stacks_events_are_messages_on_its_queue(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    queue = str(uuid.uuid4())
    environment = {"event_sinks": [{"type": "zaqar-queue", "target": queue, "ttl": 120}]}
    made = await api.post(
        STACKS, json={"stack_name": "sunk", "template": hot(RESOURCES), "environment": environment}
    )
    assert made.status_code == 201, made.text
    stack_id = made.json()["stack"]["id"]
    await settled(api, f"{STACKS}/sunk/{stack_id}")

    async def four() -> list[dict[str, Any]] | None:
        answer = await running_warden.cloud.request(
            "messaging",
            "GET",
            f"/v2/queues/{queue}/messages",
            params={"limit": "20"},
            headers={"Client-ID": str(uuid.uuid4())},
        )
        bodies = [m["body"] for m in answer.json()["messages"]]
        return bodies if len(bodies) >= 4 else None

    bodies = await eventually(four, what="four events on the queue")
    assert {b["type"] for b in bodies} == {"os.heat.event"}
    payloads = [b["payload"] for b in bodies]
    assert {p["resource_name"] for p in payloads} == {"sunk", "test_resource"}
    assert {p["stack_id"] for p in payloads} == {stack_id}
    assert sorted(p["resource_status"] for p in payloads) == [
        "COMPLETE",
        "COMPLETE",
        "IN_PROGRESS",
        "IN_PROGRESS",
    ]
    assert {p["resource_action"] for p in payloads} == {"CREATE"}
    resource = next(p for p in payloads if p["resource_name"] == "test_resource")
    assert resource["resource_type"] == "OS::Heat::TestResource"


async def test_a_sink_heat_does_not_have_is_a_400(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    for sinks, message in (
        ([{"type": "kafka", "target": "t"}], 'unknown event sink type "kafka"'),
        ([{"type": "zaqar-queue"}], "environment.event_sinks[0]: target: Field required"),
        ({"type": "zaqar-queue"}, "environment.event_sinks: must be a list of sinks"),
    ):
        answer = await api.post(
            STACKS,
            json={
                "stack_name": "bad",
                "template": hot(RESOURCES),
                "environment": {"event_sinks": sinks},
            },
        )
        assert answer.status_code == 400, answer.text
        assert message in answer.json()["error"]["message"]
    assert (await api.get(f"{STACKS}/bad")).status_code == 404
