"""The derived indexes (BM25 over chunks, HNSW over filing summaries and optionally chunks): built by one builder at
a time, read by everyone else.

Builders (``filinglens ingest``, ``filinglens index build|rebuild``, the app's ingest and removal) call
:func:`sync_indexes`, which holds the library's builder lock and publishes a complete new index set
(:mod:`engine.store.index_sets`). Readers (questions, search, eval, the app) call :func:`open_indexes`: it never
writes, opens the last published set, says how many filings it does not hold yet (:class:`IndexStatus`) and hides
what it holds of filings removed or replaced since.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine.errors import EngineError, IndexDamagedError, IndexNotReadyError
from engine.files import link_or_copy, write_atomic
from engine.models.base import Embedder
from engine.settings import Settings
from engine.store import terms
from engine.store.bm25 import LexicalIndex
from engine.store.hnsw import HnswIndex
from engine.store.index_sets import (
    RESUME_DIR,
    PublishedSet,
    builder_lock,
    builder_owner,
    describe_owner,
    new_build_dir,
    publish,
    read_current,
    remove_leftovers,
)
from engine.store.library import Library
from engine.store.manifest import read_manifest

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]

LEXICAL, SUMMARIES, CHUNK_VECTORS = "lexical", "filing-summaries", "chunk-vectors"
CHECKPOINT_BATCHES = 80  # chunk-vector batches between checkpoints a killed build resumes from
BUILD_HINT = "run `filinglens index build` (or wait for the running ingest to finish)"


def _chunking_id(settings: Settings) -> str:
    return f"size={settings.chunking.size},overlap={settings.chunking.overlap}"


def _hnsw(folder: Path, settings: Settings, embedder: Embedder, name: str) -> HnswIndex:
    identity = {"kind": name, "model_id": embedder.model_id, "fingerprint": embedder.fingerprint, "dims": embedder.dims}
    if name == CHUNK_VECTORS:
        identity |= {"chunking": _chunking_id(settings)}
    r = settings.retrieval
    return HnswIndex(folder, name, identity, m=r.hnsw_m, ef_construction=r.hnsw_ef_construction,
                     ef_search=r.hnsw_ef_search, merge_fraction=r.hnsw_merge_fraction)


def summary_document(summary: str, lofin_summary: str | None) -> str:
    return f"{summary}\n{lofin_summary}" if lofin_summary else summary


# -- reading ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class IndexStatus:
    """How the published index set compares with the library (read from manifests; no index is loaded).

    Attributes:
        library_generation: The library's generation now.
        generation: The published set's generation; None when no set was published.
        filings: Filings in the library.
        pending: Library filings the set does not hold: not searchable until the next build publishes.
        removed: Filings the set holds that were removed (or replaced) since: readers hide them.
        legacy: The index predates index sets (it does not record its filings; ``pending`` is then 0 or all).
        builder: Who is building now (from ``builder.json``), when a live process is.
    """

    library_generation: int
    generation: int | None
    filings: int
    pending: int = 0
    removed: int = 0
    legacy: bool = False
    builder: str | None = None

    @property
    def ready(self) -> bool:
        return self.generation is not None

    @property
    def behind(self) -> bool:
        return self.generation != self.library_generation or bool(self.pending or self.removed)

    def message(self) -> str:
        """One line for the user; empty when the index is up to date."""
        if not self.ready:
            return "" if not self.filings else f"the library has no search index yet: {BUILD_HINT}"
        if not self.behind:
            return ""
        then = f"{self.builder} is updating it" if self.builder else "`filinglens index build` updates it"
        if self.legacy:
            what = "the search index was built by an earlier version and lags behind the library"
        elif self.pending:
            what = f"{self.pending} of {self.filings} filings are not searchable yet"
        else:
            what = "the search index lags behind the library"
        hidden = f"; {self.removed} removed filing(s) are left out" if self.removed else ""
        return (f"{what} (index at generation {self.generation}, library at {self.library_generation}{hidden}): "
                f"{then}")


def _status(library: Library, gen: int, pset: PublishedSet | None, stamps: dict[int, str],
            indexed: set[int] | None = None) -> IndexStatus:
    owner = builder_owner(library.home)
    builder = describe_owner(owner) if owner is not None else None
    if pset is None:
        return IndexStatus(gen, None, len(stamps), len(stamps), builder=builder)
    if pset.filings is not None:
        pending = sum(1 for fid, stamp in stamps.items() if pset.filings.get(fid) != stamp)
        removed = sum(1 for fid, stamp in pset.filings.items() if stamps.get(fid) != stamp)
        return IndexStatus(gen, pset.generation, len(stamps), pending, removed, builder=builder)
    if indexed is None:  # legacy, not loaded: all or nothing
        return IndexStatus(gen, pset.generation, len(stamps), 0 if pset.generation == gen else len(stamps),
                           legacy=True, builder=builder)
    return IndexStatus(gen, pset.generation, len(stamps), len(stamps.keys() - indexed), len(indexed - stamps.keys()),
                       legacy=True, builder=builder)


def _read_current(library: Library) -> PublishedSet | None:
    """``read_current``, again when the set it named was removed meanwhile (two publishes during the read)."""
    for attempt in range(5):
        try:
            return read_current(library.index_dir)
        except IndexDamagedError:
            if attempt == 4:
                raise
    return None  # pragma: no cover - the loop returns or raises


def _read_state(library: Library) -> tuple[int, dict[int, str], PublishedSet | None]:
    """The library's generation and filing stamps (one snapshot) and the published set."""
    with library.snapshot():
        gen, stamps = library.generation(), library.filing_stamps()
    return gen, stamps, _read_current(library)


