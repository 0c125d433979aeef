"""Print the import graph of the ``engine`` package and fail when it has cycles.

Usage::

    python scripts/import_graph.py [--root DIR] [--package engine] [--quiet] [--runtime-only]

Every ``import``/``from … import`` statement counts, wherever it is: at module level, inside a function
(a lazy import is still a dependency, only a deferred one), and inside ``if TYPE_CHECKING:`` (left out
with ``--runtime-only``). ``from pkg import name`` depends on the module ``pkg.name`` when there is one,
else on ``pkg``. The implicit import of parent packages is not counted, as import-linter does not count it.

Cycles are the strongly connected components with more than one module (Tarjan's algorithm). For each
one the script prints the import lines that close it, so it can be broken where it is cheapest. The exit
status is 1 when there is a cycle, 0 otherwise.

The test ``tests/engine/test_architecture.py`` loads this file by path and calls :func:`build_graph`,
:func:`find_cycles` and :func:`forbidden_imports`.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Container, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class ImportEdge:
    """One import statement from an engine module to another.

    Attributes:
        source: The importing module, e.g. ``engine.models.registry``.
        target: The imported engine module.
        path: The importing file, relative to the root.
        lineno: The line of the import statement.
        line: The import statement's source text (first line).
        lazy: The statement is inside a function (runs when the function is called).
        type_only: The statement is under ``if TYPE_CHECKING:`` (never runs).
    """

    source: str
    target: str
    path: str
    lineno: int
    line: str
    lazy: bool
    type_only: bool

    def describe(self) -> str:
        kind = "type-only" if self.type_only else "lazy" if self.lazy else "module-level"
        return f"{self.source} -> {self.target}  ({self.path}:{self.lineno}, {kind}): {self.line}"


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Map every module of ``package`` under ``root`` to its file (``pkg/__init__.py`` names ``pkg``)."""
    out: dict[str, Path] = {}
    base = root / package
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk_imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Yield ``(statement, lazy, type_only)`` for every import statement in ``tree``."""
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, lazy, type_only = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, lazy, type_only
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            lazy = True
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, lazy, True) for child in node.body)
            stack.extend((child, lazy, type_only) for child in node.orelse)
            stack.append((node.test, lazy, type_only))
            continue
        stack.extend((child, lazy, type_only) for child in ast.iter_child_nodes(node))


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name a (possibly relative) ``from … import`` statement names."""
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def _owner(name: str, modules: Container[str]) -> str | None:
    """The longest module in ``modules`` that ``name`` is or lies inside (``a.b.c`` -> ``a.b``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imported_names(module: str, path: Path, tree: ast.AST) -> Iterator[tuple[str, str, ast.stmt, bool, bool]]:
    """What each import statement of ``module`` names: ``(name, fallback, statement, lazy, type_only)``.

    ``import a.b`` gives ``("a.b", "a.b")``; ``from a import b`` gives ``("a.b", "a")``: the dependency is
    the module ``a.b`` when there is one (as import-linter counts it), else ``a``, which defines ``b``.
    """
    is_package = path.name == "__init__.py"
    for node, lazy, type_only in _walk_imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, alias.name, node, lazy, type_only
            continue
        base = _absolute(module, is_package, node)
        for alias in node.names:
            name = base if alias.name == "*" else f"{base}.{alias.name}"
            yield name, base, node, lazy, type_only


def build_graph(
    root: Path = ROOT, package: str = "engine", *, include_type_only: bool = True
) -> tuple[dict[str, set[str]], list[ImportEdge]]:
    """The import graph of ``package``: ``{module: {imported modules of the package}}`` and its edges.

    Args:
        root: The folder holding the package.
        package: The top-level package to scan.
        include_type_only: Count imports under ``if TYPE_CHECKING:`` too.
    """
    files = module_files(root, package)
    graph: dict[str, set[str]] = {m: set() for m in files}
    edges: list[ImportEdge] = []
    for module, path in files.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        tree = ast.parse(source, filename=str(path))
        seen: set[tuple[str, int]] = set()
        for name, fallback, node, lazy, type_only in imported_names(module, path, tree):
            if type_only and not include_type_only:
                continue
            if name != package and not name.startswith(package + "."):
                continue
            target = name if name in files else _owner(fallback, files)
            if target is None or target == module or (target, node.lineno) in seen:
                continue
            seen.add((target, node.lineno))
            graph[module].add(target)
            edges.append(ImportEdge(module, target, str(path.relative_to(root)), node.lineno,
                                    lines[node.lineno - 1].strip(), lazy, type_only))
    return graph, edges


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit on deep graphs)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module, sorted."""
    return sorted(c for c in strongly_connected(graph) if len(c) > 1)


def cycle_edges(cycle: list[str], edges: list[ImportEdge]) -> list[ImportEdge]:
    """The import statements between members of one cycle."""
    members = set(cycle)
    return sorted((e for e in edges if e.source in members and e.target in members),
                  key=lambda e: (e.source, e.target, e.lineno))


def forbidden_imports(root: Path = ROOT, package: str = "engine",
                      forbidden: tuple[str, ...] = ("PySide6", "analyst_app")) -> list[str]:
    """Import statements of ``package`` (lazy ones included) that name a ``forbidden`` top-level package."""
    found: list[str] = []
    for module, path in module_files(root, package).items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for name, _, node, _, _ in imported_names(module, path, ast.parse(source, filename=str(path))):
            if name.split(".")[0] in forbidden:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return sorted(set(found))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="folder holding the package (default: repo root)")
    ap.add_argument("--package", default="engine")
    ap.add_argument("--quiet", action="store_true", help="print only the cycles")
    ap.add_argument("--runtime-only", action="store_true", help="ignore imports under `if TYPE_CHECKING:`")
    args = ap.parse_args(argv)
    graph, edges = build_graph(args.root, args.package, include_type_only=not args.runtime_only)
    if not args.quiet:
        for module in sorted(graph):
            print(f"{module} -> {', '.join(sorted(graph[module])) or '(none)'}")
        print()
    cycles = find_cycles(graph)
    print(f"{len(graph)} modules, {sum(len(v) for v in graph.values())} edges, {len(cycles)} cycle(s)")
    for n, cycle in enumerate(cycles, 1):
        print(f"cycle {n}: {' <-> '.join(cycle)}")
        for edge in cycle_edges(cycle, edges):
            print(f"  {edge.describe()}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
