"""Crash safety through the real CLI: scripts/kill_cycles.py SIGKILLs ingests, removals, index rebuilds and questions
at random moments, checks the library after each kill, and finally compares it with an uninterrupted run. CI runs
a few cycles; the figures in the notes come from 50 (`scripts/kill_cycles.py --cycles 50`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_killed_work_leaves_the_library_consistent_and_resumes_to_a_clean_runs_counts():
    out = subprocess.run([sys.executable, "scripts/kill_cycles.py", "--cycles", "8", "--filings", "12", "--seed", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1500, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "problems: 0" in out.stdout
    assert out.stdout.count("killed after") >= 4, out.stdout  # most cycles really killed something mid-run
