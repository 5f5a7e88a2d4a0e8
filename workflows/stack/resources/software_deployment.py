"""Heat's software deployments: `OS::Heat::SoftwareDeployment` (and `StructuredDeployment`)
applies a config to a server and waits, durably, for the server's agent to signal the
outcome; `SoftwareDeploymentGroup` is a nested stack of one deployment per server."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.signals import SignalActivities
    from activities.software_configs import SoftwareConfigActivities
    from domain.stack.state import ResourceState, StackAction
    from domain.stack.types.software_config import ConfigRef
    from domain.stack.types.software_deployment import (
        COMPLETE,
        FAILED,
        DeploymentSignal,
        DeploymentStart,
        SoftwareDeployment,
        deployment_attributes,
        group_template,
        transport,
    )
    from workflows.stack.nested import NestedContext, create_nested, update_nested
    from workflows.stack.records import new_id
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
        unchanged,
    )
    from workflows.stack.resources.nested_stack import NestedStackHandler

#: Transports whose agent POSTs to the deployment's signal URL (`deploy_signal_id`).
_URL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL")


class SoftwareDeploymentHandler(ResourceHandler):
    """A deployment. Its steps write the config store (idempotent); its waits are for a
    signal, so cancel_update or the stack's timeout stop them at once (the deployment is
    then FAILED `Deployment cancelled.`, as in Heat)."""

    pure: ClassVar[bool] = True

    def __init__(self, structured: bool) -> None:
        self._structured = structured

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Deploy on CREATE (when `actions` has it) and wait for the agent's signal."""
        deployment_id = new_id()
        found = await self._run(ctx, name, props, deployment_id, StackAction.CREATE)
        return _applied(deployment_id, found)

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Deploy the new config or inputs on UPDATE and wait again."""
        deployment_id = current.physical_id or new_id()
        found = await self._run(ctx, current.name, props, deployment_id, StackAction.UPDATE)
        if found is None:
            return unchanged(current)
        return _applied(deployment_id, found)

    async def replaced_by(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> str:
        """Heat replaces a deployment whose `replace_on_change` input changes."""
        if not current.physical_id:
            return ""
        start = self._start(ctx, current.name, props, current.physical_id, StackAction.UPDATE)
        changed: list[str] = await call_activity(
            SoftwareConfigActivities.software_deployment_replaced_by, start
        )
        return f"Replacing the deployment: input {', '.join(changed)} changed" if changed else ""

    async def suspend(self, ctx: NestedContext, current: ResourceState) -> None:
        """Deploy on SUSPEND when `actions` has it."""
        await self._again(ctx, current, StackAction.SUSPEND)

    async def resume(self, ctx: NestedContext, current: ResourceState) -> None:
        """Deploy on RESUME when `actions` has it."""
        await self._again(ctx, current, StackAction.RESUME)

    async def delete_resource(self, ctx: NestedContext, current: ResourceState) -> None:
        """Deploy on DELETE when `actions` has it, then drop the record and its config."""
        if not current.physical_id:
            return
        try:
            await self._again(ctx, current, StackAction.DELETE)
        finally:
            ref = ConfigRef(project_id=ctx.parent().project_id, id=current.physical_id)
            await call_activity(SoftwareConfigActivities.remove_software_deployment, ref)

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Drop the record and its derived config (a failed create's leftovers)."""
        if physical_id:
            ref = ConfigRef(project_id=ctx.parent().project_id, id=physical_id)
            await call_activity(SoftwareConfigActivities.remove_software_deployment, ref)

    def _start(
        self,
        ctx: NestedContext,
        name: str,
        props: dict[str, Any],
        deployment_id: str,
        action: StackAction,
        signal_url: str | None = None,
    ) -> DeploymentStart:
        spec = ctx.parent()
        return DeploymentStart(
            deployment_id=deployment_id,
            derived_config_id=new_id(),
            project_id=spec.project_id,
            stack_id=spec.stack_id,
            stack_path=f"{spec.name}/{spec.stack_id}",
            resource_name=name,
            action=action.value,
            properties=props,
            structured=self._structured,
            signal_url=signal_url,
        )

    async def _again(self, ctx: NestedContext, current: ResourceState, action: StackAction) -> None:
        if current.physical_id:
            await self._run(ctx, current.name, current.resolved, current.physical_id, action)

    async def _run(
        self,
        ctx: NestedContext,
        name: str,
        props: dict[str, Any],
        deployment_id: str,
        action: StackAction,
    ) -> SoftwareDeployment | None:
        """Heat's `_handle_action` then `_check_complete`: None when `actions` leaves this
        action out (nothing deployed)."""
        if action.value not in (props.get("actions") or ("CREATE", "UPDATE")):
            return None
        spec = ctx.parent()
        signal_url = None
        if transport(props) in _URL_TRANSPORTS:
            signal_url = await call_activity(SignalActivities.signal_url, deployment_id)
        start = self._start(ctx, name, props, deployment_id, action, signal_url)
        found: SoftwareDeployment = await call_activity(
            SoftwareConfigActivities.start_software_deployment, start
        )
        ctx.progress(name, "waiting for the deployment's signal")
        try:
            while found.status not in (COMPLETE, FAILED):
                request = await ctx.next_signal(name)
                signal = DeploymentSignal(
                    project_id=spec.project_id,
                    deployment_id=deployment_id,
                    details=request.details,
                    refresh=request.refresh,
                )
                answer = await call_activity(
                    SoftwareConfigActivities.signal_software_deployment, signal
                )
                if answer is None:
                    raise ResourceFailed(f"Deployment with id {deployment_id} not found")
                found = answer
        except asyncio.CancelledError:
            ref = ConfigRef(project_id=spec.project_id, id=deployment_id)
            await call_activity(SoftwareConfigActivities.cancel_software_deployment, ref)
            raise
        finally:
            ctx.progress(name, "")
        if found.status == FAILED:
            raise ResourceFailed(
                f"Deployment to server failed: {found.status_reason}", deployment_id
            )
        return found


def _applied(deployment_id: str, found: SoftwareDeployment | None) -> Applied:
    attributes = deployment_attributes(found) if found is not None else {}
    return Applied(physical_id=deployment_id, reference=deployment_id, attributes=attributes)


class SoftwareDeploymentGroupHandler(NestedStackHandler):
    """A deployment per server of `servers`, in a nested stack; its attributes map each
    server's name to its deployment's `deploy_stdout`, `deploy_stderr`, `deploy_status_code`."""

    def __init__(self, rtype: str) -> None:
        self._type = rtype

    async def _create_stack(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> dict[str, Any]:
        nested = {"template": group_template(self._type, props)}
        return _group_attributes(await create_nested(ctx, name, nested, resource_id))

    async def _update_stack(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> dict[str, Any]:
        nested = {"template": group_template(self._type, props)}
        return _group_attributes(await update_nested(ctx, current, nested))


def _group_attributes(settled: dict[str, Any]) -> dict[str, Any]:
    outputs = dict(settled.get("outputs") or {})
    return {**settled, **outputs}
