"""Numbered SQLite migrations. Append new ones; never edit an applied migration."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from engine.errors import LibraryTooNewError

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

# Statement facts (engine.facts): one row per table cell read at ingest, with its period, scale, provenance and
# box; ``facts_fts`` searches labels (external content, kept in step by triggers, FK cascades included).
M003_FACTS = """
ALTER TABLE filings ADD COLUMN facts_version TEXT NOT NULL DEFAULT '';
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    filing_id INTEGER NOT NULL REFERENCES filings(id) ON DELETE CASCADE,
    page_no INTEGER NOT NULL,
    chunk_id INTEGER,
    statement TEXT NOT NULL,
    title TEXT NOT NULL,
    label TEXT NOT NULL,
    parent TEXT NOT NULL,
    is_total INTEGER NOT NULL,
    col INTEGER NOT NULL,
    period_header TEXT NOT NULL,
    col_group TEXT NOT NULL,
    fiscal_year INTEGER NOT NULL,
    period_end TEXT,
    months INTEGER,
    printed TEXT NOT NULL,
    value REAL NOT NULL,
    scale TEXT,
    unit TEXT NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    confidence TEXT NOT NULL,
    source TEXT NOT NULL,
    concept TEXT,
    x0 REAL, y0 REAL, x1 REAL, y1 REAL
);
CREATE INDEX facts_by_filing ON facts(filing_id, page_no);
CREATE INDEX facts_by_period ON facts(fiscal_year, months);
CREATE INDEX facts_by_concept ON facts(concept, fiscal_year);
CREATE VIRTUAL TABLE facts_fts USING fts5(label, parent, title, content='facts', content_rowid='id',
                                          tokenize='porter unicode61');
CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, label, parent, title) VALUES (new.id, new.label, new.parent, new.title);
END;
CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, label, parent, title) VALUES ('delete', old.id, old.label, old.parent,
                                                                          old.title);
END
"""

# A 10-Q's twelve-month column ending at a quarter's end is a trailing period, not a fiscal year.
M004_TRAILING = "ALTER TABLE facts ADD COLUMN trailing INTEGER NOT NULL DEFAULT 0"

# Library-level identity (engine.store.registrants): each filing's CIK and fiscal-year end ("--12-31") as it states
# them. A 10-K stored before ends its fiscal year on its period end (its cover's "For the fiscal year ended ...", the
# rule ingest applies); no CIK is filled here: an HTML filing's dei tags are read again on its next ingest.
M005_REGISTRANT_IDENTITY = """
ALTER TABLE filings ADD COLUMN cik TEXT;
ALTER TABLE filings ADD COLUMN fiscal_year_end TEXT;
UPDATE filings SET fiscal_year_end = '--' || substr(period_end, 6, 5)
    WHERE form = '10-K' AND period_end GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'
"""

# Page columns say what they hold: a 0-based index into the file's pages (people read index + 1, see
# engine.pages).
# ``printed_folio``: the number the page prints ("46", "iv"), NULL when none was read; ``folio_version``: the
# folio reader that read a filing's pages ('' before folios; engine.ingest.runner.refresh_folios reads them
# then, from the stored page text). Indexes follow a renamed column; the facts' label search and its triggers
# name no page column.
M006_PAGE_INDEX = """
ALTER TABLE pages RENAME COLUMN page_no TO page_index;
ALTER TABLE chunks RENAME COLUMN page_no TO page_index;
ALTER TABLE facts RENAME COLUMN page_no TO page_index;
ALTER TABLE pages ADD COLUMN printed_folio TEXT;
ALTER TABLE filings ADD COLUMN folio_version TEXT NOT NULL DEFAULT ''
"""

# Evidence cards (engine.rerank.cards), made lazily for the chunks a question touches and kept here; ``version`` says
# which card rules (and which facts) made one, so a stale card is made again rather than trusted.
M007_CARDS = """
CREATE TABLE cards (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    version TEXT NOT NULL,
    source TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    card TEXT NOT NULL,
    made_at TEXT NOT NULL
)
"""

# Each chunk's section of its filing ("Item 1A Risk Factors", engine.ingest.sections); ``section_version``: the
# section reader that read a filing's chunks ('' before sections; engine.ingest.runner.refresh_sections reads them
# then, from the stored pages).
M010_SECTIONS = """
ALTER TABLE chunks ADD COLUMN section TEXT NOT NULL DEFAULT '';
ALTER TABLE filings ADD COLUMN section_version TEXT NOT NULL DEFAULT ''
"""

def _m011_identity_sources(conn: sqlite3.Connection) -> None:
    """Where each filing's CIK and fiscal-year end were read (a printed cover, inline XBRL tags, the filing's links
    to its EDGAR folder, a 10-Q's balance sheet); ``identity_version``: the identity reader that read them ('' before:
    engine.ingest.runner.refresh_identity reads links and balance sheets then, without reading pages again). A
    library rolled back to an earlier migration by a test keeps the columns: each is added only when absent."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(filings)")}
    for name, kind in (("cik_source", "TEXT"), ("fiscal_year_end_source", "TEXT"),
                       ("identity_version", "TEXT NOT NULL DEFAULT ''")):
        if name not in columns:
            conn.execute(f"ALTER TABLE filings ADD COLUMN {name} {kind}")


