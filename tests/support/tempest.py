"""OpenStack's own test suites (heat-tempest-plugin, senlin-tempest-plugin) run by
tempest against a Warden of its own, as an operator would run them against Heat or
Senlin.

tempest authenticates with simcloud's Keystone (pre-provisioned credentials) and finds
Warden in the catalog as `orchestration` and `clustering`. `run_suite` answers each
test's outcome; a test module keeps the floor of those that pass.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx
import pytest_asyncio

from tests.support.own_warden import own_env, own_procs, wait_temporal
from tests.support.processes import Proc, wait_http

BIN: Final = Path(sys.executable).parent
#: The `sitecustomize` of the tempest processes (senlin-tempest-plugin polls faster).
SITE: Final = Path(__file__).parent / "tempest_site"

TEMPEST_CONF: Final = """\
[DEFAULT]
log_file = {workspace}/tempest.log
[oslo_concurrency]
lock_path = {workspace}/locks
[auth]
use_dynamic_credentials = false
test_accounts_file = {workspace}/etc/accounts.yaml
default_credentials_domain_name = Default
admin_domain_name = Default
[identity]
uri_v3 = {keystone}
auth_version = v3
region = RegionOne
[identity-feature-enabled]
api_v2 = false
[service_available]
heat_plugin = true
senlin = true
nova = true
neutron = true
glance = true
cinder = true
swift = false
zaqar = false
aodh = false
[volume-feature-enabled]
backup = false

[heat_plugin]
username = warden
password = warden-secret
project_name = demo
auth_url = {keystone}
auth_version = 3
user_domain_name = Default
project_domain_name = Default
region = RegionOne
instance_type = m1.tiny
minimal_instance_type = m1.nano
image_ref = cirros
minimal_image_ref = cirros
fixed_network_name = private
fixed_subnet_name = private-subnet
hidden_stack_tag = data-processing-cluster
network_for_ssh = private
floating_network_name = public
skip_scenario_tests = False
build_interval = 1
build_timeout = 75
[clustering]
wait_timeout = 60
min_microversion = 1.0
max_microversion = 1.14
"""
#: simcloud's one user, twice: tempest hands out an account that has the admin role only
#: to tests that ask for admin, so the member account is the same user spelt otherwise
#: (`tenant_name`, which tempest hashes apart from `project_name`).
ACCOUNTS: Final = """\
- username: admin
  project_name: demo
  password: admin-secret
  domain_name: Default
  roles: [admin]
- username: warden
  tenant_name: demo
  password: warden-secret
  domain_name: Default
  roles: [member]
