"""Rules Octavia checks on listener and pool creates and updates (in its controllers
and `octavia.common.validate`): header insertion, TLS references, client
authentication, allowed CIDRs, TLS versions and HSTS for listeners; protocols, session
persistence and what the amphora provider supports for pools.

Certificate references are taken as given: simcloud has no Barbican to fetch them
from (a real Octavia answers 400 "Could not retrieve certificate" for a bad one).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from simcloud.octavia.bodies import SessionPersistenceUpdate
from simcloud.octavia.exceptions import fault, validation
from simcloud.octavia.state import ListenerRecord

HEADER_PROTOCOLS = ("HTTP", "TERMINATED_HTTPS")
HTTP_HEADERS = (
    "X-Forwarded-For",
    "X-Forwarded-Port",
    "X-Forwarded-Proto",
    "X-Forwarded-IP",
    "X-Client-IP",
    "X-Real-IP",
)
SSL_HEADERS = (
    "X-SSL-Client-Verify",
    "X-SSL-Client-Has-Cert",
    "X-SSL-Client-DN",
    "X-SSL-Client-CN",
    "X-SSL-Issuer",
    "X-SSL-Client-SHA1",
    "X-SSL-Client-Not-Before",
    "X-SSL-Client-Not-After",
)
TLS_ALL_VERSIONS = ("SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")
#: Listener protocol → the pool protocols it may forward to.
LISTENER_POOL_PROTOCOLS = {
    "TCP": ("HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP"),
    "HTTP": ("HTTP", "PROXY", "PROXYV2"),
    "HTTPS": ("HTTPS", "PROXY", "PROXYV2", "TCP"),
    "TERMINATED_HTTPS": ("HTTP", "PROXY", "PROXYV2"),
    "UDP": ("UDP",),
    "SCTP": ("SCTP",),
    "PROMETHEUS": (),
}
LVS_PROTOCOLS = frozenset({"UDP", "SCTP"})
#: Algorithms the amphora provider implements.
AMPHORA_ALGORITHMS = frozenset({"ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP"})


def check_headers(headers: dict[str, str] | None, protocol: str) -> None:
    """`insert_headers` only on HTTP-terminating listeners; SSL ones only with TLS."""
    if not headers:
        return
    names = list(headers)
    if protocol not in HEADER_PROTOCOLS:
        raise fault(
            "InvalidOption", value="insert-headers", option=f"a {protocol} protocol listener."
        )
    if set(names) - set(HTTP_HEADERS + SSL_HEADERS):
        raise fault("InvalidOption", value=names, option="insert_headers")
    ssl = [name for name in names if name in SSL_HEADERS]
    if ssl and protocol != "TERMINATED_HTTPS":
        raise fault("InvalidOption", value=ssl, option=f"{protocol} protocol listener.")


def has_certificates(listener: dict[str, Any]) -> bool:
    """Whether a listener names a certificate container of any kind."""
    keys = ("default_tls_container_ref", "client_ca_tls_container_ref", "sni_container_refs")
    return any(listener.get(key) for key in keys)


def check_tls(listener: dict[str, Any], protocol: str) -> None:
    """A new listener's TLS references and options fit its protocol."""
    certificates = has_certificates(listener)
    if protocol in LVS_PROTOCOLS and (certificates or listener.get("insert_headers")):
        raise validation(f"{protocol} protocol listener does not support TLS.")
    if protocol != "TERMINATED_HTTPS" and certificates:
        raise validation(
            f"Certificate container references are not allowed on {protocol} protocol listeners."
        )
    server_certificate = listener.get("default_tls_container_ref") or listener.get(
        "sni_container_refs"
    )
    if listener.get("client_ca_tls_container_ref") and not server_certificate:
        raise validation(
            "An SNI or default certificate container reference must be provided with a "
            "client CA container reference."
        )
    if protocol == "TERMINATED_HTTPS" and not server_certificate:
        raise validation(
            "An SNI or default certificate container reference must be provided for "
            f"{protocol} protocol listeners."
        )
    _check_client_ca(listener, {}, listener.get("client_authentication"))
    check_tls_versions(listener.get("tls_versions"))


def check_tls_update(current: dict[str, Any], changes: dict[str, Any], protocol: str) -> None:
    """A listener update's TLS references and options fit the listener (as
    `_validate_listener_PUT` checks them: mostly the changes alone)."""
    if protocol in LVS_PROTOCOLS and (has_certificates(changes) or changes.get("insert_headers")):
        raise validation(f"{protocol} protocol listener does not support TLS or header insertion.")
    if protocol != "TERMINATED_HTTPS" and has_certificates(changes):
        raise validation(
            f"Certificate container references are not allowed on {protocol} protocol listeners."
        )
    _check_client_ca(current, changes, changes.get("client_authentication"))
    if "tls_versions" in changes:
        check_tls_versions(changes["tls_versions"])


