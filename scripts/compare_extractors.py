"""Compare table extractors on the gold pages of FinanceBench table evidence: coverage, rows, time per page.

Ours (row text + statement facts) against PyMuPDF's table finder and pymupdf4llm's markdown tables.

    .venv/bin/python scripts/compare_extractors.py --questions ../shared/eval/financebench_dev.jsonl
    .venv/bin/python scripts/compare_extractors.py --limit 8 --extractors a,b,b2,c

Spans are selected as scripts/bench_facts.py selects them (its ``figures()``: at least six figures, years and
single digits left out; the gold page is ``evidence_page_num``, counted from 0 as PyMuPDF counts pages), but the
filing is opened straight from the corpus (``<corpus>/filings/**/<doc_name>.pdf``), no library needed. Each
extractor runs once per gold page:

- ``a``  ours: ``engine.ingest.pdf._row_text`` of the page's words, then ``extract_page_facts``;
- ``b``  ``page.find_tables()`` (default: line strategy, gated and completed by the layout model), each table's
  ``.extract()``;
- ``b2`` ``page.find_tables(strategy="text")``;
- ``b3`` (optional) as ``b`` but ``.extract(y_tolerance=8)``: keeps a cell's "," and "." on its digits' line;
- ``b4`` (optional) ``page.find_tables(use_layout=False)``: the line strategy alone, no layout model;
- ``c``  ``pymupdf4llm.to_markdown(doc, pages=[p], use_ocr=False)``, its pipe tables read as rows of cells.

Coverage: the share of the spans' figures (absolute values, relative tolerance 1e-6, exact printed value, no
×/÷ 1000) that come back as a value of a row that also has a text label. For ``a`` a row is a statement fact's
row (facts always have a label); "with period" counts high-confidence facts only, as bench_facts does. For the
others a value is a cell that is a whole figure (``is_number_cell`` once spaces are dropped, read with
``parse_number``; a bare year is not a value) and a label is a non-figure cell with at least three letters.
Time: only the extraction call, per page (for ``a`` the ``get_text("words")`` + ``_row_text`` +
``extract_page_facts``; for ``b`` ``find_tables`` + every ``extract()``; for ``c`` ``to_markdown``); one untimed
warm-up call per extractor first. Misses print with a cause read from the extractor's own output and the line or row the figure is in;
the ceiling line counts the figures printed anywhere on the gold page (which also checks the page index).
"""

from __future__ import annotations

import argparse
import html
import math
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import pymupdf
from bench_facts import figures

from engine.chunking import parse_row
from engine.eval.questions import load_questions
from engine.facts.tables import extract_page_facts
from engine.ingest.pdf import _row_text
from engine.pages import cite
from engine.vocab.numbers import is_number_cell, numbers_in, parse_number

REL_TOL = 1e-6
_YEAR_CELL = re.compile(r"^\(?(?:19|20)\d\d\)?$")
_MD_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")
EXTRACTORS = {
    "a": "ours: _row_text + extract_page_facts",
    "b": "find_tables() + extract()",
    "b2": 'find_tables(strategy="text") + extract()',
    "b3": "find_tables() + extract(y_tolerance=8)",
    "b4": "find_tables(use_layout=False) + extract()",
    "c": "pymupdf4llm.to_markdown, pipe tables",
}


@dataclass
class Extraction:
    seconds: float
    rows: list[tuple[str, list[float]]]  # rows with a label and at least one value
    dated: list[float] = field(default_factory=list)  # (a) values of high-confidence facts
    cells: list[list[str]] = field(default_factory=list)  # every row's cells as extracted (to name a miss's cause)
    text: str = ""  # (a) the page text


