"""Deterministic query intent: what a question asks for, worked out before retrieval.

Rule-based and stdlib-only (the FinCards-style intent: entities, metrics, periods, numeric flag,
relation, keywords), so the same question always yields the same intent and the audit trace can show it.
One module per concept: :mod:`.lexicon` (metrics and their line items), :mod:`.periods`, :mod:`.issuers`,
:mod:`.forms`, :mod:`.units`, :mod:`.shape` (numeric, comparison, calculation) and :mod:`.lexical` (BM25
keywords); each keeps the decisions worth knowing about its rules in its own docstring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.intent.forms import form_hints
from engine.intent.issuers import issuer_spans, match_issuers
from engine.intent.keywords import lexical_query, lexical_terms, question_keywords
from engine.intent.periods import asked_date, asked_periods, looks_ahead, period_labels
from engine.intent.shape import (
    asked_if_any,
    core_question,
    is_comparison,
    is_numeric,
    is_yes_no,
    needs_calculation,
    revision_asked,
    which_way,
)
from engine.intent.topics import entities_in, relation_of, statements_in, temporal_scope, topic_of
from engine.intent.units import (
    asked_dimension,
    asks_margin,
    asks_one_figure,
    asks_percentage,
    asks_share,
    stated_decimals,
    stated_units,
    unit_hint,
)
from engine.intent.wordlists import item_words
from engine.records import IssuerRef, QueryIntent
from engine.vocab.lexicon import find_metrics, line_item_metrics, metric_named_by, metric_spans
from engine.vocab.sections import vocab as section_vocab

__all__ = [
    "IssuerRef",
    "QueryIntent",
    "find_metrics",
    "lexical_query",
    "lexical_terms",
    "line_item_metrics",
    "metric_named_by",
    "metric_spans",
    "parse_intent",
    "period_labels",
]


def parse_intent(
    question: str, issuers: Sequence[IssuerRef] = (), *, today_year: int | None = None
) -> QueryIntent:
    """Map a question to its intent; pure and deterministic (well under a millisecond).

    Args:
        question: The analyst's question, instructions included (scaffolding is ignored where it matters).
        issuers: Companies known to the library; matched by name, alias or uppercase ticker.
        today_year: Resolves "last year"/"this year" when no year is stated; also caps plausible years.

    Returns:
        The QueryIntent; ``period_labels(intent)`` gives the labels to match against filings.
    """
    text = " ".join(question.split())
    core = core_question(text)
    keys, n_companies = match_issuers(text, issuers)
    periods = asked_periods(text, today_year)
    metrics = find_metrics(text)
    units, decimals = stated_units(text), stated_decimals(text)
    numeric = is_numeric(core, bool(units) or decimals is not None)
    comparison = is_comparison(core, n_companies, len(periods.annual) + len(periods.quarters))
    hint = unit_hint(units, core, metrics, numeric)
    as_of = asked_date(text)
    topic = topic_of(core, metrics)
    offered = which_way(core)
    asked = core[:offered.start()] + " " + core[offered.end():] if offered else core
    return QueryIntent(
        question=question, issuers=keys, forms=form_hints(text, periods.stated_quarters),
        fiscal_years=periods.fiscal_years, quarters=periods.quarters, metrics=metrics, numeric=numeric,
        comparison=comparison,
        needs_calculation=needs_calculation(core, text, metrics),
        unit_hint=hint, decimals=decimals,
        keywords=question_keywords(_without_companies(section_vocab().without_place_words(text), text, issuers)),
        annual_years=periods.annual,
        topic=topic, relation=relation_of(core, comparison),
        temporal=temporal_scope(text, periods.annual, periods.quarters, periods.quarter_run, periods.year_run,
                                periods.since),
        entities=entities_in(core),
        statements=statements_in(text),
        dimension=asked_dimension(text, hint), one_figure=asks_one_figure(text, hint),
        as_percentage=asks_percentage(text), share=asks_share(text), margin=asks_margin(text),
        as_of=None if as_of is None else as_of.isoformat(), item_words=tuple(sorted(item_words(text))),
        ytd_months=periods.ytd_months, quarter_run=periods.quarter_run, year_run=periods.year_run,
        since=periods.since, report_year=periods.report_year, yes_no=is_yes_no(core),
        sections=section_vocab().kinds_asked(topic, core),
        about=_without_companies(section_vocab().without_place_words(asked), text, issuers),
        offered=offered.group(0) if offered else "",
        looks_ahead=looks_ahead(text),
        revised=revision_asked(text),
        any_of=asked_if_any(text),
    )


def _without_companies(about: str, text: str, issuers: Sequence[IssuerRef]) -> str:
    """``about`` without the names of the library's companies the question says ("JnJ", "Boeing's"): they say whose
    filings to read, and a contact line's "www.jnj.com" shares nothing else with what is asked. So of the keywords:
    inside the company's own filings "Best Buy" is printed on every page, and, rare in the library, it outweighed
    the one word asked ("employees") in BM25."""
    for start, end, _ in issuer_spans(text, issuers):
        about = re.sub(rf"(?<!\w){re.escape(text[start:end])}(?:['’]s?)?(?!\w)", " ", about, flags=re.IGNORECASE)
    return " ".join(about.split())

