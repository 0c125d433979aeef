"""BM25 over all chunks with bm25s (sparse matrix scoring), stored under ``index/``.

Chosen over rank-bm25 and SQLite FTS5 by measurement (see ``scripts/bench_lexical.py``): bm25s
scores a query against every chunk as one sparse product, so a search is milliseconds even on
hundreds of thousands of chunks, and restricting to a few filings is a mask over the same scores.
The index is derived from SQLite and rebuilt when the library's generation moves.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.store.library import Library
from engine.store.manifest import check_compatible, read_manifest, write_manifest
from engine.vocab.tokens import TOKENIZER_ID
from engine.vocab.tokens import tokenizer as make_tokenizer

if TYPE_CHECKING:  # bm25s has no type hints: these names are Any to mypy, but say what is meant
    from bm25s import BM25
    from bm25s.tokenization import Tokenizer

log = logging.getLogger(__name__)

class LexicalIndex:
    """BM25 over chunks; labels are chunk ids; ``filing_of`` maps each indexed row to its filing."""

    def __init__(self, folder: Path, identity: dict) -> None:
        self.folder = folder
        self.manifest_path = folder / "lexical.manifest.json"
        self.identity = {**identity, "kind": "bm25-chunks", "tokenizer": TOKENIZER_ID}
        self.generation = -1
        self.chunk_ids = np.zeros(0, dtype=np.int64)
        self.filing_ids = np.zeros(0, dtype=np.int64)
        self._retriever: BM25 | None = None
        self._tokenizer: Tokenizer | None = None
        self._inv: dict[int, str] | None = None  # token id -> token, built on the first query
        self._sorted = True
        self._hidden: np.ndarray | None = None  # rows of filings a reader must not return (removed since the build)
        self.skipped = ""  # why the builder did not build it (a library too large to rebuild it on every ingest)
        manifest = read_manifest(self.manifest_path)
        if manifest and manifest.get("skipped"):
            check_compatible(self.manifest_path, manifest, self.identity)
            self.skipped, self.generation = str(manifest["skipped"]), int(manifest["generation"])
        elif manifest and (folder / manifest["dir"]).exists():
            check_compatible(self.manifest_path, manifest, self.identity)
            if int(manifest.get("count", 0)) > 0:
                self._load(folder / manifest["dir"])
            self.generation = int(manifest["generation"])

    def _load(self, path: Path) -> None:
        import bm25s

        self._retriever = bm25s.BM25.load(str(path), mmap=False, show_progress=False)
        self.chunk_ids = np.load(path / "chunk_ids.npy")
        self.filing_ids = np.load(path / "filing_ids.npy")
        self._sorted = bool(np.all(np.diff(self.filing_ids) >= 0))
        tokenizer = make_tokenizer()
        vocab = json.loads((path / "tokenizer_vocab.json").read_text())
        tokenizer.word_to_id = vocab.get("word_to_id", {})
        tokenizer.stem_to_sid = vocab.get("stem_to_sid", {})
        tokenizer.word_to_stem = vocab.get("word_to_stem", {})
        self._tokenizer = tokenizer
        self._inv = None  # a rebuilt index has a new vocabulary

    def build(self, library: Library, progress: Callable[[int, int], None] | None = None) -> None:
        """Tokenize every chunk (streamed from SQLite in batches) and write a new index directory."""
        import bm25s

        generation = library.generation()
        total = library.count("chunks")
        tokenizer = make_tokenizer()
        ids: list[np.ndarray] = []
        chunk_ids: list[int] = []
        filing_of = dict(library.conn.execute("SELECT id, filing_id FROM chunks").fetchall())
        for batch in library.iter_chunk_texts():
            toks = tokenizer.tokenize([t for _, t in batch], update_vocab=True, return_as="ids", show_progress=False)
            ids.extend(np.asarray(t, dtype=np.int32) for t in toks)
            chunk_ids.extend(cid for cid, _ in batch)
            if progress:
                progress(len(chunk_ids), total)
        retriever = bm25s.BM25()
        vocab = tokenizer.get_vocab_dict()
        if chunk_ids:
            retriever.index(bm25s.tokenization.Tokenized(ids=[t.tolist() for t in ids], vocab=vocab), show_progress=False)
        del ids
        name = f"bm25.g{generation}"
        tmp = self.folder / f".{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if chunk_ids:
            retriever.save(str(tmp), show_progress=False)
        np.save(tmp / "chunk_ids.npy", np.asarray(chunk_ids, dtype=np.int64))
        np.save(tmp / "filing_ids.npy", np.asarray([filing_of[c] for c in chunk_ids], dtype=np.int64))
        (tmp / "tokenizer_vocab.json").write_text(json.dumps({
            "word_to_id": tokenizer.word_to_id, "stem_to_sid": tokenizer.stem_to_sid, "word_to_stem": tokenizer.word_to_stem,
        }))
        final = self.folder / name
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        old = read_manifest(self.manifest_path)
        write_manifest(self.manifest_path, {**self.identity, "dir": name, "generation": generation, "count": len(chunk_ids)})
        if old and old.get("dir") != name:
            shutil.rmtree(self.folder / old["dir"], ignore_errors=True)
        self.generation = generation
        if chunk_ids:
            self._load(final)
        else:
            self._retriever, self.chunk_ids, self.filing_ids = None, np.zeros(0, np.int64), np.zeros(0, np.int64)

    def skip(self, generation: int, reason: str) -> None:
        """Publish no index, saying why (whole-library searches then score inside the filings they select)."""
        old = read_manifest(self.manifest_path)
        self.folder.mkdir(parents=True, exist_ok=True)
        write_manifest(self.manifest_path, {**self.identity, "dir": "", "generation": generation, "count": 0,
                                            "skipped": reason})
        if old and old.get("dir"):
            shutil.rmtree(self.folder / old["dir"], ignore_errors=True)
        self.generation, self.skipped = generation, reason
        self._retriever, self.chunk_ids, self.filing_ids = None, np.zeros(0, np.int64), np.zeros(0, np.int64)

    @property
    def available(self) -> bool:
        """False when the builder skipped it (:attr:`skipped` says why)."""
        return not self.skipped

    def hide_filings(self, filing_ids: Sequence[int]) -> None:
        """Never return chunks of these filings (a reader's index built before they were removed or replaced)."""
        if not len(filing_ids) or not len(self.filing_ids):
            return
        hidden = np.isin(self.filing_ids, np.asarray(sorted(set(filing_ids)), dtype=np.int64))
        self._hidden = hidden if self._hidden is None else (self._hidden | hidden)

    def chunk_ids_of(self, filing_ids: Sequence[int]) -> list[int]:
        """The indexed chunk ids of these filings."""
        mask = np.isin(self.filing_ids, np.asarray(sorted(set(filing_ids)), dtype=np.int64))
        return [int(c) for c in self.chunk_ids[mask]]

    def query_tokens(self, query: str) -> list[str]:
        if self._tokenizer is None:
            return []
        ids = self._tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)[0]
        inverse = self._inverse_vocab()
        return [token for i in ids if (token := inverse.get(i))]

    def _inverse_vocab(self) -> dict[int, str]:
        if self._inv is None:
            self._inv = {v: k for k, v in self._retriever.vocab_dict.items()} if self._retriever is not None else {}
        return self._inv

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every indexed chunk (aligned with ``self.chunk_ids``)."""
        if self._retriever is None:
            return np.zeros(0, dtype=np.float32)
        tokens = self.query_tokens(query)
        if not tokens:
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        scores = self._retriever.get_scores(tokens)
        if self._hidden is not None:
            scores = np.where(self._hidden, 0.0, scores).astype(scores.dtype, copy=False)
        return scores

    def search(self, query: str, k: int, filing_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """Top-k (chunk id, score), optionally only inside the given filings; zero scores are dropped."""
        return self.top(self.scores(query), k, filing_ids)

    def _restrict(self, scores: np.ndarray, filing_ids: Sequence[int]) -> np.ndarray:
        """Zero every score outside the given filings. A filing's chunks are stored together, so the filing
        column is sorted and each filing is one slice (found by binary search, not a scan)."""
        ids = np.asarray(sorted(set(filing_ids)), dtype=np.int64)
        out = np.zeros_like(scores)
        if self._sorted:
            starts = np.searchsorted(self.filing_ids, ids, "left")
            ends = np.searchsorted(self.filing_ids, ids, "right")
            for a, b in zip(starts, ends):
                out[a:b] = scores[a:b]
            return out
        mask = np.isin(self.filing_ids, ids)
        out[mask] = scores[mask]
        return out

    def top(self, scores: np.ndarray, k: int, filing_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """Top-k of a score array from :meth:`scores` (so one query's scores serve several selections)."""
        if scores.size == 0:
            return []
        if filing_ids is not None:
            scores = self._restrict(scores, filing_ids)
        k = min(k, int((scores > 0).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.chunk_ids[i]), float(scores[i])) for i in top]