# ------------------------------------------------------------------------------------------------ cells
def clean_cell(cell: str | None) -> str:
    """A cell as text: markdown emphasis, <br> and escapes gone, whitespace runs one space."""
    if not cell:
        return ""
    s = html.unescape(re.sub(r"<br\s*/?>", " ", cell, flags=re.IGNORECASE))
    s = s.replace("**", "").replace("\\", "")
    s = re.sub(r"(?:^|(?<=\s))_+|_+(?=\s|$)", "", s)  # _italic_ markers, not underscores inside words
    return re.sub(r"\s+", " ", s).strip()


def cell_value(cell: str) -> float | None:
    """The value of a cell that is one whole figure, else None (a bare year is a header, not a value)."""
    compact = cell.replace(" ", "")
    if not compact or not re.search(r"\d", compact) or _YEAR_CELL.match(compact) or not is_number_cell(compact):
        return None
    return parse_number(compact)


def row_of(cells: list[str]) -> tuple[str, list[float]] | None:
    """(label, values) of a row of cleaned cells, or None when it lacks a label or a value."""
    label, values = "", []
    for c in cells:
        v = cell_value(c)
        if v is not None:
            values.append(abs(v))
        elif not label and sum(ch.isalpha() for ch in c) >= 3:
            label = c
    return (label, values) if label and values else None


def markdown_rows(md: str) -> list[list[str]]:
    """The rows of every pipe table in a markdown text, cells cleaned; separator lines left out."""
    out = []
    for line in md.splitlines():
        s = line.strip()
        if not s.startswith("|") or _MD_SEPARATOR.match(s):
            continue
        s = s[1:-1] if s.endswith("|") and len(s) > 1 else s[1:]
        out.append([clean_cell(c) for c in re.split(r"(?<!\\)\|", s)])
    return out


# ------------------------------------------------------------------------------------------------ extractors
def run_ours(doc: pymupdf.Document, pno: int) -> Extraction:
    page = doc.load_page(pno)
    t0 = time.perf_counter()
    text = _row_text(page.get_text("words", sort=False))
    facts = extract_page_facts(text, pno)
    seconds = time.perf_counter() - t0
    by_line: dict[int, tuple[str, list[float]]] = {}
    for f in facts:
        line = text.count("\n", 0, f.char_start)
        by_line.setdefault(line, (f.label, []))[1].append(abs(f.value))
    cells = []
    for line in text.split("\n"):
        parsed = parse_row(line)
        if parsed is not None:
            cells.append([parsed[0], *parsed[1]])
    return Extraction(seconds, [(lab, vals) for lab, vals in by_line.values() if any(vals)],
                      dated=[abs(f.value) for f in facts if f.confidence == "high"], cells=cells, text=text)


def _find_tables(doc: pymupdf.Document, pno: int, find_kw: dict, extract_kw: dict) -> Extraction:
    page = doc.load_page(pno)
    t0 = time.perf_counter()
    finder = page.find_tables(**find_kw)
    raw = [row for tab in (finder.tables if finder is not None else []) for row in tab.extract(**extract_kw)]
    seconds = time.perf_counter() - t0
    cells = [[clean_cell(c) for c in row] for row in raw]
    return Extraction(seconds, [r for c in cells if (r := row_of(c))], cells=cells)


def run_markdown(doc: pymupdf.Document, pno: int) -> Extraction:
    import pymupdf4llm  # imported here: only when (c) runs

    t0 = time.perf_counter()
    md = pymupdf4llm.to_markdown(doc, pages=[pno], use_ocr=False)
    seconds = time.perf_counter() - t0
    cells = markdown_rows(md)
    return Extraction(seconds, [r for c in cells if (r := row_of(c))], cells=cells)


RUNNERS: dict[str, Callable[[pymupdf.Document, int], Extraction]] = {
    "a": run_ours,
    "b": lambda d, p: _find_tables(d, p, {}, {}),
    "b2": lambda d, p: _find_tables(d, p, {"strategy": "text"}, {}),
    "b3": lambda d, p: _find_tables(d, p, {}, {"y_tolerance": 8}),
    "b4": lambda d, p: _find_tables(d, p, {"use_layout": False}, {}),
    "c": run_markdown,
}


