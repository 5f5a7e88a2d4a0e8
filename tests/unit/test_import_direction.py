"""DESIGN §2: api → workflows(refs)/domain/store, worker → workflows/activities,
workflows → domain (+ activity refs), activities → domain/store, domain → nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = [
    "domain",
    "store",
    "workflows",
    "activities",
    "simcloud",
    "api",
    "worker",
    "cli",
    "healthcheck",
    "config",
]
#: Which of Warden's own packages each layer may import.
ALLOWED: dict[str, set[str]] = {
    "domain": set(),
    "healthcheck": set(),
    "config": set(),
    "store": {"domain"},
    "workflows": {"domain", "activities"},
    "activities": {"domain", "store", "healthcheck", "config"},
    "simcloud": {"config"},
    "api": {"workflows", "domain", "store", "healthcheck", "config"},
    "worker": {"workflows", "activities", "domain", "store", "healthcheck", "config"},
    "cli": {"config", "workflows", "domain"},
}


def imported_layers(path: Path) -> set[str]:
    """Warden packages a module imports (absolute imports; relative ones stay inside)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_only_what_design_allows(layer: str) -> None:
    offenders = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        bad = imported_layers(path) - ALLOWED[layer] - {layer}
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)


def test_workflows_import_activities_only_for_refs() -> None:
    """Workflow modules may name activity classes, never run store or cloud code."""
    for path in (ROOT / "workflows").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("activities"):
                names = {alias.name for alias in node.names}
                assert all(n.endswith("Activities") for n in names), (path, names)


def test_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "mod.py"
    bad.write_text("from store.db import make_engine\nimport api.app\n")
    assert imported_layers(bad) == {"store", "api"}
