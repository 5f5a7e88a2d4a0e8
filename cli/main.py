"""`warden`: the command line of Warden (a thin client of the REST API)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from cli.actions import action_app, lifecycle_app
from cli.client import ApiError
from cli.clusters import cluster_app
from cli.context import CliState
from cli.nodes import node_app
from cli.output import Format
from cli.specs import spec_app
from cli.stacks import stack_app
from config import get_settings
from config.logs import configure_logging
from config.settings import SettingsError


class _WardenGroup(TyperGroup):
    """Every API error, and an unusable setting, ends the command with its message on
    stderr and exit code 1."""

    def invoke(self, ctx: Any) -> Any:  # typer's vendored click Context
        try:
            return super().invoke(ctx)
        except (ApiError, SettingsError) as err:
            Console(stderr=True, highlight=False).print(f"[red]Error:[/] {escape(str(err))}")
            raise typer.Exit(1) from err


app = typer.Typer(
    cls=_WardenGroup,
    help="Warden: durable orchestration of cloud stacks and clusters.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(stack_app, name="stack")
app.add_typer(spec_app("profile", "profiles"), name="profile")
app.add_typer(spec_app("policy", "policies"), name="policy")
app.add_typer(cluster_app, name="cluster")
app.add_typer(node_app, name="node")
app.add_typer(lifecycle_app, name="lifecycle")
app.add_typer(action_app, name="action")


@app.callback()
def _root(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(envvar="WARDEN_URL", help="API base URL (default: the local `warden dev`)."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(envvar="WARDEN_TOKEN", help="API token (default: var/dev-token)."),
    ] = None,
    fmt: Annotated[
        Format, typer.Option("--format", "-f", help="table, or json for scripts.")
    ] = Format.TABLE,
) -> None:
    """Warden command line: a client of the REST API."""
    state = CliState(url=url, token=token, fmt=fmt)
    ctx.obj = state
    ctx.call_on_close(state.close)


@app.command()
def dev() -> None:
    """Start Temporal (with its UI), simcloud, the worker and the API; Ctrl-C stops all."""
    configure_logging(get_settings().log_level, "warden dev: %(message)s")
    raise typer.Exit(asyncio.run(_run_dev()))


async def _run_dev() -> int:
    from cli.dev import run_dev

    return await run_dev(get_settings())
