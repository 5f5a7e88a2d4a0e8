"""The `warden` CLI as a user runs it: a subprocess against the real API, worker,
Temporal dev server and simcloud. The first test is the README quickstart."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.integration.conftest import Warden
from tests.integration.test_platform import sim_servers
from tests.support.eventually import eventually
from tests.support.processes import PYTHON, Proc, free_port, wait_http
from tests.support.simcloud_server import SimControl

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
WARDEN = str(Path(PYTHON).parent / "warden")
#: As in the README: the example policy's secret; the drain is shortened for the test.
CONSUMER_ARGS = ["--secret", "change-me-please", "--drain-seconds", "1"]


class Cli:
    """Runs `warden …` with the environment a user would have after `make run`."""

    def __init__(self, warden: Warden, var_dir: Path) -> None:
        # The token comes from <var>/dev-token, as after `warden dev`: no WARDEN_TOKEN.
        var_dir.mkdir(parents=True, exist_ok=True)
        (var_dir / "dev-token").write_text("it-admin\n")
        user_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("WARDEN_", "TEMPORAL_"))
        }
        self.env = {**user_env, "WARDEN_URL": warden.api_url, "WARDEN_VAR_DIR": str(var_dir)}

    async def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """One command; with `ok`, exit 0 is asserted (stderr shown otherwise)."""
        done = await asyncio.to_thread(
            subprocess.run,
            [WARDEN, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            cwd=ROOT,
        )
        if ok:
            assert done.returncode == 0, f"warden {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    async def json(self, *args: str) -> Any:
        """One command with `-f json`, decoded."""
        return json.loads((await self.run(*args, "-f", "json")).stdout)


@pytest.fixture
def cli(warden: Warden, tmp_path: Path) -> Cli:
    return Cli(warden, tmp_path / "var")


@pytest.fixture
def consumer(warden: Warden, tmp_path: Path, cli: Cli) -> Iterator[int]:
    """examples/lifecycle_consumer.py started as the README says (token from var/)."""
    port = free_port()
    proc = Proc(
        "consumer",
        [PYTHON, "-m", "examples.lifecycle_consumer", "--port", str(port), *CONSUMER_ARGS],
        {**warden.env, "WARDEN_VAR_DIR": cli.env["WARDEN_VAR_DIR"]},
        tmp_path / "consumer.log",
    )
    proc.start()
    wait_http(f"http://127.0.0.1:{port}/received", proc)
    yield port
    proc.stop()


def example_policy_for(port: int, path: Path) -> Path:
    """examples/deletion-policy.yaml with the hook pointed at this test's consumer port."""
    spec = yaml.safe_load((EXAMPLES / "deletion-policy.yaml").read_text())
    assert spec["properties"]["hooks"]["params"]["url"] == "http://127.0.0.1:8090/hooks/lifecycle"
    spec["properties"]["hooks"]["params"]["url"] = f"http://127.0.0.1:{port}/hooks/lifecycle"
    path.write_text(yaml.safe_dump(spec))
    return path


