"""Payload encryption end to end: what Temporal stores holds no clear secret, and the
API's codec server gives it back to an admin (and to the UI's origin) over HTTP."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import History

from config.codec import ChainCodec, EncryptionCodec, is_compressed, is_encrypted
from tests.integration.conftest import Warden
from tests.integration.test_stacks import settled
from tests.support.eventually import eventually

pytestmark = pytest.mark.integration

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"db_password": {"type": "string", "hidden": True}},
    "resources": {
        "config": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "db_password"}},
        }
    },
}
UI = "http://localhost:8233"


def payloads_in(message: Message) -> Iterator[Payload]:
    """Every `Payload` anywhere inside a protobuf message."""
    if isinstance(message, Payload):
        yield message
        return
    for field, value in message.ListFields():
        if field.type != field.TYPE_MESSAGE or field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            children = list(value.values())
        elif field.is_repeated:
            children = list(value)
        else:
            children = [value]
        for child in children:
            if isinstance(child, Message):
                yield from payloads_in(child)


async def stack_histories(warden: Warden, stack_id: str) -> list[History]:
    async def listed() -> list[str] | None:
        found = [wf.id async for wf in warden.temporal.list_workflows(f'WardenTarget="{stack_id}"')]
        return found if len(found) >= 2 else None  # the stack and its CREATE operation

    ids = await eventually(listed, what="stack workflows visible")
    histories = []
    for workflow_id in ids:
        fetched = await warden.temporal.get_workflow_handle(workflow_id).fetch_history()
        histories.append(History(events=fetched.events))
    return histories


async def create_secret_stack(warden: Warden, secret: str) -> dict[str, Any]:
    async with warden.client() as api:
        name = f"enc{uuid.uuid4().hex[:8]}"
        body = {"stack_name": name, "template": TEMPLATE, "parameters": {"db_password": secret}}
        created = await api.post("/v1/demo/stacks", json=body)
        assert created.status_code == 201, created.text
        stack_id = created.json()["stack"]["id"]
        stack = await settled(api, f"/v1/demo/stacks/{name}/{stack_id}")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert stack["parameters"]["db_password"] == "******"
    return stack


async def test_raw_histories_hold_no_clear_secret(warden: Warden) -> None:
    secret = f"pw-{uuid.uuid4().hex}"
    stack = await create_secret_stack(warden, secret)
    histories = await stack_histories(warden, stack["id"])
    for history in histories:
        assert secret.encode() not in history.SerializeToString()
    payloads = [p for h in histories for p in payloads_in(h)]
    encrypted = [p for p in payloads if is_encrypted(p)]
    assert encrypted, "no encrypted payload at all"
    # The secret is in there, encrypted: the codec finds it, so this test can fail.
    codec = warden.temporal.data_converter.payload_codec
    assert codec is not None
    decoded = await codec.decode(encrypted)
    assert any(secret.encode() in p.data for p in decoded)


async def test_codec_server_decodes_a_real_history_payload_over_http(warden: Warden) -> None:
    secret = f"pw-{uuid.uuid4().hex}"
    stack = await create_secret_stack(warden, secret)
    histories = await stack_histories(warden, stack["id"])
    codec = warden.temporal.data_converter.payload_codec
    assert isinstance(codec, ChainCodec)
    encrypted = [p for h in histories for p in payloads_in(h) if is_encrypted(p)]
    opened = await codec.decode(encrypted)
    [holder] = [p for p, o in zip(encrypted, opened, strict=True) if secret.encode() in o.data][:1]
    # Payloads of 512 bytes or more (the create's child input, with the template) were
    # compressed, then encrypted.
    encryption = codec.codecs[-1]
    assert isinstance(encryption, EncryptionCodec)
    assert any(is_compressed(encryption.decrypt(p)) for p in encrypted)
    body = {
        "payloads": [
            {
                "metadata": {k: base64.b64encode(v).decode() for k, v in holder.metadata.items()},
                "data": base64.b64encode(holder.data).decode(),
            }
        ]
    }
    async with httpx.AsyncClient(base_url=warden.api_url, timeout=10) as http:
        preflight = await http.options(
            "/codec/decode",
            headers={
                "Origin": UI,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-namespace",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == UI
        anonymous = await http.post("/codec/decode", json=body, headers={"Origin": UI})
        assert anonymous.status_code == 401
        assert anonymous.headers["access-control-allow-origin"] == UI
        reader = await http.post("/codec/decode", json=body, headers={"X-Auth-Token": "it-reader"})
        assert reader.status_code == 403
        headers = {"Authorization": "Bearer it-admin", "X-Namespace": "default", "Origin": UI}
        decoded = await http.post("/codec/decode", json=body, headers=headers)
        assert decoded.status_code == 200, decoded.text
        assert decoded.headers["access-control-allow-origin"] == UI
        [plain] = decoded.json()["payloads"]
        assert secret.encode() in base64.b64decode(plain["data"])
        assert base64.b64decode(plain["metadata"]["encoding"]) != b"binary/encrypted"
        again = await http.post("/codec/encode", json=decoded.json(), headers=headers)
        [sealed] = again.json()["payloads"]
        assert secret.encode() not in base64.b64decode(sealed["data"])
        back = await http.post("/codec/decode", json=again.json(), headers=headers)
        assert back.json() == decoded.json()
