"""Neutron's exceptions by class name: the HTTP status and message each one answers.

The messages are neutron-lib's and neutron's templates (`%(net_id)s` written as
`{net_id}`), and the class name is the body's `type`, so a client that matches on
`NeutronError.type` or on the wording sees what a real Neutron sends.
"""

from __future__ import annotations

from simcloud.errors import SimError

#: Class name → (status, message template).
FAULTS: dict[str, tuple[int, str]] = {
    # 400: request bodies, neutron.api.v2.base and neutron_lib.api.attributes
    "HTTPBadRequest": (400, "{message}"),
    "BadRequest": (400, "Bad {resource} request: {msg}."),
    "InvalidInput": (400, "Invalid input for operation: {error_message}."),
    "InvalidIpForSubnet": (
        400,
        "IP address {ip_address} is not a valid IP for the specified subnet.",
    ),
    "InvalidIpForNetwork": (
        400,
        "IP address {ip_address} is not a valid IP for any of the subnets on the "
        "specified network.",
    ),
    "InvalidAllocationPool": (400, "The allocation pool {pool} is not valid."),
    "OutOfBoundsAllocationPool": (
        400,
        "The allocation pool {pool} spans beyond the subnet cidr {subnet_cidr}.",
    ),
    "DNSNameServersExhausted": (
        400,
        "Unable to complete operation for {subnet_id}. The number of DNS nameservers "
        "exceeds the limit {quota}.",
    ),
    "HostRoutesExhausted": (
        400,
        "Unable to complete operation for {subnet_id}. The number of host routes "
        "exceeds the limit {quota}.",
    ),
    "PortSecurityAndIPRequiredForSecurityGroups": (
        400,
        "Port security must be enabled and port must have an IP address in order to "
        "use security groups.",
    ),
    "SecurityGroupInvalidPortRange": (
        400,
        "For TCP/UDP protocols, port_range_min must be <= port_range_max",
    ),
    "SecurityGroupInvalidPortValue": (400, "Invalid value for port {port}"),
    "SecurityGroupInvalidIcmpValue": (
        400,
        "Invalid value for ICMP {field} ({attr}) {value}. It must be 0 to 255.",
    ),
    "SecurityGroupMissingIcmpType": (
        400,
        "ICMP code (port-range-max) {value} is provided but ICMP type (port-range-min) is missing.",
    ),
    "SecurityGroupInvalidProtocolForPort": (
        400,
        "Ports cannot be specified for protocol {protocol}. Ports are only supported "
        "for {valid_port_protocols}.",
    ),
    "SecurityGroupProtocolRequiredWithPorts": (
        400,
        "Must also specify protocol if port range is given.",
    ),
    "SecurityGroupRuleInvalidProtocol": (
        400,
        "Security group rule protocol {protocol} not supported. Only protocol values "
        "{values} and integer representations [0 to 255] are supported.",
    ),
    "SecurityGroupRuleInvalidEtherType": (
        400,
        "Security group rule for ethertype '{ethertype}' not supported. Allowed values "
        "are {values}.",
    ),
    "SecurityGroupRuleParameterConflict": (
        400,
        "Conflicting value ethertype {ethertype} for CIDR {cidr}",
    ),
    "SecurityGroupEthertypeConflictWithProtocol": (
        400,
        "Invalid ethertype {ethertype} for protocol {protocol}.",
    ),
    "SecurityGroupMultipleRemoteEntites": (
        400,
        "Only one of remote_ip_prefix or remote_group_id or remote_address_group_id "
        "may be provided.",
    ),
    "InvalidCIDR": (400, "Invalid CIDR {input} given as IP prefix."),
    "ExternalIpAddressExhausted": (
        400,
        "Unable to find any IP address on external network {net_id}.",
    ),
    "SubnetMismatchForPort": (
        400,
        "Subnet on port {port_id} does not match the requested subnet {subnet_id}.",
    ),
    # 403
    "PolicyNotAuthorized": (403, "({rule}) is disallowed by policy"),
    # 404
    "HTTPNotFound": (404, "{message}"),
    "NetworkNotFound": (404, "Network {net_id} could not be found."),
    "SubnetNotFound": (404, "Subnet {subnet_id} could not be found."),
    "PortNotFound": (404, "Port {port_id} could not be found."),
    "InvalidRoutes": (400, "Invalid format for routes: {routes}, {reason}"),
    "TrunkNotFound": (404, "Trunk {trunk_id} could not be found."),
    "SubPortNotFound": (404, "SubPort {port_id} cannot be found on trunk {trunk_id}."),
    "TrunkPortInUse": (409, "Port {port_id} is in use by another trunk."),
    "ParentPortInUse": (
        409,
        "Port {port_id} is currently in use and is not eligible for use as a parent port.",
    ),
    "PortInUseAsTrunkParent": (
        409,
        "Port {port_id} is currently a parent port for trunk {trunk_id}.",
    ),
    "PortInUseAsSubPort": (409, "Port {port_id} is currently a subport for trunk {trunk_id}."),
    "DuplicateSubPort": (
        409,
        "segmentation_type {segmentation_type} and segmentation_id {segmentation_id} already "
        "in use on trunk {trunk_id}.",
    ),
    "TrunkInUse": (409, "Trunk {trunk_id} is currently in use."),
    "RouterNotFound": (404, "Router {router_id} could not be found"),
    "FloatingIPNotFound": (404, "Floating IP {floatingip_id} could not be found"),
    "SecurityGroupNotFound": (404, "Security group {id} does not exist"),
    "SecurityGroupRuleNotFound": (404, "Security group rule {id} does not exist"),
    "TagResourceNotFound": (404, "Resource {resource} {resource_id} could not be found."),
    "TagNotFound": (404, "Tag {tag} could not be found."),
    "SubnetPoolNotFound": (404, "Subnet pool {subnetpool_id} could not be found."),
    "AvailabilityZoneNotFound": (404, "AvailabilityZone {availability_zone} could not be found."),
    "RouterInterfaceNotFound": (
        404,
        "Router {router_id} does not have an interface with id {port_id}",
    ),
    "RouterInterfaceNotFoundForSubnet": (
        404,
        "Router {router_id} has no interface on subnet {subnet_id}",
    ),
    "ExternalGatewayForFloatingIPNotFound": (
        404,
        "External network {external_network_id} is not reachable from subnet "
        "{subnet_id}.  Therefore, cannot associate Port {port_id} with a Floating IP.",
    ),
    "HTTPMethodNotAllowed": (405, "{message}"),
    # 409
    "Conflict": (409, "{message}"),
    "NetworkInUse": (409, "Unable to complete operation on network {net_id}. {reason}."),
    "SubnetInUse": (409, "Unable to complete operation on subnet {subnet_id}: {reason}."),
    "PortInUse": (
        409,
        "Unable to complete operation on port {port_id} for network {net_id}. Port "
        "already has an attached device {device_id}.",
    ),
    "ServicePortInUse": (
        409,
        "Port {port_id} cannot be deleted directly via the port API: {reason}.",
    ),
    "MacAddressInUse": (
        409,
        "Unable to complete operation for network {net_id}. The mac address {mac} is in use.",
    ),
    "IpAddressAlreadyAllocated": (409, "IP address {ip} already allocated in subnet {subnet_id}"),
    "IpAddressGenerationFailure": (409, "No more IP addresses available on network {net_id}."),
    "OverlappingAllocationPools": (
        409,
        "Found overlapping allocation pools: {pool_1} {pool_2} for subnet {subnet_cidr}.",
    ),
    "GatewayConflictWithAllocationPools": (
        409,
        "Gateway ip {ip_address} conflicts with allocation pool {pool}.",
    ),
    "GatewayIpInUse": (
        409,
        "Current gateway ip {ip_address} already in use by port {port_id}. Unable to update.",
    ),
    "OverQuota": (409, "Quota exceeded for resources: {overs}."),
    "RouterInUse": (409, "Router {router_id} {reason}"),
    "RouterInterfaceInUseByFloatingIP": (
        409,
        "Router interface for subnet {subnet_id} on router {router_id} cannot be "
        "deleted, as it is required by one or more floating IPs.",
    ),
    "RouterExternalGatewayInUseByFloatingIp": (
        409,
        "Gateway cannot be updated for router {router_id}, since a gateway to external "
        "network {net_id} is required by one or more floating IPs.",
    ),
    "FloatingIPPortAlreadyAssociated": (
        409,
        "Cannot associate floating IP {floating_ip_address} ({fip_id}) with port "
        "{port_id} using fixed IP {fixed_ip}, as that fixed IP already has a floating "
        "IP on external network {net_id}.",
    ),
    "SecurityGroupInUse": (409, "Security Group {id} in use."),
    "SecurityGroupCannotRemoveDefault": (
        409,
        "Insufficient rights for removing default security group.",
    ),
    "SecurityGroupCannotUpdateDefault": (409, "Updating default security group not allowed."),
    "SecurityGroupDefaultAlreadyExists": (409, "Default security group already exists."),
    "SecurityGroupRuleExists": (
        409,
        "Security group rule already exists. Rule id is {rule_id}.",
    ),
    "AddressPairAndPortSecurityRequired": (
        409,
        "Port Security must be enabled in order to have allowed address pairs on a port.",
    ),
    "PortSecurityPortHasSecurityGroup": (
        409,
        "Port has security group associated. Cannot disable port security or IP "
        "address until security group is removed.",
    ),
}


