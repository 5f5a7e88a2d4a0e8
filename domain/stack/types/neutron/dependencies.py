"""The dependencies Heat adds between networking resources that do not name each other.

A port must wait for the subnets of its network (Neutron picks its address from
them), as must a server on that network and a router whose gateway is on it; a
floating IP must wait for the router that makes its port reachable from the
floating network (Neutron answers 404 `ExternalGatewayForFloatingIPNotFound`
otherwise); a router's extra routes wait for its interfaces (their next hops are on
the interfaces' subnets). Heat adds these in each type's `add_dependencies`; so does Warden.

Values are compared as written (a `get_resource` or `get_param` to the same name is
equal), which is what Heat's comparison amounts to before anything is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.hot.parts import ResourceDef

PORT = "OS::Neutron::Port"
SUBNET = "OS::Neutron::Subnet"
SERVER = "OS::Nova::Server"
ROUTER = "OS::Neutron::Router"
INTERFACE = "OS::Neutron::RouterInterface"
FLOATING_IP = "OS::Neutron::FloatingIP"
ASSOCIATION = "OS::Neutron::FloatingIPAssociation"
EXTRA_ROUTES = "OS::Neutron::ExtraRouteSet"


def _get(res: ResourceDef, name: str, old: str | None = None) -> Any:
    """A property as written, under its name or its deprecated one."""
    value = res.properties.get(name)
    return res.properties.get(old) if value is None and old is not None else value


def _referenced(value: Any) -> str | None:
    """The resource a `get_resource` names, if `value` is one."""
    if isinstance(value, Mapping) and set(value) == {"get_resource"}:
        target = value["get_resource"]
        return target if isinstance(target, str) else None
    return None


def _of_type(resources: Mapping[str, ResourceDef], kind: str) -> dict[str, ResourceDef]:
    return {n: r for n, r in resources.items() if r.type == kind}


def _subnets_of(resources: Mapping[str, ResourceDef], network: Any) -> set[str]:
    return {
        n
        for n, r in _of_type(resources, SUBNET).items()
        if network is not None and _get(r, "network", "network_id") == network
    }


def _port_subnets(port: ResourceDef) -> list[Any]:
    fixed = port.properties.get("fixed_ips")
    if not isinstance(fixed, list):
        return []
    return [f.get("subnet") or f.get("subnet_id") for f in fixed if isinstance(f, Mapping)]


def _server_networks(server: ResourceDef) -> list[Any]:
    nics = server.properties.get("networks")
    if not isinstance(nics, list):
        return []
    return [n.get("network") for n in nics if isinstance(n, Mapping) and n.get("network")]


def _server_subnets(resources: Mapping[str, ResourceDef], server: ResourceDef) -> set[str]:
    """Heat's `Server.add_dependencies`: a server with networks waits for every subnet of
    a network an entry names, for every subnet whose network is unknown, and, for an entry
    naming no network (a port, a subnet), for every subnet: it may be on any of them. So
    a server is deleted before the subnets its ports have addresses on."""
    nics = server.properties.get("networks")
    if not isinstance(nics, list) or not nics:
        return set()
    named = [n.get("network") if isinstance(n, Mapping) else None for n in nics]
    return {
        n
        for n, subnet in _of_type(resources, SUBNET).items()
        if not _get(subnet, "network", "network_id")
        or any(not network or network == _get(subnet, "network", "network_id") for network in named)
    }


def _interfaces_for_port(resources: Mapping[str, ResourceDef], port_value: Any) -> set[str]:
    """Router interfaces on a subnet the (template's) port has an address on."""
    port = resources.get(_referenced(port_value) or "")
    if port is None or port.type != PORT:
        return set()
    subnets = _port_subnets(port) or [
        {"get_resource": s} for s in _subnets_of(resources, _get(port, "network", "network_id"))
    ]
    return {
        n
        for n, r in _of_type(resources, INTERFACE).items()
        if _get(r, "subnet", "subnet_id") in subnets
    }


def _routers_to(resources: Mapping[str, ResourceDef], network: Any) -> set[str]:
    found = set()
    for name, router in _of_type(resources, ROUTER).items():
        gateway = router.properties.get("external_gateway_info")
        if (
            isinstance(gateway, Mapping)
            and network is not None
            and gateway.get("network") == network
        ):
            found.add(name)
    return found


#: The workflow patch from which a server waits for every subnet Heat makes it wait for
#: (`_server_subnets`); before it, only for the subnets of the networks it names.
EVERY_SUBNET_PATCH = "server-waits-for-every-subnet"


def implicit_dependencies(
    resources: Mapping[str, ResourceDef], *, every_subnet: bool = True
) -> dict[str, set[str]]:
    """Resource → the resources Heat makes it wait for without a reference."""
    extra: dict[str, set[str]] = {}
    for name, res in resources.items():
        found: set[str] = set()
        if res.type == PORT:
            found = _subnets_of(resources, _get(res, "network", "network_id"))
        elif res.type == SERVER and every_subnet:
            found = _server_subnets(resources, res)
        elif res.type == SERVER:
            for network in _server_networks(res):
                found |= _subnets_of(resources, network)
        elif res.type == ROUTER:
            gateway = res.properties.get("external_gateway_info")
            if isinstance(gateway, Mapping):
                found = _subnets_of(resources, gateway.get("network"))
        elif res.type == FLOATING_IP:
            network = _get(res, "floating_network", "floating_network_id")
            found = _routers_to(resources, network) | _interfaces_for_port(
                resources, res.properties.get("port_id")
            )
        elif res.type == ASSOCIATION:
            found = _interfaces_for_port(resources, res.properties.get("port_id"))
        elif res.type == EXTRA_ROUTES:
            # Its next hops are on the subnets of the router's interfaces.
            found = {
                n
                for n, r in _of_type(resources, INTERFACE).items()
                if _get(r, "router", "router_id") == res.properties.get("router")
            }
        found.discard(name)
        if found:
            extra[name] = found
    return extra
