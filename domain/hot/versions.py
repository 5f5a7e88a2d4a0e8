"""The HOT template versions Warden reads, their release-name aliases, and their functions.

Heat lists these at `GET /v1/{project_id}/template_versions`; the descriptions are the
first lines of Heat's own function docstrings, so clients show the same text. Warden
lists only the functions it evaluates (not `resource_facade`, nor the CFN formats).
"""

from __future__ import annotations

from typing import Final

from domain.errors import InvalidRequest, NotFound
from domain.hot.cfn_functions import cfn_functions_of

#: `heat_template_version.<date>` → its release-name aliases, as Heat's setup.cfg.
HOT_VERSIONS: Final[dict[str, tuple[str, ...]]] = {
    "2013-05-23": (),
    "2014-10-16": (),
    "2015-04-30": (),
    "2015-10-15": (),
    "2016-04-08": (),
    "2016-10-14": ("newton",),
    "2017-02-24": ("ocata",),
    "2017-09-01": ("pike",),
    "2018-03-02": ("queens",),
    "2018-08-31": ("rocky",),
    "2021-04-16": ("wallaby",),
}
PREFIX: Final = "heat_template_version."
#: The version Warden writes when it generates a template (Heat: the newest).
LATEST: Final = "2021-04-16"

_ALIASES: Final = {alias: date for date, names in HOT_VERSIONS.items() for alias in names}

#: function → (the first HOT version that has it, Heat's description).
FUNCTIONS: Final[dict[str, tuple[str, str]]] = {
    "get_param": ("2013-05-23", "A function for resolving parameter references."),
    "get_resource": ("2013-05-23", "A function for resolving resource references."),
    "get_attr": ("2013-05-23", "A function for resolving resource attributes."),
    "get_file": ("2013-05-23", "A function for including a file inline."),
    "str_replace": ("2013-05-23", "A function for performing string substitutions."),
    "list_join": ("2013-05-23", "A function for joining one or more lists of strings."),
    "repeat": ("2015-04-30", "A function for iterating over a list of items or a dict of keys."),
    "digest": ("2015-04-30", "A function for performing digest operations."),
    "str_split": ("2015-10-15", "A function for splitting delimited strings into a list."),
    "map_merge": ("2016-04-08", "A function for merging maps."),
    "map_replace": ("2016-10-14", "A function for performing substitutions on maps."),
    "yaql": ("2016-10-14", "A function for executing a yaql expression."),
    "if": ("2016-10-14", "A function to return corresponding value based on condition evaluation."),
    "filter": ("2017-02-24", "A function for filtering out values from lists."),
    "str_replace_strict": ("2017-02-24", "A function for performing string substitutions."),
    # Heat's own docstring for make_url repeats map_replace's; clients show this text.
    "make_url": ("2017-09-01", "A function for performing substitutions on maps."),
    "list_concat": ("2017-09-01", "A function for extending lists."),
    "str_replace_vstrict": ("2017-09-01", "A function for performing string substitutions."),
    "list_concat_unique": ("2017-09-01", "A function for extending lists with unique items."),
    "contains": (
        "2017-09-01",
        "A function for checking whether specific value is in sequence.",
    ),
}
#: The functions of a condition (`?with_condition_func=true`), as `FUNCTIONS`.
CONDITION_FUNCTIONS: Final[dict[str, tuple[str, str]]] = {
    "get_param": ("2016-10-14", "A function for resolving parameter references."),
    "equals": ("2016-10-14", "A function for comparing whether two values are equal."),
    "not": ("2016-10-14", "A function that acts as a NOT operator on a condition."),
    "and": ("2016-10-14", "A function that acts as an AND operator on conditions."),
    "or": ("2016-10-14", "A function that acts as an OR operator on conditions."),
    "yaql": ("2017-09-01", FUNCTIONS["yaql"][1]),
    "contains": FUNCTIONS["contains"],
}


def template_versions() -> list[dict[str, object]]:
    """Heat's `template_versions` list: every HOT version, dates first, with aliases."""
    return [
        {"version": PREFIX + date, "type": "hot", "aliases": [PREFIX + a for a in aliases]}
        for date, aliases in HOT_VERSIONS.items()
    ]


def canonical_version(version: str) -> str:
    """The date a `heat_template_version` value stands for (400 if Heat has no such one)."""
    date = _ALIASES.get(version, version)
    if date not in HOT_VERSIONS:
        known = ", ".join([*HOT_VERSIONS, *_ALIASES])
        raise InvalidRequest(
            f'The template version is invalid: "heat_template_version: {version}". '
            f'"heat_template_version" should be one of: {known}'
        )
    return date


def template_functions(version: str, *, conditions: bool = False) -> list[dict[str, str]]:
    """The functions of `heat_template_version.<version or alias>` (404 for others);
    with `conditions`, those a condition may call (none before HOT 2016-10-14)."""
    name = version.removeprefix(PREFIX) if version.startswith(PREFIX) else None
    date = _ALIASES.get(name or "", name)
    if date not in HOT_VERSIONS:
        raise NotFound(f"Template with version {version} not found")
    listed = [
        {"functions": function, "description": description}
        for function, (since, description) in (
            CONDITION_FUNCTIONS if conditions else FUNCTIONS
        ).items()
        if since <= date
    ]
    if conditions:
        return listed
    cfn = [{"functions": f, "description": d} for f, d in cfn_functions_of(date).items()]
    return listed + cfn
