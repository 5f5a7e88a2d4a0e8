# ruff: noqa: S608 -- SQL built from our own constants.
"""Making the one fake compute node usable: service up, host mapped, provider known."""

from __future__ import annotations

import subprocess
import urllib.parse
from datetime import UTC, datetime, timedelta

from scripts.openstack.datastores import psql
from scripts.openstack.layout import NOVA_HOST, Layout
from scripts.openstack.procs import LabError, pid_file, running_pid, wait_for
from scripts.openstack.rest import Cloud


def _compute_alive(layout: Layout) -> None:
    if running_pid(layout, "nova-compute") is None:
        raise LabError(f"nova-compute exited; see {layout.log / 'nova-compute.log'}")


def _service_up(layout: Layout, admin: Cloud) -> bool:
    """Up by a heartbeat of this very process: after a warm start the old one still counts."""
    _compute_alive(layout)
    started = datetime.fromtimestamp(pid_file(layout, "nova-compute").stat().st_mtime, UTC)
    services = admin.get("compute", "/os-services?binary=nova-compute")["services"]
    for service in services:
        if service["host"] == NOVA_HOST and service["state"] == "up" and service["updated_at"]:
            beat = datetime.fromisoformat(service["updated_at"]).replace(tzinfo=UTC)
            if beat >= started - timedelta(seconds=1):
                return True
    return False


def _node_recorded(layout: Layout) -> bool:
    # Straight from cell1's database: the API lists a node only once its host is mapped.
    _compute_alive(layout)
    sql = f"SELECT count(*) FROM compute_nodes WHERE host = '{NOVA_HOST}' AND deleted = 0"
    return psql(layout, sql, database="nova").strip() not in ("", "0")


def _host_mapped(layout: Layout) -> bool:
    sql = f"SELECT count(*) FROM host_mappings WHERE host = '{NOVA_HOST}'"
    return psql(layout, sql, database="nova_api").strip() not in ("", "0")


def _provider_known(admin: Cloud) -> bool:
    query = urllib.parse.urlencode({"name": NOVA_HOST})
    return bool(admin.get("placement", f"/resource_providers?{query}")["resource_providers"])


def register_compute(layout: Layout, admin: Cloud) -> None:
    """Wait for nova-compute, map its host into cell1 once, wait for its provider."""
    log = layout.log / "nova-compute.log"
    wait_for("nova-compute service", lambda: _service_up(layout, admin), 180, log)
    wait_for("compute node record", lambda: _node_recorded(layout), 120, log)
    if not _host_mapped(layout):
        conf = layout.etc / "nova" / "nova.conf"
        argv = [str(layout.bin("nova-manage")), "--config-file", str(conf)]
        argv += ["cell_v2", "discover_hosts", "--verbose"]
        with (layout.log / "nova-manage.log").open("ab") as out:
            subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=True)  # noqa: S603
    wait_for("placement resource provider", lambda: _provider_known(admin), 120, log)
