"""The `os.heat.stack` profile (Senlin's `senlin/profiles/os/heat/stack.py`): a node is a
Heat stack, made from the profile's template through the cloud's orchestration API.

The properties are Senlin's, with its defaults and words. Warden's own Heat API answers
the calls when its URL is in the catalog (`warden dev` puts it there), so a cluster of
stacks needs no other service; a real Heat does as well.

Only pure rules live here: the spec, the stack's name and the verdict on a stack's
health. The calls are `activities/stack_nodes.py`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue, model_validator

STACK_PROFILE_TYPE: Final = "os.heat.stack"
#: Senlin's `StackProfile.VERSIONS`, with the release it came in.
STACK_VERSIONS: Final = {"1.0": "2016.04"}
#: Heat's stack names: a letter first, then letters, digits, `_`, `-` and `.`.
_NOT_IN_A_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]")
STACK_NAME_MAX: Final = 255


def _not_a_flag(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"The value '{value}' is not a valid Integer")  # noqa: TRY004 - pydantic reports ValueError only
    return value


Whole = Annotated[int, BeforeValidator(_not_a_flag)]


class StackProperties(BaseModel):
    """Properties of an `os.heat.stack` profile: Senlin's whole set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="A dictionary for specifying the customized context for stack "
        "operations. Warden acts with its own credentials.",
    )
    template: dict[str, JsonValue] = Field(default_factory=dict, description="Heat stack template.")
    template_url: str = Field(
        "",
        max_length=2048,
        description="Heat stack template url. Warden fetches nothing: give `template`.",
    )
    parameters: dict[str, JsonValue] = Field(
        default_factory=dict, description="Parameters to be passed to Heat for stack operations."
    )
    files: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Contents of files referenced by the template, if any.",
    )
    timeout: Whole | None = Field(
        None,
        ge=1,
        le=10_080,
        description="A integer that specifies the number of minutes that a stack operation "
        "times out.",
    )
    disable_rollback: bool = Field(
        True, description="A boolean specifying whether a stack operation can be rolled back."
    )
    environment: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="A map that specifies the environment used for stack operations.",
    )

    @model_validator(mode="after")
    def _has_a_template(self) -> StackProperties:
        if self.template_url and not self.template:
            raise ValueError(
                "template_url is not supported: Warden fetches no URL, give the template "
                "itself in 'template'"
            )
        return self


class StackProfileSpec(BaseModel):
    """An `os.heat.stack` profile spec as users write it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["os.heat.stack"]
    version: Literal["1.0"]
    properties: StackProperties

    @model_validator(mode="before")
    @classmethod
    def _version_as_text(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(data.get("version"), int | float):
            return {**data, "version": str(data["version"])}
        return data

    def to_json(self) -> dict[str, Any]:
        """The spec as stored and sent to workflows: what the user wrote."""
        return self.model_dump(mode="json", exclude_unset=True)


def no_template_message(profile_name: str) -> str:
    """Senlin's `InvalidSpec` for a stack profile with neither template nor URL."""
    return f"Both template and template_url are not specified for profile '{profile_name}'."


def is_stack_profile(profile: Mapping[str, Any]) -> bool:
    """Whether a stored profile spec makes its nodes Heat stacks."""
    return profile.get("type") == STACK_PROFILE_TYPE


def stack_name(node_name: str, request_id: str) -> str:
    """The stack a node's create makes: the node's name and 8 characters of the request
    (Senlin adds 8 random ones), in the characters Heat allows in a name.

    The same request names the same stack, so a retried create finds the one it made.
    """
    base = _NOT_IN_A_NAME.sub("-", node_name) or "node"
    if not base[0].isalpha():
        base = f"n{base}"
    suffix = re.sub(r"[^A-Za-z0-9]", "", request_id)[-8:] or "0"
    return f"{base[: STACK_NAME_MAX - len(suffix) - 1]}-{suffix}"


class StackHealth(StrEnum):
    """What a stack's state says of its node."""

    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"
    #: An operation is running on the stack: ask again later.
    BUSY = "BUSY"


class StackVerdict(BaseModel):
    """A node's stack judged: health, a reason in words, the status it was read at."""

    model_config = ConfigDict(frozen=True)

    health: StackHealth
    reason: str
    status: str


def judge_stack(
    stack_id: str,
    status: str | None,
    status_reason: str = "",
    failed_resources: Sequence[tuple[str, str, str]] = (),
) -> StackVerdict:
    """Judge a node's stack from its status and its resources in a FAILED state.

    Args:
        stack_id: the node's physical id.
        status: the stack's `stack_status`, None when the stack is gone.
        status_reason: its `stack_status_reason`.
        failed_resources: `(name, resource_status, reason)` of each resource whose status
            ends in `_FAILED`, CHECK_FAILED (marked unhealthy) included.

    A stack someone marked a resource of unhealthy is unhealthy, whatever its own status
    says: Heat leaves the stack COMPLETE, and only an update replaces the resource.
    """
    if status is None:
        return StackVerdict(
            health=StackHealth.UNHEALTHY, reason=f"Stack {stack_id} not found", status="DELETED"
        )
    if status.endswith("_IN_PROGRESS"):
        return StackVerdict(
            health=StackHealth.BUSY, reason=f"Stack status is {status}", status=status
        )
    if status.endswith("_FAILED"):
        why = f": {status_reason}" if status_reason else ""
        return StackVerdict(
            health=StackHealth.UNHEALTHY, reason=f"Stack status is {status}{why}", status=status
        )
    if failed_resources:
        name, resource_status, reason = failed_resources[0]
        more = f" (and {len(failed_resources) - 1} more)" if len(failed_resources) > 1 else ""
        why = f": {reason}" if reason else ""
        return StackVerdict(
            health=StackHealth.UNHEALTHY,
            reason=f"Resource {name} is {resource_status}{why}{more}",
            status=status,
        )
    return StackVerdict(
        health=StackHealth.HEALTHY, reason=f"Stack status is {status}", status=status
    )


#: Stack states an operation ends in, by the operation's action.
DONE: Final = {
    "CREATE": "CREATE_COMPLETE",
    "UPDATE": "UPDATE_COMPLETE",
    "DELETE": "DELETE_COMPLETE",
    "SUSPEND": "SUSPEND_COMPLETE",
    "RESUME": "RESUME_COMPLETE",
    "CHECK": "CHECK_COMPLETE",
}
