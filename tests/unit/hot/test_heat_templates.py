"""Heat's own example templates (openstack/heat-templates `hot/`, `cfn/`) load as Heat loads
them."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.hot.template import load_template
from domain.hot.yaml_format import load_yaml

TEMPLATES = Path(__file__).parents[2] / "fixtures" / "heat_templates"
NAMES = sorted(p.name for p in (*TEMPLATES.glob("*.yaml"), *TEMPLATES.glob("*.template")))


def test_the_corpus_is_there() -> None:
    assert len(NAMES) == 20
    assert sum(name.startswith("cfn__") for name in NAMES) == 3
    assert "hello_world.yaml" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_upstream_template_validates(name: str) -> None:
    template = load_template(load_yaml((TEMPLATES / name).read_text()))
    assert template.resources
