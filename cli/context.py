"""What every CLI command shares: the client, the output format, common options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import typer

from cli.client import WardenClient, resolve_connection
from cli.output import Format, Output
from config import get_settings

FormatOpt = Annotated[
    Format | None,
    typer.Option("--format", "-f", help="table (default) or json for scripts."),
]
WaitOpt = Annotated[bool, typer.Option("--wait", "-w", help="Follow the operation until it ends.")]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Seconds --wait waits at most.", min=1)
]


@dataclass
class CliState:
    """Options given before the command, and the client built from them on first use."""

    url: str | None = None
    token: str | None = None
    fmt: Format = Format.TABLE
    _client: WardenClient | None = field(default=None, repr=False)

    def client(self) -> WardenClient:
        """The API client (reads URL and token once)."""
        if self._client is None:
            connection = resolve_connection(get_settings(), self.url, self.token)
            self._client = WardenClient(connection)
        return self._client

    def close(self) -> None:
        """Close the client if one was made."""
        if self._client is not None:
            self._client.close()


def state(ctx: typer.Context) -> CliState:
    """The root command's state."""
    found = ctx.find_object(CliState)
    if found is None:  # a command run without the root callback (tests of one sub-app)
        found = ctx.ensure_object(CliState)
    return found


def session(ctx: typer.Context, fmt: Format | None) -> tuple[WardenClient, Output]:
    """The client and the output of a command; its own `-f` wins over the root's."""
    current = state(ctx)
    return current.client(), Output(fmt or current.fmt)
