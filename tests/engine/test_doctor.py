"""`filinglens doctor` on real libraries: a healthy one, one with orphan rows and a torn full-text index (found,
then repaired), one written by a newer version (reported, untouched), and the exit code of the command."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from engine.cli import main
from engine.doctor import compiled_features, run_doctor
from engine.settings import Settings
from engine.store import Library
from engine.store import migrations


@pytest.fixture()
def library_copy(ingested_demo, tmp_path: Path) -> Path:
    """A private copy of the ingested demo library (checkpointed first, so the copy holds every row)."""
    library, _, _ = ingested_demo
    library.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    home = tmp_path / "lib"
    shutil.copytree(library.home, home, ignore=shutil.ignore_patterns("*.lock", "builder.json"))
    return home


def _tiny(home: Path) -> Settings:
    return Settings(home=home).with_overrides(models={"chat_model": "smollm2-135m"})


def test_a_healthy_library_has_nothing_to_fix(library_copy):
    report = run_doctor(_tiny(library_copy))
    assert report.ok, report.lines()
    texts = [f.text for f in report.findings]
    assert "SQLite integrity check passed" in texts
    assert f"library schema {migrations.schema_version()} (current)" in texts
    assert "no orphan rows; every filing holds the chunks it records" in texts
    assert any("chat model smollm2-135m" in t and "sha256 matches" in t for t in texts)
    assert any(t.startswith("files:") and "0 missing or damaged" in t for t in texts)
    assert report.lines()[-1] == "doctor: everything checked is in order"


def test_orphans_a_short_filing_and_a_torn_full_text_index_are_found_and_repaired(library_copy):
    conn = sqlite3.connect(library_copy / "library.sqlite3")  # foreign keys off, as a damaged writer might leave it
    conn.execute("INSERT INTO chunks(filing_id, page_index, seq, char_start, char_end, kind, text) "
                 "VALUES (9999, 0, 0, 0, 4, 'text', 'lost')")
    conn.execute("INSERT INTO stage_events(run_id, seq, stage, payload, at) VALUES ('gone', 0, 'answer', '{}', 'now')")
    conn.execute("INSERT INTO facts_fts(rowid, label, parent, title) VALUES (999999, 'phantom', '', '')")
    conn.commit()
    conn.close()

    report = run_doctor(_tiny(library_copy))
    problems = {f.text: f.fix for f in report.problems}
    assert problems.pop("orphan rows (their filing or run is gone): 1 in chunks, 1 in stage_events") == \
        "filinglens doctor --repair"
    torn = [t for t in problems if t.startswith("the facts' full-text index disagrees")]
    assert torn and problems[torn[0]] == "filinglens doctor --repair"

    repaired = run_doctor(_tiny(library_copy), repair=True)
    assert repaired.repaired == ["deleted 1 orphan row(s) of chunks", "deleted 1 orphan row(s) of stage_events",
                                 "rebuilt the facts' full-text index from the facts"]
    again = run_doctor(_tiny(library_copy))
    assert again.ok, again.lines()


def test_a_filing_missing_chunks_is_named_with_how_to_fix_it(library_copy):
    conn = sqlite3.connect(library_copy / "library.sqlite3")
    doc = conn.execute("SELECT doc_name, id, n_chunks FROM filings ORDER BY id LIMIT 1").fetchone()
    conn.execute("DELETE FROM chunks WHERE id = (SELECT MAX(id) FROM chunks WHERE filing_id = ?)", (doc[1],))
    conn.commit()
    conn.close()
    report = run_doctor(_tiny(library_copy))
    short = [f for f in report.problems if "hold fewer or more chunks" in f.text]
    assert short and f"{doc[0]} ({doc[2] - 1} of {doc[2]})" in short[0].text
    assert short[0].fix.startswith("remove them")


def test_a_newer_library_is_reported_and_left_untouched(library_copy, monkeypatch):
    newer = (migrations.schema_version() + 1, "m_future", "CREATE TABLE future(x)")
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, newer])
    Library(library_copy).close()
    monkeypatch.undo()
    before = (library_copy / "library.sqlite3").read_bytes()
    report = run_doctor(_tiny(library_copy))
    assert [f.text for f in report.problems] == [
        f"library schema {newer[0]} was written by a newer FilingLens (this version reads up to {newer[0] - 1})"]
    assert (library_copy / "library.sqlite3").read_bytes() == before


def test_the_command_exits_1_naming_the_fix_and_0_when_all_is_well(library_copy, tmp_path, capsys):
    assert main(["--home", str(library_copy), "doctor"]) == 1  # the default chat model is not installed here
    out = capsys.readouterr().out
    assert "fix: filinglens models install qwen2.5-coder-1.5b" in out and "doctor: 1 problem(s) to fix" in out
    preset = tmp_path / "tiny.json"
    preset.write_text(json.dumps({"models": {"chat_model": "smollm2-135m"}}))
    assert main(["--home", str(library_copy), "--preset", str(preset), "doctor", "--verify-hashes"]) == 0
    assert "sha256 matches (read again)" in capsys.readouterr().out


def test_compiled_features_read_from_llama_system_info():
    info = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | F16C = 1 | FMA = 1 | LLAMAFILE = 1 | "
    assert compiled_features(info) == {"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA"}


def test_chunk_terms_out_of_step_with_the_library_are_found_and_made_again(library_copy):
    """The statistics questions score BM25 with are kept in each filing's transaction; a damaged writer that left
    them out of step is found, and --repair makes them again from the stored chunks."""
    conn = sqlite3.connect(library_copy / "library.sqlite3")
    conn.execute("UPDATE term_df SET df = df + 3 WHERE term IN (SELECT term FROM term_df LIMIT 5)")
    conn.execute("DELETE FROM chunk_terms WHERE filing_id = (SELECT MIN(id) FROM filings)")
    conn.commit()
    conn.close()
    report = run_doctor(_tiny(library_copy))
    (found,) = [f for f in report.problems if f.text.startswith("the chunk terms")]
    assert "1 filing(s) without chunk terms" in found.text and "disagree" in found.text
    assert found.fix == "filinglens doctor --repair" and not report.ok

    repaired = run_doctor(_tiny(library_copy), repair=True)
    assert repaired.repaired == ["made the chunk terms of 8 filing(s) and the library's BM25 statistics again"]
    assert run_doctor(_tiny(library_copy)).ok
