"""Evaluation outputs a user reads: report.md / results.json, the PNG charts, and the run comparison.

The rows are synthetic, shaped like those :func:`engine.eval.runner.run_eval` writes (pages as JSON lists),
with metric values worked out by hand from the gold pages below.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.errors import EngineError
from engine.eval.compare import compare_runs
from engine.eval.report import write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHARTS = ("recall_at_k.png", "precision_recall.png", "accuracy_by_type.png", "latency.png")

GOLD = {"q1": {("A", 1)}, "q2": {("B", 2), ("B", 3)}, "q3": {("C", 0)}, "q4": {("D", 5)}}
QTYPE = {"q1": "metrics-generated", "q2": "metrics-generated",
         "q3": "domain-relevant", "q4": "domain-relevant"}


def _row(pipeline: str, qid: str, pages: list[list], *, recall5: float, precision: float, seconds: float,
         correct: bool | None = None, judged_by: str | None = None, question: str | None = None) -> dict:
    row = {"qid": qid, "pipeline": pipeline, "question": question or f"What is the answer to {qid}?",
           "qtype": QTYPE.get(qid, "novel-generated"), "reasoning": "", "page_indexes": pages,
           "docs": list(dict.fromkeys(d for d, _ in pages)), "ranked_chunks": [], "answer": "", "status": "",
           "tokens_in": 0, "tokens_out": 0, "llm_calls": 0, "seconds": seconds, "retrieval_seconds": seconds,
           "doc_recall@5": 1.0 if pages else 0.0, "page_recall@5": recall5, "page_recall@10": recall5,
           "page_precision": precision}
    if judged_by is not None:
        row.update(correct=correct, judged_by=judged_by, status="answered", tokens_in=900, tokens_out=60,
                   llm_calls=3)
    return row


def _rows() -> list[dict]:
    return [
        # hybrid: retrieval only. recall@5 = 1, 1, 0, 1 (mean 0.75); precision = 1/2, 2/3, 0, 1/3 (mean 0.375)
        _row("hybrid", "q1", [["A", 1], ["X", 0]], recall5=1.0, precision=0.5, seconds=0.01),
        _row("hybrid", "q2", [["B", 2], ["Z", 1], ["B", 3]], recall5=1.0, precision=2 / 3, seconds=0.02),
        _row("hybrid", "q3", [["X", 9]], recall5=0.0, precision=0.0, seconds=0.03),
        _row("hybrid", "q4", [["Y", 1], ["Y", 2], ["D", 5]], recall5=1.0, precision=1 / 3, seconds=0.02),
        # hirec answers. recall@5 = 1, 0.5, 0, 1 (mean 0.625); correct: True, False, unjudged, True (model)
        _row("hirec", "q1", [["A", 1]], recall5=1.0, precision=1.0, seconds=8.0,
             correct=True, judged_by="numeric"),
        _row("hirec", "q2", [["B", 2]], recall5=0.5, precision=1.0, seconds=12.0,
             correct=False, judged_by="numeric"),
        _row("hirec", "q3", [], recall5=0.0, precision=0.0, seconds=20.0, correct=None, judged_by="model"),
        _row("hirec", "q4", [["D", 5]], recall5=1.0, precision=1.0, seconds=9.0,
             correct=True, judged_by="model"),
    ]


def _table(markdown: str) -> dict[str, dict[str, str]]:
    """The first Markdown table of the report, as {pipeline: {column: cell}}."""
    lines = [ln for ln in markdown.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != len(header) or cells[0] not in ("hybrid", "hirec"):
            break
        out[cells[0]] = dict(zip(header, cells, strict=True))
    return out


# ---------------------------------------------------------------------------------------------------- report
def test_report_tables_carry_hand_computed_means(tmp_path: Path) -> None:
    rows = _rows()
    summary = write_report(tmp_path, rows, ["hybrid", "hirec"], "Synthetic run")
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# Synthetic run")
    assert "| pipeline | n | doc_recall@5 | page_recall@5 | page_recall@10 | page_precision |" in text
    table = _table(text)
    assert table["hybrid"]["n"] == "4" and table["hirec"]["n"] == "4"
    assert table["hybrid"]["page_recall@5"] == "0.750"
    assert table["hirec"]["page_recall@5"] == "0.625"
    assert table["hybrid"]["page_precision"] == "0.375"
    assert table["hirec"]["page_precision"] == "0.750"
    assert table["hirec"]["accuracy_numeric"] == "0.500"  # q1 right, q2 wrong
    assert table["hirec"]["accuracy_model_judged"] == "1.000"  # q4 right; q3 could not be judged
    assert table["hybrid"]["accuracy_numeric"] == "–"  # retrieval only
    # the per-type cut: hybrid found 1 + 1 gold of 2 metrics questions, 0 + 1 of 2 domain questions
    assert "| metrics-generated | 1.000 / – (n=2) | 0.750 / 0.500 (n=2) |" in text
    assert "| domain-relevant | 0.500 / – (n=2) | 0.500 / 1.000 (n=2) |" in text

    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["summary"] == json.loads(json.dumps(summary))
    assert len(saved["rows"]) == 8
    accuracy = {s["pipeline"]: s.get("accuracy_all") for s in saved["summary"]}
    assert accuracy == {"hybrid": None, "hirec": pytest.approx(2 / 3)}


def test_report_repeats_the_table_without_questions_whose_filing_is_missing(tmp_path: Path) -> None:
    rows = _rows()
    write_report(tmp_path, rows, ["hybrid", "hirec"], "Synthetic run", missing={"q3": ["C"]})
    text = (tmp_path / "report.md").read_text()
    section = text.split("## Without the 1 questions whose gold filing is not in the library")[1]
    assert "Not in the library: C." in section
    table = _table(section)
    # q3 (recall 0 everywhere) left out: hybrid 1, 1, 1; hirec 1, 0.5, 1
    assert table["hybrid"]["n"] == "3" and table["hybrid"]["page_recall@5"] == "1.000"
    assert table["hirec"]["page_recall@5"] == "0.833"
    assert json.loads((tmp_path / "results.json").read_text())["gold_not_in_library"] == {"q3": ["C"]}
    write_report(tmp_path, rows, ["hybrid", "hirec"], "Synthetic run")
    assert "not in the library" not in (tmp_path / "report.md").read_text()


# ----------------------------------------------------------------------------------------------------- plots
def _assert_readable_png(path: Path) -> None:
    import matplotlib.image

    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, path
    assert len(data) > 5_000, f"{path.name} is only {len(data)} bytes"
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 300 and pixels.shape[1] > 400
    assert pixels[..., :3].var() > 0, f"{path.name} is blank"


def test_recall_curve_from_ranked_pages() -> None:
    from engine.eval.plots import recall_curve

    rows = _rows()
    # hybrid: at k=1 q1 has its page, q2 half of its two; q2 and q4 complete at k=3
    assert recall_curve(rows, "hybrid", GOLD) == pytest.approx([0.375, 0.375] + [0.75] * 8)
    assert recall_curve(rows, "hirec", GOLD, ks=(1, 5)) == pytest.approx([0.625, 0.625])
    # the curve at k=5 agrees with the recall the runner stored
    assert recall_curve(rows, "hybrid", GOLD, ks=(5,))[0] == pytest.approx(0.75)
    assert recall_curve(rows, "hybrid", {}) == []  # no gold pages: nothing to draw


def test_write_plots_draws_every_chart(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from engine.eval.plots import write_plots

    rows = _rows()
    write_report(tmp_path, rows, ["hybrid", "hirec"], "Synthetic run")
    paths = write_plots(tmp_path / "charts", rows, ["hybrid", "hirec"], gold=GOLD)
    assert [p.name for p in paths] == list(CHARTS)
    for path in paths:
        _assert_readable_png(path)
    assert not list((tmp_path / "charts").glob("*.tmp.png"))  # no leftovers of the atomic write


def test_write_plots_without_gold_or_answers(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from engine.eval.plots import write_plots

    open_before = plt.get_fignums()
    retrieval_only = [r for r in _rows() if r["pipeline"] == "hybrid"]
    paths = write_plots(tmp_path, retrieval_only, ["hybrid", "dense"])  # "dense" has no rows: skipped
    for path in paths:
        _assert_readable_png(path)
    assert plt.get_fignums() == open_before  # nothing left open in pyplot
    # no rows at all: each chart still comes out, saying there is nothing to show
    for path in write_plots(tmp_path / "empty", [], ["hybrid"]):
        assert path.read_bytes()[:8] == PNG_MAGIC


# --------------------------------------------------------------------------------------------------- compare
def _write_run(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir()
    with (folder / "results.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
        fh.write('{"qid": "torn", "pipel')  # an interrupted run leaves a torn last line
    return folder


def _listed(markdown: str, pipeline: str, section: str) -> list[str]:
    """qids listed under ``### Fixed`` / ``### Broke`` of one pipeline's section."""
    part = markdown.split(f"## {pipeline}\n", 1)[1].split("\n## ", 1)[0]
    block = part.split(f"### {section}", 1)[1].split("###", 1)[0]
    return re.findall(r"^- `([^`]+)`", block, flags=re.MULTILINE)


