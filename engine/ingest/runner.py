"""Ingest many files: parse in worker processes, store each filing in one SQLite transaction.

Memory stays flat: at most ``2 × workers`` parsed filings are in flight. A crash at any point leaves
every filing either fully stored or absent; the next run skips what is stored (sha256) and the
indexes, which lag behind by generation, are brought up to date afterwards.

Files are read in a pebble process pool (``pebble`` rather than ``concurrent.futures``: it kills one task that
runs past its time limit, or replaces a worker that died, and the pool goes on), so a pathological file is
abandoned after ``ingest.file_timeout_s`` and reported, and the rest of the batch is read. Only
``ingest.workers = 1`` reads in this process, with no time limit.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pebble import ProcessPool

from engine.ingest.folio import FOLIO_VERSION, printed_folios
from engine.ingest.identity import (
    FROM_LINKS,
    IDENTITY_VERSION,
    linked_cik,
    parse_cover,
    pdf_link_uris,
    with_balance_sheet_year_end,
)
from engine.ingest.parse import (
    FACTS_VERSION,
    SUPPORTED_SUFFIXES,
    parse_job,
    pool_outcome,
    reads_pages_alike,
    warm_worker,
)
from engine.ingest.sections import SECTION_VERSION, chunk_sections
from engine.models.hashing import sha256_file
from engine.pages import reader_page
from engine.records import ChunkSpan, ParsedFiling
from engine.settings import Settings
from engine.store.library import Library
from engine.vocab.concepts import CONCEPTS_VERSION, concept_for

if TYPE_CHECKING:
    from engine.ingest.cluster import VectorCache

log = logging.getLogger(__name__)

LOFIN_SUMMARIES = "summarization_results.json"


@dataclass(frozen=True)
class IngestEvent:
    """One file's outcome; ``done``/``total`` drive a progress bar."""

    path: str
    status: str  # added | unchanged | duplicate | failed | removed | skipped
    reason: str
    done: int
    total: int
    doc_name: str = ""


@dataclass
class IngestReport:
    batch_id: str
    events: list[IngestEvent] = field(default_factory=list)
    cancelled: bool = False

    def count(self, status: str) -> int:
        return sum(e.status == status for e in self.events)

    def summary(self) -> str:
        parts = [f"{self.count(s)} {s}" for s in ("added", "unchanged", "duplicate", "removed", "failed", "skipped")
                 if self.count(s)]
        return ", ".join(parts) or "nothing to do"


def discover(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path], list[tuple[Path, str]]]:
    """Expand files and folders into (filing files, LOFin summary files, skipped files with reasons).

    Linked folders are followed once each (a link back up the tree is a loop and reported, not walked); a
    folder that cannot be read and a link to nothing are reported as skipped."""
    files, summaries, skipped = [], [], []

    def consider(f: Path, listed: bool) -> None:
        if f.name == LOFIN_SUMMARIES:
            summaries.append(f)
        elif f.suffix.lower() in SUPPORTED_SUFFIXES:
            files.append(f.resolve())
        elif not listed:
            skipped.append((f, f"unsupported file type {f.suffix or '(none)'}: FilingLens reads .pdf, .htm and .html"))

    for raw in paths:
        p = Path(raw).expanduser()
        if not p.exists():
            skipped.append((p, "a link to a file that does not exist" if p.is_symlink() else "no such file or folder"))
        elif p.is_dir():
            for f, reason in sorted(_walk(p)):  # the order of a sorted listing of the tree
                if reason:
                    skipped.append((f, reason))
                else:
                    consider(f, True)
        else:
            consider(p, False)
    return files, summaries, skipped


def _walk(top: Path) -> Iterator[tuple[Path, str]]:
    """Every file under ``top``, with "" as its reason; or a path and why it was not read."""
    seen = {top.resolve()}
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError as exc:
            yield folder, f"cannot read this folder: {exc.strerror or exc}"
            continue
        subfolders = []
        for entry in entries:
            try:
                if entry.is_dir():
                    real = entry.resolve()
                    if real in seen:
                        yield entry, f"a link to {real}, which is already being read (a loop): not followed"
                    else:
                        seen.add(real)
                        subfolders.append(entry)
                elif entry.is_file():
                    yield entry, ""
                elif entry.is_symlink():
                    yield entry, "a link to a file that does not exist"
            except OSError as exc:  # too many levels of links, a name the file system refuses
                yield entry, f"cannot read: {exc.strerror or exc}"
        stack.extend(reversed(subfolders))


