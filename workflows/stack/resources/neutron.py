"""Neutron types with more than one call: a security group's rules, a router's
interfaces, a floating IP's association, a trunk's sub-ports, a router's extra routes."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from domain.cloud_objects import CloudAction, CloudCreate, CloudObject, CloudRef, CloudUpdate
    from domain.errors import InvalidRequest
    from domain.stack.state import ResourceState
    from domain.stack.types.api_object import Request
    from domain.stack.types.neutron import (
        extra_route_set,
        floating_ip,
        router,
        security_group,
        trunk,
    )
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.api_object import ApiObjectHandler
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
    )


class SecurityGroupHandler(ApiObjectHandler):
    """A group, then its rules; the first egress rule removes the default egress rules."""

    def __init__(self) -> None:
        super().__init__(security_group.API)

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create the group and its rules."""
        applied = await super().create(ctx, name, props, resource_id)
        group_id = str(applied.physical_id)
        try:
            await self._set_rules(group_id, list(props.get("rules") or []), resource_id)
        except ResourceFailed as err:
            raise ResourceFailed(err.reason, group_id) from err
        return applied

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Name and description in place; rules reconciled as Heat does: stale ones
        deleted, missing ones made, the default egress rules kept without an egress rule."""
        applied = await super().update(ctx, current, props)
        rules = list(props.get("rules") or [])
        if current.physical_id and rules != list(current.resolved.get("rules") or []):
            group = await self._show(current.physical_id)
            stale, missing = security_group.reconcile(rules, current.physical_id, group)
            for rule_id in stale:
                ref = CloudRef(kind="security_group_rule", id=rule_id)
                await call_activity(CloudObjectActivities.delete_cloud_object, ref)
            # A new request id per update: a rule deleted before may be wanted again.
            await self._create(missing, f"{current.resource_id}-{workflow.uuid4()}")
        return applied

    async def _show(self, group_id: str) -> list[dict[str, Any]]:
        ref = CloudRef(kind="security_group", id=group_id)
        shown: CloudObject | None = await call_activity(
            CloudObjectActivities.show_cloud_object, ref
        )
        return list((shown.body if shown else {}).get("security_group_rules") or [])

    async def _set_rules(self, group_id: str, rules: list[dict[str, Any]], request_id: str) -> None:
        """A new group's rules; the first egress rule removes the default egress rules."""
        if not rules:
            return
        if security_group.has_egress(rules):
            for rule in await self._show(group_id):
                if rule.get("direction") == "egress":
                    ref = CloudRef(kind="security_group_rule", id=str(rule["id"]))
                    await call_activity(CloudObjectActivities.delete_cloud_object, ref)
        await self._create(
            [security_group.rule_request(rule, group_id) for rule in rules], request_id
        )

    async def _create(self, requests: list[Request], request_id: str) -> None:
        for i, request in enumerate(requests):
            create = CloudCreate(
                kind="security_group_rule",
                body=request.body,
                lookups=request.lookups,
                request_id=f"{request_id}-rule-{i}",
            )
            await call_activity(CloudObjectActivities.create_cloud_object, create)


class RouterInterfaceHandler(ResourceHandler):
    """`add_router_interface` on create, `remove_router_interface` on delete."""

    pure = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Attach the subnet or port to the router (both may be given by name)."""
        try:
            request = router.interface_request(props)
        except InvalidRequest as err:
            raise ResourceFailed(err.message) from err
        action = CloudAction(
            ref=CloudRef(kind="router", id=str(props["router"])),
            suffix="/add_router_interface",
            body=request.body,
            lookups=request.lookups,
            find_target=True,
        )
        done: dict[str, Any] = await call_activity(
            CloudObjectActivities.act_on_cloud_object, action
        )
        answer = done.get("answer") or {}
        key = "subnet_id" if "subnet_id" in request.body else "port_id"
        rid = router.interface_id(str(done["target"]), {key: answer.get(key)})
        return Applied(physical_id=rid, reference=rid, attributes={"show": answer})

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Detach; a router or interface that is gone counts as detached."""
        if not physical_id or ":" not in physical_id:
            return
        router_id, body = router.parse_interface_id(physical_id)
        action = CloudAction(
            ref=CloudRef(kind="router", id=router_id),
            suffix="/remove_router_interface",
            body=body,
            tolerate=(404,),
        )
        await call_activity(CloudObjectActivities.act_on_cloud_object, action)


