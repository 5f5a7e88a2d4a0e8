"""Heat's query parameters as `heat/common/param_utils.py` reads them (400 in its words)."""

from __future__ import annotations

from domain.errors import InvalidRequest


def heat_bool(name: str, value: str) -> bool:
    """A boolean query parameter (`extract_bool`): true or false, in any case."""
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise InvalidRequest(
        f'Unrecognized value "{value}" for "{name}", acceptable values are: true, false.'
    )


def heat_int(name: str, value: str | None) -> int | None:
    """An integer query parameter (`extract_int`, zero allowed, negatives not)."""
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise InvalidRequest(f"Only integer is acceptable by '{name}'.") from None
    if number < 0:
        raise InvalidRequest(
            f"Value '{value}' is invalid for '{name}' which only accepts non-negative integer."
        )
    return number
