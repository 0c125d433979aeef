"""Evidence sets and audit traces of runs, to JSON, CSV and Markdown."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from engine.errors import EngineError
from engine.store.library import Library, RunStore

FORMATS = ("json", "md", "csv")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> str:
    """A CSV cell a spreadsheet will not evaluate: text starting like a formula gets a leading quote."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def evidence_set(library: Library, run_id: str) -> dict[str, Any]:
    """Question, answer, cited passages (filing, page, text) and the full trace of one run."""
    store = RunStore(library)
    row = store.get(run_id)
    result = json.loads(row["result"] or "{}")
    answer = result.get("answer", {})
    events = store.events(row["id"])
    cited = []
    for c in answer.get("citations", []):
        chunk = library.chunks([c["chunk_id"]])
        cited.append({**c, "text": chunk[0].text if chunk else "(passage no longer in the library)",
                      "context": chunk[0].context if chunk else ""})
    return {
        "run_id": row["id"], "question": row["question"], "status": row["status"], "started_at": row["started_at"],
        "finished_at": row["finished_at"], "answer": answer, "cited_passages": cited,
        "cost": {k: result.get(k) for k in ("seconds", "retrieval_seconds", "tokens_in", "tokens_out", "llm_calls")},
        "error": row["error"], "trace": events,
    }


def export_run(library: Library, run_id: str, fmt: str) -> str:
    if fmt not in FORMATS:
        raise EngineError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")
    ev = evidence_set(library, run_id)
    if fmt == "json":
        return json.dumps(ev, indent=2, default=str)
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["run_id", "question", "answer", "status", "passage_id", "doc_name", "page", "title", "text"])
        rows = ev["cited_passages"] or [{}]
        for c in rows:
            w.writerow([safe_cell(v) for v in (ev["run_id"], ev["question"], ev["answer"].get("text", ""), ev["status"],
                                               c.get("passage_id", ""), c.get("doc_name", ""), c.get("page", ""),
                                               c.get("title", ""), c.get("text", ""))])
        return out.getvalue()
    return to_markdown(ev)


def to_markdown(ev: dict[str, Any]) -> str:
    a = ev["answer"]
    lines = [f"# {ev['question']}", "", f"**Answer:** {a.get('text') or '(none)'}  ", f"**Status:** {ev['status']}"]
    if a.get("reason"):
        lines.append(f"**Note:** {a['reason']}")
    lines += ["", f"Run `{ev['run_id']}` — {ev['cost'].get('seconds')} s, {ev['cost'].get('tokens_in')} tokens in, "
                  f"{ev['cost'].get('tokens_out')} out, {ev['cost'].get('llm_calls')} model calls", "", "## Evidence", ""]
    for c in ev["cited_passages"]:
        lines += [f"### [{c['passage_id']}] {c['title']} — {c['doc_name']}, page {c['page']}", "", "```",
                  (c.get("context") + "\n" if c.get("context") else "") + c["text"], "```", ""]
    if a.get("program"):
        lines += ["## Program", "", "```python", a["program"], "```", "", f"Computed: `{a.get('computed', {}).get('value')}`", ""]
    if a.get("reasoning"):
        lines += ["## Reasoning", "", a["reasoning"], ""]
    lines += ["## Trace", ""]
    for e in ev["trace"]:
        p = e["payload"]
        head = f"- **{e['stage']}** (round {e['round']}, {e['seconds']:.2f} s, {e['tokens_in']}/{e['tokens_out']} tokens)"
        if e["stage"] == "documents":
            kept = [c["doc_name"] for c in p.get("candidates", []) if c.get("kept")]
            head += f": scorer {p.get('scorer')}; kept {', '.join(kept)}"
        elif e["stage"] == "passages":
            kept = [f"{c['doc_name']} p.{c['page']}" for c in p.get("candidates", []) if c.get("kept")]
            head += f": scorer {p.get('scorer')}; kept {', '.join(kept)}"
        elif e["stage"] == "curation":
            head += (f": answerable={p.get('answerable')}, kept {len(p.get('kept', []))}, dropped {len(p.get('dropped', []))}"
                     + (f"; missing: {p['missing_information']}; next question: {p['complementary_question']}"
                        if p.get("complementary_question") else ""))
        lines.append(head)
    return "\n".join(lines) + "\n"
