"""Warden's module graph, read from the source with `ast` (nothing is imported).

An edge `a → b` means module `a` names module `b` in an import statement, wherever the
statement sits (top level, a function, `if TYPE_CHECKING:`): a type-only import is still
a dependency of the design, and a cycle through one is still a cycle. `loads()` follows
the edges transitively and adds the parent packages Python runs first
(`import a.b.c` executes `a/__init__.py` and `a/b/__init__.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: Directories never scanned: generated migrations, caches, virtualenvs.
_SKIPPED_PARTS = frozenset({"migrations", "__pycache__", ".venv", "var"})


def module_name(root: Path, path: Path) -> str:
    """`domain/hot/template.py` → `domain.hot.template`; `domain/__init__.py` → `domain`."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def parents(module: str) -> list[str]:
    """The packages Python imports before `module`: `a.b.c` → `["a", "a.b"]`."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a `from … import` statement reads from."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _named_modules(
    tree: ast.AST, module: str, is_package: bool, known: Collection[str]
) -> Iterator[str]:
    """Every scanned module an import statement in `tree` names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            submodules = {f"{source}.{alias.name}" for alias in node.names} & set(known)
            yield from submodules
            # The package itself is a dependency only for the names that are not its
            # submodules (`from pkg import sub` runs pkg as a parent anyway).
            if len(submodules) < len(node.names) and source in known:
                yield source


@dataclass(frozen=True)
class Forbid:
    """Modules under `importer` must not load modules under any of `targets`."""

    importer: str
    targets: tuple[str, ...]
    why: str

    def __str__(self) -> str:
        return f"{self.importer} ↛ {', '.join(self.targets)}"


@dataclass(frozen=True)
class ImportGraph:
    """Modules of the scanned packages and the modules each one imports."""

    edges: dict[str, frozenset[str]]

    @classmethod
    def scan(cls, root: Path, packages: Iterable[str]) -> ImportGraph:
        """Parse every module of `packages` (top-level directories under `root`)."""
        paths = {
            module_name(root, path): path
            for package in packages
            for path in sorted((root / package).rglob("*.py"))
            if not _SKIPPED_PARTS & set(path.relative_to(root).parts)
        }
        edges = {}
        for module, path in paths.items():
            tree = ast.parse(path.read_text(), filename=str(path))
            named = _named_modules(tree, module, _is_package(path), paths.keys())
            edges[module] = frozenset(named) - {module}
        return cls(edges)

    def loads(self, module: str) -> set[str]:
        """Every scanned module that importing `module` executes, itself excluded."""
        seen: set[str] = set()
        todo = [module]
        while todo:
            current = todo.pop()
            for target in [*self.edges.get(current, ()), *parents(current)]:
                if target not in seen and target in self.edges:
                    seen.add(target)
                    todo.append(target)
        seen.discard(module)
        return seen

    def path(self, source: str, is_target: Callable[[str], bool]) -> list[str]:
        """The shortest chain of imports from `source` to a module `is_target` accepts."""
        came_from: dict[str, str] = {}
        frontier = [source]
        while frontier:
            following = []
            for current in frontier:
                for nxt in sorted({*self.edges.get(current, ()), *parents(current)}):
                    if nxt in came_from or nxt == source or nxt not in self.edges:
                        continue
                    came_from[nxt] = current
                    if is_target(nxt):
                        return _walk_back(came_from, source, nxt)
                    following.append(nxt)
            frontier = following
        return []

    def cycles(self) -> list[list[str]]:
        """The import cycles: strongly connected components of two or more modules."""
        return [sorted(c) for c in _strongly_connected(self.edges) if len(c) > 1]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(rule: Forbid, imports: ImportGraph) -> list[str]:
    """Each module under `rule.importer` that loads a forbidden one, with the chain."""

    def forbidden(module: str) -> bool:
        return any(_under(module, target) for target in rule.targets)

    importers = sorted(m for m in imports.edges if _under(m, rule.importer))
    chains = (imports.path(module, forbidden) for module in importers)
    return [" → ".join(chain) for chain in chains if chain]


def _walk_back(came_from: dict[str, str], source: str, target: str) -> list[str]:
    chain = [target]
    while chain[-1] != source:
        chain.append(came_from[chain[-1]])
    return chain[::-1]


def _strongly_connected(edges: dict[str, frozenset[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative so that deep graphs do not hit the recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in edges), None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    found.append(_pop_component(stack, on_stack, node))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> set[str]:
    component: set[str] = set()
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.add(member)
        if member == root:
            return component
