"""`X-Auth-Token` → project and roles, from a tokens file (re-read when it changes)
or, for tokens not in it, from Keystone when `keystone_url` is set (`api.keystone`).

Tokens file (YAML or JSON):

    tokens:
      <token>: {project: demo, roles: [admin]}
"""

from __future__ import annotations

import hmac
import logging
import threading
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Protocol

import yaml
from fastapi import Depends, Request
from fastapi.security import APIKeyHeader

from domain.errors import Forbidden, Unauthenticated

logger = logging.getLogger(__name__)


class Role(StrEnum):
    """Roles a token may carry."""

    ADMIN = "admin"
    MEMBER = "member"
    READER = "reader"


WRITER_ROLES = frozenset({Role.ADMIN, Role.MEMBER})


@dataclass(frozen=True)
class Caller:
    """Who is calling: the token's project and roles."""

    project_id: str
    roles: frozenset[Role]
    #: The caller's Keystone token, for calls made on its behalf (None: a token of the
    #: tokens file, which only Warden knows).
    keystone_token: str | None = field(default=None, compare=False, repr=False)

    @property
    def can_write(self) -> bool:
        """Whether the caller may change things."""
        return bool(self.roles & WRITER_ROLES)


class TokenValidator(Protocol):
    """Asks an identity service who a token belongs to (`api.keystone.KeystoneValidator`)."""

    async def caller(self, token: str) -> Caller:
        """The token's caller, else `Unauthenticated`, `Forbidden` or `BackendUnavailable`."""


class TokenStore:
    """Tokens from a file, reloaded when its modification time changes."""

    def __init__(self, path: Path, extra: dict[str, Caller] | None = None) -> None:
        self._path = path
        self._extra = dict(extra or {})
        self._tokens: dict[str, Caller] = {}
        self._mtime: float | None = None
        self._lock = threading.Lock()

    def lookup(self, token: str) -> Caller | None:
        """The caller a token names, compared in constant time."""
        self._reload_if_changed()
        found = None
        for known, caller in {**self._tokens, **self._extra}.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = caller
        return found

    def _reload_if_changed(self) -> None:
        try:
            mtime = self._path.stat().st_mtime
        except FileNotFoundError:
            mtime = None
        if mtime == self._mtime:
            return
        with self._lock:
            self._tokens = load_tokens(self._path) if mtime is not None else {}
            self._mtime = mtime


def load_tokens(path: Path) -> dict[str, Caller]:
    """Parse a tokens file; a malformed entry is skipped with a log line."""
    data = yaml.safe_load(path.read_text()) or {}
    tokens: dict[str, Caller] = {}
    for token, entry in (data.get("tokens") or {}).items():
        try:
            roles = frozenset(Role(r) for r in entry.get("roles", ["member"]))
            tokens[str(token)] = Caller(project_id=str(entry["project"]), roles=roles)
        except (KeyError, ValueError, AttributeError, TypeError):
            logger.warning("ignoring malformed entry in tokens file %s", path)
    return tokens


_token_header = APIKeyHeader(name="X-Auth-Token", auto_error=False)


async def current_caller(
    request: Request, token: Annotated[str | None, Depends(_token_header)]
) -> Caller:
    """Authenticate the request: the tokens file first, then Keystone (when configured).

    401 without a known token, 403 for a Keystone token with none of Warden's roles,
    503 when Keystone cannot be asked.
    """
    if not token:
        raise Unauthenticated("Authentication required: send a token in X-Auth-Token.")
    store: TokenStore = request.app.state.tokens
    caller = store.lookup(token)
    if caller is not None:
        return caller
    keystone: TokenValidator | None = getattr(request.app.state, "keystone", None)
    if keystone is None:
        raise Unauthenticated("The token is not valid.")
    return replace(await keystone.caller(token), keystone_token=token)


async def writer(caller: Annotated[Caller, Depends(current_caller)]) -> Caller:
    """Authenticate and require a role that may change things (403 for readers).
    `async`, though it never waits: a plain `def` would cost a thread hop (api/deps.py)."""
    if not caller.can_write:
        raise Forbidden("This token's role (reader) may not change anything.")
    return caller


def same_project(caller: Caller, project_id: str) -> None:
    """403 when a `{project_id}` path names another project."""
    if caller.project_id != project_id:
        raise Forbidden(f"The token is not scoped to project {project_id}.")


CallerDep = Annotated[Caller, Depends(current_caller)]
WriterDep = Annotated[Caller, Depends(writer)]