# ------------------------------------------------------------------------------------------------ scoring
def has(values: list[float] | set[float], fig: float) -> bool:
    return any(math.isclose(v, fig, rel_tol=REL_TOL) for v in values)


def _digits(x: float) -> str:
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return s.replace(".", "").lstrip("0")


def miss_cause(name: str, ex: Extraction, fig: float) -> tuple[str, str]:
    """Why a figure is not a labelled value, read from the extractor's own output, and where it is (a line of
    the page text for ``a``, the row's cells for the others)."""
    if name == "a":
        for row in ex.cells:
            if has([abs(parse_number(v) or 0) for v in row[1:]], fig):
                return "in a statement row whose cells do not match the header's columns", " | ".join(row)
        line = next((ln for ln in ex.text.split("\n") if has({abs(v) for v in numbers_in(ln)}, fig)), None)
        if line is not None:
            return "in the page text, not in a statement row", line.strip()
        return "not in the page text", ""

    def show(row: list[str]) -> str:
        return " | ".join(c for c in row if c)

    for row in ex.cells:
        if any(has([abs(v)], fig) for c in row if (v := cell_value(c)) is not None):
            return "a value cell in a row without a label", show(row)
    for row in ex.cells:
        if any(has({abs(v) for v in numbers_in(c)}, fig) for c in row):
            return "inside a cell that is not one figure (merged cells or text)", show(row)
    key = _digits(fig)
    for row in ex.cells:
        if key and any(key == re.sub(r"\D", "", c).lstrip("0") for c in row):
            return "its digits are in a cell, the figure garbled", show(row)
    if not ex.cells:
        return "no table found on the page", ""
    return "not in any table cell", ""