def _check_client_ca(current: dict[str, Any], changes: dict[str, Any], mode: str | None) -> None:
    ca_key, crl_key = "client_ca_tls_container_ref", "client_crl_container_ref"
    ca = changes.get(ca_key) or current.get(ca_key)
    crl = changes.get(crl_key) or (current.get(crl_key) if crl_key not in changes else None)
    if mode not in (None, "NONE") and not ca:
        raise validation(
            f"Client authentication setting {mode} requires a client CA container reference."
        )
    if crl and not ca:
        raise validation(
            "A client authentication CA reference is required to specify a client "
            "authentication revocation list."
        )


def check_tls_versions(versions: list[str] | None) -> None:
    """A non-empty list of known TLS versions (None keeps the default)."""
    if versions == []:
        raise validation(
            "Empty TLS version list. Either specify at least one TLS version or remove "
            "this parameter to use the default."
        )
    invalid = [v for v in versions or () if v not in TLS_ALL_VERSIONS]
    if invalid:
        raise validation("Invalid TLS versions: " + ", ".join(invalid))


def check_cidrs(cidrs: list[str] | None, vips: list[str]) -> None:
    """Each allowed CIDR must match the IP version of some VIP."""
    for cidr in cidrs or ():
        version = ipaddress.ip_network(cidr, strict=False).version
        if not any(ipaddress.ip_address(vip).version == version for vip in vips):
            raise validation(
                f"CIDR {cidr} IP version incompatible with all VIPs {vips} IP version."
            )


def check_hsts(listener: dict[str, Any], protocol: str) -> None:
    """A new listener's HSTS options need `hsts_max_age`, and TERMINATED_HTTPS."""
    max_age = listener.get("hsts_max_age")
    if (
        listener.get("hsts_include_subdomains") or listener.get("hsts_preload")
    ) and max_age is None:
        raise validation(
            "HSTS configuration options hsts_include_subdomains and hsts_preload only make "
            "sense if hsts_max_age is set as well."
        )
    _check_hsts_protocol(max_age, protocol)


def check_hsts_update(current: dict[str, Any], changes: dict[str, Any], protocol: str) -> None:
    """An update may enable HSTS options only with `hsts_max_age` set before or now."""
    disabled = current.get("hsts_max_age") is None and changes.get("hsts_max_age") is None
    if (changes.get("hsts_include_subdomains") or changes.get("hsts_preload")) and disabled:
        raise validation(
            "Cannot enable hsts_include_subdomains or hsts_preload if hsts_max_age was not "
            "set as well."
        )
    _check_hsts_protocol(changes.get("hsts_max_age"), protocol)


def _check_hsts_protocol(max_age: int | None, protocol: str) -> None:
    if max_age is not None and protocol != "TERMINATED_HTTPS":
        raise validation(
            "The HSTS feature can only be used for listeners using the TERMINATED_HTTPS protocol."
        )


def check_pool_protocol(listener: ListenerRecord | None, protocol: str) -> None:
    """A pool's protocol suits the listener it is made on (if any)."""
    if listener is None:
        return
    if listener.protocol == "PROMETHEUS":
        raise fault("ListenerNoChildren", protocol="PROMETHEUS")
    if protocol not in LISTENER_POOL_PROTOCOLS[listener.protocol]:
        raise validation(
            f"The pool protocol '{protocol}' is invalid while the listener protocol is "
            f"'{listener.protocol}'."
        )


def check_persistence(protocol: str, persistence: SessionPersistenceUpdate | None) -> None:
    """Session persistence suits the pool's protocol; APP_COOKIE alone takes a cookie."""
    if persistence is None:
        return
    kind, cookie = persistence.type, persistence.cookie_name
    if kind is None:
        raise validation("Invalid session_persistence provided.")
    if protocol in LVS_PROTOCOLS:
        if cookie:
            raise validation("Cookie names are not supported for UDP/SCTP pools.")
        if kind in ("HTTP_COOKIE", "APP_COOKIE"):
            raise validation(
                f"Session persistence of type {kind} is not supported for UDP/SCTP protocol pools."
            )
    elif persistence.persistence_timeout or persistence.persistence_granularity:
        raise validation(
            "persistence_timeout and persistence_granularity is only for UDP and SCTP "
            "protocol pools."
        )
    if cookie and kind != "APP_COOKIE":
        raise validation(
            'Field "cookie_name" can only be specified with session persistence of type '
            '"APP_COOKIE".'
        )
    if kind == "APP_COOKIE" and not cookie:
        raise validation(
            'Field "cookie_name" must be specified when using the "APP_COOKIE" session '
            "persistence type."
        )


def check_pool_options(algorithm: str | None, crl: str | None, ca: str | None) -> None:
    """A revocation list needs a CA; the amphora provider refuses SOURCE_IP_PORT (501)."""
    if crl and not ca:
        raise validation("A CA certificate reference is required to specify a revocation list.")
    if algorithm is not None and algorithm not in AMPHORA_ALGORITHMS:
        message = f"Amphora provider does not support {algorithm} algorithm."
        raise fault("ProviderUnsupportedOptionError", prov="amphora", user_msg=message)