"""


@pytest_asyncio.fixture
async def own_warden(tmp_path: Path) -> AsyncIterator[str]:
    """A Warden of its own (its simcloud lists it in the catalog); its Keystone URL."""
    var = tmp_path / "var"
    var.mkdir()
    env = own_env(var, {"it-admin": {"project": "demo", "roles": ["admin"]}})
    keystone = f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}/identity/v3"
    env["WARDEN_KEYSTONE_URL"] = keystone
    api = f"http://127.0.0.1:{env['WARDEN_API_PORT']}"
    procs: dict[str, Proc] = own_procs(
        env, var, notify_token="it-admin", simcloud_args=["--warden-url", api]
    )
    try:
        procs["temporal"].start()
        await wait_temporal(env["TEMPORAL_ADDRESS"], procs["temporal"])
        procs["simcloud"].start()
        wait_http(f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}/sim/state", procs["simcloud"])
        procs["worker"].start()
        wait_http(
            env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://") + "/health", procs["worker"]
        )
        procs["api"].start()
        wait_http(f"{api}/health", procs["api"])
        yield keystone
    finally:
        for proc in reversed(list(procs.values())):
            proc.stop()


def provision_senlin_cloud(keystone: str) -> None:
    """What an operator makes before running senlin-tempest-plugin against a real cloud
    (Senlin's own gate ran its API tests on a fake driver that takes any name): the
    flavor `new_flavor` and the image `new_image` its profile-update tests switch to.
    Made as devstack's admin makes them: Nova's flavor-manage, a Glance upload."""
    auth = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {
                    "user": {
                        "name": "admin",
                        "password": "admin-secret",
                        "domain": {"name": "Default"},
                    }
                },
            },
            "scope": {"project": {"name": "demo", "domain": {"name": "Default"}}},
        }
    }
    with httpx.Client(timeout=30) as http:
        issued = http.post(f"{keystone}/auth/tokens", json=auth)
        issued.raise_for_status()
        token = issued.headers["X-Subject-Token"]
        endpoints = {
            entry["type"]: next(e["url"] for e in entry["endpoints"] if e["interface"] == "public")
            for entry in issued.json()["token"]["catalog"]
        }
        headers = {"X-Auth-Token": token}
        flavor = {"flavor": {"name": "new_flavor", "ram": 512, "vcpus": 1, "disk": 1}}
        made = http.post(f"{endpoints['compute']}/flavors", json=flavor, headers=headers)
        assert made.status_code in (200, 409), made.text
        image = {"name": "new_image", "disk_format": "qcow2", "container_format": "bare"}
        created = http.post(f"{endpoints['image']}/v2/images", json=image, headers=headers)
        assert created.status_code == 201, created.text
        upload = http.put(
            f"{endpoints['image']}/v2/images/{created.json()['id']}/file",
            content=b"new image",
            headers=headers | {"Content-Type": "application/octet-stream"},
        )
        assert upload.status_code == 204, upload.text


@dataclass(frozen=True)
class Suite:
    """One plugin's tests: its package, the folder of tests, the name prefix of each."""

    package: str
    folder: str
    #: Tests not run, with the reason each cannot pass here (module.Class.method → why):
    #: they would only spend their waits failing.
    not_run: Mapping[str, str] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        return f"{self.package}.{self.folder.replace('/', '.')}"

    def pattern(self) -> re.Pattern[str]:
        """A line of tempest's output about one test of this suite."""
        return re.compile(
            r"^\{\d+\} "
            + re.escape(self.prefix)
            + r"\.(\S+?)(?:\[[^\]]*\])?(?: \[[^\]]*\])? \.\.\. (ok|FAILED|SKIPPED)"
        )


def tempest_workspace(path: Path, keystone: str, suite: Suite) -> Path:
    """A tempest workspace whose tests are `suite`'s."""
    (path / "etc").mkdir(parents=True)
    (path / "etc" / "tempest.conf").write_text(
        TEMPEST_CONF.format(workspace=path, keystone=keystone)
    )
    (path / "etc" / "accounts.yaml").write_text(ACCOUNTS)
    # Located, not imported: importing the plugin loads tempest's configuration.
    spec = importlib.util.find_spec(suite.package)
    assert spec is not None and spec.origin is not None, f"{suite.package} is a dev dependency"
    package = Path(spec.origin).parent
    (path / ".stestr.conf").write_text(
        f"[DEFAULT]\ntest_path={package / suite.folder}\ntop_dir={package.parent}\n"
    )
    subprocess.run([BIN / "stestr", "init"], cwd=path, check=True, capture_output=True)
    return path


def results(output: str, suite: Suite) -> dict[str, str]:
    """Test (module.Class.method) → ok / FAILED / SKIPPED, from tempest's output."""
    pattern = suite.pattern()
    found = {}
    for line in output.splitlines():
        match = pattern.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


@dataclass(frozen=True)
class SuiteRun:
    """What one tempest run of a suite answered."""

    found: dict[str, str]
    tail: str

    not_run: Mapping[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        counted = {
            status: sum(1 for s in self.found.values() if s == status)
            for status in ("ok", "FAILED", "SKIPPED")
        }
        return counted | {"not run": len(self.not_run)}

    def report(self, title: str, passing: frozenset[str]) -> list[str]:
        """Print the counts and the tests passing beyond the floor; the floor's losses."""
        total = len(self.found) + len(self.not_run)
        print(f"{title}: {self.counts()} of {total}")  # noqa: T201
        for test, why in sorted(self.not_run.items()):
            print(f"  not run: {test}: {why}")  # noqa: T201
        gained = sorted(t for t, s in self.found.items() if s == "ok" and t not in passing)
        if gained:
            print("passing, not yet on PASSING:", *gained, sep="\n  ")  # noqa: T201
        return sorted(t for t in passing if self.found.get(t) != "ok")


def run_suite(
    workspace: Path, suite: Suite, *, concurrency: int = 2, timeout_s: int = 800
) -> SuiteRun:
    """Run every test of `suite` in `workspace`, `concurrency` at a time.

    A suite on pre-provisioned credentials runs one at a time: tempest locks an account
    per test class, and simcloud's Keystone has one user.
    """
    run = subprocess.run(
        [
            BIN / "tempest",
            "run",
            "--config-file",
            str(workspace / "etc" / "tempest.conf"),
            "--regex",
            f"^{suite.prefix}",
            "--concurrency",
            str(concurrency),
            *(["--exclude-regex", _excluded(suite)] if suite.not_run else []),
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        env={**os.environ, "PYTHONPATH": str(SITE)},
    )
    tail = run.stdout[-3000:] + run.stderr[-3000:]
    return SuiteRun(results(run.stdout, suite), tail, suite.not_run)


def _excluded(suite: Suite) -> str:
    return "|".join(re.escape(f"{suite.prefix}.{name}") for name in sorted(suite.not_run))
