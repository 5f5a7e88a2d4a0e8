"""`senlin.policy.batch` 1.0: how a cluster update rolls through its nodes.

Upstream Senlin: the batch size is `total - min_in_service` (half the cluster when
that leaves nothing to do), capped by `max_batch_size` (-1: no cap); nodes in ERROR
go first, then the rest in the cluster's order; `pause_time` seconds pass between
batches. Without a batch policy an update replaces every node in one batch.
"""

from __future__ import annotations

import math
from typing import Self

from pydantic import Field, model_validator

from domain.cluster.policies.base import MAX_SECONDS, FieldError, SpecModel


class BatchPolicyProperties(SpecModel):
    """`senlin.policy.batch` 1.0 properties (Senlin's defaults)."""

    min_in_service: int = Field(1, ge=0)
    max_batch_size: int = Field(-1, ge=-1)
    pause_time: int = Field(60, ge=0, le=MAX_SECONDS)

    @model_validator(mode="after")
    def _batches_have_members(self) -> Self:
        if self.max_batch_size == 0:
            raise FieldError("max_batch_size", "must be -1 (no limit) or at least 1")
        return self


def batch_size(total: int, props: BatchPolicyProperties | None) -> int:
    """How many nodes one batch of an update of `total` nodes replaces."""
    if props is None or total == 0:
        return max(total, 1)
    size = math.ceil(total / 2)
    if total > props.min_in_service:
        size = total - props.min_in_service
    if props.max_batch_size != -1 and size >= props.max_batch_size:
        size = props.max_batch_size
    return max(size, 1)


def update_batches(
    failed_first: list[str], healthy: list[str], props: BatchPolicyProperties | None
) -> list[list[str]]:
    """The nodes of each batch, in order: failed nodes first, then healthy ones."""
    ordered = [*failed_first, *healthy]
    size = batch_size(len(ordered), props)
    return [ordered[start : start + size] for start in range(0, len(ordered), size)]
