"""Heat's resource breakpoint hooks: `resource_registry.resources.<name>.hooks`.

An environment may stop a stack operation just before (or after) a resource is
created, updated or deleted:

    resource_registry:
      resources:
        web_*:                      # a resource name, or a glob of them
          hooks: [pre-create, pre-update]
        nested:                     # a nested stack's resources, by its resource name
          db: {hooks: pre-delete}

The operation pauses there, durably, until `POST …/resources/<name>/signal` with
`{"unset_hook": "pre-create"}` clears the hook (heatclient: `openstack stack hook
clear`). `Breakpoints` is that section, checked and kept with the stack; the workflow
asks it which hooks a resource has and what a nested stack inherits.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Final

from domain.errors import InvalidRequest

__all__ = [
    "HOOK_TYPES",
    "check_unset_hook",
    "hooks_of",
    "nested_breakpoints",
    "parse_breakpoints",
]

HOOK_TYPES: Final = (
    "pre-create",
    "pre-update",
    "pre-delete",
    "post-create",
    "post-update",
    "post-delete",
)
#: What a breakpoint tree holds, as the environment wrote it (checked): a resource name
#: or glob → `{"hooks": [...]}` and/or the resources of the nested stack it makes.
Breakpoints = dict[str, Any]


_SECTION: Final = "environment.resource_registry.resources"


def parse_breakpoints(value: Any, path: str = _SECTION) -> Breakpoints:
    """The `resources` section of a registry, checked (Heat's words for a bad hook)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"{path}: must be a mapping of resource names")
    tree: Breakpoints = {}
    for name, entry in value.items():
        where = f"{path}.{name}"
        if not isinstance(entry, dict):
            raise InvalidRequest(
                f"{where}: must be a mapping (hooks, or a nested stack's resources)"
            )
        parsed: dict[str, Any] = {}
        for key, item in entry.items():
            if key == "hooks":
                parsed["hooks"] = _hooks(item)
            elif isinstance(item, dict):
                parsed.setdefault("resources", {}).update(parse_breakpoints({key: item}, where))
            else:
                raise InvalidRequest(
                    f"{where}.{key}: per-resource type overrides are not supported by Warden"
                )
        tree[str(name)] = parsed
    return tree


def _hooks(value: Any) -> list[str]:
    hooks = [value] if isinstance(value, str) else value
    if not isinstance(hooks, list) or not all(h in HOOK_TYPES for h in hooks):
        raise InvalidRequest(
            f'Invalid hook type "{value}" for resource breakpoint, acceptable hook types '
            f"are: {HOOK_TYPES}"
        )
    return list(dict.fromkeys(hooks))


def hooks_of(tree: Breakpoints, resource: str) -> set[str]:
    """The hooks set on `resource` by every entry whose name or glob matches it."""
    found: set[str] = set()
    for pattern, entry in tree.items():
        if fnmatchcase(resource, pattern):
            hooks = entry.get("hooks") or ()
            found.update([hooks] if isinstance(hooks, str) else hooks)
    return found


def nested_breakpoints(tree: Breakpoints, resource: str) -> Breakpoints:
    """What the nested stack that `resource` makes inherits (Heat: its exact name)."""
    entry = tree.get(resource) or {}
    nested: Breakpoints = entry.get("resources") or {}
    return nested


def check_unset_hook(tree: Breakpoints, resource: str, hook: Any) -> str:
    """A `{"unset_hook": hook}` signal's hook, if `resource` has it (400 otherwise)."""
    if not isinstance(hook, str) or hook not in HOOK_TYPES:
        raise InvalidRequest(f'Invalid hook type "{hook}" for {resource}')
    if hook not in hooks_of(tree, resource):
        raise InvalidRequest(f'The "{hook}" hook is not defined on {resource}')
    return hook
