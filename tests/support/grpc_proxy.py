"""A TCP proxy in front of the Temporal dev server, standing in for a secured Temporal:
it terminates TLS (optionally demanding a client certificate) and can check the
`authorization` header of every gRPC request before it lets the connection on.

Headers are read without changing a byte: the client's HTTP/2 frames are parsed with
`hyperframe` and their header blocks decoded with `hpack` (the h2 project's own
libraries) in the order the server decodes them, so the HPACK table stays in step.
The proxy runs its own event loop in a thread: the tests' loop may block.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import ssl
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from hpack import Decoder
from hyperframe.frame import ContinuationFrame, Frame, HeadersFrame

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_HEADER = 9


class HeaderTap:
    """Follows a client→server HTTP/2 stream and returns each request's headers."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._decoder = Decoder()
        self._preface_seen = False
        self._block = bytearray()

    def feed(self, data: bytes) -> list[dict[str, str]]:
        """The header sets completed by `data` (usually none or one)."""
        self._buffer += data
        if not self._preface_seen:
            if len(self._buffer) < len(PREFACE):
                return []
            if bytes(self._buffer[: len(PREFACE)]) != PREFACE:
                raise ValueError("not an HTTP/2 client (no connection preface)")
            del self._buffer[: len(PREFACE)]
            self._preface_seen = True
        found = []
        while len(self._buffer) >= FRAME_HEADER:
            frame, length = Frame.parse_frame_header(memoryview(bytes(self._buffer[:9])))
            if len(self._buffer) < FRAME_HEADER + length:
                break
            body = bytes(self._buffer[FRAME_HEADER : FRAME_HEADER + length])
            del self._buffer[: FRAME_HEADER + length]
            if isinstance(frame, HeadersFrame | ContinuationFrame):
                frame.parse_body(memoryview(body))
                self._block += frame.data
                if "END_HEADERS" in frame.flags:
                    found.append(
                        {
                            str(name): str(value)
                            for name, value in self._decoder.decode(bytes(self._block))
                        }
                    )
                    self._block.clear()
        return found


@dataclass
class GrpcProxy:
    """`127.0.0.1:<port>` → `upstream`, with optional TLS and authorization check."""

    upstream: str
    tls: ssl.SSLContext | None = None
    required_authorization: str | None = None
    requests: list[dict[str, str]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _stopped: asyncio.Event | None = None

    @property
    def address(self) -> str:
        """Where clients should connect."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> GrpcProxy:
        """Listen on a free port (in a thread of its own)."""
        ready: Future[int] = Future()
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(ready),), daemon=True)
        self._thread.start()
        self.port = ready.result(timeout=10)
        return self

    def stop(self) -> None:
        """Close the listener and every connection."""
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(timeout=10)

    async def _serve(self, ready: Future[int]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        connections: set[asyncio.Task[None]] = set()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            connections.add(task)
            try:
                await self._connection(reader, writer)
            finally:
                connections.discard(task)

        server = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=self.tls)
        ready.set_result(server.sockets[0].getsockname()[1])
        await self._stopped.wait()
        server.close()
        for task in list(connections):
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)
        await server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = self.upstream.rsplit(":", 1)
        up_writer: asyncio.StreamWriter | None = None
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            tap = HeaderTap()
            pumps = {
                asyncio.create_task(self._client_to_upstream(reader, up_writer, tap)),
                asyncio.create_task(_pipe(up_reader, writer)),
            }
            try:
                await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        except OSError:
            pass
        finally:
            # abort, not close: nothing is left half-closed when the proxy stops.
            writer.transport.abort()
            if up_writer is not None:
                up_writer.transport.abort()

    async def _client_to_upstream(
        self, reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter, tap: HeaderTap
    ) -> None:
        while data := await _read(reader):
            for headers in tap.feed(data):
                self.requests.append(headers)
                if not self._authorized(headers):
                    return  # closing the connection refuses the request
            up_writer.write(data)
            await up_writer.drain()

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.required_authorization is None:
            return True
        seen = headers.get("authorization")
        if seen == self.required_authorization:
            return True
        self.refusals.append(f"{headers.get(':path')}: authorization {seen!r}")
        return False


async def _read(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.read(65536)
    except (OSError, ssl.SSLError):
        return b""


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await _read(reader):
        writer.write(data)
        await writer.drain()


@dataclass(frozen=True)
class Pki:
    """A throwaway certificate authority with a server and a client certificate (PEM files)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def server_context(self, *, require_client_cert: bool) -> ssl.SSLContext:
        """What the proxy serves: HTTP/2 over TLS, client certificates from this CA."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.server_cert, self.server_key)
        context.set_alpn_protocols(["h2"])
        if require_client_cert:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(self.ca)
        return context


def make_pki(directory: Path, name: str = "test") -> Pki:
    """A CA, a server certificate for localhost/127.0.0.1 and a client certificate."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} CA")])
    ca_cert = (
        _builder(ca_name, ca_name, ca_key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = {"ca": _write(directory / "ca.pem", ca_cert.public_bytes(serialization.Encoding.PEM))}
    for role, usage in (
        ("server", ExtendedKeyUsageOID.SERVER_AUTH),
        ("client", ExtendedKeyUsageOID.CLIENT_AUTH),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} {role}")])
        builder = _builder(subject, ca_name, key).add_extension(
            x509.ExtendedKeyUsage([usage]), critical=False
        )
        if role == "server":
            sans: list[x509.GeneralName] = [
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            ]
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        files[f"{role}_cert"] = _write(
            directory / f"{role}.pem", cert.public_bytes(serialization.Encoding.PEM)
        )
        files[f"{role}_key"] = _write(
            directory / f"{role}.key",
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        )
    return Pki(**files)


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
    )


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
