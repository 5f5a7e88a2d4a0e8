"""`POST …/stacks/preview`: the stack a create would make, as Heat's `preview_stack`
shows it, nothing made.

Each resource with its properties as they would be created (parameters applied, the
type's defaults filled in; what needs another resource left as written), its
attributes (not known yet: null), `required_by`, and Heat's identities with the stack
id `"None"`. A nested stack (a template resource, an `OS::Heat::Stack`) is the list of
its own resources, previewed as the stack `<stack>-<resource>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.hot.functions import intrinsic, static_properties
from domain.hot.template import conditioned, load_template, resolve_parameters
from domain.stack.groups import indexed_template
from domain.stack.resource_types import RESOURCE_GROUP, STACK, resource_type

#: The stack id a preview shows (Heat's `str(None)`).
NO_ID: Final = "None"
#: How deep nested stacks are previewed (Heat's `max_nested_stack_depth`).
MAX_DEPTH: Final = 5


def _identity(project_id: str, stack_name: str, path: str) -> dict[str, str]:
    return {"stack_name": stack_name, "stack_id": NO_ID, "tenant": project_id, "path": path}


def pseudo(project_id: str, stack_name: str) -> dict[str, Any]:
    """The pseudo parameters of a stack not made yet."""
    return {"OS::stack_name": stack_name, "OS::stack_id": NO_ID, "OS::project_id": project_id}


def _members(props: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ResourceGroup's nested template, as Heat previews the group: its `count`
    members, what they read of other resources left empty (nothing exists yet)."""
    count, member = props.get("count"), props.get("resource_def")
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(member, Mapping):
        return None
    names = [str(i) for i in range(count)]
    index_var = str(props.get("index_var") or "%index%")
    try:
        inner = resource_type(str(member.get("type"))).nested_properties
    except InvalidRequest:
        return None
    given = member.get("properties") or {}
    # An inline template's own reads are its own: only the member's other values go.
    unread = {k: v if k in inner else _unread(v) for k, v in given.items()}
    return indexed_template({**member, "properties": unread}, names, index_var)


def _unread(value: Any) -> Any:
    """`value` with every read of another resource (`get_resource`, `get_attr`) as ""."""
    call = intrinsic(value)
    if call is not None and call[0] in ("get_resource", "get_attr"):
        return ""
    if isinstance(value, Mapping):
        return {k: _unread(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unread(v) for v in value]
    return value


def preview_resources(
    template: Mapping[str, Any],
    given: Mapping[str, Any],
    *,
    project_id: str,
    stack_name: str,
    parent_resource: str | None = None,
    depth: int = 0,
) -> list[Any]:
    """The resources of a stack made from `template` with the parameter values `given`;
    a nested stack's entry is the list of its resources."""
    loaded = load_template(dict(template))
    params = resolve_parameters(loaded, dict(given), pseudo=pseudo(project_id, stack_name))
    loaded = conditioned(loaded, params)
    required_by = loaded.required_by()
    previewed: list[Any] = []
    for res in loaded.resources.values():
        props = static_properties(res, params)
        inline = isinstance(props.get("template"), Mapping)
        local = inline and resource_type(res.type).holds_local_template(props)
        if res.type == STACK and local and depth < MAX_DEPTH:
            inner = dict(props.get("parameters") or {})
            previewed.append(
                preview_resources(
                    props["template"],
                    {k: v for k, v in inner.items() if not isinstance(v, Mapping)},
                    project_id=project_id,
                    stack_name=f"{stack_name}-{res.name}",
                    parent_resource=res.name,
                    depth=depth + 1,
                )
            )
            continue
        members = _members(props) if res.type == RESOURCE_GROUP and depth < MAX_DEPTH else None
        if members is not None:
            try:
                previewed.append(
                    preview_resources(
                        members,
                        {},
                        project_id=project_id,
                        stack_name=f"{stack_name}-{res.name}",
                        parent_resource=res.name,
                        depth=depth + 1,
                    )
                )
                continue
            except InvalidRequest:
                pass  # a member that needs what only a create knows: shown as the group
        rtype = resource_type(res.type)
        previewed.append(
            {
                "resource_name": res.name,
                "logical_resource_id": res.name,
                "resource_type": res.type,
                "resource_action": "INIT",
                "resource_status": "COMPLETE",
                "resource_status_reason": "",
                "physical_resource_id": "",
                "description": "",
                "required_by": list(required_by[res.name]),
                "properties": props,
                "attributes": dict.fromkeys(sorted(rtype.attributes - rtype.hidden)),
                "creation_time": None,
                "updated_time": None,
                "stack_name": stack_name,
                "parent_resource": parent_resource,
                "resource_identity": _identity(project_id, stack_name, f"/resources/{res.name}"),
                "stack_identity": _identity(project_id, stack_name, ""),
            }
        )
    return previewed
