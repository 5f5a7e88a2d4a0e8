"""Heat's conditions (HOT 2016-10-14): the `conditions` section, a resource's or an
output's `condition`, and the `if` function.

Conditions depend on parameters only, so Warden evaluates them where a template meets
its parameters: `domain.hot.template.conditioned(template, params)` is the template
as Heat's engine sees it for those values — resources whose condition is false are not
in it, `if` calls are replaced by the branch they choose, outputs whose condition is
false have no value. Everything downstream (dependencies, plans, walks) reads that
template unchanged; a template without conditions comes back as the very same object.

`check_conditions()` runs when a template is loaded: every condition name must exist,
condition definitions may call only the condition functions, and an `if` must have its
three (HOT 2021-04-16: two or three) arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.hot.builtins import EVALUATORS, SHAPES, contains, equals, yaql_value
from domain.hot.functions import (
    get_param_value,
    outer_properties,
    references,
    static_value,
    with_member_inner_part,
)
from domain.hot.parts import OutputDef, ResourceDef, TemplateShape
from domain.hot.versions import CONDITION_FUNCTIONS as CONDITION_DOCS

__all__ = [
    "CONDITIONS_SINCE",
    "CONDITION_FUNCTIONS",
    "check_conditions",
    "enabled_parts",
    "has_if",
]

#: The first HOT version with conditions.
CONDITIONS_SINCE: Final = "2016-10-14"
#: The functions a condition may call → the first HOT version that has them there.
CONDITION_FUNCTIONS: Final[dict[str, str]] = {
    name: since for name, (since, _) in CONDITION_DOCS.items()
}
#: The condition functions that compute from values (`not`, `and`, `or` combine conditions).
CONDITION_EVALUATORS: Final = {"equals": equals, "contains": contains, "yaql": yaql_value}
#: HOT 2021-04-16's `if` may omit its false branch: the enclosing item is then left out.
_NULLABLE_IF_SINCE: Final = "2021-04-16"


class _Omitted:
    """What a two-argument `if` yields when false: the enclosing item is left out."""


_OMIT: Final = _Omitted()


def _call(value: Any) -> tuple[str, Any] | None:
    if isinstance(value, dict) and len(value) == 1:
        name, args = next(iter(value.items()))
        if isinstance(name, str):
            return name, args
    return None


def has_if(value: Any) -> bool:
    """Whether an `if` call appears anywhere in `value`."""
    if isinstance(value, dict):
        if len(value) == 1 and "if" in value:
            return True
        return any(has_if(v) for v in value.values())
    if isinstance(value, list):
        return any(has_if(v) for v in value)
    return False


# --- checks at load time ----------------------------------------------------------------


def check_conditions(template: TemplateShape) -> None:
    """Every condition definition, resource/output `condition` and `if` of `template`."""
    for name, definition in template.conditions.items():
        path = f"conditions.{name}"
        if not isinstance(definition, bool) and _call(definition) is None:
            raise InvalidRequest(
                f'Condition validation error: The definition of condition "{name}" is '
                f"invalid: {definition}"
            )
        _check_expression(template, definition, path)
    for name, res in template.resources.items():
        if res.condition is not None:
            _check_named(template, res.condition, f"resources.{name}.condition")
        for part, value in (
            ("properties", outer_properties(res)),
            ("metadata", res.metadata),
            ("update_policy", res.update_policy),
        ):
            _check_ifs(template, value, f"resources.{name}.{part}")
    for name, output in template.outputs.items():
        if output.condition is not None:
            _check_named(template, output.condition, f"outputs.{name}.condition")
        _check_ifs(template, output.value, f"outputs.{name}.value")


def _check_named(template: TemplateShape, condition: Any, path: str) -> None:
    if isinstance(condition, str) and condition not in template.conditions:
        raise InvalidRequest(f'{path}: Invalid condition "{condition}"')
    if not isinstance(condition, str | bool):
        _check_expression(template, condition, path)


def _children(value: Any, path: str) -> list[tuple[Any, str]]:
    """The items of a mapping or list, each with its path (nothing for a scalar)."""
    if isinstance(value, dict):
        return [(item, f"{path}.{key}") for key, item in value.items()]
    if isinstance(value, list):
        return [(item, f"{path}[{i}]") for i, item in enumerate(value)]
    return []


def _check_ifs(template: TemplateShape, value: Any, path: str) -> None:
    call = _call(value)
    if call is not None and call[0] == "if":
        args = call[1]
        counts = (2, 3) if template.version_date >= _NULLABLE_IF_SINCE else (3,)
        if not isinstance(args, list) or len(args) not in counts:
            form = "[condition_name, value_if_true, value_if_false]"
            raise InvalidRequest(f'{path}.if: Arguments to "if" must be of the form: {form}')
        _check_expression(template, args[0], f"{path}.if")
        for i, branch in enumerate(args[1:], start=1):
            _check_ifs(template, branch, f"{path}.if[{i}]")
        return
    for item, where in _children(value, path):
        _check_ifs(template, item, where)


def _check_expression(template: TemplateShape, expr: Any, path: str) -> None:
    """A condition: true/false, a condition's name, or a call of a condition function."""
    if isinstance(expr, bool):
        return
    if isinstance(expr, str):
        if expr not in template.conditions:
            raise InvalidRequest(f'{path}: Invalid condition "{expr}"')
        return
    call = _call(expr)
    if call is None:
        raise InvalidRequest(f"{path}: Invalid condition {expr!r}")
    name, args = call
    since = CONDITION_FUNCTIONS.get(name)
    if since is None or template.version_date < since:
        raise InvalidRequest(f'{path}: The function "{name}" is invalid in this context')
    _check_condition_call(template, name, args, expr, f"{path}.{name}")


