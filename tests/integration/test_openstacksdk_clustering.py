"""openstacksdk's clustering proxy and `openstack cluster ...` drive Warden unchanged.

The clients find the API at `<api>/cluster` (where the Keystone catalog lists
`clustering`), discover v1 there and then speak Senlin's API; auth is a static token
(keystoneauth's `admin_token` plugin), so no Keystone is needed.
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import openstack
import pytest
from fastapi import FastAPI, Request, Response
from openstack.clustering.v1._proxy import Proxy
from openstack.connection import Connection

from simcloud.server import serve_in_thread
from tests.integration.conftest import Warden
from tests.support.eventually import eventually
from tests.support.processes import PYTHON

pytestmark = [
    pytest.mark.integration,
    # openstacksdk 4.22 warns about its own internals (InfluxDB on every connection,
    # `_compute_attributes` on every resource): nothing the caller can change.
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK50Warning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK60Warning"),
]

OPENSTACK_CLI = os.path.join(os.path.dirname(PYTHON), "openstack")
SECRET = "sdk-hook-secret-123"


@dataclass
class HookInbox:
    """A webhook target collecting the lifecycle messages Warden POSTs to it."""

    url: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> FastAPI:
        """`POST /hooks` records the message and answers 202."""
        app = FastAPI()

        @app.post("/hooks", status_code=202)
        async def receive(request: Request) -> Response:
            body = await request.json()
            with self._lock:
                self.messages.append(body)
            return Response(status_code=202)

        return app

    def for_cluster(self, cluster_id: str) -> list[dict[str, Any]]:
        """Messages about one cluster's nodes."""
        with self._lock:
            return [m for m in self.messages if m.get("cluster_id") == cluster_id]


@pytest.fixture(scope="module")
def inbox() -> Iterator[HookInbox]:
    """The lifecycle webhook target, served over HTTP for the module."""
    hooks = HookInbox()
    with serve_in_thread(hooks.app()) as served:
        hooks.url = f"{served.url}/hooks"
        yield hooks


def clustering(warden: Warden) -> Proxy:
    """openstacksdk's clustering proxy, endpoint overridden, token auth without Keystone."""
    endpoint = f"{warden.api_url}/cluster"
    conn: Connection = openstack.connect(
        auth_type="admin_token",
        auth={"endpoint": endpoint, "token": "it-admin"},
        clustering_endpoint_override=endpoint,
        load_yaml_config=False,
        load_envvars=False,
    )
    proxy: Proxy = conn.clustering
    return proxy


def _profile_spec() -> dict[str, Any]:
    return {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": "cirros"},
    }


def _deletion_spec(hook_url: str) -> dict[str, Any]:
    return {
        "type": "senlin.policy.deletion",
        "version": "1.1",
        "properties": {
            "criteria": "OLDEST_FIRST",
            "hooks": {
                "type": "webhook",
                "params": {"url": hook_url, "secret": SECRET},
                "timeout": 120,
            },
        },
    }


def _wait_action(sdk: Proxy, action_id: str) -> Any:
    action = sdk.get_action(action_id)
    return sdk.wait_for_status(action, "SUCCEEDED", failures=["FAILED"], interval=0.3, wait=90)


def _create_cluster(sdk: Proxy, name: str, size: int) -> tuple[Any, Any]:
    """Profile and cluster via the proxy; waits (sdk's way) for ACTIVE."""
    profile = sdk.create_profile(name=f"{name}-profile", spec=_profile_spec())
    cluster = sdk.create_cluster(
        name=name, profile_id=profile.id, desired_capacity=size, min_size=0, max_size=5
    )
    cluster = sdk.wait_for_status(cluster, "ACTIVE", failures=["ERROR"], interval=0.3, wait=90)
    return profile, cluster


def _attach_and_scale_in(sdk: Proxy, cluster: Any, hook_url: str) -> dict[str, Any]:
    policy = sdk.create_policy(name=f"{cluster.name}-del", spec=_deletion_spec(hook_url))
    assert policy.type == "senlin.policy.deletion-1.1" and policy.project_id == "demo"
    attached = sdk.attach_policy_to_cluster(cluster, policy.id)
    _wait_action(sdk, attached["action"])
    [binding] = list(sdk.cluster_policies(cluster.id))
    assert (binding.policy_id, binding.policy_name, binding.is_enabled) == (
        policy.id,
        policy.name,
        True,
    )
    assert sdk.get_cluster_policy(policy.name, cluster.id).cluster_name == cluster.name
    nodes = list(sdk.nodes(cluster_id=cluster.id))
    assert len(nodes) == 2 and all(n.status == "ACTIVE" and n.profile_name for n in nodes)
    scaled = sdk.scale_in_cluster(cluster, 1)
    return {"policy": policy, "nodes": nodes, "action": scaled["action"]}


