"""Evidence cards: numbers and periods copied from the text, the model's proposals checked against it, cards of
statement tables read from the facts, the cache in the library, and the FinCards intent fields."""

from __future__ import annotations

from engine.intent import parse_intent
from engine.intent.topics import relation_of, statements_in, temporal_scope, topic_of
from engine.records import Chunk
from engine.rerank.cards import (
    CARD_RULES,
    CardMaker,
    rule_card,
    text_periods,
    validate_model_card,
    verbatim_numbers,
)
from engine.rerank.matching import Demand, compact_line, coverage, matched_fields, period_match


def _chunk(text: str, kind: str = "text", cid: int = 1) -> Chunk:
    return Chunk(cid, 1, "X_2023_10K", 0, 0, len(text), kind, text)


def test_numbers_are_copied_verbatim_and_years_are_not_numbers() -> None:
    text = "Revenue was $1,234.5 million in 2023, up 12.5% from $1,097 million; we had 12 plants and 2,500 staff."
    got = [n for n, _, _ in verbatim_numbers(text)]
    assert got == ["$1,234.5 million", "12.5%", "$1,097 million", "2,500"]
    assert all(text[a:b] == n for n, a, b in verbatim_numbers(text))


def test_periods_are_normalised_fiscal_calendar_and_dates() -> None:
    text = "For fiscal 2023 and FY22, as of December 31, 2023 compared with 2021."
    assert [p for p, _, _ in text_periods(text)] == ["FY2023", "FY2022", "2023-12", "2021"]
    assert temporal_scope("What was revenue in the latest quarter?", [], []) == ("latest quarter",)
    assert temporal_scope("in the most recent fiscal year", [], []) == ("latest year",)
    assert temporal_scope("revenue FY2022", [2022], []) == ("FY2022",)
    assert temporal_scope("Q2 2023", [], ["2023Q2"]) == ("2023Q2",)


def test_intent_fields_topic_relation_statements() -> None:
    assert relation_of("Why did gross margin decline in 2022?") == "explanation"  # a why before a trend word
    assert relation_of("How did revenue change from 2021 to 2022?") == "trend"
    assert relation_of("How does the company recognize revenue?") == "policy"
    assert relation_of("What was revenue?", comparison=True) == "comparison"
    assert topic_of("Has the company reported any material legal battles?") == "Legal"
    assert topic_of("", ["gross margin"]) == "Profitability"
    assert statements_in("using the statement of financial position and the cash flow statement") == (
        "balance sheet", "cash flows")
    it = parse_intent("What drove Europe segment revenue growth in FY2022, per the income statement?")
    assert (it.topic, it.relation, it.temporal, it.statements) == ("Revenue", "explanation", ("FY2022",),
                                                                  ("income statement",))
    assert "Europe" in it.entities


def test_a_model_proposal_keeps_only_what_the_text_prints() -> None:
    text = "Net sales in Europe grew to $4.2 billion in fiscal 2023, driven by pricing."
    base = rule_card(_chunk(text))
    card = validate_model_card(base, {
        "topic": "Revenue", "claim_role": "primary_evidence", "evidence_type": "narrative_numeric", "scope": "geography",
        "basis": "GAAP", "summary": "Net sales in Europe grew in fiscal 2023 driven by pricing",
        "entities": ["Europe", "Asia Pacific"], "metrics": ["net sales", "EBITDA"], "numbers": ["$4.2 billion", "$9.9 billion"],
        "period": "fiscal 2023"}, text)
    assert "Asia Pacific" not in card.entities and "$9.9 billion" not in card.numbers
    assert "$4.2 billion" in card.numbers and "FY2023" in card.periods and "revenue" in card.metrics
    assert set(card.dropped) == {"entities: 'Asia Pacific' is not in the text", "numbers: '$9.9 billion' is not in the text",
                                 "metrics: 'EBITDA' is not named in the text"}
    assert card.source == "model" and card.scope == "geography"
    # every span is an exact substring of the chunk
    assert all(text[s.start:s.end].lower() == s.value.lower() for s in card.spans)
    invented = validate_model_card(base, {**{k: getattr(base, k) for k in ("topic", "scope", "basis")},
                                          "claim_role": "caveat", "evidence_type": "guidance",
                                          "summary": "Quarterly dividends tripled after the merger closed",
                                          "entities": [], "metrics": [], "numbers": [], "period": ""}, text)
    assert invented.summary == base.summary and "summary: most of its words are not the text's" in invented.dropped


