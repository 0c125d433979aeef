"""Follow one question through the code and print the walk: which modules it visits, how often it climbs back up.

Usage::

    python scripts/question_walk.py --home LIBRARY "What was Acme's total revenue in FY2023?"

The question runs as ``filinglens ask`` runs it (the CLI's ``main``), under a profiler hook that records every
Python call and return inside the ``engine`` package (every engine module is imported first, so what their
import runs is not part of the walk). The walk is the sequence of modules the running code is in,
the walk is each call from one module into another, the first time that call edge is taken, in the order the run
takes them (a loop over a thousand chunks is one step). A module's *floor* is the layer its package is on in the
layers contract of ``pyproject.toml`` (import-linter), 0 the lowest; an older checkout's modules are first given
their names of today (``--renames``), so two checkouts are measured against the same written layers. Printed:

- rooms: distinct modules visited, and floors: distinct floors they are on;
- stays: steps of the walk, plus the first room;
- climbs back up: calls into a module on a higher floor (code below reaching up, through a callback or an object
  handed down);
- returns to a room already left: calls into a module visited before.

It also prints the engine's import edges that go up a floor (none while the layers contract holds). Run it on two
checkouts (``PYTHONPATH=<checkout>``) to compare before and after a change.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any


def floors(modules: list[str], contracts: Path, renames: dict[str, str]) -> dict[str, int]:
    """Each module's floor: the layer of the engine's layers contract (``pyproject.toml``) its top package is on,
    0 the lowest. A module of an older checkout is first given its name of today (``renames``), so both walks are
    measured against the same written layers."""
    data = tomllib.loads(contracts.read_text(encoding="utf-8"))
    layers = next(c["layers"] for c in data["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    floor_of = {name.strip(): len(layers) - 1 - i for i, layer in enumerate(layers)
                for name in layer.replace(":", "|").split("|")}
    out = {}
    for module in modules:
        for old in sorted(renames, key=len, reverse=True):
            if module == old or module.startswith(old + "."):
                module_now = renames[old] + module[len(old):]
                break
        else:
            module_now = module
        parts = module_now.split(".")
        if len(parts) > 1 and parts[1] in floor_of:
            out[module] = floor_of[parts[1]]
    return out


def record(run: Callable[[], Any], root: Path) -> list[tuple[str, str]]:
    """Run ``run`` and return its ``(event, module)`` sequence for the engine's Python frames under ``root``."""
    events: list[tuple[str, str]] = []
    names: dict[str, str | None] = {}

    def module_of(frame: FrameType) -> str | None:
        path = frame.f_code.co_filename
        if path not in names:
            try:
                rel = Path(path).resolve().relative_to(root / "engine")
            except ValueError:
                names[path] = None
            else:
                rel = "engine" / rel
                parts = list(rel.with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                names[path] = ".".join(parts)
        return names[path]

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        if event in ("call", "return"):
            module = module_of(frame)
            if module is not None:
                events.append((event, module))

    sys.setprofile(hook)
    try:
        run()
    finally:
        sys.setprofile(None)
    return events


def walk(events: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The question's walk: each call from one module into another, the first time that call edge is taken
    (a loop over a thousand chunks is one step, not a thousand), in the order the run takes them."""
    edges: dict[tuple[str, str], None] = {}
    stack: list[str] = []
    for event, module in events:
        if event == "call":
            caller = stack[-1] if stack else ""
            if caller and caller != module:
                edges.setdefault((caller, module))
            stack.append(module)
        elif stack:
            stack.pop()
    return list(edges)


def walk_figures(steps: list[tuple[str, str]], floor: dict[str, int]) -> dict[str, int]:
    """The walk's figures (see the module docstring)."""
    visited = {steps[0][0]} if steps else set()
    climbs = returns = 0
    for caller, callee in steps:
        climbs += floor.get(callee, 0) > floor.get(caller, 0)
        returns += callee in visited
        visited.add(callee)
    return {"rooms": len(visited), "floors": len({floor.get(m, 0) for m in visited}), "stays": len(steps) + 1,
            "climbs back up": climbs, "returns to a room already left": returns}


def upward_imports(floor: dict[str, int]) -> tuple[int, list[str]]:
    """The import edges of the engine (grimp: lazy and type-only imports counted) and those that go up a floor."""
    import grimp

    graph = grimp.build_graph("engine", include_external_packages=False)
    edges = [(m, t) for m in graph.modules for t in graph.find_modules_directly_imported_by(m)]
    up = sorted(f"{m} -> {t}" for m, t in edges if m in floor and t in floor and floor[t] > floor[m])
    return len(edges), up


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("question", nargs="?", help="the question (without one: the import edges that go up only)")
    ap.add_argument("--home", help="the library to ask")
    ap.add_argument("--show", action="store_true", help="print the walk itself")
    ap.add_argument("--contracts", type=Path, default=Path(__file__).resolve().parent.parent / "pyproject.toml",
                    help="the pyproject.toml whose layers contract gives the floors (default: this checkout's)")
    ap.add_argument("--renames", type=Path, help="lines 'old.module new.module' for an older checkout")
    args = ap.parse_args(argv)

    import importlib
    import pkgutil

    import engine
    import engine.cli

    root = Path(engine.__file__).resolve().parent.parent
    for info in pkgutil.walk_packages(engine.__path__, "engine."):  # imported before: the walk is the question's
        importlib.import_module(info.name)
    renames = dict(line.split() for line in args.renames.read_text().splitlines() if line.strip()) if args.renames \
        else {}
    modules = [info.name for info in pkgutil.walk_packages(engine.__path__, "engine.")]
    floor = floors(modules, args.contracts, renames)
    n_edges, up = upward_imports(floor)
    print(f"engine imports: {n_edges} edges, {len(up)} going up a floor" + "".join(f"\n  {u}" for u in up))
    if not args.question:
        return 0
    if not args.home:
        ap.error("a question needs --home LIBRARY")
    events = record(lambda: engine.cli.main(["--home", args.home, "ask", args.question]), root)
    steps = walk(events)
    figures = walk_figures(steps, floor)
    print(f"engine at {root}: {len(floor)} modules on {len(set(floor.values()))} floors")
    print("; ".join(f"{k} {v}" for k, v in figures.items()))
    if args.show:
        for caller, callee in steps:
            up = " (climbs up)" if floor.get(callee, 0) > floor.get(caller, 0) else ""
            print(f"  {caller} [{floor.get(caller, 0)}] -> {callee} [{floor.get(callee, 0)}]{up}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
