"""Concurrent use: five `filinglens ask` processes answer at once on one library while an ingest adds filings to
it. No "database is locked", no lost run or trace, every answer right, the library consistent afterwards."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from engine.demo_corpus import generate_corpus
from engine.doctor import orphan_counts
from engine.store import Library

ROOT = Path(__file__).resolve().parent.parent.parent


def test_five_questions_at_once_while_an_ingest_runs(ingested_demo, demo_truth, tmp_path):
    library, _, _ = ingested_demo
    library.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    home = tmp_path / "lib"
    shutil.copytree(library.home, home, ignore=shutil.ignore_patterns("*-wal", "*-shm", "builder.*"))
    with Library(home) as copy:
        copy.conn.execute("DELETE FROM runs")
        before = copy.count("filings")
    more = tmp_path / "more"
    generate_corpus(more, 16, seed=11)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cli = [sys.executable, "-m", "engine.cli", "--home", str(home)]
    ingest = subprocess.Popen([*cli, "ingest", str(more)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    facts = [t for t in demo_truth if t["form"] == "10-K" and t["metric"] == "Total revenue"
             and t["fiscal_year_column"] == t["period"]]
    companies = {}
    for t in facts:
        companies.setdefault(t["company"], t)
    asked = list(companies.values())[:5] * (1 + 5 // max(1, len(companies)))
    asked = asked[:5]
    questions = [f"What was {t['company']}'s total revenue in fiscal {t['period']}, in USD millions?" for t in asked]
    asks = [subprocess.Popen([*cli, "ask", q], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for q in questions]
    peak = {p.pid: 0 for p in asks}
    watching = threading.Event()

    def watch() -> None:  # each question process's resident memory, sampled while they run
        import psutil

        while not watching.is_set():
            for p in asks:
                try:
                    peak[p.pid] = max(peak[p.pid], psutil.Process(p.pid).memory_info().rss)
                except psutil.Error:
                    pass
            watching.wait(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        outs = [p.communicate(timeout=600) for p in asks]
    finally:
        watching.set()
        watcher.join()
    ingest_out = ingest.communicate(timeout=600)

    for (out, err), p, t in zip(outs, asks, asked, strict=True):
        assert p.returncode == 0, err[-2000:]
        assert "database is locked" not in err and "Traceback" not in err, err[-2000:]
        answer = next(line for line in out.splitlines() if line.startswith("A: "))
        assert f"{t['value']:,.0f} USD millions" in answer, (answer, t)
    assert ingest.returncode == 0, ingest_out[1][-2000:]
    assert "database is locked" not in ingest_out[1]
    peak_mb = max(peak.values()) / 2**20
    print(f"\nlargest question process while loaded: {peak_mb:.0f} MB")
    assert 0 < peak_mb < 3000  # a question process (embedder, indexes, no chat model) stays well under 3 GB

    with Library(home) as lib:
        runs = lib.conn.execute("SELECT id, status, question FROM runs").fetchall()
        assert sorted(r["question"] for r in runs) == sorted(questions)
        assert {r["status"] for r in runs} == {"answered"}
        for r in runs:  # every run's whole trace: intent to answer
            stages = [e[0] for e in lib.conn.execute("SELECT stage FROM stage_events WHERE run_id=? ORDER BY seq",
                                                      (r["id"],))]
            assert stages[0] == "intent" and stages[-1] == "answer", stages
            assert json.loads(lib.conn.execute("SELECT result FROM runs WHERE id=?", (r["id"],)).fetchone()[0])
        assert lib.count("filings") == before + 16
        assert lib.integrity_problems() == [] and orphan_counts(lib.conn) == {}
