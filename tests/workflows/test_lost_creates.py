"""A server create whose every attempt failed after its POST landed (answers lost):
the server it made is adopted and removed, never left an orphan."""

from __future__ import annotations

from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import create_stack, stack_settles

LOST = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "web": {
            "type": "OS::Nova::Server",
            "properties": {"name": "lost-web", "image": "cirros", "flavor": "m1.tiny"},
        }
    },
}


async def test_a_stack_server_whose_answers_were_lost_is_cleaned_up(harness: Harness) -> None:
    harness.cloud.lost_creates.add("lost-web")

    _, stack_id = await create_stack(harness, LOST)
    stack = await stack_settles(harness, stack_id)

    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED", stack.status_reason
    assert harness.cloud.creates >= 1
    assert harness.cloud.servers == {}  # the server the lost create made is gone
