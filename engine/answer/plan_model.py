"""The model reads only what the grammar could not: a numeric question whose metric has words the question reader
(:mod:`engine.intent.reader`) could not place is given to the local model, which proposes the metric as a formula
over the catalogue's line items and metrics — the catalogue's own formula language, enforced at decoding by the
schema's pattern, so it can name nothing else and write no figure. The engine then checks the proposal before
anything is computed: every name a line item or metric of the catalogue, every constant one of
:data:`CONSTANTS`, a unit by dimensional analysis that the question can be answered in, and every word the reader
could not place among the words the model says its formula explains (words of the question: the schema's enum).
A plan that passes is the question's plan, marked ``reader="model"`` in the trace; one that fails leaves the
question unread, and the answer says why the model's plan was rejected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from string import Template
from typing import Any

from engine.intent.reader import (
    finish_plan,
    is_relation,
    item_names,
    metric_node,
    tree_of_formula,
    unread_words,
)
from engine.models.base import ChatMessage, ChatModel
from engine.prompts import prompt
from engine.records import LlmCall, MetricPlan, PlanNode, QueryIntent
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm
from engine.vocab.catalogue import REFERENCE, Catalogue

__all__ = ["CONSTANTS", "PlanRejected", "check_plan", "plan_schema", "propose_plan"]

CONSTANTS = frozenset({1.0, 2.0, 100.0, 365.0})  # a percentage, days in a year, an average of two, "1 −"
_FORMULA_MAX = 240
PLAN_TOKENS = 160  # a formula of _FORMULA_MAX characters and its words fit; a model that loops stops here


class PlanRejected(ValueError):
    """The model's formula is not a plan the engine can compute for this question."""


def plan_schema(catalogue: Catalogue, unread: MetricPlan) -> dict[str, Any]:
    """The JSON the model writes; its formula pattern admits only catalogue names, operators and the constants."""
    names = sorted(catalogue.items, key=len, reverse=True)
    # (escaped by hand: llama.cpp's grammar takes no "\ ", which re.escape writes for a space)
    metrics = sorted((re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", "{" + m + "}") for m in catalogue.metrics),
                     key=len, reverse=True)
    constants = sorted((f"{c:g}" for c in CONSTANTS), key=len, reverse=True)
    token = "|".join([*metrics, *names, r"avg\(", r"prior\(", *constants, r"[()+*/ -]"])
    words = unread_words(unread)
    return {
        "type": "object",
        "properties": {  # the formula first: the model commits to a reading before it judges it
            "formula": {"type": "string", "maxLength": _FORMULA_MAX, "pattern": f"^({token})+$"},
            "explains": {"type": "array", "items": {"type": "string", "enum": words or [""]},
                         "maxItems": max(len(words), 1)},
            "computes_the_question": {"type": "boolean"},
        },
        "required": ["formula", "explains", "computes_the_question"],
        "additionalProperties": False,
    }


def _messages(intent: QueryIntent, plan: MetricPlan, catalogue: Catalogue,
              prompts: PromptSettings | None) -> list[ChatMessage]:
    items = "\n".join(f"- {name}: {item.words}" for name, item in catalogue.items.items())
    metrics = "\n".join(f"- {{{name}}}: {m.words}" for name, m in catalogue.metrics.items())
    system = Template(prompt("plan", prompts)).safe_substitute(items=items, metrics=metrics)
    read = f"\nRead: {'; '.join(plan.read)}" if plan.read else ""
    user = (f"Question: {' '.join(intent.question.split())}\nNot read: {', '.join(plan.unread)}{read}")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def check_plan(data: dict[str, Any], intent: QueryIntent, unread: MetricPlan, catalogue: Catalogue) -> MetricPlan:
    """The model's proposal as a complete plan, or :class:`PlanRejected` saying what is wrong with it."""
    if not data.get("computes_the_question", False):
        raise PlanRejected("the model says its formula does not compute what is asked")
    formula = str(data.get("formula", "")).strip()
    if not formula:
        raise PlanRejected("the model wrote no formula")
    missing = set(unread_words(unread)) - set(data.get("explains", ()))
    if missing:
        raise PlanRejected(f"the model's formula leaves {', '.join(sorted(missing))} unexplained")
    for name in REFERENCE.findall(formula):
        if name.strip() not in catalogue.metrics:
            raise PlanRejected(f"{{{name}}} is no metric of the catalogue")
    try:
        tree = tree_of_formula(formula, catalogue)
    except (SyntaxError, ValueError) as exc:
        raise PlanRejected(f"the formula {formula!r} is not arithmetic over the catalogue: {exc}") from exc
    _check_leaves(tree, catalogue)
    _check_words(set(data.get("explains", ())), tree, catalogue)
    for metric in unread.named:  # what the grammar read stays in the plan ("days of sales" keeps revenue)
        if not item_names(metric_node(metric, catalogue, {})) & item_names(tree):
            raise PlanRejected(f"the formula drops {metric}, which the question names")
    planned = finish_plan(tree, intent, catalogue, " ".join(unread.unread), read=unread.read,
                          definitions=unread.definitions, reader="model", note=f"read by the model: {formula}")
    if planned.status != "complete":
        raise PlanRejected(f"the formula {formula!r}: {planned.note}")
    return planned


def _check_leaves(node: PlanNode, catalogue: Catalogue) -> None:
    if node.kind == "item" and node.name not in catalogue.items:
        raise PlanRejected(f"{node.name!r} is no line item of the catalogue")
    if node.kind == "number" and node.value not in CONSTANTS:
        raise PlanRejected(f"{node.value:g} is a figure, not one of the constants a formula may hold")
    if node.kind == "metric":
        return  # the catalogue's own formulas
    for arg in node.args:
        _check_leaves(arg, catalogue)


_FUNCTION_WORDS = frozenset({"of", "and", "the", "to", "from", "in", "on", "at", "by", "for", "per", "a", "an", "as",
                             "total", "net"})


def _vocabulary(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower().replace("_", " ")) if w not in _FUNCTION_WORDS}


