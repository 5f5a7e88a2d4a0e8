"""Attaching and detaching an affinity policy: its Nova server group, as in Senlin.

Attach inherits the server group the policy (or the profile's `group` hint) names when
its policy matches, else makes one; detach deletes the group the attach made, never an
inherited one (Senlin's `AffinityPolicy.attach` / `detach`). Each answers the binding
as it now is; the nodes are not touched (new ones join the group as they are made).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from domain.cloud_objects import CloudCreate, CloudObject, CloudRef
    from domain.cluster.policies.affinity import AffinityProperties, group_name, mismatch
    from workflows.cluster.lb_policy import LbPolicyInput
    from workflows.cluster.operations import NodesOperationResult, finished
    from workflows.cluster.retries import cloud_call
    from workflows.entity import failure_reason

KIND = "server_group"


@workflow.defn(name="AffinityPolicyAttachWorkflow")
class AffinityPolicyAttachWorkflow:
    """Find or make the policy's server group."""

    @workflow.run
    async def run(self, inp: LbPolicyInput) -> NodesOperationResult:
        base, bound = inp.base, inp.policy
        props = AffinityProperties.model_validate(bound.properties)
        name = group_name(props, base.profile)
        workflow.set_current_details(
            f"Finding or making the server group of **{base.cluster_name}**"
        )
        try:
            found: CloudObject | None = None
            if name:
                found = await cloud_call(
                    CloudObjectActivities.find_cloud_object,
                    CloudRef(kind=KIND, id=name),
                    f"find server group {name}",
                )
            if found is not None:
                refused = mismatch(props, found.body)
                if refused is not None:
                    return finished(NodesOperationResult(nodes=[], error=refused))
                data = {"servergroup_id": found.id, "inherited_group": True}
            else:
                made = await self._make(name or f"server_group_{workflow.uuid4().hex[:8]}", props)
                data = {"servergroup_id": made.id, "inherited_group": False}
        except ActivityError as err:
            reason = f"Failed in creating servergroup: {failure_reason(err)}"
            return finished(NodesOperationResult(nodes=[], error=reason))
        return finished(
            NodesOperationResult(nodes=[], policy=bound.model_copy(update={"data": data}))
        )

    @staticmethod
    async def _make(name: str, props: AffinityProperties) -> CloudObject:
        # Looked up by name first, so a retried attach adopts the group it made.
        found: CloudObject | None = await cloud_call(
            CloudObjectActivities.find_cloud_object,
            CloudRef(kind=KIND, id=name),
            f"find server group {name}",
        )
        if found is not None:
            return found
        made: CloudObject = await cloud_call(
            CloudObjectActivities.create_cloud_object,
            CloudCreate(
                kind=KIND,
                body={"name": name, "policy": props.servergroup.policies},
                request_id=workflow.info().workflow_id,
            ),
            f"create server group {name}",
        )
        return made


@workflow.defn(name="AffinityPolicyDetachWorkflow")
class AffinityPolicyDetachWorkflow:
    """Delete the server group the attach made."""

    @workflow.run
    async def run(self, inp: LbPolicyInput) -> NodesOperationResult:
        base, bound = inp.base, inp.policy
        group, inherited = bound.data.get("servergroup_id"), bound.data.get("inherited_group")
        workflow.set_current_details(f"Removing the server group of **{base.cluster_name}**")
        if group and not inherited:
            try:
                await cloud_call(
                    CloudObjectActivities.delete_cloud_object,
                    CloudRef(kind=KIND, id=str(group)),
                    f"delete server group {group}",
                )
            except ActivityError as err:
                reason = f"Failed in deleting servergroup: {failure_reason(err)}"
                return finished(NodesOperationResult(nodes=[], error=reason))
        return finished(NodesOperationResult(nodes=[], policy=bound))