def index_status(library: Library) -> IndexStatus:
    """The published set against the library, from manifests only (cheap: for status lines)."""
    gen, stamps, pset = _read_state(library)
    return _status(library, gen, pset, stamps)


class SharedIndexes(Protocol):
    """The indexes a question reads: an :class:`OpenIndexes`, or an object holding them (a Searcher)."""

    summaries: Any
    chunk_vectors: Any


@dataclass
class OpenIndexes:
    """The indexes of one published set, loaded for reading (a :class:`SharedIndexes`).

    The whole-library BM25 index is loaded on first use: the question path scores inside the filings it selects
    (:class:`engine.retrieval.postings.FilingLexicon`) and never needs it; whole-library search does."""

    load_lexical: Callable[[], LexicalIndex]
    summaries: HnswIndex
    chunk_vectors: HnswIndex | None
    status: IndexStatus
    folder: Path | None = None  # the set's folder; None when the library is empty and nothing was published
    hidden: frozenset[int] = field(default_factory=frozenset)  # filings left out (removed or replaced since)
    _lexical: LexicalIndex | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def lexical(self) -> LexicalIndex:
        with self._lock:
            if self._lexical is None:
                self._lexical = self.load_lexical()
            return self._lexical


def open_indexes(library: Library, settings: Settings, embedder: Embedder) -> OpenIndexes:
    """Load the last published index set, read-only.

    Raises:
        IndexNotReadyError: the library has filings and no set was ever published.
        IndexDamagedError: the set's files are missing or torn (``filinglens index rebuild`` repairs it).
        IndexMismatchError: the set was built with another embedder or chunking than ``settings`` ask for.
    """
    last: Exception | None = None
    for _attempt in range(5):
        gen, stamps, pset = _read_state(library)
        if pset is None:
            if stamps:
                raise IndexNotReadyError(f"the library at {library.home} has no search index yet: {BUILD_HINT}")
            empty = library.index_dir / "none"  # nothing there: empty indexes
            return OpenIndexes(lambda: LexicalIndex(empty, _lexical_identity(settings)),
                               _hnsw(empty, settings, embedder, SUMMARIES), None, _status(library, gen, None, stamps))
        try:
            return _load(library, settings, embedder, gen, pset, stamps)
        except (OSError, RuntimeError, IndexDamagedError) as exc:  # hnswlib: RuntimeError("Cannot open file")
            last = exc  # the set went while we read it: a builder published twice meanwhile; read current again
            if _read_current(library) == pset:
                break
    raise IndexDamagedError(f"the search index in {library.index_dir} is damaged ({last}): "
                            "run `filinglens index rebuild`") from last


def _lexical_identity(settings: Settings) -> dict[str, Any]:
    return {"chunking": _chunking_id(settings)}