def _after_scale_in(sdk: Proxy, cluster: Any, policy: Any, victim: str, action: str) -> None:
    done = _wait_action(sdk, action)
    assert done.action == "CLUSTER_SCALE_IN" and done.cluster_id == cluster.id
    assert done.start_at is not None and done.end_at is not None
    left = [n.id for n in sdk.nodes(cluster_id=cluster.id)]
    assert len(left) == 1 and victim not in left
    assert sdk.find_node(victim) is None
    shown = sdk.get_cluster(cluster.name)
    assert shown.desired_capacity == 1 and shown.node_ids == left
    assert shown.profile_name and shown.project_id == "demo"
    names = {a.action for a in sdk.actions(cluster_id=cluster.id)}
    assert {"CLUSTER_CREATE", "CLUSTER_ATTACH_POLICY", "CLUSTER_SCALE_IN"} <= names
    victim_actions = list(sdk.actions(target_id=victim))
    assert [a.action for a in victim_actions] == ["NODE_DELETE"]
    assert victim_actions[0].cluster_id == cluster.id
    events = list(sdk.events(cluster_id=cluster.id))
    assert events and all(e.cluster_id == cluster.id for e in events)
    assert any(e.obj_id == victim for e in events)
    assert [e.obj_id for e in sdk.events(obj_id=victim)] and all(
        e.obj_id == victim for e in sdk.events(obj_id=victim)
    )
    assert policy.id in {p.id for p in sdk.policies()}


def _delete_all(sdk: Proxy, cluster: Any, policy: Any | None, profile: Any) -> None:
    deleting = sdk.delete_cluster(cluster)
    assert deleting is not None and deleting.id
    sdk.wait_for_delete(cluster, interval=0.3, wait=90)
    assert sdk.find_cluster(cluster.id) is None
    if policy is not None:
        sdk.delete_policy(policy, ignore_missing=False)
    sdk.delete_profile(profile, ignore_missing=False)
    assert sdk.find_profile(profile.id) is None


async def test_sdk_scales_in_through_a_webhook_hook_completed_over_rest(
    warden: Warden, inbox: HookInbox
) -> None:
    sdk = await asyncio.to_thread(clustering, warden)
    name = f"sdk-{uuid.uuid4().hex[:6]}"
    profile, cluster = await asyncio.to_thread(_create_cluster, sdk, name, 2)
    assert cluster.status == "ACTIVE" and len(cluster.node_ids) == 2
    started = await asyncio.to_thread(_attach_and_scale_in, sdk, cluster, inbox.url)

    async def hook_message() -> dict[str, Any] | None:
        messages = inbox.for_cluster(cluster.id)
        return messages[0] if messages else None

    message = await eventually(hook_message, timeout=30, what="the lifecycle webhook")
    victim = message["node_id"]
    assert victim in {n.id for n in started["nodes"]}
    # No client has complete_lifecycle: the consumer calls Warden's REST API.
    async with warden.client() as api:
        completed = await api.post(
            f"/v1/clusters/{cluster.id}/actions",
            json={
                "complete_lifecycle": {"lifecycle_action_token": message["lifecycle_action_token"]}
            },
        )
    assert completed.status_code == 202, completed.text
    await asyncio.to_thread(
        _after_scale_in, sdk, cluster, started["policy"], victim, started["action"]
    )
    await asyncio.to_thread(_delete_all, sdk, cluster, started["policy"], profile)


async def _openstack(warden: Warden, *args: str) -> tuple[int, str]:
    # keystoneauth's admin_token plugin uses --os-endpoint as is, without discovery, so
    # it names the versioned endpoint (as it would for Senlin itself).
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    proc = await asyncio.create_subprocess_exec(
        OPENSTACK_CLI,
        "--os-auth-type",
        "admin_token",
        "--os-endpoint",
        f"{warden.api_url}/cluster/v1",
        "--os-token",
        "it-admin",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode or 0, out.decode()


async def test_openstack_cluster_list_and_node_list_cli(warden: Warden) -> None:
    sdk = await asyncio.to_thread(clustering, warden)
    name = f"cli-{uuid.uuid4().hex[:6]}"
    profile, cluster = await asyncio.to_thread(_create_cluster, sdk, name, 1)
    try:
        code, listed = await _openstack(warden, "cluster", "list", "-f", "json")
        assert code == 0, listed
        assert name in listed and cluster.id[:8] in listed and "ACTIVE" in listed  # short ids
        code, nodes = await _openstack(
            warden, "cluster", "node", "list", "--filters", f"cluster_id={cluster.id}", "--full-id"
        )  # --full-id: the short form shows 8 characters of each id
        assert code == 0, nodes
        assert cluster.node_ids[0] in nodes
    finally:
        await asyncio.to_thread(_delete_all, sdk, cluster, None, profile)


async def test_openstack_cluster_show_cli(warden: Warden) -> None:
    sdk = await asyncio.to_thread(clustering, warden)
    name = f"cls-{uuid.uuid4().hex[:6]}"
    profile, cluster = await asyncio.to_thread(_create_cluster, sdk, name, 0)
    try:
        code, shown = await _openstack(warden, "cluster", "show", name, "-f", "json")
    finally:
        await asyncio.to_thread(_delete_all, sdk, cluster, None, profile)
    assert code == 0, shown
    assert cluster.id in shown
