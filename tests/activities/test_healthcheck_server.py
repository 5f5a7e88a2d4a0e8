"""The /health server over a real TCP port and a real UNIX socket.

The contract: docs/api-contract.md §Process health.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from healthcheck import HealthManager, HealthServer, TcpUri, UnixUri, serve_health

LOCALHOST = TcpUri("127.0.0.1", 0)  # port 0: the kernel picks a free port


@pytest.fixture
def manager() -> HealthManager:
    return HealthManager("svc-1", "warden-worker", ttl=300, host="node-1")


@pytest.fixture
async def server(manager: HealthManager) -> AsyncIterator[HealthServer]:
    health = await serve_health([LOCALHOST], manager)
    yield health
    await health.close()


def base_url(server: HealthServer) -> str:
    [address] = server.addresses
    return address.replace("tcp://", "http://")


def port_of(server: HealthServer) -> int:
    return int(base_url(server).rsplit(":", 1)[1])


async def get(server: HealthServer, path: str = "/health", method: str = "GET") -> httpx.Response:
    async with httpx.AsyncClient(base_url=base_url(server)) as client:
        return await client.request(method, path)


async def raw_exchange(port: int, request: bytes) -> bytes:
    """Send raw bytes as `nc -N` would (then half-close) and read until the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    writer.write_eof()
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), timeout=5)
    writer.close()
    await writer.wait_closed()
    return data


async def test_get_health_passes_with_200_and_health_json(server: HealthServer) -> None:
    response = await get(server)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/health+json"
    assert response.headers["cache-control"] == "max-age=300"
    assert response.headers["connection"] == "close"
    body = response.json()
    assert body["status"] == "pass"
    assert body["serviceId"] == "svc-1"
    assert "server" not in response.headers  # no server software or version banner


async def test_persistent_failure_returns_503(server: HealthServer, manager: HealthManager) -> None:
    manager.record_failure("database", "OperationalError: gone")
    assert (await get(server)).status_code == 200  # transient: warn
    manager.record_failure("database", "OperationalError: still gone")
    response = await get(server)
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/health+json"
    check = response.json()["checks"]["database:connection"][0]
    assert check == {
        "status": "fail",
        "time": check["time"],
        "output": "OperationalError: still gone",
        "componentType": "component",
    }


async def test_head_returns_headers_without_body(server: HealthServer) -> None:
    full = await get(server)
    head = await get(server, method="HEAD")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(full.content))
    assert head.headers["content-type"] == "application/health+json"


async def test_head_sends_no_body_bytes_on_the_wire(server: HealthServer) -> None:
    data = await raw_exchange(port_of(server), b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert data.endswith(b"\r\n\r\n")


async def test_query_string_is_ignored(server: HealthServer) -> None:
    assert (await get(server, "/health?verbose=1")).status_code == 200


@pytest.mark.parametrize("path", ["/", "/healthz", "/health/extra"])
async def test_other_paths_are_404_json(server: HealthServer, path: str) -> None:
    response = await get(server, path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == 404


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
async def test_other_methods_are_405(server: HealthServer, method: str) -> None:
    response = await get(server, method=method)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert response.json()["error"]["title"] == "Method Not Allowed"


async def test_post_with_body_still_gets_its_405(server: HealthServer) -> None:
    async with httpx.AsyncClient(base_url=base_url(server)) as client:
        response = await client.post("/health", content=b"x" * 50_000)
    assert response.status_code == 405


async def test_netcat_style_http10_request_is_answered(server: HealthServer) -> None:
    data = await raw_exchange(port_of(server), b"GET /health HTTP/1.0\r\n\r\n")
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert json.loads(body)["status"] == "pass"


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"garbage\r\n\r\n",
        b"GET /health\r\n\r\n",
        b"get /health HTTP/1.1\r\n\r\n",
        b"GET /health SPDY/3\r\n\r\n",
        b"GET /health HTTP/1.1\r\nno-colon-header\r\n\r\n",
        b"GET /health HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\n\r\n",
    ],
)
async def test_garbage_requests_get_400(server: HealthServer, request_bytes: bytes) -> None:
    data = await raw_exchange(port_of(server), request_bytes)
    assert data.startswith(b"HTTP/1.1 400 Bad Request\r\n")


