"""The import-graph reader behind the import-direction tests, on small made-up trees."""

from __future__ import annotations

from pathlib import Path

from tests.support.import_graph import Forbid, ImportGraph, violations


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Create `files` (path → source) under `root`, with every package's `__init__.py`."""
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in path.relative_to(root).parents:
            if folder != Path():
                (root / folder / "__init__.py").touch()
        path.write_text(source)


def test_forbidden_module_two_imports_away_is_found_with_its_chain(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "api/app.py": "from workflows.refs import Ref\n",
            "workflows/refs.py": "import typing\nif typing.TYPE_CHECKING:\n"
            "    from activities.store import StoreActivities\n",
            "activities/store.py": "import sqlalchemy\n",
        },
    )
    imports = ImportGraph.scan(tmp_path, ["api", "workflows", "activities"])
    rule = Forbid("api", ("activities",), "test")

    assert violations(rule, imports) == ["api.app → workflows.refs → activities.store"]
    assert violations(Forbid("workflows", ("api",), "test"), imports) == []


def test_a_parent_package_init_counts_as_loaded(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"api/app.py": "from workflows.refs import Ref\n", "workflows/refs.py": "Ref = 1\n"},
    )
    (tmp_path / "workflows/__init__.py").write_text("from store import db\n")
    (tmp_path / "store").mkdir()
    (tmp_path / "store/__init__.py").touch()
    (tmp_path / "store/db.py").write_text("")
    imports = ImportGraph.scan(tmp_path, ["api", "workflows", "store"])

    assert imports.loads("api.app") == {"api", "workflows", "workflows.refs", "store", "store.db"}


def test_cycle_through_a_type_only_import_is_reported(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "domain/hot/template.py": "from domain.hot.functions import resolve\n",
            "domain/hot/functions.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from .template import Template\n",
            "domain/errors.py": "",
        },
    )
    imports = ImportGraph.scan(tmp_path, ["domain"])

    assert imports.cycles() == [["domain.hot.functions", "domain.hot.template"]]


def test_package_init_that_re_exports_its_submodules_is_no_cycle(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "sim/app.py": "from sim import state, compute\nfrom sim.state import State\n",
            "sim/state.py": "",
            "sim/compute.py": "from . import state\n",
        },
    )
    (tmp_path / "sim/__init__.py").write_text("from sim.app import create_app\n")
    imports = ImportGraph.scan(tmp_path, ["sim"])

    assert imports.edges["sim.app"] == {"sim.state", "sim.compute"}
    assert imports.edges["sim.compute"] == {"sim.state"}
    assert imports.cycles() == []


def test_importing_a_name_from_the_own_package_init_is_a_cycle(tmp_path: Path) -> None:
    write_tree(tmp_path, {"sim/app.py": "from sim import create_app\n"})
    (tmp_path / "sim/__init__.py").write_text("from .app import create_app\n")
    imports = ImportGraph.scan(tmp_path, ["sim"])

    assert imports.cycles() == [["sim", "sim.app"]]
