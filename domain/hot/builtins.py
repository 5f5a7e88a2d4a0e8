"""What Heat's value functions compute, given their arguments already evaluated.

Each function here is pure and deterministic (workflow code evaluates templates) and
raises `InvalidRequest` with Heat's own words (`heat/engine/hot/functions.py`) when its
arguments are wrong. `SHAPES` holds the checks Heat makes when it parses a call, before
any value is known; `domain.hot.functions` runs them when a template is loaded.
"""

from __future__ import annotations

import collections.abc  # noqa: F401 - yaql reads collections.abc without importing it
import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any, Final
from urllib import parse as urlparse

import yaql
from yaql.language import exceptions as yaql_errors

from domain.errors import InvalidRequest
from domain.hot.cfn_functions import member_list_to_map, select, split

__all__ = ["EVALUATORS", "SHAPES", "as_text"]


def _fail(message: str) -> InvalidRequest:
    return InvalidRequest(message)


def as_text(value: Any) -> str:
    """A value as `list_join` joins it: None is "", maps and lists are sorted JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


# --- strings ---------------------------------------------------------------------------


_JOIN_EXAMPLE: Final = '"list_join" : [ " ", [ "str1", "str2"] ...]'


def list_join(args: Any) -> str:
    if not _is_list(args) or len(args) < 2:
        raise _fail(f'Incorrect arguments to "list_join" should be: {_JOIN_EXAMPLE}')
    delim, *lists = args
    strings: list[Any] = []
    for items in lists:
        if items:
            if not _is_list(items):
                raise _fail('"list_join" must operate on a list')
            strings += items
    if not isinstance(delim, str):
        raise _fail('"list_join" delimiter must be a string')
    return delim.join(as_text(s) for s in strings)


def _replacement(fn: str, value: Any, param: str, *, allow_empty: bool) -> str:
    empty = (
        f"{fn} has an undefined or empty value for param {param}, must be a defined non-empty value"
    )
    if value is None:
        if allow_empty:
            return ""
        raise _fail(empty)
    if isinstance(value, bool):
        text = str(value)  # Heat: str(True) is "True"
    elif isinstance(value, str | int | float):
        text = str(value)
    elif isinstance(value, dict | list):
        if not allow_empty and not value:
            raise _fail(empty)
        text = json.dumps(value, sort_keys=True)
    else:
        raise _fail(f'"{fn}" params must be strings, numbers, list or map.')
    if not allow_empty and not text:
        raise _fail(empty)
    return text


def _str_replace(fn: str, args: Any, *, strict: bool, allow_empty: bool) -> str:
    template, mapping = args.get("template"), args.get("params")
    if not isinstance(template, str):
        raise _fail(f'"{fn}" template must be a string')
    if not isinstance(mapping, dict):
        raise _fail(f'"{fn}" params must be a map')
    # Longest key first, then lexicographic (Heat's order); a replacement is never
    # replaced again: each key splits what the longer ones left.
    keys = sorted(sorted(mapping), key=len, reverse=True)
    found: set[str] = set()

    def replace(strings: list[str], rest: list[str]) -> list[str]:
        if not rest:
            return strings
        key, *others = rest
        if not key:
            return replace(strings, others)
        value = _replacement(fn, mapping[key], key, allow_empty=allow_empty)
        out = []
        for s in strings:
            parts = s.split(key)
            if len(parts) > 1:
                found.add(key)
            out.append(value.join(replace(parts, others)))
        return out

    result = replace([template], keys)[0]
    missing = [k for k in keys if k not in found]
    if strict and missing:
        raise _fail(f"The following params were not found in the template: {','.join(missing)}")
    return result


def str_replace(args: Any) -> str:
    return _str_replace("str_replace", args, strict=False, allow_empty=True)


def str_replace_strict(args: Any) -> str:
    return _str_replace("str_replace_strict", args, strict=True, allow_empty=True)


def str_replace_vstrict(args: Any) -> str:
    return _str_replace("str_replace_vstrict", args, strict=True, allow_empty=False)


_SPLIT_EXAMPLE: Final = '"str_split" : [ ",", "apples,pears", <index>]'


def str_split(args: Any) -> Any:
    if not _is_list(args) or len(args) < 2:
        raise _fail(f'Incorrect arguments to "str_split" should be: {_SPLIT_EXAMPLE}')
    delim, text, *rest = args
    if text is None:
        return None
    if not isinstance(delim, str) or not isinstance(text, str) or not delim:
        raise _fail(f'Incorrect arguments to "str_split" should be: {_SPLIT_EXAMPLE}')
    parts = text.split(delim)
    if not rest:
        return parts
    try:
        index = int(rest[0])
    except (TypeError, ValueError):
        raise _fail(f'Incorrect index to "str_split" should be: {_SPLIT_EXAMPLE}') from None
    if not -len(parts) <= index < len(parts):
        raise _fail(f'Incorrect index to "str_split" should be between 0 and {len(parts) - 1}')
    return parts[index]


def digest(args: Any) -> str:
    if not _is_list(args) or not all(isinstance(a, str) for a in args):
        raise _fail('Argument to function "digest" must be a list of strings')
    if len(args) != 2:
        raise _fail('Function "digest" usage: ["<algorithm>", "<value>"]')
    algorithm, value = args
    if algorithm.lower() not in hashlib.algorithms_available:
        raise _fail(f"Algorithm must be one of {sorted(hashlib.algorithms_available)}")
    hashed = hashlib.new(algorithm.lower())
    hashed.update(value.encode("latin-1", errors="replace"))
    return hashed.hexdigest()


def make_url(args: Any) -> str:
    if not isinstance(args, dict):
        raise _fail('The arguments to "make_url" must be a map')
    _check_url_args(args)
    scheme = args.get("scheme", "")
    if ":" in scheme:
        raise _fail("URL \"scheme\" should not contain ':'")
    user = urlparse.quote(args.get("username", ""), safe="")
    password = urlparse.quote(args.get("password", ""), safe="")
    netloc = ""
    if user or password:
        netloc = user + (f":{password}" if password else "") + "@"
    host = args.get("host", "")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = urlparse.quote(host, safe=":")
    netloc += f"[{host}]" if ":" in host else host
    if args.get("port"):
        netloc += f":{args['port']}"
    path = urlparse.quote(args.get("path", ""))
    query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
    fragment = urlparse.quote(args.get("fragment", ""))
    return str(urlparse.urlunsplit((scheme, netloc, path, query, fragment)))


_URL_KEYS: Final = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")


def _check_url_args(args: dict[str, Any]) -> None:
    invalid = sorted(set(args) - set(_URL_KEYS))
    if invalid:
        raise _fail(f'Invalid arguments to "make_url": {", ".join(invalid)}')
    for key, value in args.items():
        if _unevaluated(value):
            continue
        if key == "query":
            if not isinstance(value, dict):
                raise _fail('The "query" argument to "make_url" must be a map')
        elif key == "port":
            try:
                port = int(value)
            except (TypeError, ValueError):
                raise _fail(f'Invalid URL port "{value}" for make_url called with {args}') from None
            if not 0 < port <= 65535:
                raise _fail(f"Invalid URL port {port}, must be in range 1-65535")
        elif not isinstance(value, str):
            raise _fail(f'The "{key}" argument to "make_url" must be a string')


def _unevaluated(value: Any) -> bool:
    """A call still written out (checked at load time, before its value is known)."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _CALL_NAMES


