"""What `up` leaves for its users: var/openstack/clouds.yaml and var/openstack/lab.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.openstack.layout import (
    ADMIN_PASSWORD,
    MEMBER_PASSWORD,
    MEMBER_USER,
    PORT_OFFSETS,
    REGION,
    Layout,
)


def credentials(layout: Layout) -> dict[str, dict[str, Any]]:
    """The two clouds: Warden's member user in demo, and the admin."""

    def cloud(user: str, password: str, project: str) -> dict[str, Any]:
        return {
            "auth": {
                "auth_url": layout.auth_url,
                "username": user,
                "password": password,
                "project_name": project,
                "user_domain_name": "Default",
                "project_domain_name": "Default",
            },
            "region_name": REGION,
            "interface": "public",
            "identity_api_version": 3,
        }

    return {
        "lab": cloud(MEMBER_USER, MEMBER_PASSWORD, "demo"),
        "lab-admin": cloud("admin", ADMIN_PASSWORD, "admin"),
    }


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """Block YAML for nested dicts of scalars; strings quoted as JSON (valid YAML)."""
    lines: list[str] = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append(f"{' ' * indent}{key}:")
            lines.extend(_yaml(item, indent + 2))
        else:
            lines.append(f"{' ' * indent}{key}: {json.dumps(item)}")
    return lines


def write_outputs(layout: Layout, ids: dict[str, str]) -> tuple[Path, Path]:
    clouds = layout.root / "clouds.yaml"
    clouds.write_text("\n".join(_yaml({"clouds": credentials(layout)})) + "\n")
    lab = layout.root / "lab.json"
    document = {
        "auth_url": layout.auth_url,
        "region": REGION,
        "clouds": credentials(layout),
        "ports": {name: layout.port(name) for name in PORT_OFFSETS},
        "endpoints": {
            "identity": layout.url("keystone"),
            "compute": f"{layout.url('nova')}/v2.1",
            "placement": layout.url("placement"),
            "image": layout.url("glance"),
            "network": layout.url("neutron"),
        },
        "transport_url": layout.transport_url,
        "notifications": {
            "exchange": "nova",
            "versioned_topic": "versioned_notifications",
            "legacy_topic": "notifications",
        },
        "ids": ids,
    }
    lab.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    return clouds, lab
