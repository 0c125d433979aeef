"""Numbered SQLite migrations. Append new ones; never edit an applied migration."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

M001_INITIAL = """
CREATE TABLE filings (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    doc_name TEXT NOT NULL,
    issuer_key TEXT,
    registrant TEXT,
    ticker TEXT,
    form TEXT,
    period TEXT,
    period_end TEXT,
    fiscal_year INTEGER,
    n_pages INTEGER NOT NULL,
    n_chunks INTEGER NOT NULL,
    image_only_pages TEXT NOT NULL DEFAULT '[]',
    summary TEXT NOT NULL,
    lofin_summary TEXT,
    parser_version TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    ingested_at TEXT NOT NULL
);
CREATE INDEX filings_by_identity ON filings(issuer_key, form, fiscal_year);
CREATE TABLE pages (
    filing_id INTEGER NOT NULL REFERENCES filings(id) ON DELETE CASCADE,
    page_no INTEGER NOT NULL,
    text TEXT NOT NULL,
    image_only INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (filing_id, page_no)
) WITHOUT ROWID;
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    filing_id INTEGER NOT NULL REFERENCES filings(id) ON DELETE CASCADE,
    page_no INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    kind TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL
);
CREATE INDEX chunks_by_filing ON chunks(filing_id, page_no);
CREATE TABLE ingest_reports (
    id INTEGER PRIMARY KEY,
    batch_id TEXT NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    filing_id INTEGER,
    at TEXT NOT NULL
);
CREATE INDEX ingest_reports_by_batch ON ingest_reports(batch_id);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',
    result TEXT NOT NULL DEFAULT '{}',
    error TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE TABLE stage_events (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    stage TEXT NOT NULL,
    round INTEGER NOT NULL DEFAULT 0,
    payload TEXT NOT NULL,
    seconds REAL NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    at TEXT NOT NULL
);
CREATE INDEX stage_events_by_run ON stage_events(run_id, seq);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('generation', '0');
"""

# Which process is answering a run ("host:pid"), so a run left "running" by a process that died can be
# recognised and marked interrupted.
M002_RUN_OWNER = "ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT ''"

MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None] | str]] = [
    (1, "m001_initial", M001_INITIAL),
    (2, "m002_run_owner", M002_RUN_OWNER),
]


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded; return the names applied. Each runs in one transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    applied = []
    for version, name, step in MIGRATIONS:
        if version in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if callable(step):
                step(conn)
            else:
                for statement in _statements(step):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, datetime('now'))", (version, name)
            )
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


def _statements(script: str) -> list[str]:
    # executescript() would commit implicitly; split so the migration stays one transaction.
    return [s.strip() for s in script.split(";") if s.strip()]
