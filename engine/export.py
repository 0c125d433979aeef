"""Evidence sets and audit traces of runs, to JSON, CSV, and Markdown or HTML reports with page snapshots.

A cited passage's page is shown as a PDF reader numbers it (``page``, from 1), with the folio the page prints
beside it when that differs (:mod:`engine.pages`); the JSON also carries the stored 0-based ``page_index``.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.errors import EngineError
from engine.evidence import Snapshot, page_snapshot
from engine.invisible import visible
from engine.pages import page_label, reader_page
from engine.records import StageTrace, StoredRun
from engine.store.library import Library
from engine.trace import event_json, plan_lines, read_run, stage_summary, to_json

FORMATS = ("json", "csv", "md", "html")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> str:
    """A CSV cell a spreadsheet will not evaluate: text starting like a formula gets a leading quote."""
    text = "" if value is None else visible(str(value))
    return "'" + text if text.startswith(_FORMULA_START) else text


def evidence_set(library: Library, run_id: str) -> dict[str, Any]:
    """Question, answer, cited passages (filing, page, text) and the full trace of one run, as JSON-ready data
    (the ``json`` export; the other formats are written from the same data). A cited passage's ``page`` is the
    PDF reader's page number (from 1), ``page_index`` the same page counted from 0 (as traces store it), and
    ``printed_folio`` the number the page prints, or null. ``plan``: the metric plan the question was read into,
    as lines of text with the fact each leaf used (:func:`engine.trace.plan_lines`; empty when there is none)."""
    return _evidence_json(read_run(library, run_id), library)


def _report(library: Library, run_id: str) -> tuple[dict[str, Any], list[str]]:
    """The evidence set and the trace's one line per stage, from one read of the run."""
    run = read_run(library, run_id)
    return _evidence_json(run, library), trace_summary(run.traces)


def _evidence_json(run: StoredRun, library: Library) -> dict[str, Any]:
    cited = []
    for c in run.answer.citations if run.answer else ():
        chunk = library.chunks([c.chunk_id])
        cited.append({"passage_id": c.passage_id, "chunk_id": c.chunk_id, "doc_name": c.doc_name,
                      "page": reader_page(c.page_index), "page_index": c.page_index,
                      "printed_folio": c.printed_folio, "title": c.title,
                      "text": chunk[0].text if chunk else "(passage no longer in the library)",
                      "context": chunk[0].context if chunk else ""})
    cost = to_json(run.cost) if run.cost else {}
    return {
        "run_id": run.id, "question": run.question, "status": run.status, "started_at": run.started_at,
        "finished_at": run.finished_at, "answer": to_json(run.answer) if run.answer else {}, "cited_passages": cited,
        "cost": {k: cost.get(k) for k in ("seconds", "retrieval_seconds", "setup_seconds", "model_load_seconds",
                                          "tokens_in", "tokens_out", "llm_calls")},
        "error": run.error, "plan": plan_lines(run.traces), "computed": computed_rows(run),
        "quotes": quote_rows(run),
        "trace": [event_json(t) for t in run.traces]
    }


INPUT_COLUMNS = ("input", "row", "period", "printed", "filing", "page", "how it was chosen")


def computed_rows(run: StoredRun) -> dict[str, Any]:
    """How the answer's number was made, as every export shows it: ``how`` (the computation in words, the first
    line of the answer's reasoning), ``inputs`` (one row per statement cell the formula took, the columns of
    :data:`INPUT_COLUMNS`) and ``figures`` (figures the formula read from the passages' text: name, as printed,
    passage). Empty lists when the answer was written, not computed."""
    a = run.answer
    if a is None or not (a.inputs or a.variables):
        return {"how": "", "inputs": [], "figures": []}
    inputs = [[i.variable, i.row or i.item, i.period,
               (f"{i.printed} {i.scale}" if i.scale else i.printed) if i.fact_id is not None
               else "not printed on the statement, taken as 0",
               i.doc_name if i.fact_id is not None else "",
               page_label(i.page_index, i.printed_folio) if i.fact_id is not None else "",
               i.chosen()]
              for i in a.inputs]
    figures = [[v.name, v.label, f"passage [{v.passage_id}]"] for v in a.variables]
    how = a.reasoning.split("\n", 1)[0].strip() if a.reasoning else ""
    return {"how": how, "inputs": inputs, "figures": figures}


