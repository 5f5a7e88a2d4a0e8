"""What one simcloud's Neutron holds: records by id, and the indexes that keep it cheap.

Records are the JSON objects Neutron shows (`dict`s keyed by attribute name), so a
show is a copy and a list filter compares keys. Everything Neutron derives or keeps
out of sight lives in the indexes here: IP allocations per subnet, ports per network
and device, rules per group, floating IPs per port, each project's usage and default
security group. This module imports nothing from simcloud: `SimState` imports it.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any

Record = dict[str, Any]

#: The project owning devstack's `public` network (the cloud admin's).
ADMIN_PROJECT_ID = uuid.uuid5(uuid.NAMESPACE_DNS, "admin.project.simcloud").hex
PUBLIC_NETWORK_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "simcloud:network:public"))
PUBLIC_SUBNET_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "simcloud:subnet:public-subnet"))
#: Neutron's default quotas (`[quotas]` in neutron.conf); -1 is unlimited.
DEFAULT_QUOTAS = {
    "floatingip": 50,
    "network": 100,
    "port": 500,
    "rbac_policy": 10,
    "router": 10,
    "security_group": 10,
    "security_group_rule": 100,
    "subnet": 100,
    "subnetpool": -1,
}
#: Collection → the quota resource counting it.
QUOTA_RESOURCES = {
    "networks": "network",
    "subnets": "subnet",
    "ports": "port",
    "routers": "router",
    "floatingips": "floatingip",
    "security_groups": "security_group",
    "security_group_rules": "security_group_rule",
}
#: MACs are `fa:16:3e:` plus 24 bits; an odd multiplier permutes them, so successive
#: ports get distinct, random-looking addresses without a random source.
_MAC_STRIDE = 0x9E3779


class NetworkState:
    """Networks, subnets, ports, security groups, floating IPs and routers."""

    def __init__(self) -> None:
        self.networks: dict[str, Record] = {}
        self.subnets: dict[str, Record] = {}
        self.ports: dict[str, Record] = {}
        self.routers: dict[str, Record] = {}
        self.floatingips: dict[str, Record] = {}
        self.security_groups: dict[str, Record] = {}
        self.security_group_rules: dict[str, Record] = {}
        #: Trunks (no quota counts them, as in Neutron).
        self.trunks: dict[str, Record] = {}
        #: subnet id → {address → port id}
        self.allocations: dict[str, dict[str, str]] = {}
        #: subnet id → the integer address allocated last (the next search starts there)
        self.cursors: dict[str, int] = {}
        self.network_ports: dict[str, set[str]] = {}
        self.device_ports: dict[str, set[str]] = {}
        #: security group id → its rule ids, in creation order
        self.group_rules: dict[str, dict[str, None]] = {}
        self.group_ports: dict[str, set[str]] = {}
        self.port_floatingips: dict[str, set[str]] = {}
        #: project id → the id of its `default` security group
        self.default_groups: dict[str, str] = {}
        #: Ports Nova created for a server (deleted with it; pre-made ports are kept).
        self.nova_ports: set[str] = set()
        self.macs: set[str] = set()
        self.mac_seq = 0
        #: project id → quota resource → records counted
        self.usage: dict[str, Counter[str]] = {}
        self._seed_public(time.time())

    def collection(self, name: str) -> dict[str, Record]:
        """The records of one collection (`networks`, `security_groups`, ...)."""
        records: dict[str, Record] = getattr(self, name)
        return records

    def add(self, collection: str, record: Record) -> None:
        """Store a new record and count it against its project's quota."""
        self.collection(collection)[record["id"]] = record
        self.usage.setdefault(record["project_id"], Counter())[QUOTA_RESOURCES[collection]] += 1

    def drop(self, collection: str, record_id: str) -> Record:
        """Forget a record (it now answers 404) and uncount it."""
        record = self.collection(collection).pop(record_id)
        self.usage[record["project_id"]][QUOTA_RESOURCES[collection]] -= 1
        return record

    def used(self, project_id: str, resource: str) -> int:
        """How many records of a quota resource a project holds."""
        return self.usage.get(project_id, Counter())[resource]

    def new_mac(self) -> str:
        """A MAC address in Neutron's `fa:16:3e` range that no port holds."""
        while True:
            self.mac_seq += 1
            bits = (self.mac_seq * _MAC_STRIDE) & 0xFFFFFF
            mac = f"fa:16:3e:{bits >> 16:02x}:{(bits >> 8) & 255:02x}:{bits & 255:02x}"
            if mac not in self.macs:
                return mac

    def index_port(self, port: Record) -> None:
        """Index a stored port by network, device, groups, MAC and addresses."""
        port_id = port["id"]
        self.network_ports.setdefault(port["network_id"], set()).add(port_id)
        if port["device_id"]:
            self.device_ports.setdefault(port["device_id"], set()).add(port_id)
        for group_id in port["security_groups"]:
            self.group_ports.setdefault(group_id, set()).add(port_id)
        self.macs.add(port["mac_address"])
        for fixed_ip in port["fixed_ips"]:
            self.allocations[fixed_ip["subnet_id"]][fixed_ip["ip_address"]] = port_id

    def unindex_port(self, port: Record) -> None:
        """Undo `index_port` (before a change of the indexed fields, or a delete)."""
        port_id = port["id"]
        _discard(self.network_ports, port["network_id"], port_id)
        _discard(self.device_ports, port["device_id"], port_id)
        for group_id in port["security_groups"]:
            _discard(self.group_ports, group_id, port_id)
        self.macs.discard(port["mac_address"])
        for fixed_ip in port["fixed_ips"]:
            allocated = self.allocations.get(fixed_ip["subnet_id"], {})
            if allocated.get(fixed_ip["ip_address"]) == port_id:
                del allocated[fixed_ip["ip_address"]]

    def _seed_public(self, now: float) -> None:
        """devstack's `public` external network and its `public-subnet`."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        owner = {"project_id": ADMIN_PROJECT_ID, "tenant_id": ADMIN_PROJECT_ID}
        standard = owner | {
            "description": "",
            "tags": [],
            "created_at": stamp,
            "updated_at": stamp,
            "revision_number": 1,
        }
        self.add(
            "networks",
            standard
            | {
                "id": PUBLIC_NETWORK_ID,
                "name": "public",
                "admin_state_up": True,
                "status": "ACTIVE",
                "shared": False,
                "router:external": True,
                "mtu": 1500,
                "port_security_enabled": True,
                "l2_adjacency": True,
                "availability_zone_hints": [],
                "availability_zones": ["nova"],
                "subnets": [PUBLIC_SUBNET_ID],
            },
        )
        self.add(
            "subnets",
            standard
            | {
                "id": PUBLIC_SUBNET_ID,
                "name": "public-subnet",
                "network_id": PUBLIC_NETWORK_ID,
                "ip_version": 4,
                "cidr": "172.24.4.0/24",
                "gateway_ip": "172.24.4.1",
                "allocation_pools": [{"start": "172.24.4.2", "end": "172.24.4.254"}],
                "enable_dhcp": False,
                "dns_nameservers": [],
                "host_routes": [],
                "ipv6_address_mode": None,
                "ipv6_ra_mode": None,
                "subnetpool_id": None,
                "router:external": True,
            },
        )
        self.allocations[PUBLIC_SUBNET_ID] = {}


def _discard(index: dict[str, set[str]], key: str, value: str) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(value)
        if not members:
            del index[key]
