"""The CLI's HTTP client of the REST API: where it is, which token, and readable errors."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from config import Settings

#: What the CLI tells a user who has no token at all.
NO_CREDENTIALS_HELP = (
    "No API token: set WARDEN_TOKEN, pass --token, or run `warden dev` (it writes {path})."
)


class ApiError(Exception):
    """The API answered with an error, or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Connection:
    """Where the API is and how to authenticate."""

    url: str
    token: str


def resolve_connection(settings: Settings, url: str | None, token: str | None) -> Connection:
    """URL: --url, else WARDEN_URL, else the local API. Token: --token, else WARDEN_TOKEN,
    else `<var_dir>/dev-token` written by `warden dev`."""
    token_file = settings.var_dir / "dev-token"
    found = token or os.environ.get("WARDEN_TOKEN") or _read(token_file)
    if not found:
        raise ApiError(NO_CREDENTIALS_HELP.format(path=token_file))
    return Connection(url=(url or settings.api_url).rstrip("/"), token=found)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def error_message(response: httpx.Response) -> str:
    """The API's own message (docs/api-contract.md §Errors), else the status line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if message:
            return f"{response.status_code}: {message}"
    return f"{response.status_code} {response.reason_phrase}"


class WardenClient:
    """Synchronous calls to the API; every failure becomes an `ApiError`."""

    def __init__(
        self,
        connection: Connection,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.connection = connection
        self._http = httpx.Client(
            base_url=connection.url,
            headers={"X-Auth-Token": connection.token},
            timeout=timeout,
            follow_redirects=True,
            transport=transport,
        )
        self._project: str | None = None

    def close(self) -> None:
        """Release the connection pool."""
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
    ) -> httpx.Response:
        """One call; a 4xx/5xx or a connection failure raises `ApiError`."""
        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.TransportError as err:
            raise ApiError(
                f"Cannot reach the Warden API at {self.connection.url} ({err}). "
                "Is it running (`warden dev`), and is WARDEN_URL right?"
            ) from err
        if response.is_error:
            raise ApiError(error_message(response), response.status_code)
        return response

    def get(self, path: str, **params: Any) -> Any:
        """GET and decode JSON; `None`-valued query parameters are left out."""
        query = {k: v for k, v in params.items() if v is not None}
        return self.request("GET", path, params=query).json()

    @staticmethod
    def action_of(response: httpx.Response) -> str:
        """The action a 202 started: the last part of its `Location`, as Senlin says it."""
        return response.headers["Location"].rsplit("/", 1)[-1]

    def post(self, path: str, body: Any) -> httpx.Response:
        """POST a JSON body."""
        return self.request("POST", path, json=body)

    def project(self) -> str:
        """The token's project (stack URLs carry it), asked once."""
        if self._project is None:
            self._project = str(self.get("/v1/whoami")["project_id"])
        return self._project

    def stacks_path(self) -> str:
        """`/v1/{project_id}/stacks`."""
        return f"/v1/{self.project()}/stacks"
