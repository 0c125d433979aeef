"""Readers never write: one builder at a time publishes index sets; questions, searches and eval read the last
complete one, even while a build runs, after a build was killed, and with filings removed since."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.errors import IndexDamagedError, IndexNotReadyError
from engine.indexing import index_status, open_indexes, summary_document, summary_index, sync_indexes
from engine.ingest import ingest
from engine.retrieval.search import Searcher
from engine.settings import Settings
from engine.store import Library
from engine.store.index_sets import CURRENT, builder_lock, leftover_builds, lock_is_free, read_current

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three small folders of fictional filings (3 each; every 3rd one HTML), none sharing a file."""
    from engine.demo_corpus import generate_corpus

    out = {}
    for name, seed in (("a", 101), ("b", 202), ("c", 303)):
        out[name] = tmp_path_factory.mktemp(f"corpus-{name}")
        generate_corpus(out[name], 3, seed=seed, html_every=3)
    return out


def _library(tmp_path: Path, folders: list[Path], embedder, *, build: bool = True) -> tuple[Library, Settings]:
    home = tmp_path / "lib"
    settings = Settings(home=home)
    library = Library(home)
    for folder in folders:
        ingest(library, [folder], settings)
    if build:
        sync_indexes(library, settings, embedder)
    return library, settings


def _index_files(library: Library) -> dict[str, int]:
    return {str(p.relative_to(library.home)): p.stat().st_mtime_ns for p in library.index_dir.rglob("*")}


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "FILINGLENS_HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def _revenue_question(folder: Path) -> str:
    truth = [json.loads(line) for line in (folder / "truth.jsonl").open()]
    fact = next(f for f in truth if f["form"] == "10-K" and f["metric"] == "Total revenue"
                and f["fiscal_year_column"] == f["period"])
    return f"What was {fact['company']}'s total revenue in fiscal {fact['period']}, in USD millions?"


def test_a_reader_behind_the_library_uses_the_published_set_and_writes_nothing(tmp_path, corpora, embedder):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    published = read_current(library.index_dir)
    assert published is not None and published.generation == library.generation()
    before = _index_files(library)

    ingest(library, [corpora["b"]], settings)  # stored, not indexed: as while an ingest runs
    indexes = open_indexes(library, settings, embedder)
    status = indexes.status
    assert status.ready and status.behind and status.pending == 3 and status.filings == 6
    assert "3 of 6 filings are not searchable yet" in status.message()
    assert "`filinglens index build`" in status.message()
    new_docs = {f.identity.doc_name for f in library.filings() if f.id not in published.filings}
    hits = Searcher(library, settings, embedder, indexes).search("total revenue", 20)
    assert hits.bm25 and not {h.chunk.doc_name for h in hits.fused} & new_docs
    assert _index_files(library) == before, "a reader wrote into the index folder"
    assert index_status(library).pending == 3

    sync_indexes(library, settings, embedder)
    after = open_indexes(library, settings, embedder)
    assert not after.status.behind and after.folder != published.folder
    assert len(after.summaries) == 6


