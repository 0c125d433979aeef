"""mypy over ``engine/`` with the ``[tool.mypy]`` settings of pyproject.toml: this is how CI type-checks,
since CI runs the README's pytest command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_passes_mypy() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900,
                         check=False)
    assert out.returncode == 0, f"mypy found problems (run `python -m mypy` from the repo root):\n{out.stdout}{out.stderr}"
