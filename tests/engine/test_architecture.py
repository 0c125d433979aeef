"""Architecture rules checked on the source: no import cycles in ``engine``, models below training, no Qt.

The graph comes from ``scripts/import_graph.py`` (loaded by path), which counts every import statement,
lazy ones inside functions included. The runtime half of the engine/GUI wall (every engine module imports
with ``sys.modules["PySide6"] = None``) is ``test_engine_imports_without_qt`` in ``test_store.py``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "import_graph.py"


@pytest.fixture(scope="module")
def import_graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is created
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def _describe(import_graph: ModuleType, cycles: list[list[str]], edges: list) -> str:
    lines = []
    for cycle in cycles:
        lines.append(" <-> ".join(cycle))
        lines.extend(f"  {e.describe()}" for e in import_graph.cycle_edges(cycle, edges))
    return "\n".join(lines)


def test_engine_has_no_import_cycles(import_graph: ModuleType) -> None:
    graph, edges = import_graph.build_graph(ROOT, "engine")
    assert len(graph) > 30 and "engine.models.registry" in graph
    cycles = import_graph.find_cycles(graph)
    assert cycles == [], "import cycles in engine (break each at one of these lines):\n" + _describe(
        import_graph, cycles, edges)


def test_the_model_layer_never_imports_training(import_graph: ModuleType) -> None:
    """Training builds on the model registry; the registry loads a trained reranker without engine.train."""
    _, edges = import_graph.build_graph(ROOT, "engine")
    upward = [e.describe() for e in edges
              if e.source.startswith("engine.models") and e.target.startswith("engine.train")]
    assert upward == []
    assert any(e.source.startswith("engine.train") and e.target == "engine.models.registry" for e in edges)


def test_no_engine_module_imports_qt_or_the_app_even_lazily(import_graph: ModuleType) -> None:
    # test_store's runtime check only sees module-level imports; this one sees the ones inside functions.
    assert import_graph.forbidden_imports(ROOT, "engine") == []


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_checker_sees_lazy_relative_and_type_only_imports(import_graph: ModuleType, tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from pkg.b import g\n    return g\n",  # lazy
        "pkg/b.py": "from . import c\n\ndef g():\n    return c\n",  # relative, names a module
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n",
        "pkg/sub/__init__.py": "from ..c import *\n",
        "pkg/leaf.py": "import os\nimport PySide6.QtCore\n",
    })
    graph, edges = import_graph.build_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.c"}
    assert graph["pkg.sub"] == {"pkg.c"} and graph["pkg.leaf"] == set()
    assert import_graph.find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    kinds = {(e.source, e.target): (e.lazy, e.type_only) for e in edges}
    assert kinds[("pkg.a", "pkg.b")] == (True, False) and kinds[("pkg.c", "pkg.a")] == (False, True)
    # Imports only a type checker runs can be left out; then the cycle is gone.
    runtime, _ = import_graph.build_graph(tmp_path, "pkg", include_type_only=False)
    assert import_graph.find_cycles(runtime) == []
    assert import_graph.forbidden_imports(tmp_path, "pkg") == ["pkg/leaf.py:2: import PySide6.QtCore"]

    out = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tmp_path), "--package", "pkg", "--quiet"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "cycle 1: pkg.a <-> pkg.b <-> pkg.c" in out.stdout
    assert "pkg/a.py:2, lazy): from pkg.b import g" in out.stdout