def load_lofin_summaries(paths: Iterable[Path], wanted: set[str] | None = None) -> dict[str, str]:
    """LOFin's ``summarization_results.json``: doc name → summary (a dict, or a list of records), for the doc
    names in ``wanted`` (all when None). Read streaming (``ijson``): LOFin's file for 145,897 filings is never
    held whole, and only the summaries asked for are kept. A file that breaks off keeps what was read before."""
    import ijson

    out: dict[str, str] = {}

    def keep(key: object, value: object) -> None:
        if key and isinstance(value, str):
            stem = Path(str(key)).stem
            if wanted is None or stem in wanted:
                out[stem] = value

    for path in paths:
        try:
            with path.open("rb") as fh:
                head = fh.read(4096).lstrip()[:1]
                fh.seek(0)
                if head == b"{":
                    for key, value in ijson.kvitems(fh, "", use_float=True):
                        keep(key, value)
                elif head == b"[":
                    for r in ijson.items(fh, "item", use_float=True):
                        if isinstance(r, dict):
                            keep(r.get("doc_name") or r.get("file") or r.get("filename") or r.get("title"),
                                 r.get("summary") or r.get("text"))
                else:
                    log.warning("ignoring %s: not a JSON object or list", path)
        except (OSError, ijson.JSONError) as exc:
            log.warning("ignoring the rest of %s: %s", path, exc)
    return out


def ingest_iter(library: Library, paths: Iterable[str | Path], settings: Settings, *, prune: bool = True,
                cancel: Callable[[], bool] | None = None, vectors: VectorCache | None = None) -> Iterator[IngestEvent]:
    """Ingest files and folders, yielding one event per file. Folders given are synced: filings previously
    ingested from inside them whose files are gone are removed (``prune``). Filings stored before the current
    folio reader get their pages' folios read from the stored text (:func:`refresh_folios`).

    Files are read by this machine's process pool, or on a Ray cluster when ``settings.ingest.ray`` names one
    (:mod:`engine.ingest.cluster`); there, the filings' vectors are embedded on the cluster too and put in
    ``vectors`` for the index build (:class:`engine.ingest.cluster.CachedEmbedder`)."""
    roots = [Path(p).expanduser().resolve() for p in paths]
    files, summary_files, skipped = discover(roots)
    batch_id = uuid.uuid4().hex[:12]
    total = len(files) + len(skipped)
    done = 0

    def event(path: Path | str, status: str, reason: str = "", sha: str | None = None, filing_id: int | None = None,
              doc_name: str = "") -> IngestEvent:
        nonlocal done
        done += 1
        library.record_report(batch_id, str(path), status, reason, sha256=sha, filing_id=filing_id)
        return IngestEvent(str(path), status, reason, done, total, doc_name)

    for path, reason in skipped:
        yield event(path, "skipped", reason)

    reread: dict[str, int] = {}  # files stored by an older reader of their kind: read again in their place
    seen: dict[str, Path] = {}
    todo: list[tuple[Path, str]] = []
    for f in files:
        try:
            sha = sha256_file(f)
            empty = f.stat().st_size == 0
        except OSError as exc:
            yield event(f, "failed", f"cannot read file: {exc.strerror or exc}")
            continue
        if empty:  # every empty file has one sha256: none is a "duplicate" of another
            yield event(f, "failed", "empty file (0 bytes)", sha)
            continue
        known = library.filing_by_sha(sha)
        if known is not None and reads_pages_alike(known[1], str(f)):
            library.update_path(known[0], str(f))
            yield event(f, "unchanged", "already in the library (same sha256)", sha, known[0])
        elif known is not None:  # stored by an older reader of its kind of file: read it again, in its place
            reread[str(f)] = known[0]
            seen[sha] = f
            todo.append((f, sha))
        elif sha in seen:
            yield event(f, "duplicate", f"same content as {seen[sha].name}", sha)
        else:
            seen[sha] = f
            todo.append((f, sha))

    # a changed file replaces the filing stored from the same path
    stored_at = {**library.filings_at([str(f) for f, _ in todo]), **reread}
    if prune:  # the filings stored from inside the folders given (a range of the path index), not every filing
        present = {str(f) for f in files}
        inside = {p: fid for r in roots if r.is_dir() for p, fid in library.filings_under(r).items()}
        for stored, fid in inside.items():
            if stored not in present and not Path(stored).exists():
                library.remove_filings([fid])
                total += 1
                yield event(stored, "removed", "file no longer exists", filing_id=fid)

    lofin = load_lofin_summaries(summary_files, {f.stem for f, _ in todo}) if todo else {}
    settings_json = settings.model_dump_json()
    results: Iterator[tuple[Path, str, ParsedFiling | str]]
    if settings.ingest.ray:
        from engine.ingest.cluster import connected, read_on_ray

        with connected(settings.ingest.ray, settings.ingest.workers) as ray:
            yield from _store_all(library, read_on_ray(ray, todo, settings, lofin, vectors, cancel), event, cancel,
                                  stored_at)
    elif settings.ingest.workers == 1:  # the user's choice: read here, one at a time, with no time limit
        results = ((f, sha, parse_job(str(f), sha, settings_json, lofin.get(f.stem))) for f, sha in todo)
        yield from _store_all(library, results, event, cancel, stored_at)
    elif todo:
        workers = min(settings.ingest.workers, len(todo))
        pool = ProcessPool(max_workers=workers, context=mp.get_context("spawn"),  # fork is unsafe with threads
                           initializer=warm_worker)
        try:
            parsed = _bounded_map(pool, todo, settings_json, lofin, 2 * workers, settings.ingest.file_timeout_s,
                                  cancel)
            yield from _store_all(library, parsed, event, cancel, stored_at)
        finally:
            if cancel and cancel():
                pool.stop()  # files still being read are dropped, not waited for
            else:
                pool.close()
            pool.join()
    if not (cancel and cancel()):
        refresh_folios(library)
        refresh_sections(library)
        refresh_concepts(library)


