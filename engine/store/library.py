"""The library: one SQLite database in WAL mode, the single source of truth.

Index files (BM25, HNSW) are derived from it and carry the database ``generation`` they were built
from; every change of filings bumps the generation in the same transaction, so a crash at any point
leaves either the old or the new state, and stale indexes are detected and rebuilt.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import socket
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path

from engine.errors import StoreError
from engine.records import Chunk, Filing, FilingIdentity, ParsedFiling
from engine.store.migrations import apply_migrations

log = logging.getLogger(__name__)

DB_NAME = "library.sqlite3"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Library:
    """A FilingLens library folder: ``library.sqlite3`` plus ``index/``."""

    def __init__(self, home: Path | str) -> None:
        self.home = Path(home)
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            self.index_dir.mkdir(exist_ok=True)
            self.conn = sqlite3.connect(self.home / DB_NAME, isolation_level=None, timeout=30, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the library at {self.home}: {exc}") from exc
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.migrations_applied = apply_migrations(self.conn)

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- generation -------------------------------------------------------------------------
    def generation(self) -> int:
        return int(self.conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])

    def _bump_generation(self) -> None:
        self.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")

    # -- filings ----------------------------------------------------------------------------
    def has_sha256(self, sha256: str) -> int | None:
        row = self.conn.execute("SELECT id FROM filings WHERE sha256=?", (sha256,)).fetchone()
        return None if row is None else int(row[0])

    def known_hashes(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self.conn.execute("SELECT sha256, id FROM filings")}

    def add_filing(self, parsed: ParsedFiling) -> int:
        """Store a parsed filing with its pages and chunks in one transaction; return its id."""
        ident = parsed.identity
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            cur = self.conn.execute(
                """INSERT INTO filings(sha256, path, doc_name, issuer_key, registrant, ticker, form, period, period_end,
                   fiscal_year, n_pages, n_chunks, image_only_pages, summary, lofin_summary, parser_version, bytes,
                   ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    parsed.sha256, parsed.path, ident.doc_name, ident.issuer_key, ident.registrant, ident.ticker,
                    ident.form, ident.period, ident.period_end, ident.fiscal_year, len(parsed.pages),
                    len(parsed.chunks), json.dumps(list(parsed.image_only_pages)), parsed.summary,
                    parsed.lofin_summary, parsed.parser_version, parsed.bytes, _now(),
                ),
            )
            filing_id = cur.lastrowid
            assert filing_id is not None  # set by every successful INSERT
            image_only = set(parsed.image_only_pages)
            self.conn.executemany(
                "INSERT INTO pages(filing_id, page_no, text, image_only) VALUES (?,?,?,?)",
                ((filing_id, i, text, int(i in image_only)) for i, text in enumerate(parsed.pages)),
            )
            self.conn.executemany(
                "INSERT INTO chunks(filing_id, page_no, seq, char_start, char_end, kind, context, text) VALUES (?,?,?,?,?,?,?,?)",
                (
                    (filing_id, c.page_no, c.seq, c.char_start, c.char_end, c.kind, c.context, c.text)
                    for c in parsed.chunks
                ),
            )
            self._bump_generation()
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return filing_id

    def remove_filings(self, filing_ids: Iterable[int]) -> int:
        ids = list(filing_ids)
        if not ids:
            return 0
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            n = 0
            for fid in ids:
                n += self.conn.execute("DELETE FROM filings WHERE id=?", (fid,)).rowcount
            self._bump_generation()
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return n

    def update_path(self, filing_id: int, path: str) -> None:
        self.conn.execute("UPDATE filings SET path=? WHERE id=?", (path, filing_id))

    def filings(self, ids: Sequence[int] | None = None) -> list[Filing]:
        sql = "SELECT * FROM filings"
        args: tuple = ()
        if ids is not None:
            if not ids:
                return []
            sql += f" WHERE id IN ({','.join('?' * len(ids))})"
            args = tuple(ids)
        return [_filing(r) for r in self.conn.execute(sql + " ORDER BY id", args)]

    def filing(self, filing_id: int) -> Filing:
        found = self.filings([filing_id])
        if not found:
            raise StoreError(f"no filing with id {filing_id} in {self.home}")
        return found[0]

    def filing_by_doc_name(self, doc_name: str) -> Filing | None:
        row = self.conn.execute("SELECT * FROM filings WHERE doc_name=? ORDER BY id LIMIT 1", (doc_name,)).fetchone()
        return None if row is None else _filing(row)

    def filing_paths(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self.conn.execute("SELECT path, id FROM filings")}

    def count(self, table: str) -> int:
        if table not in {"filings", "pages", "chunks", "runs", "stage_events", "ingest_reports"}:
            raise ValueError(table)
        return int(self.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    # -- pages and chunks -------------------------------------------------------------------
    def page_text(self, filing_id: int, page_no: int) -> str:
        row = self.conn.execute("SELECT text FROM pages WHERE filing_id=? AND page_no=?", (filing_id, page_no)).fetchone()
        if row is None:
            raise StoreError(f"filing {filing_id} has no page {page_no}")
        return str(row[0])

    _CHUNK_SQL = (
        "SELECT c.id, c.filing_id, f.doc_name, c.page_no, c.char_start, c.char_end, c.kind, c.text, c.context "
        "FROM chunks c JOIN filings f ON f.id = c.filing_id"
    )

    def chunks(self, ids: Sequence[int]) -> list[Chunk]:
        """Chunks by id, in the order of ``ids``."""
        out: dict[int, Chunk] = {}
        for start in range(0, len(ids), 900):
            part = ids[start : start + 900]
            sql = f"{self._CHUNK_SQL} WHERE c.id IN ({','.join('?' * len(part))})"
            out.update((r[0], _chunk(r)) for r in self.conn.execute(sql, tuple(part)))
        return [out[i] for i in ids if i in out]

    def chunks_of_filings(self, filing_ids: Sequence[int]) -> list[Chunk]:
        if not filing_ids:
            return []
        sql = f"{self._CHUNK_SQL} WHERE c.filing_id IN ({','.join('?' * len(filing_ids))}) ORDER BY c.id"
        return [_chunk(r) for r in self.conn.execute(sql, tuple(filing_ids))]

    def iter_chunk_texts(self, batch: int = 5000) -> Iterator[list[tuple[int, str]]]:
        """All chunks as (id, indexed text), in id order, in batches (memory stays bounded)."""
        last = -1
        while True:
            rows = self.conn.execute(
                "SELECT id, context, text FROM chunks WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
            ).fetchall()
            if not rows:
                return
            yield [(int(r[0]), f"{r[1]}\n{r[2]}" if r[1] else r[2]) for r in rows]
            last = int(rows[-1][0])

    # -- ingest reports ---------------------------------------------------------------------
    def record_report(self, batch_id: str, path: str, status: str, reason: str = "", *, sha256: str | None = None,
                      filing_id: int | None = None) -> None:
        self.conn.execute(
            "INSERT INTO ingest_reports(batch_id, path, sha256, status, reason, filing_id, at) VALUES (?,?,?,?,?,?,?)",
            (batch_id, path, sha256, status, reason, filing_id, _now()),
        )

    def reports(self, batch_id: str | None = None) -> list[sqlite3.Row]:
        if batch_id is None:
            return self.conn.execute("SELECT * FROM ingest_reports ORDER BY id").fetchall()
        return self.conn.execute("SELECT * FROM ingest_reports WHERE batch_id=? ORDER BY id", (batch_id,)).fetchall()

    def integrity_problems(self) -> list[str]:
        """Cross-table checks: what a crash must never leave behind."""
        problems = []
        for sql, what in [
            ("SELECT COUNT(*) FROM filings f WHERE n_pages != (SELECT COUNT(*) FROM pages p WHERE p.filing_id=f.id)",
             "filings whose page count disagrees with stored pages"),
            ("SELECT COUNT(*) FROM filings f WHERE n_chunks != (SELECT COUNT(*) FROM chunks c WHERE c.filing_id=f.id)",
             "filings whose chunk count disagrees with stored chunks"),
            ("SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM filings f WHERE f.id=c.filing_id)",
             "orphan chunks"),
            ("SELECT COUNT(*) - COUNT(DISTINCT sha256) FROM filings", "duplicate filings"),
        ]:
            n = int(self.conn.execute(sql).fetchone()[0])
            if n:
                problems.append(f"{n} {what}")
        return problems


def _identity(row: sqlite3.Row) -> FilingIdentity:
    return FilingIdentity(
        doc_name=row["doc_name"], issuer_key=row["issuer_key"], registrant=row["registrant"], ticker=row["ticker"],
        form=row["form"], period=row["period"], period_end=row["period_end"], fiscal_year=row["fiscal_year"],
    )


def _filing(row: sqlite3.Row) -> Filing:
    return Filing(
        id=int(row["id"]), sha256=row["sha256"], path=row["path"], identity=_identity(row), n_pages=row["n_pages"],
        n_chunks=row["n_chunks"], summary=row["summary"], image_only_pages=tuple(json.loads(row["image_only_pages"])),
    )


def _chunk(r: sqlite3.Row | tuple) -> Chunk:
    return Chunk(id=int(r[0]), filing_id=int(r[1]), doc_name=r[2], page_no=int(r[3]), char_start=int(r[4]),
                 char_end=int(r[5]), kind=r[6], text=r[7], context=r[8])


def _alive_since(pid: int, started_at: str) -> bool:
    """True when process ``pid`` exists and was started before ``started_at`` (ISO time)."""
    import psutil

    try:
        created = psutil.Process(pid).create_time()
    except (psutil.Error, OSError):
        return False
    return created <= datetime.fromisoformat(started_at).timestamp() + 1


class RunStore:
    """Runs and their stage events (the audit trace) in the library database."""

    def __init__(self, library: Library) -> None:
        self.conn = library.conn

    def create(self, run_id: str, kind: str, question: str, settings_json: str) -> None:
        self.conn.execute(
            "INSERT INTO runs(id, kind, question, status, settings, started_at, owner) VALUES (?,?,?,?,?,?,?)",
            (run_id, kind, question, "running", settings_json, _now(), f"{socket.gethostname()}:{os.getpid()}"),
        )

    def settle_orphans(self) -> int:
        """Mark "running" runs whose process on this machine is gone as ``interrupted``; returns how many.

        A run owned by a live process (or by another machine sharing the library) is left alone; a pid
        reused by a process started after the run does not count as its owner.
        """
        host = socket.gethostname()
        orphans = []
        for r in self.conn.execute("SELECT id, owner, started_at FROM runs WHERE status='running'").fetchall():
            owner_host, _, pid = r["owner"].rpartition(":")
            if owner_host and owner_host != host:
                continue
            if pid.isdigit() and _alive_since(int(pid), r["started_at"]):
                continue
            orphans.append(r["id"])
        for run_id in orphans:
            self.conn.execute(
                "UPDATE runs SET status='interrupted', error=?, finished_at=? WHERE id=? AND status='running'",
                ("the process answering it ended before the run finished", _now(), run_id),
            )
        return len(orphans)

    def add_event(self, run_id: str, seq: int, stage: str, round_no: int, payload: dict, seconds: float,
                  tokens_in: int, tokens_out: int) -> None:
        self.conn.execute(
            "INSERT INTO stage_events(run_id, seq, stage, round, payload, seconds, tokens_in, tokens_out, at) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (run_id, seq, stage, round_no, json.dumps(payload, default=str), seconds, tokens_in, tokens_out, _now()),
        )

    def finish(self, run_id: str, status: str, result: dict, error: str = "") -> None:
        self.conn.execute(
            "UPDATE runs SET status=?, result=?, error=?, finished_at=? WHERE id=?",
            (status, json.dumps(result, default=str), error, _now(), run_id),
        )

    def list(self, limit: int = 50) -> list[sqlite3.Row]:
        self.settle_orphans()
        return self.conn.execute(
            "SELECT r.*, (SELECT COALESCE(SUM(tokens_in),0) FROM stage_events e WHERE e.run_id=r.id) AS tokens_in, "
            "(SELECT COALESCE(SUM(tokens_out),0) FROM stage_events e WHERE e.run_id=r.id) AS tokens_out "
            "FROM runs r ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,)
        ).fetchall()

    def get(self, run_id: str) -> sqlite3.Row:
        rows = self.conn.execute("SELECT * FROM runs WHERE id=? OR id LIKE ?", (run_id, f"{run_id}%")).fetchall()
        if len(rows) != 1:
            raise StoreError(f"no run {run_id!r}" if not rows else f"run id prefix {run_id!r} is ambiguous")
        return rows[0]

    def delete(self, run_ids: Sequence[str]) -> int:
        """Delete runs and their stage events (one transaction); returns how many runs went.

        Ids must be whole (no prefixes): deleting is not a place for guesses.
        """
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            deleted = self.conn.execute(f"DELETE FROM runs WHERE id IN ({marks})", ids).rowcount
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return deleted

    def events(self, run_id: str) -> builtins.list[dict]:  # `list` here would name the method above
        return [
            {"seq": r["seq"], "stage": r["stage"], "round": r["round"], "seconds": r["seconds"],
             "tokens_in": r["tokens_in"], "tokens_out": r["tokens_out"], "payload": json.loads(r["payload"])}
            for r in self.conn.execute("SELECT * FROM stage_events WHERE run_id=? ORDER BY seq", (run_id,))
        ]
