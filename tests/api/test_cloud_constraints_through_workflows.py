"""Heat's custom constraints that name cloud objects, checked before anything is made:
a flavor, image, key pair or network the cloud lacks is a 400 in Heat's words at
create, preview and update, looked up by the worker (`CloudChecksWorkflow`)."""

from __future__ import annotations

from typing import Any

import httpx

from activities.cloud.collections import collection
from activities.keypairs import key_from_seed
from tests.api.test_cloud_resources_through_workflows import create, hot
from tests.api.test_stacks_through_workflows import settled
from tests.support.warden_in_process import InProcessWarden

STACKS = "/v1/demo/stacks"
KEY = key_from_seed("short-lived")[0]


def server(**props: Any) -> dict[str, Any]:
    return {
        "type": "OS::Nova::Server",
        "properties": {"image": "cirros", "flavor": "m1.tiny", "networks": [], **props},
    }


async def refused(api: httpx.AsyncClient, template: dict[str, Any], **body: Any) -> str:
    """The create's 400 message; no stack was made."""
    answer = await api.post(STACKS, json={"stack_name": "web", "template": template, **body})
    assert answer.status_code == 400, answer.text
    assert (await api.get(STACKS)).json()["stacks"] == []
    message: str = answer.json()["error"]["message"]
    return message


async def test_what_the_cloud_lacks_is_a_400_before_anything_is_made(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    props = "resources.web.properties"
    assert await refused(api, hot({"web": server(flavor="m1.huge")})) == (
        f"{props}.flavor: Error validating value 'm1.huge': "
        "No Flavor matching {'name': 'm1.huge'}. (HTTP 404)"
    )
    assert await refused(api, hot({"web": server(image="no-such-image")})) == (
        f"{props}.image: Error validating value 'no-such-image': "
        "No images matching {'name': 'no-such-image'}."
    )
    assert await refused(api, hot({"web": server(key_name="heat_key")})) == (
        f"{props}.key_name: Error validating value 'heat_key': "
        "The Key (heat_key) could not be found."
    )
    nic = server(networks=[{"network": "private"}, {"network": "elsewhere"}])
    assert await refused(api, hot({"web": nic})) == (
        f"{props}.networks[1].network: Error validating value 'elsewhere': "
        "Unable to find network with name or id 'elsewhere'"
    )
    # A parameter's own custom constraint is checked first, as Heat checks it.
    template = hot({"web": server(key_name={"get_param": "key"})})
    template["parameters"] = {
        "key": {"type": "string", "constraints": [{"custom_constraint": "nova.keypair"}]}
    }
    assert await refused(api, template, parameters={"key": "gone"}) == (
        "parameters.key: Error validating value 'gone': The Key (gone) could not be found."
    )
    preview = await api.post(
        f"{STACKS}/preview",
        json={"stack_name": "web", "template": hot({"web": server(image="x9")})},
    )
    assert preview.status_code == 400, preview.text
    assert "No images matching {'name': 'x9'}." in preview.json()["error"]["message"]


async def test_a_value_made_by_the_stack_itself_is_not_looked_up(
    running_warden: InProcessWarden,
) -> None:
    """`get_resource` of the stack's own network and key pair: they exist once made."""
    web = server(key_name={"get_resource": "key"}, networks=[{"network": {"get_resource": "net"}}])
    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": "192.168.9.0/24"},
        },
        "key": {"type": "OS::Nova::KeyPair", "properties": {"name": "made-here"}},
        "web": {**web, "depends_on": ["subnet"]},
    }
    await create(running_warden.api, "own", hot(resources))


async def test_an_update_looks_up_only_the_values_it_changes(
    running_warden: InProcessWarden,
) -> None:
    """Heat looks every value up again, and refuses to update a stack whose key pair
    has since gone; Warden looks up what the update changes."""
    api, objects = running_warden.api, running_warden.cloud.collections
    await objects.create(collection("keypair"), {"name": "short-lived", "public_key": KEY})
    url = await create(api, "kept", hot({"web": server(key_name="short-lived")}))
    await objects.delete(collection("keypair"), "short-lived")

    changed = hot({"web": server(key_name="short-lived", metadata={"role": "web"})})
    assert (await api.put(url, json={"template": changed})).status_code == 202
    assert (await settled(api, url))["stack_status"] == "UPDATE_COMPLETE"

    flavor = hot({"web": server(key_name="short-lived", flavor="m1.nope")})
    answer = await api.put(url, json={"template": flavor})
    assert answer.status_code == 400, answer.text
    assert "No Flavor matching {'name': 'm1.nope'}" in answer.json()["error"]["message"]


def profile(**props: Any) -> dict[str, Any]:
    spec = {"type": "os.nova.server", "version": 1.0}
    spec["properties"] = {"flavor": "m1.tiny", "image": "cirros", **props}
    return spec


async def test_a_senlin_profile_validate_looks_up_what_the_server_spec_names(
    running_warden: InProcessWarden,
) -> None:
    """Senlin's `do_validate`, in its order and words; a profile create looks up
    nothing (Senlin's does not either)."""
    api = running_warden.api

    async def validated(body: dict[str, Any]) -> httpx.Response:
        return await api.post("/v1/profiles/validate", json={"profile": {"spec": body}})

    ok = await validated(profile(networks=[{"network": "private"}]))
    assert ok.status_code == 200, ok.text
    for body, message in (
        (profile(flavor=7), "The specified flavor '7' could not be found."),
        (profile(image="gone"), "The specified image 'gone' could not be found."),
        (profile(key_name="k9"), "The specified key_name 'k9' could not be found."),
        (
            profile(availability_zone="az-9", flavor="nope"),
            "The specified availability_zone 'az-9' could not be found",
        ),
        (
            profile(networks=[{"network": "private"}, {"network": "far"}]),
            "The specified network far could not be found.",
        ),
        (
            profile(networks=[{"network": "private", "floating_network": "ext"}]),
            "The floating network ext could not be found.",
        ),
        (
            profile(networks=[{"network": "private", "security_groups": ["default", "web"]}]),
            "No SecurityGroup found for web",
        ),
    ):
        answer = await validated(body)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["message"] == message
    made = await api.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": profile(image="gone")}}
    )
    assert made.status_code == 201, made.text


async def test_a_zone_placement_policy_names_zones_nova_has(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api

    def policy(*zones: str) -> dict[str, Any]:
        spec = {
            "type": "senlin.policy.zone_placement",
            "version": "1.0",
            "properties": {"zones": [{"name": z, "weight": 100} for z in zones]},
        }
        return {"policy": {"name": "spread", "spec": spec}}

    refused = await api.post("/v1/policies", json=policy("nova", "az-9"))
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] == "The specified name '['az-9']' could not be found."
    assert (await api.post("/v1/policies", json=policy("nova", "az-2"))).status_code == 201


async def test_an_affinity_policy_names_a_zone_nova_has(running_warden: InProcessWarden) -> None:
    spec = {
        "type": "senlin.policy.affinity",
        "version": "1.0",
        "properties": {"availability_zone": "az-9"},
    }
    refused = await running_warden.api.post(
        "/v1/policies", json={"policy": {"name": "apart", "spec": spec}}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] == (
        "The specified availability_zone 'az-9' could not be found."
    )
