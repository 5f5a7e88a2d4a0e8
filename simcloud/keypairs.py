"""Nova's `os-keypairs` (microversion 2.35 shapes): import, generate, list, show, delete."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from simcloud.errors import SimError, bad_request, read_body
from simcloud.identity import AuthToken, base_url
from simcloud.state import KeypairBook, KeypairRecord, SimState, Token, state_of

router = APIRouter(prefix="/compute/v2.1")

#: Nova's default `key_pairs` quota.
QUOTA = 100
MAX_LIMIT = 1000


class KeypairCreate(BaseModel):
    """Nova's `keypair` object for create (2.10 to 2.91)."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[StrictStr, Field(min_length=1, max_length=255, pattern=r"^[_\- a-zA-Z0-9]+$")]
    type: Literal["ssh", "x509"] = "ssh"
    public_key: StrictStr | None = None
    user_id: StrictStr | None = None

    @field_validator("name")
    @classmethod
    def _no_outer_space(cls, value: str) -> str:
        if value.strip() != value:
            raise ValueError("name may not have leading or trailing whitespace")
        return value


class KeypairCreateBody(BaseModel):
    """`POST /os-keypairs` body."""

    model_config = ConfigDict(extra="forbid")

    keypair: KeypairCreate


def book_of(state: SimState) -> KeypairBook:
    """This simcloud's key pairs."""
    return state.keypairs


def find_keypair(state: SimState, name: str) -> KeypairRecord | None:
    """The key pair `name` (server create's `key_name`), or None."""
    return book_of(state).keypairs.get(name)


def invalid_keypair(reason: str) -> SimError:
    """Nova's `InvalidKeypair` (400)."""
    return bad_request(f"Keypair data is invalid: {reason}")


def ssh_fingerprint(public_key: str) -> str:
    """Nova's fingerprint (MD5 of the key blob), or 400 if it is no OpenSSH public key."""
    try:
        serialization.load_ssh_public_key(public_key.encode())
        blob = base64.b64decode(public_key.split(" ")[1])
    except (ValueError, IndexError, binascii.Error, UnicodeError, UnsupportedAlgorithm) as exc:
        raise invalid_keypair("failed to generate fingerprint") from exc
    return _colons(hashlib.md5(blob, usedforsecurity=False).hexdigest())


def x509_fingerprint(pem: str) -> str:
    """SHA-1 of a PEM certificate, or Nova's 400."""
    try:
        cert = x509.load_pem_x509_certificate(pem.encode())
    except ValueError as exc:
        raise invalid_keypair(f"failed to generate X509 fingerprint. Error message: {exc}") from exc
    return _colons(cert.fingerprint(hashes.SHA1()).hex())  # noqa: S303 - Nova's choice


def _colons(hexdigest: str) -> str:
    return ":".join(hexdigest[i : i + 2] for i in range(0, len(hexdigest), 2))


def generate_ssh() -> tuple[str, str, str]:
    """A new RSA key pair as Nova makes it: (private PEM, public key, fingerprint)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    openssh = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    public = f"{openssh.decode()} Generated-by-Nova"
    return private, public, ssh_fingerprint(public)


def generate_x509(user_id: str) -> tuple[str, str, str]:
    """A WinRM client certificate: (base64 PKCS#12, PEM certificate, fingerprint)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, user_id)])
    now = dt.datetime.now(dt.UTC)
    upn = x509.OtherName(
        x509.ObjectIdentifier("1.3.6.1.4.1.311.20.2.3"), _der_utf8(f"{user_id}@localhost")
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), False)
        .add_extension(x509.SubjectAlternativeName([upn]), False)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    bundle = pkcs12.serialize_key_and_certificates(
        None, key, cert, None, serialization.NoEncryption()
    )
    return base64.b64encode(bundle).decode(), pem, x509_fingerprint(pem)


def _der_utf8(text: str) -> bytes:
    # An otherName's value is DER: here a UTF8String (tag 12), as `openssl req` writes it.
    data = text.encode()
    size = len(data)
    length = bytes([size]) if size < 128 else bytes([0x82]) + size.to_bytes(2, "big")
    return b"\x0c" + length + data


