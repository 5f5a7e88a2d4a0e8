"""Remote stacks at the API: the catalog lookup, Heat's refusal words, and the 400s a
create gets before anything is made (the `api` fixture runs without Keystone)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from api.remote_stacks import endpoint_in, heat_refusal, remote_stacks
from tests.api.test_stacks_api import assert_error, create, hot

CATALOG = [
    {"type": "compute", "endpoints": [{"interface": "public", "region": "R1", "url": "http://c"}]},
    {
        "type": "orchestration",
        "endpoints": [
            {"interface": "internal", "region_id": "R1", "url": "http://h-int/v1/p"},
            {"interface": "public", "region_id": "R1", "url": "http://h/v1/p/"},
            {"interface": "public", "region": "R2", "url": "http://h2/v1/p"},
        ],
    },
]


def remote(context: object, template: object = "heat_template_version: 2013-05-23") -> Any:
    props = {"template": template, "context": context}
    return hot({"my_stack": {"type": "OS::Heat::Stack", "properties": props}})


def test_the_orchestration_endpoint_is_found_by_interface_and_region() -> None:
    assert endpoint_in(CATALOG, "public", "R1") == "http://h/v1/p"
    assert endpoint_in(CATALOG, "internal", "R1") == "http://h-int/v1/p"
    assert endpoint_in(CATALOG, "public", "R2") == "http://h2/v1/p"
    with pytest.raises(LookupError) as caught:
        endpoint_in(CATALOG, "public", "DARKHOLE")
    assert str(caught.value) == (
        "public endpoint for orchestration service in DARKHOLE region not found"
    )


def test_heat_s_refusal_reads_as_heatclient_prints_it() -> None:
    body = {"code": 400, "error": {"message": "The template section is invalid: resource"}}
    assert heat_refusal(httpx.Response(400, json=body)) == (
        "ERROR: The template section is invalid: resource"
    )
    assert heat_refusal(httpx.Response(400, text="no json")) == "ERROR: no json"


def test_only_resources_with_a_context_are_remote_stacks() -> None:
    nested = hot({"n": {"type": "OS::Heat::Stack", "properties": {"template": hot({})}}})
    assert remote_stacks(nested, {}) == []
    found = remote_stacks(remote({"region_name": "R2"}), {})
    assert [p["context"]["region_name"] for p in found] == ["R2"]


async def test_a_remote_stack_without_keystone_is_a_400_saying_why(
    api: httpx.AsyncClient,
) -> None:
    response = await create(api, remote({"region_name": "RegionOne"}))
    assert_error(
        response,
        400,
        'Cannot establish connection to Heat endpoint at region "RegionOne"',
        "Warden runs without Keystone",
    )


async def test_a_barbican_credential_is_a_400_not_a_silent_local_stack(
    api: httpx.AsyncClient,
) -> None:
    response = await create(api, remote({"credential_secret_id": "s-1"}))
    assert_error(response, 400, "at remote cloud", "credential_secret_id")
