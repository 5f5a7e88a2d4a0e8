"""Finding a project's record by id or by a name that is unique in the project."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from sqlmodel import Session, col, select


class _Named(Protocol):
    id: Any
    project_id: Any
    name: Any


R = TypeVar("R", bound=_Named)


def get_by_id_or_name(session: Session, model: type[R], project_id: str, key: str) -> R | None:
    """The record whose id is `key`, else the one named `key`, else the one whose id
    starts with `key` (Senlin's short id), all within the project.

    An ambiguous name or short id finds nothing, so callers answer 404 rather than guess.
    """
    record = session.get(model, key)
    if record is not None and record.project_id == project_id:
        return record
    query = select(model).where(model.project_id == project_id, model.name == key).limit(2)
    named = list(session.exec(query))
    if named:
        return named[0] if len(named) == 1 else None
    escaped = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    query = (
        select(model)
        .where(model.project_id == project_id, col(model.id).like(f"{escaped}%", escape="\\"))
        .limit(2)
    )
    short = list(session.exec(query))
    return short[0] if len(short) == 1 else None
