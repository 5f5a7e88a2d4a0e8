"""`create_server` across activity attempts: a retry after a lost answer adopts its server.

simcloud makes the server, then answers 502 (`lost_response_rate` 1, one error): the
first attempt fails retryably, exactly as when a gateway drops Nova's 202. The retry
must find that server by its request key instead of making a second one.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import REQUEST_ID_KEY, CloudSession, Server
from activities.cloud.reads import READ_TRIES
from activities.compute import ComputeActivities
from activities.nodes import NodeActivities
from domain.cluster.nodes import NodeState
from domain.projection import ChangeSet, NodeRemoval
from domain.servers import ServerInfo, ServerRequest
from store.db import make_engine, migrate
from tests.support.eventually import eventually
from tests.support.simcloud_server import RunningSimcloud, SimControl
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
    """The next matching call is carried out, then answered with a gateway's 502."""
    await sim.api_faults(1.0, 502, lost_response_rate=1.0, match=match, max_errors=1)


async def attempt(
    compute: ComputeActivities, request: ServerRequest, number: int
) -> ApplicationError:
    """Attempt `number` of the create, as Temporal would run it; it must fail."""
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=number)
    with pytest.raises(ApplicationError) as failed:
        await env.run(compute.create_server, request)
    return failed.value


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
    # POST answered; every read of the new server this attempt makes fails.
    await sim.api_faults(1.0, 502, match=SHOW, max_errors=READ_TRIES)

    _, adopted = await create_with_one_retry(compute, request)

    assert [s.id for s in await servers_named(cloud, "web-1")] == [adopted.physical_id]
    assert (await sim.state())["servers"] == 1


async def test_a_failed_read_of_the_new_server_is_repeated_within_the_attempt(
    compute: ComputeActivities, cloud: CloudSession, sim: SimControl
) -> None:
    request = server_request(PROFILE, "cluster-1", node(), request_id="node-7f3a")
    await sim.api_faults(1.0, 503, match=SHOW, max_errors=READ_TRIES - 1)

    made = await ActivityEnvironment().run(compute.create_server, request)

    assert [s.id for s in await servers_named(cloud, "web-1")] == [made.physical_id]


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


async def hold_next_create(sim: SimControl, hold_ms: int) -> None:
    """The next POST /servers is carried out `hold_ms` late, its answer going nowhere."""
    await sim.api_faults(1.0, hold_ms=hold_ms, match=CREATE, max_errors=1)


async def duplicated_create(
    simcloud: RunningSimcloud, sim: SimControl, cloud: CloudSession, request: ServerRequest
) -> tuple[ServerInfo, list[Server]]:
    """Attempt 1 times out while its POST is held; attempt 2 creates; then the held POST
    lands: two servers of one create, as Nova made them when its answer came too late."""
    await hold_next_create(sim, hold_ms=1500)
    async with CloudSession(simcloud.cloud_config(timeout_s=0.5)) as impatient:
        first, adopted = await create_with_one_retry(
            ComputeActivities(impatient.compute, impatient.collections), request
        )
    assert first.type == "BackendUnavailable" and not first.non_retryable

    async def both() -> list[Server] | None:
        servers = await servers_named(cloud, request.name)
        return servers if len(servers) == 2 else None

    return adopted, await eventually(both, timeout=10, what="the held create to land")


async def test_a_create_answered_after_the_timeout_is_deleted_with_its_twin(
    compute: ComputeActivities,
    cloud: CloudSession,
    sim: SimControl,
    simcloud: RunningSimcloud,
) -> None:
    request = server_request(PROFILE, "cluster-1", node(), request_id="node-7f3a")
    adopted, twins = await duplicated_create(simcloud, sim, cloud, request)
    assert {s.request_id for s in twins} == {"node-7f3a"}

    # Every later lookup adopts the same (oldest) one of the two.
    again = await ActivityEnvironment().run(compute.find_created_server, request)
    assert again is not None and again.physical_id == min(twins, key=lambda s: s.created or "").id

    await ActivityEnvironment().run(compute.delete_server, adopted.physical_id)
    await eventually(lambda: _none_named(cloud, "web-1"), what="both servers deleted")


