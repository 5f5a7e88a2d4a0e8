"""Which profile changes Senlin makes to a node's server in place, and which nodes a
cluster update keeps (the others are replaced)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from domain.cluster.nodes import MARKED_UNHEALTHY, NodeState, NodeStatus
from domain.cluster.server_update import ServerChanges, server_changes
from domain.cluster.state import ClusterSpec, ClusterState, ClusterStatus
from domain.cluster.update import plan_update

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def spec(**props: Any) -> dict[str, Any]:
    return {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": "cirros", **props},
    }


def test_image_flavor_metadata_and_password_change_in_place() -> None:
    changes = server_changes(
        spec(), spec(image="fedora", flavor="m1.small", metadata={"n": 1}, admin_pass="x")
    )
    assert changes == ServerChanges(
        image="fedora", flavor="m1.small", metadata={"n": "1"}, admin_pass="x"
    )
    assert server_changes(spec(), spec(name="renamed")) == ServerChanges()


def test_any_other_change_needs_a_new_server() -> None:
    assert server_changes(spec(), spec(key_name="ops")) is None
    assert server_changes(spec(), spec(networks=[{"network": "private"}])) is None
    assert server_changes(spec(), spec(image=None)) is None  # Nova cannot rebuild to none
    assert server_changes(spec(), {"type": "os.heat.stack", "properties": {}}) is None


def _node(i: int, **changes: Any) -> NodeState:
    fields: dict[str, Any] = {
        "node_id": f"n{i}", "name": f"web-{i}", "index": i, "profile_id": "p1",
        "physical_id": f"s{i}", "status": NodeStatus.ACTIVE, "created_at": NOW,
        "updated_at": NOW,
    }  # fmt: skip
    return NodeState(**(fields | changes))


def test_the_update_keeps_healthy_nodes_and_replaces_failed_marked_and_foreign_ones() -> None:
    nodes = [
        _node(0),
        _node(1, status=NodeStatus.ERROR),
        _node(2, data={MARKED_UNHEALTHY: True}),
        _node(3, profile_id="elsewhere"),
        _node(4, physical_id=None),
        _node(5),
    ]
    state = ClusterState(
        spec=ClusterSpec(
            cluster_id="c", project_id="p", name="web", profile_id="p1", desired_capacity=6
        ),
        profile=spec(),
        nodes=nodes,
        created=True,
        status=ClusterStatus.ACTIVE,
    )
    new = {"profile_id": "p2", "profile": spec(image="fedora")}
    plan = plan_update(state, new)
    assert plan.in_place == ["n0", "n5"]
    assert plan.changes == ServerChanges(image="fedora")
    assert plan_update(state, new, in_place=False).in_place == []  # before the patch
    replacing = plan_update(state, {**new, "profile": spec(key_name="ops")})
    assert (replacing.in_place, replacing.changes) == ([], None)
    assert plan_update(state, {**new, "profile_only": True}).in_place == []
