"""Heat's own example templates run on Warden: create, mark unhealthy + update, delete.

The templates are openstack/heat-templates' (tests/fixtures/heat_templates), unchanged;
the cloud is simcloud in process with its Nova, Neutron, Cinder and Glance; the
parameters are what a devstack user would pass. Each test proves what Heat promises:
the stack reaches CREATE_COMPLETE, a server marked unhealthy is replaced by the next
update (its port and floating IP following), and a delete leaves nothing behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from activities.cloud.collections import collection
from domain.hot.yaml_format import load_yaml
from tests.api.test_stacks_through_workflows import resource, settled
from tests.support.eventually import eventually
from tests.support.networks import route_private_to_public
from tests.support.warden_in_process import InProcessWarden

TEMPLATES = Path(__file__).parents[1] / "fixtures" / "heat_templates"
STACKS = "/v1/demo/stacks"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKzVtTZD4zm6ZtJq9pTjQmD0nj+4oRUs2lsNzIFBvkSf warden"

#: Template → (parameters, the server to mark unhealthy or None). `{...}` values are
#: filled in by `parameters()` from the cloud.
CASES: dict[str, tuple[dict[str, Any], str | None]] = {
    "hello_world.yaml": (
        {"key_name": "demo", "image": "cirros", "admin_pass": "Secret42"},
        "server",
    ),
    "server_console.yaml": ({"image": "cirros"}, "server"),
    "F18__WordPress_Native.yaml": (
        {"key_name": "demo", "image_id": "F18-x86_64-cfntools"},
        "wordpress_instance",
    ),
    "F20__WordPress_Native.yaml": (
        {"key_name": "demo", "image_id": "cirros"},
        "wordpress_instance",
    ),
    "F20__WordPress_2_Instances.yaml": (
        {"key_name": "demo", "image_id": "cirros"},
        "WebServer",
    ),
    "chef-server.yaml": (
        {"ssh_key_name": "demo", "chef_image_name": "cirros", "chef_flavor_name": "m1.small"},
        "ChefServer",
    ),
    "vm_with_cinder.yaml": (
        {"key_name": "demo", "image": "cirros", "network": "private"},
        "my_instance",
    ),
    "F18__NovaInstanceWithCinderVolume_Native.yaml": (
        {"key_name": "demo", "image_id": "F18-x86_64-cfntools"},
        "nova_instance",
    ),
    "servers_in_new_neutron_net.yaml": (
        {
            "key_name": "demo",
            "image": "cirros",
            "flavor": "m1.small",
            "public_net": "public",
            "private_net_name": "net1",
            "private_net_cidr": "192.168.50.0/24",
            "private_net_gateway": "192.168.50.1",
            "private_net_pool_start": "192.168.50.10",
            "private_net_pool_end": "192.168.50.100",
        },
        "server1",
    ),
    "servers_in_existing_neutron_net.yaml": (
        {
            "key_name": "demo",
            "image": "cirros",
            "flavor": "m1.small",
            "public_net_id": "{public}",
            "private_net_id": "{private}",
            "private_subnet_id": "{private-subnet}",
        },
        "server1",
    ),
    "servers_in_existing_neutron_network_no_floating_ips.yaml": (
        {
            "key_name": "demo",
            "image": "cirros",
            "flavor": "m1.small",
            "net_id": "{private}",
            "subnet_id": "{private-subnet}",
        },
        "server1",
    ),
    "resource_group__volume_with_attachment.yaml": ({"instance_id": "{server}"}, None),
    "resource_group__resource_group.yaml": ({}, None),
    "condition.yaml": ({"env_type": "prod"}, None),
    "asg_of_servers.yaml": ({"key_name": "demo", "image": "cirros"}, None),
    "software-config__example-templates__example-cloud-init.yaml": (
        {"key_name": "demo", "flavor": "m1.small", "image": "cirros"},
        "server",
    ),
    "cfn__F17__Neutron.template": ({}, None),
    "cfn__F17__Neutron.yaml": ({}, None),
    "cfn__F17__Neutron_floating.template": (
        {
            "external_network": "{public}",
            "internal_network": "{private}",
            "internal_subnet": "{private-subnet}",
        },
        None,
    ),
    "lb_server.yaml": (
        {
            "image": "cirros",
            "key_name": "demo",
            "flavor": "m1.small",
            "pool_id": "{pool}",
            "user_data": "#!/bin/sh\necho hello",
            "metadata": {"role": "web"},
            "network": "private",
            "subnet": "private-subnet",
        },
        "server",
    ),
}


def test_every_corpus_template_has_a_case() -> None:
    names = (*TEMPLATES.glob("*.yaml"), *TEMPLATES.glob("*.template"))
    assert sorted(CASES) == sorted(p.name for p in names)


async def prepare_cloud(warden: InProcessWarden) -> dict[str, str]:
    """What the user has before the stack: a keypair, the image the F18 templates allow,
    a router to the public network on the project's subnet, a server, a load balancer
    with a pool; the ids the templates take as parameters."""
    objects = warden.cloud.collections
    await objects.create(collection("keypair"), {"name": "demo", "public_key": KEY})
    image = {"name": "F18-x86_64-cfntools", "disk_format": "qcow2", "container_format": "bare"}
    made = await objects.create(collection("image"), image)
    web_download = {"method": {"name": "web-download", "uri": "http://images.example/f18.qcow2"}}
    await objects.action(collection("image"), str(made["id"]), "POST", "/import", web_download)
    ids = {
        name: str((await objects.find(collection(kind), name))["id"])
        for kind, name in (
            ("network", "public"),
            ("network", "private"),
            ("subnet", "private-subnet"),
        )
    }
    await route_private_to_public(warden.cloud)
    server = await warden.cloud.compute.create_server(
        "existing", (await objects.find(collection("image"), "cirros"))["id"], "1"
    )
    lb = await objects.create(collection("loadbalancer"), {"vip_subnet_id": ids["private-subnet"]})
    listener = {"loadbalancer_id": lb["id"], "protocol": "HTTP", "protocol_port": 80}
    listener = await objects.create(collection("listener"), listener)
    pool = {"listener_id": listener["id"], "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"}
    pool = await objects.create(collection("pool"), pool)
    return ids | {"server": server.id, "pool": str(pool["id"])}


def parameters(raw: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    return {
        k: ids[v[1:-1]] if isinstance(v, str) and v.startswith("{") else v for k, v in raw.items()
    }


async def counts(warden: InProcessWarden, pool_id: str) -> dict[str, int]:
    """How many objects of each kind the cloud holds (members: of the prepared pool)."""
    objects = warden.cloud.collections
    found = {
        kind: len(await objects.list(collection(kind)))
        for kind in ("port", "network", "subnet", "floating_ip", "router", "volume")
    }
    found["member"] = len(await objects.list(collection("member"), parent=pool_id))
    return found | {"server": len(await warden.cloud.compute.list_servers())}


async def run_stack(api: httpx.AsyncClient, name: str, params: dict[str, Any]) -> str:
    template = load_yaml((TEMPLATES / name).read_text())
    stack_name = name.removesuffix(".yaml").replace("_", "-").replace(".", "-")[:40]
    body = {"stack_name": stack_name, "template": template, "parameters": params}
    created = await api.post(STACKS, json=body)
    assert created.status_code == 201, created.text
    url = f"{STACKS}/{stack_name}/{created.json()['stack']['id']}"
    stack = await settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    return url


@pytest.mark.parametrize("name", sorted(CASES))
async def test_upstream_template_creates_heals_and_deletes(
    running_warden: InProcessWarden, name: str
) -> None:
    api = running_warden.api
    ids = await prepare_cloud(running_warden)
    before = await counts(running_warden, ids["pool"])
    raw, marked = CASES[name]
    template = load_yaml((TEMPLATES / name).read_text())
    url = await run_stack(api, name, parameters(raw, ids))

    if marked is not None:
        old = (await resource(api, url, marked))["physical_resource_id"]
        patch = {"mark_unhealthy": True, "resource_status_reason": "wedged"}
        assert (await api.patch(f"{url}/resources/{marked}", json=patch)).status_code == 200
        updated = await api.put(
            url, json={"template": template, "parameters": parameters(raw, ids)}
        )
        assert updated.status_code == 202, updated.text
        stack = await settled(api, url)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        new = (await resource(api, url, marked))["physical_resource_id"]
        assert new != old
        replacement = await running_warden.cloud.compute.get_server(new)
        assert replacement.status == "ACTIVE"
        if f"{marked}_public_ip" in {o["output_key"] for o in stack.get("outputs", [])}:
            # The port was moved to the replacement, its floating IP with it (as in Heat).
            outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
            assert outputs[f"{marked}_public_ip"] in replacement.ip_addresses

    assert (await api.delete(url)).status_code == 204
    assert await settled_deleted(api, url)
    assert await counts(running_warden, ids["pool"]) == before  # nothing left behind


async def settled_deleted(api: httpx.AsyncClient, url: str) -> bool:
    """True once the stack is gone (a DELETE_FAILED fails the test with its reason)."""

    async def deleted() -> bool | None:
        response = await api.get(url)
        if response.status_code == 404:
            return True
        status = response.json()["stack"]["stack_status"]
        assert status != "DELETE_FAILED", response.json()["stack"]["stack_status_reason"]
        return None

    return await eventually(deleted, timeout=30, what=f"{url} deleted")