QUOTE_COLUMNS = ("quote", "sentence", "filing", "page", "section")


def quote_rows(run: StoredRun) -> list[list[str]]:
    """A written answer's quoted evidence as every export shows it: one row per sentence (the columns of
    :data:`QUOTE_COLUMNS`), exactly as the filing prints it; empty for other answers."""
    a = run.answer
    return [[f"[{q.number}]", " ".join(q.text.split()), q.doc_name, page_label(q.page_index, q.printed_folio),
             q.section] for q in (a.quotes if a else ())]


def export_run(library: Library, run_id: str, fmt: str) -> str:
    """One run as text: JSON, CSV, or a Markdown/HTML report without page images (see :func:`write_export`)."""
    _check_format(fmt)
    ev, summary = _report(library, run_id)
    if fmt == "json":
        return json.dumps(ev, indent=2, default=str)
    if fmt == "csv":
        return to_csv(ev)
    return to_markdown(ev, summary) if fmt == "md" else to_html(ev, summary)


def write_export(library: Library, run_ids: Sequence[str], fmt: str, target: Path) -> list[Path]:
    """Write one run to the file ``target``, or several runs to ``target/filinglens-run-<id>.<fmt>``.

    Markdown reports get a snapshot of each cited page (PNG, evidence marked) in ``<stem>_pages/``
    beside the report; HTML reports embed them, so the one file can be mailed as it is.
    Returns the report files written.
    """
    _check_format(fmt)
    if len(run_ids) == 1 and not target.is_dir():
        targets = [(run_ids[0], target)]
    else:
        target.mkdir(parents=True, exist_ok=True)
        targets = [(rid, target / f"filinglens-run-{rid}.{fmt}") for rid in run_ids]
    for rid, path in targets:
        ev, summary = _report(library, rid)
        if fmt == "json":
            text = json.dumps(ev, indent=2, default=str)
        elif fmt == "csv":
            text = to_csv(ev)
        else:
            snaps = _snapshots(library, ev)
            if fmt == "md":
                text = to_markdown(ev, summary, _write_pngs(snaps, path))
            else:
                text = to_html(ev, summary, {i: "data:image/png;base64," + base64.b64encode(s.png).decode("ascii")
                                    for i, s in snaps.items() if s.png}, {i: s.note for i, s in snaps.items()})
        path.write_text(text, encoding="utf-8", newline="")
    return [p for _, p in targets]


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise EngineError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")


def _snapshots(library: Library, ev: dict[str, Any]) -> dict[int, Snapshot]:
    """A page picture per cited passage (index in ``cited_passages``), or the reason there is none."""
    out = {}
    for i, c in enumerate(ev["cited_passages"]):
        filing = library.filing_by_doc_name(c["doc_name"])
        chunks = library.chunks([c["chunk_id"]])
        if filing is None or not chunks:
            out[i] = Snapshot(None, 0, "the filing is no longer in the library")
            continue
        out[i] = page_snapshot(filing.path, chunks[0], library.page_text(filing.id, chunks[0].page_index))
    return out


def _write_pngs(snaps: dict[int, Snapshot], report: Path) -> dict[int, str]:
    """Save the snapshots next to the report; returns their paths relative to it."""
    folder = report.with_name(report.stem + "_pages")
    links = {}
    for i, snap in snaps.items():
        if snap.png:
            folder.mkdir(exist_ok=True)
            (folder / f"evidence-{i + 1}.png").write_bytes(snap.png)
            links[i] = f"{folder.name}/evidence-{i + 1}.png"
    return links


