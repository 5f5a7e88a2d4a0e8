"""The scale-in benchmark's own calls to Warden's API: a deletion policy with a webhook
hook, and what a cluster's actions and events say afterwards."""

from __future__ import annotations

import uuid
from collections import Counter

import httpx

from bench.scale_in.receiver import HookReceiver
from bench.scale_in.settings import HOOK_TIMEOUT_S
from bench.warden_api import ok


async def attach_hook_policy(
    api: httpx.AsyncClient, cluster_id: str, receiver: HookReceiver
) -> str:
    """A deletion policy whose webhook hook calls `receiver`, attached to the cluster."""
    policy = {
        "policy": {
            "name": f"bench-hooks-{uuid.uuid4().hex[:6]}",
            "spec": {
                "type": "senlin.policy.deletion",
                "version": "1.1",
                "properties": {
                    "criteria": "OLDEST_FIRST",
                    "hooks": {
                        "type": "webhook",
                        "params": {"url": f"{receiver.url}/hook"},
                        "timeout": HOOK_TIMEOUT_S,
                    },
                },
            },
        }
    }
    policy_id = str((ok(await api.post("/v1/policies", json=policy), 201))["policy"]["id"])
    attach = {"policy_attach": {"policy_id": policy_id}}
    ok(await api.post(f"/v1/clusters/{cluster_id}/actions", json=attach), 202)
    return policy_id


async def succeeded_node_deletes(api: httpx.AsyncClient, tokens: set[str]) -> int:
    """How many of the NODE_DELETE actions `tokens` name have SUCCEEDED."""
    found, marker = 0, None
    while True:
        params: dict[str, str | int] = {"name": "NODE_DELETE", "status": "SUCCEEDED", "limit": 1000}
        if marker:
            params["marker"] = marker
        page = (ok(await api.get("/v1/actions", params=params), 200))["actions"]
        found += sum(1 for a in page if a["id"] in tokens)
        if len(page) < 1000:
            return found
        marker = page[-1]["id"]


async def warning_events(api: httpx.AsyncClient, cluster_id: str) -> dict[str, int]:
    """WARNING and ERROR events of a cluster, counted by the start of their reason."""
    reasons: Counter[str] = Counter()
    for level in ("WARNING", "ERROR"):
        marker = None
        while True:
            params: dict[str, str | int] = {"cluster_id": cluster_id, "level": level, "limit": 1000}
            if marker:
                params["marker"] = marker
            page = ok(await api.get("/v1/events", params=params), 200)["events"]
            reasons.update(f"{level}: {e['action']}: {e['status_reason'][:60]}" for e in page)
            if len(page) < 1000:
                break
            marker = page[-1]["id"]
    return dict(reasons.most_common())