def _check_condition_call(
    template: TemplateShape, name: str, args: Any, expr: Any, where: str
) -> None:
    if name == "not":
        if args is None:
            raise InvalidRequest(f'{where}: Argument to "not" must be a condition')
        _check_expression(template, args, where)
    elif name in ("and", "or"):
        if not isinstance(args, list):
            raise InvalidRequest(f'{where}: Arguments to "{name}" must be a list of conditions')
        if len(args) < 2:
            raise InvalidRequest(
                f'{where}: The minimum number of condition arguments to "{name}" is 2.'
            )
        for i, item in enumerate(args):
            _check_expression(template, item, f"{where}[{i}]")
    elif name == "get_param":
        _check_values(template, expr, where.removesuffix(".get_param"))
    else:
        try:
            SHAPES[name](args)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{where}: {exc.message}") from None
        _check_values(template, args, where)


def _check_values(template: TemplateShape, value: Any, path: str) -> None:
    """The values a condition compares: literals and `get_param` (Heat allows no more)."""
    call = _call(value)
    if call is not None:
        name, args = call
        if name == "get_param":
            parts = args if isinstance(args, list) else [args]
            if not parts or not isinstance(parts[0], str):
                raise InvalidRequest(
                    f"{path}.get_param: must be a parameter name or [name, key, ...]"
                )
            if parts[0] not in template.parameters and not parts[0].startswith("OS::"):
                raise InvalidRequest(
                    f'Invalid template: {path}.get_param: parameter "{parts[0]}" does not exist'
                )
            return
        if name in CONDITION_FUNCTIONS:
            _check_expression(template, value, path)
            return
        if name in EVALUATORS or name in ("get_resource", "get_attr", "if", "get_file"):
            raise InvalidRequest(f'{path}: The function "{name}" is invalid in this context')
    for item, where in _children(value, path):
        _check_values(template, item, where)


# --- evaluation -------------------------------------------------------------------------


