"""What fuzzing the running API found (tests/integration/test_api_fuzz.py), pinned."""

from __future__ import annotations

import httpx
import pytest

from tests.api.test_platform_api import assert_error


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("OPTIONS", "/v1/profiles/small", {"GET", "PATCH", "DELETE"}),
        # A literal path is its own resource, not an instance of `/v1/profiles/{id}`.
        ("OPTIONS", "/v1/profiles/validate", {"POST"}),
        ("PUT", "/v1/profiles", {"GET", "POST"}),
        ("POST", "/v1/nodes/n1", {"GET", "PATCH", "DELETE"}),
        ("POST", "/v1/demo/stacks/web/s1", {"GET", "PUT", "PATCH", "DELETE"}),
    ],
)
async def test_405_allow_names_every_method_of_the_resource(
    api: httpx.AsyncClient, method: str, path: str, allowed: set[str]
) -> None:
    # The router named only the methods of the first route matching the path.
    response = await api.request(method, path)
    assert_error(response, 405, "Method Not Allowed")
    assert set(response.headers["allow"].split(", ")) == allowed


def _profile(metadata: dict[str, str]) -> dict[str, object]:
    properties = {"flavor": "m1.tiny", "image": "cirros", "metadata": metadata}
    spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
    return {"profile": {"name": "meta", "spec": spec}}


@pytest.mark.parametrize(
    "metadata",
    [{"a/b": "x"}, {"ключ": "x"}, {"": "x"}, {"k" * 256: "x"}, {"k": "v" * 256}],
)
async def test_profile_with_server_metadata_nova_refuses_is_400(
    api: httpx.AsyncClient, metadata: dict[str, str]
) -> None:
    # It used to be accepted; then every node create of its clusters failed in Nova.
    response = await api.post("/v1/profiles", json=_profile(metadata))
    assert_error(response, 400, "profile.spec.properties.metadata")


async def test_profile_with_nova_shaped_metadata_is_created(api: httpx.AsyncClient) -> None:
    response = await api.post("/v1/profiles", json=_profile({"app.tier:web -1_x": "v" * 255}))
    assert response.status_code == 201, response.text