def _load(library: Library, settings: Settings, embedder: Embedder, gen: int, pset: PublishedSet,
          stamps: dict[int, str], *, hide: bool = True) -> OpenIndexes:
    problems = pset.missing_or_torn()
    if problems:
        raise IndexDamagedError("; ".join(problems[:3]))
    if not (pset.folder / "lexical.manifest.json").exists():  # it went (a legacy index a builder just replaced)
        raise FileNotFoundError(pset.folder / "lexical.manifest.json")
    summaries = _hnsw(pset.folder, settings, embedder, SUMMARIES)
    chunk_vectors = (_hnsw(pset.folder, settings, embedder, CHUNK_VECTORS)
                     if (pset.folder / f"{CHUNK_VECTORS}.hnsw").exists() else None)
    if pset.filings is not None:
        hidden = {fid for fid, stamp in pset.filings.items() if stamps.get(fid) != stamp}
        status = _status(library, gen, pset, stamps)
    else:
        indexed = summaries.labels()
        hidden = indexed - stamps.keys()
        status = _status(library, gen, pset, stamps, indexed)
    hidden_now = sorted(hidden) if hide else []

    def load_lexical() -> LexicalIndex:
        lexical = LexicalIndex(pset.folder, _lexical_identity(settings))
        if lexical.generation < 0:
            raise IndexDamagedError(f"the BM25 index of {pset.folder} is gone: {BUILD_HINT}")
        lexical.hide_filings(hidden_now)
        return lexical

    opened = OpenIndexes(load_lexical, summaries, chunk_vectors, status, pset.folder, frozenset(hidden))
    if hidden_now:
        # in memory only (a reader never saves): vectors of filings removed or replaced since the build
        summaries.delete(hidden_now)
        if chunk_vectors is not None:  # their chunk ids are known to the BM25 index only (the rows are gone)
            chunk_vectors.delete(opened.lexical.chunk_ids_of(hidden_now))
    return opened


def lexical_index(library: Library, settings: Settings) -> LexicalIndex:
    """The published BM25 index, read-only (empty when none is published)."""
    pset = _read_current(library)
    return LexicalIndex(pset.folder if pset else library.index_dir / "none", _lexical_identity(settings))


def summary_index(library: Library, settings: Settings, embedder: Embedder) -> HnswIndex:
    """The published filing-summary vectors, read-only (empty when none are published)."""
    pset = _read_current(library)
    return _hnsw(pset.folder if pset else library.index_dir / "none", settings, embedder, SUMMARIES)


def chunk_vector_index(library: Library, settings: Settings, embedder: Embedder) -> HnswIndex | None:
    """The published chunk vectors, read-only; None when the published set has none."""
    pset = _read_current(library)
    if pset is None or not (pset.folder / f"{CHUNK_VECTORS}.hnsw").exists():
        return None
    return _hnsw(pset.folder, settings, embedder, CHUNK_VECTORS)


# -- building ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SyncReport:
    lexical_rebuilt: bool
    summaries_added: int
    summaries_removed: int
    chunk_vectors_added: int
    chunk_vectors_removed: int
    generation: int
    published: str = ""  # the folder of the set published; empty when the published one was already current
    chunk_vectors_complete: bool = True
    removed_leftovers: tuple[str, ...] = ()
    lexical_skipped: str = ""  # why no whole-library BM25 index was built (retrieval.library_bm25_max_chunks)


def sync_indexes(library: Library, settings: Settings, embedder: Embedder, *, rebuild: bool = False,
                 progress: Progress | None = None, cancel: Callable[[], bool] | None = None,
                 on_wait: Callable[[str], None] | None = None) -> SyncReport:
    """Bring the indexes to the library's current generation and publish them (the builder's one entry point).

    Holds the library's builder lock (waiting, and saying so through ``on_wait``, while another builder holds
    it), builds into a private folder and publishes the complete set atomically; readers keep reading the set
    published before until then. Incremental where possible: summary and chunk vectors start from the published
    set (or from the chunk vectors a killed build left), BM25 is rebuilt when the generation moved.

    Args:
        rebuild: Build every index from scratch (``filinglens index rebuild``).
        progress: ``progress(stage, done, total)``.
        cancel: Stops embedding chunk vectors; the set is published with the ones done (the next build resumes).
        on_wait: Told, once, that another builder holds the lock.

    Raises:
        Cancelled: ``cancel`` became true while waiting for the lock.
        IndexMismatchError: the published set was built with another embedder or chunking (rebuild it).
    """
    with builder_lock(library.home, what="an index build", on_wait=on_wait, cancel=cancel):
        return _build(library, settings, embedder, rebuild=rebuild, progress=progress, cancel=cancel)


