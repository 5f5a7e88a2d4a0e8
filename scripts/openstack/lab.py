# ruff: noqa: T201 -- progress of a command line tool, on stdout.
"""`up`, `status`, `down` and `clean`: the lab's whole life cycle."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor

from scripts.openstack import configs, datastores, services
from scripts.openstack.compute import register_compute
from scripts.openstack.identity import seed_identity
from scripts.openstack.install import is_installed, pins_digest
from scripts.openstack.layout import ADMIN_PASSWORD, PORT_OFFSETS, Layout
from scripts.openstack.outputs import write_outputs
from scripts.openstack.procs import (
    LabError,
    http_answers,
    port_is_free,
    running_pid,
    stop_all,
    wait_for,
)
from scripts.openstack.rest import Cloud
from scripts.openstack.seed import seed_flavors, seed_image, seed_networks

API_NAMES = ("keystone", "placement", "glance", "neutron", "nova")
#: Written once the schemas match these pins: a warm start skips every db sync.
SYNC_MARKER = ".synced"


def _step(started: float, message: str) -> None:
    print(f"[{time.monotonic() - started:6.1f} s] {message}", flush=True)


def _check_ports(layout: Layout) -> None:
    """Fail early, naming the port, rather than with a service's bind error."""
    if datastores.postgres_running(layout) or running_pid(layout, "keystone") is not None:
        return
    busy = [
        f"{name}={layout.port(name)}"
        for name in PORT_OFFSETS
        if not port_is_free(layout.port(name))
    ]
    if busy:
        raise LabError(f"ports in use: {', '.join(busy)}; set WARDEN_LAB_PORT_BASE to move the lab")


def _datastores_up(layout: Layout) -> None:
    # Erlang boots while PostgreSQL starts and creates the databases.
    with ThreadPoolExecutor(max_workers=2) as pool:
        rabbit = pool.submit(datastores.rabbit_up, layout)
        datastores.postgres_up(layout)
        rabbit.result()


def _sync(layout: Layout) -> None:
    marker = layout.data / SYNC_MARKER
    if marker.exists() and marker.read_text().strip() == pins_digest():
        return
    services.sync_all(layout)
    marker.write_text(pins_digest() + "\n")


def _wait_api(layout: Layout, name: str) -> None:
    def answers() -> bool:
        if running_pid(layout, name) is None:
            raise LabError(f"{name} exited; see {layout.log / (name + '.log')}")
        return http_answers(layout.url(name) + "/")

    wait_for(f"{name} API", answers, 180, layout.log / f"{name}.log")


def _admin(layout: Layout) -> Cloud:
    return Cloud(layout.auth_url, "admin", ADMIN_PASSWORD, "admin")


def up(layout: Layout) -> None:
    """Start (or restart on existing data) and seed; prints each step's elapsed time."""
    started = time.monotonic()
    if not is_installed(layout):
        raise LabError(f"{layout.venv} lacks the pinned services: run `install` first")
    _check_ports(layout)
    _datastores_up(layout)
    _step(started, "PostgreSQL and RabbitMQ up")
    configs.write_all(layout)
    _sync(layout)
    _step(started, "schemas in place")
    for name in API_NAMES:
        services.start_api(layout, name)
    _wait_api(layout, "keystone")
    urls = {name: layout.url(name) + api.suffix for name, api in services.apis(layout).items()}
    ids = seed_identity(layout, _admin(layout), urls)
    _step(started, "Keystone seeded")
    # Conductor and scheduler build a Placement client as they start: from now on.
    _wait_api(layout, "placement")
    for name in ("nova-conductor", "nova-scheduler"):
        services.start_nova_daemon(layout, name)
    for name in API_NAMES:
        _wait_api(layout, name)
    _step(started, "every API answers")
    # nova-compute registers with Placement as it starts, so only now.
    services.start_nova_daemon(layout, "nova-compute")
    admin = _admin(layout)
    ids.update(seed_networks(admin, ids["demo_project_id"]))
    ids["image_id"] = seed_image(admin)
    ids.update({f"flavor_{name}": flavor for name, flavor in seed_flavors(admin).items()})
    _step(started, "flavors, image and networks seeded")
    register_compute(layout, admin)
    clouds, lab_json = write_outputs(layout, ids)
    _step(started, f"compute node ready; wrote {clouds} and {lab_json}")


def status(layout: Layout) -> int:
    """Print one line per process; 0 when all run and every API answers."""
    healthy = True
    lines = [("postgres", datastores.postgres_running(layout), layout.port("postgres"))]
    lines.append(("rabbitmq", running_pid(layout, "rabbitmq") is not None, layout.port("amqp")))
    for name in API_NAMES:
        alive = running_pid(layout, name) is not None and http_answers(layout.url(name) + "/")
        lines.append((name, alive, layout.port(name)))
    lines.extend((name, running_pid(layout, name) is not None, 0) for name in services.NOVA_DAEMONS)
    for name, alive, port in lines:
        healthy = healthy and alive
        where = f"127.0.0.1:{port}" if port else "-"
        print(f"{name:16} {'up' if alive else 'DOWN':5} {where}")
    return 0 if healthy else 1


def down(layout: Layout) -> None:
    """Stop in reverse order of dependence; the data stays."""
    stop_all(layout, [*services.NOVA_DAEMONS, *API_NAMES])
    datastores.rabbit_down(layout)
    datastores.postgres_down(layout)


def clean(layout: Layout) -> None:
    """`down`, then delete everything under the root except the venv."""
    down(layout)
    for name in ("data", "etc", "log", "run", "build", "clouds.yaml", "lab.json"):
        path = layout.root / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
