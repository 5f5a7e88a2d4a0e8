"""Senlin's list parameters: the whitelist, each check in Senlin's words, and the
filtering, sorting and paging they ask for."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from api.auth import Caller, Role
from api.senlin_lists import (
    CLUSTER_POLICIES,
    CLUSTERS,
    NODES,
    ListQuery,
    filter_and_page,
    parse_list_query,
)
from domain.errors import Forbidden, InvalidRequest

MEMBER = Caller(project_id="demo", roles=frozenset({Role.MEMBER}))
ADMIN = Caller(project_id="demo", roles=frozenset({Role.ADMIN}))
ID_1 = "11111111-1111-4111-8111-111111111111"
ID_2 = "22222222-2222-4222-8222-222222222222"
ID_3 = "33333333-3333-4333-8333-333333333333"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([("bogus", "foo")], "Invalid parameter 'bogus'"),
        ([("limit", "not-int")], "The value for limit must be an integer: 'not-int'."),
        ([("limit", "-1")], "Value must be >= 0 for field 'limit'."),
        (
            [("global_project", "not-bool")],
            "Invalid value 'not-bool' specified for 'global_project'",
        ),
        ([("sort", "bad-sort")], "Unsupported sort key 'bad-sort' for 'sort'."),
        ([("sort", "name:sideways")], "Unsupported sort dir 'sideways' for 'sort'."),
        ([("sort", ":asc")], "Missing sort key for 'sort'."),
        ([("marker", "bad-marker")], "The value for marker is not a valid UUID: 'bad-marker'."),
        ([("status", "bad-status")], "Field value bad-status is invalid"),
        ([("status", "ACTIVE"), ("status", "['x']")], "Field value ['x'] is invalid"),
    ],
)
def test_a_bad_cluster_list_parameter_gets_senlins_400(
    params: list[tuple[str, str]], message: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_list_query(params, CLUSTERS, MEMBER)
    assert refused.value.message == message


def test_other_lists_name_the_parameter_unquoted_and_take_their_own() -> None:
    with pytest.raises(InvalidRequest, match=r"^Invalid parameter bogus$"):
        parse_list_query([("bogus", "x")], NODES, MEMBER)
    with pytest.raises(InvalidRequest, match=r"^Invalid parameter limit$"):
        parse_list_query([("limit", "1")], CLUSTER_POLICIES, MEMBER)
    assert parse_list_query([("enabled", "False")], CLUSTER_POLICIES, MEMBER).filters == {
        "enabled": [False]
    }


def test_global_project_is_an_admins_and_refused_for_a_member() -> None:
    with pytest.raises(Forbidden, match=r"You are not authorized to complete this operation\."):
        parse_list_query([("global_project", "True")], CLUSTERS, MEMBER)
    with pytest.raises(InvalidRequest, match="not supported"):
        parse_list_query([("global_project", "true")], CLUSTERS, ADMIN)
    assert parse_list_query([("global_project", "false")], CLUSTERS, MEMBER) == ListQuery()


@dataclass
class Item:
    id: str
    name: str
    status: str
    created_at: int


ITEMS = [Item(ID_1, "b", "ACTIVE", 1), Item(ID_2, "a", "ERROR", 2), Item(ID_3, "c", "ACTIVE", 3)]


def test_filters_sort_marker_and_limit_apply_in_senlins_order() -> None:
    def names(params: list[tuple[str, str]]) -> list[str]:
        query = parse_list_query(params, CLUSTERS, MEMBER)
        return [i.name for i in filter_and_page(ITEMS, query)]

    assert names([]) == ["b", "a", "c"]
    assert names([("status", "ACTIVE")]) == ["b", "c"]
    assert names([("name", "a"), ("name", "c")]) == ["a", "c"]
    assert names([("sort", "name")]) == ["a", "b", "c"]
    assert names([("sort", "status:desc,name")]) == ["a", "b", "c"]
    assert names([("sort", "created_at:desc"), ("limit", "2")]) == ["c", "a"]
    assert names([("sort", "name"), ("marker", ID_2)]) == ["b", "c"]
    assert names([("limit", "0")]) == []
