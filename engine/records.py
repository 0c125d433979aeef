"""Typed records passed between stages (frozen dataclasses, no dicts-of-dicts)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FilingIdentity:
    """Who filed what for which period, from the cover page and the file name."""

    doc_name: str
    issuer_key: str | None = None  # folder or file-name issuer token, e.g. "3M", "AMZN"
    registrant: str | None = None  # exact name from the cover page
    ticker: str | None = None
    form: str | None = None  # "10-K", "10-Q", "8-K", "EARNINGS"
    period: str | None = None  # "2022", "2023Q2", or a date for 8-Ks
    period_end: str | None = None  # ISO date of the fiscal period end when the cover page states it
    fiscal_year: int | None = None


@dataclass(frozen=True)
class ChunkSpan:
    """A page-bounded chunk before it is stored: text == page_text[char_start:char_end]."""

    page_no: int
    seq: int
    char_start: int
    char_end: int
    kind: str  # "text" | "table"
    text: str
    context: str = ""  # table header rows repeated for a chunk that starts inside a table


@dataclass(frozen=True)
class ParsedFiling:
    """Everything a worker extracted from one file; stored in one transaction."""

    path: str
    sha256: str
    bytes: int
    identity: FilingIdentity
    pages: tuple[str, ...]
    image_only_pages: tuple[int, ...]
    chunks: tuple[ChunkSpan, ...]
    summary: str
    parser_version: str
    lofin_summary: str | None = None


@dataclass(frozen=True)
class Filing:
    id: int
    sha256: str
    path: str
    identity: FilingIdentity
    n_pages: int
    n_chunks: int
    summary: str
    image_only_pages: tuple[int, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Chunk:
    id: int
    filing_id: int
    doc_name: str
    page_no: int
    char_start: int
    char_end: int
    kind: str
    text: str
    context: str = ""

    @property
    def indexed_text(self) -> str:
        """What lexical and dense indexes see: the table header context, then the chunk."""
        return f"{self.context}\n{self.text}" if self.context else self.text


@dataclass(frozen=True)
class SearchHit:
    chunk: Chunk
    score: float
    rank: int
    scores: dict[str, float] = field(default_factory=dict)  # per-scorer scores for the trace