def to_csv(ev: dict[str, Any]) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["run_id", "question", "answer", "status", "passage_id", "doc_name", "page", "printed_folio",
                "title", "text", "plan", "computed", "inputs", "quotes"])
    plan = "\n".join(ev.get("plan") or ())
    computed = ev.get("computed") or {}
    inputs = "\n".join(" | ".join(str(v) for v in row if v) for row in computed.get("inputs", ())) + "".join(
        f"\n{name} | {label} | {where}" for name, label, where in computed.get("figures", ()))
    quotes = "\n".join(" | ".join(v for v in row if v) for row in ev.get("quotes") or ())
    for c in ev["cited_passages"] or [{}]:
        row = (ev["run_id"], ev["question"], ev["answer"].get("text", ""), ev["status"],
               c.get("passage_id", ""), c.get("doc_name", ""), c.get("page", ""),
               c.get("printed_folio") or "", c.get("title", ""), c.get("text", ""), plan,
               computed.get("how", ""), inputs.strip(), quotes)
        w.writerow([safe_cell(v) for v in row])
    return out.getvalue()


def _fence(text: str, lang: str = "") -> list[str]:
    """A Markdown code fence longer than any backtick run in ``text``, so filing text cannot close it."""
    text = visible(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + lang, text, ticks]


def _passage_text(c: dict[str, Any]) -> str:
    context = c.get("context") or ""
    return (context + "\n" if context else "") + c["text"]


def _page(c: dict[str, Any]) -> str:
    """A cited passage's page as people cite it: "p. 47 (printed 46)"."""
    return page_label(c["page_index"], c.get("printed_folio"))


def _cost_line(ev: dict[str, Any]) -> str:
    cost = ev["cost"]
    return (f"Run {ev['run_id']} — {cost.get('seconds')} s, {cost.get('tokens_in')} tokens in, "
            f"{cost.get('tokens_out')} out, {cost.get('llm_calls')} model calls")


def trace_summary(traces: Sequence[StageTrace]) -> list[str]:
    """One line per stage: what it kept and why the loop went on."""
    return [f"{t.stage} (round {t.round}, {t.seconds:.2f} s, {t.tokens_in}/{t.tokens_out} tokens): {stage_summary(t)}"
            for t in traces]


def to_markdown(ev: dict[str, Any], summary: Sequence[str], images: dict[int, str] | None = None) -> str:
    """The report in Markdown (``summary``: the trace, one line per stage); ``images`` maps a cited passage's index to its page snapshot's path."""
    a = ev["answer"]
    # an answer's note says how the question was taken (a filing not loaded, a period assumed): before the answer
    first = ev["status"] == "answered" and a.get("reason")
    lines = [f"# {_md_line(ev['question'])}", "", *([f"**Note:** {_md_line(a['reason'])}  "] if first else []),
             f"**Answer:** {_md_line(a.get('text') or '(none)')}  ", f"**Status:** {ev['status']}"]
    if a.get("reason") and not first:
        lines.append(f"**Note:** {_md_line(a['reason'])}")
    lines += ["", _cost_line(ev), ""]
    if ev.get("plan"):
        lines += ["## Plan", "", *_fence("\n".join(ev["plan"])), ""]
    lines += _md_computed(ev.get("computed") or {})
    if ev.get("quotes"):
        lines += ["## Quoted evidence", "", "| " + " | ".join(QUOTE_COLUMNS) + " |", "|" + "---|" * len(QUOTE_COLUMNS)]
        lines += ["| " + " | ".join(_md_line(v).replace("|", "\\|") for v in row) + " |" for row in ev["quotes"]]
        lines.append("")
    lines += ["## Evidence", ""]
    for i, c in enumerate(ev["cited_passages"]):
        where = _md_line(f"{c['doc_name']}, {_page(c)}")
        lines += [f"### [{c['passage_id']}] {_md_line(c['title'])} — {where}", ""]
        lines += _fence(_passage_text(c)) + [""]
        if images and i in images:
            lines += [f"![{_md_line(c['doc_name'] + ' ' + _page(c))}, evidence marked]({images[i]})", ""]
    if a.get("program"):
        lines += ["## Program", "", *_fence(a["program"], "python"), "",
                  f"Computed: {_md_line(a.get('computed', {}).get('value'))}", ""]
    if a.get("reasoning"):
        lines += ["## Reasoning", "", *_fence(a["reasoning"]), ""]
    lines += ["## Trace", ""] + [f"- {_md_line(t)}" for t in summary]
    return "\n".join(lines) + "\n"


