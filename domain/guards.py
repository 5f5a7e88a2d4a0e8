"""Guards every entity shares: one operation at a time, and a lock refuses changes.

The wording of a lock (Heat's level, Senlin's owner and reason) belongs to each
entity's lock model (`StackLock.describe()`, `LockInfo.describe()`).
"""

from __future__ import annotations

from domain.errors import ActionInProgress, Conflict


def ensure_idle(kind: str, name: str, running: str | None) -> None:
    """Raise ActionInProgress (409) while another operation of this stack or cluster
    runs."""
    if running is not None:
        raise ActionInProgress(f"{kind} {name} already has an action ({running}) in progress.")


def locked_conflict(kind: str, name: str, lock_text: str) -> Conflict:
    """The refusal of a change a lock forbids (`lock_text` as the lock describes itself)."""
    return Conflict(f"{kind} {name} is locked{lock_text}; unlock it first.")
