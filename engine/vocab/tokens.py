"""Chunk terms for BM25 that grows with the library: each filing's chunks tokenized once, at ingest, into a
compact term table stored beside the filing, and the library's document frequencies kept up to date as filings
come and go (:class:`engine.store.library.Library`). A question then scores only the chunks of the filings it
selected, with the whole library's statistics (:class:`engine.retrieval.postings.FilingLexicon`): the cost of a
question does not grow with the library, nor the cost of adding a filing.

Terms are the words the whole-library BM25 index (:mod:`engine.store.bm25`) indexes, by the same
tokenizer (lower case, English stop words removed, Snowball stems), each stored as a 63-bit hash of its stem, so
no shared vocabulary has to be kept in step across writers. Scores are Lucene's BM25 (bm25s' default: k1 1.5,
b 0.75, idf ln(1 + (N − df + 0.5)/(df + 0.5))), so a question scored here ranks the chunks as the whole-library
index does.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # bm25s has no type hints
    from bm25s.tokenization import Tokenizer

TOKEN_PATTERN = r"(?u)\d+(?:[.,]\d+)*|\b\w\w+\b"
TOKENIZER_ID = f"bm25s-snowball-english|{TOKEN_PATTERN}"
TERMS_VERSION = "terms-1"  # what a stored term table was made by: the tokenizer above, hashed stems
K1, B = 1.5, 0.75


def tokenizer() -> Tokenizer:
    import Stemmer
    from bm25s.tokenization import Tokenizer

    return Tokenizer(stopwords="english", stemmer=Stemmer.Stemmer("english").stemWord, splitter=TOKEN_PATTERN)


def term_id(stem: str) -> int:
    """A stem's stored id: 63 bits of its BLAKE2b hash (an SQLite INTEGER, the same in every process)."""
    return int.from_bytes(hashlib.blake2b(stem.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little") >> 1


@dataclass(frozen=True)
class ChunkTerms:
    """One filing's chunks as BM25 sees them, in chunk order: chunk ``i``'s distinct terms are
    ``terms[offsets[i]:offsets[i + 1]]`` with their counts in ``tfs``; ``lengths[i]`` is its number of terms."""

    lengths: np.ndarray  # int32, one per chunk
    offsets: np.ndarray  # int32, chunks + 1
    terms: np.ndarray  # int64
    tfs: np.ndarray  # int32

    @property
    def chunks(self) -> int:
        return len(self.lengths)

    def document_frequencies(self) -> Counter[int]:
        """Chunks of this filing holding each term."""
        return Counter(self.terms.tolist())

    def pack(self) -> tuple[bytes, bytes, bytes, bytes]:
        return (self.lengths.astype("<i4").tobytes(), self.offsets.astype("<i4").tobytes(),
                self.terms.astype("<i8").tobytes(), self.tfs.astype("<i4").tobytes())

    @classmethod
    def unpack(cls, lengths: bytes, offsets: bytes, terms: bytes, tfs: bytes) -> ChunkTerms:
        return cls(np.frombuffer(lengths, "<i4"), np.frombuffer(offsets, "<i4"), np.frombuffer(terms, "<i8"),
                   np.frombuffer(tfs, "<i4"))


def chunk_terms(texts: Sequence[str]) -> ChunkTerms:
    """Tokenize a filing's chunk texts (their ``indexed_text``) into its term table."""
    stems = tokenizer().tokenize(list(texts), update_vocab=True, return_as="string", show_progress=False)
    ids: dict[str, int] = {}
    lengths: list[int] = []
    offsets: list[int] = [0]
    terms: list[int] = []
    tfs: list[int] = []
    for chunk in stems:
        counts = Counter(ids[s] if s in ids else ids.setdefault(s, term_id(s)) for s in chunk if s)
        lengths.append(sum(counts.values()))
        terms.extend(counts.keys())
        tfs.extend(counts.values())
        offsets.append(len(terms))
    return ChunkTerms(np.asarray(lengths, np.int32), np.asarray(offsets, np.int32), np.asarray(terms, np.int64),
                      np.asarray(tfs, np.int32))


def query_terms(query: str) -> list[int]:
    """The query's term ids, once per occurrence (a word asked twice weighs twice, as in bm25s)."""
    if not query.strip():
        return []
    stems = tokenizer().tokenize([query], update_vocab=True, return_as="string", show_progress=False)[0]
    return [term_id(s) for s in stems if s]


def idf(df: int, n: int) -> float:
    """Lucene's idf of a term held by ``df`` of ``n`` chunks."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def bm25(table: ChunkTerms, weights: dict[int, float], avg_len: float) -> np.ndarray:
    """Each chunk's BM25 score: the sum over query terms of weight (idf × times asked) × Lucene's tf part."""
    scores = np.zeros(table.chunks, dtype=np.float64)
    if not weights or not table.chunks:
        return scores
    asked = np.fromiter(weights.keys(), np.int64, len(weights))
    hit = np.flatnonzero(np.isin(table.terms, asked))
    if not hit.size:
        return scores
    chunk = np.searchsorted(table.offsets, hit, side="right") - 1
    tf = table.tfs[hit].astype(np.float64)
    dl = table.lengths[chunk].astype(np.float64)
    w = np.fromiter((weights[int(t)] for t in table.terms[hit]), np.float64, hit.size)
    np.add.at(scores, chunk, w * tf / (K1 * ((1 - B) + B * dl / max(avg_len, 1e-9)) + tf))
    return scores
