"""Heat's config resources (`SoftwareConfig`, `CloudConfig`, `MultipartMime`,
`StructuredConfig`): each create stores one config, its id the resource's reference."""

from __future__ import annotations

from typing import Any, ClassVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.software_configs import SoftwareConfigActivities
    from domain.stack.state import ResourceState
    from domain.stack.types.api_object import physical_name
    from domain.stack.types.software_config import ConfigRef, ConfigRequest, SoftwareConfig
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
    )


class SoftwareConfigHandler(ResourceHandler):
    """A stored config. Any change replaces it (a config never changes once stored)."""

    pure: ClassVar[bool] = False

    def __init__(self, rtype: str) -> None:
        self._type = rtype

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Work out the config and store it under an id drawn here (replay-safe)."""
        spec = ctx.parent()
        request = ConfigRequest(
            id=str(workflow.uuid4()),
            project_id=spec.project_id,
            name=physical_name(spec.name, name, resource_id),
            type=self._type,
            properties=props,
        )
        stored: SoftwareConfig = await call_activity(
            SoftwareConfigActivities.store_software_config, request
        )
        return Applied(
            physical_id=stored.id,
            reference=stored.id,
            attributes={"config": stored.config, "show": _show(stored)},
        )

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Delete the config (gone already is fine)."""
        if physical_id:
            ref = ConfigRef(project_id=ctx.parent().project_id, id=physical_id)
            await call_activity(SoftwareConfigActivities.delete_software_config, ref)

    async def check(self, ctx: NestedContext, current: ResourceState) -> None:
        """The config is still stored."""
        if not current.physical_id:
            raise ResourceFailed("The software config was never stored")
        ref = ConfigRef(project_id=ctx.parent().project_id, id=current.physical_id)
        found = await call_activity(SoftwareConfigActivities.show_software_config, ref)
        if found is None:
            raise ResourceFailed(f"Software config with id {current.physical_id} not found")


def _show(config: SoftwareConfig) -> dict[str, Any]:
    """Heat's `show` attribute of a config resource: the config as the API shows it."""
    return {
        "id": config.id,
        "name": config.name,
        "group": config.group,
        "config": config.config,
        "inputs": config.inputs,
        "outputs": config.outputs,
        "options": config.options,
    }