def _md_computed(computed: dict[str, Any]) -> list[str]:
    """The answer's computation in Markdown: the formula in words and a table of its inputs."""
    if not (computed.get("inputs") or computed.get("figures")):
        return []
    lines = ["## How it was computed", ""]
    if computed.get("how"):
        lines += [_md_line(computed["how"]), ""]
    for header, rows in ((INPUT_COLUMNS, computed.get("inputs")), (("figure", "as printed", "where"),
                                                                   computed.get("figures"))):
        if rows:
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(_md_line(v).replace("|", "\\|") for v in row) + " |" for row in rows]
            lines.append("")
    return lines


def _md_line(text: str) -> str:
    """Untrusted text on one Markdown line: no line breaks, no raw HTML, no invisible characters."""
    return " ".join(visible(str(text)).split()).replace("<", "&lt;").replace(">", "&gt;")


def to_html(ev: dict[str, Any], summary: Sequence[str], images: dict[int, str] | None = None,
            notes: dict[int, str] | None = None) -> str:
    """A self-contained HTML report; every piece of filing or model text is escaped."""

    def e(text: str) -> str:
        return html.escape(visible(text))

    a = ev["answer"]
    parts = [f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{e(ev['question'])}</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{e(ev['question'])}</h1>"]
    note = f"<p class=\"note\"><b>Note:</b> {e(a['reason'])}</p>" if a.get("reason") else ""
    first = ev["status"] == "answered"  # how the question was taken, before the answer (see to_markdown)
    parts += [note if first else "", f"<p class=\"answer\"><b>Answer:</b> {e(a.get('text') or '(none)')}</p>",
              f"<p><b>Status:</b> {e(ev['status'])}</p>", "" if first else note]
    parts.append(f"<p class=\"cost\">{e(_cost_line(ev))}</p>")
    if ev.get("plan"):
        parts += ["<h2>Plan</h2>", "<pre>" + e("\n".join(ev["plan"])) + "</pre>"]
    computed = ev.get("computed") or {}
    if computed.get("inputs") or computed.get("figures"):
        parts.append("<h2>How it was computed</h2>")
        if computed.get("how"):
            parts.append(f"<p>{e(computed['how'])}</p>")
        for header, rows in ((INPUT_COLUMNS, computed.get("inputs")), (("figure", "as printed", "where"),
                                                                       computed.get("figures"))):
            if rows:
                parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"
                             + "".join("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>"
                                       for row in rows) + "</table>")
    if ev.get("quotes"):
        parts.append("<h2>Quoted evidence</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in QUOTE_COLUMNS)
                     + "</tr>" + "".join("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>"
                                         for row in ev["quotes"]) + "</table>")
    parts.append("<h2>Evidence</h2>")
    for i, c in enumerate(ev["cited_passages"]):
        parts += [f"<h3>[{c['passage_id']}] {e(c['title'])} — {e(c['doc_name'])}, {e(_page(c))}</h3>",
                  f"<pre>{e(_passage_text(c))}</pre>"]
        if images and i in images:
            parts.append(f"<figure><img src=\"{e(images[i])}\" alt=\"{e(c['doc_name'])} {e(_page(c))}\">"
                         f"<figcaption>{e(c['doc_name'])}, {e(_page(c))}, evidence marked</figcaption>"
                         "</figure>")
        elif notes and notes.get(i):
            parts.append(f"<p class=\"note\">No page image: {e(notes[i])}.</p>")
    if a.get("program"):
        parts += ["<h2>Program</h2>", f"<pre>{e(a['program'])}</pre>",
                  f"<p>Computed: {e(str(a.get('computed', {}).get('value')))}</p>"]
    if a.get("reasoning"):
        parts += ["<h2>Reasoning</h2>", f"<pre>{e(a['reasoning'])}</pre>"]
    parts += ["<h2>Trace</h2>", "<ul>", *[f"<li>{e(t)}</li>" for t in summary], "</ul>",
              "</body></html>"]
    return "\n".join(parts) + "\n"


_CSS = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
        "pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap;font-size:90%}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
        "img{max-width:100%;border:1px solid #ccc}.answer{font-size:120%}.note{color:#8a5300}.cost{color:#666}")
