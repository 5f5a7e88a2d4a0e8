"""Heat and Senlin features Warden does not implement: a 400 that names the feature, as
Heat answers a feature it has turned off, instead of a 404 that reads "Stack not found"."""

from __future__ import annotations

import re

import httpx

from api.routers.unsupported import UNSUPPORTED
from tests.api.test_platform_api import assert_error

#: Each declared call with its placeholders filled in, and the feature it names.
CALLS = [
    (method, re.sub(r"\{(?!project_id)\w+\}", "x1", path).replace("{project_id}", "demo"), feature)
    for path, (feature, methods) in UNSUPPORTED.items()
    for method in methods
]


async def test_every_declared_call_is_a_400_naming_the_feature(api: httpx.AsyncClient) -> None:
    for method, path, feature in CALLS:
        body: dict[str, object] | None = {} if method in ("POST", "PUT", "PATCH") else None
        response = await api.request(method, path, json=body)
        assert_error(response, 400, f"{feature} is not supported.")


async def test_senlin_paths_below_the_clustering_prefix_say_so_too(
    api: httpx.AsyncClient,
) -> None:
    for method, path, feature in (
        ("POST", "/cluster/v1/receivers/r1/notify", "Message Receiver"),
        ("POST", "/cluster/v1/nodes/adopt", "Node Adopt"),
    ):
        assert_error(await api.request(method, path), 400, f"{feature} is not supported.")


async def test_the_answer_still_needs_a_token(api: httpx.AsyncClient) -> None:
    response = await api.post("/v1/clusters/c1/ops", headers={"X-Auth-Token": "nope"})
    assert response.status_code == 401
