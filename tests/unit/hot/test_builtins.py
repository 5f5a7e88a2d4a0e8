"""Heat's value functions, with the examples of Heat's template guide and its unit tests."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.functions import resolve
from domain.hot.template import load_template


def value(expr: Any, params: dict[str, Any] | None = None, version: str = "2021-04-16") -> Any:
    """`expr` evaluated as an output of a template of `version` (loaded, so checked)."""
    declared = {name: {"type": "json"} for name in params or {}}
    template = load_template(
        {
            "heat_template_version": version,
            "parameters": declared,
            "outputs": {"out": {"value": expr}},
        }
    )
    return resolve(template.outputs["out"].value, params or {}, {})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ({"str_split": [",", "string,to,split"]}, ["string", "to", "split"]),
        ({"str_split": [",", "string,to,split", 1]}, "to"),
        ({"map_merge": [{"k1": "v1", "k2": "v2"}, {"k1": "v2"}]}, {"k1": "v2", "k2": "v2"}),
        ({"map_merge": [{"a": 1}, None]}, {"a": 1}),
        (
            {
                "map_replace": [
                    {"k1": "v1", "k2": "v2"},
                    {"keys": {"k1": "K1"}, "values": {"v2": "V2"}},
                ]
            },
            {"K1": "v1", "k2": "V2"},
        ),
        ({"list_concat": [["v1", "v2"], ["v3", "v4"]]}, ["v1", "v2", "v3", "v4"]),
        ({"list_concat_unique": [["v1", "v2"], ["v2", "v3"]]}, ["v1", "v2", "v3"]),
        ({"contains": ["v1", ["v1", "v2"]]}, True),
        ({"contains": ["v3", ["v1", "v2"]]}, False),
        ({"filter": [[3], [1, 3, 5, 3]]}, [1, 5]),
        ({"filter": [None, [1, 2]]}, [1, 2]),
        ({"digest": ["sha512", "abc"]}, __import__("hashlib").sha512(b"abc").hexdigest()),
        ({"digest": ["md5", "x"]}, __import__("hashlib").md5(b"x").hexdigest()),
        (
            {"repeat": {"template": "port-%p%", "for_each": {"%p%": ["80", "443"]}}},
            ["port-80", "port-443"],
        ),
        (
            {
                "repeat": {
                    "template": {"protocol": "%proto%", "port": "%port%"},
                    "for_each": {"%port%": ["80", "443"], "%proto%": ["tcp", "udp"]},
                }
            },
            [
                {"protocol": "tcp", "port": "80"},
                {"protocol": "udp", "port": "80"},
                {"protocol": "tcp", "port": "443"},
                {"protocol": "udp", "port": "443"},
            ],
        ),
        (
            {
                "repeat": {
                    "template": "%a%-%b%",
                    "for_each": {"%a%": ["x", "y"], "%b%": ["1", "2"]},
                    "permutations": False,
                }
            },
            ["x-1", "y-2"],
        ),
        (
            {"repeat": {"template": "k-%k%", "for_each": {"%k%": {"one": 1, "two": 2}}}},
            ["k-one", "k-two"],
        ),
        (
            {
                "make_url": {
                    "scheme": "http",
                    "host": "example.com",
                    "port": 8080,
                    "path": "/foo/?bar",
                    "query": {"foo#": "bar & baz", "blog": "/path?query=string"},
                    "fragment": "bar",
                }
            },
            "http://example.com:8080/foo/%3Fbar?foo%23=bar+%26+baz&blog=/path%3Fquery%3Dstring#bar",
        ),
        (
            {"make_url": {"scheme": "https", "host": "::1", "username": "u@x"}},
            "https://u%40x@[::1]",
        ),
        ({"str_replace": {"template": "a=$v", "params": {"$v": True}}}, "a=True"),
        (
            {"str_replace": {"template": "m=$m", "params": {"$m": {"b": 1, "a": 2}}}},
            'm={"a": 2, "b": 1}',
        ),
        ({"str_replace_strict": {"template": "x-$a", "params": {"$a": "1"}}}, "x-1"),
        ({"list_join": [", ", ["a", "b"], ["c"]]}, "a, b, c"),
        ({"list_join": [",", [{"b": 1, "a": 2}]]}, '{"a": 2, "b": 1}'),
    ],
)
def test_functions_compute_what_heat_computes(expr: Any, expected: Any) -> None:
    assert value(expr) == expected


def test_functions_read_parameters_first() -> None:
    got = value({"map_merge": [{"get_param": "base"}, {"extra": 1}]}, {"base": {"a": 0}})
    assert got == {"a": 0, "extra": 1}
    split = value({"str_split": [",", {"get_param": "csv"}, 2]}, {"csv": "a,b,c"})
    assert split == "c"


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (
            {"str_split": [",", "a,b", 5]},
            'Incorrect index to "str_split" should be between 0 and 1',
        ),
        ({"map_merge": [{"a": 1}, ["x"]]}, "Incorrect arguments: Items to merge must be maps."),
        ({"list_concat": [[1], "x"]}, "Incorrect arguments: Items to concat must be lists."),
        (
            {"str_replace_strict": {"template": "x", "params": {"$a": "1"}}},
            "The following params were not found in the template: $a",
        ),
        (
            {"str_replace_vstrict": {"template": "x$a", "params": {"$a": ""}}},
            "str_replace_vstrict has an undefined or empty value for param $a",
        ),
        (
            {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]},
            "key replacement b collides with a key in the input map",
        ),
        ({"digest": ["nope", "x"]}, "Algorithm must be one of"),
        ({"contains": ["a", 3]}, 'Second argument to "contains" should be a sequence.'),
    ],
)
def test_bad_values_are_heat_s_400s(expr: Any, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message.replace("$", r"\$").replace("(", r"\(")):
        value(expr)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ({"repeat": {"template": "x"}}, '"repeat" syntax should be'),
        (
            {"repeat": {"template": "x", "for_each": {}, "permutations": "no"}},
            '"permutations" should be boolean',
        ),
        ({"filter": [1, 2, 3]}, 'Arguments to "filter" must be of the form: [values, sequence]'),
        ({"contains": "x"}, 'Argument to "contains" must be a list'),
        (
            {"make_url": {"host": "h", "port": 70000}},
            "Invalid URL port 70000, must be in range 1-65535",
        ),
        ({"make_url": {"hots": "h"}}, 'Invalid arguments to "make_url": hots'),
        ({"str_split": "a,b"}, 'Incorrect arguments to "str_split"'),
    ],
)
def test_malformed_calls_are_refused_when_the_template_loads(expr: Any, message: str) -> None:
    template = {"heat_template_version": "2021-04-16", "outputs": {"o": {"value": expr}}}
    with pytest.raises(InvalidRequest) as caught:
        load_template(template)
    assert caught.value.message.startswith("outputs.o.value.")
    assert message in caught.value.message


@pytest.mark.parametrize(
    ("version", "expr"),
    [
        ("2013-05-23", {"repeat": {"template": "x", "for_each": {"x": [1]}}}),
        ("2015-04-30", {"str_split": [",", "a"]}),
        ("2016-04-08", {"map_replace": [{}, {}]}),
        ("2016-10-14", {"filter": [[1], [1]]}),
        ("2017-02-24", {"list_concat": [[1]]}),
    ],
)
def test_a_function_newer_than_the_template_version_is_refused(version: str, expr: Any) -> None:
    name = next(iter(expr))
    with pytest.raises(
        InvalidRequest, match=f'"{name}" is not a function of heat_template_version'
    ):
        value(expr, version=version)


def test_release_names_count_as_their_dates() -> None:
    assert value({"list_concat": [[1], [2]]}, version="pike") == [1, 2]


def test_yaql_evaluates_on_data_and_has_no_clock_nor_dice() -> None:
    expr = {"yaql": {"expression": "$.data.var1.sum()", "data": {"var1": [3, 2, 1]}}}
    assert value(expr) == 6
    keys = {"yaql": {"expression": "$.data.m.keys()", "data": {"m": {"b": 1, "a": 2}}}}
    assert value(keys) == ["a", "b"]
    from_param = {
        "yaql": {"expression": "$.data.n.select($ * 2)", "data": {"n": {"get_param": "n"}}}
    }
    assert value(from_param, {"n": [1, 2]}) == [2, 4]
    for name in ("now()", "random()"):
        with pytest.raises(InvalidRequest, match=f'Unknown function "{name[:-2]}"'):
            value({"yaql": {"expression": name}})
    with pytest.raises(InvalidRequest, match="Bad expression"):
        load_template(
            {
                "heat_template_version": "2016-10-14",
                "outputs": {"o": {"value": {"yaql": {"expression": "$.("}}}},
            }
        )