async def test_client_that_sends_nothing_gets_nothing(server: HealthServer) -> None:
    assert await raw_exchange(port_of(server), b"") == b""


async def test_slow_client_times_out_without_blocking_others(manager: HealthManager) -> None:
    async with await serve_health([LOCALHOST], manager, read_timeout=0.3) as health:
        reader, writer = await asyncio.open_connection("127.0.0.1", port_of(health))
        writer.write(b"GET /health HTTP/1.1\r\n")  # never finishes its headers
        await writer.drain()
        # The event loop keeps serving others while the slow client waits.
        assert (await get(health)).status_code == 200
        data = await asyncio.wait_for(reader.read(), timeout=5)
        writer.close()
        await writer.wait_closed()
    assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


async def test_close_drops_idle_connections(manager: HealthManager) -> None:
    health = await serve_health([LOCALHOST], manager)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(health))
    await get(health)  # the idle connection above has been accepted by now
    await asyncio.wait_for(health.close(), timeout=2)
    assert await asyncio.wait_for(reader.read(), timeout=2) == b""
    writer.close()
    await writer.wait_closed()


async def unix_get(path: Path, url: str = "http://health/health") -> httpx.Response:
    transport = httpx.AsyncHTTPTransport(uds=str(path))
    async with httpx.AsyncClient(transport=transport) as client:
        return await client.get(url)


async def test_unix_socket_serves_health_and_close_removes_it(
    tmp_path: Path, manager: HealthManager
) -> None:
    path = tmp_path / "h.sock"
    health = await serve_health([UnixUri(str(path))], manager)
    assert health.addresses == [f"unix://{path}"]
    response = await unix_get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/health+json"
    manager.record_failure("temporal", "down")
    manager.record_failure("temporal", "still down")
    assert (await unix_get(path)).status_code == 503
    assert (await unix_get(path, "http://health/nope")).status_code == 404
    await health.close()
    assert not path.exists()


async def test_stale_unix_socket_file_is_replaced(tmp_path: Path, manager: HealthManager) -> None:
    path = tmp_path / "h.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays behind, as after a crash
    assert path.is_socket()
    async with await serve_health([UnixUri(str(path))], manager):
        assert (await unix_get(path)).status_code == 200


async def test_live_unix_socket_is_not_stolen(tmp_path: Path, manager: HealthManager) -> None:
    path = tmp_path / "h.sock"
    async with await serve_health([UnixUri(str(path))], manager):
        with pytest.raises(OSError, match="another process"):
            await serve_health([UnixUri(str(path))], manager)
        assert (await unix_get(path)).status_code == 200


async def test_regular_file_at_socket_path_is_left_alone(
    tmp_path: Path, manager: HealthManager
) -> None:
    path = tmp_path / "h.sock"
    path.write_text("precious")
    with pytest.raises(FileExistsError):
        await serve_health([UnixUri(str(path))], manager)
    assert path.read_text() == "precious"


async def test_tcp_and_unix_served_together(tmp_path: Path, manager: HealthManager) -> None:
    path = tmp_path / "h.sock"
    async with await serve_health([LOCALHOST, UnixUri(str(path))], manager) as health:
        tcp, unix = health.addresses
        assert tcp.startswith("tcp://127.0.0.1:")
        assert unix == f"unix://{path}"
        assert (await unix_get(path)).status_code == 200
        async with httpx.AsyncClient() as client:
            response = await client.get(tcp.replace("tcp://", "http://") + "/health")
        assert response.status_code == 200


async def test_failed_bind_releases_what_was_bound(
    tmp_path: Path, manager: HealthManager, server: HealthServer
) -> None:
    path = tmp_path / "h.sock"
    taken = TcpUri("127.0.0.1", port_of(server))
    with pytest.raises(OSError):  # noqa: PT011 - the errno text differs between kernels
        await serve_health([UnixUri(str(path)), taken], manager)
    assert not path.exists()
