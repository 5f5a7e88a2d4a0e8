"""Serve `/health` on TCP and UNIX sockets from the event loop.

The contract: docs/api-contract.md §Process health."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus

from healthcheck.manager import HealthManager, get_manager
from healthcheck.protocol import (
    MAX_LINE_BYTES,
    BadRequestError,
    Request,
    encode_response,
    error_response,
    read_request,
    route,
)
from healthcheck.uri import HealthUri, TcpUri

logger = logging.getLogger(__name__)

READ_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class _SocketFile:
    """A UNIX socket file we created, identified so we never delete a successor's."""

    path: str
    device: int
    inode: int

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(self.path)
            if (info.st_dev, info.st_ino) == (self.device, self.inode):
                os.unlink(self.path)


class HealthServer:
    """The listening sockets of one process's health endpoint; `close()` when done."""

    def __init__(self, manager: HealthManager, read_timeout: float = READ_TIMEOUT_S) -> None:
        self.manager = manager
        self.read_timeout = read_timeout
        self.addresses: list[str] = []  # bound URIs, with real ports when 0 was asked
        self._servers: list[asyncio.Server] = []
        self._socket_files: list[_SocketFile] = []
        self._connections: set[asyncio.Task[object]] = set()

    async def bind(self, uri: HealthUri) -> None:
        """Start listening on `uri`; a stale UNIX socket file is replaced."""
        if isinstance(uri, TcpUri):
            server = await asyncio.start_server(
                self._handle, uri.host, uri.port, limit=MAX_LINE_BYTES
            )
            bound: list[HealthUri] = [TcpUri(*sock.getsockname()[:2]) for sock in server.sockets]
        else:
            await _remove_stale_socket(uri.path)
            server = await asyncio.start_unix_server(self._handle, uri.path, limit=MAX_LINE_BYTES)
            info = os.stat(uri.path)
            self._socket_files.append(_SocketFile(uri.path, info.st_dev, info.st_ino))
            bound = [uri]
        self._servers.append(server)
        self.addresses += [str(address) for address in bound]
        logger.info("health endpoint listening on %s", ", ".join(map(str, bound)))

    async def close(self) -> None:
        """Stop listening, drop open connections and remove our UNIX socket files."""
        for server in self._servers:
            server.close()
        for task in self._connections:
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()
        for socket_file in self._socket_files:
            socket_file.remove()
        self._servers.clear()
        self._socket_files.clear()
        self.addresses.clear()

    async def __aenter__(self) -> HealthServer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._answer(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass  # the client went away or stopped reading; nothing left to tell it
        except Exception:
            logger.exception("health endpoint failed to answer a request")
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request: Request | None = None
        try:
            # The timeout bounds the whole request so a slow or silent client can
            # hold a connection for read_timeout at most.
            async with asyncio.timeout(self.read_timeout):
                request = await read_request(reader)
            if request is None:
                return
            response = route(request, self.manager)
        except TimeoutError:
            response = error_response(HTTPStatus.REQUEST_TIMEOUT, "request not received in time")
        except BadRequestError as exc:
            response = error_response(HTTPStatus.BAD_REQUEST, str(exc))
        include_body = request is None or request.method != "HEAD"
        writer.write(encode_response(response, include_body=include_body))
        async with asyncio.timeout(self.read_timeout):
            await writer.drain()


async def _remove_stale_socket(path: str) -> None:
    """Remove a socket file left by a dead process; refuse to steal a live one."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise FileExistsError(errno.EEXIST, "exists and is not a socket", path)
    try:
        _, writer = await asyncio.open_unix_connection(path)
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    raise OSError(errno.EADDRINUSE, "another process is serving on this socket", path)


async def serve_health(
    uris: Sequence[HealthUri],
    manager: HealthManager | None = None,
    *,
    read_timeout: float = READ_TIMEOUT_S,
) -> HealthServer:
    """Serve `GET /health` on every URI until the returned server is closed.

    Args:
        uris: where to listen, usually `parse_uris(settings.healthcheck_uri)`.
        manager: whose state to serve; default the process-wide manager.
        read_timeout: seconds a client has to send its request.

    Raises:
        OSError: a URI cannot be bound (nothing stays bound then).
    """
    server = HealthServer(manager if manager is not None else get_manager(), read_timeout)
    try:
        for uri in uris:
            await server.bind(uri)
    except BaseException:
        await server.close()
        raise
    return server
