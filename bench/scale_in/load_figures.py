"""A scale-in's figures against what it asks of the machine: the steps of each victim's
delete, the floors probed under the same load, and the Temporal server's work beside
the bare fan-outs'."""

from __future__ import annotations

from typing import Any

from bench.figures import figure
from bench.scale_in.signal_paths import SIGNAL_STEPS
from bench.stack import BUSY_RETRIES
from workflows.cluster.scale_in import START_WAVE

#: What the `listed` bare fan-out's victims carry, as Warden's do.
LISTED = (
    f"victims started in waves of {START_WAVE} as Warden's, with its 4 search attributes, summary, "
    "details and status upsert"
)


def busy_retries(work: dict[str, float]) -> float | None:
    """The server's tasks that gave up on a workflow's lock and were retried
    (`Stack.temporal_work`); None from a run that did not count them."""
    retries = [v for k, v in work.items() if k.startswith(BUSY_RETRIES)]
    calls = any(k.endswith(" calls") for k in work)
    return sum(retries) if retries or calls else None


def _store_seconds(work: dict[str, float]) -> float | None:
    """Seconds the Temporal server spent in its store's calls (`Stack.temporal_work`)."""
    seconds = [v for k, v in work.items() if k.endswith(" s")]
    return sum(seconds) if seconds else None


def _temporal_cpu(figures: dict[str, Any], key: str = "cpu_s") -> float | None:
    return (figures.get(key) or {}).get("temporal")


def step_rows(n: str, case: dict[str, Any], bare: dict[str, Any]) -> list[dict[str, Any]]:
    """After the signal is recorded, each of `SIGNAL_STEPS` against the same step of the
    bare fan-out (the listed one when it ran). Warden's last step is the cloud call that
    deletes the server, which the bare victims do not make."""
    ours, floor = case.get("delete_steps_p50_ms") or {}, bare.get("delete_steps_p50_ms") or {}
    label = "bare fan-out" + (", listed victims" if bare.get("listed") else "") + ", same step"
    return [
        figure(
            f"{n}: complete_lifecycle → delete, step: {step} p50",
            ours.get(step),
            "ms",
            floor.get(step),
            label,
            headline=True,
        )
        for step in SIGNAL_STEPS
        if ours.get(step) is not None
    ]


def _probed_rows(n: str, case: dict[str, Any], bare: dict[str, Any]) -> list[dict[str, Any]]:
    """The POST and the delete against the floors of their steps, probed under the
    scale-in's own load (`LoadProbe`); none from a run that did not probe."""
    probed = case.get("load_probe") or {}
    keys = ("signal", "victim_signal", "victim_to_activity", "api_get", "api_noop")
    signal, victim_signal, victim_delete, get, noop = (probed.get(f"{k}_p50_ms") for k in keys)
    if victim_signal is None or victim_delete is None or get is None:
        return []
    during = f"probed during this scale-in (x{probed.get('victim_signal_count', 0)})"
    own_load = "bare fan-out's own load"
    return [
        figure(f"{n}: bare signal to an idle workflow p50, {during}", signal, "ms"),
        figure(
            f"{n}: bare victim: signal call p50, {during}",
            victim_signal,
            "ms",
            bare.get("signal_call_p50_ms"),
            own_load,
        ),
        figure(
            f"{n}: bare victim: signal → activity p50, {during}",
            victim_delete,
            "ms",
            bare.get("signal_to_activity_p50_ms"),
            own_load,
        ),
        figure(f"{n}: API GET /v1/actions/{{id}} p50, {during}", get, "ms"),
        figure(
            f"{n}: API complete_lifecycle on a finished token p50 (no Temporal call), " + during,
            noop,
            "ms",
            get,
            "API GET, same load",
        ),
        *_floor_rows(n, case, victim_signal + get, victim_delete + get),
    ]


def _floor_rows(
    n: str, case: dict[str, Any], post_floor: float, delete_floor: float
) -> list[dict[str, Any]]:
    """The POST and the delete against the sums of their steps' probed floors."""
    return [
        figure(
            f"{n}: complete_lifecycle POST p50, against its floor under the same load",
            case["complete_post_p50_ms"],
            "ms",
            post_floor,
            "bare victim's signal call + API GET, probed during this scale-in",
            headline=True,
        ),
        figure(
            f"{n}: complete_lifecycle → delete p50, against its floor under the same load",
            case["complete_to_delete_p50_ms"],
            "ms",
            delete_floor,
            "bare victim's signal → activity + API GET, probed during this scale-in",
            headline=True,
        ),
    ]


