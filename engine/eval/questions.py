"""Evaluation question files: FinanceBench-style (gold pages, evidence spans), Docugami-style (document
globs), and the product's own format (any JSONL with ``question`` and optional ``answer``/``gold_pages``).

Gold pages are 0-based page indexes, as the library stores pages: FinanceBench's ``evidence_page_num``, and
``{"doc_name", "page_index"}`` in ``gold_pages`` (``"page"`` in files written before, read the same)."""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import EngineError


@dataclass(frozen=True)
class EvalQuestion:
    qid: str
    question: str
    answer: str
    gold_docs: frozenset[str]
    gold_pages: frozenset[tuple[str, int]]  # (doc_name, 0-based page index)
    evidence: tuple[tuple[str, int, str], ...] = ()  # (doc_name, 0-based page index, exact evidence text)
    qtype: str = ""
    reasoning: str = ""
    has_evidence: bool = True
    meta: dict = field(default_factory=dict)


def _docugami_docs(glob: str, titles: dict[str, str], doc_names: list[str]) -> set[str]:
    """Resolve a Docugami title glob (``*2023 Q3 AAPL*``) to doc names, via titles when known."""
    hits = {doc for title, doc in titles.items() if fnmatch.fnmatch(title, glob)}
    if hits:
        return hits
    m = re.fullmatch(r"\*?(?:(\d{4}) Q([1-4]) )?([A-Z]+)\*?", glob.strip())
    if not m:
        return set()
    year, quarter, ticker = m.groups()
    pattern = f"{ticker}_{year}Q{quarter}_10Q" if year else f"{ticker}_*_10Q"
    return {d for d in doc_names if fnmatch.fnmatch(d, pattern)}


def load_questions(path: Path, *, documents: Path | None = None, doc_names: list[str] | None = None) -> list[EvalQuestion]:
    """Read a question file; ``documents`` (a documents.jsonl with titles) resolves Docugami globs."""
    titles: dict[str, str] = {}
    if documents is not None and documents.exists():
        for line in documents.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("title"):
                titles[row["title"]] = row["doc_name"]
    out = []
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise EngineError(f"cannot read questions from {path}: {exc}") from exc
    for i, row in enumerate(rows):
        if "question" not in row:
            raise EngineError(f"{path}: line {i + 1} has no 'question' field")
        qid = str(row.get("financebench_id") or row.get("qid") or row.get("id") or f"q{i:04d}")
        pages = {(g["doc_name"], int(g["page_index"] if "page_index" in g else g["page"]))
                 for g in row.get("gold_pages", [])}
        evidence = tuple((e["doc_name"], int(e["evidence_page_num"]), e.get("evidence_text", ""))
                         for e in row.get("evidence", []) if "evidence_page_num" in e)
        pages |= {(d, p) for d, p, _ in evidence}
        docs = {d for d, _ in pages} | set(row.get("gold_docs", []))
        if row.get("doc_name"):
            docs.add(row["doc_name"])
        if row.get("source_docs_glob"):
            docs |= _docugami_docs(row["source_docs_glob"], titles, doc_names or [])
        out.append(EvalQuestion(
            qid=qid, question=row["question"], answer=str(row.get("answer", "")), gold_docs=frozenset(docs),
            gold_pages=frozenset(pages), evidence=evidence, qtype=row.get("question_type", ""),
            reasoning=row.get("question_reasoning") or row.get("source_chunk_type") or "",
            has_evidence=bool(row.get("corpus_has_evidence", True)),
        ))
    return out
