"""Heat's config resources through the real workflows and simcloud: each stores a config
in `/software_configs`, a server boots with the config its `user_data` names, and a
changed or deleted resource takes its config away."""

from __future__ import annotations

import base64
import email
from typing import Any

from activities.cloud.collections import collection
from tests.api.test_cloud_resources_through_workflows import create, hot, update
from tests.api.test_stacks_through_workflows import resource
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

CONFIGS = "/v1/demo/software_configs"

RESOURCES: dict[str, Any] = {
    "script": {
        "type": "OS::Heat::SoftwareConfig",
        "properties": {
            "group": "script",
            "config": "#!/bin/sh\necho hello",
            "inputs": [{"name": "who", "default": "world"}],
        },
    },
    "users": {
        "type": "OS::Heat::CloudConfig",
        "properties": {"cloud_config": {"users": [{"name": "ops"}]}},
    },
    "boot": {
        "type": "OS::Heat::MultipartMime",
        "properties": {
            "parts": [
                {"config": {"get_resource": "users"}},
                {"config": {"get_resource": "script"}, "subtype": "x-shellscript"},
                {"config": "inline part", "filename": "notes.txt"},
            ]
        },
    },
    "settings": {
        "type": "OS::Heat::StructuredConfig",
        "properties": {"group": "ansible", "config": {"port": 8080}},
    },
    "web": {
        "type": "OS::Nova::Server",
        "properties": {
            "image": "cirros",
            "flavor": "m1.tiny",
            "user_data_format": "RAW",
            "user_data": {"get_resource": "boot"},
        },
    },
}
OUTPUTS = {
    "script": {"value": {"get_attr": ["script", "config"]}},
    "users": {"value": {"get_attr": ["users", "config"]}},
    "settings": {"value": {"get_attr": ["settings", "config"]}},
}


async def test_configs_are_stored_and_a_server_boots_with_the_one_it_names(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create(api, "configs", hot(RESOURCES, OUTPUTS))
    outputs = {
        o["output_key"]: o["output_value"] for o in (await api.get(url)).json()["stack"]["outputs"]
    }
    assert outputs["script"] == "#!/bin/sh\necho hello"
    assert outputs["users"] == "#cloud-config\nusers:\n- name: ops\n"
    assert outputs["settings"] == {"port": 8080}

    ids = {name: (await resource(api, url, name))["physical_resource_id"] for name in RESOURCES}
    script = (await api.get(f"{CONFIGS}/{ids['script']}")).json()["software_config"]
    assert script["group"] == "script"
    assert script["inputs"] == [{"name": "who", "type": "String", "default": "world"}]
    assert script["name"].startswith("configs-script-")
    boot = (await api.get(f"{CONFIGS}/{ids['boot']}")).json()["software_config"]
    parts: list[Any] = list(email.message_from_string(boot["config"]).get_payload())
    assert [p.get_payload() for p in parts] == [
        outputs["users"],
        "#!/bin/sh\necho hello",
        "inline part",
    ]
    assert [p.get_content_type() for p in parts] == [
        "text/plain",
        "text/x-shellscript",
        "text/notes",  # Heat's rule: a filename without a subtype names the subtype
    ]

    server = await running_warden.cloud.collections.show(collection("server"), ids["web"])
    sent = base64.b64decode(server["OS-EXT-SRV-ATTR:user_data"]).decode()
    assert sent == boot["config"]

    # A changed config is a new config (and a new server booted with it); the old is gone.
    changed = {**RESOURCES, "script": {**RESOURCES["script"], "properties": {"config": "echo bye"}}}
    stack = await update(api, url, hot(changed, OUTPUTS))
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    new_script = (await resource(api, url, "script"))["physical_resource_id"]
    assert new_script != ids["script"]
    assert (await api.get(f"{CONFIGS}/{ids['script']}")).status_code == 404
    assert (await resource(api, url, "web"))["physical_resource_id"] != ids["web"]

    assert (await api.delete(url)).status_code == 204

    async def no_configs() -> bool:
        listed: list[Any] = (await api.get(CONFIGS)).json()["software_configs"]
        return not listed

    await eventually(no_configs, what="the stack's configs deleted with it")
