"""Each service's configuration files under var/openstack/etc/<service>/."""

from __future__ import annotations

import shutil
from pathlib import Path

from scripts.openstack.iniconf import Sections, authtoken, common_default, service_auth, write
from scripts.openstack.layout import NOVA_HOST, Layout


def _locks(layout: Layout, service: str) -> dict[str, str | int | bool]:
    return {"lock_path": str(layout.data / service / "locks")}


def keystone(layout: Layout) -> list[Path]:
    keys = layout.data / "keystone"
    conf: Sections = {
        "DEFAULT": common_default(layout, "keystone"),
        "database": {"connection": layout.db_url("keystone")},
        "token": {"provider": "fernet"},
        "fernet_tokens": {"key_repository": str(keys / "fernet-keys")},
        "fernet_receipts": {"key_repository": str(keys / "fernet-keys")},
        "credential": {"key_repository": str(keys / "credential-keys")},
        "oslo_concurrency": _locks(layout, "keystone"),
    }
    return [write(layout.etc / "keystone" / "keystone.conf", conf)]


def placement(layout: Layout) -> list[Path]:
    conf: Sections = {
        "DEFAULT": common_default(layout, "placement"),
        "placement_database": {"connection": layout.db_url("placement")},
        "api": {"auth_strategy": "keystone"},
        "keystone_authtoken": authtoken(layout, "placement"),
        "oslo_concurrency": _locks(layout, "placement"),
    }
    return [write(layout.etc / "placement" / "placement.conf", conf)]


def glance(layout: Layout) -> list[Path]:
    data = layout.data / "glance"
    conf: Sections = {
        "DEFAULT": {
            **common_default(layout, "glance"),
            # One file store; `file` is both its name and its type.
            "enabled_backends": "file:file",
            "worker_self_reference_url": layout.url("glance"),
            "public_endpoint": layout.url("glance"),
        },
        "glance_store": {"default_backend": "file"},
        "file": {"filesystem_store_datadir": str(data / "images")},
        "os_glance_staging_store": {"filesystem_store_datadir": str(data / "staging")},
        "os_glance_tasks_store": {"filesystem_store_datadir": str(data / "tasks")},
        "database": {"connection": layout.db_url("glance")},
        "keystone_authtoken": authtoken(layout, "glance"),
        "paste_deploy": {
            "flavor": "keystone",
            "config_file": str(layout.venv / "etc" / "glance" / "glance-api-paste.ini"),
        },
        "oslo_concurrency": _locks(layout, "glance"),
    }
    return [write(layout.etc / "glance" / "glance-api.conf", conf)]


def neutron(layout: Layout) -> list[Path]:
    default = {
        **common_default(layout, "neutron"),
        "core_plugin": "ml2",
        "service_plugins": "router",
        "auth_strategy": "keystone",
        "transport_url": layout.transport_url,
        "api_paste_config": str(layout.venv / "etc" / "neutron" / "api-paste.ini"),
        "host": NOVA_HOST,
        # No DHCP agent exists to tell; Nova still hears of port status changes.
        "dhcp_agent_notification": False,
        "notify_nova_on_port_status_changes": True,
        "notify_nova_on_port_data_changes": True,
        "allow_overlapping_ips": True,
    }
    conf: Sections = {
        "DEFAULT": default,
        "database": {"connection": layout.db_url("neutron")},
        "keystone_authtoken": authtoken(layout, "neutron"),
        "nova": service_auth(layout, "nova"),
        "oslo_concurrency": _locks(layout, "neutron"),
    }
    ml2: Sections = {
        "ml2": {
            "type_drivers": "flat,vlan,vxlan",
            "tenant_network_types": "vxlan",
            "mechanism_drivers": "warden_lab",
            "extension_drivers": "port_security",
        },
        "ml2_type_flat": {"flat_networks": "public"},
        "ml2_type_vlan": {"network_vlan_ranges": "public"},
        "ml2_type_vxlan": {"vni_ranges": "1:10000"},
        "securitygroup": {"enable_security_group": True},
    }
    return [
        write(layout.etc / "neutron" / "neutron.conf", conf),
        write(layout.etc / "neutron" / "ml2_conf.ini", ml2),
    ]


def nova(layout: Layout) -> list[Path]:
    # Nova's WSGI app reads its paste pipeline from the first of its config files.
    paste = layout.etc / "nova" / "api-paste.ini"
    paste.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(layout.venv / "etc" / "nova" / "api-paste.ini", paste)
    default = {
        **common_default(layout, "nova"),
        "transport_url": layout.transport_url,
        "host": NOVA_HOST,
        "my_ip": "127.0.0.1",
        # FakeDriverWithoutFakeNodes (stable node UUID in state_path) that also keeps
        # its guests across restarts: lab_addons/warden_lab/virt.py, loaded through the
        # warden-lab-nova-compute launcher.
        "compute_driver": "warden_lab.PersistentFakeDriver",
        "instances_path": str(layout.data / "nova" / "instances"),
        # No agent plugs anything: the ML2 add-on marks ports ACTIVE when it binds.
        "vif_plugging_is_fatal": False,
        "vif_plugging_timeout": 0,
        # One compute host: a resize stays on it, as devstack allows on a single node.
        "allow_resize_to_same_host": True,
    }
    conf: Sections = {
        "DEFAULT": default,
        "api": {"auth_strategy": "keystone"},
        "wsgi": {"api_paste_config": str(paste)},
        "api_database": {"connection": layout.db_url("nova_api")},
        "database": {"connection": layout.db_url("nova")},
        "keystone_authtoken": authtoken(layout, "nova"),
        "placement": service_auth(layout, "placement"),
        "neutron": service_auth(layout, "neutron"),
        "service_user": {"send_service_user_token": True, **service_auth(layout, "nova")},
        "notifications": {
            "notification_format": "both",
            "notify_on_state_change": "vm_and_task_state",
        },
        "oslo_messaging_notifications": {"driver": "messagingv2"},
        "scheduler": {"workers": 1, "discover_hosts_in_cells_interval": 30},
        "conductor": {"workers": 1},
        "vnc": {"enabled": False},
        "spice": {"enabled": False},
        "oslo_concurrency": _locks(layout, "nova"),
    }
    return [paste, write(layout.etc / "nova" / "nova.conf", conf)]


WRITERS = {
    "keystone": keystone,
    "placement": placement,
    "glance": glance,
    "neutron": neutron,
    "nova": nova,
}


def write_all(layout: Layout) -> dict[str, list[Path]]:
    """Write every service's files; the same layout always gives the same files."""
    for name in WRITERS:
        (layout.data / name / "locks").mkdir(parents=True, exist_ok=True)
    (layout.data / "nova" / "instances").mkdir(parents=True, exist_ok=True)
    return {name: writer(layout) for name, writer in WRITERS.items()}
