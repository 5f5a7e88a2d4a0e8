"""`/v2.0/extensions`: the API extensions simcloud's Neutron implements, in Neutron's words.

Clients (openstacksdk, Heat, Warden) probe these aliases before using a feature, so
the list names only what the routes really do; names, descriptions and dates are
copied from the extensions' definitions in neutron-lib and neutron.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.identity import AuthToken
from simcloud.network.exceptions import fault

router = APIRouter(prefix="/v2.0/extensions")

_TAGGED = (
    "networks, subnets, ports, routers, floatingips, security_groups, security_group_rules, trunks"
)
#: (alias, name, description, updated)
EXTENSIONS: tuple[tuple[str, str, str, str], ...] = (
    ("allowed-address-pairs", "Allowed Address Pairs", "Provides allowed address pairs",
     "2013-07-23T10:00:00-00:00"),
    ("availability_zone", "Availability Zone", "The availability zone extension.",
     "2015-01-01T10:00:00-00:00"),
    ("binding", "Port Binding",
     "Expose port bindings of a virtual port to external application",
     "2014-02-03T10:00:00-00:00"),
    ("extraroute", "Neutron Extra Route", "Extra routes configuration for L3 router",
     "2013-02-01T10:00:00-00:00"),
    ("extraroute-atomic", "Atomically add/remove extra routes",
     "Edit extra routes of a router on server side by atomically adding/removing extra "
     "routes", "2019-07-10T00:00:00-00:00"),
    ("external-net", "Neutron external network",
     "Adds external network attribute to network resource.", "2013-01-14T10:00:00-00:00"),
    ("ext-gw-mode", "Neutron L3 Configurable external gateway mode",
     "Extension of the router abstraction for specifying whether SNAT should occur on "
     "the external gateway", "2013-03-28T10:00:00-00:00"),
    ("filter-validation", "Filter parameters validation",
     "Provides validation on filter parameters.", "2018-07-04T10:00:00-00:00"),
    ("fip-port-details", "Floating IP Port Details Extension",
     "Add port_details attribute to Floating IP resource", "2018-04-09T10:00:00-00:00"),
    ("l2_adjacency", "L2 Adjacency", "Display L2 Adjacency for Neutron Networks.",
     "2016-04-12T16:00:00-00:00"),
    ("net-mtu", "Network MTU", "Provides MTU attribute for a network resource.",
     "2015-03-25T10:00:00-00:00"),
    ("net-mtu-writable", "Network MTU (writable)",
     "Provides a writable MTU attribute for a network resource.",
     "2017-07-12T00:00:00-00:00"),
    ("network_availability_zone", "Network Availability Zone",
     "Availability zone support for network.", "2015-01-01T10:00:00-00:00"),
    ("pagination", "Pagination support",
     "Extension that indicates that pagination is enabled.", "2016-06-12T00:00:00-00:00"),
    ("port-security", "Port Security", "Provides port security",
     "2012-07-23T10:00:00-00:00"),
    ("project-id", "project_id field enabled",
     "Extension that indicates that project_id field is enabled.",
     "2016-09-09T09:09:09-09:09"),
    ("quota_details", "Quota details management support",
     "Expose functions for quotas usage statistics per project",
     "2017-02-10T10:00:00-00:00"),
    ("quotas", "Quota management support",
     "Expose functions for quotas management per project", "2012-07-29T10:00:00-00:00"),
    ("router", "Neutron L3 Router",
     "Router abstraction for basic L3 forwarding between L2 Neutron networks and access "
     "to external networks via a NAT gateway.", "2012-07-20T10:00:00-00:00"),
    ("router_availability_zone", "Router Availability Zone",
     "Availability zone support for router.", "2015-01-01T10:00:00-00:00"),
    ("security-group", "security-group", "The security groups extension.",
     "2012-10-05T10:00:00-00:00"),
    ("security-groups-rules-belongs-to-default-sg",
     "Security group rule belongs to the project's default security group",
     "Flag to determine if the security group rule belongs to the project's default "
     "security group", "2023-05-23T10:00:00-00:00"),
    ("security-groups-shared-filtering", "Security group filtering on the shared field",
     "Support filtering security groups on the shared field", "2021-10-05T09:00:00-00:00"),
    ("standard-attr-description", "standard-attr-description",
     "Extension to add descriptions to standard attributes", "2016-02-10T10:00:00-00:00"),
    ("standard-attr-revisions", "Resource revision numbers",
     "This extension will display the revision number of neutron resources.",
     "2016-04-11T10:00:00-00:00"),
    ("standard-attr-tag", f"Tag support for resources with standard attribute: {_TAGGED}",
     "Enables to set tag on resources with standard attribute.",
     "2017-01-01T00:00:00-00:00"),
    ("standard-attr-timestamp", "Resource timestamps",
     "Adds created_at and updated_at fields to all Neutron resources that have Neutron "
     "standard attributes.", "2016-09-12T10:00:00-00:00"),
    ("stateful-security-group", "Stateful security group",
     "Indicates if the security group is stateful or not", "2019-11-26T09:00:00-00:00"),
    ("subnet-external-network", "Subnet belongs to an external network",
     "Informs if the subnet belongs to an external network", "2024-02-05T18:00:00-00:00"),
    ("tag-creation", "Tag creation extension",
     "Allow to create multiple tags for a resource", "2024-23-07T10:00:00-00:00"),
    ("trunk", "Trunk Extension", "Provides support for trunk ports",
     "2016-01-01T10:00:00-00:00"),
    ("trunk-details", "Trunk port details", "Expose trunk port details",
     "2016-01-01T10:00:00-00:00"),
)  # fmt: skip
ALIASES = frozenset(alias for alias, *_ in EXTENSIONS)


def _extension(alias: str, name: str, description: str, updated: str) -> dict[str, object]:
    return {
        "updated": updated,
        "name": name,
        "links": [],
        "alias": alias,
        "description": description,
    }


@router.get("")
async def list_extensions(_request: Request, _: AuthToken) -> Response:
    """Every extension simcloud implements."""
    return JSONResponse({"extensions": [_extension(*ext) for ext in EXTENSIONS]})


@router.get("/{alias}")
async def show_extension(alias: str, _: AuthToken) -> Response:
    """One extension by alias; 404 for those simcloud lacks."""
    for ext in EXTENSIONS:
        if ext[0] == alias:
            return JSONResponse({"extension": _extension(*ext)})
    raise fault("HTTPNotFound", message=f"Extension with alias {alias} does not exist")