# --- maps and lists ---------------------------------------------------------------------


def map_merge(args: Any) -> dict[str, Any]:
    if not _is_list(args):
        raise _fail(
            'Incorrect arguments to "map_merge" should be: '
            '"map_merge" : [ { "key1": "val1" }, { "key2": "val2" } ]'
        )
    merged: dict[str, Any] = {}
    for item in args:
        if item is None:
            continue
        if not isinstance(item, dict):
            raise _fail(
                f"Incorrect arguments: Items to merge must be maps. {repr(item)[:200]} is type "
                f"{type(item).__name__} instead of a dict"
            )
        merged.update(item)
    return merged


_MAP_REPLACE_EXAMPLE: Final = (
    '"map_replace" : [ { "key1": "val1" }, {"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
)


def map_replace(args: Any) -> dict[str, Any]:
    def as_map(value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _fail(
                'Incorrect arguments: to "map_replace", arguments must be a list of maps. '
                f"Example:  {_MAP_REPLACE_EXAMPLE}"
            )
        return value

    if not _is_list(args) or len(args) != 2:
        raise _fail(f'Incorrect arguments to "map_replace" should be: {_MAP_REPLACE_EXAMPLE}')
    source, replacements = as_map(args[0]), as_map(args[1])
    if set(replacements) - {"keys", "values"}:
        raise _fail(f'Incorrect arguments to "map_replace" should be: {_MAP_REPLACE_EXAMPLE}')
    keys, values = as_map(replacements.get("keys")), as_map(replacements.get("values"))
    result: dict[str, Any] = {}
    for key, value in source.items():
        new_key = keys.get(key)
        if new_key is None:
            new_key = key
        elif new_key in source and new_key != key:
            raise _fail(f"key replacement {new_key} collides with a key in the input map")
        elif new_key in result:
            raise _fail(f"key replacement {new_key} collides with a key in the output map")
        try:
            result[new_key] = values.get(value, value)
        except TypeError:  # an unhashable value is never replaced
            result[new_key] = value
    return result


def _list_concat(fn: str, args: Any, *, unique: bool) -> list[Any]:
    if not _is_list(args):
        raise _fail(
            f'Incorrect arguments to "{fn}" should be: '
            f'"{fn}" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
        )
    joined: list[Any] = []
    for item in args:
        if item is None:
            continue
        if not _is_list(item):
            raise _fail(
                f"Incorrect arguments: Items to concat must be lists. {json.dumps(args)} "
                f"contains an item that is not a list: {json.dumps(item)}"
            )
        joined.extend(item)
    if not unique:
        return joined
    seen: list[Any] = []
    for item in joined:
        if item not in seen:
            seen.append(item)
    return seen


def list_concat(args: Any) -> list[Any]:
    return _list_concat("list_concat", args, unique=False)


def list_concat_unique(args: Any) -> list[Any]:
    return _list_concat("list_concat_unique", args, unique=True)


def filter_values(args: Any) -> Any:
    values, sequence = args
    if not sequence:
        return sequence
    if not _is_list(sequence):
        raise _fail('"filter" only works with lists')
    if not values:
        return sequence
    if not _is_list(values):
        raise _fail('"filter" filters a list of values')
    return [item for item in sequence if item not in values]


def contains(args: Any) -> bool:
    value, sequence = args
    if not isinstance(sequence, list | tuple | str):
        raise _fail('Second argument to "contains" should be a sequence.')
    if isinstance(sequence, str) and not isinstance(value, str):
        return False
    return value in sequence


def equals(args: Any) -> bool:
    first, second = args
    return bool(first == second)


def repeat(args: Any) -> list[Any]:
    """`repeat` as of HOT 2017-09-01: lists or maps (their keys), `permutations`."""
    for_each, body = args["for_each"], args["template"]
    nested = args.get("permutations", True)
    if not isinstance(for_each, dict):
        raise _fail('The "for_each" argument to "repeat" must contain a map')
    keys = list(for_each)
    lists: list[list[Any]] = []
    for value in for_each.values():
        if value is None:
            lists.append([])
        elif (isinstance(value, dict) and nested) or _is_list(value):
            lists.append(list(value))
        else:
            kinds = "lists or maps" if nested else "lists"
            raise _fail(f'The values of the "for_each" argument to "repeat" must be {kinds}')
    if not nested and len({len(v) for v in lists}) > 1:
        raise _fail("For repeat, the length of for_each values should be equal if no nested loop.")
    combos = itertools.product(*lists) if nested else zip(*lists, strict=False)
    return [_substitute(body, keys, list(combo)) for combo in combos]


def _substitute(body: Any, keys: list[str], values: list[Any]) -> Any:
    if isinstance(body, str):
        for key, value in zip(keys, values, strict=True):
            body = body.replace(key, value if isinstance(value, str) else str(value))
        return body
    if isinstance(body, list):
        return [_substitute(item, keys, values) for item in body]
    if isinstance(body, dict):
        return {_substitute(k, keys, values): _substitute(v, keys, values) for k, v in body.items()}
    return body


# --- yaql ----------------------------------------------------------------------------------

#: Heat's defaults for `[yaql] limit_iterators` and `memory_quota`.
_YAQL_OPTIONS: Final = {"yaql.limitIterators": 200, "yaql.memoryQuota": 10000}
_YAQL_EXAMPLE: Final = "yaql: expression: $.data.var1.sum() data: var1: [3, 2, 1]"


@cache
def _yaql() -> tuple[Any, Any]:
    """The parser and the root context, made once (a fifth of a second, at import).

    Templates are evaluated in workflow code, so the context has no clock (`datetime`)
    and no `random()`: a yaql expression gives the same value on every replay.
    """
    parser = yaql.YaqlFactory().create(_YAQL_OPTIONS)
    context = yaql.create_context(datetime=False)
    layer = context
    while layer is not None:
        for overloads in layer.collect_functions("random"):
            for definition in overloads:
                layer.delete_function(definition)
        layer = layer.parent
    return parser, context


# Made when this module is imported, outside any workflow sandbox: yaql's lexer looks
# itself up in `sys.modules`, which a sandboxed workflow task does not share.
_yaql()


def _yaql_parse(expression: Any) -> Any:
    if not isinstance(expression, str):
        raise _fail('The "expression" argument to yaql must contain a string.')
    try:
        return _yaql()[0](expression)
    except yaql_errors.YaqlException as exc:
        raise _fail(f"Bad expression {exc}.") from None


def yaql_value(args: Any) -> Any:
    """`yaql`: the expression evaluated on `$.data`."""
    statement = _yaql_parse(args["expression"])
    try:
        result = statement.evaluate(
            {"data": args.get("data", {})}, _yaql()[1].create_child_context()
        )
        return _plain(result)
    except (yaql_errors.YaqlException, ValueError, TypeError, KeyError, IndexError) as exc:
        raise _fail(f"yaql: {exc}") from None


def _plain(value: Any) -> Any:
    """yaql's sets, tuples and frozen dicts as the JSON shapes templates carry."""
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, Iterable):
        return [_plain(v) for v in value]
    return value


