"""A node's `details` and the cluster collect of a `details.…` path: the server as Nova
shows it now, read by the worker (`NodeDetailsWorkflow`) for the API."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Warden
from tests.integration.test_lifecycle_hooks import nodes_of
from tests.integration.test_platform import action_done, create_cluster

pytestmark = pytest.mark.integration

COLLECT = {"OpenStack-API-Version": "clustering 1.2"}


async def test_details_show_the_server_now_and_collect_reads_them(warden: Warden) -> None:
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, "details", 2)
        assert (await action_done(api, location))["status"] == "SUCCEEDED"
        node = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])[0]
        assert "details" not in node

        shown = await api.get(f"/v1/nodes/{node['id']}", params={"show_details": "true"})
        assert shown.status_code == 200, shown.text
        details = shown.json()["node"]["details"]
        assert (details["id"], details["status"]) == (node["physical_id"], "ACTIVE")
        assert details["name"] == node["name"] and details["addresses"]
        assert isinstance(details["image"], str) and isinstance(details["flavor"], str)

        collected = await api.get(
            f"/v1/clusters/{cluster_id}/attrs/details.status", headers=COLLECT
        )
        assert collected.status_code == 200, collected.text
        values = {a["id"]: a["value"] for a in collected.json()["cluster_attributes"]}
        assert values == {n["id"]: "ACTIVE" for n in await nodes_of(api, cluster_id)}
