"""The stacks benchmark's figures: creates (`create_figures`), then the API's round
trips against a bare update, and against their floors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.figures import figure
from bench.stacks.create_figures import create_rows
from bench.stacks.settings import IDLE_S

GOAL_ROUND_TRIP_RATIO = 1.3
GOAL_ROUND_TRIP_P99_RATIO = 2.0


def _paced(echo: dict[str, Any]) -> bool:
    """Whether the run timed bare updates paced like the locks."""
    return (
        echo.get("paced_update_p50_ms") is not None and echo.get("paced_update_p99_ms") is not None
    )


def _echo_rows(echo: dict[str, Any]) -> list[dict[str, Any]]:
    """The bare update, the written one, and both paced like the locks."""
    bare50 = echo["update_p50_ms"]
    rows = [
        figure("bare update round trip p50", bare50, "ms", headline=True),
        figure("bare update round trip p99", echo["update_p99_ms"], "ms", headline=True),
        figure(
            "bare update that answers after a local activity's SQLite write, p50",
            echo.get("written_update_p50_ms"),
            "ms",
            bare50,
            "bare update p50",
            headline=True,
        ),
    ]
    if echo.get("paced_update_p50_ms") is not None:
        for key, what in (("update", "bare update"), ("written_update", "bare written update")):
            rows.append(
                figure(
                    f"{what} round trip p50, paced like the locks ({IDLE_S:g} s idle before each)",
                    echo[f"paced_{key}_p50_ms"],
                    "ms",
                    echo[f"{key}_p50_ms"],
                    f"{what} p50, back to back",
                    headline=True,
                )
            )
    return rows


def _get_rows(trips: dict[str, Any]) -> list[dict[str, Any]]:
    """The API's GET of the stack, back to back and paced like the locks."""
    get50 = trips["get_p50_ms"]
    rows = [figure("API GET stack p50 (API + DB floor)", get50, "ms", headline=True)]
    paced_get50 = trips.get("paced_get_p50_ms")
    if paced_get50 is not None:
        rows.append(
            figure(
                f"API GET stack p50, paced like the locks ({IDLE_S:g} s idle before each)",
                paced_get50,
                "ms",
                get50,
                "API GET p50, back to back",
                headline=True,
            )
        )
    return rows


@dataclass(frozen=True)
class _HeldTo:
    """What a round trip is held to: a bare update, and its floor (a written update plus
    the API's GET); `how` and `api_how` say how they were paced."""

    update50: float
    update99: float
    written50: float | None
    written99: float | None
    api50: float
    api99: float | None
    how: str = ""
    api_how: str = ""


def _held_to(name: str, echo: dict[str, Any], trips: dict[str, Any]) -> _HeldTo:
    """Back-to-back baselines; but locks are paced (each waits for the last to finish,
    then `IDLE_S`): held to a bare update paced the same way, when the run measured one."""
    back = _HeldTo(
        echo["update_p50_ms"],
        echo["update_p99_ms"],
        echo.get("written_update_p50_ms"),
        echo.get("written_update_p99_ms"),
        trips["get_p50_ms"],
        trips.get("get_p99_ms"),
    )
    if name != "lock" or not _paced(echo):
        return back
    how = f", paced: {IDLE_S:g} s idle before each"
    api50, api99, api_how = back.api50, back.api99, ""
    if (paced_get50 := trips.get("paced_get_p50_ms")) is not None:
        api50, api99, api_how = paced_get50, trips.get("paced_get_p99_ms", api99), how
    return _HeldTo(
        echo["paced_update_p50_ms"],
        echo["paced_update_p99_ms"],
        echo.get("paced_written_update_p50_ms"),
        echo.get("paced_written_update_p99_ms"),
        api50,
        api99,
        how,
        api_how,
    )


def _floor_rows(
    label: str, p50: float | None, p99: float | None, held: _HeldTo
) -> list[dict[str, Any]]:
    """A round trip against its floor: a written update plus the API's GET."""
    rows = []
    if held.written50 is not None:
        rows.append(
            figure(
                f"{label} round trip p50, against its floor",
                p50,
                "ms",
                held.written50 + held.api50,
                f"written update p50{held.how} + API GET p50{held.api_how}",
                headline=True,
            )
        )
    if held.written99 is not None and held.api99 is not None and p99 is not None:
        rows.append(
            figure(
                f"{label} round trip p99, against its floor",
                p99,
                "ms",
                held.written99 + held.api99,
                f"written update p99{held.how} + API GET p99{held.api_how}",
                headline=True,
            )
        )
    return rows


def _trip_rows(
    name: str, label: str, echo: dict[str, Any], trips: dict[str, Any]
) -> list[dict[str, Any]]:
    """A round trip's p50 and p99 against the bare update's, and against its floor."""
    p50, p99, calls = (trips[f"{name}_{k}"] for k in ("p50_ms", "p99_ms", "calls"))
    held = _held_to(name, echo, trips)
    met50 = None if p50 is None else p50 <= GOAL_ROUND_TRIP_RATIO * held.update50
    met99 = None if p99 is None else p99 <= GOAL_ROUND_TRIP_P99_RATIO * held.update99
    goal50, goal99 = f"≤ {GOAL_ROUND_TRIP_RATIO}x bare", f"≤ {GOAL_ROUND_TRIP_P99_RATIO:g}x bare"
    rows = [
        figure(
            f"{label} round trip p50 (x{calls})",
            p50,
            "ms",
            held.update50,
            f"bare update p50{held.how}",
            goal50,
            met50,
        ),
        figure(
            f"{label} round trip p99",
            p99,
            "ms",
            held.update99,
            f"bare update p99{held.how}",
            goal99,
            met99,
        ),
    ]
    if name == "lock" and _paced(echo):
        rows.append(
            figure(
                f"{label} round trip p50, against a back-to-back bare update",
                p50,
                "ms",
                echo["update_p50_ms"],
                "bare update p50",
                headline=True,
            )
        )
    return rows + _floor_rows(label, p50, p99, held)


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Create times against the critical-path floor, round trips against a bare update."""
    echo, trips = results["echo"], results["round_trips"]
    return [
        *create_rows(results),
        *_echo_rows(echo),
        *_get_rows(trips),
        *_trip_rows("mark", "mark-unhealthy PATCH", echo, trips),
        *_trip_rows("lock", "lock POST", echo, trips),
        figure("unlock POST round trip p50", trips["unlock_p50_ms"], "ms"),
    ]