def _bounded_map(pool: ProcessPool, todo: list[tuple[Path, str]], settings_json: str, lofin: dict[str, str],
                 window: int, timeout: float, cancel: Callable[[], bool] | None
                 ) -> Iterator[tuple[Path, str, ParsedFiling | str]]:
    pending: dict[Future, tuple[Path, str]] = {}
    queue = iter(todo)
    while True:
        while len(pending) < window and not (cancel and cancel()):
            nxt = next(queue, None)
            if nxt is None:
                break
            f, sha = nxt
            args = (str(f), sha, settings_json, lofin.get(f.stem))
            pending[pool.schedule(parse_job, args=args, timeout=timeout)] = nxt
        if not pending:
            return
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in finished:
            f, sha = pending.pop(fut)
            yield f, sha, pool_outcome(fut, timeout)


def _store_all(library: Library, results: Iterable[tuple[Path, str, ParsedFiling | str]], event: Callable[..., IngestEvent],
               cancel: Callable[[], bool] | None, stored_at: dict[str, int]) -> Iterator[IngestEvent]:
    for f, sha, outcome in results:
        if isinstance(outcome, str):
            yield event(f, "failed", outcome, sha)
        else:
            replaces = stored_at.get(str(f))
            fid = library.add_filing(outcome, replaces=replaces)
            flagged = outcome.image_only_pages
            note = f"{len(outcome.pages)} pages, {len(outcome.chunks)} chunks, {len(outcome.facts)} facts"
            if replaces is not None:
                note += "; replaces the earlier version of this file (or its reading by an older parser)"
            if flagged:
                pages = ", ".join(str(reader_page(i)) for i in flagged[:10])
                note += f"; {len(flagged)} image-only page(s) without text layer: {pages}"
            note += "".join(f"; {n}" for n in outcome.notes)
            yield event(f, "added", note, sha, fid, outcome.identity.doc_name)
        if cancel and cancel():
            return