LONG_QUESTION = "How did the quarterly gross margin of the widget segment change " * 3


def test_compare_runs_lists_fixed_and_broken_questions(tmp_path: Path) -> None:
    def ans(qid: str, correct: bool, recall5: float, **kw: object) -> dict:
        pages = [["A", 1]] if recall5 else [["X", 0]]
        return _row("hirec", qid, pages, recall5=recall5, precision=recall5, seconds=10.0, correct=correct,
                    judged_by="numeric", **kw)

    a = _write_run(tmp_path / "a", [
        ans("q1", False, 0.0, question=LONG_QUESTION),
        ans("q2", True, 0.5),
        ans("q3", True, 0.5),
        ans("q4", True, 0.0),
        ans("q5", True, 1.0),  # only in A
        _row("hybrid", "q1", [["A", 1]], recall5=1.0, precision=1.0, seconds=0.02),
    ])
    b = _write_run(tmp_path / "b", [
        ans("q1", True, 0.0, question=LONG_QUESTION),  # answer fixed
        ans("q2", True, 0.5),  # superseded by the line below: last wins
        ans("q3", True, 0.0),  # evidence lost
        ans("q4", True, 1.0),  # evidence found
        ans("q6", True, 1.0),  # only in B
        ans("q2", False, 0.5),  # answer broke
        _row("hybrid", "q1", [["A", 1]], recall5=1.0, precision=1.0, seconds=0.03),
        _row("dense", "q1", [["A", 1]], recall5=1.0, precision=1.0, seconds=0.02),  # pipeline only in B
    ])
    text = compare_runs(a, b)

    assert _listed(text, "hirec", "Fixed") == ["q1", "q4"]
    assert _listed(text, "hirec", "Broke") == ["q2", "q3"]
    assert "answer wrong → right" in text and "page recall@5 0.500 → 0" in text
    # on q1..q4: recall@5 A = (0 + .5 + .5 + 0) / 4 = 0.25, B = (0 + .5 + 0 + 1) / 4 = 0.375
    assert "| page_recall@5 | 0.250 | 0.375 | +0.125 | 4 |" in text
    # accuracy A = 3/4, B = 3/4: no change
    assert "| accuracy | 0.750 | 0.750 | 0 | 4 |" in text
    assert "- only in A: 1 (`q5`)" in text and "- only in B: 1 (`q6`)" in text
    assert "Pipelines only in B: dense" in text
    # hybrid is in both runs on one question, unchanged
    assert _listed(text, "hybrid", "Fixed") == [] and _listed(text, "hybrid", "Broke") == []
    # questions are cut to 100 characters
    q1_line = next(ln for ln in text.splitlines() if ln.startswith("- `q1`"))
    question = q1_line.split("): ", 1)[1]
    assert len(question) == 100 and question.endswith("…") and LONG_QUESTION.startswith(question[:-1])


