"""Octavia v2 client: pool members and their `operating_status`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from activities.cloud.errors import json_body
from activities.cloud.paging import next_marker
from domain.errors import BackendError, BackendNotFound

if TYPE_CHECKING:
    from activities.cloud.requests import CloudRequests

#: Member operating statuses that mean the backend behind it is failing.
FAILED_STATUSES = frozenset({"ERROR", "OFFLINE"})


@dataclass(frozen=True)
class Member:
    """A load-balancer pool member."""

    id: str
    name: str
    address: str
    protocol_port: int
    operating_status: str
    provisioning_status: str
    admin_state_up: bool = True
    weight: int = 1

    @property
    def failed(self) -> bool:
        """Whether Octavia considers the member down (ERROR or OFFLINE)."""
        return self.operating_status in FAILED_STATUSES

    @classmethod
    def from_api(cls, data: Any) -> Member:
        """Parse Octavia's member JSON."""
        if not isinstance(data, dict) or "id" not in data:
            raise BackendError("load-balancer API returned a member without an id")
        return cls(
            id=str(data["id"]),
            name=str(data.get("name") or ""),
            address=str(data.get("address", "")),
            protocol_port=int(data.get("protocol_port", 0)),
            operating_status=str(data.get("operating_status", "UNKNOWN")),
            provisioning_status=str(data.get("provisioning_status", "UNKNOWN")),
            admin_state_up=bool(data.get("admin_state_up", True)),
            weight=int(data.get("weight", 1)),
        )


class LoadBalancerClient:
    """Octavia v2 pool members."""

    def __init__(self, session: CloudRequests) -> None:
        self._session = session

    def _path(self, pool_id: str, member_id: str | None = None) -> str:
        path = f"/v2/lbaas/pools/{quote(pool_id, safe='')}/members"
        return path if member_id is None else f"{path}/{quote(member_id, safe='')}"

    async def list_members(self, pool_id: str) -> list[Member]:
        """Every member of a pool; `BackendNotFound` for an unknown pool."""
        params: dict[str, str] = {}
        members: list[Member] = []
        while True:
            response = await self._session.request(
                "load-balancer", "GET", self._path(pool_id), params=params
            )
            body = json_body(response, f"load-balancer members of pool {pool_id}")
            page = body.get("members") if isinstance(body, dict) else None
            if not isinstance(page, list):
                raise BackendError(f"load-balancer listed pool {pool_id} without 'members'")
            members.extend(Member.from_api(m) for m in page)
            marker = next_marker(body.get("members_links")) if page else None
            if marker is None:
                return members
            params["marker"] = marker

    async def add_member(
        self, pool_id: str, address: str, protocol_port: int, name: str = ""
    ) -> Member:
        """Add a member to a pool."""
        member = {"address": address, "protocol_port": protocol_port, "name": name}
        response = await self._session.request(
            "load-balancer", "POST", self._path(pool_id), json={"member": member}
        )
        return Member.from_api(json_body(response, f"load-balancer add to {pool_id}", "member"))

    async def remove_member(self, pool_id: str, member_id: str) -> bool:
        """Remove a member; False when it was already gone."""
        try:
            await self._session.request("load-balancer", "DELETE", self._path(pool_id, member_id))
        except BackendNotFound:
            return False
        return True
