"""A server's networks changed in place, as Heat's `server_network_mixin` changes them.

Heat keeps every interface an entry of the new `networks` still describes (by its port,
its fixed IP, or else the entry's network, subnet and address, whichever match best),
detaches the interfaces only old entries described, and attaches the new entries
nothing matched. So `network: net` becoming `subnet: subnet`, `port: <that port>` or
`network: net, fixed_ip: <its address>` keeps the server's port: nothing to do.

Warden matches the new entries first, against the server's interfaces as Nova lists
them now, so that a retried update (an attach already done) finds its own work and does
not do it twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

#: The keys of a `networks` entry Warden can match with an interface and attach as is.
#: Entries with anything else (a floating IP, port extras, a tag, `allocate_network`)
#: make the server be replaced instead, as before.
MATCHED_KEYS: Final = ("port", "network", "subnet", "fixed_ip")


def attachable_in_place(networks: Any) -> bool:
    """Whether every entry of a `networks` value uses only `MATCHED_KEYS`."""
    if networks in (None, []):
        return True
    if not isinstance(networks, list):
        return False
    return all(
        isinstance(nic, Mapping)
        and all(key in MATCHED_KEYS for key, value in nic.items() if value not in (None, ""))
        for nic in networks
    )


@dataclass(frozen=True)
class Interface:
    """One of a server's interfaces, as `os-interface` lists it (its first address)."""

    port: str
    network: str
    subnet: str | None = None
    fixed_ip: str | None = None

    @classmethod
    def from_api(cls, attachment: Mapping[str, Any]) -> Interface:
        """From Nova's `interfaceAttachment`."""
        ips = attachment.get("fixed_ips") or [{}]
        return cls(
            port=str(attachment["port_id"]),
            network=str(attachment["net_id"]),
            subnet=ips[0].get("subnet_id"),
            fixed_ip=ips[0].get("ip_address"),
        )

    def props(self) -> dict[str, str | None]:
        """The interface in the words of a `networks` entry."""
        return {
            "port": self.port,
            "network": self.network,
            "subnet": self.subnet,
            "fixed_ip": self.fixed_ip,
        }


@dataclass(frozen=True)
class InterfacePlan:
    """Ports to detach, then entries to attach (each with ids, not names)."""

    detach: tuple[str, ...] = ()
    attach: tuple[dict[str, str], ...] = field(default_factory=tuple)


def reduced(nic: Mapping[str, Any]) -> dict[str, str]:
    """The matched keys an entry sets."""
    return {k: str(nic[k]) for k in MATCHED_KEYS if nic.get(k) not in (None, "")}


def best_match(interfaces: Iterable[Interface], nic: Mapping[str, str]) -> Interface | None:
    """Heat's `_find_best_match`: the interface of the entry's port, else of its fixed
    IP, else the one agreeing with most of what the entry says (and with all of it)."""
    candidates = [i for i in interfaces if _agrees(nic, i.props())]
    for key in ("port", "fixed_ip"):
        if nic.get(key):
            return next((i for i in candidates if i.props()[key] == nic[key]), None)
    ranked = [(sum(1 for k in nic if i.props().get(k) == nic[k]), i) for i in candidates]
    best = max(ranked, key=lambda r: r[0], default=(0, None))
    return best[1] if best[0] > 0 else None


def _agrees(nic: Mapping[str, str], iface: Mapping[str, str | None]) -> bool:
    return all(iface.get(k) == v for k, v in nic.items())


def plan_interfaces(
    old: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    interfaces: Sequence[Interface],
) -> InterfacePlan:
    """What to detach and attach so that the server has the interfaces `new` describes.

    `old` and `new` are the `networks` entries before and after, with ids. An interface
    no entry of either describes (attached by hand) is left alone, as Heat leaves it;
    with no old entries at all, the interfaces are Nova's first choice, and detached.
    """
    left = list(interfaces)
    attach: list[dict[str, str]] = []
    for nic in map(reduced, new):
        match = best_match(left, nic)
        if match is None:
            attach.append(nic)
        else:
            left.remove(match)
    detach: list[str] = []
    if not old:
        detach = [i.port for i in left] if new else []
    else:
        for nic in map(reduced, old):
            match = best_match(left, nic)
            if match is not None:
                detach.append(match.port)
                left.remove(match)
    if not new and old and detach:
        attach.append({})  # Heat attaches Nova's first free network, as at create
    return InterfacePlan(detach=tuple(detach), attach=tuple(attach))
