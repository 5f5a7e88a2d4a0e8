"""YAML as Heat reads templates and environments (heat/common/template_format.py).

PyYAML's safe loader turns `2013-05-23` into a date; Heat's keeps timestamps as the
text written, so `heat_template_version: 2013-05-23` and any date-looking value stay
strings, as they would in JSON.
"""

from __future__ import annotations

from typing import Any

import yaml


class HeatYamlLoader(yaml.SafeLoader):
    """The safe loader, timestamps kept as text."""


def _as_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    value: str = loader.construct_scalar(node)  # type: ignore[arg-type]
    return value


HeatYamlLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_text)


def load_yaml(text: str) -> Any:
    """Parse YAML (or JSON) text as Heat does; errors are PyYAML's."""
    return yaml.load(text, Loader=HeatYamlLoader)  # noqa: S506 - a SafeLoader subclass
