"""`OS::Heat::Value`'s typing, as Heat's `reparse` types it."""

from __future__ import annotations

import pytest

from domain.errors import InvalidRequest
from domain.hot.template import load_template
from domain.stack.types.value import typed_value


def test_a_value_is_read_as_its_type() -> None:
    assert typed_value({"value": {"a": 1}}) == {"a": 1}
    assert typed_value({"value": "3", "type": "number"}) == 3
    assert typed_value({"value": ["a", "b"], "type": "comma_delimited_list"}) == ["a", "b"]
    assert typed_value({"value": {"k": [1]}, "type": "json"}) == {"k": [1]}
    assert typed_value({"value": "true", "type": "boolean"}) is True


@pytest.mark.parametrize(
    ("value", "kind"),
    # Heat's Value schema does not convert strings to lists or maps (no allow_conversion).
    [("three", "number"), ("a,b", "comma_delimited_list"), ('{"k": 1}', "json")],
)
def test_a_value_that_is_not_its_type_is_refused(value: str, kind: str) -> None:
    with pytest.raises(InvalidRequest, match="value: must be"):
        typed_value({"value": value, "type": kind})


def test_a_written_value_not_of_its_type_is_a_400_before_anything_runs() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "v": {"type": "OS::Heat::Value", "properties": {"value": "x", "type": "number"}}
        },
    }
    with pytest.raises(InvalidRequest, match=r"resources\.v\.properties\.value: must be a number"):
        load_template(template)
