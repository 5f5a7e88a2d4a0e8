"""How the CLI prints: Rich tables for people, `-f json` for scripts."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from rich.console import Console
from rich.table import Table


class Format(StrEnum):
    """Output formats."""

    TABLE = "table"
    JSON = "json"


#: Statuses worth a colour in tables.
STYLES = {
    "ACTIVE": "green",
    "SUCCEEDED": "green",
    "COMPLETE": "green",
    "ERROR": "red",
    "FAILED": "red",
    "CHECK_FAILED": "red",
    "WARNING": "yellow",
    "WAITING": "yellow",
    "WAITING_LIFECYCLE_COMPLETION": "yellow",
    "RUNNING": "cyan",
    "IN_PROGRESS": "cyan",
}


@dataclass(frozen=True)
class Column:
    """A table column: its header and how to read the cell from a row."""

    header: str
    key: str | Callable[[Mapping[str, Any]], Any]

    def cell(self, row: Mapping[str, Any]) -> str:
        """The cell's text."""
        value = self.key(row) if callable(self.key) else row.get(self.key)
        return as_text(value)


def as_text(value: Any) -> str:
    """A value as a table shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def styled(text: str) -> str:
    """Colour a status by its last word (`CREATE_FAILED` is red)."""
    style = STYLES.get(text) or STYLES.get(text.rsplit("_", 1)[-1])
    return f"[{style}]{text}[/]" if style else text


def short_time(value: str | None) -> str:
    """An ISO timestamp as `HH:MM:SS` (UTC), for live views."""
    if not value:
        return ""
    return datetime.fromisoformat(value).strftime("%H:%M:%S")


class Output:
    """Prints results in the chosen format to stdout; notes go to stderr."""

    def __init__(self, fmt: Format, console: Console | None = None) -> None:
        self.fmt = fmt
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)

    def json(self, data: Any) -> None:
        """Raw JSON, whatever the format."""
        self.console.print_json(json.dumps(data, default=str), highlight=False)

    def rows(self, rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> None:
        """A list of objects: a table, or the JSON list."""
        if self.fmt == Format.JSON:
            self.json(list(rows))
            return
        table = Table(show_lines=False)
        for column in columns:
            table.add_column(column.header, overflow="fold")
        for row in rows:
            table.add_row(*(styled(column.cell(row)) for column in columns))
        self.console.print(table)

    def record(self, data: Mapping[str, Any], fields: Sequence[str] | None = None) -> None:
        """One object: a two-column table of its fields, or its JSON."""
        if self.fmt == Format.JSON:
            self.json(data)
            return
        table = Table(show_header=True)
        table.add_column("Field", style="bold")
        table.add_column("Value", overflow="fold")
        for name in fields or list(data):
            if data.get(name) is not None:
                table.add_row(name, styled(as_text(data[name])))
        self.console.print(table)

    def done(self, message: str, data: Mapping[str, Any] | None = None) -> None:
        """A confirmation: the message for people, the data (or the message) as JSON."""
        if self.fmt == Format.JSON:
            self.json(dict(data) if data is not None else {"message": message})
        else:
            self.console.print(message)

    def note(self, message: str) -> None:
        """Progress notes and errors, on stderr so stdout stays parseable."""
        self.err.print(message)
