"""A cluster's `replace_nodes`: standalone nodes join, then the members they replace
leave (Senlin's NODE_JOIN then NODE_LEAVE: a leaving member keeps its server and lives
on as a standalone node). Lifecycle hooks fire for the leaving members, as for any
removal. A member whose replacement did not join stays."""

from __future__ import annotations

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from workflows.cluster.add_nodes import AddNodesInput, ClusterAddNodesWorkflow
    from workflows.cluster.operations import NodesOperationResult, finished
    from workflows.cluster.scale_in import ScaleInInput, ScaleInWorkflow
    from workflows.entity import failure_reason


class ReplaceNodesInput(BaseModel):
    """Who joins (in the order of `replacing`) and who leaves, and how."""

    join: AddNodesInput
    leave: ScaleInInput
    #: Member id → the standalone node that takes its place.
    replacing: dict[str, str]


@workflow.defn(name="ClusterReplaceNodesWorkflow")
class ClusterReplaceNodesWorkflow:
    """Join the replacements, then remove the members they replace."""

    @workflow.run
    async def run(self, inp: ReplaceNodesInput) -> NodesOperationResult:
        me = workflow.info().workflow_id
        workflow.set_current_details(
            f"Replacing {len(inp.replacing)} node(s) of **{inp.join.base.cluster_name}**"
        )
        joined = await workflow.execute_child_workflow(
            ClusterAddNodesWorkflow.run,
            inp.join,
            id=f"{me}:join",
            static_summary=f"{len(inp.replacing)} replacement(s) join",
        )
        arrived = {n.node_id for n in joined.nodes}
        leaving = [v for v in inp.leave.victims if inp.replacing.get(v.node_id) in arrived]
        left = NodesOperationResult(nodes=[])
        if leaving:
            try:
                left = await workflow.execute_child_workflow(
                    ScaleInWorkflow.run,
                    inp.leave.model_copy(update={"victims": leaving}),
                    id=f"{me}:leave",
                    static_summary=f"{len(leaving)} replaced node(s) leave",
                )
            except ChildWorkflowError as err:
                left = NodesOperationResult(nodes=[], error=failure_reason(err))
        return finished(
            NodesOperationResult(
                nodes=[*joined.nodes, *left.nodes],
                removed=left.removed,
                error=" ".join(e for e in (joined.error, left.error) if e),
            )
        )
