"""Stack update planning with Heat's rules, decided before any resource is touched.

`plan_update()` compares the stack as it is (the old template, its parameters and the
current state of each resource) with the new template and says, per resource, whether
it is created, updated in place, replaced, deleted or kept. Failed resources, including
those marked unhealthy (`CHECK_FAILED`), are replaced: that is what makes Heat's
mark-unhealthy followed by an update heal a stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from domain.hot.properties import Patched
from domain.hot.template import (
    ResourceDef,
    Template,
    property_references,
    static_properties,
    static_value,
    topological_order,
)
from domain.stack.resource_types import resource_type

#: Actions whose IN_PROGRESS or FAILED state means the physical resource never existed.
_UNCREATED_ACTIONS = frozenset({"INIT", "CREATE"})


class ChangeKind(StrEnum):
    """What an update does to one resource."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"
    REPLACE = "REPLACE"
    DELETE = "DELETE"
    KEEP = "KEEP"


class ResourceChange(BaseModel):
    """The change planned for one resource and why."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ChangeKind
    reason: str


class CurrentResource(BaseModel):
    """A resource of the stack as it is now."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str
    #: CREATE, UPDATE, CHECK, INIT...
    action: str
    #: COMPLETE, FAILED or IN_PROGRESS.
    status: str
    physical_id: str | None = None
    #: The static properties last applied to it, when known (they override the old
    #: template's, which a failed update may not have reached).
    applied: dict[str, Any] | None = None


class UpdatePlan(BaseModel):
    """Every resource's change: those of the new template in creation order, then the
    deleted ones in deletion order."""

    model_config = ConfigDict(frozen=True)

    changes: dict[str, ResourceChange]

    def of(self, kind: ChangeKind) -> list[str]:
        """Names of the resources with this kind of change, in plan order."""
        return [name for name, change in self.changes.items() if change.kind == kind]


def deletion_order(
    graph: Template | Mapping[str, Iterable[str]], patched: Patched | None = None
) -> list[str]:
    """Resources in an order that deletes each one before anything it requires.

    Args:
        graph: a template, or its `dependencies()` (resource → what it requires).
        patched: `workflow.patched`, when a workflow asks (`Template.graph_for`).
    """
    dependencies = graph.dependencies(patched) if isinstance(graph, Template) else graph
    return list(reversed(topological_order(dependencies)))


def plan_update(
    old: Template,
    old_params: Mapping[str, Any],
    current: Mapping[str, CurrentResource],
    new: Template,
    new_params: Mapping[str, Any],
    patched: Patched | None = None,
) -> UpdatePlan:
    """What updating the stack from `old` to `new` does to each resource.

    Args:
        old: the template the stack was last created or updated with.
        old_params: that template's resolved parameters (`resolve_parameters()`).
        current: the stack's resources now, by name.
        new: the new template, already loaded.
        new_params: its resolved parameters.
        patched: `workflow.patched`, for the properties updated in place since a patch
            (`ResourceType.in_place_since`).
    """
    changes: dict[str, ResourceChange] = {}
    for name in new.creation_order(patched):
        definition = new.resources[name]
        change = _own_change(old, old_params, current.get(name), definition, new_params, patched)
        changes[name] = _propagate(change, definition, new_params, changes, patched)
    gone = [name for name in current if name not in new.resources]
    old_order = [name for name in deletion_order(old, patched) if name in gone]
    for name in old_order + sorted(set(gone) - set(old_order)):
        changes[name] = ResourceChange(name=name, kind=ChangeKind.DELETE, reason="not in template")
    return UpdatePlan(changes=changes)


def _change(name: str, kind: ChangeKind, reason: str) -> ResourceChange:
    return ResourceChange(name=name, kind=kind, reason=reason)


def _own_change(
    old: Template,
    old_params: Mapping[str, Any],
    now: CurrentResource | None,
    new: ResourceDef,
    new_params: Mapping[str, Any],
    patched: Patched | None = None,
) -> ResourceChange:
    """The change a resource needs for its own sake, before looking at what it requires."""
    name = new.name
    if now is None:
        return _change(name, ChangeKind.CREATE, "new resource")
    if now.action == "INIT" or (
        now.physical_id is None
        and now.action in _UNCREATED_ACTIONS
        and now.status in ("FAILED", "IN_PROGRESS")
    ):
        return _change(name, ChangeKind.REPLACE, "not created")
    if now.type != new.type:
        return _change(name, ChangeKind.REPLACE, f"type changed from {now.type} to {new.type}")
    if now.status != "COMPLETE" or now.action == "DELETE":
        # FAILED, CHECK_FAILED (mark-unhealthy), operations interrupted midway, and
        # physical resources deleted already.
        return _change(name, ChangeKind.REPLACE, f"resource is {now.action}_{now.status}")
    previous = old.resources.get(name)
    if now.applied is not None:
        # What was really applied last wins over the previous template: after a
        # failed or cancelled update, resources it never reached still hold the
        # older properties (and ones it created are not in the older template).
        before = now.applied
    elif previous is None or previous.type != new.type:
        return _change(name, ChangeKind.REPLACE, "not in the previous template")
    else:
        before = static_properties(previous, old_params)
    after = static_properties(new, new_params)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    rtype = resource_type(new.type)
    if changed:
        fixed = [k for k in changed if not rtype.updatable_with(k, after, patched, before)]
        if fixed:
            return _change(name, ChangeKind.REPLACE, f"{', '.join(fixed)} changed")
        return _change(name, ChangeKind.UPDATE, f"{', '.join(changed)} changed")
    if previous is not None and static_value(previous.metadata, old_params) != static_value(
        new.metadata, new_params
    ):
        return _change(name, ChangeKind.UPDATE, "metadata changed")
    return _change(name, ChangeKind.KEEP, "unchanged")


def _propagate(
    change: ResourceChange,
    definition: ResourceDef,
    params: Mapping[str, Any],
    planned: Mapping[str, ResourceChange],
    patched: Patched | None = None,
) -> ResourceChange:
    """A resource that reads a replaced or created one must take its new id or attributes.

    `planned` holds the changes of everything it requires (creation order), so chains
    of replacements propagate in one pass.
    """
    if change.kind not in (ChangeKind.KEEP, ChangeKind.UPDATE):
        return change
    rtype = resource_type(definition.type)
    props = static_properties(definition, params)
    for prop, targets in sorted(property_references(definition).items()):
        for target in sorted(targets):
            upstream = planned.get(target)
            if upstream is None or upstream.kind not in (ChangeKind.REPLACE, ChangeKind.CREATE):
                continue
            verb = "replaced" if upstream.kind == ChangeKind.REPLACE else "created"
            reason = f"depends on {verb} {target}"
            if prop != "metadata" and not rtype.updatable_with(prop, props, patched):
                return _change(definition.name, ChangeKind.REPLACE, f"{reason} ({prop})")
            if change.kind == ChangeKind.KEEP:
                change = _change(definition.name, ChangeKind.UPDATE, reason)
    return change
