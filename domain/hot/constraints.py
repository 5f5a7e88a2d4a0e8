"""Heat's custom constraints that need no cloud: addresses, CIDRs, MACs, DNS names.

The constraints naming a cloud object (`nova.flavor`, `glance.image`, `neutron.network`,
…) are not checked here: the activity that looks the object up by name or id is their
check, and its "could not be found" fails the resource as Heat's would fail validation.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Final

_MAC = re.compile(r"[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}")
_DNS_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_FQDN_MAX_LEN: Final = 255


def _ip_addr(value: str) -> str | None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return "Invalid IP address"
    return None


def _cidr(value: str) -> str | None:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError as exc:
        return f"Invalid net cidr {exc} "
    if "/" not in value:
        return f"'{value}' is not a valid IP subnet"
    return None


def _ip_or_cidr(value: str) -> str | None:
    problem = _cidr(value) if "/" in value else _ip_addr(value)
    return None if problem is None else f"{value} is not a valid IP or CIDR"


def _mac_addr(value: str) -> str | None:
    return None if _MAC.fullmatch(value) else "Invalid MAC address."


def _dns_name(value: str) -> str | None:
    name = value[:-1] if value.endswith(".") else value
    if not name or len(value) > _FQDN_MAX_LEN:
        reason = f"'{value}' exceeds the {_FQDN_MAX_LEN} character FQDN limit"
    elif not all(_DNS_LABEL.fullmatch(label) for label in name.split(".")):
        reason = "Encountered an empty component" if ".." in name else "Invalid DNS label"
    else:
        return None
    return f"'{value}' not in valid format. Reason: {reason}"


def _relative_dns_name(value: str) -> str | None:
    if value.endswith("."):
        return f"'{value}' is a FQDN. It should be a relative domain name."
    return _dns_name(value)


def _dns_domain(value: str) -> str | None:
    return _dns_name(value) or (None if value.endswith(".") else f"'{value}' must end with '.'.")


#: Constraint name → check (None when the value is fine, else Heat's reason).
PURE: Final[dict[str, Callable[[str], str | None]]] = {
    "ip_addr": _ip_addr,
    "net_cidr": _cidr,
    "cidr": _cidr,
    "ip_or_cidr": _ip_or_cidr,
    "mac_addr": _mac_addr,
    "dns_name": _dns_name,
    "rel_dns_name": _relative_dns_name,
    "dns_domain": _dns_domain,
}


def check_custom(constraint: str, value: str) -> str | None:
    """Why `value` fails the pure custom `constraint`, or None (also for cloud lookups)."""
    check = PURE.get(constraint)
    return None if check is None else check(value)
