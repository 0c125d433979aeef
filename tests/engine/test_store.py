"""SQLite migrations, index manifests, crash safety and the engine/GUI wall."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine.errors import IndexMismatchError, LibraryTooNewError
from engine.store import Library, migrations
from engine.store.hnsw import HnswIndex
from engine.store.library import RunStore

ROOT = Path(__file__).resolve().parent.parent.parent


def test_migrations_are_numbered_recorded_and_applied_once(tmp_path, monkeypatch):
    lib = Library(tmp_path)
    assert lib.migrations_applied == [name for _, name, _ in migrations.MIGRATIONS]
    assert lib.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    lib.close()
    nxt = len(migrations.MIGRATIONS) + 1
    extra = (nxt, "m_test_column", "ALTER TABLE filings ADD COLUMN note TEXT")
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, extra])
    lib = Library(tmp_path)
    assert lib.migrations_applied == ["m_test_column"]
    assert "note" in [r[1] for r in lib.conn.execute("PRAGMA table_info(filings)")]
    lib.close()
    assert Library(tmp_path).migrations_applied == []
    versions = [r[0] for r in Library(tmp_path).conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == list(range(1, nxt + 1))


def test_failed_migration_rolls_back(tmp_path, monkeypatch):
    Library(tmp_path).close()
    bad = (len(migrations.MIGRATIONS) + 1, "m_broken", "CREATE TABLE t2(x); INSERT INTO no_such_table VALUES (1)")
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, bad])
    with pytest.raises(Exception, match="no such table: no_such_table"):  # the broken step's own error, no other
        Library(tmp_path)
    monkeypatch.undo()
    lib = Library(tmp_path)
    assert "t2" not in [r[0] for r in lib.conn.execute("SELECT name FROM sqlite_master")]


def test_a_library_written_by_a_newer_version_is_refused_untouched(tmp_path, monkeypatch, capsys):
    Library(tmp_path).close()
    newer = (migrations.schema_version() + 1, "m_from_the_future", "CREATE TABLE future(x)")
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, newer])
    Library(tmp_path).close()  # the newer version migrates it
    monkeypatch.undo()
    db = tmp_path / "library.sqlite3"
    before = db.read_bytes()
    with pytest.raises(LibraryTooNewError, match=rf"library schema {newer[0]}; this version reads up to {newer[0] - 1}"):
        Library(tmp_path)
    assert db.read_bytes() == before
    from engine.cli import main

    assert main(["--home", str(tmp_path), "library"]) != 0
    assert "written by a newer FilingLens" in capsys.readouterr().err


def test_hnsw_manifest_round_trip_and_mismatch(tmp_path):
    ident = {"kind": "filing-summaries", "model_id": "m", "fingerprint": "abc", "dims": 8}
    idx = HnswIndex(tmp_path, "summ", ident)
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(20, 8)).astype(np.float32)
    idx.add(list(range(100, 120)), vecs)
    idx.delete([105])
    idx.save(generation=7)
    again = HnswIndex(tmp_path, "summ", ident)
    assert again.generation == 7 and len(again) == 19 and 105 not in again.labels()
    best = again.query(vecs[3], 1)
    assert best[0][0] == 103 and best[0][1] == pytest.approx(1.0, abs=1e-4)
    only_even = again.query(vecs[3], 3, lambda label: label % 2 == 0)
    assert all(label % 2 == 0 for label, _ in only_even)
    with pytest.raises(IndexMismatchError, match="fingerprint: index has 'abc', settings ask for 'other'"):
        HnswIndex(tmp_path, "summ", {**ident, "fingerprint": "other"})
    with pytest.raises(IndexMismatchError, match="dims"):
        HnswIndex(tmp_path, "summ", {**ident, "dims": 16})


def test_lexical_index_mismatch_on_other_chunking(ingested_demo, tmp_path):
    library, settings, _ = ingested_demo
    from engine.indexing import lexical_index

    other = settings.with_overrides(chunking={"size": 512})
    with pytest.raises(IndexMismatchError, match="chunking"):
        lexical_index(library, other)


def test_engine_imports_without_qt():
    code = (
        "import sys, pkgutil, importlib; sys.modules['PySide6'] = None; sys.modules['analyst_app'] = None\n"
        "import engine\n"
        "mods = [m.name for m in pkgutil.walk_packages(engine.__path__, 'engine.')]\n"
        "[importlib.import_module(m) for m in mods]\n"
        "heavy = [m for m in ('torch', 'llama_cpp', 'sentence_transformers') if m in sys.modules]\n"
        "print(len(mods), heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, heavy = out.stdout.split(" ", 1)
    assert int(count) > 10
    assert heavy.strip() == "[]", "importing engine modules must not import torch/llama_cpp eagerly"


def test_sigkill_mid_ingest_then_resume_is_consistent(tmp_path):
    """Kill the CLI with SIGKILL while it stores filings; a second run finishes and everything agrees."""
    from engine.demo_corpus import generate_corpus

    corpus = tmp_path / "corpus"
    specs = generate_corpus(corpus, 30, seed=3)
    home = tmp_path / "home"
    env = {**os.environ, "FILINGLENS_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "engine.cli", "ingest", str(corpus), "--workers", "2"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    db = home / "library.sqlite3"
    deadline = time.time() + 120
    stored = 0
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            try:
                lib = Library(home)
                stored = lib.count("filings")
                lib.close()
            except Exception:
                stored = 0
        if stored >= 5:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "ingest finished before it could be killed; the test corpus is too small"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    lib = Library(home)
    partial = lib.count("filings")
    assert 0 < partial < len(specs)
    assert lib.integrity_problems() == []
    lib.close()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lib = Library(home)
    assert lib.count("filings") == len(specs)
    assert lib.integrity_problems() == []
    from engine.indexing import lexical_index, summary_index
    from engine.models.registry import load_embedder
    from engine.settings import Settings

    settings = Settings(home=home)
    embedder = load_embedder(settings.models)
    assert summary_index(lib, settings, embedder).labels() == {f.id for f in lib.filings()}
    lex = lexical_index(lib, settings)
    assert lex.generation == lib.generation()
    assert sorted(lex.chunk_ids.tolist()) == [r[0] for r in lib.conn.execute("SELECT id FROM chunks ORDER BY id")]


def test_runs_left_running_by_a_dead_process_are_marked_interrupted(tmp_path):
    import socket

    from engine.store.library import RunStore

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    host = socket.gethostname()
    with Library(tmp_path) as lib:
        store = RunStore(lib)
        for rid in ("mine", "dead", "legacy", "remote"):
            store.create(rid, "ask", "q", "{}")
        owners = {"dead": f"{host}:{dead.stdout.strip()}", "legacy": "", "remote": "other-machine:1"}
        for rid, owner in owners.items():
            lib.conn.execute("UPDATE runs SET owner=? WHERE id=?", (owner, rid))
        # a run recorded as this process's that this process is not answering (written by an earlier process that had
        # the same pid, or left by a question this process abandoned) is over; "mine" is being answered right now
        lib.conn.execute("INSERT INTO runs(id, kind, question, status, started_at, owner) "
                         "VALUES ('stale', 'ask', 'q', 'running', '2020-01-01T00:00:00+00:00', ?)",
                         (f"{host}:{os.getpid()}",))
        statuses = {r["id"]: r["status"] for r in store.list()}
        assert statuses == {"mine": "running", "dead": "interrupted", "legacy": "interrupted", "remote": "running",
                            "stale": "interrupted"}
        assert "ended before the run finished" in store.get("dead")["error"]
        assert store.get("stale")["finished_at"] and store.get("mine")["finished_at"] is None
        assert store.settle_orphans() == 0  # settled once
        store.finish("mine", "answered", {})
        assert store.settle_orphans() == 0 and store.get("mine")["status"] == "answered"


def test_an_abandoned_question_is_recorded_as_interrupted_not_running(tmp_path, settings, embedder):
    from engine.pipeline import Models, build_pipeline
    from tests.engine.scripted import ScriptedChat

    with Library(settings.library_home()) as lib:
        steps = build_pipeline(settings, lib, Models(embedder, ScriptedChat(lambda *a: {}))).run_iter("Revenue 2022?")
        next(steps)  # the first stage ran; then the caller stops reading
        (row,) = RunStore(lib).list()
        assert row["status"] == "running"
        steps.close()
        (row,) = RunStore(lib).list()
        assert row["status"] == "interrupted" and "stopped reading" in row["error"] and row["finished_at"]


def test_runs_are_listed_by_who_asked_them(tmp_path):
    from engine.store.library import ANY_EVALUATION, RunStore

    with Library(tmp_path) as lib:
        store = RunStore(lib)
        store.create("asked", "hirec", "What was revenue?", "{}")
        store.create("e1a", "hirec", "q1", "{}", evaluation="/evals/fb")
        store.create("e1b", "hirec", "q2", "{}", evaluation="/evals/fb")
        store.create("e2a", "hirec", "q1", "{}", evaluation="/evals/dg")
        store.create("old", "hirec", "q3", "{}")  # an evaluation's run from before runs named their evaluation
        for rid in ("asked", "e1a", "e1b", "e2a", "old"):
            store.finish(rid, "answered", {})

        def ids(evaluation):
            return {r["id"] for r in store.list(100, evaluation=evaluation)}

        assert ids("") == {"asked", "old"} and ids("/evals/fb") == {"e1a", "e1b"}
        assert ids(ANY_EVALUATION) == {"e1a", "e1b", "e2a"} and len(ids(None)) == 5
        assert [(e, n) for e, n, _ in store.evaluations()] in ([("/evals/dg", 1), ("/evals/fb", 2)],
                                                              [("/evals/fb", 2), ("/evals/dg", 1)])
        assert store.link_evaluation(["old", "e1a", "nope"], "/evals/fb") == 1
        assert ids("") == {"asked"} and ids("/evals/fb") == {"e1a", "e1b", "old"}


def test_hnsw_adds_into_a_delta_beside_the_unchanged_base_and_merges_it_past_the_fraction(tmp_path):
    ident = {"kind": "filing-summaries", "model_id": "m", "fingerprint": "abc", "dims": 8}
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(300, 8)).astype(np.float32)
    first, second, third = tmp_path / "g1", tmp_path / "g2", tmp_path / "g3"
    for folder in (first, second, third):
        folder.mkdir()
    base = HnswIndex(first, "summ", ident, merge_fraction=0.1)
    base.add(list(range(200)), vecs[:200])
    base.save(generation=1)
    written = (first / "summ.hnsw").read_bytes()

    # the next set: 10 added and 3 removed, the base graph carried as a hard link and never written
    nxt = HnswIndex(first, "summ", ident, merge_fraction=0.1)
    nxt.delete([4, 5, 6])
    nxt.add(list(range(200, 210)), vecs[200:210])
    nxt.save(generation=2, folder=second)
    assert os.path.samefile(first / "summ.hnsw", second / "summ.hnsw")
    assert (first / "summ.hnsw").read_bytes() == written
    assert (second / "summ.delta.hnsw").stat().st_size < len(written) / 5
    again = HnswIndex(second, "summ", ident, merge_fraction=0.1)
    assert again.segments == 2 and len(again) == 207 and again.generation == 2
    assert again.labels() == set(range(200, 210)) | set(range(200)) - {4, 5, 6}
    for label in (3, 4, 205):  # each live vector is its own nearest; a removed one is never returned
        hits = [lb for lb, _ in again.query(vecs[label], 5)]
        assert (hits[0] == label) if label != 4 else (4 not in hits)
    assert [lb for lb, _ in again.query(vecs[205], 3, lambda lb: lb < 200)] == [
        lb for lb, _ in _single(vecs, set(range(200)) - {4, 5, 6}, ident, tmp_path).query(vecs[205], 3)]
    assert again.query_among(vecs[205], [205, 4, 7], 3)[0][0] == 205 and len(again.query_among(vecs[205], [4], 3)) == 0
    assert np.allclose(again.get_items([205, 7]), [v / np.linalg.norm(v) for v in vecs[[205, 7]]], atol=1e-5)
    with pytest.raises(KeyError):
        again.get_items([5])

    # a label removed from the base and added again (SQLite reuses ids) lives in the delta only, once
    again.add([6], vecs[250:251])
    assert len(again) == 208 and again.query(vecs[250], 1)[0][0] == 6
    # past the fraction (25 > 0.1 x 197) the delta is merged into the base, which is then written anew
    again.add(list(range(211, 225)), vecs[211:225])
    again.save(generation=3, folder=third)
    merged = HnswIndex(third, "summ", ident, merge_fraction=0.1)
    assert merged.segments == 1 and not (third / "summ.delta.hnsw").exists()
    assert not os.path.samefile(first / "summ.hnsw", third / "summ.hnsw")
    assert merged.labels() == again.labels() and len(merged) == 222
    assert merged.query(vecs[250], 1)[0][0] == 6 and merged.query(vecs[6], 1)[0][0] != 6


def _single(vecs, labels, ident, tmp_path):
    one = HnswIndex(tmp_path / "single", "summ", ident)
    one.add(sorted(labels), vecs[sorted(labels)])
    return one


def test_hnsw_reads_a_manifest_written_before_segments(tmp_path):
    import json

    ident = {"kind": "filing-summaries", "model_id": "m", "fingerprint": "abc", "dims": 8}
    vecs = np.random.default_rng(2).normal(size=(30, 8)).astype(np.float32)
    idx = HnswIndex(tmp_path, "summ", ident)
    idx.add(list(range(30)), vecs)
    idx.delete([3])
    idx.save(generation=4)
    manifest = json.loads((tmp_path / "summ.manifest.json").read_text())
    (segment,) = manifest.pop("segments")
    manifest |= {"capacity": segment["capacity"], "deleted": segment["deleted"]}  # the layout of schema <= 9
    (tmp_path / "summ.manifest.json").write_text(json.dumps(manifest))
    old = HnswIndex(tmp_path, "summ", ident)
    assert old.segments == 1 and len(old) == 29 and 3 not in old.labels() and old.query(vecs[7], 1)[0][0] == 7
