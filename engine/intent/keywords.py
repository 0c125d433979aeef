"""Lexical (BM25) expansion: the question's keywords and the statement line items of its metrics."""

from __future__ import annotations

import re

from engine.intent.periods import with_fiscal_years
from engine.records import QueryIntent
from engine.vocab.lexicon import _LINE_ITEMS

# English function words, then the scaffolding any question's instructions carry: answering and
# instruction verbs, rounding, units and scale. The wording one benchmark's template adds ("relying on the
# details shown in", "assume you are a public equities analyst") is deliberately absent: in other questions
# those words are content ("credit agreement", "segment information", "Item 1A", "rate base").
_STOP = frozenset({
    # English function words
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "as", "into",
    "over", "under", "between", "during", "within", "without", "and", "or", "but", "nor", "if", "then",
    "than", "that", "this", "these", "those", "there", "their", "its", "it", "is", "are", "was", "were", "be",
    "been", "being", "do", "does", "did", "has", "have", "had", "having", "can", "could", "will", "would",
    "should", "may", "might", "must", "shall", "what", "which", "who", "whom", "whose", "when", "where",
    "why", "how", "any", "all", "each", "some", "such", "other", "more", "most", "much", "many", "very",
    "also", "only", "just", "per", "via", "vs", "versus", "i", "we", "you", "they", "he", "she", "us", "our",
    "your", "my", "me", "them", "his", "her", "so", "not", "no", "yes", "up", "down", "out", "off", "again",
    "further", "once", "here", "s", "com",
    # answering and instruction verbs
    "answer", "answers", "question", "questions", "response", "respond", "responding", "please", "help",
    "need", "want", "following", "according", "using", "use", "used", "based", "give", "provide", "state",
    "explain", "calculate", "compute", "extract", "reported", "report",
    # rounding, units and scale
    "round", "rounded", "decimal", "decimals", "place", "places", "unit", "units", "usd", "million",
    "millions", "billion", "billions", "thousand", "thousands", "percent", "percents",
})
_TOKEN = re.compile(r"\d+-[kq](?=s?\b)|[a-z0-9]+(?:&[a-z0-9]+)*")


def question_keywords(text: str) -> tuple[str, ...]:
    """Up to 32 distinct content words of ``text``, lowercased, with "FY22" read as "2022"."""
    low = with_fiscal_years(text.lower())
    words = _TOKEN.findall(re.sub(r"(?<=\w)['’]s\b", "", low))
    return tuple(dict.fromkeys(w for w in words if w not in _STOP and (len(w) > 1 or w.isdigit())))[:32]


def lexical_terms(intent: QueryIntent) -> str:
    """Extra words for lexical retrieval: each asked metric's statement line items."""
    return " ".join(_LINE_ITEMS.get(m, m) for m in intent.metrics)


def lexical_query(intent: QueryIntent, fallback: str) -> str:
    """The BM25 query of the passage stage: the question's keywords plus its metrics' line items."""
    return " ".join([*intent.keywords, lexical_terms(intent)]) or fallback
