"""`warden dev` (what `make run` runs): all four processes up, health+json, clean stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.processes import PYTHON, Proc, free_port, port_open, wait_http
from tests.support.simcloud_server import PASSWORD_AUTH

pytestmark = pytest.mark.integration


def test_warden_dev_starts_everything_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    ports = {name: free_port() for name in ("temporal", "ui", "api", "worker", "sim")}
    env = {
        "WARDEN_VAR_DIR": str(tmp_path / "var"),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{ports['temporal']}",
        "WARDEN_TEMPORAL_UI_PORT": str(ports["ui"]),
        "WARDEN_API_PORT": str(ports["api"]),
        "WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{ports['worker']}",
        "WARDEN_SIMCLOUD_PORT": str(ports["sim"]),
        "WARDEN_DEV_TOKEN": "fixed-dev-token",
    }
    warden = str(Path(PYTHON).parent / "warden")
    dev = Proc("warden-dev", [warden, "dev"], env, tmp_path / "dev.log")
    dev.start()
    try:
        wait_http(f"http://127.0.0.1:{ports['api']}/health", dev, timeout=90)
        banner_deadline = time.monotonic() + 10
        while "Warden is up" not in dev.tail(200) and time.monotonic() < banner_deadline:
            time.sleep(0.1)
        out = dev.tail(200)
        assert f"http://127.0.0.1:{ports['api']}/docs" in out
        assert f"http://127.0.0.1:{ports['ui']}" in out and "fixed-dev-token" in out
        assert (tmp_path / "var" / "dev-token").read_text().strip() == "fixed-dev-token"
        assert (tmp_path / "var" / "temporal.db").exists()
        # Nothing at start-up for an operator to wonder about (the SDK's warning that the
        # sync activities' threads are fewer than the slots is meant: worker/main.py).
        assert "Warning" not in out, out

        api = httpx.get(
            f"http://127.0.0.1:{ports['api']}/v1/actions",
            headers={"X-Auth-Token": "fixed-dev-token"},
            timeout=10,
        )
        assert api.status_code == 200, api.text
        # Keystone mode: a password token from simcloud's Keystone works on the API too,
        # and the catalog sends OpenStack clients to Warden.
        issued = httpx.post(
            f"http://127.0.0.1:{ports['sim']}/identity/v3/auth/tokens", json=PASSWORD_AUTH
        )
        token = issued.json()["token"]
        services = {svc["type"]: svc["endpoints"][0]["url"] for svc in token["catalog"]}
        assert services["orchestration"] == (
            f"http://127.0.0.1:{ports['api']}/v1/{token['project']['id']}"
        )
        whoami = httpx.get(
            f"http://127.0.0.1:{ports['api']}/v1/whoami",
            headers={"X-Auth-Token": issued.headers["X-Subject-Token"]},
            timeout=10,
        )
        assert whoami.json()["project_id"] == token["project"]["id"], whoami.text
        _assert_dev_token_and_keystone_share_a_project(
            f"http://127.0.0.1:{ports['api']}", issued.headers["X-Subject-Token"]
        )
        worker = httpx.get(f"http://127.0.0.1:{ports['worker']}/health", timeout=5)
        assert worker.headers["content-type"] == "application/health+json"
        assert httpx.get(f"http://127.0.0.1:{ports['ui']}/", timeout=5).status_code == 200
        _assert_ui_decodes_through_the_codec_server(tmp_path / "var", ports)

        pids = json.loads((tmp_path / "var" / "dev-pids.json").read_text())
        os.kill(pids["worker"], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = json.loads((tmp_path / "var" / "dev-pids.json").read_text())
            if now["worker"] != pids["worker"]:
                break
            time.sleep(0.2)
        assert "worker exited with code -9; restarting" in dev.tail(400)
        wait_http(f"http://127.0.0.1:{ports['worker']}/health", dev, timeout=60)
    finally:
        code = dev.stop(signal.SIGINT, timeout=45)
    assert code == 0, dev.tail()
    assert "all processes stopped" in dev.tail()
    still_open = [name for name, port in ports.items() if port_open(port)]
    assert still_open == [], f"left running: {still_open}"
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert leftovers.stdout.strip() == "", leftovers.stdout


def _assert_ui_decodes_through_the_codec_server(var: Path, ports: dict[str, int]) -> None:
    """Encryption is on out of the box: a private dev key, the UI told where the codec
    server is, and that server answering the UI's origin without a token."""
    keys = var / "codec-keys.json"
    assert keys.stat().st_mode & 0o777 == 0o600
    assert json.loads(keys.read_text())["current"] == "dev-1"
    api = f"http://127.0.0.1:{ports['api']}"
    ui_settings = httpx.get(f"http://127.0.0.1:{ports['ui']}/api/v1/settings", timeout=5).json()
    assert ui_settings["Codec"]["Endpoint"] == f"{api}/codec"
    origin = f"http://localhost:{ports['ui']}"
    plain = {"metadata": {"encoding": "anNvbi9wbGFpbg=="}, "data": "MQ=="}  # json/plain, 1
    encoded = httpx.post(
        f"{api}/codec/encode",
        json={"payloads": [plain]},
        headers={"Origin": origin, "X-Namespace": "default"},
        timeout=5,
    )
    assert encoded.status_code == 200, encoded.text
    assert encoded.headers["access-control-allow-origin"] == origin
    decoded = httpx.post(f"{api}/codec/decode", json=encoded.json(), headers={"Origin": origin})
    assert decoded.json() == {"payloads": [plain]}


def _assert_dev_token_and_keystone_share_a_project(api: str, keystone_token: str) -> None:
    """What the dev token makes, `openstack` (a token from simcloud's Keystone) lists, and
    the other way round: one project under its Keystone id, not a private `demo`."""
    dev = {"X-Auth-Token": "fixed-dev-token"}
    ks = {"X-Auth-Token": keystone_token}
    project = httpx.get(f"{api}/v1/whoami", headers=dev, timeout=10).json()["project_id"]
    assert project == httpx.get(f"{api}/v1/whoami", headers=ks, timeout=10).json()["project_id"]
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": "cirros"},
    }
    made = httpx.post(
        f"{api}/v1/profiles", json={"profile": {"name": "shared", "spec": spec}}, headers=dev
    )
    assert made.status_code == 201, made.text
    listed = httpx.get(f"{api}/v1/profiles", headers=ks, timeout=10).json()["profiles"]
    assert [p["name"] for p in listed] == ["shared"]
    stacks = f"{api}/v1/{project}/stacks"
    assert httpx.get(stacks, headers=dev, timeout=10).json() == {"stacks": []}
    assert httpx.get(f"{api}/v1/demo/stacks", headers=dev, timeout=10).status_code == 403
