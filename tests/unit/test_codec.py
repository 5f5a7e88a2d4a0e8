"""The payload codecs: compression (zlib, sizes, refusals) and encryption (AES-GCM, key
ids, rotation, clear errors), and the two chained."""

from __future__ import annotations

import base64
import json
import os
import zlib
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter

from config import Settings
from config.codec import (
    COMPRESS_MIN_BYTES,
    COMPRESSED,
    ENCODING,
    KEY_ID_METADATA,
    MAX_EXPANDED_BYTES,
    ChainCodec,
    CodecKeyError,
    CodecKeys,
    CompressionCodec,
    EncryptionCodec,
    PayloadDecompressionError,
    PayloadDecryptionError,
    new_keys_json,
    warden_codec,
)
from config.temporal_client import load_codec_keys, warden_data_converter

SECRET = "hunter2-parameter-value"


def keys(current: str, *ids: str, material: dict[str, bytes] | None = None) -> CodecKeys:
    material = material or {}
    return CodecKeys(current, {i: material.get(i) or os.urandom(32) for i in {current, *ids}})


def plain(value: object) -> Payload:
    return pydantic_data_converter.payload_converter.to_payloads([value])[0]


async def test_encode_hides_the_value_and_decode_restores_the_payload() -> None:
    codec = EncryptionCodec(keys("k1"))
    original = plain({"password": SECRET})
    [encrypted] = await codec.encode([original])
    assert encrypted.metadata["encoding"] == ENCODING
    assert encrypted.metadata[KEY_ID_METADATA] == b"k1"
    assert SECRET.encode() not in encrypted.SerializeToString()
    assert await codec.decode([encrypted]) == [original]


async def test_same_payload_encrypts_differently_each_time() -> None:
    codec = EncryptionCodec(keys("k1"))
    first, second = await codec.encode([plain("x"), plain("x")])
    assert first.data != second.data


async def test_plain_payloads_pass_through_decode() -> None:
    codec = EncryptionCodec(keys("k1"))
    original = plain({"stack": "shop"})
    assert await codec.decode([original]) == [original]


async def test_rotation_old_key_decodes_and_new_key_encrypts() -> None:
    old_key, new_key = os.urandom(32), os.urandom(32)
    before = EncryptionCodec(CodecKeys("2026-01", {"2026-01": old_key}))
    [old_payload] = await before.encode([plain(SECRET)])
    after = EncryptionCodec(CodecKeys("2026-07", {"2026-07": new_key, "2026-01": old_key}))
    assert await after.decode([old_payload]) == [plain(SECRET)]
    [new_payload] = await after.encode([plain(SECRET)])
    assert new_payload.metadata[KEY_ID_METADATA] == b"2026-07"
    with pytest.raises(PayloadDecryptionError, match="'2026-07', which is not among"):
        await before.decode([new_payload])


async def test_tampered_payload_fails_with_a_clear_error() -> None:
    codec = EncryptionCodec(keys("k1"))
    [encrypted] = await codec.encode([plain(SECRET)])
    flipped = bytearray(encrypted.data)
    flipped[-1] ^= 0x01
    tampered = Payload(metadata=dict(encrypted.metadata), data=bytes(flipped))
    with pytest.raises(PayloadDecryptionError, match="failed authentication: it was altered"):
        await codec.decode([tampered])


async def test_key_id_is_bound_to_the_ciphertext() -> None:
    shared = os.urandom(32)
    codec = EncryptionCodec(CodecKeys("a", {"a": shared, "b": shared}))
    [encrypted] = await codec.encode([plain(SECRET)])
    relabelled = Payload(
        metadata={"encoding": ENCODING, KEY_ID_METADATA: b"b"}, data=encrypted.data
    )
    with pytest.raises(PayloadDecryptionError, match="key id 'b' failed authentication"):
        await codec.decode([relabelled])


async def test_unknown_key_id_fails_with_a_clear_error() -> None:
    [encrypted] = await EncryptionCodec(keys("gone")).encode([plain(SECRET)])
    with pytest.raises(PayloadDecryptionError, match=r"key id 'gone'.*\(k1\).*add that key"):
        await EncryptionCodec(keys("k1")).decode([encrypted])


async def test_truncated_payload_fails_with_a_clear_error() -> None:
    codec = EncryptionCodec(keys("k1"))
    [encrypted] = await codec.encode([plain(SECRET)])
    short = Payload(metadata=dict(encrypted.metadata), data=encrypted.data[:5])
    with pytest.raises(PayloadDecryptionError, match="failed authentication"):
        await codec.decode([short])


