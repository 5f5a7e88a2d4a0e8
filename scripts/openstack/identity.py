"""Keystone content beyond `keystone-manage bootstrap`: projects, users, catalog."""

from __future__ import annotations

import urllib.parse

from scripts.openstack.layout import (
    MEMBER_PASSWORD,
    MEMBER_USER,
    REGION,
    SERVICE_PASSWORD,
    Layout,
)
from scripts.openstack.rest import Cloud, Json

#: Catalog entries after identity (which bootstrap made): type -> (name, service).
CATALOG = {
    "compute": ("nova", "nova"),
    "placement": ("placement", "placement"),
    "image": ("glance", "glance"),
    "network": ("neutron", "neutron"),
}
SERVICE_USERS = ("nova", "placement", "glance", "neutron")


def _find(admin: Cloud, collection: str, name: str) -> Json | None:
    query = urllib.parse.urlencode({"name": name})
    found = admin.call("GET", f"{admin.auth_url}/{collection}?{query}")[collection]
    # Filter here too: not every collection honours `name` on the server side.
    return next((item for item in found if item.get("name") == name), None)


def _ensure(admin: Cloud, collection: str, name: str, body: Json) -> str:
    """The id of the named object, created with `body` when missing."""
    existing = _find(admin, collection, name)
    if existing is not None:
        return str(existing["id"])
    key = collection.rstrip("s")
    created = admin.call("POST", f"{admin.auth_url}/{collection}", {key: {"name": name, **body}})
    return str(created[key]["id"])


def _grant(admin: Cloud, project: str, user: str, role: str) -> None:
    # PUT is idempotent in Keystone: granting twice is fine.
    url = f"{admin.auth_url}/projects/{project}/users/{user}/roles/{role}"
    admin.call("PUT", url)


def _ensure_endpoints(admin: Cloud, service_id: str, url: str) -> None:
    query = urllib.parse.urlencode({"service_id": service_id})
    existing = admin.call("GET", f"{admin.auth_url}/endpoints?{query}")["endpoints"]
    have = {endpoint["interface"] for endpoint in existing}
    for interface in ("public", "internal"):
        if interface not in have:
            body = {"service_id": service_id, "interface": interface, "url": url}
            body["region_id"] = REGION
            admin.call("POST", f"{admin.auth_url}/endpoints", {"endpoint": body})


def seed_identity(layout: Layout, admin: Cloud, urls: dict[str, str]) -> dict[str, str]:
    """Service users and catalog, the `demo` project and its member; returns their ids."""
    domain = {"domain_id": "default"}
    # Nova and Placement let only the `service` role make service-to-service calls.
    roles = {name: _ensure(admin, "roles", name, {}) for name in ("admin", "member", "service")}
    service_project = _ensure(admin, "projects", "service", {**domain, "description": "lab"})
    for user in SERVICE_USERS:
        user_id = _ensure(admin, "users", user, {**domain, "password": SERVICE_PASSWORD})
        _grant(admin, service_project, user_id, roles["admin"])
        _grant(admin, service_project, user_id, roles["service"])
    for service_type, (name, service) in CATALOG.items():
        service_id = _ensure(admin, "services", name, {"type": service_type, "enabled": True})
        _ensure_endpoints(admin, service_id, urls[service])
    demo = _ensure(admin, "projects", "demo", {**domain, "description": "Warden's project"})
    member = _ensure(admin, "users", MEMBER_USER, {**domain, "password": MEMBER_PASSWORD})
    _grant(admin, demo, member, roles["member"])
    # The admin user may also act inside demo, for seeding its network and router.
    admin_user = _find(admin, "users", "admin")
    if admin_user is not None:
        _grant(admin, demo, str(admin_user["id"]), roles["admin"])
    return {
        "demo_project_id": demo,
        "member_user_id": member,
        "service_project_id": service_project,
    }