def _yaql_shape(args: Any) -> None:
    if not isinstance(args, dict):
        raise _fail('Arguments to "yaql" must be a map.')
    if "expression" not in args or set(args) - {"expression", "data"}:
        raise _fail(f'"yaql" syntax should be {_YAQL_EXAMPLE}')
    if not _unevaluated(args["expression"]):
        _yaql_parse(args["expression"])


#: function name → what it computes from evaluated arguments.
EVALUATORS: Final[dict[str, Callable[[Any], Any]]] = {
    "list_join": list_join,
    "str_replace": str_replace,
    "str_replace_strict": str_replace_strict,
    "str_replace_vstrict": str_replace_vstrict,
    "str_split": str_split,
    "digest": digest,
    "make_url": make_url,
    "map_merge": map_merge,
    "map_replace": map_replace,
    "list_concat": list_concat,
    "list_concat_unique": list_concat_unique,
    "filter": filter_values,
    "contains": contains,
    "repeat": repeat,
    "yaql": yaql_value,
    # HOT 2013-05-23's CloudFormation-style ones without a HOT twin (domain/hot/cfn_functions).
    "Fn::Select": select,
    "Fn::Split": split,
    "Fn::MemberListToMap": member_list_to_map,
}

# --- checks when a call is parsed --------------------------------------------------------