def test_keys_json_round_trip_and_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(new_keys_json("dev"))
    loaded = CodecKeys.from_file(path)
    assert loaded.current == "dev"
    assert len(loaded.keys["dev"]) == 32
    assert load_codec_keys(Settings(codec_keys_file=path)) == loaded


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "is not JSON"),
        ('{"keys": {"a": "AAAA"}}', 'needs "current"'),
        ('{"current": "a"}', "must be"),
        ('{"current": "b", "keys": {"a": "' + "A" * 44 + '"}}', "'b' is not among"),
        ('{"current": "a", "keys": {"a": "%%%"}}', "not base64"),
        ('{"current": "a", "keys": {"a": "AAAA"}}', "3 bytes; AES-GCM needs"),
    ],
)
def test_bad_keys_documents_are_refused_clearly(text: str, message: str) -> None:
    with pytest.raises(CodecKeyError, match=message):
        CodecKeys.from_json(text)


def test_error_messages_never_contain_key_material() -> None:
    key = base64.b64encode(os.urandom(20)).decode()
    with pytest.raises(CodecKeyError) as caught:
        CodecKeys.from_json(json.dumps({"current": "a", "keys": {"a": key}}))
    assert key not in str(caught.value)


def test_missing_keys_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CodecKeyError, match="Cannot read codec keys file"):
        load_codec_keys(Settings(codec_keys_file=tmp_path / "absent.json"))


def test_inline_keys_take_precedence_and_no_keys_means_plain(tmp_path: Path) -> None:
    inline = new_keys_json("inline")
    settings = Settings(codec_keys=inline, codec_keys_file=tmp_path / "absent.json")
    loaded = load_codec_keys(settings)
    assert loaded is not None
    assert loaded.current == "inline"
    assert isinstance(warden_data_converter(None).payload_codec, CompressionCodec)
    converter = warden_data_converter(loaded)
    assert isinstance(converter.payload_codec, ChainCodec)
    compression, encryption = converter.payload_codec.codecs
    assert isinstance(compression, CompressionCodec) and compression.write
    assert isinstance(encryption, EncryptionCodec)
    assert converter.payload_converter_class is pydantic_data_converter.payload_converter_class
    off = warden_data_converter(loaded, compress=False).payload_codec
    assert isinstance(off, ChainCodec)
    assert isinstance(off.codecs[0], CompressionCodec) and not off.codecs[0].write


#: A victim's removal record as a scale-in writes it: ids repeated in every event.
REMOVAL = {
    "node_id": "ecba0f27-181d-49ad-ad66-2b7c296e7858",
    "changes": {
        "events": [
            {
                "project_id": "bench",
                "obj_id": "ecba0f27-181d-49ad-ad66-2b7c296e7858",
                "cluster_id": "5c00ae06-1a63-41b4-9f7d-a14ee3c941bd",
                "action_id": "38df0885-5dcc-4de5-b43a-919bb2c1aafa",
                "status_reason": reason,
                "password": SECRET,
            }
            for reason in ("complete_lifecycle received via api", "Node deleted")
        ]
    },
}


async def test_large_payloads_are_stored_compressed_and_come_back_the_same() -> None:
    codec = CompressionCodec()
    original = plain(REMOVAL)
    assert original.ByteSize() >= COMPRESS_MIN_BYTES
    [packed] = await codec.encode([original])
    assert packed.metadata["encoding"] == COMPRESSED
    assert packed.ByteSize() < original.ByteSize() * 0.7
    assert await codec.decode([packed]) == [original]


async def test_small_or_incompressible_payloads_are_stored_as_they_are() -> None:
    codec = CompressionCodec()
    small = plain({"stack": "shop"})
    noise = plain(os.urandom(4096))  # binary/plain: random bytes do not shrink
    assert noise.ByteSize() >= COMPRESS_MIN_BYTES
    assert await codec.encode([small, noise]) == [small, noise]


async def test_compressed_then_encrypted_reads_back_and_old_payloads_still_do() -> None:
    k1 = keys("k1")
    codec = warden_codec(k1)
    original = plain(REMOVAL)
    [stored] = await codec.encode([original])
    assert stored.metadata["encoding"] == ENCODING  # compression happens inside
    assert SECRET.encode() not in stored.SerializeToString()
    assert len(stored.data) < original.ByteSize()
    # Written before compression (encrypted only), or before encryption (plain or
    # compressed only): all of them decode.
    [encrypted_only] = await EncryptionCodec(k1).encode([original])
    [compressed_only] = await CompressionCodec().encode([original])
    for payload in (stored, encrypted_only, compressed_only, original):
        assert await codec.decode([payload]) == [original]
    # Compression turned off: nothing new is compressed, what was still reads.
    off = warden_codec(k1, compress=False)
    [fresh] = await off.encode([original])
    assert len(fresh.data) > original.ByteSize()
    assert await off.decode([stored, fresh]) == [original, original]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not zlib at all", "malformed"),
        (zlib.compress(b"x" * 10_000)[:20], "truncated"),
        (zlib.compress(b"\0" * (MAX_EXPANDED_BYTES + 1)), "expands beyond 64 MiB"),
    ],
)
async def test_bad_compressed_payloads_are_refused_clearly(data: bytes, message: str) -> None:
    bad = Payload(metadata={"encoding": COMPRESSED}, data=data)
    with pytest.raises(PayloadDecompressionError, match=message):
        await CompressionCodec().decode([bad])