def _link_member(src: Path, dst: Path, names: list[str]) -> None:
    """Carry unchanged files of the published set into the new one (hard links: no copy, no change to the old)."""
    for name in names:
        source = src / name
        if source.is_dir():
            shutil.copytree(source, dst / name, copy_function=link_or_copy)
        elif source.exists():
            link_or_copy(source, dst / name)


def _build(library: Library, settings: Settings, embedder: Embedder, *, rebuild: bool, progress: Progress | None,
           cancel: Callable[[], bool] | None) -> SyncReport:
    index_dir = library.index_dir
    try:
        current = read_current(index_dir)
    except IndexDamagedError as exc:  # current.json names a set that is gone: publish a whole new one
        log.warning("%s: building the indexes from scratch", exc)
        current = None
    removed = remove_leftovers(index_dir, {current.name} if current and not current.legacy else set())
    base = None if rebuild else current
    if base is not None and base.missing_or_torn():
        log.warning("the published index %s is damaged (%s): building it from scratch", base.folder,
                    "; ".join(base.missing_or_torn()[:2]))
        base = None
    resume = index_dir / RESUME_DIR
    if rebuild:
        shutil.rmtree(resume, ignore_errors=True)
    with library.snapshot():  # one state of the library for the whole build
        generation = library.generation()
        stamps = library.filing_stamps()
        want_cvec = settings.retrieval.chunk_vectors or (
            base is not None and (base.folder / f"{CHUNK_VECTORS}.hnsw").exists())
        if base is not None and _is_current(library, base, generation, stamps, settings, embedder, want_cvec):
            return SyncReport(False, 0, 0, 0, 0, generation, removed_leftovers=tuple(removed))
        build = new_build_dir(index_dir)
        try:
            report = _build_into(build, library, settings, embedder, base, generation, stamps, want_cvec,
                                 progress, cancel)
            pset = publish(index_dir, build, generation, stamps, carried=base)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
    keep = {pset.name} | ({current.name} if current is not None and not current.legacy else set())
    removed += remove_leftovers(index_dir, keep)
    shutil.rmtree(resume, ignore_errors=True)  # the published set holds at least what it held
    log.info("published index set %s (generation %d)", pset.name, generation)
    return SyncReport(report.lexical_rebuilt, report.summaries_added, report.summaries_removed,
                      report.chunk_vectors_added, report.chunk_vectors_removed, generation, pset.name,
                      report.chunk_vectors_complete, tuple(removed), report.lexical_skipped)


def _is_current(library: Library, base: PublishedSet, generation: int, stamps: dict[int, str], settings: Settings,
                embedder: Embedder, want_cvec: bool) -> bool:
    if base.legacy or base.generation != generation or base.filings != stamps:
        return False
    lexical = read_manifest(base.folder / "lexical.manifest.json") or {}
    if lexical.get("chunking") != _chunking_id(settings):
        return False
    if bool(lexical.get("skipped")) != bool(_lexical_skip_reason(library, settings)):  # the limit was changed
        return False
    for name in [SUMMARIES] + ([CHUNK_VECTORS] if want_cvec else []):
        manifest = read_manifest(base.folder / f"{name}.manifest.json")
        if manifest is None:
            if name == SUMMARIES and not stamps:
                continue  # an empty library has no summary vectors
            return False
        if manifest.get("fingerprint") != embedder.fingerprint or int(manifest.get("generation", -1)) != generation:
            return False
    return True