def _m012_run_evaluation(conn: sqlite3.Connection) -> None:
    """Each run's evaluation (``runs.evaluation``: the results folder of the evaluation that asked it; '' for a
    question the analyst asked), so History can keep an evaluation's runs apart from the analyst's questions and
    group them. A test that rolls a library back to an earlier migration keeps the column: added only when absent."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    if "evaluation" not in columns:
        conn.execute("ALTER TABLE runs ADD COLUMN evaluation TEXT NOT NULL DEFAULT ''")
    conn.execute("CREATE INDEX IF NOT EXISTS runs_by_evaluation ON runs(evaluation, started_at)")


MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None] | str]] = [
    (1, "m001_initial", M001_INITIAL),
    (2, "m002_run_owner", M002_RUN_OWNER),
    (3, "m003_facts", M003_FACTS),
    (4, "m004_trailing_periods", M004_TRAILING),
    (5, "m005_registrant_identity", M005_REGISTRANT_IDENTITY),
    (6, "m006_page_index_and_folios", M006_PAGE_INDEX),
    (7, "m007_cards", M007_CARDS),
    (8, "m008_chunk_terms", lambda conn: _m008_chunk_terms(conn)),
    (9, "m009_filings_by_path", "CREATE INDEX IF NOT EXISTS filings_by_path ON filings(path);"),
    (10, "m010_sections", M010_SECTIONS),
    (11, "m011_identity_sources", _m011_identity_sources),
    (12, "m012_run_evaluation", _m012_run_evaluation),
]


def schema_version() -> int:
    """The newest library schema this version reads and writes (its last migration)."""
    return MIGRATIONS[-1][0]


def library_schema(conn: sqlite3.Connection) -> int:
    """The newest migration recorded in a library (0 for a new or pre-migration database)."""
    try:
        row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    except sqlite3.OperationalError:
        return 0  # no schema_migrations table yet
    return int(row[0] or 0)


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded; return the names applied. Each runs in one transaction.

    Raises:
        LibraryTooNewError: the library records a migration newer than this version knows; nothing is changed
            (a newer schema is never half-migrated or written by older code).
    """
    found = library_schema(conn)
    if found > schema_version():
        raise LibraryTooNewError(
            f"this library was written by a newer FilingLens (library schema {found}; this version reads up to "
            f"{schema_version()}): open it with that version or a later one. Nothing in it was changed."
        )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    _renumber_early_page_index(conn)
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
    """The script's statements one by one (executescript() would commit implicitly; split so the migration stays
    one transaction). A trigger body's inner ``;`` does not end its statement: sqlite3 says when one is whole."""
    out, current = [], ""
    for part in script.split(";"):
        current += part + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \n;"):
                out.append(current.strip())
            current = ""
    if current.strip(" \n;"):
        out.append(current.strip())
    return out


def _renumber_early_page_index(conn: sqlite3.Connection) -> None:
    """A library built by a development build that numbered the page-index migration 5 records it as
    (5, 'm005_page_index_and_folios'): it is migration 6 now, and 5 (registrant identity) still has to run."""
    row = conn.execute("SELECT name FROM schema_migrations WHERE version = 5").fetchone()
    if row is not None and row[0] == "m005_page_index_and_folios":
        with conn:
            conn.execute(
                "UPDATE schema_migrations SET version = 6, name = 'm006_page_index_and_folios' WHERE version = 5"
            )


def _m008_chunk_terms(conn: sqlite3.Connection) -> None:
    """Each filing's chunk terms and the library's BM25 statistics (:mod:`engine.store.terms`), made for the
    filings already stored."""
    from engine.store import terms

    for statement in _statements(terms.SCHEMA):
        conn.execute(statement)
    terms.backfill(conn)