def fault(name: str, **params: object) -> SimError:
    """The error Neutron answers with exception class `name`, e.g.
    `fault("NetworkNotFound", net_id=network_id)`."""
    status, template = FAULTS[name]
    return SimError(status, template.format(**params), style="neutron", error_type=name)


def bad_request(resource: str, msg: str) -> SimError:
    """`neutron_lib.exceptions.BadRequest`: "Bad router request: ..."."""
    return fault("BadRequest", resource=resource, msg=msg)


def invalid_input(message: str) -> SimError:
    """`neutron_lib.exceptions.InvalidInput`: "Invalid input for operation: ..."."""
    return fault("InvalidInput", error_message=message)


def http_bad_request(message: str) -> SimError:
    """webob's 400 as Neutron's API layer raises it (body validation, filters)."""
    return fault("HTTPBadRequest", message=message)


def policy_denied(rule: str) -> SimError:
    """The 403 of an admin-only attribute (simcloud's users are members)."""
    return fault("PolicyNotAuthorized", rule=f"rule:{rule}")


def action_denied(action: str) -> SimError:
    """The 403 of an action a member may not take on this object: Neutron checks the
    action's one rule, which oslo.policy prints bare ("rule:delete_port is …")."""
    return SimError(
        403,
        f"rule:{action} is disallowed by policy",
        style="neutron",
        error_type="PolicyNotAuthorized",
    )
