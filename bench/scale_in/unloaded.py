"""complete_lifecycle → delete with one victim at a time (no burst), each round beside
bare calls timed in the same round, and the API's own floors."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.echo import BASELINE_CALLS
from bench.measure import ms, pct, timed
from bench.scale_in.api_calls import attach_hook_policy
from bench.scale_in.probes import BareProbes
from bench.scale_in.receiver import Completion, HookReceiver
from bench.scale_in.settings import UNLOADED_PAUSE_S, UNLOADED_ROUNDS
from bench.stack import Stack
from bench.warden_api import create_cluster, ok, wait_action


@dataclass
class _Rounds:
    """What the counted rounds measured (the warm-up round is left out)."""

    latencies: list[float] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)
    victim_calls: list[float] = field(default_factory=list)
    victim_to_activity: list[float] = field(default_factory=list)
    updates: list[float] = field(default_factory=list)
    #: Tokens of the victims seen so far, the warm-up's included.
    seen: set[str] = field(default_factory=set)

    def record(self, victims: list[tuple[Completion | None, tuple[float, float] | None]]) -> None:
        """The round's victims: complete_lifecycle sent → delete, and the call itself."""
        for done, deleted in victims:
            if deleted is not None and done is not None:
                self.latencies.append(deleted[0] - done.sent)
            if done is not None and done.returned:
                self.calls.append(done.returned - done.sent)


async def _scale_in_one(
    api: httpx.AsyncClient, receiver: HookReceiver, cluster_id: str, seen: set[str]
) -> None:
    """Scale in one node, and wait until its victim is completed, deleted and done."""
    response = await api.post(f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": 1}})
    # The call is timed as an app makes it, with no poll of the bench's own beside it (a
    # GET costs the API and this process 1-2 ms of CPU each): the action is read once
    # the receiver has seen the victim completed and deleted.
    await receiver.victim_done(cluster_id, seen, 120)
    action = await wait_action(api, str(ok(response, 202)["action"]), 120, 0.05)
    if action["status"] != "SUCCEEDED":
        raise RuntimeError(f"scale in 1 node: {action['status_reason']}")
    await asyncio.sleep(0.2)  # the delete notification is fire-and-forget


async def _bare_round(bare: BareProbes, rounds: _Rounds, *, warm_up: bool) -> None:
    """Each after the same pause: a bare victim signalled as it announces itself, and a
    bare update."""
    await asyncio.sleep(UNLOADED_PAUSE_S)
    call, to_activity = await bare.victim()
    await asyncio.sleep(UNLOADED_PAUSE_S)
    start = time.perf_counter()
    await bare.update()
    if not warm_up:
        rounds.victim_calls.append(call)
        rounds.victim_to_activity.append(to_activity)
        rounds.updates.append(time.perf_counter() - start)


async def _api_floors(
    api: httpx.AsyncClient, cluster_id: str, token: str
) -> tuple[list[float], list[float]]:
    """complete_lifecycle on a finished token (no Temporal call), and a GET of it."""
    body = {"complete_lifecycle": {"lifecycle_action_token": token}}
    url = f"/v1/clusters/{cluster_id}/actions"
    noop = await timed(lambda: api.post(url, json=body), BASELINE_CALLS // 3)
    reads = await timed(lambda: api.get(f"/v1/actions/{token}"), BASELINE_CALLS // 3)
    return noop, reads


async def unloaded_probe(
    stack: Stack,
    receiver: HookReceiver,
    profile_id: str,
    bare: BareProbes,
    rounds: int = UNLOADED_ROUNDS,
) -> dict[str, Any]:
    """complete_lifecycle → delete with one victim at a time (no burst), and API floors.

    Each round scales in one node, whose token the receiver completes the moment its
    message arrives (so the call meets the victim's first workflow task ending, as a
    bare victim's signal meets its announce activity's completion). Then, each after
    the same pause, a bare victim signalled as it announces itself and a bare update:
    the round's floor and baseline, on the machine as it was for that round.
    """
    async with stack.api() as api:
        cluster_id, _, _ = await create_cluster(stack, api, profile_id, rounds + 1)
        await attach_hook_policy(api, cluster_id, receiver)
        found = _Rounds()
        for round_no in range(rounds + 1):
            await _scale_in_one(api, receiver, cluster_id, found.seen)
            victims = receiver.take_new(cluster_id, found.seen)
            if round_no:  # the first round warms up
                found.record(victims)
            await _bare_round(bare, found, warm_up=round_no == 0)
        token = min(found.seen)
        noop, reads = await _api_floors(api, cluster_id, token)
    return {
        "rounds": rounds,
        "samples": len(found.latencies),
        "complete_to_delete_p50_ms": ms(pct(found.latencies, 0.5)),
        "complete_to_delete_max_ms": ms(max(found.latencies, default=None)),
        "complete_call_p50_ms": ms(pct(found.calls, 0.5)),
        "bare_victim_signal_p50_ms": ms(pct(found.victim_calls, 0.5)),
        "bare_victim_to_activity_p50_ms": ms(pct(found.victim_to_activity, 0.5)),
        "bare_update_p50_ms": ms(pct(found.updates, 0.5)),
        "api_get_action_p50_ms": ms(pct(reads, 0.5)),
        "api_complete_noop_p50_ms": ms(pct(noop, 0.5)),
        "finished_token": token,
        "cluster_id": cluster_id,
    }
