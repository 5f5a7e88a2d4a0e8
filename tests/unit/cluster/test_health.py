"""The health manager's pure rules: judging probes and the safety envelope."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.cluster.health import (
    HealthView,
    NodeHealth,
    NodeProbe,
    ProbeState,
    ProbeTarget,
    RecoveryStep,
    choose_recoveries,
    expand_params,
    judge,
    plan_recovery,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
TARGET = ProbeTarget(node_id="n1", name="web-1", physical_id="s1")


def probe(state: ProbeState, reason: str = "", status: str | None = None) -> NodeProbe:
    return NodeProbe(node_id="n1", state=state, reason=reason, server_status=status)


def unhealthy(name: str, **kw: object) -> NodeHealth:
    return NodeHealth(node_id=name, name=name, state=ProbeState.UNHEALTHY, **kw)


def test_unhealthy_probe_inside_warm_up_counts_as_healthy() -> None:
    view = HealthView(targets=[TARGET], updated_at={"n1": NOW - timedelta(seconds=10)})
    node = judge(None, TARGET, probe(ProbeState.UNHEALTHY, "down"), view, warm_up_s=300, now=NOW)
    assert node.state == ProbeState.HEALTHY and node.reason.startswith("warm-up")
    later = judge(None, TARGET, probe(ProbeState.UNHEALTHY, "down"), view, warm_up_s=5, now=NOW)
    assert later.state == ProbeState.UNHEALTHY


def test_unknown_probe_keeps_what_was_known() -> None:
    before = unhealthy("n1", reason="Server status is ERROR")
    view = HealthView(targets=[TARGET])
    node = judge(before, TARGET, probe(ProbeState.UNKNOWN), view, warm_up_s=0, now=NOW)
    assert node.state == ProbeState.UNHEALTHY and node.reason == "Server status is ERROR"


def test_marked_node_is_unhealthy_and_nodes_being_changed_are_not_judged() -> None:
    marked = HealthView(targets=[TARGET], marked=["n1"])
    node = judge(None, TARGET, probe(ProbeState.HEALTHY), marked, warm_up_s=0, now=NOW)
    assert node.state == ProbeState.UNHEALTHY and node.reason == "marked unhealthy"
    busy = HealthView(targets=[TARGET], node_status={"n1": "RECOVERING"})
    node = judge(None, TARGET, probe(ProbeState.UNHEALTHY), busy, warm_up_s=0, now=NOW)
    assert node.state == ProbeState.UNKNOWN


def test_healthy_probe_resets_attempts() -> None:
    before = unhealthy("n1", attempts=2, next_attempt_at=NOW)
    node = judge(before, TARGET, probe(ProbeState.HEALTHY), HealthView(), warm_up_s=0, now=NOW)
    assert (node.state, node.attempts, node.next_attempt_at) == (ProbeState.HEALTHY, 0, None)


def test_above_max_unhealthy_nothing_is_recovered_and_the_warning_names_the_count() -> None:
    nodes = {n: unhealthy(n) for n in ("a", "b", "c")} | {
        "d": NodeHealth(node_id="d", name="d", state=ProbeState.HEALTHY)
    }
    decision = choose_recoveries(
        nodes, max_unhealthy=2, max_concurrent=5, retry_limit=3, backoff_s=30, now=NOW
    )
    assert decision.recover == []
    assert decision.warning.startswith("3 of 4 nodes are unhealthy, above max_unhealthy (2)")


def test_concurrency_counts_nodes_already_recovering() -> None:
    nodes = {"a": unhealthy("a", recovering=True), "b": unhealthy("b"), "c": unhealthy("c")}
    decision = choose_recoveries(
        nodes, max_unhealthy=5, max_concurrent=2, retry_limit=3, backoff_s=30, now=NOW
    )
    assert decision.recover == ["b"]
    assert decision.nodes["b"].recovering and decision.nodes["b"].attempts == 1
    assert decision.nodes["b"].next_attempt_at == NOW + timedelta(seconds=30)


def test_backoff_doubles_and_retry_limit_gives_up_with_a_warning() -> None:
    waiting = {"a": unhealthy("a", attempts=2, next_attempt_at=NOW + timedelta(seconds=1))}
    decision = choose_recoveries(
        waiting, max_unhealthy=5, max_concurrent=5, retry_limit=3, backoff_s=30, now=NOW
    )
    assert decision.recover == []
    due = {"a": unhealthy("a", attempts=2, next_attempt_at=NOW)}
    decision = choose_recoveries(
        due, max_unhealthy=5, max_concurrent=5, retry_limit=3, backoff_s=30, now=NOW
    )
    assert decision.recover == ["a"]
    assert decision.nodes["a"].next_attempt_at == NOW + timedelta(seconds=120)
    spent = {"a": unhealthy("a", attempts=3)}
    decision = choose_recoveries(
        spent, max_unhealthy=5, max_concurrent=5, retry_limit=3, backoff_s=30, now=NOW
    )
    assert decision.recover == [] and "gave up on a after 3" in decision.warning


def test_hints_put_the_cheap_fix_first_once() -> None:
    steps = [RecoveryStep(name="REBOOT"), RecoveryStep(name="RECREATE")]
    assert [s.name for s in plan_recovery(steps, hint="compute.instance.pause.end")] == [
        "UNPAUSE",
        "REBOOT",
        "RECREATE",
    ]
    assert plan_recovery(steps, hint="SHUTOFF")[0].name == "START"
    assert [s.name for s in plan_recovery(steps, hint="ERROR")] == ["REBOOT", "RECREATE"]
    assert [s.name for s in plan_recovery([])] == ["RECREATE"]


def test_node_placeholders_expand_in_nested_params() -> None:
    params = {"server": "{{ node.physical_id }}", "args": ["--node={{node.name}}"], "n": 3}
    assert expand_params(params, {"physical_id": "s1", "name": "web-1"}) == {
        "server": "s1",
        "args": ["--node=web-1"],
        "n": 3,
    }
