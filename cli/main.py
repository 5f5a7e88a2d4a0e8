"""`warden`: the command line of Warden (a thin client of the REST API)."""

from __future__ import annotations

import asyncio
import logging

import typer

from config import get_settings

app = typer.Typer(
    help="Warden: durable orchestration of cloud stacks and clusters.", no_args_is_help=True
)


@app.callback()
def _root() -> None:
    """Warden command line."""


@app.command()
def dev() -> None:
    """Start Temporal (with its UI), simcloud, the worker and the API; Ctrl-C stops all."""
    logging.basicConfig(level=logging.INFO, format="warden dev: %(message)s")
    raise typer.Exit(asyncio.run(_run_dev()))


async def _run_dev() -> int:
    from cli.dev import run_dev

    return await run_dev(get_settings())
