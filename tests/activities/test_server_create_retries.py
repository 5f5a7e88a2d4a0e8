"""`create_server` across activity attempts: a retry after a lost answer adopts its server.

simcloud makes the server, then answers 500 (`lost_response_rate` 1, one error): the
first attempt fails retryably, exactly as when a gateway drops Nova's 202. The retry
must find that server by its request key instead of making a second one.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import REQUEST_ID_KEY, CloudSession, Server
from activities.compute import ComputeActivities
from domain.cluster.nodes import NodeState
from domain.servers import ServerInfo, ServerRequest
from tests.support.simcloud_server import SimControl
from workflows.cluster.operations import server_request

CREATE = "^POST /compute/v2.1/servers$"
SHOW = "^GET /compute/v2.1/servers/[^/]+$"
PROFILE = {"properties": {"image": "cirros", "flavor": "m1.tiny", "metadata": {"app": "web"}}}
NOW = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def compute(cloud: CloudSession) -> ComputeActivities:
    return ComputeActivities(cloud.compute, cloud.collections)


def node(node_id: str = "node-7f3a", name: str = "web-1") -> NodeState:
    return NodeState(
        node_id=node_id, name=name, index=1, profile_id="p", created_at=NOW, updated_at=NOW
    )


async def lose_next_answer(sim: SimControl, match: str = CREATE) -> None:
    """The next matching call is carried out, then answered with a 500."""
    await sim.api_faults(1.0, 500, lost_response_rate=1.0, match=match, max_errors=1)


async def create_with_one_retry(
    compute: ComputeActivities, request: ServerRequest
) -> tuple[ApplicationError, ServerInfo]:
    """Attempt 1 (which fails), then attempt 2, as Temporal would run them."""
    with pytest.raises(ApplicationError) as first:
        await ActivityEnvironment().run(compute.create_server, request)
    retry = ActivityEnvironment()
    retry.info = dataclasses.replace(retry.info, attempt=2)
    return first.value, await retry.run(compute.create_server, request)


async def servers_named(cloud: CloudSession, name: str) -> list[Server]:
    return await cloud.compute.list_servers(name=f"^{name}$")


async def test_cluster_node_create_retry_adopts_the_server_its_lost_post_made(
    compute: ComputeActivities, cloud: CloudSession, sim: SimControl
) -> None:
    request = server_request(PROFILE, "cluster-1", node(), request_id="node-7f3a")
    await lose_next_answer(sim)

    failure, adopted = await create_with_one_retry(compute, request)

    servers = await servers_named(cloud, "web-1")
    assert failure.type == "BackendUnavailable" and not failure.non_retryable
    assert [s.id for s in servers] == [adopted.physical_id]
    assert servers[0].metadata == {
        "app": "web",
        "warden_cluster": "cluster-1",
        "warden_node": "node-7f3a",
        REQUEST_ID_KEY: "node-7f3a",
    }


async def test_retry_adopts_the_server_when_the_answer_after_the_post_is_lost(
    compute: ComputeActivities, cloud: CloudSession, sim: SimControl
) -> None:
    request = server_request(PROFILE, "cluster-1", node(), request_id="node-7f3a")
    await lose_next_answer(sim, match=SHOW)  # POST answered; the GET of the new server lost

    _, adopted = await create_with_one_retry(compute, request)

    assert [s.id for s in await servers_named(cloud, "web-1")] == [adopted.physical_id]
    assert (await sim.state())["servers"] == 1


async def test_stack_servers_sharing_a_name_each_adopt_their_own_server(
    compute: ComputeActivities, cloud: CloudSession, sim: SimControl
) -> None:
    # The request the stack path sends when the template names the server: every
    # resource (e.g. group members) may share the name, the resource id tells them apart.
    def stack_request(resource_id: str) -> ServerRequest:
        metadata = {"warden_stack": "stack-1", "warden_resource": resource_id}
        return ServerRequest(
            name="web", image="cirros", flavor="m1.tiny", metadata=metadata, request_id=resource_id
        )

    adopted: dict[str, str] = {}
    for resource_id in ("res-a", "res-b"):
        await lose_next_answer(sim)
        _, info = await create_with_one_retry(compute, stack_request(resource_id))
        adopted[resource_id] = info.physical_id

    by_request = {s.request_id: s.id for s in await servers_named(cloud, "web")}
    assert by_request == adopted
    assert adopted["res-a"] != adopted["res-b"]


async def test_recovery_recreate_retry_adopts_its_server_not_the_old_one(
    compute: ComputeActivities, cloud: CloudSession, sim: SimControl
) -> None:
    the_node = node()
    old = await ActivityEnvironment().run(
        compute.create_server,
        server_request(PROFILE, "cluster-1", the_node, request_id="node-7f3a"),
    )
    recreate = server_request(PROFILE, "cluster-1", the_node, request_id="node-7f3a:action-2")
    await lose_next_answer(sim)

    _, replacement = await create_with_one_retry(compute, recreate)

    servers = {s.id: s.request_id for s in await servers_named(cloud, "web-1")}
    assert replacement.physical_id != old.physical_id
    assert servers == {old.physical_id: "node-7f3a", replacement.physical_id: "node-7f3a:action-2"}


async def test_deleting_the_adopted_server_leaves_nothing_behind(
    compute: ComputeActivities, cloud: CloudSession, sim: SimControl
) -> None:
    request = server_request(PROFILE, "cluster-1", node(), request_id="node-7f3a")
    await lose_next_answer(sim)
    _, adopted = await create_with_one_retry(compute, request)

    await lose_next_answer(sim, match="^DELETE ")  # deleted, but the 204 is lost: retried
    with pytest.raises(ApplicationError):
        await ActivityEnvironment().run(compute.delete_server, adopted.physical_id)
    await ActivityEnvironment().run(compute.delete_server, adopted.physical_id)
    await ActivityEnvironment().run(compute.wait_server_deleted, adopted.physical_id)

    assert await cloud.compute.list_servers() == []
    assert (await sim.state())["servers"] == 0
