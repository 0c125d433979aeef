"""The architecture's rules, as import-linter contracts in ``pyproject.toml``: the engine's floors, no cycle inside
any package, no Qt or app in the engine, the CLI and the app through the session. The runtime half of the
engine/GUI wall (every engine module imports with ``sys.modules["PySide6"] = None``, and none loads torch or
llama.cpp eagerly) is ``test_engine_imports_without_qt`` in ``test_store.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_import_contracts_hold() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 5 kept, 0 broken." in done.stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_contracts_see_lazy_and_type_only_imports_and_cycles(tmp_path: Path) -> None:
    """The same kinds of contract over a small package that breaks each: a lower floor importing a higher one
    inside a function, a cycle closed by an import only a type checker runs, a lazy import of Qt."""
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/top.py": "from pkg import low\n",
        "pkg/low.py": "def f():\n    from pkg.top import g  # lazy, and upward\n    return g\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/a.py": "from pkg.sub import b\n",
        "pkg/sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import a\n",
        "pkg/gui.py": "def show():\n    import PySide6.QtCore\n",
        "contracts.toml": "\n".join([
            "[tool.importlinter]", 'root_packages = ["pkg"]', "include_external_packages = true",
            "[[tool.importlinter.contracts]]", 'name = "floors"', 'type = "layers"', 'containers = ["pkg"]',
            'layers = ["top", "low"]',
            "[[tool.importlinter.contracts]]", 'name = "cycles"', 'type = "acyclic_siblings"', 'ancestors = ["pkg"]',
            "[[tool.importlinter.contracts]]", 'name = "qt"', 'type = "forbidden"', 'source_modules = ["pkg"]',
            'forbidden_modules = ["PySide6"]', ""]),
    })
    done = _lint(tmp_path, "contracts.toml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Contracts: 0 kept, 3 broken." in done.stdout, done.stdout
    assert "pkg.low -> pkg.top (l.2)" in done.stdout
    assert "pkg.gui -> PySide6" in done.stdout
