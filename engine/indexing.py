"""Keep the derived indexes (BM25 over chunks, HNSW over filing summaries and optionally chunks) in step
with SQLite. Each index records the library generation it reflects; a mismatch triggers an update."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from engine.models.base import Embedder
from engine.retrieval.lexical import LexicalIndex
from engine.settings import Settings
from engine.store.hnsw import HnswIndex
from engine.store.library import Library

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def _chunking_id(settings: Settings) -> str:
    return f"size={settings.chunking.size},overlap={settings.chunking.overlap}"


def lexical_index(library: Library, settings: Settings) -> LexicalIndex:
    return LexicalIndex(library.index_dir, {"chunking": _chunking_id(settings)})


def _hnsw(library: Library, settings: Settings, embedder: Embedder, name: str) -> HnswIndex:
    identity = {"kind": name, "model_id": embedder.model_id, "fingerprint": embedder.fingerprint, "dims": embedder.dims}
    if name == "chunk-vectors":
        identity |= {"chunking": _chunking_id(settings)}
    r = settings.retrieval
    return HnswIndex(library.index_dir, name, identity, m=r.hnsw_m, ef_construction=r.hnsw_ef_construction,
                     ef_search=r.hnsw_ef_search)


def summary_index(library: Library, settings: Settings, embedder: Embedder) -> HnswIndex:
    return _hnsw(library, settings, embedder, "filing-summaries")


def chunk_vector_index(library: Library, settings: Settings, embedder: Embedder) -> HnswIndex | None:
    path = library.index_dir / "chunk-vectors.hnsw"
    if not settings.retrieval.chunk_vectors and not path.exists():
        return None
    return _hnsw(library, settings, embedder, "chunk-vectors")


def summary_document(summary: str, lofin_summary: str | None) -> str:
    return f"{summary}\n{lofin_summary}" if lofin_summary else summary


def indexes_stale(library: Library, settings: Settings) -> bool:
    """True when an index lags behind the library (read from the manifests; no index is loaded)."""
    from engine.store.manifest import read_manifest

    generation = library.generation()
    names = ["lexical", "filing-summaries"] + (["chunk-vectors"] if settings.retrieval.chunk_vectors else [])
    for name in names:
        manifest = read_manifest(library.index_dir / f"{name}.manifest.json")
        if manifest is None or int(manifest.get("generation", -1)) != generation:
            return True
    return False


@dataclass(frozen=True)
class SyncReport:
    lexical_rebuilt: bool
    summaries_added: int
    summaries_removed: int
    chunk_vectors_added: int
    chunk_vectors_removed: int
    generation: int


def sync_indexes(library: Library, settings: Settings, embedder: Embedder, *, progress: Progress | None = None,
                 cancel: Callable[[], bool] | None = None) -> SyncReport:
    """Bring every derived index to the library's current generation (incrementally where possible)."""
    generation = library.generation()
    lex = lexical_index(library, settings)
    rebuilt = False
    if lex.generation != generation:
        lex.build(library, progress=(lambda d, t: progress("lexical", d, t)) if progress else None)
        rebuilt = True

    summ = summary_index(library, settings, embedder)
    added = removed = 0
    if summ.generation != generation:
        rows = {int(r[0]): summary_document(r[1], r[2])
                for r in library.conn.execute("SELECT id, summary, lofin_summary FROM filings")}
        have = summ.labels()
        stale = have - rows.keys()
        summ.delete(sorted(stale))
        todo = sorted(rows.keys() - have)
        batch = settings.models.embed_batch
        for start in range(0, len(todo), batch):
            ids = todo[start : start + batch]
            summ.add(ids, embedder.embed_batch([rows[i] for i in ids]))
            if progress:
                progress("summary vectors", start + len(ids), len(todo))
        summ.save(generation)
        added, removed = len(todo), len(stale)

    cv_added = cv_removed = 0
    cvec = chunk_vector_index(library, settings, embedder)
    if cvec is not None and cvec.generation != generation:
        live = {int(r[0]) for r in library.conn.execute("SELECT id FROM chunks")}
        have = cvec.labels()
        stale = have - live
        cvec.delete(sorted(stale))
        todo = sorted(live - have)
        batch = settings.models.embed_batch
        for start in range(0, len(todo), batch):
            if cancel and cancel():
                cvec.save(-1)  # keep the work done; still stale, so the next sync resumes
                break
            ids = todo[start : start + batch]
            chunks = library.chunks(ids)
            cvec.add([c.id for c in chunks], embedder.embed_batch([c.indexed_text for c in chunks]))
            if progress:
                progress("chunk vectors", start + len(ids), len(todo))
            if (start // batch) % 80 == 79:
                cvec.save(-1)  # checkpoint: a killed run resumes from here (still marked stale)
        else:
            cvec.save(generation)
        cv_added, cv_removed = len(todo), len(stale)
    return SyncReport(rebuilt, added, removed, cv_added, cv_removed, generation)
