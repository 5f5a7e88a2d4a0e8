"""Shared steps of the simcloud Octavia tests (this module holds no tests).

The api-ref samples quoted in the tests come from Octavia's
`api-ref/source/v2/examples/`; what simcloud does not have (QoS, Octavia flavors and
availability zones, Barbican) is left out of requests, and each test says what.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from simcloud.app import create_app
from simcloud.config import SimConfig
from simcloud.state import SimState
from tests.support.cloud_ids import CIRROS
from tests.support.simcloud_server import login

LBAAS = "/load-balancer/v2/lbaas"
NEUTRON = "/networking/v2.0"


@asynccontextmanager
async def octavia(
    config: SimConfig | None = None,
) -> AsyncIterator[tuple[httpx.AsyncClient, SimState]]:
    """A logged-in client of an in-process simcloud (devstack's `private` network
    included), and that simcloud's state."""
    app = create_app(config or SimConfig())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://simcloud") as client:
            client.headers.update(await login(client))
            yield client, app.state.sim


def fault(response: httpx.Response, status: int) -> str:
    """Assert an Octavia error body of this status; its `faultstring`."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["faultcode"] == ("Client" if status < 500 else "Server"), body
    message: str = body["faultstring"]
    return message


async def create(client: httpx.AsyncClient, collection: str, **fields: Any) -> dict[str, Any]:
    """POST one Octavia object (`loadbalancers`, `pools/<id>/members`...); 201 expected."""
    resource = _singular(collection)
    response = await client.post(f"{LBAAS}/{collection}", json={resource: fields})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()[resource]
    return created


async def show(client: httpx.AsyncClient, collection: str, object_id: str) -> dict[str, Any]:
    """GET one Octavia object (200 expected)."""
    response = await client.get(f"{LBAAS}/{collection}/{object_id}")
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()[_singular(collection)]
    return shown


async def listed(client: httpx.AsyncClient, collection: str, **params: Any) -> list[dict[str, Any]]:
    """GET a collection with a query; its objects."""
    response = await client.get(f"{LBAAS}/{collection}", params=params)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()[collection.rsplit("/", 1)[-1]]
    return found


def _singular(collection: str) -> str:
    last = collection.rsplit("/", 1)[-1]
    return {"loadbalancers": "loadbalancer", "healthmonitors": "healthmonitor"}.get(
        last, last.removesuffix("s")
    )


async def private_subnet(client: httpx.AsyncClient) -> dict[str, Any]:
    """devstack's `private-subnet` (10.0.0.0/16), which simcloud seeds."""
    response = await client.get(f"{NEUTRON}/subnets", params={"name": "private-subnet"})
    (subnet,) = response.json()["subnets"]
    return dict(subnet)


async def load_balancer(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    """A load balancer on `private-subnet`, ACTIVE (simcloud's default latency is 0)."""
    subnet = await private_subnet(client)
    created = await create(client, "loadbalancers", vip_subnet_id=subnet["id"], **fields)
    shown = await show(client, "loadbalancers", created["id"])
    assert shown["provisioning_status"] == "ACTIVE", shown
    return shown


async def listener(
    client: httpx.AsyncClient, lb: dict[str, Any], port: int = 80, **fields: Any
) -> dict[str, Any]:
    """An HTTP listener on `lb`."""
    fields = {"protocol": "HTTP", "protocol_port": port} | fields
    return await create(client, "listeners", loadbalancer_id=lb["id"], **fields)


async def pool(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    """A ROUND_ROBIN HTTP pool (pass `listener_id` or `loadbalancer_id`)."""
    fields = {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"} | fields
    return await create(client, "pools", **fields)


async def server(client: httpx.AsyncClient, name: str, **metadata: str) -> dict[str, Any]:
    """An ACTIVE Nova server; its `address` is the one pool members link to."""
    body = {"server": {"name": name, "imageRef": CIRROS, "flavorRef": "1", "metadata": metadata}}
    server_id = (await client.post("/compute/v2.1/servers", json=body)).json()["server"]["id"]
    shown: dict[str, Any] = (await client.get(f"/compute/v2.1/servers/{server_id}")).json()[
        "server"
    ]
    shown["address"] = next(iter(shown["addresses"].values()))[0]["addr"]
    return shown


async def advance(client: httpx.AsyncClient, seconds: float) -> None:
    """Move simcloud's clock forward."""
    response = await client.post("/sim/clock", json={"advance_s": seconds})
    assert response.status_code == 200, response.text
