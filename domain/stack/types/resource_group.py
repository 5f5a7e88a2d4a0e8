"""`OS::Heat::ResourceGroup`: `count` members "0", "1", … of one definition, a nested stack.

`resource_def` is resolved in the parent (its `get_param`s read the parent's
parameters); the member named `n` gets it with `index_var` replaced by `n`. Names in
`removal_policies` are removed first and never reused: the group keeps them in its
`removed_rsrc_list` attribute (Heat's name blacklist).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.hot.properties import SIZE_BOUNDS, ResourceType, prop

NAME: Final = "OS::Heat::ResourceGroup"
#: The attribute holding the names never reused.
REMOVED: Final = "removed_rsrc_list"

_DOC: Final = {
    "count": "The number of resources to create.",
    "index_var": "A variable that this resource will use to replace with the current "
    "index of a given resource in the group.",
    "resource_def": "Resource definition for the resources in the group.",
    "removal_policies": "Policies for removal of resources on update.",
    "removal_policies_mode": "How to handle changes to removal_policies on update. The "
    'default "append" mode appends to the internal list, "update" replaces it on update.',
}


def _check_removal_policies(value: Any, field: str) -> None:
    for i, policy in enumerate(value or []):
        if not isinstance(policy, dict) or set(policy) - {"resource_list"}:
            raise InvalidRequest(f"{field}[{i}]: must be a mapping of resource_list")
        if not isinstance(policy.get("resource_list", []), list):
            raise InvalidRequest(f"{field}[{i}].resource_list: must be a list")


def _check_group(props: Mapping[str, Any], field: str) -> None:
    if "removal_policies" in props:
        _check_removal_policies(props["removal_policies"], f"{field}.removal_policies")
    if len(str(props.get("index_var", "%index%"))) < 3:
        raise InvalidRequest(f"{field}.index_var: must be at least 3 characters long")


TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "count": prop("integer", default=1, description=_DOC["count"], **SIZE_BOUNDS),
        "index_var": prop("string", default="%index%", description=_DOC["index_var"]),
        "resource_def": prop(
            "map", required=True, update_allowed=True, description=_DOC["resource_def"]
        ),
        "removal_policies": prop(
            "list", default=[], update_allowed=True, description=_DOC["removal_policies"]
        ),
        "removal_policies_mode": prop(
            "string",
            default="append",
            allowed_values=("append", "update"),
            update_allowed=True,
            description=_DOC["removal_policies_mode"],
        ),
    },
    attributes=frozenset({"refs", "refs_map", "attributes", REMOVED}),
    member_attributes={"attributes": "map"},
    member_by_name=True,
    member_lists_any=True,
    member_definition="resource_def",
    check=_check_group,
    description="Creates one or more identically configured nested resources.",
)


def removal_names(
    props: Mapping[str, Any], skipped: Sequence[str], refs_map: Mapping[str, str | None] | None
) -> list[str]:
    """The names never to use again after this create (`refs_map` None) or update.

    A `resource_list` entry is a member name or a member's reference (`get_resource`);
    at create every entry counts as a name. Mode "update" starts the list afresh.
    """
    base = set() if props.get("removal_policies_mode") == "update" else set(skipped)
    return sorted(base | set(_listed(props, set(skipped), refs_map)))


def _listed(
    props: Mapping[str, Any], skipped: set[str], refs_map: Mapping[str, str | None] | None
) -> Iterator[str]:
    for policy in props.get("removal_policies") or []:
        for entry in policy.get("resource_list") or []:
            text = str(entry)
            if refs_map is None or text in skipped or text in refs_map:
                yield text
                continue
            yield from (name for name, ref in refs_map.items() if ref == text)
