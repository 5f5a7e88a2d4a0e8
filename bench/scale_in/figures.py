"""The scale-in benchmark's figures: each measurement beside its bare baseline and goal."""

from __future__ import annotations

from typing import Any

from bench.figures import figure, goal_met
from bench.scale_in.load_figures import load_rows, step_rows
from bench.scale_in.settings import UNLOADED_PAUSE_S

#: complete_lifecycle → delete p50 against the bare signal → activity floor.
GOAL_DELETE_RATIO = 1.3
#: complete_lifecycle POST p50, one victim at a time, against a bare update.
GOAL_CALL_RATIO = 1.3
GOAL_EVENTS_PER_NODE = 40.0
GOAL_LARGEST_HISTORY = 10_000


def _unloaded_bare_rows(unloaded: dict[str, Any], back_to_back: float) -> list[dict[str, Any]]:
    """The bare calls of the unloaded rounds, each after the same idle pause."""
    one = f"1 victim at a time (x{unloaded['rounds']})"
    paced = f"{UNLOADED_PAUSE_S:g} s idle before each, in the same {unloaded['rounds']} rounds"
    return [
        figure(
            f"{one}: bare update round trip p50, paced ({paced})",
            unloaded["bare_update_p50_ms"],
            "ms",
            back_to_back,
            "bare update p50, back to back",
        ),
        figure(
            f"{one}: bare victim's signal call p50, sent as it announces itself ({paced})",
            unloaded["bare_victim_signal_p50_ms"],
            "ms",
        ),
    ]


def unloaded_rows(unloaded: dict[str, Any], back_to_back_update_p50: float) -> list[dict[str, Any]]:
    """One victim at a time: the call and its delete, each against the bare calls timed
    in the same rounds after the same pause (and the call beside a back-to-back update)."""
    one = f"1 victim at a time (x{unloaded['rounds']})"
    call_p50 = unloaded["complete_call_p50_ms"]
    update_p50 = unloaded["bare_update_p50_ms"]
    get_p50 = unloaded["api_get_action_p50_ms"]
    back_to_back = "bare update p50, back to back"
    return [
        *_unloaded_bare_rows(unloaded, back_to_back_update_p50),
        figure(
            f"{one}: complete_lifecycle POST p50",
            call_p50,
            "ms",
            update_p50,
            "bare update p50, paced alike in the same rounds",
            f"≤ {GOAL_CALL_RATIO}x bare update",
            goal_met(call_p50, lambda v: v <= GOAL_CALL_RATIO * update_p50),
        ),
        figure(
            f"{one}: complete_lifecycle POST p50, against a back-to-back bare update",
            call_p50,
            "ms",
            back_to_back_update_p50,
            back_to_back,
        ),
        figure(
            f"{one}: complete_lifecycle POST p50, against its floor",
            call_p50,
            "ms",
            unloaded["bare_victim_signal_p50_ms"] + get_p50,
            "bare victim's signal call p50 (same rounds) + API GET p50",
            headline=True,
        ),
        figure(
            f"{one}: complete_lifecycle → delete p50, against its floor",
            unloaded["complete_to_delete_p50_ms"],
            "ms",
            unloaded["bare_victim_to_activity_p50_ms"] + get_p50,
            "bare victim's signal → delete activity p50 (same rounds) + API GET p50",
        ),
    ]


def _time_rows(n: str, case: dict[str, Any], bare: dict[str, Any]) -> list[dict[str, Any]]:
    """Creating the cluster, and the scale-in's whole time against the bare fan-out's."""
    return [
        figure(f"{n}: create cluster", case["create_s"], "s"),
        figure(
            f"{n}: scale-in end to end",
            case["e2e_s"],
            "s",
            bare.get("e2e_s"),
            "bare fan-out, every child started at once",
        ),
        figure(
            f"{n}: scale-in per node",
            case["per_node_ms"],
            "ms",
            bare.get("per_node_ms"),
            "bare fan-out per child",
        ),
    ]


def _delete_rows(n: str, case: dict[str, Any], bare: dict[str, Any]) -> list[dict[str, Any]]:
    """complete_lifecycle → delete against the bare signal → activity."""
    delete_p50 = case["complete_to_delete_p50_ms"]
    floor_p50 = bare.get("signal_to_activity_p50_ms")
    return [
        figure(
            f"{n}: complete_lifecycle → delete p50",
            delete_p50,
            "ms",
            floor_p50,
            "bare signal → activity p50, every child started at once",
            f"≤ {GOAL_DELETE_RATIO}x bare",
            None if floor_p50 is None else delete_p50 <= GOAL_DELETE_RATIO * floor_p50,
        ),
        figure(
            f"{n}: complete_lifecycle POST returned → delete p50",
            case.get("complete_returned_to_delete_p50_ms"),
            "ms",
            floor_p50,
            "bare signal → activity p50",
            headline=True,
        ),
        figure(
            f"{n}: complete_lifecycle → delete p99",
            case["complete_to_delete_p99_ms"],
            "ms",
            bare.get("signal_to_activity_p99_ms"),
            "bare signal → activity p99",
        ),
    ]