def test_filings_removed_since_the_build_never_reach_retrieval(tmp_path, corpora, embedder):
    from engine.pipeline import Models, build_pipeline

    library, settings = _library(tmp_path, [corpora["a"], corpora["b"]], embedder)
    victim = library.filings()[-1]  # the highest id: SQLite gives it to the next filing stored
    library.remove_filings([victim.id])
    indexes = open_indexes(library, settings, embedder)
    assert indexes.status.removed == 1 and indexes.hidden == {victim.id}
    searcher = Searcher(library, settings, embedder, indexes)
    res = searcher.search(victim.identity.doc_name.split("_")[0] + " total revenue", 30)
    assert res.bm25 and all(h.chunk.filing_id != victim.id for h in res.bm25 + res.dense + res.fused)
    assert victim.id not in {fid for fid, _ in indexes.summaries.query(embedder.embed_batch(["revenue"])[0], 10)}
    pipeline = build_pipeline(settings, library, Models(embedder), indexes)
    who = victim.identity.registrant or victim.identity.doc_name
    run = pipeline.run(f"What was {who}'s total revenue?", stop_after="passages", store=False)
    assert run.status == "stopped"
    kept = next(t.payload for t in run.traces if t.stage == "documents")
    assert victim.identity.doc_name not in [c.doc_name for c in kept.candidates]

    # a new filing under the removed one's id is another filing: the reader leaves it out, the builder re-embeds it
    ingest(library, [corpora["c"]], settings)
    reused = library.filing(victim.id)
    assert reused.sha256 != victim.sha256
    assert victim.id in open_indexes(library, settings, embedder).hidden
    report = sync_indexes(library, settings, embedder)
    assert report.summaries_removed == 1 and report.summaries_added == 3
    stored = summary_index(library, settings, embedder).get_items([victim.id])[0]
    row = library.conn.execute("SELECT summary, lofin_summary FROM filings WHERE id=?", (victim.id,)).fetchone()
    fresh = embedder.embed_batch([summary_document(row[0], row[1])])[0]
    cos = float(stored @ fresh / (np.linalg.norm(stored) * np.linalg.norm(fresh)))
    assert cos > 0.999, "the reused id kept the removed filing's vector"


def test_no_published_index_is_a_message_not_a_traceback(tmp_path, corpora, embedder, capsys):
    library, settings = _library(tmp_path, [corpora["a"]], embedder, build=False)
    with pytest.raises(IndexNotReadyError, match="filinglens index build"):
        open_indexes(library, settings, embedder)
    assert main(["--home", str(library.home), "search", "total revenue"]) == 2
    err = capsys.readouterr().err
    assert "no search index yet" in err and "filinglens index build" in err and "Traceback" not in err
    assert main(["--home", str(library.home), "index", "verify"]) == 1
    assert "no index is published" in capsys.readouterr().out
    assert main(["--home", str(library.home), "index", "build"]) == 0
    assert main(["--home", str(library.home), "index", "verify"]) == 0
    assert "index: OK" in capsys.readouterr().out


def test_index_verify_reports_lag_and_torn_files_and_build_repairs_them(tmp_path, corpora, embedder, capsys):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    home = str(library.home)
    assert main(["--home", home, "index", "verify"]) == 0
    capsys.readouterr()
    ingest(library, [corpora["b"]], settings)
    assert main(["--home", home, "index", "verify"]) == 1
    out = capsys.readouterr().out
    assert "3 of 6 filings are not searchable yet" in out and "3 of 6 filings searchable" in out
    assert main(["--home", home, "index", "build"]) == 0
    assert main(["--home", home, "index", "verify"]) == 0
    capsys.readouterr()

    published = read_current(library.index_dir)
    torn = published.folder / "filing-summaries.hnsw"
    torn.write_bytes(torn.read_bytes()[:1000])
    assert main(["--home", home, "index", "verify"]) == 1
    assert "torn" in capsys.readouterr().out
    with pytest.raises(IndexDamagedError, match="index rebuild"):
        open_indexes(library, settings, embedder)
    assert main(["--home", home, "index", "build"]) == 0  # a damaged set is built again from scratch
    assert main(["--home", home, "index", "verify"]) == 0
    assert len(open_indexes(library, settings, embedder).summaries) == 6


