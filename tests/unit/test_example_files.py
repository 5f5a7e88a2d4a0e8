"""The sample files under examples/ stay valid as the code changes."""

from __future__ import annotations

from pathlib import Path

import yaml

from domain.policies import PolicyType, parse_policy_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_example_deletion_policy_is_a_valid_policy_with_a_signed_webhook() -> None:
    spec = yaml.safe_load((EXAMPLES / "deletion-policy.yaml").read_text())
    parsed = parse_policy_spec(spec)
    assert parsed.type == PolicyType.DELETION
    assert parsed.secret == "change-me-please"
    assert "change-me-please" not in str(parsed.public_spec())


def test_example_health_policy_is_valid_with_its_ordered_actions() -> None:
    spec = yaml.safe_load((EXAMPLES / "health-policy.yaml").read_text())
    parsed = parse_policy_spec(spec, min_interval=60)
    assert parsed.type == PolicyType.HEALTH
    names = [a.name for a in parsed.properties.recovery.actions]  # type: ignore[union-attr]
    assert names == ["REBOOT", "REBUILD", "RECREATE", "DrainAndReplace"]