def _replace_shape(fn: str) -> Callable[[Any], None]:
    def check(args: Any) -> None:
        if not isinstance(args, dict):
            raise _fail(f'Arguments to "{fn}" must be a map')
        if "template" not in args or "params" not in args:
            raise _fail(
                f'"{fn}" syntax should be {fn}: template: This is var1 template var2 '
                "params: var1: a var2: string"
            )

    return check


def _list_of(fn: str, count: int, form: str) -> Callable[[Any], None]:
    def check(args: Any) -> None:
        if not _is_list(args):
            raise _fail(f'Argument to "{fn}" must be a list')
        if len(args) != count:
            raise _fail(f'Arguments to "{fn}" must be of the form: {form}')

    return check


def _repeat_shape(args: Any) -> None:
    if not isinstance(args, dict):
        raise _fail('Arguments to "repeat" must be a map')
    if "for_each" not in args or "template" not in args:
        raise _fail(
            '"repeat" syntax should be repeat: template: This is %var% '
            "for_each: %var%: ['a', 'b', 'c']"
        )
    if not isinstance(args.get("permutations", True), bool):
        raise _fail('"permutations" should be boolean type for repeat function.')
    if not isinstance(args["for_each"], dict) and not _unevaluated(args["for_each"]):
        raise _fail('The "for_each" argument to "repeat" must contain a map')


def _not_text(fn: str, example: str) -> Callable[[Any], None]:
    def check(args: Any) -> None:
        if isinstance(args, str | dict) and not _unevaluated(args):
            raise _fail(f'Incorrect arguments to "{fn}" should be: {example}')

    return check


def _make_url_shape(args: Any) -> None:
    if _unevaluated(args):
        return
    if not isinstance(args, dict):
        raise _fail('The arguments to "make_url" must be a map')
    _check_url_args(args)


#: function name → the check Heat makes of a call's arguments as written.
SHAPES: Final[dict[str, Callable[[Any], None]]] = {
    "str_replace": _replace_shape("str_replace"),
    "str_replace_strict": _replace_shape("str_replace_strict"),
    "str_replace_vstrict": _replace_shape("str_replace_vstrict"),
    "str_split": _not_text("str_split", _SPLIT_EXAMPLE),
    "repeat": _repeat_shape,
    "filter": _list_of("filter", 2, "[values, sequence]"),
    "contains": _list_of("contains", 2, "[value1, [value1, value2]]"),
    "equals": _list_of("equals", 2, "[value_1, value_2]"),
    "make_url": _make_url_shape,
    "yaql": _yaql_shape,
}

#: Every function a template may call (names recognised inside `make_url`'s checks).
_CALL_NAMES: Final = frozenset(
    {*EVALUATORS, "get_param", "get_resource", "get_attr", "get_file", "if", "equals"}
)