def test_rules_recognise_boilerplate_headings_and_contents() -> None:
    fwd = rule_card(_chunk("This report contains forward-looking statements within the meaning of the Private "
                           "Securities Litigation Reform Act of 1995 that involve risks and uncertainties."))
    assert fwd.claim_role == "boilerplate" and fwd.boilerplate
    toc = rule_card(_chunk("Item 1. Business 3\nItem 1A. Risk Factors 9\nItem 7. Management's Discussion 30\n"
                           "Item 8. Financial Statements 50\n"))
    assert toc.claim_role == "structural_heading"
    # a running "Table of Contents" header does not make a page's text boilerplate
    legal = rule_card(_chunk("Table of Contents\nWe are subject to legal proceedings, claims and investigations; "
                             "the outcome of any such legal proceeding is not expected to have a material effect."))
    assert not legal.boilerplate


def test_table_cards_come_from_facts_and_are_kept_in_the_library(library_copy) -> None:
    library, _ = library_copy
    filing = next(f for f in library.filings() if f.identity.form == "10-K")
    chunks = library.chunks_of_filings([filing.id])
    maker = CardMaker(library)
    first = maker.cards(chunks, {})
    assert first.made == len(chunks) and set(first.cards) == {c.id for c in chunks}
    tables = [c for c in first.cards.values() if c.source == "facts"]
    assert tables, "the demo 10-K's statements give table cards"
    income = next(c for c in tables if c.statement == "income statement")
    assert income.evidence_type == "table_numeric" and "revenue" in income.metrics
    assert f"FY{filing.identity.fiscal_year}" in income.periods
    text = {c.id: c.indexed_text for c in chunks}
    assert all(text[c.chunk_id][s.start:s.end] == s.value for c in tables for s in c.spans if s.field == "numbers")
    # read back, not made again; a card of older rules is made again
    again = CardMaker(library).cards(chunks, {})
    assert again.made == 0 and again.cards == first.cards
    library.conn.execute("UPDATE cards SET version = 'cards-0/x/rules' WHERE chunk_id = ?", (chunks[0].id,))
    assert CardMaker(library).cards(chunks, {}).made == 1
    assert {r[0].split("/")[0] for r in library.conn.execute("SELECT version FROM cards")} == {CARD_RULES}
    # removing the filing's chunks removes their cards (foreign key)
    library.conn.execute("DELETE FROM chunks WHERE filing_id = ?", (filing.id,))
    assert library.conn.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == 0


def test_matching_names_the_fields_an_intent_finds(library_copy) -> None:
    from engine.vocab.catalogue import load_catalogue

    library, _ = library_copy
    filing = next(f for f in library.filings() if f.identity.form == "10-K")
    cards = CardMaker(library).cards(library.chunks_of_filings([filing.id]), {}).cards
    income = next(c for c in cards.values() if c.statement == "income statement")
    fy = filing.identity.fiscal_year
    demand = Demand.of(parse_intent(f"What was the operating margin in FY{fy}?"), load_catalogue())
    assert demand.items == ("operating income", "revenue") and demand.statements == ("income statement",)
    assert period_match(income, demand, fy) and coverage(income, demand) == 1.0
    fields = matched_fields(income, demand, fy)
    assert "metric: revenue" in fields and "statement: income statement" in fields
    line = compact_line(3, income)  # about thirty tokens: statement, kind, periods, metrics, its rows
    assert line.startswith("[3] Income statement | table | ") and len(line) <= 100 and f"FY{fy}" in line
    assert "revenue" in line and income.phrases and income.phrases[0] in line
    assert not any(n.strip("()$") in line for n in income.numbers if any(ch.isdigit() for ch in n) and len(n) > 4)
    assert line.endswith(income.phrases[0]) or "; " in line, "whole phrases, never a cut one after the first"


def test_an_interim_period_does_not_match_a_whole_fiscal_year() -> None:
    """A question about fiscal 2023 matches a card of FY2023 or a 2023 year-end balance, not one whose periods are
    2023's quarters; a question about a quarter matches the quarter."""
    from dataclasses import replace

    base = rule_card(_chunk("Revenue  1,200  1,100"))
    annual = Demand.of(parse_intent("What was revenue in fiscal 2023?"))
    quarter = Demand.of(parse_intent("What was revenue in Q3 2023?"))
    assert annual.annual and not quarter.annual
    q3 = replace(base, periods=("3M to 2023-09-30", "3M to 2022-09-30"))
    fy = replace(base, periods=("FY2023", "FY2022"))
    year_end = replace(base, periods=("as of 2023-12-31",))
    assert not period_match(q3, annual, 2023) and period_match(fy, annual, 2023) and period_match(year_end, annual, 2023)
    assert period_match(q3, quarter, 2023)
    assert not period_match(replace(base, periods=()), annual, 2023)  # a card that prints no period names none