def ingest(library: Library, paths: Iterable[str | Path], settings: Settings, *, prune: bool = True,
           cancel: Callable[[], bool] | None = None, on_event: Callable[[IngestEvent], None] | None = None,
           vectors: VectorCache | None = None) -> IngestReport:
    report = IngestReport(batch_id="")
    for ev in ingest_iter(library, paths, settings, prune=prune, cancel=cancel, vectors=vectors):
        report.events.append(ev)
        if on_event:
            on_event(ev)
    report.cancelled = bool(cancel and cancel())
    rows = library.conn.execute("SELECT batch_id FROM ingest_reports ORDER BY id DESC LIMIT 1").fetchone()
    report.batch_id = rows[0] if rows else ""
    return report


def refresh_facts(library: Library, settings: Settings) -> tuple[int, list[str]]:
    """Re-read the facts of filings read by an older fact reader (or before facts existed) from their files;
    returns (filings refreshed, problems). A filing whose file is gone or changed keeps its facts and is named."""
    rows = library.conn.execute("SELECT id, path, sha256, parser_version FROM filings WHERE facts_version != ? "
                                "ORDER BY id", (FACTS_VERSION,)).fetchall()
    done, problems = 0, []
    settings_json = settings.model_dump_json()
    for fid, path, sha, parser_version in rows:
        try:
            same = Path(path).exists() and sha256_file(Path(path)) == sha
        except OSError:
            same = False
        if not same or not reads_pages_alike(parser_version, path):  # the facts' spans would miss the stored pages
            why = "the file is gone or changed" if not same else "it was read by an older parser"
            problems.append(f"{path}: {why}; ingest it again to read its facts")
        else:
            outcome = parse_job(path, sha, settings_json, None)
            if isinstance(outcome, str):
                problems.append(f"{path}: {outcome}")
            else:
                library.replace_facts(fid, outcome.facts, outcome.facts_version)
                done += 1
    return done, problems


def refresh_sections(library: Library) -> int:
    """Read the chunks' sections of filings stored before the current section reader (an upgraded library) from
    their stored pages: no file is opened, chunks keep their ids. Returns how many filings were read."""
    rows = library.conn.execute("SELECT id, form FROM filings WHERE section_version != ? ORDER BY id",
                                (SECTION_VERSION,)).fetchall()
    for fid, form in rows:
        chunks = library.chunks_of_filings([fid])
        spans = [ChunkSpan(c.page_index, i, c.char_start, c.char_end, c.kind, c.text) for i, c in enumerate(chunks)]
        found = chunk_sections(library.page_texts(fid), spans, form)
        library.set_sections(fid, [(c.id, s) for c, s in zip(chunks, found, strict=True)], SECTION_VERSION)
    if rows:
        log.info("read the sections of %d filing(s) from their stored pages", len(rows))
    return len(rows)


def refresh_identity(library: Library) -> tuple[int, int]:
    """Read the CIK and fiscal-year end of filings stored before the current identity reader (an upgraded library):
    a PDF's links to its EDGAR folder (the file is opened for its links only, not read again; a file gone or changed
    is skipped) and a 10-Q's balance-sheet columns (from its stored facts). What a filing's own cover or tags state is
    kept, and the period's end the stored cover page's text states fills one the identity lacks (an 8-K's date of
    report printed on the line below its caption, read by a newer cover reader). Returns (filings read, filings given
    a new value)."""
    rows = library.conn.execute("SELECT id, path, sha256 FROM filings WHERE identity_version != ? ORDER BY id",
                                (IDENTITY_VERSION,)).fetchall()
    changed = 0
    for fid, path, sha in rows:
        own = library.own_identity(fid)
        ident = own
        cover = parse_cover("\n".join(library.page_text(fid, i) for i in range(min(2, library.filing(fid).n_pages))))
        if cover["period_end"] and not ident.period_end:  # (names and tickers are in the indexed summaries: kept)
            ident = replace(ident, period_end=cover["period_end"])
        if not own.cik and path.lower().endswith(".pdf"):
            try:
                uris = pdf_link_uris(path) if Path(path).exists() and sha256_file(Path(path)) == sha else []
            except Exception as exc:  # noqa: BLE001 - a damaged file keeps what it had
                log.info("%s: its links could not be read (%s)", path, exc)
                uris = []
            if cik := linked_cik(uris):
                ident = replace(ident, cik=cik, cik_source=FROM_LINKS)
        ident = with_balance_sheet_year_end(
            ident, [(s.fact.statement, s.fact.period.end, s.fact.period.months) for s in library.facts(filing_ids=[fid])])
        changed += ident != own
        library.set_identity(fid, ident, IDENTITY_VERSION)
    if rows:
        log.info("read the CIK and fiscal-year end of %d filing(s) (%d changed)", len(rows), changed)
    return len(rows), changed


