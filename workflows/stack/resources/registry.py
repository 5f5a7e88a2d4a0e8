"""The registry of resource handlers: what a stack operation does with each type.

One line per type with behaviour of its own; a registered schema without a line here
(OS::Heat::None) gets the base handler: an id on create, nothing to do otherwise.
"""

from __future__ import annotations

from typing import Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.state import ResourceState, StackAction, StackLock
    from domain.stack.types import (
        nested_stack,
        random_string,
        resource_group,
        scaling_group,
        scaling_policy,
        server,
        software_config,
        software_deployment,
        test_resource,
        value,
        wait_condition,
    )
    from domain.stack.types.cinder import volume
    from domain.stack.types.glance import web_image
    from domain.stack.types.neutron import (
        extra_route_set,
        floating_ip,
        net,
        port,
        router,
        security_group,
        subnet,
        trunk,
    )
    from domain.stack.types.nova import keypair, server_group
    from domain.stack.types.octavia import resources as octavia
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.api_object import ApiObjectHandler
    from workflows.stack.resources.base import ResourceHandler
    from workflows.stack.resources.images import WebImageHandler
    from workflows.stack.resources.keypair import KeypairHandler
    from workflows.stack.resources.nested_stack import NestedStackHandler
    from workflows.stack.resources.neutron import (
        ExtraRouteSetHandler,
        FloatingIPAssociationHandler,
        RouterInterfaceHandler,
        SecurityGroupHandler,
        TrunkHandler,
    )
    from workflows.stack.resources.random_string import RandomStringHandler
    from workflows.stack.resources.resource_group import ResourceGroupHandler
    from workflows.stack.resources.scaling_group import ScalingGroupHandler
    from workflows.stack.resources.scaling_policy import ScalingPolicyHandler
    from workflows.stack.resources.server import ServerHandler
    from workflows.stack.resources.software_config import SoftwareConfigHandler
    from workflows.stack.resources.software_deployment import (
        SoftwareDeploymentGroupHandler,
        SoftwareDeploymentHandler,
    )
    from workflows.stack.resources.test_resource import TestResourceHandler
    from workflows.stack.resources.value import ValueHandler
    from workflows.stack.resources.volumes import VolumeAttachmentHandler, VolumeHandler
    from workflows.stack.resources.wait_condition import (
        WaitConditionHandleHandler,
        WaitConditionHandler,
    )

HANDLERS: Final[dict[str, ResourceHandler]] = {
    random_string.NAME: RandomStringHandler(),
    test_resource.NAME: TestResourceHandler(),
    server.NAME: ServerHandler(),
    nested_stack.NAME: NestedStackHandler(),
    scaling_group.NAME: ScalingGroupHandler(),
    scaling_policy.NAME: ScalingPolicyHandler(),
    resource_group.NAME: ResourceGroupHandler(),
    keypair.NAME: KeypairHandler(),
    server_group.NAME: ApiObjectHandler(server_group.API),
    net.NAME: ApiObjectHandler(net.API),
    subnet.NAME: ApiObjectHandler(subnet.API),
    port.NAME: ApiObjectHandler(port.API),
    security_group.NAME: SecurityGroupHandler(),
    security_group.RULE_NAME: ApiObjectHandler(security_group.RULE_API),
    floating_ip.NAME: ApiObjectHandler(floating_ip.API),
    floating_ip.ASSOCIATION_NAME: FloatingIPAssociationHandler(),
    router.NAME: ApiObjectHandler(router.API),
    router.INTERFACE_NAME: RouterInterfaceHandler(),
    trunk.NAME: TrunkHandler(),
    extra_route_set.NAME: ExtraRouteSetHandler(),
    volume.NAME: VolumeHandler(),
    volume.ATTACHMENT_NAME: VolumeAttachmentHandler(),
    web_image.NAME: WebImageHandler(),
    **{api.rtype.name: ApiObjectHandler(api) for api in octavia.ALL},
    **{name: SoftwareConfigHandler(name) for name in software_config.CONFIG_TYPES},
    software_deployment.DEPLOYMENT: SoftwareDeploymentHandler(structured=False),
    software_deployment.STRUCTURED_DEPLOYMENT: SoftwareDeploymentHandler(structured=True),
    **{t: SoftwareDeploymentGroupHandler(t) for t in software_deployment.GROUP_TYPES},
    value.NAME: ValueHandler(),
    wait_condition.HANDLE: WaitConditionHandleHandler(),
    wait_condition.CONDITION: WaitConditionHandler(),
}
_NO_PHYSICAL_SIDE: Final = ResourceHandler()


def handler_for(rtype: str) -> ResourceHandler:
    """The handler of resource type `rtype`."""
    return HANDLERS.get(rtype, _NO_PHYSICAL_SIDE)


async def act_on_resource(
    ctx: NestedContext, current: ResourceState, action: StackAction, lock: StackLock | None
) -> None:
    """check / suspend / resume / lock / unlock one resource (raises ResourceFailed)."""
    handler = handler_for(current.type)
    if action == StackAction.CHECK:
        await handler.check(ctx, current)
    elif action == StackAction.SUSPEND:
        await handler.suspend(ctx, current)
    elif action == StackAction.RESUME:
        await handler.resume(ctx, current)
    elif action == StackAction.LOCK:
        await handler.lock(ctx, current, lock)
    elif action == StackAction.UNLOCK:
        await handler.unlock(ctx, current)
