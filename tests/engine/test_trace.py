"""The trace as typed records: stored and read back in one place (engine.trace), runs stored by the dict-protocol
code still open, and a golden trace of one demo question (stable fields only)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from engine.records import (
    AnswerPayload, CurationPayload, DocumentsPayload, IntentPayload, PassagesPayload, StageTrace,
)
from engine.store import Library
from engine.trace import SCHEMA, read_run, trace_from_json, trace_to_json

DATA = Path(__file__).parent / "data"



@pytest.fixture()
def ingested_demo(ingested_demo):  # noqa: ANN001, ANN201
    """These tests are of the model-written answer path (figures read from passages by the model, the path of
    every numeric question the metric catalogue does not define): the statement-facts path is off."""
    library, settings, report = ingested_demo
    return library, settings.with_overrides(answer={"from_facts": False}), report

def load_v1_runs(library: Library) -> list[str]:
    """Put the runs stored by commit 2704073 (dict payloads, no schema key) into ``library``; returns their ids."""
    data = json.loads((DATA / "runs_v1.json").read_text(encoding="utf-8"))
    conn = library.conn
    for r in data["runs"]:
        conn.execute(f"INSERT INTO runs({','.join(r)}) VALUES ({','.join('?' * len(r))})", list(r.values()))
    for e in data["stage_events"]:
        e = {k: v for k, v in e.items() if k != "id"}
        conn.execute(f"INSERT INTO stage_events({','.join(e)}) VALUES ({','.join('?' * len(e))})", list(e.values()))
    return [r["id"] for r in sorted(data["runs"], key=lambda r: r["started_at"])]


def test_a_run_stored_by_the_dict_protocol_code_reads_as_typed_records(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib")
    numeric_id, textual_id = load_v1_runs(library)

    run = read_run(library, numeric_id)
    assert run.status == "answered" and run.question.startswith("How did")
    assert [t.stage for t in run.traces] == ["intent", "documents", "passages", "curation", "documents", "passages",
                                             "curation", "answer"]
    assert [t.seq for t in run.traces] == list(range(1, 9))
    intent = run.traces[0].payload
    assert isinstance(intent, IntentPayload) and intent.intent.fiscal_years == (2022, 2023)
    docs = run.traces[1].payload
    assert isinstance(docs, DocumentsPayload) and len(docs.kept) == 1 and docs.kept[0].why.startswith("kept")
    passages = run.traces[2].payload
    assert isinstance(passages, PassagesPayload) and passages.kept and all(c.rank >= 1 for c in passages.candidates)
    first = run.traces[3].payload
    assert isinstance(first, CurationPayload) and not first.answerable
    assert first.complementary_question.startswith("What was")
    assert run.traces[3].llm_calls[0].purpose == "curation" and run.traces[3].tokens_in == 100
    answer = run.traces[-1].payload
    assert isinstance(answer, AnswerPayload) and answer.answer == run.answer
    a = run.answer
    assert a is not None and a.value == 6776 and a.text == "6,776 USD millions" and a.citations
    # layout 1 wrote a program figure's passage as a number; it is the figure's cited passage now
    (g,) = a.grounding
    assert g.cited == (1,) and g.verified and g.found_in == (1, 2) and g.on_row is True
    assert a.computed is not None and a.computed.value == 6776 and a.computed.steps == 4
    assert run.cost is not None and run.cost.llm_calls == 3 and run.cost.tokens_in == 300

    text = read_run(library, textual_id).answer
    assert text is not None and text.method == "cot" and text.computed is None
    # ... and a written answer's figures as "1,2": the passages the answer cites
    assert [(g.variable, g.cited, g.verified) for g in text.grounding] == [
        ("stated 6,776", (1, 2), True), ("stated 3.5", (1, 2), False)]


def test_every_stored_stage_reads_back_as_the_same_record(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib")
    for run_id in load_v1_runs(library):
        for t in read_run(library, run_id).traces:
            stored = json.loads(json.dumps(trace_to_json(t)))
            assert stored["schema"] == SCHEMA
            again = trace_from_json(t.stage, t.round, t.seconds, stored, t.seq)
            assert isinstance(again, StageTrace) and again == t


def test_old_runs_open_in_the_cli_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main
    from engine.export import export_run

    home = tmp_path / "lib"
    numeric_id, _ = load_v1_runs(Library(home))
    assert main(["--home", str(home), "runs", "show", numeric_id]) == 0
    out = capsys.readouterr().out
    assert "A: 6,776 USD millions   [answered]" in out and "-- curation (round 1" in out
    assert "complementary question: What was" in out and "computed: 6776" in out
    md = export_run(Library(home), numeric_id, "md")
    assert "**Answer:** 6,776 USD millions" in md and "curation (round 2" in md
    data = json.loads(export_run(Library(home), numeric_id, "json"))
    assert data["answer"]["grounding"][0]["cited"] == [1] and data["trace"][0]["payload"]["schema"] == SCHEMA


# --- golden trace of one demo question ---------------------------------------------------------------------

GOLDEN = DATA / "golden_trace.json"


def stable_fields(run) -> dict:  # noqa: ANN001
    """What a trace says that must not change unless retrieval or answering changes: stages and rounds, the
    filings and pages kept, the curator's verdicts, the answer and its evidence (no scores, times or ids)."""
    out: list[dict] = []
    for t in run.traces:
        p = t.payload
        row: dict = {"stage": t.stage, "round": t.round}
        if isinstance(p, IntentPayload):
            row |= {"issuers": list(p.intent.issuers), "years": list(p.intent.fiscal_years),
                    "metrics": list(p.intent.metrics), "numeric": p.intent.numeric}
        elif isinstance(p, DocumentsPayload):
            row |= {"kept": [d.doc_name for d in p.kept], "scorer": p.scorer}
        elif isinstance(p, PassagesPayload):
            row |= {"kept": [[c.doc_name, c.page_index] for c in p.kept], "scorer": p.scorer}
        elif isinstance(p, CurationPayload):
            row |= {"shown": len(p.shown), "kept": len(p.kept), "answerable": p.answerable}
        elif isinstance(p, AnswerPayload):
            a = p.answer
            row |= {"status": a.status, "text": a.text, "value": a.value, "method": a.method,
                    "citations": [[c.doc_name, c.page_index] for c in a.citations],
                    "grounding": [[g.variable, g.value, list(g.cited), g.verified, g.on_row] for g in a.grounding]}
        out.append(row)
    return {"question": run.question, "status": run.status, "stages": out}