def refresh_concepts(library: Library) -> int:
    """Map the stored facts' labels to concepts again when the mapping changed since they were mapped (an upgraded
    library: a synonym added, "Cost of products"): no file is read again, facts keep their ids. Returns how many
    facts' concepts changed."""
    if library.concepts_version() == CONCEPTS_VERSION:
        return 0
    changed = [(fid, new) for fid, label, parent, statement, unit, concept in library.fact_labels()
               if (new := concept_for(label, parent, statement, unit)) != concept]
    library.set_concepts(changed, CONCEPTS_VERSION)
    if changed:
        log.info("mapped %d stored fact(s) to other concepts (concept mapping %s)", len(changed), CONCEPTS_VERSION)
    return len(changed)


def refresh_folios(library: Library) -> int:
    """Read the folios of filings stored before the current folio reader (an upgraded library) from their
    stored page texts: no file is opened, pages and chunks stay as they are. Returns how many filings were
    read."""
    rows = library.conn.execute("SELECT id FROM filings WHERE folio_version != ? ORDER BY id",
                                (FOLIO_VERSION,)).fetchall()
    for (fid,) in rows:
        library.set_printed_folios(fid, printed_folios(library.page_texts(fid)), FOLIO_VERSION)
    if rows:
        log.info("read the printed page numbers of %d filing(s) from their stored pages", len(rows))
    return len(rows)


# what a filing's stored readings are checked against: column of ``filings`` -> (reader version, what it reads)
_READINGS = (("folio_version", FOLIO_VERSION, "page numbers"), ("section_version", SECTION_VERSION, "sections"),
             ("facts_version", FACTS_VERSION, "statement facts"), ("identity_version", IDENTITY_VERSION,
                                                                    "CIK and fiscal-year end"))


@dataclass(frozen=True)
class Refreshed:
    """What :func:`refresh_readings` read again."""

    counts: tuple[tuple[str, int], ...] = ()  # (what was read, filings read), in the order read
    concepts: int = 0  # stored facts mapped to other concepts
    identity_changed: int = 0  # filings given a new CIK or fiscal-year end
    problems: tuple[str, ...] = ()  # files whose facts could not be read again, and why

    def text(self) -> str:
        """"read again with the current readers: the statement facts of 9 filings; …" ("" when nothing was)."""
        parts = [f"the {what} of {n} filing{'s' if n != 1 else ''}" for what, n in self.counts if n]
        if self.concepts:
            parts.append(f"the concepts of {self.concepts} stored fact{'s' if self.concepts != 1 else ''}")
        return f"read again with the current readers: {'; '.join(parts)}" if parts else ""


def stale_readings(library: Library) -> dict[str, int]:
    """What of the stored filings an older FilingLens read (an upgraded library), and of how many: {"statement
    facts": 9, …}; {} when every reading is current. Counting only: a query per reader."""
    out = {what: library.conn.execute(f"SELECT COUNT(*) FROM filings WHERE {column} != ?", (version,)).fetchone()[0]
           for column, version, what in _READINGS}
    if library.concepts_version() != CONCEPTS_VERSION and library.count("facts"):
        out["concepts of the statement facts"] = 1
    return {what: n for what, n in out.items() if n}


def refresh_readings(library: Library, settings: Settings) -> Refreshed:
    """Read again whatever the stored filings were read by an older reader: page numbers and sections from the
    stored pages, statement facts from the files (a file gone or changed keeps its facts and is named), the facts'
    concepts, then the CIK and fiscal-year end (which read the facts). Each only for the filings that need it; what
    ``filinglens index build`` and the app's Update index do before the indexes."""
    folios = refresh_folios(library)
    sections = refresh_sections(library)
    facts, problems = refresh_facts(library, settings)
    concepts = refresh_concepts(library)
    identity, changed = refresh_identity(library)
    return Refreshed((("page numbers", folios), ("sections", sections), ("statement facts", facts),
                      ("CIK and fiscal-year end", identity)), concepts, changed, tuple(problems))