class _Conditions:
    """The template's conditions, each evaluated once, when first asked for (Heat's)."""

    _IN_PROGRESS: Final = object()

    def __init__(self, definitions: Mapping[str, Any], params: Mapping[str, Any]) -> None:
        self._definitions = definitions
        self._params = params
        self._values: dict[str, object] = {}

    def enabled(self, condition: Any) -> bool:
        """A resource's or output's `condition`, an `if`'s first argument."""
        if condition is None:
            return True
        if isinstance(condition, bool):
            return condition
        if isinstance(condition, str):
            return self._named(condition)
        return self.enabled(self._evaluate(condition))

    def _named(self, name: str) -> bool:
        if name not in self._definitions:
            raise InvalidRequest(f'Invalid condition "{name}"')
        value = self._values.get(name)
        if value is self._IN_PROGRESS:
            raise InvalidRequest(
                f'Condition validation error: Circular definition for condition "{name}"'
            )
        if value is None:
            self._values[name] = self._IN_PROGRESS
            result = self._evaluate(self._definitions[name])
            if not isinstance(result, bool):
                raise InvalidRequest(
                    f'Condition validation error: The definition of condition "{name}" is '
                    f"invalid: {result}"
                )
            self._values[name] = value = result
        return bool(value)

    def _evaluate(self, expr: Any) -> Any:
        call = _call(expr)
        if call is None:
            return expr
        name, args = call
        if name == "get_param":
            return get_param_value(static_value(args, self._params), self._params)
        if name == "not":
            return not self.enabled(self._evaluate(args))
        if name == "and":
            return all(self.enabled(self._evaluate(a)) for a in args)
        if name == "or":
            return any(self.enabled(self._evaluate(a)) for a in args)
        if name in CONDITION_EVALUATORS:
            return CONDITION_EVALUATORS[name](self._value(args))
        return expr

    def _value(self, value: Any) -> Any:
        call = _call(value)
        if call is not None and call[0] in CONDITION_FUNCTIONS:
            return self._evaluate(value)
        if isinstance(value, dict):
            return {k: self._value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v) for v in value]
        return value

    def choose(self, value: Any) -> Any:
        """`value` with every `if` replaced by the branch it chooses."""
        call = _call(value)
        if call is not None and call[0] == "if":
            args = call[1]
            chosen = args[1] if self.enabled(args[0]) else (args[2] if len(args) > 2 else _OMIT)
            return chosen if chosen is _OMIT else self.choose(chosen)
        if isinstance(value, dict):
            chosen_items = {k: self.choose(v) for k, v in value.items()}
            return {k: v for k, v in chosen_items.items() if v is not _OMIT}
        if isinstance(value, list):
            return [v for v in (self.choose(item) for item in value) if v is not _OMIT]
        return value


def enabled_parts(
    template: TemplateShape, params: Mapping[str, Any]
) -> tuple[dict[str, ResourceDef], dict[str, OutputDef]]:
    """The resources and outputs of `template` as Heat's engine sees them for these
    parameter values (see the module); `domain.hot.template.conditioned` builds the
    template out of them."""
    conditions = _Conditions(template.conditions, params)
    enabled = {}
    for name, res in template.resources.items():
        try:
            if conditions.enabled(res.condition):
                enabled[name] = res
        except InvalidRequest as exc:
            raise InvalidRequest(f"resources.{name}.condition: {exc.message}") from None
    resources = {}
    for name, res in enabled.items():
        update: dict[str, Any] = {
            "properties": _chosen_properties(conditions, res),
            "metadata": conditions.choose(res.metadata),
            "update_policy": conditions.choose(res.update_policy),
            "depends_on": tuple(d for d in res.depends_on if d in enabled),
            "condition": None,
        }
        resources[name] = chosen = res.model_copy(update=update)
        _check_enabled_references(chosen.properties, enabled, f"resources.{name}")
        _check_enabled_references(chosen.metadata, enabled, f"resources.{name}")
    outputs = {}
    for name, output in template.outputs.items():
        try:
            shown = conditions.enabled(output.condition)
        except InvalidRequest as exc:
            raise InvalidRequest(f"outputs.{name}.condition: {exc.message}") from None
        value = conditions.choose(output.value) if shown else None
        value = None if value is _OMIT else value
        _check_enabled_references(value, enabled, f"outputs.{name}")
        outputs[name] = output.model_copy(update={"value": value, "condition": None})
    return resources, outputs


def _chosen_properties(conditions: _Conditions, res: ResourceDef) -> dict[str, Any]:
    """The properties with this template's `if` calls chosen; an inline nested template
    (a stack's `template`, a group member's) keeps its own, for its own conditions."""
    values = dict(res.properties)
    for name, value in outer_properties(res).items():
        chosen = conditions.choose(value)
        if chosen is _OMIT:
            values.pop(name, None)
        else:
            values[name] = chosen
    return with_member_inner_part(res, values)


def _check_enabled_references(value: Any, enabled: Mapping[str, Any], where: str) -> None:
    """Heat's rule: what an enabled resource or output reads must be enabled too."""
    for target in sorted(references(value)):
        if target not in enabled:
            raise InvalidRequest(f'The specified reference "{target}" (in {where}) is incorrect.')
