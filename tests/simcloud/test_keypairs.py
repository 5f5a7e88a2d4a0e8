"""simcloud's Nova `os-keypairs`: import, generate, list, show, delete and their errors."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from simcloud.app import create_app
from simcloud.config import SimConfig
from simcloud.keypairs import find_keypair
from tests.support.simcloud_server import in_process_simcloud, login

KEYPAIRS = "/compute/v2.1/os-keypairs"
#: The api-ref's import sample (2.10).
SAMPLE_KEY = (
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDx8nkQv/zgGgB4rMYmIf+6A4l6Rr+o/6lHBQdW5aYd44bd8JttDCE/"
    "F/pNRr0lRE+PiqSPO8nDPHw0010JeMH9gYgnnFlyY3/OcJ02RhIPyyxYpv9FhY+2YiUkpwFOcLImyrxEsYXpD/0d3ac3"
    "0bNH6Sw9JD9UZHYcpSxsIbECHw== Generated-by-Nova"
)
IMPORT_SAMPLE = {"keypair": {"name": "keypair-d20a3d59", "type": "ssh", "public_key": SAMPLE_KEY}}
SHOW_KEYS = {
    "fingerprint",
    "name",
    "type",
    "public_key",
    "user_id",
    "deleted",
    "created_at",
    "updated_at",
    "deleted_at",
    "id",
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def create(client: httpx.AsyncClient, **keypair: Any) -> httpx.Response:
    return await client.post(KEYPAIRS, json={"keypair": keypair})


def ed25519_key() -> str:
    public = ed25519.Ed25519PrivateKey.generate().public_key()
    raw = public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return raw.decode() + " me@laptop"


async def test_import_sample_returns_the_key_with_its_md5_fingerprint(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(KEYPAIRS, json=IMPORT_SAMPLE)

    assert response.status_code == 201, response.text
    keypair = response.json()["keypair"]
    assert set(keypair) == {"fingerprint", "name", "type", "public_key", "user_id"}
    blob = base64.b64decode(SAMPLE_KEY.split()[1])
    digest = hashlib.md5(blob, usedforsecurity=False).hexdigest()
    assert keypair["fingerprint"] == ":".join(digest[i : i + 2] for i in range(0, 32, 2))
    assert keypair["public_key"] == SAMPLE_KEY


async def test_generated_key_pair_returns_a_private_key_once(client: httpx.AsyncClient) -> None:
    response = await create(client, name="generated", type="ssh")
    shown = (await client.get(f"{KEYPAIRS}/generated")).json()["keypair"]

    keypair = response.json()["keypair"]
    assert response.status_code == 201
    assert keypair["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert keypair["public_key"].startswith("ssh-rsa ")
    assert keypair["public_key"].endswith(" Generated-by-Nova")
    private = serialization.load_pem_private_key(keypair["private_key"].encode(), None)
    public = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert keypair["public_key"].startswith(public.decode())
    assert "private_key" not in shown
    assert shown["fingerprint"] == keypair["fingerprint"]


async def test_ed25519_and_ecdsa_keys_are_accepted(client: httpx.AsyncClient) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    ecdsa = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )

    ed = await create(client, name="ed", public_key=ed25519_key())
    ecd = await create(client, name="ec", public_key=ecdsa.decode())

    assert (ed.status_code, ecd.status_code) == (201, 201)
    assert ecdsa.decode().startswith("ecdsa-sha2-nistp256 ")


async def test_x509_key_pairs_are_generated_as_certificates(client: httpx.AsyncClient) -> None:
    response = await create(client, name="winrm", type="x509")

    keypair = response.json()["keypair"]
    cert = x509.load_pem_x509_certificate(keypair["public_key"].encode())
    sha1 = cert.fingerprint(hashes.SHA1()).hex()
    assert keypair["type"] == "x509"
    assert keypair["fingerprint"] == ":".join(sha1[i : i + 2] for i in range(0, 40, 2))
    assert base64.b64decode(keypair["private_key"])  # a PKCS#12 bundle
    imported = await create(client, name="winrm-2", type="x509", public_key=keypair["public_key"])
    not_a_cert = await create(client, name="winrm-3", type="x509", public_key=SAMPLE_KEY)
    assert imported.status_code == 201
    assert not_a_cert.status_code == 400
    assert not_a_cert.json()["badRequest"]["message"].startswith(
        "Keypair data is invalid: failed to generate X509 fingerprint. Error message: "
    )


async def test_show_has_the_database_fields_and_list_has_the_keys(
    client: httpx.AsyncClient,
) -> None:
    await client.post(KEYPAIRS, json=IMPORT_SAMPLE)

    shown = (await client.get(f"{KEYPAIRS}/keypair-d20a3d59")).json()["keypair"]
    listed = (await client.get(KEYPAIRS)).json()

    assert set(shown) == SHOW_KEYS
    assert (shown["deleted"], shown["updated_at"], shown["deleted_at"]) == (False, None, None)
    assert isinstance(shown["id"], int)
    assert listed == {
        "keypairs": [
            {
                "keypair": {
                    "name": "keypair-d20a3d59",
                    "public_key": SAMPLE_KEY,
                    "fingerprint": shown["fingerprint"],
                    "type": "ssh",
                }
            }
        ]
    }


async def test_list_pages_by_name_with_links(client: httpx.AsyncClient) -> None:
    for name in ("c", "a", "b"):
        await create(client, name=name, public_key=SAMPLE_KEY)

    first = (await client.get(KEYPAIRS, params={"limit": 2})).json()
    rest = (await client.get(KEYPAIRS, params={"limit": 2, "marker": "b"})).json()
    bad_marker = await client.get(KEYPAIRS, params={"marker": "zzz"})

    assert [k["keypair"]["name"] for k in first["keypairs"]] == ["a", "b"]
    assert first["keypairs_links"][0]["href"].endswith("os-keypairs?limit=2&marker=b")
    assert [k["keypair"]["name"] for k in rest["keypairs"]] == ["c"]
    assert bad_marker.json()["badRequest"]["message"] == "Marker zzz could not be found."


async def test_delete_then_404_with_novas_message(client: httpx.AsyncClient) -> None:
    user_id = (await create(client, name="gone", public_key=SAMPLE_KEY)).json()["keypair"][
        "user_id"
    ]

    deleted = await client.delete(f"{KEYPAIRS}/gone")
    shown = await client.get(f"{KEYPAIRS}/gone")
    again = await client.delete(f"{KEYPAIRS}/gone")

    assert deleted.status_code == 204
    message = f"Keypair gone not found for user {user_id}"
    assert shown.json() == {"itemNotFound": {"code": 404, "message": message}}
    assert again.status_code == 404


async def test_duplicate_name_is_a_409(client: httpx.AsyncClient) -> None:
    await client.post(KEYPAIRS, json=IMPORT_SAMPLE)

    response = await client.post(KEYPAIRS, json=IMPORT_SAMPLE)

    assert response.json() == {
        "conflictingRequest": {
            "code": 409,
            "message": "Key pair 'keypair-d20a3d59' already exists.",
        }
    }


@pytest.mark.parametrize(
    "public_key",
    [
        "not a key",
        "ssh-rsa",
        "ssh-rsa !!!notbase64!!!",
        "ssh-ed25519 " + base64.b64encode(b"garbage").decode(),
        "ssh-rsa " + SAMPLE_KEY.split()[1][:40],
    ],
)
async def test_invalid_public_keys_are_a_400(client: httpx.AsyncClient, public_key: str) -> None:
    response = await create(client, name="bad", public_key=public_key)

    assert response.json() == {
        "badRequest": {
            "code": 400,
            "message": "Keypair data is invalid: failed to generate fingerprint",
        }
    }


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"keypair": {}},
        {"keypair": {"name": ""}},
        {"keypair": {"name": "a" * 256}},
        {"keypair": {"name": "bad/name"}},
        {"keypair": {"name": " padded "}},
        {"keypair": {"name": "k", "type": "pgp"}},
        {"keypair": {"name": "k", "public_key": 5}},
        {"keypair": {"name": "k", "bogus": 1}},
        {"keypair": {"name": "k"}, "extra": 1},
    ],
)
async def test_malformed_create_bodies_are_a_400(client: httpx.AsyncClient, body: Any) -> None:
    response = await client.post(KEYPAIRS, json=body)

    assert response.status_code == 400, response.text
    assert "badRequest" in response.json()


async def test_another_users_key_pairs_are_forbidden(client: httpx.AsyncClient) -> None:
    response = await create(client, name="k", public_key=SAMPLE_KEY, user_id="someone-else")

    assert response.status_code == 403


async def test_find_keypair_sees_created_pairs_and_reset_forgets_them() -> None:
    app = create_app(SimConfig())
    state = app.state.sim
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://simcloud"
    ) as client:
        client.headers.update(await login(client))
        await client.post(KEYPAIRS, json=IMPORT_SAMPLE)
        found = find_keypair(state, "keypair-d20a3d59")
        await client.post("/sim/reset")

    assert found is not None and found.public_key == SAMPLE_KEY
    assert find_keypair(state, "keypair-d20a3d59") is None
    assert find_keypair(state, "missing") is None