async def test_node_removal_deletes_every_server_made_for_the_node(
    cloud: CloudSession, sim: SimControl, simcloud: RunningSimcloud, tmp_path: Path
) -> None:
    the_node = node()
    request = server_request(PROFILE, "cluster-1", the_node, request_id="node-7f3a")
    adopted, _ = await duplicated_create(simcloud, sim, cloud, request)
    # A RECREATE's old server the cloud would not delete, and another node's server.
    compute = ComputeActivities(cloud.compute, cloud.collections)
    stale = await ActivityEnvironment().run(
        compute.create_server,
        server_request(PROFILE, "cluster-1", the_node, request_id="node-7f3a:action-2"),
    )
    other = await ActivityEnvironment().run(
        compute.create_server,
        server_request(PROFILE, "cluster-1", node("node-b", "web-2"), request_id="node-b"),
    )
    engine = make_engine(f"sqlite:///{tmp_path / 'warden.db'}")
    migrate(engine)
    removal = NodeRemoval(
        node_id=the_node.node_id,
        name=the_node.name,
        physical_id=adopted.physical_id,
        changes=ChangeSet(),
    )
    await ActivityEnvironment().run(
        NodeActivities(cloud.compute, cloud.collections, engine).remove_node, removal
    )

    assert stale.physical_id != adopted.physical_id
    assert await servers_named(cloud, "web-1") == []
    assert [s.id for s in await cloud.compute.list_servers()] == [other.physical_id]


async def _none_named(cloud: CloudSession, name: str) -> bool:
    return not await servers_named(cloud, name)


async def test_a_persistent_500_fails_the_create_after_a_few_attempts_an_outage_does_not(
    compute: ComputeActivities, sim: SimControl
) -> None:
    request = server_request(PROFILE, "cluster-1", node(), request_id="node-7f3a")
    await sim.api_faults(1.0, 500, match=CREATE)

    failures = [await attempt(compute, request, n) for n in (1, 2, 3, 4)]

    assert [f.non_retryable for f in failures] == [False, False, False, True]
    assert {f.type for f in failures} == {"BackendInternalError"}
    assert "HTTP 500" in failures[-1].message
    assert "a 500 is not retried further" in failures[-1].message
    # A 503 says "later": Temporal keeps retrying it (CLOUD_RETRY's 20 attempts).
    await sim.api_faults(1.0, 503, match=CREATE)
    outage = await attempt(compute, request, 10)
    assert (outage.type, outage.non_retryable) == ("BackendUnavailable", False)


async def test_node_removal_rides_out_failing_reads_within_one_attempt(
    cloud: CloudSession, compute: ComputeActivities, sim: SimControl, tmp_path: Path
) -> None:
    """Two 503s on the reads while the server goes away: the same attempt goes on."""
    the_node = node()
    made = await ActivityEnvironment().run(
        compute.create_server, server_request(PROFILE, "cluster-1", the_node, request_id="n")
    )
    engine = make_engine(f"sqlite:///{tmp_path / 'warden.db'}")
    migrate(engine)
    removal = NodeRemoval(
        node_id=the_node.node_id,
        name=the_node.name,
        physical_id=made.physical_id,
        changes=ChangeSet(),
    )
    remove = NodeActivities(cloud.compute, cloud.collections, engine).remove_node
    await sim.api_faults(1.0, 503, match="^GET ", max_errors=2)

    await ActivityEnvironment().run(remove, removal)

    assert await servers_named(cloud, "web-1") == []
    # A write that fails still fails the attempt, for Temporal to retry.
    again = await ActivityEnvironment().run(
        compute.create_server, server_request(PROFILE, "cluster-1", the_node, request_id="m")
    )
    await sim.api_faults(1.0, 503, match="^DELETE ", max_errors=1)
    with pytest.raises(ApplicationError) as failed:
        await ActivityEnvironment().run(
            remove, removal.model_copy(update={"physical_id": again.physical_id})
        )
    assert (failed.value.type, failed.value.non_retryable) == ("BackendUnavailable", False)
