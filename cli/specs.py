"""`warden profile …` and `warden policy …`: objects made from a YAML spec file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from cli.client import ApiError
from cli.context import FormatOpt, session
from cli.output import Column

SpecFile = Annotated[
    Path,
    typer.Option(
        "--spec-file", "-s", exists=True, dir_okay=False, readable=True, help="YAML spec file."
    ),
]

COLUMNS = [
    Column("ID", "id"),
    Column("Name", "name"),
    Column("Type", "type"),
    Column("Version", "version"),
    Column("Created", "created_at"),
]


def read_spec(path: Path) -> dict[str, Any]:
    """The spec in a YAML (or JSON) file, or a clear error."""
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ApiError(f"Cannot read the spec file {path}: {err}") from err
    if not isinstance(spec, dict):
        raise ApiError(f"The spec file {path} must hold a mapping (type, version, properties).")
    return spec


def spec_app(kind: str, plural: str) -> typer.Typer:
    """The create/list/show/delete commands of `profile` or `policy`."""
    app = typer.Typer(help=f"{kind.capitalize()}s, made from YAML spec files.")
    base = f"/v1/{plural}"

    @app.command("create")
    def create(ctx: typer.Context, name: str, spec_file: SpecFile, fmt: FormatOpt = None) -> None:
        """Create one from a spec file (`examples/` has samples)."""
        client, out = session(ctx, fmt)
        body = {kind: {"name": name, "spec": read_spec(spec_file)}}
        created = client.post(base, body).json()[kind]
        out.record(created, ["id", "name", "type", "version", "spec"])

    @app.command("list")
    def list_(ctx: typer.Context, fmt: FormatOpt = None) -> None:
        """All of the project's."""
        client, out = session(ctx, fmt)
        out.rows(client.get(base)[plural], COLUMNS)

    @app.command("show")
    def show(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID")],
        fmt: FormatOpt = None,
    ) -> None:
        """One, by id or name."""
        client, out = session(ctx, fmt)
        out.record(client.get(f"{base}/{ident}")[kind])

    @app.command("delete")
    def delete(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID")],
        fmt: FormatOpt = None,
    ) -> None:
        """Delete one (refused while a cluster uses it)."""
        client, out = session(ctx, fmt)
        client.request("DELETE", f"{base}/{ident}")
        out.done(f"{kind.capitalize()} {ident} deleted.", {"deleted": ident})

    return app
