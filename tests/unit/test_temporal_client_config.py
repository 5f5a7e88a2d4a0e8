"""How Warden resolves its Temporal connection from envconfig and its settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.service import TLSConfig

from config import Settings
from config.temporal_client import TemporalConfigError, temporal_connect_config

PROFILE_TOML = """
[profile.cloud]
address = "my-ns.a1b2c.tmprl.cloud:7233"
namespace = "my-ns.a1b2c"
api_key = "from-profile"

[profile.mtls]
address = "temporal.internal:7233"
namespace = "warden"
[profile.mtls.tls]
server_name = "temporal.internal"
server_ca_cert_path = "{ca}"
client_cert_path = "{cert}"
client_key_path = "{key}"
"""


@pytest.fixture
def toml(tmp_path: Path) -> Path:
    for name in ("ca.pem", "client.pem", "client.key"):
        (tmp_path / name).write_bytes(f"-- {name} --".encode())
    path = tmp_path / "temporal.toml"
    path.write_text(
        PROFILE_TOML.format(
            ca=tmp_path / "ca.pem", cert=tmp_path / "client.pem", key=tmp_path / "client.key"
        )
    )
    return path


def test_no_configuration_keeps_warden_defaults() -> None:
    config = temporal_connect_config(Settings(), env={})
    assert config == {"target_host": "localhost:7233", "namespace": "default"}


def test_temporal_address_and_namespace_env_still_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "10.0.0.5:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "prod")
    config = temporal_connect_config(Settings())
    assert (config["target_host"], config["namespace"]) == ("10.0.0.5:7233", "prod")
    assert "tls" not in config


def test_warden_prefixed_address_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDEN_TEMPORAL_ADDRESS", "10.0.0.6:7233")
    assert temporal_connect_config(Settings(), env={})["target_host"] == "10.0.0.6:7233"


def test_api_key_profile_turns_tls_on(toml: Path) -> None:
    env = {"TEMPORAL_CONFIG_FILE": str(toml), "TEMPORAL_PROFILE": "cloud"}
    config = temporal_connect_config(Settings(), env=env)
    assert config["target_host"] == "my-ns.a1b2c.tmprl.cloud:7233"
    assert config["namespace"] == "my-ns.a1b2c"
    assert config["api_key"] == "from-profile"
    assert config["tls"] is True


def test_env_overrides_the_profile_api_key(toml: Path) -> None:
    env = {
        "TEMPORAL_CONFIG_FILE": str(toml),
        "TEMPORAL_PROFILE": "cloud",
        "TEMPORAL_API_KEY": "from-env",
    }
    assert temporal_connect_config(Settings(), env=env)["api_key"] == "from-env"


def test_mtls_profile_reads_certificate_files(toml: Path) -> None:
    env = {"TEMPORAL_CONFIG_FILE": str(toml), "TEMPORAL_PROFILE": "mtls"}
    tls = temporal_connect_config(Settings(), env=env)["tls"]
    assert isinstance(tls, TLSConfig)
    assert tls.domain == "temporal.internal"
    assert tls.server_root_ca_cert == b"-- ca.pem --"
    assert tls.client_cert == b"-- client.pem --"
    assert tls.client_private_key == b"-- client.key --"


def test_explicit_warden_settings_override_the_profile(toml: Path) -> None:
    env = {"TEMPORAL_CONFIG_FILE": str(toml), "TEMPORAL_PROFILE": "cloud"}
    settings = Settings(temporal_address="127.0.0.1:17233", temporal_namespace="other")
    config = temporal_connect_config(settings, env=env)
    assert (config["target_host"], config["namespace"]) == ("127.0.0.1:17233", "other")
    assert config["api_key"] == "from-profile"


def test_unknown_profile_is_a_clear_error(toml: Path) -> None:
    env = {"TEMPORAL_CONFIG_FILE": str(toml), "TEMPORAL_PROFILE": "nope"}
    with pytest.raises(TemporalConfigError, match="Profile 'nope' not found"):
        temporal_connect_config(Settings(), env=env)


def test_missing_certificate_file_is_a_clear_error(tmp_path: Path) -> None:
    env = {"TEMPORAL_TLS_CLIENT_CERT_PATH": str(tmp_path / "absent.pem")}
    with pytest.raises(TemporalConfigError, match=r"cannot read .*absent\.pem"):
        temporal_connect_config(Settings(), env=env)
