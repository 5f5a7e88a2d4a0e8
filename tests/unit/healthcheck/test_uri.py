"""Parsing of `WARDEN_HEALTHCHECK_URI` values (docs/openstack-designs.md §Nova health checks)."""

from __future__ import annotations

import pytest

from healthcheck import TcpUri, UnixUri, parse_uris


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("tcp://127.0.0.1:8005", [TcpUri("127.0.0.1", 8005)]),
        ("tcp://localhost:8005", [TcpUri("localhost", 8005)]),
        ("tcp://controller-1.cloud:65535", [TcpUri("controller-1.cloud", 65535)]),
        ("tcp://[::1]:8005", [TcpUri("::1", 8005)]),
        ("tcp://[0:0:0:0:0:0:0:1]:1", [TcpUri("::1", 1)]),
        ("TCP://localhost:8005", [TcpUri("localhost", 8005)]),
        ("unix:///run/warden/worker.sock", [UnixUri("/run/warden/worker.sock")]),
        (
            "tcp://127.0.0.1:8005, unix:///run/w.sock",
            [TcpUri("127.0.0.1", 8005), UnixUri("/run/w.sock")],
        ),
        ("", []),
        ("   ", []),
    ],
)
def test_valid_uris_parse(value: str, expected: list[TcpUri | UnixUri]) -> None:
    assert parse_uris(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("unix://run/w.sock", "relative"),
        ("unix://./w.sock", "relative"),
        ("unix:///run/", "socket file"),
        (f"unix:///{'a' * 200}", "limited to 107 bytes"),
        ("http://127.0.0.1:8005", "unsupported scheme 'http'"),
        ("127.0.0.1:8005", "no scheme"),
        ("tcp://127.0.0.1", "no port"),
        ("tcp://127.0.0.1:", "no port"),
        ("tcp://[::1]", "no port"),
        ("tcp://:8005", "no host"),
        ("tcp://127.0.0.1:0", "1 to 65535"),
        ("tcp://127.0.0.1:70000", "1 to 65535"),
        ("tcp://127.0.0.1:80a", "1 to 65535"),
        ("tcp://::1:8005", "enclosed in"),
        ("tcp://[not-v6]:8005", "not an IPv6"),
        ("tcp://999.1.1.1:8005", "not an IPv4"),
        ("tcp://bad host:8005", "invalid host"),
        ("tcp://127.0.0.1:8005/health", "must not have a path"),
        ("tcp://user@host:8005", "invalid host"),
        ("tcp://127.0.0.1:8005,,unix:///x.sock", "empty"),
    ],
)
def test_invalid_uris_raise_clear_errors(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_uris(value)


def test_uris_render_back_to_their_text() -> None:
    assert str(TcpUri("::1", 8005)) == "tcp://[::1]:8005"
    assert str(TcpUri("localhost", 8005)) == "tcp://localhost:8005"
    assert str(UnixUri("/run/w.sock")) == "unix:///run/w.sock"