async def test_quickstart_scale_in_waits_for_the_example_consumer(
    warden: Warden, cli: Cli, consumer: int, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    profile = f"small-{suffix}"
    cluster = f"web-{suffix}"
    await cli.run("profile", "create", profile, "-s", str(EXAMPLES / "server-profile.yaml"))
    created = await cli.run("cluster", "create", cluster, "-p", profile, "-c", "3", "--wait")
    assert "SUCCEEDED" in created.stdout
    policy_file = example_policy_for(consumer, tmp_path / "deletion-policy.yaml")
    await cli.run("policy", "create", f"drain-{suffix}", "-s", str(policy_file))
    await cli.run("cluster", "attach", cluster, f"drain-{suffix}", "--wait")
    nodes = await cli.json(
        "node", "list", "--cluster", (await cli.json("cluster", "show", cluster))["id"]
    )
    assert len(nodes) == 3
    oldest = sorted(nodes, key=lambda n: n["index"])[:2]

    scaled = await cli.run("cluster", "scale-in", cluster, "-n", "2", "--wait")

    # --wait showed each victim waiting on its hook, with its deadline, then success.
    waiting = [
        line for line in scaled.stderr.splitlines() if "waiting for complete_lifecycle" in line
    ]
    assert {line.split()[0] for line in waiting} == {n["name"] for n in oldest}
    assert all("until" in line and "UTC" in line for line in waiting)
    assert "CLUSTER_SCALE_IN" in scaled.stderr and "SUCCEEDED" in scaled.stdout
    left = await cli.json("cluster", "show", cluster)
    assert left["desired_capacity"] == 1 and len(left["nodes"]) == 1
    servers = await sim_servers(warden)
    assert all(n["physical_id"] not in servers for n in oldest)
    # The consumer completed both hooks (its log names each token it completed).
    log = (tmp_path / "consumer.log").read_text()
    assert log.count("complete_lifecycle for token") == 2, log

    # The last server fails with no health policy watching: `recover --check` finds it.
    [last] = await cli.json("node", "list", "--cluster", left["id"])
    async with httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        await SimControl(sim).fault(last["physical_id"], "error", cured_by=["REBOOT"])
    healed = await cli.run(
        "cluster", "recover", cluster, "--check", "--operation", "REBOOT", "--wait"
    )
    assert "SUCCEEDED" in healed.stdout, healed.stdout
    [after] = await cli.json("node", "list", "--cluster", left["id"])
    assert (after["status"], after["physical_id"]) == ("ACTIVE", last["physical_id"]), after
    assert (await sim_servers(warden))[last["physical_id"]] == "ACTIVE"  # rebooted: cured
    await cli.run("cluster", "delete", cluster, "--wait")


async def test_cluster_update_rolls_in_batches_through_the_example_consumer(
    warden: Warden, cli: Cli, consumer: int, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    cluster = f"roll-{suffix}"
    await cli.run("profile", "create", f"v1-{suffix}", "-s", str(EXAMPLES / "server-profile.yaml"))
    # New user data too: the nodes are replaced (a new image alone is a rebuild in place).
    spec = yaml.safe_load((EXAMPLES / "server-profile-v2.yaml").read_text())
    spec["properties"]["user_data"] = "#!/bin/sh\necho v2\n"
    (tmp_path / "v2.yaml").write_text(yaml.safe_dump(spec))
    v2 = await cli.json("profile", "create", f"v2-{suffix}", "-s", str(tmp_path / "v2.yaml"))
    await cli.run("cluster", "create", cluster, "-p", f"v1-{suffix}", "-c", "4", "--wait")
    policy_file = example_policy_for(consumer, tmp_path / "deletion-policy.yaml")
    await cli.run("policy", "create", f"drain-{suffix}", "-s", str(policy_file))
    batches = yaml.safe_load((EXAMPLES / "batch-policy.yaml").read_text())
    batches["properties"]["pause_time"] = 1
    (tmp_path / "batch-policy.yaml").write_text(yaml.safe_dump(batches))
    await cli.run(
        "policy", "create", f"batches-{suffix}", "-s", str(tmp_path / "batch-policy.yaml")
    )
    for policy in (f"drain-{suffix}", f"batches-{suffix}"):
        await cli.run("cluster", "attach", cluster, policy, "--wait")

    rolled = await cli.run("cluster", "update", cluster, "--profile", f"v2-{suffix}", "--wait")

    # --wait showed each batch (2 of 2 nodes: min_in_service 2, max_batch_size 2).
    assert "batch 1/2" in rolled.stderr and "batch 2/2" in rolled.stderr, rolled.stderr
    assert "SUCCEEDED" in rolled.stdout
    shown = await cli.json("cluster", "show", cluster)
    assert shown["profile_id"] == v2["id"] and len(shown["nodes"]) == 4
    nodes = await cli.json("node", "list", "--cluster", shown["id"])
    assert {n["profile_id"] for n in nodes} == {v2["id"]}
    # The consumer drained and completed the hook of every replaced node.
    log = (tmp_path / "consumer.log").read_text()
    assert log.count("complete_lifecycle for token") == 4, log

    await cli.run("cluster", "delete", cluster, "--wait")


async def test_lifecycle_commands_heartbeat_and_complete_a_waiting_node(
    cli: Cli, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    profile, cluster = f"p-{suffix}", f"lc-{suffix}"
    await cli.run("profile", "create", profile, "-s", str(EXAMPLES / "server-profile.yaml"))
    await cli.run("cluster", "create", cluster, "-p", profile, "-c", "2", "--wait")
    spec = {
        "type": "senlin.policy.deletion",
        "version": "1.1",
        "properties": {
            "hooks": {"type": "zaqar", "params": {"queue": f"q-{suffix}"}, "timeout": 3600}
        },
    }
    (tmp_path / "hook.yaml").write_text(yaml.safe_dump(spec))
    await cli.run("policy", "create", f"hook-{suffix}", "-s", str(tmp_path / "hook.yaml"))
    await cli.run("cluster", "attach", cluster, f"hook-{suffix}", "--wait")

    accepted = await cli.json("cluster", "scale-in", cluster)
    scale_in = accepted["action"]
    token = await _waiting_token(cli, scale_in)
    shown = await cli.json("action", "show", token)
    assert shown["lifecycle"]["waiting"] is True
    first_deadline = shown["lifecycle"]["deadline"]

    beat = await cli.run("lifecycle", "heartbeat", token)
    assert "heartbeat_lifecycle sent" in beat.stdout
    after = await cli.json("action", "show", token)
    assert after["lifecycle"]["heartbeats"] == 1
    assert after["lifecycle"]["deadline"] >= first_deadline

    await cli.run("lifecycle", "complete", token)
    final = await cli.run("action", "wait", scale_in, "--timeout", "60")
    assert "SUCCEEDED" in final.stdout
    assert (await cli.json("action", "show", token))["status"] == "SUCCEEDED"
    # Completing again is harmless, as the API promises.
    await cli.run("lifecycle", "complete", token)
    await cli.run("cluster", "delete", cluster, "--wait")


async def _waiting_token(cli: Cli, parent: str) -> str:
    async def token() -> str | None:
        waiting = await cli.json("action", "list", "--status", "WAITING_LIFECYCLE_COMPLETION")
        mine = [str(a["id"]) for a in waiting if parent in a["depended_by"]]
        return mine[0] if mine else None

    return await eventually(
        token, timeout=30, interval=0.5, what=f"a victim of {parent} waiting on its hook"
    )


async def test_stack_mark_unhealthy_update_and_lock_through_the_cli(
    warden: Warden, cli: Cli
) -> None:
    name = f"shop{uuid.uuid4().hex[:6]}"
    created = await cli.run(
        "stack", "create", name, "-t", str(EXAMPLES / "stack-web.yaml"), "--wait"
    )
    assert "CREATE_COMPLETE" in created.stdout
    before = {r["resource_name"]: r for r in await cli.json("stack", "resources", name)}

    await cli.run("stack", "mark-unhealthy", name, "web", "--reason", "app reported it")
    marked = {r["resource_name"]: r for r in await cli.json("stack", "resources", name)}
    assert marked["web"]["resource_status"] == "CHECK_FAILED"
    assert marked["web"]["resource_status_reason"] == "app reported it"

    updated = await cli.run("stack", "update", name, "--wait")
    assert "UPDATE_COMPLETE" in updated.stdout
    after = {r["resource_name"]: r for r in await cli.json("stack", "resources", name)}
    new_server = after["web"]["physical_resource_id"]
    assert new_server != before["web"]["physical_resource_id"]
    assert after["salt"]["physical_resource_id"] == before["salt"]["physical_resource_id"]

    await cli.run("stack", "lock", name, "--level", "stacks", "--reason", "db maintenance")
    refused = await cli.run("stack", "update", name, ok=False)
    assert refused.returncode == 1
    assert (
        "409" in refused.stderr
        and "locked" in refused.stderr
        and "db maintenance" in refused.stderr
    )
    await cli.run("stack", "unlock", name)

    await cli.run("stack", "delete", name, "--wait")
    assert new_server not in await sim_servers(warden)
    gone = await cli.run("stack", "show", name, ok=False)
    assert gone.returncode == 1 and "404" in gone.stderr


async def test_errors_print_the_api_message_and_exit_non_zero(
    warden: Warden, cli: Cli, tmp_path: Path
) -> None:
    missing = await cli.run("cluster", "show", f"nope-{uuid.uuid4().hex[:6]}", ok=False)
    assert missing.returncode == 1
    assert "404" in missing.stderr and "could not be found" in missing.stderr
    assert "Traceback" not in missing.stderr

    cli.env["WARDEN_TOKEN"] = "not-a-token"
    refused = await cli.run("cluster", "list", ok=False)
    assert refused.returncode == 1 and "401" in refused.stderr
    del cli.env["WARDEN_TOKEN"]

    bad = tmp_path / "bad.yaml"
    bad.write_text("type: senlin.policy.deletion\nversion: 1.1\nproperties: {criteria: NEWEST}\n")
    invalid = await cli.run("policy", "create", "bad", "-s", str(bad), ok=False)
    assert invalid.returncode == 1 and "400" in invalid.stderr and "criteria" in invalid.stderr

    cli.env["WARDEN_URL"] = f"http://127.0.0.1:{free_port()}"
    down = await cli.run("cluster", "list", ok=False)
    assert down.returncode == 1 and "Cannot reach the Warden API" in down.stderr
    assert "Traceback" not in down.stderr

    cli.env["WARDEN_LOG_LEVEL"] = "loud"
    unusable = await cli.run("cluster", "list", ok=False)
    assert unusable.returncode == 1 and "WARDEN_LOG_LEVEL: Input should be" in unusable.stderr
    assert "Traceback" not in unusable.stderr
