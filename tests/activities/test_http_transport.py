"""httpx over aiohttp's pool behaves as httpx's own pool does, against a real server."""

from __future__ import annotations

import asyncio
import gzip
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from activities.http_transport import AiohttpTransport
from simcloud.server import serve_in_thread


class Seen:
    """What the server saw: request lines and headers, and the most requests at once."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, list[tuple[str, str]], bytes]] = []
        self.running = 0
        self.most = 0


def _app(seen: Seen) -> FastAPI:
    app = FastAPI()

    @app.api_route("/echo/{rest:path}", methods=["GET", "POST", "PUT", "DELETE"])
    async def echo(request: Request) -> Response:
        body = await request.body()
        path = request.scope["raw_path"].decode() + "?" + request.scope["query_string"].decode()
        headers = [(k.decode(), v.decode()) for k, v in request.scope["headers"]]
        seen.requests.append((request.method, path, headers, body))
        return JSONResponse(
            {"method": request.method, "path": path, "body": body.decode()},
            status_code=201 if request.method == "POST" else 200,
            headers={"X-Reply": "yes"},
        )

    @app.get("/slow")
    async def slow(seconds: float = 0.3) -> dict[str, bool]:
        seen.running += 1
        seen.most = max(seen.most, seen.running)
        await asyncio.sleep(seconds)
        seen.running -= 1
        return {"ok": True}

    @app.get("/redirect")
    async def redirect() -> Response:
        return Response(status_code=302, headers={"Location": "/echo/elsewhere"})

    @app.get("/gzip")
    async def gzipped() -> Response:
        body = gzip.compress(b'{"zipped": true}')
        return Response(
            body, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"}
        )

    @app.get("/cookie")
    async def cookie() -> Response:
        response = JSONResponse({"ok": True})
        response.set_cookie("session", "abc")
        return response

    return app


@pytest.fixture(scope="module")
def seen() -> Seen:
    return Seen()


@pytest.fixture(scope="module")
def server(seen: Seen) -> Iterator[str]:
    with serve_in_thread(_app(seen)) as served:
        yield served.url


@pytest.fixture
async def client(server: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server, transport=AiohttpTransport()) as client:
        yield client


async def test_a_request_goes_out_as_httpx_built_it_and_the_answer_comes_back(
    client: httpx.AsyncClient, seen: Seen
) -> None:
    response = await client.post(
        "/echo/servers/a%2Fb",
        params={"name": "web 1/2", "tag": "ü"},
        json={"server": {"name": "web-1"}},
        headers={"X-Auth-Token": "t0k", "X-Twice": "one"},
    )
    assert response.status_code == 201
    assert response.reason_phrase == "Created"
    assert response.headers["x-reply"] == "yes"
    body = response.json()
    # The URL is sent exactly as httpx encoded it: no re-quoting of %2F or the query.
    assert body["path"] == "/echo/servers/a%2Fb?name=web+1%2F2&tag=%C3%BC"
    assert body["body"] == '{"server":{"name":"web-1"}}'
    method, _, headers, _ = seen.requests[-1]
    assert method == "POST"
    names = [name for name, _ in headers]
    assert ("x-auth-token", "t0k") in headers
    # httpx's own headers, once each: aiohttp adds none of its own.
    for name in ("user-agent", "accept", "accept-encoding", "host", "content-length"):
        assert names.count(name) == 1, name
    assert dict(headers)["user-agent"].startswith("python-httpx/")


async def test_redirects_are_returned_not_followed_unless_httpx_follows_them(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/redirect")
    assert response.status_code == 302
    followed = await client.get("/redirect", follow_redirects=True)
    assert followed.status_code == 200
    assert followed.json()["path"] == "/echo/elsewhere?"


async def test_a_compressed_body_is_decoded_once_by_httpx(client: httpx.AsyncClient) -> None:
    response = await client.get("/gzip")
    assert response.json() == {"zipped": True}


async def test_cookies_are_kept_by_httpx_alone(client: httpx.AsyncClient, seen: Seen) -> None:
    await client.get("/cookie")
    await client.get("/echo/after-cookie")
    _, _, headers, _ = seen.requests[-1]
    assert [value for name, value in headers if name == "cookie"] == ["session=abc"]


async def test_the_pool_bounds_connections_at_once(server: str, seen: Seen) -> None:
    seen.most = 0
    transport = AiohttpTransport(max_connections=2)
    async with httpx.AsyncClient(base_url=server, transport=transport) as client:
        responses = await asyncio.gather(*(client.get("/slow?seconds=0.2") for _ in range(6)))
    assert all(r.status_code == 200 for r in responses)
    assert seen.most == 2


async def test_a_refused_connection_is_a_connect_error_not_a_timeout() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with httpx.AsyncClient(transport=AiohttpTransport()) as client:
        with pytest.raises(httpx.ConnectError) as raised:
            await client.get(f"http://127.0.0.1:{port}/")
    assert raised.value.request.url.port == port


async def test_a_slow_answer_is_a_read_timeout(client: httpx.AsyncClient) -> None:
    with pytest.raises(httpx.ReadTimeout):
        await client.get("/slow?seconds=2", timeout=httpx.Timeout(5, read=0.2))


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (b"", httpx.RemoteProtocolError),  # the server closes without a word
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", httpx.ReadError),
    ],
    ids=["dropped-connection", "body-cut-short"],
)
async def test_a_server_that_breaks_off_gives_httpx_transport_errors(
    answer: bytes, error: type[httpx.TransportError]
) -> None:
    async def break_off(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(break_off, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, httpx.AsyncClient(transport=AiohttpTransport()) as client:
        with pytest.raises(error):
            await client.get(f"http://127.0.0.1:{port}/")
