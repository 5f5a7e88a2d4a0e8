"""Shared steps of the simcloud Neutron tests (this module holds no tests).

The api-ref samples quoted in the tests come from neutron-lib's
`api-ref/source/v2/samples/`; attributes of extensions simcloud does not implement
(QoS, DNS, pvlan, ...) are left out of requests and of the expected keys, and each
test says which.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from simcloud.app import create_app
from simcloud.config import SimConfig
from simcloud.state import SimState
from tests.support.simcloud_server import login

V2 = "/networking/v2.0"
PUBLIC = "public"


@asynccontextmanager
async def neutron() -> AsyncIterator[tuple[httpx.AsyncClient, SimState]]:
    """A logged-in client of an in-process simcloud, and that simcloud's state.

    Its project has no network of its own (no devstack `private`): these tests start
    Neutron from devstack's `public` alone.
    """
    app = create_app(SimConfig(private_network=None))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://simcloud") as client:
            client.headers.update(await login(client))
            yield client, app.state.sim


def error(response: httpx.Response, status: int, kind: str) -> str:
    """Assert a Neutron error body of this status and type; its message."""
    assert response.status_code == status, response.text
    body = response.json()["NeutronError"]
    assert body["type"] == kind, body
    assert body["detail"] == ""
    message: str = body["message"]
    return message


async def create(
    client: httpx.AsyncClient, collection: str, resource: str, **fields: Any
) -> dict[str, Any]:
    """POST one resource and return it (201 expected)."""
    response = await client.post(f"{V2}/{collection}", json={resource: fields})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()[resource]
    return created


async def listed(client: httpx.AsyncClient, collection: str, **params: Any) -> list[dict[str, Any]]:
    """GET a collection with filters; its records."""
    response = await client.get(f"{V2}/{collection}", params=params)
    assert response.status_code == 200, response.text
    records: list[dict[str, Any]] = response.json()[collection.replace("-", "_")]
    return records


async def public_network(client: httpx.AsyncClient) -> dict[str, Any]:
    """devstack's external network."""
    (network,) = await listed(client, "networks", name=PUBLIC)
    return network


async def network_with_subnet(
    client: httpx.AsyncClient, cidr: str = "10.0.0.0/24", **subnet: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A new network and an IPv4 subnet on it."""
    network = await create(client, "networks", "network", name="net1")
    fields = {"network_id": network["id"], "ip_version": 4, "cidr": cidr} | subnet
    return network, await create(client, "subnets", "subnet", **fields)


async def routed_port(client: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """A port on a subnet joined to `public` by a router; (port, router)."""
    network, subnet = await network_with_subnet(client)
    external = await public_network(client)
    router = await create(
        client, "routers", "router", name="r1", external_gateway_info={"network_id": external["id"]}
    )
    response = await client.put(
        f"{V2}/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet["id"]}
    )
    assert response.status_code == 200, response.text
    port = await create(client, "ports", "port", network_id=network["id"])
    return port, router