def test_compare_runs_names_a_missing_results_file(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="results.jsonl"):
        compare_runs(tmp_path, tmp_path)


def test_compare_runs_sets_tolerant_accuracy_and_wrong_numbers_side_by_side(tmp_path: Path) -> None:
    """A number that went wrong is listed as broken even where the strict verdict stayed wrong; the table puts
    accuracy within 1 % and the share of wrong numbers beside strict accuracy."""
    def ans(qid: str, correct: bool, tolerant: bool, wrong: bool) -> dict:
        return _row("hirec", qid, [["A", 1]], recall5=1.0, precision=1.0, seconds=1.0, correct=correct,
                    judged_by="numeric") | {"correct_tolerant": tolerant, "number_given": True, "wrong_number": wrong}

    a = _write_run(tmp_path / "a", [ans("q1", False, True, False), ans("q2", False, False, True)])
    b = _write_run(tmp_path / "b", [ans("q1", False, False, True), ans("q2", False, False, False)])
    text = compare_runs(a, b)
    assert _listed(text, "hirec", "Broke") == ["q1"] and "a wrong number given" in text
    assert _listed(text, "hirec", "Fixed") == ["q2"] and "no wrong number given" in text
    assert "| accuracy | 0.000 | 0.000 | 0 | 2 |" in text
    assert "| accuracy within 1 % | 0.500 | 0.000 | -0.500 | 2 |" in text
    assert "| wrong-number rate | 0.500 | 0.500 | 0 | 2 |" in text