def _check_user(token: Token, user_id: str | None, action: str) -> str:
    # Only admins may act on another user's key pairs.
    if user_id is not None and user_id != token.user_id:
        raise SimError(
            403, f"Policy doesn't allow os_compute_api:os-keypairs:{action} to be performed."
        )
    return token.user_id


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).replace(tzinfo=None).isoformat()


def _public(record: KeypairRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "public_key": record.public_key,
        "fingerprint": record.fingerprint,
        "type": record.type,
    }


@router.post("/os-keypairs", status_code=201)
async def create_keypair(request: Request, token: AuthToken) -> JSONResponse:
    """Import `public_key`, or generate a key pair and return its `private_key` once."""
    body = (await read_body(request, KeypairCreateBody)).keypair
    user_id = _check_user(token, body.user_id, "create")
    state = state_of(request)
    book = book_of(state)
    if len(book.keypairs) >= QUOTA:
        raise SimError(403, "Quota exceeded, too many key pairs.")
    private_key: str | None = None
    if body.public_key is not None:
        public_key = body.public_key
        x509_key = body.type == "x509"
        fingerprint = x509_fingerprint(public_key) if x509_key else ssh_fingerprint(public_key)
    elif body.type == "ssh":
        private_key, public_key, fingerprint = generate_ssh()
    else:
        private_key, public_key, fingerprint = generate_x509(user_id)
    if body.name in book.keypairs:
        raise SimError(409, f"Key pair '{body.name}' already exists.")
    record = KeypairRecord(
        book.next_id, body.name, user_id, body.type, public_key, fingerprint, state.now()
    )
    book.keypairs[record.name], book.next_id = record, book.next_id + 1
    keypair = _public(record) | {"user_id": user_id}
    if private_key is not None:
        keypair["private_key"] = private_key
    return JSONResponse({"keypair": keypair}, status_code=201)


@router.get("/os-keypairs")
async def list_keypairs(request: Request, token: AuthToken) -> JSONResponse:
    """The user's key pairs by name, `limit`/`marker` paged (2.35)."""
    params = request.query_params
    _check_user(token, params.get("user_id"), "index")
    limit = _limit(params.get("limit"))
    ordered = sorted(book_of(state_of(request)).keypairs.values(), key=lambda r: r.name)
    marker = params.get("marker")
    if marker is not None:
        names = [r.name for r in ordered]
        if marker not in names:
            raise bad_request(f"Marker {marker} could not be found.")
        ordered = ordered[names.index(marker) + 1 :]
    page = ordered[:limit]
    body: dict[str, Any] = {"keypairs": [{"keypair": _public(r)} for r in page]}
    if page and len(page) == limit:
        query = urlencode(dict(params) | {"marker": page[-1].name})
        href = f"{base_url(request)}/compute/v2.1/os-keypairs?{query}"
        body["keypairs_links"] = [{"href": href, "rel": "next"}]
    return JSONResponse(body)


def _limit(raw: str | None) -> int:
    if raw is None:
        return MAX_LIMIT
    if not raw.isdigit():
        raise bad_request(
            f"Invalid input for query parameters limit. Value: {raw}. "
            f"'{raw}' does not match '^[0-9]*$'"
        )
    return min(int(raw), MAX_LIMIT)


def _get(request: Request, token: AuthToken, name: str, action: str) -> KeypairRecord:
    user_id = _check_user(token, request.query_params.get("user_id"), action)
    record = find_keypair(state_of(request), name)
    if record is None:
        raise SimError(404, f"Keypair {name} not found for user {user_id}")
    return record


@router.get("/os-keypairs/{keypair_name}")
async def show_keypair(request: Request, keypair_name: str, token: AuthToken) -> JSONResponse:
    """One key pair, with its database fields (`id`, `created_at`, `deleted`...)."""
    record = _get(request, token, keypair_name, "show")
    keypair = _public(record) | {
        "user_id": record.user_id,
        "deleted": False,
        "created_at": _iso(record.created_at),
        "updated_at": None,
        "deleted_at": None,
        "id": record.id,
    }
    return JSONResponse({"keypair": keypair})


@router.delete("/os-keypairs/{keypair_name}", status_code=204)
async def delete_keypair(request: Request, keypair_name: str, token: AuthToken) -> Response:
    """Delete a key pair; later lookups answer 404."""
    record = _get(request, token, keypair_name, "delete")
    del book_of(state_of(request)).keypairs[record.name]
    return Response(status_code=204)
