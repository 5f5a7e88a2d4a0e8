"""`OS::Heat::Stack`: a nested stack from an inline template (its own stack workflow), or,
with a `context`, a remote stack made through the orchestration API of the context's
region (Heat's `RemoteStack`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.hot.properties import ResourceType, prop

NAME: Final = "OS::Heat::Stack"
#: The property whose presence makes the stack remote.
CONTEXT: Final = "context"


def nested_stack_name(parent: str, resource: str, resource_id: str) -> str:
    """Heat-like name of a nested stack: `<parent>-<resource>-<short id>` (its id is the
    resource's id)."""
    return f"{parent}-{resource}-{resource_id.replace('-', '')[:8]}"


def is_remote(props: Mapping[str, Any]) -> bool:
    """Whether the stack is made through an orchestration API, not as a nested stack."""
    return props.get(CONTEXT) is not None


def remote_region(props: Mapping[str, Any]) -> str | None:
    """The region whose Heat has the remote stack (None: Warden's own region)."""
    context = props.get(CONTEXT) or {}
    region = context.get("region_name") if isinstance(context, Mapping) else None
    return str(region) if region else None


def remote_fields(props: Mapping[str, Any]) -> dict[str, Any]:
    """Heat's create or update body for the remote stack, beside `stack_name`
    (`RemoteStack.handle_create`: rollback disabled)."""
    fields: dict[str, Any] = {
        "template": props.get("template"),
        "parameters": dict(props.get("parameters") or {}),
        "files": {},
        "environment": {},
        "disable_rollback": True,
    }
    if props.get("timeout"):
        fields["timeout_mins"] = props["timeout"]
    return fields


def same_place(before: Any, after: Any) -> bool:
    """Whether a change of `context` keeps the stack where it is (Heat replaces a remote
    stack whose `region_name` changes; Warden also one that turns remote or nested)."""
    if (before is None) != (after is None):
        return False
    return remote_region({CONTEXT: before}) == remote_region({CONTEXT: after})


TYPE: Final = ResourceType(
    name=NAME,
    properties={
        CONTEXT: prop(
            "map",
            update_allowed=True,
            nested={
                "region_name": prop("string"),
                "credential_secret_id": prop("string", update_allowed=True),
                "ca_cert": prop("string", update_allowed=True),
                "insecure": prop("boolean", default=False, update_allowed=True),
            },
        ),
        "template": prop("any", required=True, update_allowed=True),
        "parameters": prop("map", update_allowed=True),
        "timeout": prop("integer", minimum=1, maximum=10_080, update_allowed=True),
    },
    attributes=frozenset({"outputs", "stack_name"}),
    nested_properties=frozenset({"template"}),
    nested_holds="template",
    in_place_between={CONTEXT: same_place},
    remote_when=CONTEXT,
)
