"""The real `openstack` CLI (python-openstackclient with the heat and senlin plugins)
drives Warden unchanged: a password login at simcloud's Keystone, whose catalog sends
`orchestration` and `clustering` to Warden's API."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.integration.conftest import Warden
from tests.support.eventually import eventually
from tests.support.processes import PYTHON
from tests.support.simcloud_server import SimControl

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

OPENSTACK = str(Path(PYTHON).parent / "openstack")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "config": {"type": "OS::Heat::TestResource", "properties": {"value": "v1"}},
        "web": {
            "type": "OS::Nova::Server",
            "properties": {
                "image": "cirros",
                "flavor": "m1.tiny",
                "metadata": {"config": {"get_attr": ["config", "output"]}},
            },
        },
    },
    "outputs": {"web_id": {"value": {"get_resource": "web"}}},
}


class OpenStackCLI:
    """`openstack …` with OS_CLOUD pointing at a clouds.yaml for this Warden."""

    def __init__(self, warden: Warden, tmp: Path) -> None:
        clouds = tmp / "clouds.yaml"
        entry = yaml.safe_load((EXAMPLES / "clouds.yaml").read_text())["clouds"]["warden-dev"]
        entry["auth"]["auth_url"] = warden.auth_url
        clouds.write_text(yaml.safe_dump({"clouds": {"warden-it": entry}}))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env |= {"OS_CLIENT_CONFIG_FILE": str(clouds), "OS_CLOUD": "warden-it"}
        self.tmp = tmp

    def run(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run one command; its exit status is the caller's to check."""
        return subprocess.run(
            [OPENSTACK, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.tmp,
        )

    async def ok(self, *args: str, timeout: float = 180) -> str:
        """Run one command off the event loop; fail the test with its stderr unless it exits 0."""
        done = await asyncio.to_thread(self.run, *args, timeout=timeout)
        assert done.returncode == 0, f"openstack {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    async def json(self, *args: str, timeout: float = 180) -> Any:
        """Run one command with `-f json` and parse the JSON it prints last (`--wait`
        prints progress lines before it)."""
        out = await self.ok(*args, "-f", "json", timeout=timeout)
        lines = out.splitlines()
        start = max((i for i, line in enumerate(lines) if line in ("{", "[", "[]")), default=0)
        return json.loads("\n".join(lines[start:]))


@pytest.fixture
def cli(warden: Warden, tmp_path: Path) -> OpenStackCLI:
    return OpenStackCLI(warden, tmp_path)


async def test_openstack_stack_create_mark_unhealthy_and_show(cli: OpenStackCLI) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    template = cli.tmp / "stack.yaml"
    template.write_text(yaml.safe_dump(TEMPLATE))

    created = await cli.json("stack", "create", "-t", str(template), "--wait", name)
    assert created["stack_status"] == "CREATE_COMPLETE", created

    await cli.ok("stack", "resource", "mark", "unhealthy", name, "web", "probe failed")
    resource = await cli.json("stack", "resource", "show", name, "web")
    assert resource["resource_status"] == "CHECK_FAILED", resource
    assert resource["resource_status_reason"] == "probe failed"

    shown = await cli.json("stack", "show", name)
    assert shown["stack_name"] == name
    assert shown["id"] == created["id"]
    listed = await cli.json("stack", "list")
    assert name in [s["Stack Name"] for s in listed]


async def test_openstack_cluster_profile_create_and_scale_in(
    cli: OpenStackCLI, warden: Warden
) -> None:
    suffix = uuid.uuid4().hex[:8]
    profile, cluster = f"cli-profile-{suffix}", f"cli-cluster-{suffix}"
    spec = str(EXAMPLES / "server-profile.yaml")

    created_profile = await cli.json("cluster", "profile", "create", "--spec-file", spec, profile)
    assert created_profile["name"] == profile, created_profile
    profiles = await cli.json("cluster", "profile", "list")
    assert profile in [p["name"] for p in profiles]

    await cli.ok(
        "cluster", "create", "--profile", profile, "--desired-capacity", "2", "--max-size", "5",
        "--wait", cluster,
    )  # fmt: skip
    shown = await cli.json("cluster", "show", cluster)
    assert shown["status"] == "ACTIVE", shown
    cluster_id = shown["id"]

    await cli.ok("cluster", "shrink", "--count", "1", "--wait", cluster)  # "scale in"
    nodes = await cli.json(
        "cluster", "node", "list", "--filters", f"cluster_id={cluster_id}", "--full-id"
    )
    assert len(nodes) == 1, nodes
    before_update = nodes[0]["id"]
    clusters = {c["name"]: c for c in await cli.json("cluster", "list", "--full-id")}
    assert clusters[cluster]["status"] == "ACTIVE", clusters[cluster]

    # A new image rolled out with Senlin's cluster update (the server rebuilt in place).
    spec_v2 = str(EXAMPLES / "server-profile-v2.yaml")
    v2 = await cli.json("cluster", "profile", "create", "--spec-file", spec_v2, f"{profile}-v2")
    await cli.ok("cluster", "update", "--profile", f"{profile}-v2", "--wait", cluster)
    updated = await cli.json("cluster", "show", cluster)
    assert (updated["status"], updated["profile_id"]) == ("ACTIVE", v2["id"]), updated
    nodes = await cli.json(
        "cluster", "node", "list", "--filters", f"cluster_id={cluster_id}", "--full-id"
    )
    assert [n["profile_name"] for n in nodes] == [f"{profile}-v2"], nodes
    assert nodes[0]["id"] == before_update, nodes  # the same node, as in Senlin

    # `cluster recover` as the CLI sends it ({"check": false}): nothing is known to have
    # failed, so nothing changes. With --check, the cloud is asked first and the server
    # that failed behind the cluster's back is replaced (Senlin's default, RECREATE).
    await cli.ok("cluster", "recover", "--wait", cluster)
    [same] = await cli.json("cluster", "node", "list", "--filters", f"cluster_id={cluster_id}")
    assert same["physical_id"] == nodes[0]["physical_id"][:8], same
    async with httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        await SimControl(sim).fault(nodes[0]["physical_id"], "error", cured_by=["RECREATE"])
    await cli.ok("cluster", "recover", "--check", "true", "--wait", cluster)
    [healed] = await cli.json(
        "cluster", "node", "list", "--filters", f"cluster_id={cluster_id}", "--full-id"
    )
    assert healed["status"] == "ACTIVE", healed
    assert healed["physical_id"] != nodes[0]["physical_id"], healed


async def test_openstack_cluster_type_and_build_info_commands(cli: OpenStackCLI) -> None:
    """Discovery as senlinclient does it: type lists, a type's schema, build info."""
    profile_types = await cli.json("cluster", "profile", "type", "list")
    assert sorted((t["name"], t["version"]) for t in profile_types) == [
        ("os.heat.stack", "1.0"),
        ("os.nova.server", "1.0"),
        ("os.nova.server", "1.1"),
    ]
    stack = await cli.json("cluster", "profile", "type", "show", "os.heat.stack-1.0")
    assert "template" in stack["schema"] and stack["support_status"], stack
    policy_types = {t["name"] for t in await cli.json("cluster", "policy", "type", "list")}
    assert policy_types == {
        "senlin.policy.deletion",
        "senlin.policy.health",
        "senlin.policy.batch",
        "senlin.policy.scaling",
        "senlin.policy.loadbalance",
        "senlin.policy.zone_placement",
        "senlin.policy.affinity",
    }
    shown = await cli.json("cluster", "policy", "type", "show", "senlin.policy.deletion-1.1")
    assert "hooks" in shown["schema"] and shown["support_status"], shown
    info = await cli.ok("cluster", "build", "info")
    assert "revision" in info, info


async def test_openstack_cluster_receiver_grows_a_cluster_through_its_alarm_url(
    cli: OpenStackCLI,
) -> None:
    suffix = uuid.uuid4().hex[:8]
    profile, cluster = f"rcv-profile-{suffix}", f"rcv-cluster-{suffix}"
    spec = str(EXAMPLES / "server-profile.yaml")
    await cli.ok("cluster", "profile", "create", "--spec-file", spec, profile)
    await cli.ok(
        "cluster", "create", "--profile", profile, "--desired-capacity", "0", "--wait", cluster
    )
    receiver = await cli.json(
        "cluster", "receiver", "create", "--type", "webhook", "--cluster", cluster,
        "--action", "CLUSTER_SCALE_OUT", "--params", "count=2", f"grow-{suffix}",
    )  # fmt: skip
    channel = receiver["channel"]  # the CLI prints it as a JSON string
    alarm_url = (json.loads(channel) if isinstance(channel, str) else channel)["alarm_url"]
    listed = await cli.json("cluster", "receiver", "list")
    assert f"grow-{suffix}" in [r["name"] for r in listed]
    async with httpx.AsyncClient() as anyone:  # what an alarm service sends: no token
        fired = await anyone.post(alarm_url, json={"alarm_name": "cpu high", "current": "alarm"})
    assert fired.status_code == 202, fired.text

    async def grown() -> dict[str, Any] | None:
        shown: dict[str, Any] = await cli.json("cluster", "show", cluster)
        return shown if shown["desired_capacity"] == 2 and shown["status"] == "ACTIVE" else None

    await eventually(grown, timeout=90, what=f"{cluster} grown to 2 by its receiver")
    await cli.ok("cluster", "receiver", "delete", "--force", f"grow-{suffix}")
