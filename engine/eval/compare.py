"""Compare two evaluation runs: metric deltas per pipeline and the questions each change fixed or broke."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.errors import EngineError

log = logging.getLogger(__name__)

# Means compared per pipeline; "correct" averages to accuracy (strict), "correct_tolerant" to accuracy within 1 %
# of the gold, "wrong_number" to the share of numeric questions answered with a wrong number. A metric no
# question carries in both runs is left out of the table.
COMPARED_METRICS = ("doc_recall@5", "page_recall@5", "page_recall@10", "page_precision", "ndcg@5", "ndcg@10",
                    "map@5", "map@10", "mrr@5", "mrr@10", "correct", "correct_tolerant", "wrong_number", "tokens_in",
                    "tokens_out", "llm_calls", "retrieval_seconds", "seconds")
METRIC_NAMES = {"correct": "accuracy", "correct_tolerant": "accuracy within 1 %", "wrong_number": "wrong-number rate"}
QUESTION_CHARS = 100
LISTED_QIDS = 20  # questions evaluated on one side only: this many qids are named, the rest counted


def load_results(run_dir: Path) -> dict[tuple[str, str], dict]:
    """Rows of ``run_dir/results.jsonl`` keyed by ``(pipeline, qid)``; a later row replaces an earlier one.

    A line torn by a crash is skipped, as :func:`engine.eval.runner.run_eval` does when resuming.
    """
    path = run_dir / "results.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EngineError(f"cannot read evaluation results {path}: {exc}") from exc
    rows: dict[tuple[str, str], dict] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows[(row["pipeline"], row["qid"])] = row
        except (json.JSONDecodeError, KeyError, TypeError):
            log.warning("%s: line %d is not a result row; skipped", path, n)
    return rows


def _mean(values: Iterable[float | bool]) -> float:
    xs = [float(v) for v in values]
    return sum(xs) / len(xs)


def _fmt(v: float) -> str:
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def _signed(v: float) -> str:
    text = _fmt(abs(v))
    return "0" if float(text) == 0 else ("+" if v > 0 else "-") + text  # float noise reads as no change


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= QUESTION_CHARS else text[: QUESTION_CHARS - 1] + "…"


def _qid_list(qids: Sequence[str]) -> str:
    shown = ", ".join(f"`{q}`" for q in qids[:LISTED_QIDS])
    return shown + (f" and {len(qids) - LISTED_QIDS} more" if len(qids) > LISTED_QIDS else "")


def _changes(a: dict, b: dict) -> tuple[list[str], list[str]]:
    """What got better and what got worse for one question: (fixed reasons, broke reasons)."""
    fixed, broke = [], []
    ca, cb = a.get("correct"), b.get("correct")
    if ca is False and cb is True:
        fixed.append("answer wrong → right")
    elif ca is True and cb is False:
        broke.append("answer right → wrong")
    if a.get("wrong_number") is True and b.get("wrong_number") is False:
        fixed.append("no wrong number given")
    elif a.get("wrong_number") is False and b.get("wrong_number") is True:
        broke.append("a wrong number given")
    ra, rb = a.get("page_recall@5"), b.get("page_recall@5")
    if ra is not None and rb is not None:
        if ra == 0 and rb > 0:
            fixed.append(f"page recall@5 0 → {_fmt(rb)}")
        elif ra > 0 and rb == 0:
            broke.append(f"page recall@5 {_fmt(ra)} → 0")
    return fixed, broke


def _question_lines(entries: Sequence[tuple[str, str, list[str]]]) -> list[str]:
    if not entries:
        return ["none", ""]
    return [f"- `{qid}` ({'; '.join(why)}): {_short(question)}" for qid, question, why in entries] + [""]


def compare_runs(a_dir: Path, b_dir: Path) -> str:
    """Markdown comparing run B with run A (two ``filinglens eval`` output folders).

    For every pipeline evaluated in both runs: the mean of each metric in A and in B and the delta B − A,
    computed on the questions both runs evaluated (and, per metric, that carry the metric on both sides);
    then the questions *fixed* (``correct`` False → True, a wrong number no longer given, or page recall@5
    0 → > 0) and *broke* (the reverse), each with its qid and the question cut to 100 characters. Questions
    and pipelines present in only one run are counted and named.

    Raises:
        EngineError: a folder has no readable ``results.jsonl``.
    """
    a, b = load_results(a_dir), load_results(b_dir)
    pipes_a = list(dict.fromkeys(p for p, _ in a))
    pipes_b = list(dict.fromkeys(p for p, _ in b))
    common = [p for p in pipes_a if p in pipes_b]
    lines = ["# Evaluation run comparison", "", f"- A: `{a_dir}` ({len(a)} rows)",
             f"- B: `{b_dir}` ({len(b)} rows)", "",
             "Deltas are B − A, over the questions both runs evaluated. Accuracy is the mean of `correct` "
             "over questions judged on both sides; times in seconds.", ""]
    only_a, only_b = [p for p in pipes_a if p not in pipes_b], [p for p in pipes_b if p not in pipes_a]
    if only_a:
        lines += [f"Pipelines only in A: {', '.join(only_a)}", ""]
    if only_b:
        lines += [f"Pipelines only in B: {', '.join(only_b)}", ""]
    if not common:
        lines += ["No pipeline was evaluated in both runs.", ""]
    for p in common:
        qa = [q for pp, q in a if pp == p]
        qb, qa_set = {q for pp, q in b if pp == p}, set(qa)
        both = [q for q in qa if q in qb]
        lines += [f"## {p}", "", f"- questions in both runs: {len(both)}"]
        a_only = [q for q in qa if q not in qb]
        b_only = [q for pp, q in b if pp == p and q not in qa_set]
        if a_only:
            lines.append(f"- only in A: {len(a_only)} ({_qid_list(a_only)})")
        if b_only:
            lines.append(f"- only in B: {len(b_only)} ({_qid_list(b_only)})")
        lines += ["", "| metric | A | B | B − A | n |", "|---|---|---|---|---|"]
        pairs = [(a[(p, q)], b[(p, q)]) for q in both]
        for metric in COMPARED_METRICS:
            paired = [(ra[metric], rb[metric]) for ra, rb in pairs
                      if ra.get(metric) is not None and rb.get(metric) is not None]
            if not paired:
                continue
            ma, mb = _mean(x for x, _ in paired), _mean(y for _, y in paired)
            name = METRIC_NAMES.get(metric, metric)
            lines.append(f"| {name} | {_fmt(ma)} | {_fmt(mb)} | {_signed(mb - ma)} | {len(paired)} |")
        fixed, broke = [], []
        for q, (ra, rb) in zip(both, pairs, strict=True):
            up, down = _changes(ra, rb)
            if up:
                fixed.append((q, rb.get("question") or ra.get("question") or "", up))
            if down:
                broke.append((q, rb.get("question") or ra.get("question") or "", down))
        lines += ["", f"### Fixed ({len(fixed)})", "", *_question_lines(fixed)]
        lines += [f"### Broke ({len(broke)})", "", *_question_lines(broke)]
    return "\n".join(lines).rstrip() + "\n"