def _post_rows(
    n: str, case: dict[str, Any], bare: dict[str, Any], signal_p50: float
) -> list[dict[str, Any]]:
    """The complete_lifecycle POST, and its halves, against the bare signal's."""
    return [
        figure(
            f"{n}: complete_lifecycle POST p50",
            case["complete_post_p50_ms"],
            "ms",
            bare.get("signal_call_p50_ms", signal_p50),
            "bare signal p50, same load" if bare else "bare signal p50",
            headline=True,
        ),
        figure(
            f"{n}: complete_lifecycle POST sent → signal recorded p50",
            case.get("complete_sent_to_signal_p50_ms"),
            "ms",
            bare.get("signal_sent_to_recorded_p50_ms"),
            "bare, same load",
            headline=True,
        ),
        figure(
            f"{n}: signal recorded → complete_lifecycle POST returned p50",
            case.get("complete_signal_to_returned_p50_ms"),
            "ms",
            bare.get("signal_recorded_to_returned_p50_ms"),
            "bare, same load",
            headline=True,
        ),
    ]


def _held_row(n: str, case: dict[str, Any]) -> dict[str, Any]:
    """Signals that waited for the victim's first workflow task to end."""
    return figure(
        f"{n}: complete_lifecycle signals that landed while the victim's workflow "
        f"task (its first) still ran ({case.get('signals_held_by_running_task')} of "
        f"{case.get('completions_202')}): wait for that task to end, p50",
        case.get("held_by_running_task_p50_ms"),
        "ms",
    )


def _history_rows(n: str, case: dict[str, Any], bare: dict[str, Any]) -> list[dict[str, Any]]:
    """History events per node, and the largest single history, against their goals."""
    largest = case["largest_history"]
    return [
        figure(
            f"{n}: history events per node",
            case["events_per_node"],
            "events",
            bare.get("events_per_node"),
            "bare fan-out per child",
            f"≤ {GOAL_EVENTS_PER_NODE:.0f}",
            goal_met(case["events_per_node"], lambda v: v <= GOAL_EVENTS_PER_NODE),
        ),
        figure(
            f"{n}: largest single history ({case['largest_history_workflow']})",
            largest,
            "events",
            bare.get("parent_history"),
            "bare fan-out parent",
            f"< {GOAL_LARGEST_HISTORY:,}",
            largest < GOAL_LARGEST_HISTORY,
        ),
    ]


def _case_rows(
    size: str,
    case: dict[str, Any],
    bare: dict[str, Any],
    listed: dict[str, Any] | None,
    signal_p50: float,
) -> list[dict[str, Any]]:
    """Every row of one size's scale-in; `listed`: the listed bare fan-outs, if run."""
    n = f"{size} nodes"
    return [
        *_time_rows(n, case, bare),
        *_delete_rows(n, case, bare),
        *_post_rows(n, case, bare, signal_p50),
        *step_rows(n, case, (listed or {}).get(size) or bare),
        _held_row(n, case),
        *load_rows(n, case, bare, (listed or {}).get(size, {})),
        *_history_rows(n, case, bare),
    ]


def figures(
    echo: dict[str, Any],
    fanout: dict[str, Any],
    unloaded: dict[str, Any],
    cases: dict[str, Any],
    fanout_listed: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The headline rows of the report."""
    update_p50, signal_p50 = echo["update_p50_ms"], echo["signal_p50_ms"]
    rows = [
        figure("bare update round trip p50", update_p50, "ms", headline=True),
        figure("bare update round trip p99", echo["update_p99_ms"], "ms"),
        figure("bare signal call p50", signal_p50, "ms", headline=True),
        figure(
            "API GET /v1/actions/{id} p50 (API + DB floor)",
            unloaded["api_get_action_p50_ms"],
            "ms",
        ),
        figure(
            "API complete_lifecycle on a finished token p50 (no Temporal call)",
            unloaded["api_complete_noop_p50_ms"],
            "ms",
        ),
        *unloaded_rows(unloaded, update_p50),
    ]
    for size, case in cases.items():
        rows += _case_rows(size, case, fanout.get(size, {}), fanout_listed, signal_p50)
    return rows
