"""The sample files under examples/ stay valid as the code changes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from activities.cloud import from_clouds_yaml
from config import Settings
from domain.cluster.policies.specs import PolicyType, parse_policy_spec
from domain.cluster.profiles import ProfileSpec
from domain.hot.template import load_template, resolve_parameters
from domain.stack.rules import ensure_supported
from simcloud.config import SimConfig

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_example_deletion_policy_is_a_valid_policy_with_a_signed_webhook() -> None:
    spec = yaml.safe_load((EXAMPLES / "deletion-policy.yaml").read_text())
    parsed = parse_policy_spec(spec)
    assert parsed.type == PolicyType.DELETION
    assert parsed.secret == "change-me-please"
    assert "change-me-please" not in str(parsed.public_spec())


def test_example_batch_policy_and_second_profile_are_valid() -> None:
    spec = yaml.safe_load((EXAMPLES / "batch-policy.yaml").read_text())
    parsed = parse_policy_spec(spec)
    assert parsed.type == PolicyType.BATCH
    v1 = yaml.safe_load((EXAMPLES / "server-profile.yaml").read_text())
    v2 = yaml.safe_load((EXAMPLES / "server-profile-v2.yaml").read_text())
    assert v1["type"] == v2["type"] and v1["properties"]["image"] != v2["properties"]["image"]


def test_example_health_policy_is_valid_with_its_ordered_actions() -> None:
    spec = yaml.safe_load((EXAMPLES / "health-policy.yaml").read_text())
    parsed = parse_policy_spec(spec, min_interval=60)
    assert parsed.type == PolicyType.HEALTH
    names = [a.name for a in parsed.properties.recovery.actions]  # type: ignore[union-attr]
    assert names == ["REBOOT", "REBUILD", "RECREATE", "DrainAndReplace"]


@pytest.mark.parametrize("name", ["stack-web.yaml", "stack-chain.yaml", "stack-group.yaml"])
def test_example_stack_templates_are_valid_and_supported(name: str) -> None:
    template = load_template((EXAMPLES / name).read_text())
    ensure_supported(template)
    resolve_parameters(template, {})
    assert template.outputs


def test_example_web_stack_builds_the_server_last_from_the_other_two() -> None:
    template = load_template((EXAMPLES / "stack-web.yaml").read_text())
    assert template.creation_order()[-1] == "web"
    assert template.dependencies()["web"] == {"salt", "config"}
    assert template.resources["web"].properties["image"] == {"get_param": "image"}


def test_example_server_profile_is_a_valid_profile_spec() -> None:
    spec = ProfileSpec.model_validate(
        yaml.safe_load((EXAMPLES / "server-profile.yaml").read_text())
    )
    assert spec.type == "os.nova.server"


def test_example_clouds_yaml_reaches_the_dev_simcloud_keystone() -> None:
    cloud = yaml.safe_load((EXAMPLES / "clouds.yaml").read_text())["clouds"]["warden-dev"]
    sim = SimConfig()
    port = Settings.model_fields["simcloud_port"].default

    assert cloud["auth"] == {
        "auth_url": f"http://127.0.0.1:{port}/identity/v3",
        "username": sim.username,
        "password": sim.password,
        "project_name": sim.project_name,
        "user_domain_name": sim.domain_name,
        "project_domain_name": sim.domain_name,
    }
    assert cloud["region_name"] == sim.region
    assert cloud["interface"] == "public"
    parsed = from_clouds_yaml("warden-dev", paths=[EXAMPLES / "clouds.yaml"])
    assert parsed.identity_url == f"http://127.0.0.1:{port}/identity/v3"