def test_a_reader_during_a_build_in_another_process_reads_the_previous_set(tmp_path, corpora, embedder):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    old = read_current(library.index_dir)
    ingest(library, [corpora["b"]], settings)
    ready, go = tmp_path / "ready", tmp_path / "go"
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from engine.indexing import sync_indexes
        from engine.models.registry import load_embedder
        from engine.settings import Settings
        from engine.store import Library

        settings = Settings(home={str(library.home)!r})
        def progress(stage, done, total):
            if stage == "summary vectors":  # BM25 written to the build folder, vectors not yet: hold here
                Path({str(ready)!r}).touch()
                while not Path({str(go)!r}).exists():
                    time.sleep(0.05)
        sync_indexes(Library(settings.home), settings, load_embedder(settings.models), progress=progress)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env(library.home),
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 180
        while not ready.exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.time() < deadline
            time.sleep(0.1)
        assert leftover_builds(library.index_dir) and not lock_is_free(library.home)
        during = open_indexes(library, settings, embedder)
        assert during.folder == old.folder and during.status.pending == 3
        assert "an index build" in during.status.message()  # who is updating it, from builder.json
        assert Searcher(library, settings, embedder, during).search("total revenue", 5).bm25
        go.touch()
        assert proc.wait(180) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    after = open_indexes(library, settings, embedder)
    assert not after.status.behind and len(after.summaries) == 6
    assert lock_is_free(library.home) and not leftover_builds(library.index_dir)


KILLERS = {
    # the summary vectors half written into the build folder, then SIGKILL
    "mid-write": """
        import engine.store.hnsw as hnsw
        original = hnsw.HnswIndex.save
        def save(self, generation, folder=None):
            original(self, generation, folder)
            data = self.path.read_bytes()
            self.path.write_bytes(data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        hnsw.HnswIndex.save = save
    """,
    # the new set complete and renamed, killed before current.json names it
    "before-publish": """
        import engine.store.index_sets as sets
        original = sets.write_atomic
        def write_atomic(path, data):
            if path.name == sets.CURRENT:
                os.kill(os.getpid(), signal.SIGKILL)
            original(path, data)
        sets.write_atomic = write_atomic
    """,
}


