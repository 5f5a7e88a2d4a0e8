"""Parse `WARDEN_HEALTHCHECK_URI`: comma-separated `tcp://host:port` and `unix:///path`."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass

# Nova's character set ([a-zA-Z0-9_-], docs/openstack-designs.md §Nova health checks)
# with dots between labels, so that
# IPv4 addresses and host names such as controller-1.cloud are accepted.
_HOSTNAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
_IPV4_LIKE = re.compile(r"[0-9.]+")
_TCP = re.compile(r"(?:\[(?P<ipv6>[^\]]*)\]|(?P<host>[^:\[\]/]*))(?::(?P<port>[^/]*))?")
_PORT = re.compile(r"[0-9]{1,5}")
# sun_path is 108 bytes on Linux including the terminating NUL.
_MAX_UNIX_PATH_BYTES = 107
_FORMS = "expected tcp://host:port, tcp://[ipv6]:port or unix:///absolute/path"


@dataclass(frozen=True, slots=True)
class TcpUri:
    """A TCP endpoint; `host` is a name, an IPv4 or a bare IPv6 address."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"tcp://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class UnixUri:
    """A UNIX domain socket at an absolute path."""

    path: str

    def __str__(self) -> str:
        return f"unix://{self.path}"


HealthUri = TcpUri | UnixUri


def parse_uris(value: str) -> list[HealthUri]:
    """Parse a comma-separated list of health endpoint URIs; blank means none.

    Raises:
        ValueError: an entry is empty, has an unknown scheme, lacks a port, has a
            relative UNIX path or is otherwise malformed.
    """
    if not value.strip():
        return []
    return [parse_uri(part) for part in value.split(",")]


def parse_uri(text: str) -> HealthUri:
    """Parse one `tcp://` or `unix://` URI.

    Raises:
        ValueError: the URI is malformed; the message says what is expected.
    """
    uri = text.strip()
    if not uri:
        raise ValueError(f"empty health check URI in the list; {_FORMS}")
    scheme, sep, rest = uri.partition("://")
    if not sep:
        raise ValueError(f"health check URI {uri!r} has no scheme; {_FORMS}")
    if scheme.lower() == "tcp":
        return _parse_tcp(uri, rest)
    if scheme.lower() == "unix":
        return _parse_unix(uri, rest)
    raise ValueError(f"health check URI {uri!r} has unsupported scheme {scheme!r}; {_FORMS}")


def _parse_tcp(uri: str, rest: str) -> TcpUri:
    if rest.count(":") > 1 and not rest.startswith("["):
        raise ValueError(f"health check URI {uri!r}: IPv6 addresses must be enclosed in [ ]")
    if "/" in rest or "?" in rest or "#" in rest:
        raise ValueError(f"health check URI {uri!r} must not have a path or query; {_FORMS}")
    match = _TCP.fullmatch(rest)
    if match is None:
        raise ValueError(f"health check URI {uri!r} is malformed; {_FORMS}")
    port_text = match["port"]
    if not port_text:
        raise ValueError(f"health check URI {uri!r} has no port; {_FORMS}")
    if not _PORT.fullmatch(port_text) or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"health check URI {uri!r}: port must be a number from 1 to 65535")
    ipv6 = match["ipv6"]
    host = _check_ipv6(uri, ipv6) if ipv6 is not None else _check_host(uri, match["host"])
    return TcpUri(host=host, port=int(port_text))


def _check_ipv6(uri: str, host: str) -> str:
    try:
        return str(ipaddress.IPv6Address(host))
    except ValueError:
        raise ValueError(f"health check URI {uri!r}: {host!r} is not an IPv6 address") from None


def _check_host(uri: str, host: str) -> str:
    if not host:
        raise ValueError(f"health check URI {uri!r} has no host; {_FORMS}")
    if not _HOSTNAME.fullmatch(host):
        raise ValueError(f"health check URI {uri!r}: invalid host {host!r}")
    if _IPV4_LIKE.fullmatch(host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(f"health check URI {uri!r}: {host!r} is not an IPv4 address") from None
    return host


def _parse_unix(uri: str, path: str) -> UnixUri:
    if not path.startswith("/"):
        raise ValueError(
            f"health check URI {uri!r}: relative UNIX socket paths are not supported; "
            "use unix:///absolute/path"
        )
    if path.endswith("/"):
        raise ValueError(f"health check URI {uri!r} must name a socket file, not a directory")
    if "\x00" in path:
        raise ValueError(f"health check URI {uri!r} contains a NUL byte")
    if len(os.fsencode(path)) > _MAX_UNIX_PATH_BYTES:
        raise ValueError(
            f"health check URI {uri!r}: UNIX socket paths are limited to "
            f"{_MAX_UNIX_PATH_BYTES} bytes"
        )
    return UnixUri(path=path)
