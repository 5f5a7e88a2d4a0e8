"""Every workflow id Warden uses, built in one place.

Ids are business keys: one entity workflow per stack or cluster, one operation child
per action, one deletion per lifecycle token. Temporal refuses a second workflow with
a running id, which is what makes starts idempotent; the Temporal UI finds them with
`WorkflowId STARTS_WITH "cluster-op:<cluster id>"` and the like.

A leaf module: the API, workflows, benchmarks and tests all import it.
"""

from __future__ import annotations


def stack(stack_id: str) -> str:
    """The entity workflow of a stack."""
    return f"stack:{stack_id}"


def stack_operation(stack_id: str, action_id: str, phase: str = "") -> str:
    """The child that carries out one action on a stack (`phase`: e.g. `rollback`)."""
    suffix = f":{phase}" if phase else ""
    return f"stack-op:{stack_id}:{action_id}{suffix}"


def cluster(cluster_id: str) -> str:
    """The entity workflow of a cluster."""
    return f"cluster:{cluster_id}"


def cluster_operation(cluster_id: str, action_id: str) -> str:
    """The child that carries out one action on a cluster's nodes."""
    return f"cluster-op:{cluster_id}:{action_id}"


def cluster_update_step(cluster_id: str, action_id: str, batch: int, step: str) -> str:
    """One step (`create` or `remove`) of one batch of a cluster update."""
    return f"{cluster_operation(cluster_id, action_id)}:batch-{batch}:{step}"


def node(node_id: str) -> str:
    """The entity workflow of a standalone node (one in no cluster)."""
    return f"node:{node_id}"


def node_operation(node_id: str, action_id: str) -> str:
    """The child that carries out one action on a standalone node."""
    return f"node-op:{node_id}:{action_id}"


def health_manager(cluster_id: str) -> str:
    """The health manager watching a cluster (not a child: it outlives operations)."""
    return f"health:{cluster_id}"


def node_deletion(token: str) -> str:
    """The deletion of one node, keyed by its lifecycle action token."""
    return f"node-delete:{token}"


def node_recovery(node_id: str, action_id: str, step: int | None = None) -> str:
    """The recovery of one node in an action (`step`: one recovery step's child)."""
    suffix = f":step-{step}" if step is not None else ""
    return f"node-recover:{node_id}:{action_id}{suffix}"


def uuid_text(bits: int) -> str:
    """`str(uuid.UUID(int=bits, version=4))`, without the `UUID` object.

    `workflow.uuid4()` is `UUID(bytes=workflow.random().getrandbits(128)…, version=4)`;
    passing `workflow.random().getrandbits(128)` here gives the very same text (so
    recorded histories replay), at a tenth of the cost in Temporal's sandbox, where a
    1,000-resource stack makes three of them per resource in one workflow task.
    """
    bits &= ~(0xC000 << 48)
    bits |= 0x8000 << 48
    bits &= ~(0xF000 << 64)
    bits |= 4 << 76
    h = f"{bits:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
