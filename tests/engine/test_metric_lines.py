"""Catalogue metrics computed from the statement facts for a textual question: the values against the demo
generator's truth, the year before the asked one included, a company without the inputs left out; through the real
pipeline with a scripted model, the written answer's prompt lists them and a figure equal to one of them counts as
grounded (computed by the engine, not by the model)."""

from __future__ import annotations

import re

import pytest

from engine.answer.metric_lines import computed_metrics, render_metric_lines
from engine.intent import parse_intent
from engine.pipeline import Models, build_pipeline, issuer_refs
from engine.vocab.catalogue import load_catalogue
from tests.engine.scripted import ScriptedChat
from tests.engine.test_from_facts import truth

# a written question about a catalogue metric (a judgement of it, "does it have an improving operating margin", is
# computed from the facts instead: test_from_facts)
QUESTION = "What drove the change in Harborview Therapeutics' operating margin in FY2023?"


def _margin(demo_truth, year: int) -> float:  # noqa: ANN001
    return truth(demo_truth, "HRBR", "Operating income", year) / truth(demo_truth, "HRBR", "Total revenue", year) * 100


def test_the_named_metric_is_computed_for_the_asked_year_and_the_one_before(ingested_demo, demo_truth) -> None:  # noqa: ANN001
    library, _, _ = ingested_demo
    intent = parse_intent(QUESTION, issuer_refs(library))
    assert not intent.numeric
    lines = computed_metrics(library, intent, load_catalogue())
    assert [(m.period, m.unit) for m in lines] == [("FY2022", "percent"), ("FY2023", "percent"),
                                                   ("FY2022 → FY2023", "percentage points")]
    change = lines[2]  # the direction is stated, so the answer need not compare the two years itself
    delta = _margin(demo_truth, 2023) - _margin(demo_truth, 2022)
    assert change.value == pytest.approx(delta) and change.inputs == ("M2 − M1",)
    assert change.text == f"{delta:+,.2f} percentage points ({'an increase' if delta > 0 else 'a decrease'})"
    for m in lines[:2]:
        year = int(m.period[2:])
        assert m.value == pytest.approx(_margin(demo_truth, year)) and m.text == f"{_margin(demo_truth, year):.2f}%"
        assert len(m.inputs) == 2 and all(re.search(r"HRBR_20\d\d_10K p\. \d+", i) for i in m.inputs)
    block = render_metric_lines(lines)
    assert block.startswith("Metrics the engine computed from the statement facts") and "\nM3 " in block
    # a question naming no catalogue metric, or a quarter, gets none
    assert computed_metrics(library, parse_intent("What risks does Harborview Therapeutics face in FY2023?",
                                                  issuer_refs(library)), load_catalogue()) == ()


def test_the_written_answer_reads_them_and_their_values_count_as_grounded(ingested_demo, demo_truth, embedder) -> None:  # noqa: ANN001
    library, settings, _ = ingested_demo
    said = f"{_margin(demo_truth, 2023):.1f}"
    prompts: list[str] = []

    def script(purpose, messages, n):  # noqa: ANN001
        assert purpose == "quotes"
        prompts.append(messages[-1]["content"])
        return {"sentences": [{"text": f"The margin moved to {said}%.", "quotes": [1]},
                                                {"text": "It was also 12.3456 in one market.", "quotes": [1]}],
                "insufficient": False}

    run = build_pipeline(settings, library, Models(embedder, ScriptedChat(script))).run(QUESTION, store=False)
    assert run.status == "answered" and run.answer.method == "quotes"
    assert "Metrics the engine computed from the statement facts" in prompts[-1]
    assert f"| FY2023 | {_margin(demo_truth, 2023):.2f}%" in prompts[-1]
    rows = {g.variable: g for g in run.answer.grounding}
    assert rows[f"stated {said}"].verified and rows[f"stated {said}"].label.startswith("computed by the engine")
    # any other figure is still the model's: the sentence stating it is refused, and the answer says so
    assert "12.3456" not in run.answer.text and "it states 12.3456" in run.answer.reason
    assert run.answer.text.startswith("The margin moved to")
