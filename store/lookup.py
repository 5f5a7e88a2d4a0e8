"""Finding a project's record by id or by a name that is unique in the project."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from sqlmodel import Session, col, select

from domain.errors import MultipleChoices


class _Named(Protocol):
    id: Any
    project_id: Any
    name: Any


R = TypeVar("R", bound=_Named)


def get_by_id_or_name(session: Session, model: type[R], project_id: str, key: str) -> R | None:
    """The record whose id is `key`, else the one named `key`, else the one whose id
    starts with `key` (Senlin's short id), all within the project.

    An ambiguous name or short id raises `MultipleChoices` (Senlin's 400) rather than
    guess.
    """
    record = session.get(model, key)
    if record is not None and record.project_id == project_id:
        return record
    query = select(model).where(model.project_id == project_id, model.name == key).limit(2)
    named = list(session.exec(query))
    if named:
        if len(named) > 1:
            raise MultipleChoices.of(key)
        return named[0]
    escaped = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    query = (
        select(model)
        .where(model.project_id == project_id, col(model.id).like(f"{escaped}%", escape="\\"))
        .limit(2)
    )
    short = list(session.exec(query))
    if len(short) > 1:
        raise MultipleChoices.of(key)
    return short[0] if short else None
