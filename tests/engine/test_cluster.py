"""Ingest on Ray (``filinglens ingest --ray``): a real local Ray (2 CPUs) reading the demo corpus.

The library it makes is the local ingest's, row for row; a reader killed mid-batch is restarted and its files
read again, none stored twice; a cancelled ingest resumes; without Ray, ``--ray`` says how to install it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from engine.indexing import sync_indexes
from engine.ingest import ingest
from engine.ingest.cluster import CachedEmbedder, RayUnavailableError, VectorCache, import_ray, plan
from engine.settings import Settings
from engine.store import Library

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def content(home: Path) -> dict[str, tuple]:
    """Everything ingest stored, by file sha256, without row ids, paths and times (which differ by run)."""
    conn = sqlite3.connect(home / "library.sqlite3")
    skip = {"id", "path", "ingested_at"}
    cols = [r[1] for r in conn.execute("PRAGMA table_info(filings)") if r[1] not in skip]
    out = {}
    for fid, *row in conn.execute(f"SELECT id, {', '.join(cols)} FROM filings"):
        pages = conn.execute("SELECT page_index, text, image_only, printed_folio FROM pages WHERE filing_id = ? "
                             "ORDER BY page_index", (fid,)).fetchall()
        chunks = conn.execute("SELECT page_index, seq, char_start, char_end, kind, context, text FROM chunks "
                              "WHERE filing_id = ? ORDER BY page_index, seq", (fid,)).fetchall()
        fact_cols = [r[1] for r in conn.execute("PRAGMA table_info(facts)") if r[1] not in ("id", "filing_id",
                                                                                              "chunk_id")]
        facts = conn.execute(f"SELECT c.page_index, c.seq, {', '.join('f.' + c for c in fact_cols)} FROM facts f "
                             "LEFT JOIN chunks c ON c.id = f.chunk_id WHERE f.filing_id = ? ORDER BY f.page_index, "
                             "f.char_start, f.col, f.label", (fid,)).fetchall()
        out[row[cols.index("sha256")]] = (tuple(row), tuple(pages), tuple(chunks), tuple(facts))
    conn.close()
    return out


def ray_settings(home: Path, **ingest_fields) -> Settings:
    return Settings(home=home).with_overrides(ingest={"ray": "local", **ingest_fields})


def test_ray_ingest_stores_the_local_library(ray_local, tmp_path, demo_dir, ingested_demo, embedder):
    local_library, _, _ = ingested_demo
    settings = ray_settings(tmp_path / "lib")
    vectors = VectorCache()
    with Library(settings.library_home()) as library:
        report = ingest(library, [demo_dir], settings, vectors=vectors)
        assert report.count("added") == 8 and not report.count("failed"), report.summary()
        cached = CachedEmbedder(embedder, vectors)
        sync_indexes(library, settings, cached)
    assert content(settings.library_home()) == content(local_library.home)
    assert len(vectors) == 8 and vectors.fingerprint == embedder.fingerprint
    assert cached.hits == 8  # every summary vector came from the cluster, none was embedded again here
    # and they are the vectors this machine makes of the same summaries
    with Library(settings.library_home()) as library:
        docs = [r[0] for r in library.conn.execute("SELECT summary FROM filings ORDER BY id")]
        lofin = [r[0] for r in library.conn.execute("SELECT lofin_summary FROM filings ORDER BY id")]
    from engine.indexing import summary_document

    texts = [summary_document(d, s) for d, s in zip(docs, lofin)]
    assert np.allclose(cached.embed_batch(texts), embedder.embed_batch(texts), atol=1e-4)


def _reader_pids() -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any("Reader" in part for part in (p.info["cmdline"] or [])) and "ray::" in " ".join(p.info["cmdline"])]


def test_a_killed_reader_is_restarted_and_no_filing_is_stored_twice(ray_local, tmp_path, demo_dir, ingested_demo):
    local_library, _, _ = ingested_demo
    settings = ray_settings(tmp_path / "lib", file_timeout_s=120)
    killed: list[int] = []

    def kill_one_reader() -> None:  # while the first files are being read: SIGKILL a reader actor's process
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            pids = _reader_pids()
            if pids:
                time.sleep(1.0)  # let it take a batch
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.1)

    killer = threading.Thread(target=kill_one_reader, daemon=True)
    killer.start()
    with Library(settings.library_home()) as library:
        report = ingest(library, [demo_dir], settings)
    killer.join()
    assert killed, "no reader process was found to kill"
    assert report.count("added") == 8 and not report.count("failed"), report.summary()
    stored = content(settings.library_home())
    assert stored == content(local_library.home)
    with Library(settings.library_home()) as library:
        shas = [r[0] for r in library.conn.execute("SELECT sha256 FROM filings")]
        assert len(shas) == len(set(shas)) == 8
        assert library.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_cancelled_ray_ingest_resumes(ray_local, tmp_path, demo_dir, ingested_demo):
    local_library, _, _ = ingested_demo
    settings = ray_settings(tmp_path / "lib")
    with Library(settings.library_home()) as library:
        stored: list[str] = []
        report = ingest(library, [demo_dir], settings, cancel=lambda: len(stored) >= 2,
                        on_event=lambda ev: stored.append(ev.path) if ev.status == "added" else None)
        assert report.cancelled and report.count("added") == 2
        assert library.count("filings") == 2
        again = ingest(library, [demo_dir], settings)
        assert again.count("unchanged") == 2 and again.count("added") == 6, again.summary()
    assert content(settings.library_home()) == content(local_library.home)


def test_ingest_cli_starts_and_stops_a_local_ray(tmp_path, demo_dir, ingested_demo):
    """The real command: `filinglens ingest --ray` with no address starts a Ray for the ingest and stops it."""
    pytest.importorskip("ray")
    local_library, _, _ = ingested_demo
    home = tmp_path / "lib"
    before = set(_ray_daemons())
    done = subprocess.run([sys.executable, "-m", "engine.cli", "--home", str(home), "ingest", str(demo_dir),
                           "--ray"], capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "read 8 filing(s)" in done.stdout and "on Ray at local; 8 vectors embedded on the cluster" in done.stdout
    assert content(home) == content(local_library.home)
    assert _gone_within(15.0, before)  # the Ray it started is stopped


def _gone_within(seconds: float, before: set[int]) -> bool:
    """No Ray head processes beyond ``before`` are left, waiting up to ``seconds`` for them to exit."""
    deadline = time.monotonic() + seconds
    while set(_ray_daemons()) - before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _ray_daemons() -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any(Path(part).name in ("raylet", "gcs_server") for part in (p.info["cmdline"] or [])[:1])]


def test_ray_missing_says_how_to_install_it(tmp_path, demo_dir, monkeypatch, capsys):
    from engine.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as without the extra
    with pytest.raises(RayUnavailableError, match=r"pip install 'filinglens\[cluster\]'"):
        import_ray()
    code = main(["--home", str(tmp_path / "lib"), "ingest", str(demo_dir), "--ray"])
    err = capsys.readouterr().err
    assert code != 0 and "filinglens[cluster]" in err and "scripts/setup.sh" in err
    assert not (tmp_path / "lib" / "library.sqlite3").exists()  # nothing was read or stored


def test_plan_uses_gpus_for_embedding_and_cpus_for_reading():
    def shape(p):  # readers, embedders, GPUs and CPUs per embedder
        return p.readers, p.embedders, p.gpus_per_embedder, p.cpus_per_embedder

    settings = Settings()
    assert shape(plan({"CPU": 16.0}, settings, embed=True)) == (16, 1, 0.0, 0.0)  # summaries ride on a reader's CPU
    chunky = settings.with_overrides(retrieval={"chunk_vectors": True})
    assert shape(plan({"CPU": 16.0}, chunky, embed=True)) == (15, 1, 0.0, 1.0)
    assert shape(plan({"CPU": 16.0, "GPU": 2.0}, chunky, embed=True)) == (16, 2, 1.0, 0.0)
    assert shape(plan({"CPU": 4.0}, settings.with_overrides(ingest={"ray_workers": 3}), embed=False))[:2] == (3, 0)


def test_a_killed_driver_leaves_whole_filings_and_a_rerun_resumes(tmp_path):
    """SIGKILL of `filinglens ingest --ray` mid-run: every filing is stored whole or absent, the Ray it started
    goes with it, and the same command run again reads only what is missing, to the local ingest's library."""
    pytest.importorskip("ray")
    from engine.demo_corpus import generate_corpus

    corpus = tmp_path / "corpus"
    generate_corpus(corpus, 30, seed=3)
    local = tmp_path / "local"
    with Library(local) as library:
        ingest(library, [corpus], Settings(home=local))
    home = tmp_path / "lib"
    command = [sys.executable, "-m", "engine.cli", "--home", str(home), "ingest", str(corpus), "--ray",
               "--ray-workers", "1"]
    before = set(_ray_daemons())
    driver = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    stored = 0
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and driver.poll() is None and stored < 3:
        time.sleep(0.05)
        try:
            with sqlite3.connect(home / "library.sqlite3", timeout=1) as conn:
                stored = conn.execute("SELECT COUNT(*) FROM filings").fetchone()[0]
        except sqlite3.Error:  # not created yet, or busy
            pass
    assert driver.poll() is None, "the ingest finished before it could be killed"
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    assert _gone_within(15.0, before)  # its local Ray went with it
    with Library(home) as library:
        kept = library.count("filings")
        assert 3 <= kept < 30 and library.integrity_problems() == []
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{30 - kept} added" in done.stdout and f"{kept} unchanged" in done.stdout
    assert content(home) == content(local)


def test_a_cluster_address_that_does_not_answer_is_reported_before_anything_is_read(tmp_path, demo_dir, capsys):
    """Ray itself retries an unreachable head for minutes: the ingest says at once that nothing answers there."""
    pytest.importorskip("ray")
    import socket

    from engine.cli import main

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    t = time.monotonic()
    code = main(["--home", str(tmp_path / "lib"), "ingest", str(demo_dir), "--ray", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2 and f"cannot reach the Ray cluster at 127.0.0.1:{port}" in err and "ray start --head" in err
    assert time.monotonic() - t < 30
    assert not (tmp_path / "lib" / "library.sqlite3").exists()
    assert main(["--home", str(tmp_path / "lib"), "ingest", str(demo_dir), "--ray", "headnode"]) == 2
    assert "not a Ray cluster address" in capsys.readouterr().err
