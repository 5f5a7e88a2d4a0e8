"""OS::Heat::ResourceGroup's pure rules and the group attributes read member by member."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.functions import ResolvedResource, resolve
from domain.hot.template import load_template
from domain.stack.groups import (
    MEMBERS,
    GroupMember,
    RollingUpdate,
    indexed_members,
    indexed_template,
    member_view,
    rolled_resources,
    rolling_batches,
    rolling_policy,
)
from domain.stack.types.resource_group import removal_names


def members(*names: str, failed: tuple[str, ...] = ()) -> list[GroupMember]:
    return [GroupMember(name=n, failed=n in failed, created=True) for n in names]


def test_new_group_takes_the_lowest_indexes_not_skipped() -> None:
    assert indexed_members([], 3, []) == ["0", "1", "2"]
    assert indexed_members([], 3, ["1"]) == ["0", "2", "3"]


def test_scale_down_drops_failed_members_first_then_the_highest_index() -> None:
    six = members("0", "1", "2", "3", "4", "5", failed=("2",))
    assert indexed_members(six, 5, []) == ["0", "1", "3", "4", "5"]
    assert indexed_members(six, 3, []) == ["0", "1", "3"]


def test_skipped_members_go_even_without_a_smaller_count_and_are_never_reused() -> None:
    three = members("0", "1", "2")
    assert indexed_members(three, 3, ["1"]) == ["0", "2", "3"]
    # Growing fills the lowest free index that was never skipped.
    assert indexed_members(members("0", "2", "3"), 5, ["1"]) == ["0", "2", "3", "4", "5"]


def test_index_order_is_numeric() -> None:
    twelve = members(*(str(i) for i in range(12)))
    assert indexed_members(twelve, 11, [])[-2:] == ["9", "10"]


def test_negative_count_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        indexed_members([], -1, [])


def test_index_var_is_replaced_in_properties_recursively_not_in_metadata() -> None:
    resource_def = {
        "type": "OS::Heat::TestResource",
        "properties": {"value": "web-%i%", "action_wait_secs": {"create": "%i%"}, "fail": None},
        "metadata": {"note": "%i%"},
    }
    template = indexed_template(resource_def, ["0", "7"], "%i%")
    assert template["resources"]["7"] == {
        "type": "OS::Heat::TestResource",
        "properties": {"value": "web-7", "action_wait_secs": {"create": "7"}},
        "metadata": {"note": "%i%"},
    }
    load_template(template)  # a valid nested template


def test_removal_policies_append_by_name_or_reference_and_update_starts_afresh() -> None:
    refs = {"0": "id-0", "1": "id-1", "2": "id-2"}
    props: dict[str, Any] = {"removal_policies": [{"resource_list": ["id-2", "0", "nope"]}]}
    assert removal_names(props, ["5"], refs) == ["0", "2", "5"]
    props["removal_policies_mode"] = "update"
    props["removal_policies"] = [{"resource_list": ["1"]}]
    assert removal_names(props, ["0", "2", "5"], refs) == ["1"]
    # At create there are no members yet: every entry is a name.
    assert removal_names({"removal_policies": [{"resource_list": [3]}]}, [], None) == ["3"]


def group_template(resource_def: Any) -> dict[str, Any]:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": 2, "resource_def": resource_def},
            }
        },
        "outputs": {
            "first": {"value": {"get_attr": ["group", "resource.0"]}},
            "first_output": {"value": {"get_attr": ["group", "resource.0.output"]}},
            "outputs": {"value": {"get_attr": ["group", "attributes", "output"]}},
        },
    }


def test_template_with_a_group_validates_its_member_definition() -> None:
    load_template(group_template({"type": "OS::Heat::TestResource"}))
    with pytest.raises(InvalidRequest, match=r"resource_def\.type"):
        load_template(group_template({"type": "OS::Nope"}))
    with pytest.raises(InvalidRequest, match=r"resource_def\.image"):
        load_template(group_template({"type": "OS::Heat::None", "image": "x"}))
    # Heat's ResourceGroup reads any other name as each member's attribute of that name.
    listed = group_template({"type": "OS::Heat::None"})
    listed["outputs"]["x"] = {"value": {"get_attr": ["group", "anything"]}}
    load_template(listed)


def test_group_attributes_read_member_by_member() -> None:
    group = ResolvedResource(
        type="OS::Heat::ResourceGroup",
        reference="g",
        attributes={
            "refs_map": {"0": "id-0", "10": "id-10", "2": "id-2"},
            MEMBERS: {
                "10": {"output": "ten"},
                "2": {"output": "two"},
                "0": member_view({"outputs": {"output": "zero"}}),
            },
        },
    )
    scaling = group.model_copy(update={"type": "OS::Heat::AutoScalingGroup"})

    def get(resource: ResolvedResource, *path: Any) -> Any:
        return resolve({"get_attr": ["g", *path]}, {}, {"g": resource})

    assert get(group, "attributes", "output") == {"0": "zero", "2": "two", "10": "ten"}
    assert get(group, "resource.10") == "id-10"
    assert get(group, "resource.2.output") == "two"
    assert get(group, "resource.9.output") is None
    assert get(group, "output") == ["zero", "two", "ten"]  # any other name, in index order
    assert get(scaling, "outputs_list", "output") == ["zero", "two", "ten"]
    assert get(scaling, "outputs", "output") == {"0": "zero", "2": "two", "10": "ten"}
    # A nested stack's own `outputs` attribute keeps its plain meaning.
    stack = ResolvedResource(type="OS::Heat::Stack", attributes={"outputs": {"a": 1}})
    assert get(stack, "outputs", "a") == 1


def test_rolling_batches_follow_heats_sizing() -> None:
    # 6 members, 2 at a time, 4 kept in service: three batches, the size never changes.
    assert rolling_batches(6, 6, 2, 4) == [(6, 2), (6, 2), (6, 2)]
    # Keeping every member in service grows the group by a batch, then shrinks it back.
    assert rolling_batches(3, 3, 1, 3) == [(4, 1), (4, 1), (4, 1), (4, 1), (3, 0)]
    assert rolling_batches(0, 0, 1, 0) == []


def test_a_batch_gives_the_new_definition_to_failed_members_first() -> None:
    old = {n: {"v": 1} for n in "abcd"}
    new = {n: {"v": 2} for n in "abcd"}
    rolled = rolled_resources(new, old, ["c", "d", "a", "b"], 2)
    assert {n for n, d in rolled.items() if d == {"v": 2}} == {"c", "d"}
    # New members count against the batch.
    rolled = rolled_resources({**new, "e": {"v": 2}}, old, ["c", "d", "a", "b"], 2)
    assert {n for n, d in rolled.items() if d == {"v": 2}} == {"c", "e"}


def test_rolling_policy_has_heats_defaults_and_refuses_bad_values() -> None:
    assert rolling_policy({}) is None
    policy = rolling_policy({"rolling_update": {}})
    assert policy == RollingUpdate(min_in_service=0, max_batch_size=1, pause_time=0)
    with pytest.raises(InvalidRequest, match=r"update_policy\.rolling_update"):
        rolling_policy({"rolling_update": {"max_batch_size": 0}})


def test_batch_create_takes_a_batch_size_and_a_pause_only() -> None:
    policy = rolling_policy({"batch_create": {"max_batch_size": 3}}, "batch_create")
    assert policy == RollingUpdate(min_in_service=0, max_batch_size=3, pause_time=0)
    assert rolling_batches(5, 0, 2, 0) == [(2, 2), (4, 2), (5, 1)]
    with pytest.raises(InvalidRequest, match="min_in_service is not allowed"):
        rolling_policy({"batch_create": {"min_in_service": 1}}, "batch_create")
