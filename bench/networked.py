"""Networked stacks: `uv run python -m bench networked`.

100 servers, each with its own Neutron port and floating IP, on a network, subnet and
router the stack makes (about 300 resources), beside the same 100 servers without any
networking resource (Nova plugs each into the project network), on one stack of
processes whose simcloud answers every OpenStack call after `LATENCY_MS`. For each,
`RUNS` times, interleaved: the create (POST → CREATE_COMPLETE), a heal (one server
marked unhealthy, then an update that replaces it, moving its port and floating IP),
and the delete (→ gone). Figures are medians, the networked stack against the plain one
in the same run.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

import httpx

from bench.figures import figure, figure_rows
from bench.report import git_state
from bench.stack import Stack, running_stack
from bench.stacks.creates import expect, settled

SERVERS = 100
RUNS = 3
LATENCY_MS = 200
TIMEOUT_S = 900.0
BASE = "/v1/bench/stacks"
SERVER = {"image": "cirros", "flavor": "m1.tiny"}


def plain(count: int) -> dict[str, Any]:
    """`count` servers on the project's own network, no networking resources."""
    resources = {
        f"server{i:03d}": {"type": "OS::Nova::Server", "properties": dict(SERVER)}
        for i in range(count)
    }
    return {"heat_template_version": "2021-04-16", "resources": resources}


def networked(count: int) -> dict[str, Any]:
    """`count` servers, each with a port and a floating IP, on a routed network of
    their own (as heat-templates' `servers_in_new_neutron_net.yaml`)."""
    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": "bench-net"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": "192.168.0.0/20"},
        },
        "router": {
            "type": "OS::Neutron::Router",
            "properties": {"external_gateway_info": {"network": "public"}},
        },
        "interface": {
            "type": "OS::Neutron::RouterInterface",
            "properties": {
                "router": {"get_resource": "router"},
                "subnet": {"get_resource": "subnet"},
            },
        },
    }
    for i in range(count):
        port, server = f"port{i:03d}", f"server{i:03d}"
        resources[port] = {
            "type": "OS::Neutron::Port",
            "properties": {
                "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}],
            },
        }
        resources[server] = {
            "type": "OS::Nova::Server",
            "properties": SERVER | {"networks": [{"port": {"get_resource": port}}]},
        }
        resources[f"fip{i:03d}"] = {
            "type": "OS::Neutron::FloatingIP",
            "properties": {"floating_network": "public", "port_id": {"get_resource": port}},
        }
    return {"heat_template_version": "2021-04-16", "resources": resources}


async def _timed_settle(api: httpx.AsyncClient, url: str, want: str, begun: float) -> float:
    stack = await settled(api, url, TIMEOUT_S)
    if stack["stack_status"] != want:
        raise RuntimeError(f"{url}: {stack['stack_status']} {stack['stack_status_reason']}")
    return time.perf_counter() - begun


async def _gone(api: httpx.AsyncClient, url: str, begun: float) -> float:
    while (await api.get(url)).status_code != 404:
        stack = (await api.get(url)).json().get("stack", {})
        if stack.get("stack_status") == "DELETE_FAILED":
            raise RuntimeError(f"{url}: {stack.get('stack_status_reason')}")
        if time.perf_counter() - begun > TIMEOUT_S:
            raise TimeoutError(f"{url} not deleted")
    return time.perf_counter() - begun


async def lifecycle(api: httpx.AsyncClient, template: dict[str, Any]) -> dict[str, float]:
    """Create, heal one server, delete: each one's wall seconds."""
    name = f"net-{uuid.uuid4().hex[:8]}"
    begun = time.perf_counter()
    body = expect(await api.post(BASE, json={"stack_name": name, "template": template}), 201)
    url = body.json()["stack"]["links"][0]["href"]
    create_s = await _timed_settle(api, url, "CREATE_COMPLETE", begun)
    begun = time.perf_counter()
    mark = {"mark_unhealthy": True, "resource_status_reason": "bench"}
    expect(await api.patch(f"{url}/resources/server050", json=mark), 200)
    expect(await api.put(url, json={"template": template}), 202)
    heal_s = await _timed_settle(api, url, "UPDATE_COMPLETE", begun)
    begun = time.perf_counter()
    expect(await api.delete(url), 204)
    delete_s = await _gone(api, url, begun)
    return {"create_s": create_s, "heal_s": heal_s, "delete_s": delete_s}


async def _measure(stack: Stack) -> dict[str, list[dict[str, float]]]:
    async with httpx.AsyncClient() as sim:
        faults = {"latency_ms": LATENCY_MS}
        expect(await sim.post(f"{stack.simcloud_url}/sim/api-faults", json=faults), 200)
    runs: dict[str, list[dict[str, float]]] = {"plain": [], "networked": []}
    async with stack.api(timeout=120) as api:
        for _ in range(RUNS):
            runs["plain"].append(await lifecycle(api, plain(SERVERS)))
            runs["networked"].append(await lifecycle(api, networked(SERVERS)))
    return runs


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def figures(runs: dict[str, list[dict[str, float]]]) -> list[dict[str, Any]]:
    """Each phase of the networked stack beside the plain one's."""
    label = f"{SERVERS} servers, no networking resources"
    return [
        figure(
            f"{SERVERS} servers + ports + floating IPs, {phase}",
            _median(runs["networked"], key),
            "s",
            _median(runs["plain"], key),
            label,
            headline=True,
        )
        for phase, key in (
            ("create", "create_s"),
            ("mark one unhealthy + update", "heal_s"),
            ("delete", "delete_s"),
        )
    ]


async def run() -> dict[str, Any]:
    """The plain and networked lifecycles, interleaved, on one fresh stack."""
    git = git_state()
    started = time.perf_counter()
    async with running_stack() as stack:
        runs = await _measure(stack)
    return {
        "figures": figures(runs),
        "runs": runs,
        "setup": {
            "servers": SERVERS,
            "resources_networked": len(networked(SERVERS)["resources"]),
            "latency_ms_per_openstack_call": LATENCY_MS,
            "runs": RUNS,
            "total_s": round(time.perf_counter() - started, 1),
            "git": git,
        },
    }


def table(results: dict[str, Any]) -> str:
    """The figures, then the setup, as Markdown."""
    setup = "\n".join(f"| {k} | {v} |" for k, v in results["setup"].items() if k != "git")
    return "\n".join(
        [*figure_rows(results["figures"]), "", "| setup | value |", "|---|---|", setup]
    )