def _build_into(build: Path, library: Library, settings: Settings, embedder: Embedder, base: PublishedSet | None,
                generation: int, stamps: dict[int, str], want_cvec: bool, progress: Progress | None,
                cancel: Callable[[], bool] | None) -> SyncReport:
    """Write every index of the new set into ``build`` (inside the caller's snapshot of the library)."""
    same_filings = base is not None and base.generation == generation and base.filings == stamps
    lexical_rebuilt = True
    skipped = _lexical_skip_reason(library, settings)
    if same_filings and base is not None:  # only chunk vectors (or a summary index) need work
        manifest = read_manifest(base.folder / "lexical.manifest.json")
        if (manifest is not None and manifest.get("chunking") == _chunking_id(settings)
                and bool(manifest.get("skipped")) == bool(skipped)):
            _link_member(base.folder, build, ["lexical.manifest.json"] + ([str(manifest["dir"])] if manifest["dir"]
                                                                            else []))
            lexical_rebuilt = False
    if lexical_rebuilt and skipped:
        LexicalIndex(build, _lexical_identity(settings)).skip(generation, skipped)
        lexical_rebuilt = False
    elif lexical_rebuilt:
        LexicalIndex(build, _lexical_identity(settings)).build(
            library, progress=(lambda d, t: progress(LEXICAL, d, t)) if progress else None)

    base_stamps = base.filings if base is not None else None
    summ = _hnsw(base.folder if base is not None else build, settings, embedder, SUMMARIES)
    have = summ.labels()
    stale = (have - stamps.keys()) | _changed(have, stamps, base_stamps)
    summ.delete(sorted(stale))
    todo = sorted(stamps.keys() - (have - stale))  # only their summaries are read: the rest are in the graph
    batch = settings.models.embed_batch
    for start in range(0, len(todo), batch):
        ids = todo[start : start + batch]
        summ.add(ids, embedder.embed_batch(_summary_documents(library, ids)))
        if progress:
            progress("summary vectors", start + len(ids), len(todo))
    summ.save(generation, folder=build)

    cv_added = cv_removed = 0
    complete = True
    if want_cvec:
        cv_added, cv_removed, complete = _chunk_vectors(build, library, settings, embedder, base, generation, stamps,
                                                        progress, cancel)
    return SyncReport(lexical_rebuilt, len(todo), len(stale), cv_added, cv_removed, generation,
                      chunk_vectors_complete=complete, lexical_skipped=skipped)


def _summary_documents(library: Library, ids: list[int]) -> list[str]:
    """The summary documents of ``ids``, in their order (read in slices under SQLite's variable limit)."""
    texts: dict[int, str] = {}
    for at in range(0, len(ids), 900):
        part = ids[at : at + 900]
        texts |= {int(r[0]): summary_document(r[1], r[2]) for r in library.conn.execute(
            f"SELECT id, summary, lofin_summary FROM filings WHERE id IN ({','.join('?' * len(part))})", part)}
    return [texts[i] for i in ids]


def _lexical_skip_reason(library: Library, settings: Settings) -> str:
    """Why the whole-library BM25 index is not built ("" when it is)."""
    chunks = terms.stats(library.conn)[0]
    limit = settings.retrieval.library_bm25_max_chunks
    if chunks <= limit:
        return ""
    return (f"the library holds {chunks:,} chunks, more than retrieval.library_bm25_max_chunks ({limit:,}): "
            "whole-library searches score inside the filings the filters or the summary vectors select")


def _changed(labels: set[int], stamps: dict[int, str], base_stamps: dict[int, str] | None) -> set[int]:
    """Filing ids whose row is another filing than when the base was built (SQLite reuses ids)."""
    if base_stamps is None:
        return set()
    return {fid for fid in labels if fid in stamps and base_stamps.get(fid) != stamps[fid]}


