"""Warden against a secured Temporal: mutual TLS and an API key, through a proxy in front
of the real dev server (tests/support/grpc_proxy.py), configured only with Temporal's
own environment variables (`TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`).

A worker and an API of their own (own task queue and database, the session's simcloud
and codec keys) connect through the proxy; the `warden` CLI drives that API.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from config import Settings
from config.temporal_client import connect_temporal
from tests.integration.conftest import Warden
from tests.support.grpc_proxy import GrpcProxy, Pki, make_pki
from tests.support.processes import PYTHON, Proc, free_port, wait_http

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
WARDEN = str(Path(PYTHON).parent / "warden")
TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  db_password: {type: string, hidden: true}
resources:
  config:
    type: OS::Heat::TestResource
    properties: {value: {get_param: db_password}}
"""
WORKFLOW_SERVICE = "/temporal.api.workflowservice.v1.WorkflowService/"


def mtls_env(pki: Pki, address: str, *, ca: Path | None = None) -> dict[str, str]:
    """Temporal's own variables for a client certificate and a private CA."""
    return {
        "TEMPORAL_ADDRESS": address,
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(ca or pki.ca),
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(pki.client_cert),
        "TEMPORAL_TLS_CLIENT_KEY_PATH": str(pki.client_key),
    }


@asynccontextmanager
async def secured_warden(
    warden: Warden, var: Path, temporal_env: Mapping[str, str]
) -> AsyncIterator[str]:
    """A worker and an API of their own, reaching Temporal as `temporal_env` says."""
    var.mkdir(parents=True)
    env = {
        **warden.env,
        **temporal_env,
        "WARDEN_VAR_DIR": str(var),
        "WARDEN_TASK_QUEUE": f"warden-secured-{uuid.uuid4()}",
        "WARDEN_API_PORT": str(free_port()),
        "WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{free_port()}",
    }
    api = f"http://127.0.0.1:{env['WARDEN_API_PORT']}"
    uvicorn = [PYTHON, "-m", "uvicorn", "api.app:create_app", "--factory"]
    procs = [
        Proc("worker", [PYTHON, "-m", "worker"], env, var / "worker.log"),
        Proc("api", [*uvicorn, "--port", env["WARDEN_API_PORT"]], env, var / "api.log"),
    ]
    try:
        for proc in procs:
            proc.start()
        health = env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://") + "/health"
        await asyncio.to_thread(wait_http, health, procs[0])
        await asyncio.to_thread(wait_http, f"{api}/health", procs[1])
        yield api
    finally:
        for proc in reversed(procs):
            proc.stop()


async def warden_cli(api: str, *args: str) -> Any:
    """`warden -f json …` against `api`, as a user runs it."""
    # PYTHONPATH: the checkout under test, whichever one the venv was installed from.
    env = {**os.environ, "WARDEN_URL": api, "WARDEN_TOKEN": "it-admin", "PYTHONPATH": str(ROOT)}
    done = await asyncio.to_thread(
        subprocess.run,
        [WARDEN, "-f", "json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"warden {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout) if done.stdout.strip() else None


async def create_stack_with_cli(api: str, tmp_path: Path, secret: str) -> dict[str, Any]:
    template = tmp_path / "secret.yaml"
    template.write_text(TEMPLATE)
    name = f"sec{uuid.uuid4().hex[:8]}"
    await warden_cli(
        api, "stack", "create", name, "-t", str(template), "-P", f"db_password={secret}", "--wait"
    )
    shown: dict[str, Any] = await warden_cli(api, "stack", "show", name)
    stack: dict[str, Any] = shown.get("stack", shown)
    return stack


def called(proxy: GrpcProxy, method: str) -> list[dict[str, str]]:
    return [r for r in proxy.requests if r.get(":path") == WORKFLOW_SERVICE + method]


async def test_worker_api_and_cli_work_through_mutual_tls(warden: Warden, tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    proxy = GrpcProxy(
        warden.env["TEMPORAL_ADDRESS"], tls=pki.server_context(require_client_cert=True)
    ).start()
    try:
        env = mtls_env(pki, proxy.address)
        async with secured_warden(warden, tmp_path / "var", env) as api:
            stack = await create_stack_with_cli(api, tmp_path, "mtls-secret")
            assert stack["stack_status"] == "CREATE_COMPLETE", stack
            assert stack["parameters"]["db_password"] == "******"
    finally:
        proxy.stop()
    # Every call went through the proxy: the worker's polls, the API's updates.
    assert called(proxy, "PollWorkflowTaskQueue")
    assert called(proxy, "ExecuteMultiOperation") or called(proxy, "UpdateWorkflowExecution")


async def test_wrong_ca_or_missing_client_certificate_fails_clearly(
    warden: Warden, tmp_path: Path
) -> None:
    pki = make_pki(tmp_path / "pki")
    stranger = make_pki(tmp_path / "other", name="stranger")
    proxy = GrpcProxy(
        warden.env["TEMPORAL_ADDRESS"], tls=pki.server_context(require_client_cert=True)
    ).start()
    try:
        settings = Settings(temporal_address=proxy.address)
        with pytest.raises(RuntimeError, match=r"(?i)certificate.*(unknown ?issuer|verif)"):
            await connect_temporal(settings, env=mtls_env(pki, proxy.address, ca=stranger.ca))
        no_client_cert = {"TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(pki.ca)}
        with pytest.raises(RuntimeError, match="Failed client connect"):
            await connect_temporal(settings, env=no_client_cert)
        client = await connect_temporal(settings, env=mtls_env(pki, proxy.address))
        await client.service_client.check_health()
    finally:
        proxy.stop()


async def test_api_key_reaches_temporal_as_a_bearer_authorization_header(
    warden: Warden, tmp_path: Path
) -> None:
    pki = make_pki(tmp_path / "pki")
    key = f"key-{uuid.uuid4().hex}"
    proxy = GrpcProxy(
        warden.env["TEMPORAL_ADDRESS"],
        tls=pki.server_context(require_client_cert=False),
        required_authorization=f"Bearer {key}",
    ).start()
    try:
        env = {
            "TEMPORAL_ADDRESS": proxy.address,
            "TEMPORAL_API_KEY": key,
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(pki.ca),
        }
        async with secured_warden(warden, tmp_path / "var", env) as api:
            stack = await create_stack_with_cli(api, tmp_path, "api-key-secret")
            assert stack["stack_status"] == "CREATE_COMPLETE", stack
        assert proxy.refusals == []
        assert called(proxy, "PollWorkflowTaskQueue")
        assert {r.get("authorization") for r in proxy.requests} == {f"Bearer {key}"}

        wrong = {**env, "TEMPORAL_API_KEY": "wrong"}
        with pytest.raises(RuntimeError):
            await connect_temporal(Settings(temporal_address=proxy.address), env=wrong)
        assert proxy.refusals
        assert proxy.refusals[-1].endswith("authorization 'Bearer wrong'")
    finally:
        proxy.stop()
