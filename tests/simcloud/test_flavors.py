"""simcloud's Nova flavors: devstack's seeded flavors, list, detail, show, helpers."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from simcloud.errors import SimError
from simcloud.flavors import check_image_fits, find_flavor, flavor_named
from simcloud.image.state import ImageRecord
from simcloud.state import SimState
from tests.support.cloud_ids import CIRROS
from tests.support.simcloud_server import PASSWORD_AUTH, in_process_simcloud, login

FLAVORS = "/compute/v2.1/flavors"
#: The keys of the api-ref's 2.61 show response sample.
DETAIL_KEYS = {
    "OS-FLV-DISABLED:disabled",
    "disk",
    "OS-FLV-EXT-DATA:ephemeral",
    "os-flavor-access:is_public",
    "id",
    "links",
    "name",
    "ram",
    "swap",
    "vcpus",
    "rxtx_factor",
    "description",
    "extra_specs",
}
DEVSTACK = {
    "1": ("m1.tiny", 512, 1, 1),
    "2": ("m1.small", 2048, 20, 1),
    "3": ("m1.medium", 4096, 40, 2),
    "4": ("m1.large", 8192, 80, 4),
    "5": ("m1.xlarge", 16384, 160, 8),
    "42": ("m1.nano", 192, 1, 1),
    "84": ("m1.micro", 256, 1, 1),
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def test_list_has_devstacks_flavors_and_those_warden_names(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get(FLAVORS)

    flavors = response.json()["flavors"]
    assert response.status_code == 200
    assert set(flavors[0]) == {"id", "links", "name", "description"}
    by_id = {f["id"]: f["name"] for f in flavors}
    assert {k: v[0] for k, v in DEVSTACK.items()}.items() <= by_id.items()
    assert {"m1.big", "f"} <= set(by_id.values())
    assert flavors[0]["links"][0] == {
        "href": f"http://simcloud{FLAVORS}/{flavors[0]['id']}",
        "rel": "self",
    }


async def test_detail_and_show_have_the_sample_keys_and_sizes(
    client: httpx.AsyncClient,
) -> None:
    detail = (await client.get(f"{FLAVORS}/detail")).json()["flavors"]
    shown = {fid: (await client.get(f"{FLAVORS}/{fid}")).json()["flavor"] for fid in DEVSTACK}

    assert all(set(f) == DETAIL_KEYS for f in detail)
    for flavor_id, (name, ram, disk, vcpus) in DEVSTACK.items():
        flavor = shown[flavor_id]
        assert (flavor["name"], flavor["ram"], flavor["disk"], flavor["vcpus"]) == (
            name,
            ram,
            disk,
            vcpus,
        )
        assert flavor["swap"] == ""


async def test_unknown_flavor_is_novas_404(client: httpx.AsyncClient) -> None:
    response = await client.get(f"{FLAVORS}/m1.small")

    assert response.json() == {
        "itemNotFound": {"code": 404, "message": "Flavor m1.small could not be found."}
    }


async def test_list_filters_by_min_ram_and_pages(client: httpx.AsyncClient) -> None:
    big = (await client.get(FLAVORS, params={"minRam": 8192})).json()["flavors"]
    page = (await client.get(FLAVORS, params={"limit": 2})).json()
    bad = await client.get(FLAVORS, params={"minRam": "lots"})

    assert {f["name"] for f in big} == {"m1.large", "m1.xlarge", "m1.big"}
    assert len(page["flavors"]) == 2
    assert page["flavors_links"][0]["rel"] == "next"
    assert bad.status_code == 400


async def test_flavors_need_a_token(client: httpx.AsyncClient) -> None:
    response = await client.get(FLAVORS, headers={"X-Auth-Token": "nope"})

    assert response.status_code == 401


def test_find_flavor_by_id_or_url_and_by_name() -> None:
    state = SimState(SimConfig())

    tiny = find_flavor(state, "1")
    by_url = find_flavor(state, "http://simcloud/compute/v2.1/flavors/2")
    big = flavor_named(state, "m1.big")

    assert tiny is not None and tiny.name == "m1.tiny"
    assert by_url is not None and by_url.name == "m1.small"
    assert find_flavor(state, "m1.tiny") is None
    assert big is not None and find_flavor(state, big.id) == big


def image(**fields: int) -> ImageRecord:
    return ImageRecord(id="i", owner="o", created_at=0, updated_at=0, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_ram": 1024}, "Flavor's memory is too small for requested image."),
        (
            {"size": 2 * 1024**3},
            "Flavor's disk is too small for requested image. Flavor disk is 1073741824 "
            "bytes, image is 2147483648 bytes.",
        ),
        (
            {"min_disk": 2},
            "Flavor's disk is smaller than the minimum size specified in image metadata. "
            "Flavor disk is 1073741824 bytes, minimum size is 2147483648 bytes.",
        ),
    ],
)
def test_check_image_fits_refuses_like_nova(fields: dict[str, int], message: str) -> None:
    tiny = find_flavor(SimState(SimConfig()), "1")
    assert tiny is not None

    with pytest.raises(SimError) as caught:
        check_image_fits(tiny, image(**fields))

    assert (caught.value.status, caught.value.message) == (400, message)
    check_image_fits(tiny, image(min_ram=512, size=1024))


def admin_auth() -> dict[str, Any]:
    auth: dict[str, Any] = copy.deepcopy(PASSWORD_AUTH)
    user = auth["auth"]["identity"]["password"]["user"]
    user.update(name="admin", password="admin-secret")
    return auth


async def test_the_admin_user_gets_the_admin_role_and_the_member_does_not(
    client: httpx.AsyncClient,
) -> None:
    admin = await login(client, admin_auth())
    shown = await client.get(
        "/identity/v3/auth/tokens", headers=admin | {"X-Subject-Token": admin["X-Auth-Token"]}
    )
    token = shown.json()["token"]
    assert {r["name"] for r in token["roles"]} == {"admin", "member"}
    assert token["user"]["name"] == "admin"
    member = client.headers["X-Auth-Token"]
    shown = await client.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": member})
    assert [r["name"] for r in shown.json()["token"]["roles"]] == ["member"]
    wrong = admin_auth()
    wrong["auth"]["identity"]["password"]["user"]["password"] = "warden-secret"
    refused = await client.post("/identity/v3/auth/tokens", json=wrong)
    assert refused.status_code == 401


async def test_flavor_manage_is_for_admins_and_a_made_flavor_boots_servers(
    client: httpx.AsyncClient,
) -> None:
    body = {"flavor": {"name": "new_flavor", "ram": 512, "vcpus": 1, "disk": 1}}
    refused = await client.post(FLAVORS, json=body)
    assert refused.status_code == 403
    assert "os-flavor-manage:create" in refused.json()["forbidden"]["message"]

    admin = await login(client, admin_auth())
    made = await client.post(FLAVORS, json=body, headers=admin)
    assert made.status_code == 200, made.text
    flavor = made.json()["flavor"]
    assert set(flavor) == DETAIL_KEYS and (flavor["name"], flavor["ram"]) == ("new_flavor", 512)
    again = await client.post(FLAVORS, json=body, headers=admin)
    assert again.status_code == 409
    assert (
        again.json()["conflictingRequest"]["message"]
        == "Flavor with name new_flavor already exists."
    )
    bad = await client.post(FLAVORS, json={"flavor": {"name": "x", "ram": 0}}, headers=admin)
    assert bad.status_code == 400
    assert flavor["id"] in {f["id"] for f in (await client.get(FLAVORS)).json()["flavors"]}

    server = {"server": {"name": "s", "imageRef": CIRROS, "flavorRef": flavor["id"]}}
    booted = await client.post("/compute/v2.1/servers", json=server)
    assert booted.status_code == 202, booted.text
    server_id = booted.json()["server"]["id"]

    assert (await client.delete(f"{FLAVORS}/{flavor['id']}")).status_code == 403
    assert (await client.delete(f"{FLAVORS}/{flavor['id']}", headers=admin)).status_code == 202
    assert (await client.get(f"{FLAVORS}/{flavor['id']}")).status_code == 404
    # Nova embeds the flavor in the server: it still shows once the flavor is gone.
    shown = (await client.get(f"/compute/v2.1/servers/{server_id}")).json()["server"]
    assert (shown["flavor"]["original_name"], shown["flavor"]["ram"]) == ("new_flavor", 512)
