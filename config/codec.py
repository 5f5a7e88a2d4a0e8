"""Payload compression and encryption for every Temporal client and worker.

Compression (`CompressionCodec`, zlib) comes first: payloads of `COMPRESS_MIN_BYTES` or
more are stored compressed when that saves bytes, so a stack near the resource limit
stays far below Temporal's 2 MB payload limit and every history is smaller to write
and read back. Encryption (`EncryptionCodec`, AES-GCM with named keys) seals the result
when keys are configured. `warden_codec` chains them.

Keys file (JSON), given by `WARDEN_CODEC_KEYS_FILE` or inline in `WARDEN_CODEC_KEYS`:

    {"current": "2026-07", "keys": {"2026-07": "<base64 of 32 random bytes>",
                                    "2026-01": "<the previous key, still decodes>"}}

The current key encrypts; every listed key decrypts (rotation). A payload that is not
encrypted (`encoding` other than `binary/encrypted`) passes through unchanged, so
histories written before encryption was turned on still replay and still decode; the
same holds for payloads written before compression (`encoding` other than `binary/zlib`).

Compressing before encrypting lets a payload's stored length depend on how much of its
content repeats. Someone who can read the history's sizes (not its content) and also
choose part of a payload could, over many tries, learn whether their guess matches a
secret in it (the CRIME class of attacks). `codec_compression = false` turns compression
off where that matters more than payload size.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCODING = b"binary/encrypted"
KEY_ID_METADATA = "encryption-key-id"
NONCE_BYTES = 12
KEY_SIZES = (16, 24, 32)
COMPRESSED = b"binary/zlib"
#: Smaller payloads are stored as they are (a few ids compress to nearly their own size).
COMPRESS_MIN_BYTES = 512
#: A compressed payload that would expand beyond this is refused, not inflated: a
#: payload from outside (an app's own signal) must not exhaust the worker's memory.
MAX_EXPANDED_BYTES = 64 * 1024 * 1024


class CodecKeyError(ValueError):
    """The codec keys (file or setting) are unusable; the message says why, never a key."""


class PayloadDecryptionError(ValueError):
    """An encrypted payload could not be decrypted (unknown key id, tampered, malformed)."""


class PayloadDecompressionError(PayloadDecryptionError):
    """A compressed payload could not be expanded (malformed, or larger than allowed).

    A kind of `PayloadDecryptionError`: whoever handles a payload that cannot be read
    back (the codec server's 400) handles both."""


@dataclass(frozen=True)
class CodecKeys:
    """Named AES keys: `current` encrypts, all of `keys` decrypt."""

    current: str
    keys: Mapping[str, bytes]

    def __post_init__(self) -> None:
        if self.current not in self.keys:
            raise CodecKeyError(f"The current key id {self.current!r} is not among the keys.")
        for key_id, key in self.keys.items():
            if not key_id or not key_id.isascii():
                raise CodecKeyError(f"Key id {key_id!r} must be non-empty ASCII.")
            if len(key) not in KEY_SIZES:
                raise CodecKeyError(
                    f"Key {key_id!r} is {len(key)} bytes; AES-GCM needs 16, 24 or 32."
                )

    @classmethod
    def from_json(cls, text: str, *, source: str = "codec keys") -> CodecKeys:
        """Parse `{"current": id, "keys": {id: base64}}`."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise CodecKeyError(f"{source} is not JSON: {err.msg} (line {err.lineno})") from err
        if not isinstance(data, dict) or not isinstance(data.get("keys"), dict):
            raise CodecKeyError(f'{source} must be {{"current": "<id>", "keys": {{...}}}}.')
        current = data.get("current")
        if not isinstance(current, str):
            raise CodecKeyError(f'{source} needs "current": the id of the key that encrypts.')
        keys = {}
        for key_id, encoded in data["keys"].items():
            try:
                keys[str(key_id)] = base64.b64decode(str(encoded), validate=True)
            except binascii.Error as err:
                raise CodecKeyError(f"Key {key_id!r} in {source} is not base64.") from err
        return cls(current=current, keys=keys)

    @classmethod
    def from_file(cls, path: Path) -> CodecKeys:
        """Read a keys file."""
        try:
            text = path.read_text()
        except OSError as err:
            raise CodecKeyError(f"Cannot read codec keys file {path}: {err.strerror}") from err
        return cls.from_json(text, source=f"codec keys file {path}")


def new_keys_json(key_id: str) -> str:
    """A keys document with one fresh random 256-bit key (for `warden dev`)."""
    key = base64.b64encode(os.urandom(32)).decode()
    return json.dumps({"current": key_id, "keys": {key_id: key}}, indent=2) + "\n"


class EncryptionCodec(PayloadCodec):
    """AES-GCM over the whole serialized payload; the key id rides in clear metadata
    and is bound to the ciphertext as associated data."""

    def __init__(self, keys: CodecKeys) -> None:
        self.keys = keys
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.keys.items()}

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Encrypt every payload with the current key."""
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Decrypt encrypted payloads; plain ones pass through unchanged."""
        return [self.decrypt(p) if is_encrypted(p) else p for p in payloads]

    def encrypt(self, payload: Payload) -> Payload:
        """One payload, encrypted with the current key."""
        key_id = self.keys.current
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._ciphers[key_id].encrypt(nonce, payload.SerializeToString(), key_id.encode())
        return Payload(
            metadata={"encoding": ENCODING, KEY_ID_METADATA: key_id.encode()},
            data=nonce + sealed,
        )

    def decrypt(self, payload: Payload) -> Payload:
        """One encrypted payload back to the payload it was made from."""
        key_id = payload.metadata.get(KEY_ID_METADATA, b"").decode(errors="replace")
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            known = ", ".join(sorted(self._ciphers))
            raise PayloadDecryptionError(
                f"Payload was encrypted with key id {key_id!r}, which is not among the "
                f"codec keys ({known}); add that key to the keys file to read it."
            )
        nonce, sealed = payload.data[:NONCE_BYTES], payload.data[NONCE_BYTES:]
        try:
            plain = cipher.decrypt(nonce, sealed, key_id.encode())
        except (InvalidTag, ValueError) as err:
            raise PayloadDecryptionError(
                f"Payload encrypted with key id {key_id!r} failed authentication: it was "
                "altered, or the key under that id is not the one that encrypted it."
            ) from err
        return Payload.FromString(plain)


def is_encrypted(payload: Payload) -> bool:
    """Whether a payload was made by `EncryptionCodec`."""
    return payload.metadata.get("encoding") == ENCODING


class CompressionCodec(PayloadCodec):
    """zlib over the whole serialized payload, for payloads big enough to gain from it.

    With `write=False` it only expands what it finds compressed (compression turned off
    after payloads were written compressed).
    """

    def __init__(self, *, write: bool = True) -> None:
        self.write = write

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Compress each payload of `COMPRESS_MIN_BYTES` or more when it gets smaller."""
        if not self.write:
            return list(payloads)
        return [self.compress(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Expand compressed payloads; the others pass through unchanged."""
        return [self.expand(p) if is_compressed(p) else p for p in payloads]

    @staticmethod
    def compress(payload: Payload) -> Payload:
        """One payload, compressed when that saves bytes (else unchanged)."""
        if payload.ByteSize() < COMPRESS_MIN_BYTES:
            return payload
        raw = payload.SerializeToString()
        packed = zlib.compress(raw)
        if len(packed) >= len(raw):
            return payload
        return Payload(metadata={"encoding": COMPRESSED}, data=packed)

    @staticmethod
    def expand(payload: Payload) -> Payload:
        """One compressed payload back to the payload it was made from."""
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(payload.data, MAX_EXPANDED_BYTES)
        except zlib.error as err:
            raise PayloadDecompressionError(f"Compressed payload is malformed: {err}") from err
        if inflater.unconsumed_tail:
            raise PayloadDecompressionError(
                f"Compressed payload expands beyond {MAX_EXPANDED_BYTES // 2**20} MiB; refused."
            )
        if not inflater.eof:
            raise PayloadDecompressionError("Compressed payload is truncated.")
        return Payload.FromString(raw)


class ChainCodec(PayloadCodec):
    """Codecs applied in order on encode and in reverse order on decode."""

    def __init__(self, codecs: Sequence[PayloadCodec]) -> None:
        self.codecs = list(codecs)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each codec's encode, first to last."""
        encoded = list(payloads)
        for codec in self.codecs:
            encoded = await codec.encode(encoded)
        return encoded

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each codec's decode, last to first."""
        decoded = list(payloads)
        for codec in reversed(self.codecs):
            decoded = await codec.decode(decoded)
        return decoded


def warden_codec(keys: CodecKeys | None, *, compress: bool = True) -> PayloadCodec:
    """Compression (unless turned off), then encryption with `keys` (when there are any).

    Decoding expands compressed payloads even with compression turned off: a history may
    hold payloads written with either setting.
    """
    compression = CompressionCodec(write=compress)
    if keys is None:
        return compression
    return ChainCodec([compression, EncryptionCodec(keys)])


def is_compressed(payload: Payload) -> bool:
    """Whether a payload was made by `CompressionCodec`."""
    return payload.metadata.get("encoding") == COMPRESSED
