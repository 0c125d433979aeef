"""Aggregate evaluation rows into tables (Markdown) and ``results.json``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from engine.eval.metrics import percentile

RETRIEVAL_COLS = ("doc_recall@5", "page_recall@5", "page_recall@10", "page_precision", "ndcg@10", "map@10", "mrr@10")


def _mean(rows: Sequence[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def _kind(row: dict) -> str | None:
    if "answer_kind" in row:
        return row["answer_kind"]
    # rows written before answer_kind existed
    return {"numeric": "numeric", "not answered": "numeric", "model": "textual"}.get(row.get("judged_by", ""))


def summarize(rows: Sequence[dict], pipelines: Sequence[str]) -> list[dict]:
    out = []
    for p in pipelines:
        rs = [r for r in rows if r["pipeline"] == p]
        if not rs:
            continue
        s: dict = {"pipeline": p, "n": len(rs)}
        for col in RETRIEVAL_COLS:
            s[col] = _mean(rs, col)
        # Numeric: golds the numeric matcher scores; model-judged: textual golds (a yes/no answer on the wrong
        # side is wrong without asking the model). Unanswered questions count as wrong in their own kind.
        numeric = [r for r in rs if _kind(r) == "numeric" and r.get("correct") is not None]
        judged = [r for r in rs if _kind(r) == "textual" and r.get("correct") is not None]
        if any("correct" in r for r in rs):
            s["accuracy_numeric"] = _mean(numeric, "correct") if numeric else None
            s["n_numeric"] = len(numeric)
            if any("wrong_number" in r for r in numeric):  # rows scored before wrong numbers were counted: none
                s["accuracy_numeric_tolerant"] = _mean(numeric, "correct_tolerant")
                s["numeric_right"] = sum(bool(r["correct"]) for r in numeric)
                s["numeric_right_tolerant"] = sum(bool(r.get("correct_tolerant")) for r in numeric)
                s["numbers_given"] = sum(bool(r.get("number_given")) for r in numeric)
                s["wrong_numbers"] = sum(bool(r.get("wrong_number")) for r in numeric)
                s["numeric_abstentions"] = sum(r.get("status") != "answered" for r in numeric)
            s["accuracy_model_judged"] = _mean(judged, "correct") if judged else None
            s["n_model_judged"] = len(judged)
            # which test decided the written answers, and the judge model's share alone (the least trusted)
            s["textual_decided_by"] = dict(Counter(r.get("judged_by", "") for r in judged))
            by_model = [r for r in judged if r.get("judged_by") == "model"]
            s["accuracy_judge_model_only"] = _mean(by_model, "correct") if by_model else None
            s["accuracy_all"] = _mean([r for r in rs if r.get("correct") is not None], "correct")
        s["tokens_in"] = _mean(rs, "tokens_in")
        s["tokens_out"] = _mean(rs, "tokens_out")
        if any(r.get("curation_tokens_in") for r in rs):
            s["tokens_cached"] = _mean(rs, "tokens_cached")
            s["curation_tokens_in"] = _mean(rs, "curation_tokens_in")
            s["curation_tokens_out"] = _mean(rs, "curation_tokens_out")
        s["llm_calls"] = _mean(rs, "llm_calls")
        ret = [r["retrieval_seconds"] for r in rs]
        tot = [r["seconds"] for r in rs]
        s.update({"retrieval_p50": percentile(ret, 50), "retrieval_p95": percentile(ret, 95),
                  "total_p50": percentile(tot, 50), "total_p95": percentile(tot, 95)})
        out.append(s)
    return out


def _fmt(v: object) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}" if v < 10 else f"{v:.1f}"
    return str(v)


def _table(summary: Sequence[dict]) -> list[str]:
    cols = ["pipeline", "n", *RETRIEVAL_COLS, "accuracy_numeric", "accuracy_numeric_tolerant", "n_numeric",
            "numbers_given", "wrong_numbers", "accuracy_model_judged", "n_model_judged",
            "tokens_in", "tokens_out", "tokens_cached", "curation_tokens_in", "curation_tokens_out", "llm_calls",
            "retrieval_p50", "retrieval_p95", "total_p50", "total_p95"]
    cols = [c for c in cols if any(s.get(c) is not None for s in summary)]
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols),
            *("| " + " | ".join(_fmt(s.get(c)) for c in cols) + " |" for s in summary)]


def _numbers(summary: Sequence[dict]) -> list[str]:
    """The numeric answers in words, one line per answering pipeline: right strictly and with the gold's rounding
    forgiven, and how many of the numbers it gave were wrong (what an analyst would have been told)."""
    lines = []
    for s in summary:
        n = s.get("n_numeric")
        if not n or s.get("wrong_numbers") is None:
            continue
        lines.append(f"- {s['pipeline']}: numeric answers right {s['numeric_right']}/{n} strictly, "
                     f"{s['numeric_right_tolerant']}/{n} within 1 % of "
                     f"the gold; {s['wrong_numbers']} wrong number(s) among {s['numbers_given']} given; "
                     f"{s['numeric_abstentions']} abstention(s)")
    for s in summary:
        decided = s.get("textual_decided_by")
        if not decided:
            continue
        tests = ", ".join(f"{k or 'unscored'} {v}" for k, v in sorted(decided.items(), key=lambda kv: -kv[1]))
        model = s.get("accuracy_judge_model_only")
        lines.append(f"- {s['pipeline']}: written answers decided by {tests}"
                     + (f"; the judge model alone accepted {model:.0%} of those it decided" if model is not None
                        else ""))
    return ["", *lines] if lines else []


def markdown(summary: Sequence[dict], rows: Sequence[dict], title: str,
             missing: dict[str, list[str]] | None = None) -> str:
    """The report. ``missing`` maps question ids to their gold filings that are not in the library: those
    questions cannot be answered from it, so the table is repeated without them."""
    lines = [f"# {title}", "", *_table(summary), *_numbers(summary)]
    lines += ["", "Pages in results.json (`page_indexes`, gold pages) are 0-based page indexes: a PDF "
              "reader's page number minus 1. Accuracy: numeric answers by the rounding/truncation matcher "
              "(strict), and within 1 % of the gold (tolerant: the gold's own rounding forgiven); a wrong number is "
              "one answered that is not within 1 % of the gold (an abstention is not one); "
              "textual answers judged by the local model (reported separately; a yes/no answer on the other "
              "side than the gold is wrong without asking it). Times in seconds.", ""]
    if missing:
        absent = sorted({d for docs in missing.values() for d in docs})
        inside = [r for r in rows if r["qid"] not in missing]
        lines += [f"## Without the {len(missing)} questions whose gold filing is not in the library", "",
                  f"Not in the library: {', '.join(absent)}. No pipeline can find or answer from a filing it does not "
                  "have; the table below leaves those questions out.", ""]
        if inside:
            lines += [*_table(summarize(inside, [s["pipeline"] for s in summary])), ""]
    recall = "page_recall@5" if any("page_recall@5" in r for r in rows) else "doc_recall@5"
    for cut in ("qtype", "reasoning"):
        values = sorted({r.get(cut) or "?" for r in rows})
        if len(values) < 2:
            continue
        lines += [f"## {recall} / accuracy by {cut}", "", "| " + cut + " | " + " | ".join(s["pipeline"] for s in summary) + " |",
                  "|" + "---|" * (len(summary) + 1)]
        for v in values:
            cells = []
            for s in summary:
                rs = [r for r in rows if r["pipeline"] == s["pipeline"] and (r.get(cut) or "?") == v]
                rec, acc = _mean(rs, recall), _mean([r for r in rs if r.get("correct") is not None], "correct")
                cells.append(f"{_fmt(rec)} / {_fmt(acc)} (n={len(rs)})")
            lines.append(f"| {v} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def write_report(out_dir: Path, rows: Sequence[dict], pipelines: Sequence[str], title: str,
                 missing: dict[str, list[str]] | None = None) -> list[dict]:
    summary = summarize(rows, pipelines)
    data = {"summary": summary, "rows": list(rows), "gold_not_in_library": missing or {}}
    (out_dir / "results.json").write_text(json.dumps(data, indent=1, default=str))
    (out_dir / "report.md").write_text(markdown(summary, rows, title, missing))
    return summary
