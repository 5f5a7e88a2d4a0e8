"""Heat's own clients against Warden, unchanged: the API tests heat-tempest-plugin ships
(gabbi files, run with `gabbi-run` as Heat's gate runs them) and python-heatclient.

Both talk to the real API over HTTP, with real Temporal, worker and simcloud behind it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from heatclient import exc as heat_exc
from heatclient.client import Client as HeatClient
from keystoneauth1 import session as ks_session
from keystoneauth1.token_endpoint import Token

from tests.integration.conftest import Warden
from tests.support.eventually import eventually
from tests.support.processes import PYTHON

pytestmark = pytest.mark.integration

#: heat-tempest-plugin 3.0.0's API test files and how many tests each holds.
GABBI_FILES = {
    "stacks.yaml": 16,
    "resources.yaml": 10,
    "templates.yaml": 3,
    "resourcetypes.yaml": 3,
    "environments.yaml": 5,
    "softwareconfig.yaml": 10,
}


def gabbits() -> Path:
    """Where the installed heat-tempest-plugin keeps its gabbi files (not imported: its
    package would load tempest's configuration)."""
    spec = importlib.util.find_spec("heat_tempest_plugin")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "tests" / "api" / "gabbits"


@pytest.mark.parametrize("name", sorted(GABBI_FILES))
async def test_heat_tempest_plugin_api_tests_pass(warden: Warden, name: str) -> None:
    env = {
        **os.environ,
        "OS_TOKEN": "it-admin",
        "PREFIX": f"gabbi{uuid.uuid4().hex[:6]}",
    }
    gabbi_run = str(Path(PYTHON).parent / "gabbi-run")
    command = [gabbi_run, f"{warden.api_url}/v1/demo", "--", str(gabbits() / name)]
    done = await asyncio.to_thread(
        subprocess.run, command, env=env, capture_output=True, text=True, timeout=300
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    ran = re.search(r"Ran (\d+) tests?", output)
    assert ran is not None and int(ran.group(1)) == GABBI_FILES[name], output
    assert "\nOK" in output, output


def heat(warden: Warden) -> Any:
    """python-heatclient on a keystoneauth session, as `openstack stack …` builds it."""
    auth = Token(endpoint=f"{warden.api_url}/v1/demo", token="it-admin")
    return HeatClient("1", session=ks_session.Session(auth=auth))


TEMPLATE = """
heat_template_version: 2016-10-14
parameters:
  flavor: {type: string, default: m1.tiny}
resources:
  web:
    type: OS::Nova::Server
    properties: {image: cirros, flavor: {get_param: flavor}}
  config:
    type: My::Config
    properties: {value: {get_file: motd.txt}}
outputs:
  server: {value: {get_resource: web}}
  motd: {value: {get_attr: [config, output]}}
"""


def wait_status(hc: Any, name: str, status: str) -> dict[str, Any]:
    """Poll the stack by name (a 302 every time, followed by heatclient) until `status`."""
    deadline = 60.0
    step = 0.25
    waited = 0.0
    while True:
        stack = hc.stacks.get(name)
        if stack.stack_status == status:
            return stack.to_dict()  # type: ignore[no-any-return]
        assert not stack.stack_status.endswith("FAILED"), stack.stack_status_reason
        assert waited < deadline, f"{name} still {stack.stack_status}"
        time.sleep(step)
        waited += step


def heatclient_mark_unhealthy_flow(warden: Warden) -> None:
    hc = heat(warden)
    name = f"hc{uuid.uuid4().hex[:6]}"
    hc.stacks.create(
        stack_name=name,
        template=TEMPLATE,
        files={"motd.txt": "hello from files"},
        environment={"resource_registry": {"My::Config": "OS::Heat::TestResource"}},
    )
    stack = wait_status(hc, name, "CREATE_COMPLETE")
    outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
    assert outputs["motd"] == "hello from files"
    assert hc.stacks.output_show(name, "motd")["output"]["output_value"] == "hello from files"
    before = hc.resources.get(name, "web").physical_resource_id
    hc.resources.mark_unhealthy(name, "web", True, "disk died")
    marked = hc.resources.get(name, "web")
    assert (marked.resource_status, marked.resource_status_reason) == ("CHECK_FAILED", "disk died")
    hc.stacks.update(name, existing=True)
    wait_status(hc, name, "UPDATE_COMPLETE")
    after = hc.resources.get(name, "web")
    assert after.resource_status == "CREATE_COMPLETE" and after.physical_resource_id != before
    names = {r.resource_name for r in hc.resources.list(name)}
    assert names == {"web", "config"}
    hc.actions.check(name)
    wait_status(hc, name, "CHECK_COMPLETE")
    hc.stacks.delete(name)


def heatclient_lock_flow(warden: Warden) -> None:
    hc = heat(warden)
    name = f"hl{uuid.uuid4().hex[:6]}"
    hc.stacks.create(
        stack_name=name,
        template=TEMPLATE.replace("My::Config", "OS::Heat::None"),
        files={"motd.txt": "locked"},
    )
    wait_status(hc, name, "CREATE_COMPLETE")
    # heatclient has no lock verb; its HTTP client sends Heat's actions body by name.
    hc.http_client.post(f"/stacks/{name}/actions", data={"lock": {"level": "stacks"}})
    wait_status(hc, name, "LOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict, match="locked"):
        hc.stacks.update(name, existing=True, parameters={"flavor": "m1.small"})
    with pytest.raises(heat_exc.HTTPConflict):
        hc.stacks.delete(name)
    hc.http_client.post(f"/stacks/{name}/actions", data={"unlock": None})
    wait_status(hc, name, "UNLOCK_COMPLETE")
    hc.stacks.delete(name)


def heatclient_bad_input(warden: Warden) -> None:
    hc = heat(warden)
    with pytest.raises(heat_exc.HTTPBadRequest, match=r"get_file path: missing\.txt"):
        hc.stacks.create(
            stack_name=f"hb{uuid.uuid4().hex[:6]}",
            template=TEMPLATE.replace("motd.txt", "missing.txt"),
            environment={"resource_registry": {"My::Config": "OS::Heat::TestResource"}},
        )
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.stacks.get("no-such-stack")
    with pytest.raises(heat_exc.HTTPBadRequest, match="wrong section"):
        hc.stacks.validate(template=TEMPLATE, environment={"nonsense": {}})


async def test_heatclient_marks_unhealthy_then_update_existing_replaces(warden: Warden) -> None:
    await asyncio.to_thread(heatclient_mark_unhealthy_flow, warden)


async def test_heatclient_lock_refuses_update_with_409(warden: Warden) -> None:
    await asyncio.to_thread(heatclient_lock_flow, warden)


async def test_heatclient_bad_input_gets_heat_error_codes(warden: Warden) -> None:
    await asyncio.to_thread(heatclient_bad_input, warden)


async def test_template_resource_from_files_reads_nested_outputs(warden: Warden) -> None:
    nested = (
        "heat_template_version: 2016-10-14\n"
        "parameters: {greeting: {type: string}}\n"
        "resources: {echo: {type: OS::Heat::TestResource, properties: "
        "{value: {get_param: greeting}}}}\n"
        "outputs: {said: {value: {get_attr: [echo, output]}}}\n"
    )
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {"inner": {"type": "echo.yaml", "properties": {"greeting": "hi"}}},
        "outputs": {"said": {"value": {"get_attr": ["inner", "said"]}}},
    }
    async with warden.client() as api:
        name = f"tr{uuid.uuid4().hex[:6]}"
        created = await api.post(
            "/v1/demo/stacks",
            json={"stack_name": name, "template": template, "files": {"echo.yaml": nested}},
        )
        assert created.status_code == 201, created.text

        async def outputs() -> dict[str, Any] | None:
            got = await api.get(f"/v1/demo/stacks/{name}", follow_redirects=True)
            stack = got.json()["stack"]
            done = stack["stack_status"] == "CREATE_COMPLETE"
            return {o["output_key"]: o["output_value"] for o in stack["outputs"]} if done else None

        assert (await eventually(outputs, timeout=60, what="create"))["said"] == "hi"
