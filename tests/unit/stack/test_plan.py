"""Stack update planning: what an update creates, updates, replaces, deletes or keeps."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.hot.template import Template, load_template, resolve_parameters
from domain.stack.plan import (
    ChangeKind,
    CurrentResource,
    UpdatePlan,
    deletion_order,
    plan_update,
)

NONE = "OS::Heat::None"
SERVER = "OS::Nova::Server"
TEST = "OS::Heat::TestResource"

CREATE, UPDATE, REPLACE, DELETE, KEEP = (
    ChangeKind.CREATE,
    ChangeKind.UPDATE,
    ChangeKind.REPLACE,
    ChangeKind.DELETE,
    ChangeKind.KEEP,
)


def hot(resources: dict[str, Any], parameters: dict[str, Any] | None = None) -> Template:
    return load_template(
        {
            "heat_template_version": "2021-04-16",
            "parameters": parameters or {},
            "resources": resources,
        }
    )


def server(**properties: Any) -> dict[str, Any]:
    return {"type": SERVER, "properties": {"image": "cirros", "flavor": "m1.small", **properties}}


def heat_test(**properties: Any) -> dict[str, Any]:
    return {"type": TEST, "properties": properties}


def created(template: Template, **states: str) -> dict[str, CurrentResource]:
    """Every resource of `template` as CREATE_COMPLETE, except `name=ACTION_STATUS` ones."""
    current = {}
    for name, resource in template.resources.items():
        action, status = states.get(name, "CREATE_COMPLETE").rsplit("_", 1)
        current[name] = CurrentResource(
            name=name, type=resource.type, action=action, status=status, physical_id=f"id-{name}"
        )
    return current


def plan(
    old: Template,
    new: Template,
    current: dict[str, CurrentResource] | None = None,
    old_params: dict[str, Any] | None = None,
    new_params: dict[str, Any] | None = None,
) -> UpdatePlan:
    return plan_update(
        old,
        resolve_parameters(old, old_params or {}),
        created(old) if current is None else current,
        new,
        resolve_parameters(new, new_params or {}),
    )


def kinds(result: UpdatePlan) -> dict[str, ChangeKind]:
    return {name: change.kind for name, change in result.changes.items()}


def reasons(result: UpdatePlan) -> dict[str, str]:
    return {name: change.reason for name, change in result.changes.items()}


STACK = hot(
    {
        "key": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
        "web": server(key_name={"get_attr": ["key", "value"]}),
        "app": heat_test(value={"get_attr": ["web", "name"]}),
        "db": server(),
    }
)


def test_plan_keeps_unchanged_resources() -> None:
    result = plan(STACK, STACK)
    assert kinds(result) == {"key": KEEP, "db": KEEP, "web": KEEP, "app": KEEP}
    assert result.of(KEEP) == ["db", "key", "web", "app"]


def test_plan_creates_new_and_deletes_removed_resources() -> None:
    old = hot({"a": {"type": NONE}, "b": {"type": NONE, "depends_on": "a"}, "c": {"type": NONE}})
    new = hot({"c": {"type": NONE}, "d": {"type": NONE}})
    result = plan(old, new)
    assert list(result.changes) == ["c", "d", "b", "a"]
    assert kinds(result) == {"c": KEEP, "d": CREATE, "b": DELETE, "a": DELETE}


def test_plan_replaces_check_failed_resource() -> None:
    result = plan(STACK, STACK, created(STACK, db="CHECK_FAILED"))
    assert result.changes["db"].kind == REPLACE
    assert result.changes["db"].reason == "resource is CHECK_FAILED"
    assert result.of(REPLACE) == ["db"]


def test_plan_replaces_failed_interrupted_and_deleted_resources() -> None:
    current = created(STACK, db="UPDATE_FAILED", key="UPDATE_IN_PROGRESS", app="DELETE_COMPLETE")
    result = reasons(plan(STACK, STACK, current))
    assert result["db"] == "resource is UPDATE_FAILED"
    assert result["key"] == "resource is UPDATE_IN_PROGRESS"
    assert result["app"] == "resource is DELETE_COMPLETE"


def test_plan_replaces_resources_that_never_got_created() -> None:
    current = created(STACK, db="CREATE_FAILED", key="INIT_COMPLETE")
    current["db"] = current["db"].model_copy(update={"physical_id": None})
    result = plan(STACK, STACK, current)
    assert {n: (c.kind, c.reason) for n, c in result.changes.items() if n in ("db", "key")} == {
        "db": (REPLACE, "not created"),
        "key": (REPLACE, "not created"),
    }


def test_plan_replaces_on_type_change() -> None:
    new = hot({"db": {"type": NONE}})
    change = plan(hot({"db": server()}), new).changes["db"]
    assert (change.kind, change.reason) == (REPLACE, f"type changed from {SERVER} to {NONE}")


def test_plan_updates_in_place_when_every_changed_property_allows_it() -> None:
    new = hot({"db": server(image="fedora")})
    change = plan(hot({"db": server()}), new).changes["db"]
    assert (change.kind, change.reason) == (UPDATE, "image changed")


def test_plan_replaces_when_a_changed_property_cannot_be_updated() -> None:
    new = hot({"db": server(image="fedora", key_name="ops")})
    change = plan(hot({"db": server()}), new).changes["db"]
    assert (change.kind, change.reason) == (REPLACE, "key_name changed")


def test_plan_replaces_random_string_on_any_change() -> None:
    old = hot({"k": {"type": "OS::Heat::RandomString"}})
    new = hot({"k": {"type": "OS::Heat::RandomString", "properties": {"salt": "x"}}})
    assert kinds(plan(old, new)) == {"k": REPLACE}


def test_plan_replaces_test_resource_when_update_replace_is_true() -> None:
    old = hot({"t": heat_test(value="a")})
    assert kinds(plan(old, hot({"t": heat_test(value="b")}))) == {"t": UPDATE}
    replacing = hot({"t": heat_test(value="b", update_replace=True)})
    assert kinds(plan(old, replacing)) == {"t": REPLACE}


def test_plan_updates_open_properties_of_none_in_place() -> None:
    old = hot({"n": {"type": NONE, "properties": {"x": 1}}})
    new = hot({"n": {"type": NONE, "properties": {"x": 2, "y": 3}}})
    assert reasons(plan(old, new)) == {"n": "x, y changed"}


def test_plan_sees_parameter_changes_through_get_param() -> None:
    template = hot(
        {"db": server(key_name={"get_param": "key"}, image={"get_param": "image"})},
        {"key": {"type": "string", "default": "ops"}, "image": {"type": "string"}},
    )
    same = plan(template, template, old_params={"image": "a"}, new_params={"image": "a"})
    assert kinds(same) == {"db": KEEP}
    rebuilt = plan(template, template, old_params={"image": "a"}, new_params={"image": "b"})
    assert kinds(rebuilt) == {"db": UPDATE}
    resized = plan(
        template, template, old_params={"image": "a"}, new_params={"image": "a", "key": "dev"}
    )
    assert kinds(resized) == {"db": REPLACE}


def test_plan_treats_an_omitted_property_as_its_default() -> None:
    old = hot({"k": {"type": "OS::Heat::RandomString"}})
    new = hot({"k": {"type": "OS::Heat::RandomString", "properties": {"length": "32"}}})
    assert kinds(plan(old, new)) == {"k": KEEP}


def test_plan_updates_metadata_changes_in_place() -> None:
    old = hot({"db": {**server(), "metadata": {"tier": "a"}}})
    new = hot({"db": {**server(), "metadata": {"tier": "b"}}})
    assert reasons(plan(old, new)) == {"db": "metadata changed"}


def test_plan_propagates_replacement_to_dependents() -> None:
    result = plan(STACK, STACK, created(STACK, key="CHECK_FAILED"))
    assert kinds(result) == {"db": KEEP, "key": REPLACE, "web": REPLACE, "app": UPDATE}
    assert reasons(result)["web"] == "depends on replaced key (key_name)"
    assert reasons(result)["app"] == "depends on replaced web"


def test_plan_propagates_creation_of_a_missing_resource() -> None:
    current = created(STACK)
    del current["db"], current["key"]
    result = plan(STACK, STACK, current)
    assert kinds(result) == {"db": CREATE, "key": CREATE, "web": REPLACE, "app": UPDATE}
    assert reasons(result)["web"] == "depends on created key (key_name)"


def test_plan_does_not_propagate_through_depends_on_alone() -> None:
    template = hot({"a": server(), "b": {**server(), "depends_on": ["a"]}})
    result = plan(template, template, created(template, a="CHECK_FAILED"))
    assert kinds(result) == {"a": REPLACE, "b": KEEP}


def test_plan_propagates_through_metadata_as_an_update() -> None:
    template = hot({"a": server(), "b": {**server(), "metadata": {"a": {"get_resource": "a"}}}})
    result = plan(template, template, created(template, a="CHECK_FAILED"))
    assert kinds(result) == {"a": REPLACE, "b": UPDATE}


def test_deletion_order_deletes_dependents_first() -> None:
    assert deletion_order(STACK) == ["app", "web", "key", "db"]
    assert deletion_order({"a": [], "b": ["a"], "c": ["a", "b"]}) == ["c", "b", "a"]


@given(size=st.integers(2, 8), data=st.data())
def test_plan_replaces_a_failed_link_and_everything_that_reads_it(
    size: int, data: st.DataObject
) -> None:
    # A chain of servers s0 <- s1 <- ..., each one's key_name (not updatable) read from the
    # previous one's name, and a TestResource at the end whose value (updatable) reads it.
    resources = {
        f"s{i}": server(key_name={"get_attr": [f"s{i - 1}", "name"]} if i else "k")
        for i in range(size)
    }
    chain = hot({**resources, "end": heat_test(value={"get_attr": [f"s{size - 1}", "name"]})})
    failed = data.draw(st.integers(0, size - 1))
    result = kinds(plan(chain, chain, created(chain, **{f"s{failed}": "CHECK_FAILED"})))
    expected = [KEEP] * failed + [REPLACE] * (size - failed)
    assert [result[f"s{i}"] for i in range(size)] == expected
    assert result["end"] == UPDATE
    assert deletion_order(chain) == ["end", *(f"s{i}" for i in reversed(range(size)))]
