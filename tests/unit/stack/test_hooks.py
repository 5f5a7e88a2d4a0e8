"""Heat's breakpoint hooks as an environment writes them."""

from __future__ import annotations

import pytest

from domain.errors import InvalidRequest
from domain.hot.environment import environment_breakpoints, parse_environment
from domain.stack.hooks import check_unset_hook, hooks_of, nested_breakpoints, parse_breakpoints


def test_hooks_by_name_glob_and_nested_stack() -> None:
    env = parse_environment(
        "resource_registry:\n"
        "  resources:\n"
        "    foo_*: {hooks: pre-create}\n"
        "    foo_step2: {hooks: [pre-update, pre-create]}\n"
        "    nested:\n"
        "      db: {hooks: pre-delete}\n"
    )
    tree = environment_breakpoints(env)
    assert hooks_of(tree, "foo_step2") == {"pre-create", "pre-update"}
    assert hooks_of(tree, "foo_step1") == {"pre-create"}
    assert hooks_of(tree, "bar") == set()
    assert nested_breakpoints(tree, "nested") == {"db": {"hooks": ["pre-delete"]}}
    assert hooks_of(nested_breakpoints(tree, "nested"), "db") == {"pre-delete"}
    assert check_unset_hook(tree, "foo_step1", "pre-create") == "pre-create"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"a": {"hooks": "pre-launch"}}, 'Invalid hook type "pre-launch" for resource breakpoint'),
        ({"a": {"hooks": ["pre-create", 3]}}, "Invalid hook type"),
        ({"a": {"OS::Nova::Server": "my.yaml"}}, "per-resource type overrides are not supported"),
        ({"a": "x"}, "environment.resource_registry.resources.a: must be a mapping"),
    ],
)
def test_bad_breakpoints_are_400s(section: object, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        parse_breakpoints(section)


def test_unset_hook_needs_a_hook_the_resource_has() -> None:
    with pytest.raises(InvalidRequest, match='The "pre-delete" hook is not defined on a'):
        check_unset_hook({"a": {"hooks": ["pre-create"]}}, "a", "pre-delete")