def _used_words(node: PlanNode, catalogue: Catalogue) -> set[str]:
    """The words of the line items a plan uses, inside its metrics too (their names and how filings print them)."""
    words: set[str] = set()
    if node.kind == "item" and node.name in catalogue.items:
        item = catalogue.items[node.name]
        words |= _vocabulary(f"{item.name} {item.words}")
    for arg in node.args:
        words |= _used_words(arg, catalogue)
    return words


def _check_words(explained: set[str], tree: PlanNode, catalogue: Catalogue) -> None:
    """Each word the model says its formula explains is a word of a line item the formula uses ("operating",
    "cash": the model cannot read "operating cash return" as net income over assets), or a relation between
    amounts (``resources/reader/relations.txt``: "intensity", "cushion", "share"). A word naming something the
    statements do not count ("customer", "churn") is neither: the formula cannot be what the question asks."""
    vocabulary = set().union(*(_vocabulary(f"{i.name} {i.words}") for i in catalogue.items.values()))
    used = _used_words(tree, catalogue)
    words = {w.lower() for w in explained}
    unused = sorted(w for w in words & vocabulary if w not in used)
    if unused:
        raise PlanRejected(f"the formula uses no line item for {', '.join(repr(w) for w in unused)}")
    unknown = sorted(w for w in words - vocabulary - _FUNCTION_WORDS if not is_relation(w))
    if unknown:
        raise PlanRejected(f"{', '.join(repr(w) for w in unknown)} names no line item and no relation between "
                           "amounts")


def propose_plan(intent: QueryIntent, unread: MetricPlan, catalogue: Catalogue, chat: ChatModel,
                 settings: AnswerSettings, prompts: PromptSettings | None = None,
                 cancel: Callable[[], bool] | None = None) -> tuple[MetricPlan, LlmCall]:
    """The plan the model proposes for an unread metric, checked; else the unread plan with why it was rejected."""
    res, call = call_llm(chat, "plan (the words the grammar could not read)",
                         _messages(intent, unread, catalogue, prompts), plan_schema(catalogue, unread),
                         min(settings.max_tokens, PLAN_TOKENS), cancel)
    if res is None:
        return replace(unread, note="; ".join(x for x in (unread.note, f"the plan model failed: {call.error}")
                                              if x)), call
    try:
        return check_plan(res.data, intent, unread, catalogue), call
    except PlanRejected as exc:
        return replace(unread, note="; ".join(x for x in (unread.note, f"the model's plan was rejected: {exc}")
                                              if x)), call
