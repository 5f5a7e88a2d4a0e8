"""The CloudFormation-style functions of early HOT versions, as Heat keeps them.

HOT 2013-05-23 has `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Split`, `Fn::Replace`,
`Fn::Select`, `Fn::Base64` and `Fn::MemberListToMap` beside its own; 2014-10-16 and
2015-04-30 keep `Fn::Select`; later versions refuse them all (Heat's `Removed`). A
template is read with each call turned into its HOT twin where there is one (`Ref` is
`get_param` or `get_resource`, `Fn::GetAtt` is `get_attr`, `Fn::Join` is `list_join`,
`Fn::Replace` is `str_replace`, `Fn::Base64` is its argument, as Heat passes it on); the
others are evaluated as Heat's are (`domain/hot/builtins.py`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection
from typing import Any, Final

from domain.errors import InvalidRequest

#: Each function and the last HOT version that has it.
LAST_VERSION: Final = {
    "Ref": "2013-05-23",
    "Fn::GetAtt": "2013-05-23",
    "Fn::Join": "2013-05-23",
    "Fn::Split": "2013-05-23",
    "Fn::Replace": "2013-05-23",
    "Fn::Base64": "2013-05-23",
    "Fn::MemberListToMap": "2013-05-23",
    "Fn::GetAZs": "2013-05-23",
    "Fn::ResourceFacade": "2013-05-23",
    "Fn::Select": "2015-04-30",
}
#: Heat's description of each, as `GET …/template_versions/<v>/functions` lists them.
DESCRIPTIONS: Final = {
    "Ref": "A function for resolving parameters or resource references.",
    "Fn::GetAtt": "A function for resolving resource attributes.",
    "Fn::Join": "A function for joining strings.",
    "Fn::Split": "A function for splitting strings.",
    "Fn::Replace": "A function for performing string substitutions.",
    "Fn::Base64": "A placeholder function for converting to base64.",
    "Fn::MemberListToMap": "A function to convert lists with enumerated keys and values to "
    "mapping.",
    "Fn::Select": "A function for selecting an item from a list or map.",
}
#: The ones evaluated as themselves (no HOT twin).
EVALUATED: Final = ("Fn::Select", "Fn::Split", "Fn::MemberListToMap")
#: Heat has these; Warden does not yet (a 400 says so, never a silent pass).
_NOT_YET: Final = ("Fn::GetAZs", "Fn::ResourceFacade")


def cfn_functions_of(date: str) -> dict[str, str]:
    """The CFN-style functions HOT `date` lists, with their descriptions."""
    return {name: text for name, text in DESCRIPTIONS.items() if date <= LAST_VERSION[name]}


def hot_calls(value: Any, date: str, parameters: Collection[str], path: str) -> Any:
    """`value` with the CFN-style calls of HOT `date` turned into what Warden evaluates
    (the very same object when it has none); a call its version no longer has is Heat's
    400."""
    if isinstance(value, list):
        items = [hot_calls(v, date, parameters, f"{path}[{i}]") for i, v in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        name, args = next(iter(value.items()))
        if name in LAST_VERSION:
            return _call(name, args, date, parameters, f"{path}.{name}")
    mapped = {k: hot_calls(v, date, parameters, f"{path}.{k}") for k, v in value.items()}
    return value if all(mapped[k] is v for k, v in value.items()) else mapped


def _call(name: str, args: Any, date: str, parameters: Collection[str], where: str) -> Any:
    if date > LAST_VERSION[name]:
        raise InvalidRequest(
            f"{where}: The function {name} is not supported in this version of HOT."
        )
    if name in _NOT_YET:
        raise InvalidRequest(f"{where}: {name} is not supported by Warden yet.")
    args = hot_calls(args, date, parameters, where)
    if name == "Ref":
        if not isinstance(args, str):
            raise InvalidRequest(f"{where}: must be the name of a parameter or resource")
        known = args in parameters or args.startswith("OS::")
        return {"get_param": args} if known else {"get_resource": args}
    if name == "Fn::GetAtt":
        if not isinstance(args, list) or len(args) != 2:
            raise InvalidRequest(
                f'{where}: Arguments to "{name}" must be of the form [resource_name, attribute]'
            )
        return {"get_attr": args}
    if name == "Fn::Join":
        return {"list_join": args}
    if name == "Fn::Replace":
        if not isinstance(args, list) or len(args) != 2:
            raise InvalidRequest(
                f'{where}: Incorrect arguments to "{name}" should be: '
                '{"Fn::Replace": [ {"$var1": "foo", "%var2%": "bar"}, "$var1 is %var2%"]}'
            )
        return {"str_replace": {"template": args[1], "params": args[0]}}
    if name == "Fn::Base64":
        return args
    return {name: args}


# --- the evaluated ones (Heat's `cfn/functions.py`) ----------------------------------------


def select(args: Any) -> Any:
    """`Fn::Select`: `[index, list]` or `[key, map]` (a JSON string is read first); what is
    not there is ""."""
    if not isinstance(args, list) or len(args) != 2:
        raise InvalidRequest('Arguments to "Fn::Select" must be of the form [index, collection]')
    index, collection = args
    if collection == "" or collection is None:
        return ""
    if isinstance(collection, str):
        try:
            collection = json.loads(collection)
        except ValueError as err:
            raise InvalidRequest(f'"Fn::Select": {err}') from None
    if isinstance(collection, dict):
        if not isinstance(index, str):
            raise InvalidRequest('Index to "Fn::Select" must be a string')
        return collection.get(index, "")
    with contextlib.suppress(TypeError, ValueError):
        index = int(index)
    if isinstance(collection, list):
        if not isinstance(index, int):
            raise InvalidRequest('Index to "Fn::Select" must be an integer')
        return collection[index] if 0 <= index < len(collection) else ""
    raise InvalidRequest('Arguments to "Fn::Select" not fully resolved')


def split(args: Any) -> Any:
    """`Fn::Split`: `[delimiter, string]`."""
    if not isinstance(args, list) or len(args) != 2:
        raise InvalidRequest(
            'Incorrect arguments to "Fn::Split" should be: "Fn::Split" : [ ",", "str1,str2"]]'
        )
    delim, text = args
    if not isinstance(delim, str):
        raise InvalidRequest("Delimiter for Fn::Split must be string")
    if not isinstance(text, str):
        raise InvalidRequest(f"String to split must be string; got {type(text).__name__}")
    return text.split(delim)


def member_list_to_map(args: Any) -> Any:
    """`Fn::MemberListToMap`: `[key_name, value_name, ['.member.0.<key_name>=k', …]]`."""
    if not isinstance(args, list) or len(args) != 3 or not isinstance(args[2], list):
        raise InvalidRequest(
            'Wrong Arguments try: "{"Fn::MemberListToMap": [key_name, value_name, list]}"'
        )
    key_name, value_name, members = args
    keys: dict[str, str] = {}
    values: dict[str, str] = {}
    for member in members:
        name, _, content = str(member).partition("=")
        parts = name.split(".")
        if len(parts) < 2:
            continue
        if parts[-1] == key_name:
            keys[parts[-2]] = content
        elif parts[-1] == value_name:
            values[parts[-2]] = content
    return {keys[n]: values.get(n, "") for n in keys}