def load_rows(
    n: str, case: dict[str, Any], bare: dict[str, Any], listed: dict[str, Any]
) -> list[dict[str, Any]]:
    """The POST and the delete against the floors of their steps, probed under the
    scale-in's own load (`LoadProbe`); and what that load is on the Temporal server,
    against the bare fan-out and the `listed` one (victims with Warden's listings)."""
    same_size = "bare fan-out, same size"
    return [
        *_probed_rows(n, case, bare),
        figure(
            f"{n}: Temporal server CPU",
            _temporal_cpu(case, "scale_in_cpu_s"),
            "s",
            _temporal_cpu(bare),
            same_size,
            headline=True,
        ),
        figure(
            f"{n}: a node's delete history, bytes (mean)",
            case.get("node_delete_history_bytes_mean"),
            "B",
            bare.get("child_history_bytes_mean"),
            "bare victim",
        ),
        figure(
            f"{n}: Temporal's store, time in its calls (summed)",
            _store_seconds(case.get("temporal_work") or {}),
            "s",
            _store_seconds(bare.get("temporal_work") or {}),
            same_size,
            headline=True,
        ),
        *_listed_rows(n, case, bare, listed),
    ]


def _listed_rows(
    n: str, case: dict[str, Any], bare: dict[str, Any], listed: dict[str, Any]
) -> list[dict[str, Any]]:
    """The Temporal server's work for Warden's scale-in against a bare fan-out whose
    victims carry what Warden's carry for the UI and `warden` listings; and what those
    listings do to the bare fan-out's own latency."""
    if not listed:
        return []
    return [
        figure(
            f"{n}: bare fan-out, {LISTED}: Temporal server CPU",
            _temporal_cpu(listed),
            "s",
            _temporal_cpu(bare),
            "bare fan-out, same size",
            headline=True,
        ),
        figure(
            f"{n}: bare fan-out, {LISTED}: signal → activity p50",
            listed.get("signal_to_activity_p50_ms"),
            "ms",
            bare.get("signal_to_activity_p50_ms"),
            "bare fan-out",
            headline=True,
        ),
        figure(
            f"{n}: scale-in end to end, against the listed bare fan-out",
            case.get("e2e_s"),
            "s",
            listed.get("e2e_s"),
            f"bare fan-out, {LISTED}",
            headline=True,
        ),
        *_against_listed_rows(n, case, listed),
    ]


def _against_listed_rows(
    n: str, case: dict[str, Any], listed: dict[str, Any]
) -> list[dict[str, Any]]:
    """The scale-in's server work and delete p50 against the listed bare fan-out's."""
    label = f"bare fan-out, {LISTED}"
    work, listed_work = case.get("temporal_work") or {}, listed.get("temporal_work") or {}
    return [
        figure(
            f"{n}: Temporal server CPU, against the listed bare fan-out",
            _temporal_cpu(case, "scale_in_cpu_s"),
            "s",
            _temporal_cpu(listed),
            label,
            headline=True,
        ),
        figure(
            f"{n}: Temporal's store, time in its calls, against the listed bare fan-out",
            _store_seconds(work),
            "s",
            _store_seconds(listed_work),
            label,
            headline=True,
        ),
        figure(
            f"{n}: Temporal's tasks retried on a busy workflow's lock, against the listed "
            "bare fan-out",
            busy_retries(work),
            "tasks",
            busy_retries(listed_work),
            label,
        ),
        figure(
            f"{n}: complete_lifecycle → delete p50, against the listed bare fan-out",
            case["complete_to_delete_p50_ms"],
            "ms",
            listed.get("signal_to_activity_p50_ms"),
            f"bare signal → activity p50, {LISTED}",
            headline=True,
        ),
        *_against_grown_rows(n, case),
    ]


def _against_grown_rows(n: str, case: dict[str, Any]) -> list[dict[str, Any]]:
    """The delete p50 against the listed bare fan-out run right before the scale-in,
    on the same database (`BENCH_SCALE_IN_GROWN=1`); none without it."""
    grown = case.get("fanout_listed_grown")
    if not grown:
        return []
    return [
        figure(
            f"{n}: complete_lifecycle → delete p50, against the listed bare fan-out "
            "run on the same database (after the cluster's creation)",
            case["complete_to_delete_p50_ms"],
            "ms",
            grown.get("signal_to_activity_p50_ms"),
            "bare signal → activity p50, listed victims, BENCH_SCALE_IN_GROWN=1",
            headline=True,
        )
    ]
