"""Cloud configuration from settings and from OS_CLOUD + clouds.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from activities.cloud import CloudConfig, CloudSession, from_clouds_yaml
from activities.cloud.auth import auth_body
from activities.cloud.config import clouds_yaml_paths
from config import Settings
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import RunningSimcloud, SimControl


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OS_CLOUD", "OS_CLIENT_CONFIG_FILE", "WARDEN_CLOUD_NAME"):
        monkeypatch.delenv(name, raising=False)


def write(path: Path, document: object) -> Path:
    path.write_text(yaml.safe_dump(document))
    return path


def test_default_settings_reach_the_local_simcloud() -> None:
    config = CloudConfig.from_settings(Settings())

    assert config.identity_url == "http://127.0.0.1:8774/identity/v3"
    assert (config.username, config.project_name) == ("warden", "demo")
    assert config.password is not None
    assert config.password.get_secret_value() == "warden-secret"
    assert "warden-secret" not in repr(config)


def test_settings_with_application_credential_use_it() -> None:
    settings = Settings(
        cloud_application_credential_id="app-1",
        cloud_application_credential_secret="s3cret",
        cloud_region_name="R2",
    )
    config = CloudConfig.from_settings(settings)

    assert config.uses_application_credential
    assert auth_body(config) == {
        "auth": {
            "identity": {
                "methods": ["application_credential"],
                "application_credential": {"id": "app-1", "secret": "s3cret"},
            }
        }
    }


def test_password_body_scopes_by_project_id_and_domain_ids() -> None:
    config = CloudConfig(
        auth_url="http://k/v3",
        username="u",
        password="p",
        project_id="p-1",
        user_domain_id="d-1",
    )

    body = auth_body(config)

    assert body["auth"]["scope"] == {"project": {"id": "p-1"}}
    assert body["auth"]["identity"]["password"]["user"]["domain"] == {"id": "d-1"}


@pytest.mark.parametrize(
    "fields",
    [
        {"username": "u", "password": "p"},
        {"username": "u", "project_name": "x"},
        {"application_credential_id": "a"},
    ],
)
def test_incomplete_credentials_are_rejected(fields: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="needs"):
        CloudConfig(auth_url="http://k", **fields)


def test_os_cloud_reads_clouds_yaml_and_merges_secure_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clouds = write(
        tmp_path / "clouds.yaml",
        {
            "clouds": {
                "prod": {
                    "region_name": "RegionTwo",
                    "interface": "internal",
                    "verify": False,
                    "auth": {
                        "auth_url": "https://keystone.example:5000",
                        "username": "warden",
                        "project_name": "ops",
                        "user_domain_name": "Users",
                        "project_domain_name": "Projects",
                    },
                }
            }
        },
    )
    write(tmp_path / "secure.yaml", {"clouds": {"prod": {"auth": {"password": "hidden"}}}})
    monkeypatch.setenv("OS_CLOUD", "prod")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))

    config = CloudConfig.from_settings(Settings())

    assert config.identity_url == "https://keystone.example:5000/v3"
    assert (config.region_name, config.interface, config.verify) == ("RegionTwo", "internal", False)
    assert (config.user_domain_name, config.project_domain_name) == ("Users", "Projects")
    assert config.password is not None
    assert config.password.get_secret_value() == "hidden"


def test_application_credential_cloud_entry(tmp_path: Path) -> None:
    clouds = write(
        tmp_path / "clouds.yaml",
        {
            "clouds": {
                "app": {
                    "auth_type": "v3applicationcredential",
                    "auth": {
                        "auth_url": "https://k/v3",
                        "application_credential_id": "id-1",
                        "application_credential_secret": "sec",
                    },
                }
            }
        },
    )

    config = from_clouds_yaml("app", paths=[clouds])

    assert config.uses_application_credential
    assert config.application_credential_id == "id-1"


def test_unknown_or_incomplete_cloud_is_a_clear_error(tmp_path: Path) -> None:
    clouds = write(tmp_path / "clouds.yaml", {"clouds": {"half": {"auth": {"auth_url": "x"}}}})

    with pytest.raises(ValueError, match="'nope' not found"):
        from_clouds_yaml("nope", paths=[clouds, tmp_path / "missing.yaml"])
    with pytest.raises(ValueError, match=r"'half' .* is incomplete"):
        from_clouds_yaml("half", paths=[clouds])


def test_search_paths_follow_openstacksdk_order(tmp_path: Path) -> None:
    paths = clouds_yaml_paths({"OS_CLIENT_CONFIG_FILE": "/x/c.yaml", "HOME": str(tmp_path)})

    assert paths[0] == Path("/x/c.yaml")
    assert paths[1] == Path.cwd() / "clouds.yaml"
    assert paths[2] == tmp_path / ".config" / "openstack" / "clouds.yaml"
    assert paths[3] == Path("/etc/openstack/clouds.yaml")


async def test_clouds_yaml_entry_drives_a_real_session(
    tmp_path: Path, simcloud: RunningSimcloud, sim: SimControl
) -> None:
    clouds = write(
        tmp_path / "clouds.yaml",
        {
            "clouds": {
                "sim": {
                    "region_name": "RegionOne",
                    "auth": {
                        "auth_url": f"{simcloud.url}/identity",
                        "username": "warden",
                        "password": "warden-secret",
                        "project_name": "demo",
                        "domain_name": "Default",
                    },
                }
            }
        },
    )

    async with CloudSession(from_clouds_yaml("sim", paths=[clouds])) as cloud:
        server = await cloud.compute.create_server("from-yaml", CIRROS, SMALL)

    assert server.status == "ACTIVE"


def test_endpoint_overrides_come_from_clouds_yaml_and_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = {"auth_url": "https://k", "username": "u", "password": "p", "project_name": "x"}
    entry = {
        "auth": auth,
        "compute_endpoint_override": "https://nova.internal:8774/v2.1",
        "load_balancer_endpoint_override": "https://octavia.internal/",
    }
    clouds = write(tmp_path / "clouds.yaml", {"clouds": {"prod": entry}})
    monkeypatch.setenv("OS_CLOUD", "prod")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    monkeypatch.setenv("WARDEN_CLOUD_ENDPOINT_OVERRIDES", '{"compute": "http://proxy:9000/v2.1"}')

    assert from_clouds_yaml("prod", paths=[clouds]).endpoint_overrides == {
        "compute": "https://nova.internal:8774/v2.1",
        "load-balancer": "https://octavia.internal",
    }
    assert CloudConfig.from_settings(Settings()).endpoint_overrides == {
        "compute": "http://proxy:9000/v2.1",
        "load-balancer": "https://octavia.internal",
    }
    with pytest.raises(ValueError, match="endpoint override of 'compute' is not an http"):
        CloudConfig(**auth, endpoint_overrides={"compute": "nova.internal"})