def test_golden_trace_of_a_demo_question(ingested_demo, demo_truth, embedder) -> None:  # noqa: ANN001
    from engine.pipeline import Models, build_pipeline
    from tests.engine.test_pipeline import revenue_fact, revenue_reader

    library, settings, _ = ingested_demo
    fact = revenue_fact(demo_truth, "2023")
    run = build_pipeline(settings, library, Models(embedder, revenue_reader(fact))).run(
        f"What was {fact['company']}'s total revenue in fiscal 2023?")
    got = stable_fields(read_run(library, run.id))
    assert got == stable_fields(run)  # the stored trace says what the live one said
    if os.environ.get("FILINGLENS_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1) + "\n", encoding="utf-8")
    assert got == json.loads(GOLDEN.read_text(encoding="utf-8"))


# --- the metric plan, shown where the analyst checks it ------------------------------------------------------


def _printed(demo_truth: list[dict], doc_name: str, metric: str, column: str) -> dict:
    """The generator's own record of a printed value (its filing, page and amount)."""
    return next(t for t in demo_truth if (t["doc_name"], t["metric"], t["fiscal_year_column"]) == (
        doc_name, metric, column))


def test_the_plan_shows_each_leaf_with_the_fact_it_used(ingested_demo, demo_truth, embedder,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A facts answer's plan, as ``runs show`` (``ask --explain``), the exports and Inspect show it: the reading in
    words, then the tree whose leaves are line items at a fiscal year, each with the row, column, printed value,
    filing and page of the fact it used (the page as a PDF reader numbers it, from the generator's truth)."""
    from engine.cli import main
    from engine.export import export_run
    from engine.pipeline import Models, build_pipeline
    from engine.trace import plan_lines

    library, settings, _ = ingested_demo
    pipeline = build_pipeline(settings.with_overrides(answer={"from_facts": True}), library, Models(embedder))
    run = pipeline.run("What is Harborview Therapeutics' FY2023 inventory turnover ratio?")
    assert run.status == "answered" and run.answer.method == "facts"
    lines = plan_lines(read_run(library, run.id).traces)
    assert lines == plan_lines(run.traces)  # the stored run shows what the live one did
    assert lines[0] == "Plan: complete (read by the grammar); unit: ratio"
    assert "  not read: —" in lines and "  company: HRBR" in lines and "  periods: FY2023" in lines
    tree = lines[lines.index("  tree:") + 1:]
    assert tree[:2] == ["    inventory turnover", "      ÷"]
    # the cost of sales: its first formula used, the second (printed in two lines) shown as not used
    assert tree[2] == "        cost of goods sold: the first of 2 formulas whose inputs are all found"
    assert tree[3] == "          formula 1 (used)" and tree[5] == "          formula 2 (not used)"
    avg = tree.index("        average over FY2022, FY2023")
    for leaf, doc_name, metric, column, period in (
            (tree[4], "HRBR_2023_10K", "Cost of revenue", "2023", "FY2023"),
            (tree[avg + 1], "HRBR_2023_10K", "Inventories", "2023", "as of 2023-12-31"),
            (tree[avg + 2], "HRBR_2022_10K", "Inventories", "2022", "as of 2022-12-31")):
        t = _printed(demo_truth, doc_name, metric, column)
        assert leaf.split(" ← ")[1] == (f"{metric} | {period} | {t['value']:,.0f} millions | {doc_name} "
                                        f"p. {t['page_index'] + 1}"), leaf
    assert tree[avg + 2].startswith("          inventory @ FY2022 ← ")

    assert main(["--home", str(library.home), "runs", "show", run.id]) == 0
    out = capsys.readouterr().out
    assert all(f"   {line}" in out.splitlines() for line in lines)
    data = json.loads(export_run(library, run.id, "json"))
    assert data["plan"] == lines
    assert "## Plan" in export_run(library, run.id, "md") and tree[avg + 2].strip() in export_run(library, run.id, "md")
    assert tree[avg + 2].strip() in export_run(library, run.id, "html")
    rows = list(csv.DictReader(io.StringIO(export_run(library, run.id, "csv"))))
    assert rows and all(r["plan"].splitlines() == lines for r in rows)


def test_a_plan_half_read_says_what_was_read_and_what_was_not(ingested_demo, embedder, capsys) -> None:
    """No number for a metric read only in part: the plan names the company, year and metric the question names,
    and the words it could not read, in the CLI and in a CSV export whose cells never start a formula."""
    from engine.cli import main
    from engine.export import export_run
    from engine.pipeline import Models, build_pipeline
    from engine.trace import plan_lines

    library, settings, _ = ingested_demo
    pipeline = build_pipeline(settings.with_overrides(answer={"from_facts": True}), library, Models(embedder))
    run = pipeline.run("=HYPERLINK(\"x\") What is Harborview Therapeutics' FY2023 inventory turnover, using cost "
                       "of widgets?")
    assert run.status == "not_answerable" and run.answer.value is None
    lines = plan_lines(read_run(library, run.id).traces)
    assert lines[0] == "Plan: unread (read by the grammar)"
    assert "  read: metrics named: inventory turnover" in lines and "  periods: FY2023" in lines
    assert any(line.startswith("  not read: ") and "widgets" in line for line in lines)
    assert "  tree:" not in lines  # nothing to compute
    assert main(["--home", str(library.home), "runs", "show", run.id]) == 0
    assert "   " + lines[-1] in capsys.readouterr().out.splitlines()
    cells = [c for row in csv.reader(io.StringIO(export_run(library, run.id, "csv"))) for c in row]
    assert any(c.splitlines() == lines for c in cells)
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
