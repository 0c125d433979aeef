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
import re
import socket
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from engine.errors import StoreError
from engine.records import (
    Chunk,
    ColumnPeriod,
    Filing,
    FilingIdentity,
    ParsedFiling,
    Registrant,
    StatementFact,
    StoredFact,
)
from engine.store import terms
from engine.store.migrations import apply_migrations
from engine.store.registrants import RegistrantView, build_view

log = logging.getLogger(__name__)

DB_NAME = "library.sqlite3"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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
        try:
            self.migrations_applied = apply_migrations(self.conn)
        except StoreError:
            self.conn.close()
            raise
        except sqlite3.Error as exc:  # locked past the timeout, disk full, a damaged file: the migration rolled back
            self.conn.close()
            raise StoreError(f"cannot bring the library at {self.home} to this version's schema: {exc}") from exc
        self._view: tuple[int, RegistrantView] | None = None  # (generation, the registrants then)
        self._conflicts_logged: set[tuple[str, str]] = set()

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

    def filing_stamps(self) -> dict[int, str]:
        """Filing id → a stamp that changes whenever the row under that id is another filing (SQLite reuses the
        highest id after a delete, and a file read again by a newer parser keeps its sha256): what an index records
        so that it never takes one filing's vectors or passages for another's."""
        return {int(r[0]): f"{r[1]}|{r[2]}|{r[3]}|{r[4]}" for r in self.conn.execute(
            "SELECT id, sha256, parser_version, ingested_at, n_chunks FROM filings")}

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read everything inside one consistent state of the database (a read transaction: writers in other
        connections carry on; this connection sees none of their commits until the block ends)."""
        if self.conn.in_transaction:  # already inside one (a caller's snapshot or transaction)
            yield
            return
        self.conn.execute("BEGIN")
        try:
            self.conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()  # the snapshot starts here
            yield
        finally:
            self.conn.execute("COMMIT")

    def _bump_generation(self) -> None:
        self.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")

    # -- filings ----------------------------------------------------------------------------
    def has_sha256(self, sha256: str) -> int | None:
        row = self.conn.execute("SELECT id FROM filings WHERE sha256=?", (sha256,)).fetchone()
        return None if row is None else int(row[0])

    def filing_by_sha(self, sha256: str) -> tuple[int, str] | None:
        """(filing id, the parser version that read it) of the filing stored from a file with this sha256."""
        row = self.conn.execute("SELECT id, parser_version FROM filings WHERE sha256=?", (sha256,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def filings_at(self, paths: Sequence[str]) -> dict[str, int]:
        """Path → id of the filings stored from these paths (through the path index, not a scan)."""
        out: dict[str, int] = {}
        for start in range(0, len(paths), 500):
            batch = list(paths[start : start + 500])
            out.update((r[0], int(r[1])) for r in self.conn.execute(
                f"SELECT path, id FROM filings WHERE path IN ({','.join('?' * len(batch))})", batch))
        return out

    def filings_under(self, folder: Path) -> dict[str, int]:
        """Path → id of the filings stored from files inside ``folder`` (a range of the path index)."""
        base = str(folder).rstrip("/")
        return {r[0]: int(r[1]) for r in self.conn.execute(
            "SELECT path, id FROM filings WHERE path >= ? AND path < ?", (base + "/", base + "0"))}  # "0" follows "/"

    def add_filing(self, parsed: ParsedFiling, replaces: int | None = None) -> int:
        """Store a parsed filing with its pages, chunks and facts in one transaction; return its id. ``replaces``:
        a filing (an earlier version of the same file, or the same file read by an older parser) removed in that
        transaction."""
        ident = parsed.identity
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if replaces is not None:  # first: the same file read again keeps its sha256, which is unique
                terms.drop(self.conn, [replaces])
                self.conn.execute("DELETE FROM filings WHERE id=?", (replaces,))
            cur = self.conn.execute(
                """INSERT INTO filings(sha256, path, doc_name, issuer_key, registrant, ticker, form, period, period_end,
                   fiscal_year, cik, fiscal_year_end, n_pages, n_chunks, image_only_pages, summary, lofin_summary,
                   parser_version, bytes, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    parsed.sha256, parsed.path, ident.doc_name, ident.issuer_key, ident.registrant, ident.ticker,
                    ident.form, ident.period, ident.period_end, ident.fiscal_year, ident.cik, ident.fiscal_year_end,
                    len(parsed.pages), len(parsed.chunks), json.dumps(list(parsed.image_only_pages)),
                    parsed.summary, parsed.lofin_summary, parsed.parser_version, parsed.bytes, _now(),
                ),
            )
            filing_id = cur.lastrowid
            assert filing_id is not None  # set by every successful INSERT
            image_only = set(parsed.image_only_pages)
            folios = parsed.printed_folios or (None,) * len(parsed.pages)
            self.conn.executemany(
                "INSERT INTO pages(filing_id, page_index, text, image_only, printed_folio) "
                "VALUES (?,?,?,?,?)",
                ((filing_id, i, text, int(i in image_only), folio)
                 for i, (text, folio) in enumerate(zip(parsed.pages, folios, strict=True))),
            )
            self.conn.execute("UPDATE filings SET folio_version=?, section_version=?, cik_source=?, "
                              "fiscal_year_end_source=?, identity_version=? WHERE id=?",
                              (parsed.folio_version, parsed.section_version, ident.cik_source,
                               ident.fiscal_year_end_source, parsed.identity_version, filing_id))
            self.conn.executemany(
                "INSERT INTO chunks(filing_id, page_index, seq, char_start, char_end, kind, context, text, section) "
                "VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    (filing_id, c.page_index, c.seq, c.char_start, c.char_end, c.kind, c.context, c.text, c.section)
                    for c in parsed.chunks
                ),
            )
            self._insert_facts(filing_id, parsed.facts, parsed.facts_version)
            terms.store(self.conn, filing_id, parsed.terms)
            self._bump_generation()
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return filing_id

    def _insert_facts(self, filing_id: int, facts: Sequence[StatementFact], version: str) -> None:
        """Insert a filing's facts, each linked to the first chunk holding its cell (inside a transaction)."""
        spans: dict[int, list[tuple[int, int, int]]] = {}
        for cid, page, start, end in self.conn.execute(
                "SELECT id, page_index, char_start, char_end FROM chunks WHERE filing_id=? ORDER BY id",
                (filing_id,)):
            spans.setdefault(page, []).append((start, end, cid))

        def chunk_of(f: StatementFact) -> int | None:
            return next((cid for start, end, cid in spans.get(f.page_index, ())
                         if start <= f.char_start < end), None)

        self.conn.executemany(
            f"INSERT INTO facts({_FACT_COLUMNS}) VALUES ({','.join('?' * (_FACT_COLUMNS.count(',') + 1))})",
            ((filing_id, chunk_of(f), *_fact_row(f)) for f in facts),
        )
        self.conn.execute("UPDATE filings SET facts_version=? WHERE id=?", (version, filing_id))

    def replace_facts(self, filing_id: int, facts: Sequence[StatementFact], version: str) -> None:
        """Replace a filing's facts (a newer extractor) in one transaction."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute("DELETE FROM facts WHERE filing_id=?", (filing_id,))
            self._insert_facts(filing_id, facts, version)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def facts(self, *, filing_ids: Sequence[int] | None = None, page_index: int | None = None,
              fiscal_year: int | None = None, months: Sequence[int] | None = None, end: str | None = None,
              concepts: Sequence[str] | None = None, match: str | None = None, ids: Sequence[int] | None = None,
              trailing: bool | None = None, limit: int | None = None) -> list[StoredFact]:
        """Stored facts that pass every filter given (``trailing=False``: no trailing-twelve-month columns). ``match`` is an FTS5 query over label, parent and title;
        its hits come best first (``score``: the negated bm25 rank), otherwise facts are in filing, page, row
        and column order. Each carries the folio its page prints, when one was read."""
        where: list[str] = []
        args: list[object] = []
        lists: tuple[tuple[str, Sequence[int] | Sequence[str] | None], ...] = (
            ("x.filing_id", filing_ids), ("x.id", ids), ("x.months", months), ("x.concept", concepts))
        for column, values in lists:
            if values is None:
                continue
            if not values:
                return []
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            args += list(values)
        trailing_flag = None if trailing is None else int(trailing)
        for column, value in (("x.page_index", page_index), ("x.fiscal_year", fiscal_year),
                              ("x.period_end", end), ("x.trailing", trailing_flag)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        source, score, order = "facts x", "0.0", "x.filing_id, x.page_index, x.char_start, x.col"
        if match is not None:
            source = "facts_fts JOIN facts x ON x.id = facts_fts.rowid"
            where.append("facts_fts MATCH ?")
            args.append(match)
            score, order = "-bm25(facts_fts, 4.0, 1.0, 0.5)", "score DESC, x.id"
        sql = (f"SELECT x.*, f.doc_name, p.printed_folio, {score} AS score FROM {source} "
               "JOIN filings f ON f.id = x.filing_id "
               "LEFT JOIN pages p ON p.filing_id = x.filing_id AND p.page_index = x.page_index"
               + (f" WHERE {' AND '.join(where)}" if where else "") + f" ORDER BY {order}")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_stored_fact(r) for r in self.conn.execute(sql, args)]

    def count_facts(self, match: str, *, filing_ids: Sequence[int] | None = None) -> int:
        """How many stored facts an FTS5 ``match`` over label, parent and title finds (in ``filing_ids`` when given):
        a search's "N more" beyond the hits it lists."""
        if filing_ids is not None and not filing_ids:
            return 0
        sql = "SELECT count(*) FROM facts_fts JOIN facts x ON x.id = facts_fts.rowid WHERE facts_fts MATCH ?"
        args: list[object] = [match]
        if filing_ids is not None:
            sql += f" AND x.filing_id IN ({','.join('?' * len(filing_ids))})"
            args += list(filing_ids)
        return int(self.conn.execute(sql, args).fetchone()[0])

    def table_starts(self, keys: Sequence[tuple[int, int, str, str]]) -> dict[tuple[int, int, str, str], int]:
        """Where each stored table's first cell starts on its page, keyed by (filing id, page index, statement,
        title) as its facts store them: the character a table's printed heading is looked for above."""
        out: dict[tuple[int, int, str, str], int] = {}
        for key in dict.fromkeys(keys):
            row = self.conn.execute("SELECT min(char_start) FROM facts WHERE filing_id=? AND page_index=? AND "
                                    "statement=? AND title=?", key).fetchone()
            if row and row[0] is not None:
                out[key] = int(row[0])
        return out

    def remove_filings(self, filing_ids: Iterable[int]) -> int:
        ids = list(filing_ids)
        if not ids:
            return 0
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            n = 0
            terms.drop(self.conn, ids)
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
        """Filings by id (all when ``ids`` is None), in id order, each with its registrant-level identity: the
        ticker, CIK and fiscal-year end its own cover lacks are its registrant's (``Filing.inherited`` says
        which, see :mod:`engine.store.registrants`)."""
        sql = "SELECT * FROM filings"
        args: tuple = ()
        if ids is not None:
            if not ids:
                return []
            sql += f" WHERE id IN ({','.join('?' * len(ids))})"
            args = tuple(ids)
        view = self._registrant_view()
        return [view.apply(_filing(r)) for r in self.conn.execute(sql + " ORDER BY id", args)]

    def filings_of_companies(self, keys: Iterable[str]) -> list[Filing]:
        """The filings whose company key (:attr:`FilingIdentity.company_key`) is one of ``keys``, in id order:
        found through the issuer index, not by reading every filing."""
        wanted = sorted(set(keys))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        # a filing without an issuer key or a ticker of its own may inherit its registrant's ticker: read those too
        ids = [r[0] for r in self.conn.execute(
            f"SELECT id FROM filings WHERE issuer_key IN ({marks}) OR (issuer_key IS NULL AND (ticker IN ({marks}) "
            "OR ticker IS NULL))", wanted + wanted)]
        return [f for f in self.filings(ids) if f.identity.company_key in wanted]

    def filing(self, filing_id: int) -> Filing:
        found = self.filings([filing_id])
        if not found:
            raise StoreError(f"no filing with id {filing_id} in {self.home}")
        return found[0]

    def filing_by_doc_name(self, doc_name: str) -> Filing | None:
        row = self.conn.execute("SELECT * FROM filings WHERE doc_name=? ORDER BY id LIMIT 1", (doc_name,)).fetchone()
        return None if row is None else self._registrant_view().apply(_filing(row))

    def own_identity(self, filing_id: int) -> FilingIdentity:
        """A filing's identity as it states it, without its registrant's shared values."""
        row = self.conn.execute("SELECT * FROM filings WHERE id=?", (filing_id,)).fetchone()
        if row is None:
            raise KeyError(filing_id)
        return _identity(row)

    def registrants(self) -> list[Registrant]:
        """The library's companies: each registrant's filings and the ticker, CIK and fiscal-year end they share."""
        return list(self._registrant_view().registrants)

    def _registrant_view(self) -> RegistrantView:
        """The registrants as of the current generation (every change of filings moves it), computed once per
        generation from the filings' own identity columns; new conflicting values are logged once."""
        generation, cached = self.generation(), self._view
        if cached is not None and cached[0] == generation:
            return cached[1]
        view = build_view({int(r["id"]): _identity(r) for r in self.conn.execute(
            "SELECT id, doc_name, issuer_key, registrant, ticker, form, period, period_end, fiscal_year, cik, "
            "fiscal_year_end, cik_source, fiscal_year_end_source FROM filings")})
        for registrant in view.registrants:
            for conflict in registrant.conflicts:
                if (registrant.key, conflict) not in self._conflicts_logged:
                    self._conflicts_logged.add((registrant.key, conflict))
                    log.info("registrant %s: its filings state different values, each keeps its own (%s)",
                             registrant.key, conflict)
        self._view = (generation, view)
        return view

    def count(self, table: str) -> int:
        if table not in {"filings", "pages", "chunks", "facts", "runs", "stage_events", "ingest_reports"}:
            raise ValueError(table)
        return int(self.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def word_mentions(self, word: str) -> dict[str, int]:
        """How many chunks of each company (its filings' company key) print ``word`` as a whole word, in any case
        (one scan of the chunk text; for the rare name no company of the library answers to)."""
        rx = re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", re.IGNORECASE)
        company = {f.id: f.identity.company_key for f in self.filings()}
        counts: dict[str, int] = {}
        for filing_id, text in self.conn.execute("SELECT filing_id, text FROM chunks WHERE text LIKE ?", (f"%{word}%",)):
            if rx.search(text):
                counts[company[filing_id]] = counts.get(company[filing_id], 0) + 1
        return counts

    # -- pages and chunks -------------------------------------------------------------------
    def page_text(self, filing_id: int, page_index: int) -> str:
        row = self.conn.execute("SELECT text FROM pages WHERE filing_id=? AND page_index=?",
                                (filing_id, page_index)).fetchone()
        if row is None:
            raise StoreError(f"filing {filing_id} has no page index {page_index} (page {page_index + 1})")
        return str(row[0])

    def printed_folios(self, filing_id: int) -> dict[int, str]:
        """Page index → the number the page prints, for the pages of a filing where one was read."""
        return {int(r[0]): str(r[1]) for r in self.conn.execute(
            "SELECT page_index, printed_folio FROM pages WHERE filing_id=? AND printed_folio IS NOT NULL",
            (filing_id,))}

    def set_printed_folios(self, filing_id: int, folios: Sequence[str | None], version: str) -> None:
        """Store the folios of a filing's pages (one per page, in order) read by folio reader ``version``."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany("UPDATE pages SET printed_folio=? WHERE filing_id=? AND page_index=?",
                                  ((folio, filing_id, i) for i, folio in enumerate(folios)))
            self.conn.execute("UPDATE filings SET folio_version=? WHERE id=?", (version, filing_id))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def set_identity(self, filing_id: int, ident: FilingIdentity, version: str) -> None:
        """Store a filing's CIK and fiscal-year end, where each was read, its period's end (an 8-K's date of report),
        and the identity reader that read them."""
        with self.conn:
            self.conn.execute("UPDATE filings SET cik=?, cik_source=?, fiscal_year_end=?, fiscal_year_end_source=?, "
                              "period_end=?, identity_version=? WHERE id=?",
                              (ident.cik, ident.cik_source, ident.fiscal_year_end, ident.fiscal_year_end_source,
                               ident.period_end, version, filing_id))
        self._view = None  # the registrants' shared values follow (no index reads these columns)

    def set_sections(self, filing_id: int, sections: Sequence[tuple[int, str]], version: str) -> None:
        """Store the sections a newer section reader read for a filing's chunks: ``(chunk id, section)`` pairs."""
        with self.conn:
            self.conn.executemany("UPDATE chunks SET section=? WHERE id=? AND filing_id=?",
                                  ((s, cid, filing_id) for cid, s in sections))
            self.conn.execute("UPDATE filings SET section_version=? WHERE id=?", (version, filing_id))

    def concepts_version(self) -> str:
        """The concept mapping the stored facts' concepts were set by ("" before it was recorded)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='concepts_version'").fetchone()
        return str(row[0]) if row else ""

    def fact_labels(self) -> list[tuple[int, str, str, str, str, str | None]]:
        """Every stored fact as (id, label, parent, statement, unit, concept): what its concept is read from."""
        return [(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in self.conn.execute(
            "SELECT id, label, parent, statement, unit, concept FROM facts ORDER BY id")]

    def set_concepts(self, changed: Sequence[tuple[int, str | None]], version: str) -> None:
        """Store the concepts a newer mapping gives facts (``(fact id, concept)``) and the mapping's version."""
        with self.conn:
            self.conn.executemany("UPDATE facts SET concept=? WHERE id=?", ((c, i) for i, c in changed))
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('concepts_version', ?)", (version,))

    def chunk_sections(self, filing_ids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
        """Chunk id → (section, kind "text" | "table", filing id) for every chunk of ``filing_ids``."""
        if not filing_ids:
            return {}
        sql = f"SELECT id, section, kind, filing_id FROM chunks WHERE filing_id IN ({','.join('?' * len(filing_ids))})"
        return {int(r[0]): (r[1], r[2], int(r[3])) for r in self.conn.execute(sql, tuple(filing_ids))}

    def page_texts(self, filing_id: int) -> list[str]:
        """The texts of a filing's pages, in page order."""
        return [str(r[0]) for r in self.conn.execute(
            "SELECT text FROM pages WHERE filing_id=? ORDER BY page_index", (filing_id,))]

    _CHUNK_SQL = (
        "SELECT c.id, c.filing_id, f.doc_name, c.page_index, c.char_start, c.char_end, c.kind, c.text, "
        "c.context, p.printed_folio, c.section FROM chunks c JOIN filings f ON f.id = c.filing_id "
        "LEFT JOIN pages p ON p.filing_id = c.filing_id AND p.page_index = c.page_index"
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

    def stored_cards(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """The cached evidence cards of some chunks: chunk id -> (version, card JSON)."""
        out: dict[int, tuple[str, str]] = {}
        ids = list(chunk_ids)
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            rows = self.conn.execute(f"SELECT chunk_id, version, card FROM cards WHERE chunk_id IN "
                                     f"({','.join('?' * len(part))})", part).fetchall()
            out.update({int(r[0]): (r[1], r[2]) for r in rows})
        return out

    def store_cards(self, rows: Sequence[tuple[int, str, str, str, str]]) -> None:
        """Keep evidence cards: (chunk id, version, source, model id, card JSON) each; a card of a chunk removed
        meanwhile is skipped (its filing was re-read or removed)."""
        if not rows:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany(
                "INSERT OR REPLACE INTO cards(chunk_id, version, source, model, card, made_at) "
                "SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)",
                [(cid, version, source, model, card, _now(), cid) for cid, version, source, model, card in rows])
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def facts_versions(self, filing_ids: Sequence[int]) -> dict[int, str]:
        """Which fact extractor read each filing's facts (a card made from facts names it)."""
        ids = list(filing_ids)
        rows = self.conn.execute(f"SELECT id, facts_version FROM filings WHERE id IN ({','.join('?' * len(ids))})",
                                 ids).fetchall() if ids else []
        return {int(r[0]): r[1] for r in rows}

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
            ("SELECT COUNT(*) FROM facts x WHERE NOT EXISTS (SELECT 1 FROM filings f WHERE f.id=x.filing_id)",
             "orphan facts"),
        ]:
            n = int(self.conn.execute(sql).fetchone()[0])
            if n:
                problems.append(f"{n} {what}")
        try:  # FTS5's own check: the label index holds exactly the facts table's rows
            self.conn.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            problems.append(f"the facts' label search disagrees with the facts table: {exc}")
        return problems


def _identity(row: sqlite3.Row) -> FilingIdentity:
    return FilingIdentity(
        doc_name=row["doc_name"], issuer_key=row["issuer_key"], registrant=row["registrant"], ticker=row["ticker"],
        form=row["form"], period=row["period"], period_end=row["period_end"], fiscal_year=row["fiscal_year"],
        cik=row["cik"], fiscal_year_end=row["fiscal_year_end"], cik_source=row["cik_source"],
        fiscal_year_end_source=row["fiscal_year_end_source"],
    )


def _filing(row: sqlite3.Row) -> Filing:
    return Filing(
        id=int(row["id"]), sha256=row["sha256"], path=row["path"], identity=_identity(row), n_pages=row["n_pages"],
        n_chunks=row["n_chunks"], summary=row["summary"], image_only_pages=tuple(json.loads(row["image_only_pages"])),
    )


_FACT_COLUMNS = ("filing_id, chunk_id, page_index, statement, title, label, parent, is_total, col, "
                 "period_header, col_group, fiscal_year, period_end, months, printed, value, scale, unit, "
                 "char_start, char_end, confidence, source, concept, x0, y0, x1, y1, trailing")


def _fact_row(f: StatementFact) -> tuple:
    box = f.box or (None, None, None, None)
    p = f.period
    return (f.page_index, f.statement, f.title, f.label, f.parent, int(f.is_total), f.column, p.header,
            p.group, p.fiscal_year, p.end, p.months, f.printed, f.value, f.scale, f.unit, f.char_start,
            f.char_end, f.confidence, f.source, f.concept, *box, int(p.trailing))


def _stored_fact(r: sqlite3.Row) -> StoredFact:
    box = None if r["x0"] is None else (r["x0"], r["y0"], r["x1"], r["y1"])
    fact = StatementFact(
        page_index=r["page_index"], statement=r["statement"], title=r["title"], label=r["label"],
        parent=r["parent"], is_total=bool(r["is_total"]), column=r["col"],
        period=ColumnPeriod(r["period_header"], r["fiscal_year"], r["period_end"], r["months"], r["col_group"],
                            bool(r["trailing"])),
        printed=r["printed"], value=r["value"], scale=r["scale"], unit=r["unit"], char_start=r["char_start"],
        char_end=r["char_end"], confidence=r["confidence"], source=r["source"], concept=r["concept"], box=box)
    return StoredFact(id=int(r["id"]), filing_id=int(r["filing_id"]), doc_name=r["doc_name"], chunk_id=r["chunk_id"],
                      fact=fact, score=float(r["score"]), printed_folio=r["printed_folio"])


def _chunk(r: sqlite3.Row | tuple) -> Chunk:
    return Chunk(id=int(r[0]), filing_id=int(r[1]), doc_name=r[2], page_index=int(r[3]), char_start=int(r[4]),
                 char_end=int(r[5]), kind=r[6], text=r[7], context=r[8], printed_folio=r[9], section=r[10])


# RunStore.list(evaluation=ANY_EVALUATION): the runs of every evaluation (no results folder is named "*").
ANY_EVALUATION = "*"

# The runs this process has created and not yet finished: a run recorded as this process's that is not here stopped
# without finishing (its generator was abandoned, say), while one here is really running and is never settled.
_RUNNING_HERE: set[str] = set()


def _this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


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

    def create(self, run_id: str, kind: str, question: str, settings_json: str, *, evaluation: str = "") -> None:
        """Record a run as ``running``, owned by this process. ``evaluation``: the results folder of the evaluation
        asking the question ('' when the analyst asks it)."""
        _RUNNING_HERE.add(run_id)
        self.conn.execute(
            "INSERT INTO runs(id, kind, question, status, settings, started_at, owner, evaluation) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (run_id, kind, question, "running", settings_json, _now(), _this_process(), evaluation),
        )

    def settle_orphans(self) -> int:
        """Mark "running" runs that nothing is answering any more as ``interrupted``; returns how many.

        A run of this process is running while this process has created and not finished it; a run of another
        process on this machine while that process lives (a pid reused by a process started after the run does not
        count as its owner); a run of another machine sharing the library is left alone.
        """
        host, here = socket.gethostname(), _this_process()
        orphans = []
        for r in self.conn.execute("SELECT id, owner, started_at FROM runs WHERE status='running'").fetchall():
            if r["owner"] == here:
                if r["id"] not in _RUNNING_HERE:
                    orphans.append((r["id"], "the run stopped before it finished (its question was abandoned)"))
                continue
            owner_host, _, pid = r["owner"].rpartition(":")
            if owner_host and owner_host != host:
                continue
            if pid.isdigit() and _alive_since(int(pid), r["started_at"]):
                continue
            orphans.append((r["id"], "the process answering it ended before the run finished"))
        for run_id, why in orphans:
            self.conn.execute(
                "UPDATE runs SET status='interrupted', error=?, finished_at=? WHERE id=? AND status='running'",
                (why, _now(), run_id),
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
        _RUNNING_HERE.discard(run_id)

    def list(self, limit: int = 50, *, evaluation: str | None = None) -> builtins.list[sqlite3.Row]:
        """The latest runs, newest first, dead ones settled first (:meth:`settle_orphans`). ``evaluation``: None,
        every run; '' the analyst's own questions; :data:`ANY_EVALUATION` the runs of every evaluation; a results
        folder, the runs of that evaluation."""
        self.settle_orphans()
        where: str = ""
        args: tuple[str, ...] = ()
        if evaluation == ANY_EVALUATION:
            where = "WHERE r.evaluation != '' "
        elif evaluation is not None:
            where, args = "WHERE r.evaluation = ? ", (evaluation,)
        return self.conn.execute(
            "SELECT r.*, (SELECT COALESCE(SUM(tokens_in),0) FROM stage_events e WHERE e.run_id=r.id) AS tokens_in, "
            "(SELECT COALESCE(SUM(tokens_out),0) FROM stage_events e WHERE e.run_id=r.id) AS tokens_out "
            f"FROM runs r {where}ORDER BY started_at DESC, rowid DESC LIMIT ?", (*args, limit)
        ).fetchall()

    def evaluations(self) -> builtins.list[tuple[str, int, str]]:
        """``(results folder, runs, latest start)`` of each evaluation that stored runs, latest first."""
        return [(r[0], int(r[1]), r[2]) for r in self.conn.execute(
            "SELECT evaluation, COUNT(*), MAX(started_at) FROM runs WHERE evaluation != '' "
            "GROUP BY evaluation ORDER BY MAX(started_at) DESC, MAX(rowid) DESC")]

    def link_evaluation(self, run_ids: Sequence[str], evaluation: str) -> int:
        """Mark stored runs as asked by ``evaluation`` (runs an evaluation stored before runs carried the link);
        returns how many changed."""
        ids = [i for i in dict.fromkeys(run_ids) if i]
        changed = 0
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            changed += self.conn.execute(
                f"UPDATE runs SET evaluation = ? WHERE evaluation != ? AND id IN ({','.join('?' * len(part))})",
                (evaluation, evaluation, *part)).rowcount
        return changed

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
