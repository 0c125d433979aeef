"""HNSW vector files (hnswlib, cosine space) with a manifest; labels are SQLite row ids."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import MissingDependencyError
from engine.store.manifest import check_compatible, read_manifest, write_manifest

log = logging.getLogger(__name__)


def _hnswlib() -> Any:
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - installed by setup
        raise MissingDependencyError("hnswlib is missing: HNSWLIB_NO_NATIVE=1 pip install hnswlib==0.8.0") from exc
    return hnswlib


class HnswIndex:
    """One HNSW file ``<name>.hnsw`` plus ``<name>.manifest.json`` in the index folder."""

    def __init__(self, folder: Path, name: str, identity: dict[str, Any], *, m: int = 16, ef_construction: int = 200,
                 ef_search: int = 128) -> None:
        self.path = folder / f"{name}.hnsw"
        self.manifest_path = folder / f"{name}.manifest.json"
        self.identity = identity
        self.dims = int(identity["dims"])
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self.generation = -1
        self._index: Any = None
        self._deleted: set[int] = set()
        manifest = read_manifest(self.manifest_path)
        if manifest is not None and self.path.exists():
            check_compatible(self.manifest_path, manifest, identity)
            self._index = _hnswlib().Index(space="cosine", dim=self.dims)
            self._index.load_index(str(self.path), max_elements=max(int(manifest.get("capacity", 0)), 1))
            self._index.set_ef(ef_search)
            self.generation = int(manifest.get("generation", -1))
            self._deleted = set(int(i) for i in manifest.get("deleted", []))

    def _ensure(self, extra: int) -> Any:
        if self._index is None:
            self._index = _hnswlib().Index(space="cosine", dim=self.dims)
            self._index.init_index(max_elements=max(extra, 16), M=self.m, ef_construction=self.ef_construction,
                                   random_seed=0, allow_replace_deleted=False)
            self._index.set_ef(self.ef_search)
        else:
            need = self._index.get_current_count() + extra
            if need > self._index.get_max_elements():
                self._index.resize_index(max(need, int(self._index.get_max_elements() * 1.5)))
        return self._index

    def labels(self) -> set[int]:
        """Live labels (hnswlib cannot list deleted ones, so the manifest keeps them)."""
        if self._index is None:
            return set()
        return set(int(i) for i in self._index.get_ids_list()) - self._deleted

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        if len(labels) == 0:
            return
        index = self._ensure(len(labels))
        index.add_items(np.asarray(vectors, dtype=np.float32), np.asarray(labels, dtype=np.int64), num_threads=1)
        # hnswlib revives a deleted label that is added again (SQLite reuses the highest id after a delete)
        self._deleted.difference_update(int(x) for x in labels)

    def delete(self, labels: Sequence[int]) -> None:
        if self._index is None:
            return
        present = set(int(i) for i in self._index.get_ids_list())
        for label in (int(x) for x in labels):
            if label in self._deleted or label not in present:
                continue
            try:
                self._index.mark_deleted(label)
            except RuntimeError:
                pass  # deleted before a crash lost the manifest's record of it
            self._deleted.add(label)

    def __len__(self) -> int:
        return 0 if self._index is None else self._index.get_current_count() - len(self._deleted)

    def query(self, vector: np.ndarray, k: int, flt: Callable[[int], bool] | None = None) -> list[tuple[int, float]]:
        """Nearest labels by cosine similarity (1 - distance), best first."""
        n = len(self)
        if n == 0 or k <= 0:
            return []
        k = min(k, n)
        self._index.set_ef(max(self.ef_search, k))
        try:
            labels, dists = self._index.knn_query(np.asarray(vector, dtype=np.float32).reshape(1, -1), k=k, filter=flt)
        except RuntimeError:  # fewer than k items pass the filter
            return self._query_filtered_exhaustive(vector, k, flt)
        return [(int(l), float(1.0 - d)) for l, d in zip(labels[0], dists[0])]

    def get_items(self, labels: Sequence[int]) -> np.ndarray:
        """The stored vectors of ``labels`` (one row each); KeyError when one is not stored."""
        if not labels:
            return np.zeros((0, self.dims), dtype=np.float32)
        gone = [lb for lb in labels if lb in self._deleted]
        if self._index is None or gone:
            raise KeyError(f"no vector stored for {gone[:3] or labels[:3]}")
        try:
            return np.asarray(self._index.get_items(list(labels)), dtype=np.float32)
        except RuntimeError as exc:  # hnswlib: "Label not found"
            raise KeyError(str(exc)) from exc

    def query_among(self, vector: np.ndarray, labels: Sequence[int], k: int) -> list[tuple[int, float]]:
        """The nearest of ``labels`` by exact cosine similarity, best first (labels not stored are left out):
        for a filter that keeps few items, where a filtered graph search wanders the whole graph."""
        stored: list[int] = []
        vecs: list[np.ndarray] = []
        try:
            stored, vecs = list(labels), list(self.get_items(list(labels)))
        except KeyError:  # some are not stored (removed, or not indexed yet): one by one
            for label in labels:
                try:
                    vecs.append(self.get_items([label])[0])
                    stored.append(label)
                except KeyError:
                    continue
        if not stored:
            return []
        matrix = np.asarray(vecs, dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
        sims = matrix @ (np.asarray(vector, dtype=np.float32) / (np.linalg.norm(vector) + 1e-12))
        order = np.argsort(-sims, kind="stable")[:k]
        return [(int(stored[i]), float(sims[i])) for i in order]

    def _query_filtered_exhaustive(self, vector: np.ndarray, k: int, flt: Callable[[int], bool] | None) -> list[tuple[int, float]]:
        ids = [i for i in self.labels() if flt is None or flt(i)]
        if not ids:
            return []
        vecs = np.asarray(self._index.get_items(ids), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
        sims = vecs @ (np.asarray(vector, dtype=np.float32) / (np.linalg.norm(vector) + 1e-12))
        order = np.argsort(-sims)[:k]
        return [(int(ids[i]), float(sims[i])) for i in order]

    def save(self, generation: int, folder: Path | None = None) -> None:
        """Write the index to a temporary file and rename it, then the manifest (the manifest is the commit point).

        ``folder``: write there instead (a builder loads the published index and saves the next one into its own
        build folder); the index then belongs to that folder.
        """
        if self._index is None:
            return
        if folder is not None:
            self.path, self.manifest_path = folder / self.path.name, folder / self.manifest_path.name
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        self._index.save_index(str(tmp))
        os.replace(tmp, self.path)
        self.generation = generation
        write_manifest(self.manifest_path, {**self.identity, "generation": generation, "count": len(self),
                                            "capacity": int(self._index.get_max_elements()), "space": "cosine",
                                            "M": self.m, "ef_construction": self.ef_construction,
                                            "deleted": sorted(self._deleted)})
