"""Senlin's batch policy: batch sizes and order of a rolling cluster update."""

from __future__ import annotations

import pytest

from domain.cluster.policies.batch import BatchPolicyProperties, batch_size, update_batches
from domain.cluster.policies.specs import parse_policy_spec
from domain.errors import InvalidRequest


@pytest.mark.parametrize(
    ("total", "min_in_service", "max_batch_size", "size"),
    [
        (10, 2, -1, 8),  # total - min_in_service
        (10, 2, 3, 3),  # capped
        (4, 4, -1, 2),  # nothing left above min_in_service: half the cluster
        (5, 9, -1, 3),  # min_in_service above total: half, rounded up
        (1, 1, -1, 1),
        (6, 4, 2, 2),
    ],
)
def test_batch_size_follows_senlin(
    total: int, min_in_service: int, max_batch_size: int, size: int
) -> None:
    props = BatchPolicyProperties(min_in_service=min_in_service, max_batch_size=max_batch_size)
    assert batch_size(total, props) == size


def test_without_a_batch_policy_every_node_is_one_batch() -> None:
    assert update_batches([], ["a", "b", "c"], None) == [["a", "b", "c"]]


def test_failed_nodes_come_first() -> None:
    props = BatchPolicyProperties(min_in_service=4, max_batch_size=2)
    batches = update_batches(["f"], ["a", "b", "c", "d", "e"], props)
    assert batches == [["f", "a"], ["b", "c"], ["d", "e"]]


def test_the_spec_is_version_1_0_with_senlin_defaults() -> None:
    parsed = parse_policy_spec({"type": "senlin.policy.batch", "version": 1.0, "properties": {}})
    assert parsed.version == "1.0"
    assert parsed.properties == BatchPolicyProperties(
        min_in_service=1, max_batch_size=-1, pause_time=60
    )
    with pytest.raises(InvalidRequest, match=r"expected 1\.0"):
        parse_policy_spec({"type": "senlin.policy.batch", "version": "1.1"})
    with pytest.raises(InvalidRequest, match="max_batch_size"):
        parse_policy_spec(
            {"type": "senlin.policy.batch", "version": "1.0", "properties": {"max_batch_size": 0}}
        )
