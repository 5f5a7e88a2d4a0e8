"""Heat v1 client (the catalog's `orchestration`): the stacks an `os.heat.stack` node is,
and the remote stacks of `OS::Heat::Stack` resources with a `context`, in any region of
the catalog.

Paths are under the endpoint, which already names the project (`…/v1/{project_id}`).
A stack is always addressed as `/stacks/{name}/{id}`: Heat answers a bare id with a 302
and checks the name against the id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from activities.cloud.errors import json_body
from domain.errors import BackendError, BackendNotFound

if TYPE_CHECKING:
    from activities.cloud.requests import CloudRequests

SERVICE = "orchestration"


@dataclass(frozen=True)
class Stack:
    """What Heat shows of a stack."""

    id: str
    name: str
    status: str
    status_reason: str = ""
    updated_time: str | None = None
    outputs: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] = ()

    @classmethod
    def from_api(cls, data: Any) -> Stack:
        """Parse Heat's stack JSON (a list entry or a show)."""
        if not isinstance(data, dict) or "id" not in data:
            raise BackendError("orchestration API returned a stack without an id")
        outputs = data.get("outputs")
        return cls(
            id=str(data["id"]),
            name=str(data.get("stack_name", "")),
            status=str(data.get("stack_status", "UNKNOWN")),
            status_reason=str(data.get("stack_status_reason") or ""),
            updated_time=data.get("updated_time"),
            outputs=tuple(o for o in outputs if isinstance(o, dict))
            if isinstance(outputs, list)
            else (),
            tags=tuple(str(t) for t in data.get("tags") or ()),
        )


@dataclass(frozen=True)
class StackResource:
    """One resource of a stack, as Heat lists it."""

    name: str
    type: str
    status: str
    status_reason: str = ""
    physical_id: str = ""

    @property
    def failed(self) -> bool:
        """Whether Heat holds the resource failed (CHECK_FAILED, a mark, included)."""
        return self.status.endswith("_FAILED")


class OrchestrationClient:
    """Heat's stacks: create, show, list resources, update, act on, delete."""

    def __init__(self, session: CloudRequests, region: str | None = None) -> None:
        self._session = session
        self.region = region

    def in_region(self, region: str | None) -> OrchestrationClient:
        """The same client, on the orchestration endpoint of `region` (None: the
        configured region)."""
        return self if region == self.region else OrchestrationClient(self._session, region)

    async def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
    ) -> httpx.Response:
        return await self._session.request(
            SERVICE, method, path, json=json, params=params, region=self.region
        )

    @staticmethod
    def _path(name: str, stack_id: str, tail: str = "") -> str:
        return f"/stacks/{quote(name, safe='')}/{quote(stack_id, safe='')}{tail}"

    async def create_stack(self, name: str, fields: dict[str, Any]) -> str:
        """Create a stack; its id."""
        response = await self._request("POST", "/stacks", json={"stack_name": name, **fields})
        created = json_body(response, f"orchestration create of stack {name}", "stack")
        if not isinstance(created, dict) or "id" not in created:
            raise BackendError(f"orchestration created stack {name} without an id")
        return str(created["id"])

    async def find_stack(self, name: str) -> Stack | None:
        """The project's stack called `name`, None when there is none."""
        # Heat filters by name; a Heat that does not is answered by the loop below.
        response = await self._request("GET", "/stacks", params={"name": name})
        listed = json_body(response, "orchestration stack list", "stacks")
        if not isinstance(listed, list):
            raise BackendError("orchestration listed stacks without a list")
        for entry in listed:
            if isinstance(entry, dict) and entry.get("stack_name") == name:
                return Stack.from_api(entry)
        return None

    async def get_stack(self, name: str, stack_id: str) -> Stack | None:
        """The stack, None when it is gone (or deleted: Heat may show DELETE_COMPLETE)."""
        try:
            response = await self._request("GET", self._path(name, stack_id))
        except BackendNotFound:
            return None
        stack = Stack.from_api(json_body(response, f"orchestration show of {name}", "stack"))
        return None if stack.status == "DELETE_COMPLETE" else stack

    async def list_resources(self, name: str, stack_id: str) -> list[StackResource]:
        """The stack's top-level resources."""
        response = await self._request("GET", self._path(name, stack_id, "/resources"))
        listed = json_body(response, f"orchestration resources of {name}", "resources")
        if not isinstance(listed, list):
            raise BackendError(f"orchestration listed the resources of {name} without a list")
        return [
            StackResource(
                name=str(r.get("resource_name", "")),
                type=str(r.get("resource_type", "")),
                status=str(r.get("resource_status", "UNKNOWN")),
                status_reason=str(r.get("resource_status_reason") or ""),
                physical_id=str(r.get("physical_resource_id") or ""),
            )
            for r in listed
            if isinstance(r, dict)
        ]

    async def patch_stack(self, name: str, stack_id: str, fields: dict[str, Any]) -> None:
        """Update the stack with its existing template (Heat's PATCH): `{}` replaces every
        failed or CHECK_FAILED resource and keeps the rest."""
        await self._request("PATCH", self._path(name, stack_id), json=fields)

    async def put_stack(self, name: str, stack_id: str, fields: dict[str, Any]) -> None:
        """Update the stack to a new template and parameters (Heat's PUT)."""
        await self._request("PUT", self._path(name, stack_id), json=fields)

    async def act(self, name: str, stack_id: str, action: str) -> None:
        """Start a stack action: `suspend`, `resume` or `check`."""
        await self._request("POST", self._path(name, stack_id, "/actions"), json={action: None})

    async def delete_stack(self, name: str, stack_id: str) -> bool:
        """Ask Heat to delete the stack; False when it was already gone."""
        try:
            await self._request("DELETE", self._path(name, stack_id))
        except BackendNotFound:
            return False
        return True
