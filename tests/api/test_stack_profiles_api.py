"""`os.heat.stack` profiles through the API: senlin-tempest-plugin's spec is taken, a
template that could not make a stack makes no profile (Senlin previews it on Heat; Warden
runs a stack create's own checks), and the type's operations are Senlin's."""

from __future__ import annotations

import copy
from typing import Any

import httpx

from tests.api.test_platform_api import assert_error
from tests.unit.cluster.test_stack_profile import TEMPEST_SPEC

LATEST = {"OpenStack-API-Version": "clustering 1.14"}


def spec_with(**properties: Any) -> dict[str, Any]:
    spec = copy.deepcopy(TEMPEST_SPEC)
    spec["properties"].update(properties)
    return spec


async def test_the_tempest_plugin_s_stack_profile_is_created_and_shown(
    api: httpx.AsyncClient,
) -> None:
    body = {"profile": {"name": "stacks", "spec": TEMPEST_SPEC}}
    created = await api.post("/cluster/v1/profiles", json=body)

    assert created.status_code == 201, created.text
    profile = created.json()["profile"]
    assert (profile["type"], profile["spec"]) == ("os.heat.stack-1.0", TEMPEST_SPEC)
    validated = await api.post(
        "/cluster/v1/profiles/validate", json={"profile": {"spec": TEMPEST_SPEC}}, headers=LATEST
    )
    assert validated.status_code == 200, validated.text
    assert validated.json()["profile"]["type"] == "os.heat.stack-1.0"


async def test_a_template_that_cannot_make_a_stack_is_400(api: httpx.AsyncClient) -> None:
    def create(spec: dict[str, Any], name: str = "bad") -> Any:
        return api.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})

    assert_error(
        await create(spec_with(template={}), name="empty"),
        400,
        "Both template and template_url are not specified for profile 'empty'.",
    )
    unknown_type = spec_with(
        template={"heat_template_version": "2015-04-30", "resources": {"r": {"type": "OS::No"}}}
    )
    answer = await create(unknown_type)
    assert_error(answer, 400, "Failed in validating template: ")
    assert "OS::No" in answer.text
    missing = spec_with(
        template={
            "heat_template_version": "2015-04-30",
            "parameters": {"size": {"type": "number"}},
            "resources": {},
        }
    )
    assert_error(await create(missing), 400, "Failed in validating template: ")
    given = spec_with(template=missing["properties"]["template"], parameters={"size": 3})
    assert (await create(given)).status_code == 201
    listed = (await api.get("/v1/profiles")).json()["profiles"]
    assert [p["name"] for p in listed] == ["bad"]


async def test_the_stack_profile_type_and_its_operations_are_senlin_s(
    api: httpx.AsyncClient,
) -> None:
    shown = await api.get("/cluster/v1/profile-types/os.heat.stack-1.0", headers=LATEST)
    assert shown.status_code == 200, shown.text
    schema = shown.json()["profile_type"]["schema"]
    assert schema["template"]["type"] == "Map" and schema["disable_rollback"]["default"] is True
    ops = await api.get("/cluster/v1/profile-types/os.heat.stack-1.0/ops", headers=LATEST)
    assert ops.json() == {
        "operations": {"abandon": {"description": "Abandon a heat stack node.", "parameters": {}}}
    }
