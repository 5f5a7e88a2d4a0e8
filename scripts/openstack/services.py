"""The lab's OpenStack processes: database syncs, the uWSGI APIs and Nova's daemons."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from scripts.openstack.iniconf import Sections, uwsgi_ini
from scripts.openstack.layout import ADMIN_PASSWORD, REGION, Layout
from scripts.openstack.procs import LabError, running_pid, spawn


@dataclass(frozen=True)
class Api:
    """One WSGI API under its own uWSGI master."""

    module: str
    env: dict[str, str]
    #: Path under the port that the catalog names; "" for the root.
    suffix: str = ""
    uwsgi: Sections = field(default_factory=dict)


def apis(layout: Layout) -> dict[str, Api]:
    etc = layout.etc
    # Glance takes image data chunked; uWSGI must hand the raw body through.
    chunked: Sections = {
        "uwsgi": {"http-raw-body": True, "http-chunked-input": True, "http-auto-chunked": True}
    }
    return {
        "keystone": Api(
            "keystone.wsgi.api:application",
            {"OS_KEYSTONE_CONFIG_FILES": str(etc / "keystone" / "keystone.conf")},
        ),
        "placement": Api(
            "placement.wsgi.api:application", {"OS_PLACEMENT_CONFIG_DIR": str(etc / "placement")}
        ),
        "glance": Api(
            "glance.wsgi.api:application",
            {"OS_GLANCE_CONFIG_DIR": str(etc / "glance")},
            "",
            chunked,
        ),
        "neutron": Api(
            "neutron.wsgi.api:application",
            {
                "OS_NEUTRON_CONFIG_DIR": str(etc / "neutron"),
                "OS_NEUTRON_CONFIG_FILES": "neutron.conf;ml2_conf.ini",
            },
        ),
        "nova": Api(
            "nova.wsgi.osapi_compute:application",
            {
                "OS_NOVA_CONFIG_DIR": str(etc / "nova"),
                "OS_NOVA_CONFIG_FILES": "api-paste.ini;nova.conf",
            },
            "/v2.1",
        ),
    }


NOVA_DAEMONS = ("nova-conductor", "nova-scheduler", "nova-compute")


def start_api(layout: Layout, name: str) -> None:
    if running_pid(layout, name) is not None:
        return
    api = apis(layout)[name]
    ini = uwsgi_ini(layout, name, api.module, api.uwsgi)
    spawn(layout, name, [str(layout.bin("uwsgi")), "--ini", str(ini)], api.env)


def start_nova_daemon(layout: Layout, name: str) -> None:
    if running_pid(layout, name) is not None:
        return
    conf = layout.etc / "nova" / "nova.conf"
    # nova-compute through our launcher, which lets it load the lab's virt driver.
    binary = "warden-lab-nova-compute" if name == "nova-compute" else name
    spawn(layout, name, [str(layout.bin(binary)), "--config-file", str(conf)], {})


def _manage(layout: Layout, tool: str, *conf: str) -> list[str]:
    files = [arg for path in conf for arg in ("--config-file", str(layout.etc / path))]
    return [str(layout.bin(tool)), *files]


def sync_chains(layout: Layout) -> dict[str, list[list[str]]]:
    """Per service, the commands that create or upgrade its schema, in order."""
    ks = _manage(layout, "keystone-manage", "keystone/keystone.conf")
    nova = _manage(layout, "nova-manage", "nova/nova.conf")
    owner = ["--keystone-user", "root", "--keystone-group", "root"]
    return {
        "keystone": [
            [*ks, "db_sync"],
            [*ks, "fernet_setup", *owner],
            [*ks, "credential_setup", *owner],
            [*ks, "bootstrap", *_bootstrap_args(layout)],
        ],
        "placement": [
            [*_manage(layout, "placement-manage", "placement/placement.conf"), "db", "sync"]
        ],
        "glance": [[*_manage(layout, "glance-manage", "glance/glance-api.conf"), "db_sync"]],
        "neutron": [
            [
                *_manage(
                    layout,
                    "warden-lab-neutron-db-manage",
                    "neutron/neutron.conf",
                    "neutron/ml2_conf.ini",
                ),
                "upgrade",
                "heads",
            ]
        ],
        "nova": [
            [*nova, "api_db", "sync"],
            [*nova, "cell_v2", "map_cell0", "--database_connection", layout.db_url("nova_cell0")],
            # Exit code 2: a cell with this database and transport exists already.
            [*nova, "cell_v2", "create_cell", "--name", "cell1"],
            [*nova, "db", "sync"],
        ],
    }


def _bootstrap_args(layout: Layout) -> list[str]:
    url = layout.url("keystone")
    return [
        "--bootstrap-password",
        ADMIN_PASSWORD,
        "--bootstrap-region-id",
        REGION,
        "--bootstrap-admin-url",
        url,
        "--bootstrap-internal-url",
        url,
        "--bootstrap-public-url",
        url,
    ]


def run_chain(layout: Layout, name: str, chain: list[list[str]]) -> None:
    log = layout.log / f"{name}-manage.log"
    with log.open("ab") as out:
        for argv in chain:
            out.write(f"+ {' '.join(argv)}\n".encode())
            out.flush()
            result = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False)  # noqa: S603
            if result.returncode not in (0, 2) or (
                result.returncode == 2 and "create_cell" not in argv
            ):
                raise LabError(f"{name}: `{' '.join(argv[:3])} ...` failed; see {log}")


def sync_all(layout: Layout) -> None:
    """Run every service's chain, two at a time: each is one CPU-bound Python process."""
    layout.log.mkdir(parents=True, exist_ok=True)
    chains = sync_chains(layout)
    # Nova's chain is the longest: start it first so the others fill the second core.
    order = ["nova", "keystone", "neutron", "glance", "placement"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run_chain, layout, name, chains[name]) for name in order]
        for future in futures:
            future.result()
