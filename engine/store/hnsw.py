"""HNSW vector files (hnswlib, cosine space) with a manifest; labels are SQLite row ids.

An index is a **base** graph plus, once it was saved, a **delta** graph of what was added since: a new index set
hard-links the unchanged base file and writes the small delta, so adding 100 filings to a library of 145,897 writes
the 100, not the whole graph again. Removals are recorded in the manifest (and re-marked when the graph is
loaded), so they leave the base file unchanged too. The delta is merged into the base (one rewrite) when it holds
more than ``merge_fraction`` of the base. Queries search both graphs and merge their results.""" 

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import MissingDependencyError
from engine.files import link_or_copy
from engine.store.manifest import check_compatible, read_manifest, write_manifest

log = logging.getLogger(__name__)


def _hnswlib() -> Any:
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - installed by setup
        raise MissingDependencyError("hnswlib is missing: HNSWLIB_NO_NATIVE=1 pip install hnswlib==0.8.0") from exc
    return hnswlib


class _Segment:
    """One hnswlib graph and the file it was loaded from (None: made since, not saved yet)."""

    def __init__(self, index: Any, source: Path | None, deleted: set[int]) -> None:
        self.index = index
        self.source = source
        self.deleted = deleted
        self.dirty = source is None  # its graph changed since it was loaded: it must be written
        self._ids: set[int] | None = None  # every label in the graph, deleted ones too (read once, then kept)

    def ids(self) -> set[int]:
        if self._ids is None:
            self._ids = {int(i) for i in self.index.get_ids_list()}
        return self._ids

    def holds(self, label: int) -> bool:
        return label in self.ids() and label not in self.deleted

    def live(self) -> set[int]:
        return self.ids() - self.deleted

    def add(self, labels: list[int], vectors: np.ndarray) -> None:
        need = self.index.get_current_count() + len(labels)
        if need > self.index.get_max_elements():
            self.index.resize_index(max(need, int(self.index.get_max_elements() * 1.5)))
        self.index.add_items(np.asarray(vectors, dtype=np.float32), np.asarray(labels, dtype=np.int64), num_threads=1)
        self.ids().update(labels)
        # hnswlib revives a deleted label that is added again (SQLite reuses the highest id after a delete)
        self.deleted.difference_update(labels)
        self.dirty = True

    def delete(self, labels: set[int]) -> None:
        for label in labels:
            if label in self.deleted or label not in self.ids():
                continue
            try:
                self.index.mark_deleted(label)
            except RuntimeError:
                pass  # deleted before a crash lost the manifest's record of it
            self.deleted.add(label)

    def __len__(self) -> int:
        return self.index.get_current_count() - len(self.deleted)


