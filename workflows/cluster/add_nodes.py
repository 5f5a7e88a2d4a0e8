"""A cluster's `add_nodes`: it takes over standalone nodes (Senlin's orphan nodes).

The child asks each node's entity workflow to `join` (a signal naming this child) and
waits for each answer (`joined`, a signal back): the node as it joined, after which its
entity ends, or why it could not (busy, not ACTIVE, gone). Both sides are durable
signals, so a worker restart in between loses nothing. The nodes that joined are
recorded under the cluster; the cluster workflow merges them into its state.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from domain.cluster.nodes import NodeState
    from domain.cluster.standalone import JoinAnswer, JoinRequest
    from workflows import ids
    from workflows.cluster.lb_members import join_pool
    from workflows.cluster.operations import (
        NodesOperationInput,
        NodesOperationResult,
        finished,
        record_nodes,
    )
    from workflows.cluster.stack_nodes import retag_stack
    from workflows.node.messages import JOIN_SIGNAL, JOINED_SIGNAL

#: Joined stack nodes' stacks get their cluster's tags (histories from before: none).
STACK_TAGS_ON_JOIN = "stack-tags-on-join"
#: How long the nodes have to answer (each answers within one workflow task).
ANSWER_TIMEOUT = timedelta(minutes=2)


class AddNodesInput(BaseModel):
    """The standalone nodes to take over and the first name index reserved for them."""

    base: NodesOperationInput
    node_ids: list[str]
    first_index: int


@workflow.defn(name="ClusterAddNodesWorkflow")
class ClusterAddNodesWorkflow:
    """Take over standalone nodes: each joins by signal, or says why not."""

    def __init__(self) -> None:
        self.answers: dict[str, JoinAnswer] = {}

    @workflow.signal(name=JOINED_SIGNAL)
    def joined(self, answer: JoinAnswer) -> None:
        """A node's answer to `join`."""
        self.answers.setdefault(answer.node_id, answer)

    @workflow.run
    async def run(self, inp: AddNodesInput) -> NodesOperationResult:
        base = inp.base
        workflow.set_current_details(
            f"Taking over {len(inp.node_ids)} node(s) into cluster **{base.cluster_name}**"
        )
        me = workflow.info().workflow_id
        for offset, node_id in enumerate(inp.node_ids):
            request = JoinRequest(
                cluster_id=base.cluster_id, reply_to=me, index=inp.first_index + offset
            )
            try:
                await workflow.get_external_workflow_handle(ids.node(node_id)).signal(
                    JOIN_SIGNAL, request
                )
            except FailureError:  # no such node workflow running
                self.answers[node_id] = JoinAnswer(
                    node_id=node_id, refused=f"Node {node_id} is not an orphan node."
                )
        with contextlib.suppress(TimeoutError):  # a silent node is named in the error
            await workflow.wait_condition(
                lambda: all(n in self.answers for n in inp.node_ids), timeout=ANSWER_TIMEOUT
            )
        joined: list[NodeState] = [
            a.node for n in inp.node_ids if (a := self.answers.get(n)) and a.node is not None
        ]
        if joined and base.lb is not None:  # Senlin's LB policy: AFTER CLUSTER_ADD_NODES
            joined = await join_pool(base.lb, joined, base.action_id)
        if joined and workflow.patched(STACK_TAGS_ON_JOIN):
            for node in joined:  # a stack node's stack says its cluster (Senlin's do_join)
                await retag_stack(node, base.cluster_id)
        if joined:
            await record_nodes(base, joined, "NODE_JOIN")
        refusals = [
            self.answers[n].refused if n in self.answers else f"Node {n} did not answer."
            for n in inp.node_ids
            if n not in {j.node_id for j in joined}
        ]
        error = f"Failed to add {len(refusals)} node(s): {' '.join(refusals)}" if refusals else ""
        return finished(NodesOperationResult(nodes=joined, error=error))