@pytest.mark.parametrize("when", sorted(KILLERS))
def test_a_killed_build_leaves_the_lock_free_and_the_previous_set_in_use(tmp_path, corpora, embedder, when):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    old = read_current(library.index_dir)
    ingest(library, [corpora["b"]], settings)
    code = "import os, signal\n" + textwrap.dedent(KILLERS[when]) + textwrap.dedent(f"""
        from engine.indexing import sync_indexes
        from engine.models.registry import load_embedder
        from engine.settings import Settings
        from engine.store import Library
        settings = Settings(home={str(library.home)!r})
        sync_indexes(Library(settings.home), settings, load_embedder(settings.models))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(library.home), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]

    assert lock_is_free(library.home)
    assert read_current(library.index_dir).folder == old.folder
    reader = open_indexes(library, settings, embedder)
    assert reader.folder == old.folder and reader.status.pending == 3 and len(reader.summaries) == 3
    left = [p.name for p in library.index_dir.iterdir() if p.name not in (old.name, CURRENT)]
    assert left, "the killed build left nothing: it was not killed mid-way"

    report = sync_indexes(library, settings, embedder)  # the next builder cleans up and publishes
    assert set(left) <= set(report.removed_leftovers)
    assert sorted(p.name for p in library.index_dir.iterdir()) == sorted([old.name, report.published, CURRENT])
    assert len(open_indexes(library, settings, embedder).summaries) == 6


def test_a_second_builder_waits_for_the_lock_and_a_killed_holder_frees_it(tmp_path, corpora, embedder):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    ingest(library, [corpora["b"]], settings)
    code = textwrap.dedent(f"""
        import time
        from engine.store.index_sets import builder_lock
        with builder_lock({str(library.home)!r}, what="an ingest"):
            print("locked", flush=True)
            time.sleep(600)
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env(library.home),
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert not lock_is_free(library.home)
        messages: list[str] = []
        result: list[object] = []
        builder = threading.Thread(target=lambda: result.append(
            sync_indexes(library, settings, embedder, on_wait=messages.append)))
        builder.start()
        time.sleep(1.5)
        assert builder.is_alive() and not result, "the second builder did not wait"
        assert len(messages) == 1 and f"waiting for an ingest (pid {holder.pid}" in messages[0]
        os.kill(holder.pid, signal.SIGKILL)
        builder.join(120)
        assert not builder.is_alive() and result and result[0].published
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()
    assert lock_is_free(library.home)
    assert not open_indexes(library, settings, embedder).status.behind


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_across_threads(tmp_path):
    with builder_lock(tmp_path, what="outer"):
        with builder_lock(tmp_path, what="inner"):  # an ingest holding it calls the builder, which takes it again
            pass
        assert not lock_is_free(tmp_path)
        seen: list[bool] = []
        other = threading.Thread(target=lambda: seen.append(lock_is_free(tmp_path)))
        other.start()
        other.join()
        assert seen == [False]
    assert lock_is_free(tmp_path)


def test_a_legacy_index_is_read_until_the_first_build_replaces_it(tmp_path, corpora, embedder):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    published = read_current(library.index_dir)
    for path in published.folder.iterdir():  # the layout before index sets: one folder, a manifest per index
        if path.name != "set.json":
            path.rename(library.index_dir / path.name)
    (library.index_dir / CURRENT).unlink()
    shutil.rmtree(published.folder)

    legacy = open_indexes(library, settings, embedder)
    assert legacy.status.legacy and not legacy.status.behind and len(legacy.summaries) == 3
    ingest(library, [corpora["b"]], settings)
    assert open_indexes(library, settings, embedder).status.pending == 3
    report = sync_indexes(library, settings, embedder)
    assert report.summaries_added == 3 and report.summaries_removed == 0  # incremental from the legacy vectors
    assert sorted(p.name for p in library.index_dir.iterdir()) == sorted([report.published, CURRENT])


@pytest.mark.slow
def test_two_ingests_and_five_readers_at_once(tmp_path, corpora, embedder):
    """The reported failure: an ingest running while asks and searches start. Now every process ends cleanly,
    every question is stored as a run, the second ingest waits for the first, and the last index is current."""
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    home = library.home
    question = _revenue_question(corpora["a"])
    cli = [sys.executable, "-m", "engine.cli", "--home", str(home)]
    commands = {
        "ingest-b": [*cli, "ingest", str(corpora["b"])],
        "ingest-c": [*cli, "ingest", str(corpora["c"])],
        "ask-1": [*cli, "ask", question, "--model", "smollm2-135m"],
        "ask-2": [*cli, "ask", question, "--model", "smollm2-135m"],
        "search-1": [*cli, "search", "total revenue", "--mode", "bm25"],
        "search-2": [*cli, "search", "cash and cash equivalents"],
        "search-3": [*cli, "search", "net income", "-k", "3"],
    }
    runs_before = library.count("runs")
    procs = {name: subprocess.Popen(cmd, cwd=ROOT, env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for name, cmd in commands.items()}
    outcomes = {name: (p.wait(600), *p.communicate()) for name, p in procs.items()}
    for name, (rc, out, err) in outcomes.items():
        assert "Traceback" not in err, f"{name}: {err[-3000:]}"
        assert rc == 0 or (name.startswith("ask") and rc == 1), f"{name} exited {rc}: {err[-2000:]}"
    assert all("== bm25" in outcomes[n][1] for n in ("search-1", "search-2", "search-3"))
    waited = [n for n in ("ingest-b", "ingest-c") if "waiting for" in outcomes[n][2]]
    assert len(waited) == 1, "one ingest must have waited for the other"

    library = Library(home)
    assert library.count("filings") == 9 and library.integrity_problems() == []
    runs = library.conn.execute("SELECT status FROM runs").fetchall()
    assert len(runs) == runs_before + 2 and all(r[0] != "running" for r in runs)
    assert lock_is_free(home) and not leftover_builds(library.index_dir)
    final = open_indexes(library, settings, embedder)
    assert not final.status.behind and len(final.summaries) == 9


def test_chunk_vectors_cancelled_or_killed_are_resumed_by_the_next_build(tmp_path, corpora, embedder, capsys):
    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    settings = settings.with_overrides(retrieval={"chunk_vectors": True}, models={"embed_batch": 8})
    total = library.count("chunks")
    assert total > 24
    # cancelled after two batches: published with the vectors done, marked incomplete
    done: list[int] = []
    report = sync_indexes(library, settings, embedder, progress=lambda s, d, t: done.append(d) if s == "chunk vectors"
                          else None, cancel=lambda: len(done) >= 2)
    assert not report.chunk_vectors_complete and report.chunk_vectors_added == total
    partial = open_indexes(library, settings, embedder).chunk_vectors
    assert partial is not None and len(partial) == 16
    assert main(["--home", str(library.home), "index", "verify"]) == 1
    assert "chunk vectors are incomplete" in capsys.readouterr().out

    # killed after a checkpoint: the next build starts from the checkpoint, not from the published 16
    code = textwrap.dedent(f"""
        import os, signal
        import engine.indexing as indexing
        from engine.models.registry import load_embedder
        from engine.settings import Settings
        from engine.store import Library
        indexing.CHECKPOINT_BATCHES = 1
        settings = Settings(home={str(library.home)!r}).with_overrides(retrieval={{"chunk_vectors": True}},
                                                                     models={{"embed_batch": 8}})
        def progress(stage, done, total):
            if stage == "chunk vectors" and done >= 16:  # one batch checkpointed (24 vectors), the next one not
                os.kill(os.getpid(), signal.SIGKILL)
        indexing.sync_indexes(Library(settings.home), settings, load_embedder(settings.models), progress=progress)
    """)
    killed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(library.home), capture_output=True,
                            text=True, timeout=300, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert (library.index_dir / ".resume" / "chunk-vectors.hnsw").exists() and lock_is_free(library.home)
    assert len(open_indexes(library, settings, embedder).chunk_vectors) == 16  # readers: the published ones
    report = sync_indexes(library, settings, embedder)
    assert report.chunk_vectors_complete and report.chunk_vectors_added == total - 24
    final = open_indexes(library, settings, embedder)
    assert len(final.chunk_vectors) == total and not (library.index_dir / ".resume").exists()
    assert main(["--home", str(library.home), "index", "verify"]) == 0


def test_an_ingest_appends_summary_vectors_beside_the_published_graph(tmp_path, corpora, embedder):
    """Adding filings writes a delta graph and hard-links the published base (neither rewritten nor hashed again);
    questions see both; the delta is merged once it outgrows retrieval.hnsw_merge_fraction."""
    from engine.indexing import verify_indexes

    library, settings = _library(tmp_path, [corpora["a"]], embedder)
    first = read_current(library.index_dir)
    ingest(library, [corpora["b"]], settings)
    sync_indexes(library, settings.with_overrides(retrieval={"hnsw_merge_fraction": 1.0}), embedder)
    second = read_current(library.index_dir)
    assert second.folder != first.folder
    assert os.path.samefile(first.folder / "filing-summaries.hnsw", second.folder / "filing-summaries.hnsw")
    assert second.files["filing-summaries.hnsw"] == first.files["filing-summaries.hnsw"]
    assert (second.folder / "filing-summaries.delta.hnsw").exists()
    summaries = summary_index(library, settings, embedder)
    assert summaries.segments == 2 and summaries.labels() == {f.id for f in library.filings()}
    assert verify_indexes(library, settings, embedder).ok
    for filing in library.filings():  # every filing, base or delta, is found by its own summary
        row = library.conn.execute("SELECT summary, lofin_summary FROM filings WHERE id=?", (filing.id,)).fetchone()
        best = summaries.query(embedder.embed_batch([summary_document(row[0], row[1])])[0], 1)
        assert best[0][0] == filing.id

    ingest(library, [corpora["c"]], settings)
    sync_indexes(library, settings.with_overrides(retrieval={"hnsw_merge_fraction": 0.1}), embedder)
    third = read_current(library.index_dir)
    assert not (third.folder / "filing-summaries.delta.hnsw").exists()
    merged = summary_index(library, settings, embedder)
    assert merged.segments == 1 and merged.labels() == {f.id for f in library.filings()} and len(merged) == 9
    assert verify_indexes(library, settings, embedder).ok