class HnswIndex:
    """One index ``<name>`` in the index folder: ``<name>.hnsw`` (the base graph), ``<name>.delta.hnsw`` (the delta,
    when there is one) and ``<name>.manifest.json``, which lists the segments and each one's removed labels."""

    def __init__(self, folder: Path, name: str, identity: dict[str, Any], *, m: int = 16, ef_construction: int = 200,
                 ef_search: int = 128, merge_fraction: float = 0.1) -> None:
        self.path = folder / f"{name}.hnsw"
        self.delta_path = folder / f"{name}.delta.hnsw"
        self.manifest_path = folder / f"{name}.manifest.json"
        self.identity = identity
        self.dims = int(identity["dims"])
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self.merge_fraction = merge_fraction
        self.generation = -1
        self._segments: list[_Segment] = []  # [base] or [base, delta]
        manifest = read_manifest(self.manifest_path)
        if manifest is not None and self.path.exists():
            check_compatible(self.manifest_path, manifest, identity)
            # a manifest written before segments describes the base alone
            for seg in manifest.get("segments") or [{"file": self.path.name, "capacity": manifest.get("capacity", 0),
                                                    "deleted": manifest.get("deleted", [])}]:
                self._segments.append(self._load(folder / str(seg["file"]), int(seg.get("capacity", 0)),
                                                 {int(i) for i in seg.get("deleted", [])}))
            self.generation = int(manifest.get("generation", -1))

    def _load(self, path: Path, capacity: int, deleted: set[int]) -> _Segment:
        index = _hnswlib().Index(space="cosine", dim=self.dims)
        index.load_index(str(path), max_elements=max(capacity, 1))
        index.set_ef(self.ef_search)
        for label in deleted:  # removals recorded since the file was written are marked again
            try:
                index.mark_deleted(label)
            except RuntimeError:
                pass  # marked in the file already (or not in it)
        return _Segment(index, path, deleted)

    def _new_segment(self, capacity: int) -> _Segment:
        index = _hnswlib().Index(space="cosine", dim=self.dims)
        index.init_index(max_elements=max(capacity, 16), M=self.m, ef_construction=self.ef_construction,
                         random_seed=0, allow_replace_deleted=False)
        index.set_ef(self.ef_search)
        return _Segment(index, None, set())

    @property
    def segments(self) -> int:
        """How many graphs the index has (1: the base; 2: the base and a delta)."""
        return len(self._segments)

    def labels(self) -> set[int]:
        """Live labels (hnswlib cannot list deleted ones, so the manifest keeps them)."""
        return set().union(*(seg.live() for seg in self._segments))

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        """Add (or replace) vectors: into the delta once the base was saved, so the base file stays as it is."""
        if len(labels) == 0:
            return
        labels = [int(x) for x in labels]
        if not self._segments or (len(self._segments) == 1 and not self._segments[0].dirty):
            self._segments.append(self._new_segment(len(labels)))  # the base, or a delta beside the saved base
        for seg in self._segments[:-1]:  # a label lives in one graph: a replaced one is removed from the others
            seg.delete(set(labels))
        self._segments[-1].add(labels, vectors)

    def delete(self, labels: Sequence[int]) -> None:
        """Remove labels; recorded in the manifest, so a graph already on disk is not written again for it."""
        wanted = {int(x) for x in labels}
        for seg in self._segments:
            seg.delete(wanted)

    def __len__(self) -> int:
        return sum(len(seg) for seg in self._segments)

    def query(self, vector: np.ndarray, k: int, flt: Callable[[int], bool] | None = None) -> list[tuple[int, float]]:
        """Nearest labels by cosine similarity (1 - distance), best first."""
        if k <= 0:
            return []
        found: list[tuple[int, float]] = []
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        for seg in self._segments:
            n = len(seg)
            if n == 0:
                continue
            kk = min(k, n)
            seg.index.set_ef(max(self.ef_search, kk))
            try:
                labels, dists = seg.index.knn_query(query, k=kk, filter=flt)
            except RuntimeError:  # fewer than k items pass the filter
                found += self._exhaustive(seg, vector, kk, flt)
                continue
            found += [(int(lb), float(1.0 - d)) for lb, d in zip(labels[0], dists[0])]
        found.sort(key=lambda x: -x[1])
        return found[:k]

    def get_items(self, labels: Sequence[int]) -> np.ndarray:
        """The stored vectors of ``labels`` (one row each); KeyError when one is not stored."""
        if not labels:
            return np.zeros((0, self.dims), dtype=np.float32)
        where = [self._holder(int(lb)) for lb in labels]
        missing = [lb for lb, seg in zip(labels, where, strict=True) if seg is None]
        if missing:
            raise KeyError(f"no vector stored for {missing[:3]}")
        out = np.zeros((len(labels), self.dims), dtype=np.float32)
        for seg in self._segments:
            rows = [i for i, holder in enumerate(where) if holder is seg]
            if rows:
                out[rows] = np.asarray(seg.index.get_items([int(labels[i]) for i in rows]), dtype=np.float32)
        return out

    def _holder(self, label: int) -> _Segment | None:
        return next((seg for seg in self._segments if seg.holds(label)), None)

    def query_among(self, vector: np.ndarray, labels: Sequence[int], k: int) -> list[tuple[int, float]]:
        """The nearest of ``labels`` by exact cosine similarity, best first (labels not stored are left out):
        for a filter that keeps few items, where a filtered graph search wanders the whole graph."""
        stored = [lb for lb in labels if self._holder(int(lb)) is not None]
        if not stored:
            return []
        return _rank(self.get_items(stored), stored, vector, k)

    @staticmethod
    def _exhaustive(seg: _Segment, vector: np.ndarray, k: int, flt: Callable[[int], bool] | None) -> list[tuple[int, float]]:
        ids = [i for i in seg.live() if flt is None or flt(i)]
        if not ids:
            return []
        return _rank(np.asarray(seg.index.get_items(ids), dtype=np.float32), ids, vector, k)

    def save(self, generation: int, folder: Path | None = None) -> None:
        """Write the index into ``folder`` (default: where it is): a graph that changed to a temporary file renamed
        into place; one that did not is hard-linked from where it was loaded (a published file is never written
        again); the delta is first merged into the base when it outgrew ``merge_fraction`` of it. The manifest
        goes last (the commit point).

        ``folder``: write there instead (a builder loads the published index and saves the next one into its own
        build folder); the index then belongs to that folder.
        """
        if not self._segments:
            return
        if folder is not None:
            self.path, self.delta_path = folder / self.path.name, folder / self.delta_path.name
            self.manifest_path = folder / self.manifest_path.name
        if len(self._segments) == 2 and len(self._segments[1]) > self.merge_fraction * max(len(self._segments[0]), 1):
            self._merge()
        described = []
        for seg, path in zip(self._segments, (self.path, self.delta_path), strict=False):
            if seg.dirty or seg.source is None:
                tmp = path.with_name(f".{path.name}.tmp")
                seg.index.save_index(str(tmp))
                os.replace(tmp, path)
            elif seg.source != path:
                link_or_copy(seg.source, path)
            seg.source, seg.dirty = path, False
            described.append({"file": path.name, "count": len(seg), "capacity": int(seg.index.get_max_elements()),
                              "deleted": sorted(seg.deleted)})
        self.generation = generation
        write_manifest(self.manifest_path, {**self.identity, "generation": generation, "count": len(self),
                                            "space": "cosine", "M": self.m, "ef_construction": self.ef_construction,
                                            "segments": described})
        if len(self._segments) == 1:  # a delta merged away, in a folder saved into before (after the manifest,
            self.delta_path.unlink(missing_ok=True)  # which no longer names it: a kill between leaves a stray file)

    def _merge(self) -> None:
        """Move the delta's live vectors into the base graph (which is then written whole)."""
        base, delta = self._segments
        moved = sorted(delta.live())
        if moved:
            base.add(moved, np.asarray(delta.index.get_items(moved), dtype=np.float32))
        base.dirty = True
        self._segments = [base]


def _rank(vectors: np.ndarray, labels: Sequence[int], vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """``labels`` by exact cosine similarity of their ``vectors`` to ``vector``, best first, the first ``k``."""
    matrix = np.asarray(vectors, dtype=np.float32)
    matrix = matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12)
    sims = matrix @ (np.asarray(vector, dtype=np.float32) / (np.linalg.norm(vector) + 1e-12))
    order = np.argsort(-sims, kind="stable")[:k]
    return [(int(labels[i]), float(sims[i])) for i in order]