def _chunk_vectors(build: Path, library: Library, settings: Settings, embedder: Embedder, base: PublishedSet | None,
                   generation: int, stamps: dict[int, str], progress: Progress | None,
                   cancel: Callable[[], bool] | None) -> tuple[int, int, bool]:
    """Embed the chunks the new set lacks, starting from the chunk vectors a killed build checkpointed (``.resume``)
    or else the published ones. Returns (added, removed, complete)."""
    resume = library.index_dir / RESUME_DIR
    source, source_stamps = build, None
    resumed = read_manifest(resume / "filings.json")  # written after the vectors: present means complete
    if resumed is not None and (resume / f"{CHUNK_VECTORS}.hnsw").exists():
        source, source_stamps = resume, {int(k): str(v) for k, v in resumed.items()}
    elif base is not None and (base.folder / f"{CHUNK_VECTORS}.hnsw").exists():
        source, source_stamps = base.folder, base.filings
    try:
        cvec = _hnsw(source, settings, embedder, CHUNK_VECTORS)
    except EngineError:
        if source != resume:
            raise
        log.warning("the chunk vectors a killed build left in %s do not fit the settings: starting over", resume)
        shutil.rmtree(resume, ignore_errors=True)
        return _chunk_vectors(build, library, settings, embedder, base, generation, stamps, progress, cancel)
    live = {int(r[0]): int(r[1]) for r in library.conn.execute("SELECT id, filing_id FROM chunks")}
    have = cvec.labels()
    changed = _changed(set(live.values()), stamps, source_stamps)
    stale = (have - live.keys()) | {c for c in have & live.keys() if live[c] in changed}
    cvec.delete(sorted(stale))
    todo = sorted(live.keys() - (have - stale))
    batch = settings.models.embed_batch
    complete = True
    for start in range(0, len(todo), batch):
        if cancel and cancel():
            complete = False  # publish what is done; still stale, so the next build resumes from it
            break
        ids = todo[start : start + batch]
        chunks = library.chunks(ids)
        cvec.add([c.id for c in chunks], embedder.embed_batch([c.indexed_text for c in chunks]))
        if progress:
            progress("chunk vectors", start + len(ids), len(todo))
        if (start // batch) % CHECKPOINT_BATCHES == CHECKPOINT_BATCHES - 1:  # a killed build resumes from here
            resume.mkdir(exist_ok=True)
            cvec.save(-1, folder=resume)
            write_atomic(resume / "filings.json", json.dumps({str(k): v for k, v in stamps.items()}).encode())
    cvec.save(generation if complete else -1, folder=build)
    return len(todo), len(stale), complete


# -- verifying --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VerifyResult:
    """What ``filinglens index verify`` found: ``lines`` describe the index, ``problems`` need a build."""

    lines: list[str]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_indexes(library: Library, settings: Settings, embedder: Embedder) -> VerifyResult:
    """Check the published index set against the library and the settings, reading only (the files' sizes and
    sha256, each manifest's identity, the counts loaded, the generation and filings; a build in progress or the
    folders a dead one left are reported, not counted as problems)."""
    from engine.store.index_sets import leftover_builds

    lines: list[str] = []
    problems: list[str] = []
    owner = builder_owner(library.home)
    if owner is not None:
        lines.append(f"a build is running: {describe_owner(owner)}")
    leftovers = leftover_builds(library.index_dir)
    if leftovers and owner is None:
        lines.append(f"{len(leftovers)} folder(s) of a build that died: the next build removes them")
    try:
        gen, stamps, pset = _read_state(library)
    except IndexDamagedError as exc:
        return VerifyResult(lines, [str(exc)])
    if pset is None:
        if stamps:
            problems.append(f"no index is published for the {len(stamps)} filings of the library: {BUILD_HINT}")
        else:
            lines.append("the library is empty and no index is published")
        return VerifyResult(lines, problems)
    lines.append(f"published set: {pset.folder}")
    if pset.legacy:
        problems.append("the index predates published index sets (no manifest of its files and filings): "
                        "run `filinglens index build`")
    else:
        torn = pset.missing_or_torn(hashes=True)
        problems += torn
        lines.append(f"files: {len(pset.files)} checked (size and sha256), {len(torn)} missing or damaged")
    try:
        opened = _load(library, settings, embedder, gen, pset, stamps, hide=False) if not problems else None
    except (EngineError, FileNotFoundError, OSError, RuntimeError, ValueError) as exc:
        problems.append(f"the index does not open: {exc}")
        opened = None
    if opened is not None:
        problems += _count_problems(opened, pset)
        status = opened.status
    else:
        status = _status(library, gen, pset, stamps)
    lines.append(f"generation: index {status.generation}, library {status.library_generation}; "
                 f"{status.filings - status.pending} of {status.filings} filings searchable")
    if status.behind:
        problems.append(status.message())
    cv = read_manifest(pset.folder / f"{CHUNK_VECTORS}.manifest.json")
    if cv is not None and int(cv.get("generation", -1)) != pset.generation:
        problems.append(f"chunk vectors are incomplete ({cv.get('count')} of the chunks embedded): "
                        "`filinglens index build` resumes them")
    elif cv is None and settings.retrieval.chunk_vectors:
        problems.append("the settings ask for chunk vectors and the index has none: run `filinglens index build`")
    return VerifyResult(lines, problems)


def _count_problems(opened: OpenIndexes, pset: PublishedSet) -> list[str]:
    problems: list[str] = []
    for name, count in ((LEXICAL, len(opened.lexical.chunk_ids)), (SUMMARIES, len(opened.summaries))):
        manifest = read_manifest(pset.folder / f"{name}.manifest.json")
        if manifest is None:
            if name == SUMMARIES and not pset.filings:
                continue
            problems.append(f"{pset.folder / (name + '.manifest.json')} is missing")
        elif int(manifest.get("count", -1)) != count:
            problems.append(f"the {name} index holds {count} entries, its manifest says {manifest.get('count')}")
    return problems