class FloatingIPAssociationHandler(ResourceHandler):
    """Associate a floating IP with a port; delete disassociates."""

    pure = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Set the floating IP's port."""
        request = floating_ip.association_request(props)
        update = CloudUpdate(
            ref=CloudRef(kind="floating_ip", id=str(props["floatingip_id"])),
            changes=request.body,
            lookups=request.lookups,
        )
        updated: CloudObject = await call_activity(
            CloudObjectActivities.update_cloud_object, update
        )
        rid = floating_ip.association_id(updated.id, str(updated.body.get("port_id")))
        return Applied(physical_id=rid, reference=rid, attributes={"show": updated.body})

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Move the association: off the old floating IP, onto the new one."""
        if current.physical_id and current.resolved.get("floatingip_id") != props.get(
            "floatingip_id"
        ):
            await self.delete(ctx, current.physical_id, current.resolved)
        return await self.create(ctx, current.name, props, current.resource_id)

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Clear the floating IP's port (one that is gone counts as cleared)."""
        if not physical_id or ":" not in physical_id:
            return
        fip_id = physical_id.split(":", 1)[0]
        shown: CloudObject | None = await call_activity(
            CloudObjectActivities.show_cloud_object, CloudRef(kind="floating_ip", id=fip_id)
        )
        if shown is None or not shown.body.get("port_id"):
            return
        update = CloudUpdate(ref=shown.ref(), changes={"port_id": None})
        await call_activity(CloudObjectActivities.update_cloud_object, update)


class TrunkHandler(ApiObjectHandler):
    """A trunk: name, description and state in place, sub-ports reconciled (Heat's
    order: the ones no longer listed removed first, then the new ones added)."""

    def __init__(self) -> None:
        super().__init__(trunk.API)

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """The trunk's fields, then its sub-ports; the trunk as Neutron shows it then."""
        applied = await super().update(ctx, current, props)
        gone, new = trunk.sub_port_changes(
            current.resolved.get("sub_ports"), props.get("sub_ports")
        )
        if not current.physical_id or not (gone or new):
            return applied
        ref = CloudRef(kind="trunk", id=current.physical_id)
        for suffix, entries, removal in (
            ("/remove_subports", gone, True),
            ("/add_subports", new, False),
        ):
            if entries:
                request = trunk.sub_ports_request(entries, removal=removal)
                action = CloudAction(
                    ref=ref, suffix=suffix, body=request.body, lookups=request.lookups
                )
                await call_activity(CloudObjectActivities.act_on_cloud_object, action)
        shown: CloudObject | None = await call_activity(
            CloudObjectActivities.show_cloud_object, ref
        )
        if shown is None:
            raise ResourceFailed(f"trunk {current.physical_id} no longer exists")
        return self.applied(shown)


class ExtraRouteSetHandler(ResourceHandler):
    """A router's extra routes, added and removed atomically (Heat's `ExtraRouteSet`)."""

    pure = False

    async def _router(self, ref: str) -> CloudObject:
        found: CloudObject | None = await call_activity(
            CloudObjectActivities.find_cloud_object, CloudRef(kind="router", id=ref)
        )
        if found is None:
            raise ResourceFailed(f"Unable to find router with name or id '{ref}'")
        return found

    async def _change(self, router_id: str, suffix: str, routes: list[Any]) -> None:
        action = CloudAction(
            ref=CloudRef(kind="router", id=router_id),
            suffix=suffix,
            body={"router": {"routes": routes}},
            tolerate=(404,) if suffix == "/remove_extraroutes" else (),
        )
        await call_activity(CloudObjectActivities.act_on_cloud_object, action)

    async def _add(self, found: CloudObject, routes: list[Any]) -> None:
        """Refuse a route the router has already (Heat's check), then add them."""
        try:
            extra_route_set.ensure_not_there(found.id, found.body.get("routes") or [], routes)
        except InvalidRequest as err:
            raise ResourceFailed(err.message) from err
        if routes:
            await self._change(found.id, "/add_extraroutes", routes)

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Add the routes; the set's id is the router's."""
        found = await self._router(str(props["router"]))
        await self._add(found, extra_route_set.routes_of(props))
        return Applied(physical_id=found.id, reference=found.id, attributes={"show": {}})

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Remove the routes no longer listed, then add the new ones."""
        gone, new = extra_route_set.route_changes(
            extra_route_set.routes_of(current.resolved), extra_route_set.routes_of(props)
        )
        found = await self._router(str(current.physical_id or props["router"]))
        if gone:
            await self._change(found.id, "/remove_extraroutes", list(gone))
        await self._add(found, list(new))
        return Applied(physical_id=found.id, reference=found.id, attributes={"show": {}})

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Remove the set's routes (a router that is gone took them with it)."""
        routes = extra_route_set.routes_of(props)
        if physical_id and routes:
            await self._change(physical_id, "/remove_extraroutes", routes)
