"""The codec server in process: Temporal's remote codec protocol, auth, CORS, bad input."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
import yaml
from fastapi import FastAPI
from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads
from temporalio.contrib.pydantic import pydantic_data_converter

from api.app import create_app
from config import Settings
from config.codec import new_keys_json

TOKENS = {
    "admin-demo": {"project": "demo", "roles": ["admin"]},
    "member-demo": {"project": "demo", "roles": ["member"]},
}
UI = "http://localhost:8233"
SECRET = "s3cret-db-password"


def settings_for(tmp_path: Path, **extra: object) -> Settings:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": TOKENS}))
    keys = tmp_path / "codec-keys.json"
    keys.write_text(new_keys_json("k1"))
    return Settings(
        var_dir=tmp_path,
        tokens_file=tokens,
        temporal_address="127.0.0.1:1",
        codec_keys_file=keys,
        **extra,  # type: ignore[arg-type]
    )


@pytest_asyncio.fixture
async def codec_api(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(create_app(settings_for(tmp_path))) as client:
        yield client


def serve(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")


def plain_body(value: object) -> dict[str, object]:
    payloads = Payloads(payloads=pydantic_data_converter.payload_converter.to_payloads([value]))
    return json_format.MessageToDict(payloads)


ADMIN = {"X-Auth-Token": "admin-demo", "X-Namespace": "default"}


async def test_encode_then_decode_round_trips_and_hides_the_value(
    codec_api: httpx.AsyncClient,
) -> None:
    body = plain_body({"password": SECRET})
    encoded = await codec_api.post("/codec/encode", json=body, headers=ADMIN)
    assert encoded.status_code == 200, encoded.text
    [payload] = encoded.json()["payloads"]
    assert base64.b64decode(payload["metadata"]["encoding"]) == b"binary/encrypted"
    assert base64.b64decode(payload["metadata"]["encryption-key-id"]) == b"k1"
    assert SECRET not in encoded.text
    assert SECRET.encode() not in base64.b64decode(payload["data"])
    decoded = await codec_api.post("/codec/decode", json=encoded.json(), headers=ADMIN)
    assert decoded.status_code == 200, decoded.text
    assert decoded.json() == body


async def test_plain_payloads_decode_unchanged(codec_api: httpx.AsyncClient) -> None:
    body = plain_body({"stack": "shop"})
    decoded = await codec_api.post("/codec/decode", json=body, headers=ADMIN)
    assert decoded.json() == body


async def test_bearer_token_is_accepted_like_x_auth_token(codec_api: httpx.AsyncClient) -> None:
    headers = {"Authorization": "Bearer admin-demo"}
    answer = await codec_api.post("/codec/decode", json=plain_body(1), headers=headers)
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        ({}, 401, "Authentication required"),
        ({"Authorization": "Bearer nope"}, 401, "not valid"),
        ({"X-Auth-Token": "member-demo"}, 403, "needs the admin role"),
    ],
)
async def test_codec_refuses_without_an_admin_token(
    codec_api: httpx.AsyncClient, headers: dict[str, str], status: int, message: str
) -> None:
    answer = await codec_api.post("/codec/decode", json=plain_body(1), headers=headers)
    assert answer.status_code == status
    assert message in answer.json()["error"]["message"]


async def test_cors_preflight_allows_the_ui_origin_only(codec_api: httpx.AsyncClient) -> None:
    ask = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-namespace,authorization",
    }
    allowed = await codec_api.options("/codec/decode", headers={"Origin": UI, **ask})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == UI
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "x-namespace" in allowed.headers["access-control-allow-headers"].lower()
    other = await codec_api.options("/codec/decode", headers={"Origin": "http://evil", **ask})
    assert other.status_code == 400
    assert "access-control-allow-origin" not in other.headers
    elsewhere = await codec_api.options("/v1/clusters", headers={"Origin": UI, **ask})
    assert "access-control-allow-origin" not in elsewhere.headers


async def test_refusals_carry_cors_headers_so_the_ui_can_show_them(
    codec_api: httpx.AsyncClient,
) -> None:
    answer = await codec_api.post("/codec/decode", json=plain_body(1), headers={"Origin": UI})
    assert answer.status_code == 401
    assert answer.headers["access-control-allow-origin"] == UI


@pytest.mark.parametrize(
    ("body", "headers", "message"),
    [
        ({"payloads": [{"metadata": "x"}]}, ADMIN, "Invalid value for 'payloads.0.metadata'"),
        ({"payloads": [{"nope": 1}]}, ADMIN, "Unknown key 'payloads.0.nope'"),
        ({"payloads": [{"data": "a"}]}, ADMIN, "Invalid payloads"),
        ({"payload": []}, ADMIN, "Unknown key"),
        ({"payloads": []}, {**ADMIN, "X-Namespace": "other"}, "serves namespace 'default'"),
    ],
)
async def test_bad_requests_are_400(
    codec_api: httpx.AsyncClient, body: object, headers: dict[str, str], message: str
) -> None:
    answer = await codec_api.post("/codec/decode", json=body, headers=headers)
    assert answer.status_code == 400, answer.text
    assert message in answer.json()["error"]["message"]


async def test_tampered_payload_is_a_clear_400(codec_api: httpx.AsyncClient) -> None:
    encoded = (await codec_api.post("/codec/encode", json=plain_body(SECRET), headers=ADMIN)).json()
    data = bytearray(base64.b64decode(encoded["payloads"][0]["data"]))
    data[-1] ^= 1
    encoded["payloads"][0]["data"] = base64.b64encode(bytes(data)).decode()
    answer = await codec_api.post("/codec/decode", json=encoded, headers=ADMIN)
    assert answer.status_code == 400
    assert "failed authentication" in answer.json()["error"]["message"]


async def test_anonymous_mode_serves_requests_without_a_token(tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path, codec_allow_anonymous=True))
    async with serve(app) as client:
        answer = await client.post("/codec/decode", json=plain_body(1))
        assert answer.status_code == 200
        wrong = await client.post(
            "/codec/decode", json=plain_body(1), headers={"X-Auth-Token": "nope"}
        )
        assert wrong.status_code == 401


async def test_without_keys_plain_passes_and_encrypted_is_refused(tmp_path: Path) -> None:
    async with serve(create_app(settings_for(tmp_path))) as keyed:
        encrypted = (await keyed.post("/codec/encode", json=plain_body(1), headers=ADMIN)).json()
    plain = settings_for(tmp_path).model_copy(update={"codec_keys_file": None})
    async with serve(create_app(plain)) as keyless:
        unchanged = await keyless.post("/codec/encode", json=plain_body(1), headers=ADMIN)
        assert unchanged.json() == plain_body(1)
        refused = await keyless.post("/codec/decode", json=encrypted, headers=ADMIN)
        assert refused.status_code == 400
        assert "no codec keys" in refused.json()["error"]["message"]


def test_bad_keys_file_stops_the_api_at_start(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    assert settings.codec_keys_file is not None
    settings.codec_keys_file.write_text('{"current": "x", "keys": {}}')
    with pytest.raises(ValueError, match="'x' is not among the keys"):
        create_app(settings)


#: Big enough to be stored compressed (config/codec.py COMPRESS_MIN_BYTES).
LARGE = {"resources": [{"name": f"server{i:03d}", "status": "CREATE_COMPLETE"} for i in range(40)]}


async def test_large_payloads_are_compressed_with_or_without_keys(tmp_path: Path) -> None:
    async with serve(create_app(settings_for(tmp_path))) as keyed:
        sealed = (await keyed.post("/codec/encode", json=plain_body(LARGE), headers=ADMIN)).json()
        opened = await keyed.post("/codec/decode", json=sealed, headers=ADMIN)
        assert opened.json() == plain_body(LARGE)
    plain = settings_for(tmp_path).model_copy(update={"codec_keys_file": None})
    async with serve(create_app(plain)) as keyless:
        packed = (await keyless.post("/codec/encode", json=plain_body(LARGE), headers=ADMIN)).json()
        [payload] = packed["payloads"]
        assert base64.b64decode(payload["metadata"]["encoding"]) == b"binary/zlib"
        assert len(base64.b64decode(payload["data"])) < len(str(LARGE)) / 3
        expanded = await keyless.post("/codec/decode", json=packed, headers=ADMIN)
        assert expanded.json() == plain_body(LARGE)
        broken = {"payloads": [{**payload, "data": base64.b64encode(b"garbage").decode()}]}
        refused = await keyless.post("/codec/decode", json=broken, headers=ADMIN)
        assert refused.status_code == 400
        assert "Compressed payload is malformed" in refused.json()["error"]["message"]


async def test_compression_turned_off_still_expands_what_was_written(tmp_path: Path) -> None:
    on = settings_for(tmp_path).model_copy(update={"codec_keys_file": None})
    async with serve(create_app(on)) as compressing:
        packed = await compressing.post("/codec/encode", json=plain_body(LARGE), headers=ADMIN)
    off = on.model_copy(update={"codec_compression": False})
    async with serve(create_app(off)) as plain:
        unchanged = await plain.post("/codec/encode", json=plain_body(LARGE), headers=ADMIN)
        assert unchanged.json() == plain_body(LARGE)
        expanded = await plain.post("/codec/decode", json=packed.json(), headers=ADMIN)
        assert expanded.json() == plain_body(LARGE)
