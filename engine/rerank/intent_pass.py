"""The optional model pass over a question's intent (FinCards §3.3, Fig. 4): the chat model reads the question and
proposes the intent's fields under a JSON schema; the proposal is checked deterministically and may only fill
what the rules left open. It shapes the card ranking alone (the :class:`Demand` and Stage 1's query), never the
answer path, which keeps the rules' intent.

What a proposal may change, and the check on each field:
- **metrics**: each phrase must name a metric of the lexicon (:func:`find_metrics`), else it is dropped; a known
  metric the question does not name is taken (this is what the pass is for: "is the company capital-intensive"
  asks for capital expenditures without saying so).
- **entities**: taken only when the question prints them (a segment or region the model imagined is dropped).
- **topic**: taken only when the rules found none ("Other"); **relation**: only over the rules' default, a lookup.
- **keywords**: search words for Stage 1's BM25 query, the question's own and the terms a filing would use for
  them ("legal battles" → "litigation"): at most four words each, letters and digits only.
- **periods**: the rules read every printed year; a year the question does not print is dropped, and "latest" is
  taken when the rules found no period.
- **numeric evidence**: the rules' flag stays; a disagreement is recorded.

Every taken value is marked "(model)" in the intent the trace shows; every dropped one is named with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from engine.intent.topics import RELATIONS, TOPICS
from engine.models.base import ChatMessage, ChatModel
from engine.prompts import prompt
from engine.records import LlmCall
from engine.rerank.matching import Demand
from engine.settings import PromptSettings
from engine.vocab.lexicon import find_metrics

_KEYWORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9&'.-]*(?: [A-Za-z0-9&'.-]+){0,3}$")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")  # "FY1999" too
_LATEST = re.compile(r"\b(?:latest|most recent|current)\b", re.IGNORECASE)


def intent_schema() -> dict[str, Any]:
    def strings(n: int, chars: int) -> dict[str, Any]:
        return {"type": "array", "maxItems": n, "items": {"type": "string", "maxLength": chars}}

    return {"type": "object", "properties": {
        "topic": {"type": "string", "enum": list(TOPICS)},
        "entities": strings(4, 60),
        "metrics": strings(6, 60),
        "temporal_scope": strings(3, 30),
        "requires_numeric_evidence": {"type": "boolean"},
        "relation": {"type": "string", "enum": list(RELATIONS)},
        "keywords": strings(8, 40)},
        "required": ["topic", "entities", "metrics", "temporal_scope", "requires_numeric_evidence", "relation",
                     "keywords"],
        "additionalProperties": False}


@dataclass(frozen=True)
class IntentPass:
    """What the model proposed and what became of it."""

    demand: Demand  # the rules' demand with the taken values
    keywords: tuple[str, ...] = ()  # Stage 1's extra search words
    taken: tuple[str, ...] = ()  # "metric: capital expenditures", "keyword: litigation" …
    dropped: tuple[str, ...] = ()  # "entity: 'Apple' is not in the question" …
    failed: str = ""  # the call's error when the model gave nothing usable

    def lines(self) -> tuple[str, ...]:
        """The pass as the trace lists it."""
        if self.failed:
            return (f"model intent pass failed ({self.failed}): the rules' intent alone",)
        return (*(f"model added {t}" for t in self.taken), *(f"model proposal dropped: {d}" for d in self.dropped))


def _printed(value: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(value.strip().lower()) + r"(?!\w)", text.lower()) is not None


def check_intent(demand: Demand, question: str, data: dict[str, Any]) -> IntentPass:
    """Merge a model's intent proposal into the rules' demand: only what the rules left open, each value checked
    (see the module docstring)."""
    taken: list[str] = []
    dropped: list[str] = []
    changes: dict[str, Any] = {}

    metrics = list(demand.metrics)
    for phrase in data.get("metrics", []):
        known = find_metrics(str(phrase))
        if not known:
            dropped.append(f"metric: {phrase!r} is not a metric the lexicon knows")
        for m in known:
            if m not in metrics:
                metrics.append(m)
                taken.append(f"metric: {m}")
    if len(metrics) > len(demand.metrics):
        new = tuple(metrics[len(demand.metrics):])
        changes["metrics"] = tuple(metrics)
        changes["items"] = tuple(dict.fromkeys((*demand.items, *new)))

    entities = list(demand.entities)
    for e in data.get("entities", []):
        e = " ".join(str(e).split())
        if not e:
            continue
        if not _printed(e, question):
            dropped.append(f"entity: {e!r} is not in the question")
        elif not any(e.lower() in x.lower() or x.lower() in e.lower() for x in entities):  # "Consumer segment"
            entities.append(e)
            taken.append(f"entity: {e}")
    if len(entities) > len(demand.entities):
        changes["entities"] = tuple(entities)

    topic = str(data.get("topic", "Other"))
    if demand.topic == "Other" and topic in TOPICS and topic != "Other":
        changes["topic"] = topic
        taken.append(f"topic: {topic}")
    relation = str(data.get("relation", "lookup"))
    if demand.relation == "lookup" and relation in RELATIONS and relation != "lookup":
        changes["relation"] = relation
        taken.append(f"relation: {relation}")

    for period in data.get("temporal_scope", []):
        for y in _YEAR.findall(str(period)):
            if y not in question:
                dropped.append(f"period: {y} is not in the question")
        if _LATEST.search(str(period)) and not demand.years and not demand.latest:
            changes["latest"] = True
            taken.append("period: the latest reported")

    numeric = data.get("requires_numeric_evidence")
    if isinstance(numeric, bool) and numeric != demand.numeric:
        dropped.append(f"numeric evidence {'required' if numeric else 'not required'}: the rules' flag kept")

    keywords: list[str] = []
    for k in data.get("keywords", []):
        k = " ".join(str(k).split())
        if not _KEYWORD.match(k):
            dropped.append(f"keyword: {k!r} is not a search term")
        elif k.lower() not in {x.lower() for x in keywords}:
            keywords.append(k)
    new_words = [k for k in keywords if not _printed(k, question)]
    taken += [f"keyword: {k}" for k in new_words]
    return IntentPass(replace(demand, **changes, model=tuple(taken)), tuple(keywords), tuple(taken), tuple(dropped))


def model_intent(demand: Demand, question: str, chat: ChatModel, prompts: PromptSettings,
                 cancel: Callable[[], bool] | None = None) -> tuple[IntentPass, LlmCall]:
    """One schema-checked call (the adapter retries); an unusable answer leaves the rules' demand and says so."""
    from engine.trace import call_llm

    messages: list[ChatMessage] = [
        {"role": "system", "content": prompt("intent", prompts)},
        {"role": "user", "content": f"Question: {question}\nThe rules read: {'; '.join(demand.fields())}"}]
    res, call = call_llm(chat, "query intent", messages, intent_schema(), 220, cancel)
    if res is None:
        return IntentPass(demand, failed=call.error or "no answer"), call
    return check_intent(demand, question, res.data), call
