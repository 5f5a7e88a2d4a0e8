"""`senlin.policy.scaling` 1.0: the spec as Senlin takes it, and the count it gives a
scale action (Senlin's `_calculate_adjustment_count` and its size checks)."""

from __future__ import annotations

import pytest

from domain.cluster.policies.scaling import ScalingPolicyProperties, adjustment_count, policy_count
from domain.cluster.policies.specs import PolicyType, parse_policy_spec
from domain.errors import InvalidRequest

#: senlin-tempest-plugin's `spec_scaling_policy`.
SPEC = {
    "type": "senlin.policy.scaling",
    "version": "1.0",
    "properties": {
        "event": "CLUSTER_SCALE_IN",
        "adjustment": {
            "type": "CHANGE_IN_CAPACITY",
            "number": 1,
            "min_step": 1,
            "best_effort": True,
        },
    },
}


def policy(event: str, kind: str, number: float, **adjustment: object) -> ScalingPolicyProperties:
    return ScalingPolicyProperties.model_validate(
        {"event": event, "adjustment": {"type": kind, "number": number, **adjustment}}
    )


def test_senlins_own_spec_parses_with_its_defaults() -> None:
    parsed = parse_policy_spec(SPEC)
    assert parsed.type is PolicyType.SCALING and parsed.version == "1.0"
    assert isinstance(parsed.properties, ScalingPolicyProperties)
    assert parsed.properties.adjustment.cooldown == 0
    # Shown as given, as Senlin shows a spec; each reader applies the defaults again.
    assert parsed.public_spec() == SPEC
    with pytest.raises(InvalidRequest, match="event"):
        parse_policy_spec({**SPEC, "properties": {}})
    with pytest.raises(InvalidRequest, match="version"):
        parse_policy_spec({**SPEC, "version": "1.1"})


@pytest.mark.parametrize(
    ("event", "kind", "number", "current", "count"),
    [
        ("CLUSTER_SCALE_OUT", "CHANGE_IN_CAPACITY", 2, 3, 2),
        ("CLUSTER_SCALE_OUT", "EXACT_CAPACITY", 5, 3, 2),
        ("CLUSTER_SCALE_IN", "EXACT_CAPACITY", 1, 3, 2),
        ("CLUSTER_SCALE_OUT", "CHANGE_IN_PERCENTAGE", 50, 4, 2),
        ("CLUSTER_SCALE_OUT", "CHANGE_IN_PERCENTAGE", 10, 4, 1),  # min_step
    ],
)
def test_the_count_follows_the_adjustment_type(
    event: str, kind: str, number: float, current: int, count: int
) -> None:
    assert adjustment_count(policy(event, kind, number), current) == count


def test_a_given_count_wins_and_the_limits_are_kept_or_cut_to_with_best_effort() -> None:
    strict = policy("CLUSTER_SCALE_IN", "CHANGE_IN_CAPACITY", 3)
    lenient = policy("CLUSTER_SCALE_IN", "CHANGE_IN_CAPACITY", 3, best_effort=True)
    grow = policy("CLUSTER_SCALE_OUT", "CHANGE_IN_CAPACITY", 3, best_effort=True)
    limits = {"current": 3, "min_size": 1, "max_size": 4}

    assert policy_count(strict, given=1, **limits) == 1
    with pytest.raises(InvalidRequest, match=r"target capacity \(0\) is less than .* \(1\)"):
        policy_count(strict, given=None, **limits)
    assert policy_count(lenient, given=None, **limits) == 2
    assert policy_count(grow, given=None, **limits) == 1
    assert policy_count(grow, given=None, current=3, min_size=0, max_size=-1) == 3
    # best effort at a limit: nothing to do (Senlin's pre_op passes a count of 0)
    assert policy_count(grow, given=None, current=4, min_size=1, max_size=4) == 0
    with pytest.raises(
        InvalidRequest, match=r"^Invalid count \(0\) for action 'CLUSTER_SCALE_IN'\.$"
    ):
        policy_count(policy("CLUSTER_SCALE_IN", "EXACT_CAPACITY", 3), given=None, **limits)