def fmt_ms(xs: list[float]) -> tuple[str, str]:
    if not xs:
        return "-", "-"
    return f"{1000 * statistics.median(xs):.1f}", f"{1000 * statistics.fmean(xs):.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "eval" / "financebench_dev.jsonl",
                    help="FinanceBench-style question file (default: ../shared/eval/financebench_dev.jsonl)")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus",
                    help="the corpus folder (its filings/ are searched for <doc_name>.pdf), or filings/ itself "
                         "(default: ../shared/corpus)")
    ap.add_argument("--limit", type=int, default=0,
                    help="only the first N questions that have a table-like evidence span in the corpus")
    ap.add_argument("--extractors", default="a,b,b2,c", help=f"comma-separated, of: {', '.join(EXTRACTORS)}")
    ap.add_argument("--misses", type=int, default=15, help="misses listed per extractor")
    args = ap.parse_args()
    names = [n.strip() for n in args.extractors.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNNERS]
    if unknown:
        ap.error(f"unknown extractor(s) {unknown}; choose from {list(RUNNERS)}")
    root = args.corpus / "filings" if (args.corpus / "filings").is_dir() else args.corpus
    pdfs = {p.stem: p for p in sorted(root.rglob("*.pdf"))}
    if not pdfs:
        print(f"no PDFs under {root}", file=sys.stderr)
        return 2

    # the spans bench_facts.py counts: gold page in the corpus, at least six figures
    spans: list[tuple[str, str, int, str, list[float]]] = []  # (qid, doc, page, text, figures)
    page_counts: dict[str, int] = {}
    n_questions = 0
    for q in load_questions(args.questions):
        chosen = []
        for doc, page, text in q.evidence:
            figs = figures(text)
            if doc not in pdfs or len(figs) < 6:
                continue
            if doc not in page_counts:
                with pymupdf.open(pdfs[doc]) as d:
                    page_counts[doc] = d.page_count
            if page < page_counts[doc]:
                chosen.append((q.qid, doc, page, text, figs))
        if chosen:
            n_questions += 1
            spans += chosen
            if args.limit and n_questions >= args.limit:
                break
    pages = sorted({(doc, page) for _, doc, page, _, _ in spans})
    n_figs = sum(len(s[4]) for s in spans)
    print(f"{n_questions} questions, {len(spans)} table-like evidence spans, {len(pages)} gold pages, "
          f"{n_figs} figures")

    # run every extractor on every gold page, each on freshly opened filings (pymupdf4llm removes page rotation in
    # the document it is given); one warm-up call per extractor, untimed
    results: dict[str, dict[tuple[str, int], Extraction]] = {n: {} for n in names}
    for name in names:
        docs: dict[str, pymupdf.Document] = {}
        try:
            for i, (doc_name, pno) in enumerate(pages):
                if doc_name not in docs:
                    docs[doc_name] = pymupdf.open(pdfs[doc_name])
                if i == 0:
                    RUNNERS[name](docs[doc_name], pno)
                results[name][(doc_name, pno)] = RUNNERS[name](docs[doc_name], pno)
        finally:
            for d in docs.values():
                d.close()
        print(f"  ran {name}", file=sys.stderr)

    # the ceiling, and a check that pages count from 0: the figures printed anywhere on the gold page
    printed: dict[tuple[str, int], set[float]] = {}
    for doc_name in sorted({d for d, _ in pages}):
        with pymupdf.open(pdfs[doc_name]) as d:
            for _, pno in (p for p in pages if p[0] == doc_name):
                printed[(doc_name, pno)] = {abs(v) for v in numbers_in(d.load_page(pno).get_text())}
    on_page = sum(has(printed[(doc, page)], fig) for _, doc, page, _, figs in spans for fig in figs)
    print(f"ceiling: {on_page}/{n_figs} figures ({on_page / max(n_figs, 1):.1%}) are printed on their gold page "
          f"(numbers in PyMuPDF's plain text)")

    # score
    print(f"\n{'extractor':<48} {'coverage':>9} {'w/ period':>9} {'rows':>6} {'ms med':>8} {'ms mean':>8}")
    misses: dict[str, list[tuple[str, str, str]]] = {}
    missed_by: dict[tuple[str, str, int, float], set[str]] = {}
    for name in names:
        found = dated = 0
        miss_lines: list[str] = []
        for qid, doc, page, _, figs in spans:
            ex = results[name][(doc, page)]
            values = [v for _, vals in ex.rows for v in vals]
            for fig in figs:
                if has(values, fig):
                    found += 1
                else:
                    cause, where = miss_cause(name, ex, fig)
                    missed_by.setdefault((qid, doc, page, fig), set()).add(name)
                    miss_lines.append((f"{qid}  {cite(doc, page)}  {fig:g}", cause, where))
                if name == "a" and has(ex.dated, fig):
                    dated += 1
        misses[name] = miss_lines
        times = [results[name][p].seconds for p in pages]
        n_rows = sum(len(results[name][p].rows) for p in pages)
        med, mean = fmt_ms(times)
        with_period = f"{dated / max(n_figs, 1):.1%}" if name == "a" else "-"
        print(f"{name + ' ' + EXTRACTORS[name]:<48} {found / max(n_figs, 1):>9.1%} {with_period:>9} {n_rows:>6} "
              f"{med:>8} {mean:>8}")
    print(f"(coverage over {n_figs} figures; rows: rows with a label and a value on the {len(pages)} gold pages; "
          f"ms: extraction per page)")

    everyone = sum(len(by) == len(names) for by in missed_by.values())
    print(f"missed by every extractor run: {everyone} distinct figures")

    for name in names:
        lines = misses[name]
        causes: dict[str, int] = {}
        for _, cause, _ in lines:
            causes[cause] = causes.get(cause, 0) + 1
        print(f"\n{name}: {len(lines)} missed" + ("" if not lines else ": " + "; ".join(
            f"{k} {v}" for k, v in sorted(causes.items(), key=lambda kv: -kv[1]))))
        for head, cause, where in lines[: args.misses]:
            print(f"  {head}: {cause}" + (f"\n      {where[:160]}" if where else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
