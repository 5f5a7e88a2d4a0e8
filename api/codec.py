"""The codec server: Temporal's remote codec protocol at `/codec/encode` and `/codec/decode`,
so the Temporal UI (`--ui-codec-endpoint <api>/codec`) and `temporal … --codec-endpoint`
show an operator the payloads Warden compresses and encrypts.

Auth is the API's token (`X-Auth-Token`, or `Authorization: Bearer <token>` as the UI
sends when told to pass its access token) with the `admin` role, because one namespace
holds every project's payloads. `codec_allow_anonymous` (set by `warden dev` only) serves
requests that carry no token at all: the dev UI has no way to send one. CORS is open to
the UI's origins (`codec_cors_origins`) on `/codec` only.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Header, Request
from google.protobuf import json_format
from pydantic import BaseModel, ConfigDict, Field
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send
from temporalio.api.common.v1 import Payloads
from temporalio.converter import PayloadCodec

from api.auth import Caller, Role, current_caller
from api.schemas.common import ERROR_RESPONSES
from config import Settings
from config.codec import CodecKeys, PayloadDecryptionError, is_encrypted, warden_codec
from domain.errors import Forbidden, InvalidRequest

CODEC_PREFIX = "/codec"
#: The UI and the `temporal` CLI send one event's payloads at a time: a handful.
MAX_PAYLOADS = 100
MAX_METADATA = 32
MAX_METADATA_VALUE = 1024

router = APIRouter(prefix=CODEC_PREFIX, tags=["codec"], responses=ERROR_RESPONSES)


class CodecPayload(BaseModel):
    """One `temporal.api.common.v1.Payload` in proto JSON."""

    model_config = ConfigDict(extra="forbid")

    metadata: dict[str, Annotated[str, Field(max_length=MAX_METADATA_VALUE)]] = Field(
        default_factory=dict, max_length=MAX_METADATA, description="Values in base64"
    )
    data: str = Field("", description="Base64")


class CodecPayloads(BaseModel):
    """Temporal's `Payloads` in proto JSON, as the UI and `temporal` CLI send them."""

    model_config = ConfigDict(extra="forbid")

    payloads: list[CodecPayload] = Field(max_length=MAX_PAYLOADS)


async def codec_caller(
    request: Request,
    x_auth_token: Annotated[str | None, Header()] = None,
    authorization: Annotated[str | None, Header()] = None,
) -> Caller | None:
    """The API's auth with `Authorization: Bearer` accepted too; admin only."""
    scheme, _, bearer = (authorization or "").partition(" ")
    token = x_auth_token or (bearer.strip() if scheme.lower() == "bearer" else None)
    settings: Settings = request.app.state.settings
    if not token and settings.codec_allow_anonymous:
        return None
    caller = await current_caller(request, token)
    if Role.ADMIN not in caller.roles:
        raise Forbidden(
            "The codec server needs the admin role: it decrypts payloads of every project."
        )
    return caller


def _parse(body: CodecPayloads, request: Request, namespace: str | None) -> Payloads:
    served = request.app.state.settings.temporal_namespace
    if namespace is not None and namespace != served:
        raise InvalidRequest(f"This codec server serves namespace {served!r}, not {namespace!r}.")
    try:
        return json_format.ParseDict(body.model_dump(), Payloads())
    except (json_format.ParseError, TypeError, ValueError) as err:
        raise InvalidRequest(f"Invalid payloads: {err}") from err


def _answer(payloads: Payloads) -> CodecPayloads:
    as_json = json_format.MessageToDict(payloads)
    return CodecPayloads.model_validate({"payloads": as_json.get("payloads", [])})


CallerDep = Annotated[Caller | None, Depends(codec_caller)]
NamespaceHeader = Annotated[str | None, Header(alias="X-Namespace")]


@router.post("/encode", response_model_exclude_defaults=True)
async def encode_route(
    body: CodecPayloads, request: Request, _: CallerDep, namespace: NamespaceHeader = None
) -> CodecPayloads:
    """Compress and encrypt payloads as Warden's own clients do (encryption with the
    current key, when encryption is on)."""
    payloads = _parse(body, request, namespace)
    codec: PayloadCodec = request.app.state.codec
    await codec.encode_wrapper(payloads)
    return _answer(payloads)


@router.post("/decode", response_model_exclude_defaults=True)
async def decode_route(
    body: CodecPayloads, request: Request, _: CallerDep, namespace: NamespaceHeader = None
) -> CodecPayloads:
    """Decrypt encrypted payloads and expand compressed ones; plain ones come back
    unchanged."""
    payloads = _parse(body, request, namespace)
    codec: PayloadCodec = request.app.state.codec
    if not request.app.state.codec_decrypts and any(is_encrypted(p) for p in payloads.payloads):
        raise InvalidRequest("Payload encryption is off here: no codec keys to decrypt.")
    try:
        await codec.decode_wrapper(payloads)
    except PayloadDecryptionError as err:
        raise InvalidRequest(str(err)) from err
    return _answer(payloads)


class CodecCORS:
    """Starlette's CORS for the codec paths only; the rest of the API is not for browsers."""

    def __init__(self, app: ASGIApp, origins: list[str]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_methods=["POST"],
            allow_headers=["Authorization", "Content-Type", "X-Auth-Token", "X-Namespace"],
            allow_credentials=True,
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == CODEC_PREFIX or path.startswith(f"{CODEC_PREFIX}/"):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def install_codec_server(app: FastAPI, settings: Settings, keys: CodecKeys | None) -> None:
    """Mount `/codec/encode` and `/codec/decode` with CORS for the Temporal UI."""
    app.state.codec = warden_codec(keys, compress=settings.codec_compression)
    app.state.codec_decrypts = keys is not None
    app.include_router(router)
    app.add_middleware(CodecCORS, origins=settings.resolved_codec_cors_origins)
