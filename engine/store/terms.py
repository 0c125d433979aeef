"""Each filing's chunk terms and the library's BM25 statistics, kept in the filing's own transaction
(:mod:`engine.vocab.tokens` says what the terms are).

``chunk_terms`` holds one row per filing (its chunks' terms, packed); ``term_df`` the number of the library's chunks
holding each term; ``meta`` the number of chunks and of terms. Adding a filing adds its rows and counts, removing
it subtracts them: time proportional to the filing, not to the library, and never out of step with it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np

from engine.records import indexed_text
from engine.vocab.tokens import TERMS_VERSION, ChunkTerms, chunk_terms

SCHEMA = """
CREATE TABLE chunk_terms (
    filing_id INTEGER PRIMARY KEY REFERENCES filings(id) ON DELETE CASCADE,
    version TEXT NOT NULL,
    chunk_ids BLOB NOT NULL,
    lengths BLOB NOT NULL,
    offsets BLOB NOT NULL,
    terms BLOB NOT NULL,
    tfs BLOB NOT NULL
);
CREATE TABLE term_df (term INTEGER PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta(key, value) VALUES ('term_chunks', '0'), ('term_count', '0');
"""


def store(conn: sqlite3.Connection, filing_id: int, table: ChunkTerms | None = None) -> None:
    """Store a filing's chunk terms (made from its stored chunks when ``table`` is None) and add them to the
    library's statistics. Inside the caller's transaction."""
    rows = conn.execute("SELECT id, context, text FROM chunks WHERE filing_id=? ORDER BY id", (filing_id,)).fetchall()
    if table is None or table.chunks != len(rows):
        table = chunk_terms([indexed_text(context, text) for _, context, text in rows])
    chunk_ids = np.asarray([r[0] for r in rows], "<i8")
    conn.execute("INSERT OR REPLACE INTO chunk_terms(filing_id, version, chunk_ids, lengths, offsets, terms, tfs) "
                 "VALUES (?,?,?,?,?,?,?)", (filing_id, TERMS_VERSION, chunk_ids.tobytes(), *table.pack()))
    conn.executemany("INSERT INTO term_df(term, df) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
                     table.document_frequencies().items())
    _count(conn, table.chunks, int(table.lengths.sum()))


def drop(conn: sqlite3.Connection, filing_ids: Iterable[int]) -> None:
    """Take these filings' terms out of the library's statistics and delete them (before the filings go)."""
    for fid in filing_ids:
        for _, table in tables(conn, [fid]).values():
            conn.executemany("UPDATE term_df SET df = df - ? WHERE term = ?",
                             ((n, t) for t, n in table.document_frequencies().items()))
            _count(conn, -table.chunks, -int(table.lengths.sum()))
        conn.execute("DELETE FROM chunk_terms WHERE filing_id=?", (fid,))
    conn.execute("DELETE FROM term_df WHERE df <= 0")


def _count(conn: sqlite3.Connection, chunks: int, terms: int) -> None:
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key='term_chunks'", (chunks,))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key='term_count'", (terms,))


def stats(conn: sqlite3.Connection) -> tuple[int, int]:
    """(chunks, terms) over the library."""
    values = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('term_chunks', 'term_count')").fetchall())
    return int(values.get("term_chunks", 0)), int(values.get("term_count", 0))


def document_frequencies(conn: sqlite3.Connection, terms: Sequence[int]) -> dict[int, int]:
    unique = sorted(set(terms))
    if not unique:
        return {}
    rows = conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({','.join('?' * len(unique))})", unique)
    return {int(t): int(df) for t, df in rows}


def tables(conn: sqlite3.Connection, filing_ids: Sequence[int]) -> dict[int, tuple[np.ndarray, ChunkTerms]]:
    """Filing id → (its chunk ids, its chunk terms), for the filings that have them."""
    ids = sorted(set(filing_ids))
    if not ids:
        return {}
    rows = conn.execute("SELECT filing_id, chunk_ids, lengths, offsets, terms, tfs FROM chunk_terms "
                        f"WHERE filing_id IN ({','.join('?' * len(ids))})", ids)
    return {int(fid): (np.frombuffer(cids, "<i8"), ChunkTerms.unpack(*packed)) for fid, cids, *packed in rows}


def backfill(conn: sqlite3.Connection) -> int:
    """Make the terms of every filing that lacks them (a library from before terms were stored); returns how many."""
    missing = [r[0] for r in conn.execute("SELECT id FROM filings WHERE id NOT IN (SELECT filing_id FROM chunk_terms) "
                                          "ORDER BY id")]
    for fid in missing:
        store(conn, fid)
    return len(missing)


def rebuild(conn: sqlite3.Connection) -> int:
    """Make every filing's terms and the statistics again from the stored chunks (inside the caller's
    transaction); returns how many filings."""
    conn.execute("DELETE FROM chunk_terms")
    conn.execute("DELETE FROM term_df")
    conn.execute("UPDATE meta SET value = '0' WHERE key IN ('term_chunks', 'term_count')")
    return backfill(conn)


def problems(conn: sqlite3.Connection) -> list[str]:
    """Where the stored statistics disagree with the stored terms (``filinglens doctor``)."""
    out = []
    missing = conn.execute("SELECT COUNT(*) FROM filings WHERE id NOT IN (SELECT filing_id FROM chunk_terms)").fetchone()[0]
    if missing:
        out.append(f"{missing} filing(s) without chunk terms")
    df: dict[int, int] = {}
    chunks = count = 0
    for (fid,) in conn.execute("SELECT filing_id FROM chunk_terms").fetchall():
        for _, table in tables(conn, [fid]).values():
            for t, n in table.document_frequencies().items():
                df[t] = df.get(t, 0) + n
            chunks += table.chunks
            count += int(table.lengths.sum())
    stored = dict(conn.execute("SELECT term, df FROM term_df").fetchall())
    if stored != df:
        out.append(f"term statistics disagree with the stored terms for {len(set(stored.items()) ^ set(df.items()))} "
                   "term(s)")
    if stats(conn) != (chunks, count):
        out.append(f"chunk and term counts {stats(conn)} disagree with the stored terms {(chunks, count)}")
    return out
