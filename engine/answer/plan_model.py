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

from engine.answer.catalogue import REFERENCE, Catalogue
from engine.intent.reader import finish_plan, tree_of_formula
from engine.models.base import ChatMessage, ChatModel
from engine.prompts import prompt
from engine.records import LlmCall, MetricPlan, PlanNode, QueryIntent
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm

__all__ = ["CONSTANTS", "PlanRejected", "check_plan", "plan_schema", "propose_plan"]

CONSTANTS = frozenset({1.0, 2.0, 100.0, 365.0})  # a percentage, days in a year, an average of two, "1 −"
_FORMULA_MAX = 240


class PlanRejected(ValueError):
    """The model's formula is not a plan the engine can compute for this question."""


def _words(unread: tuple[str, ...]) -> list[str]:
    """The single words the reader could not place, as the model may say it explains them."""
    return list(dict.fromkeys(w for u in unread for w in re.findall(r"[A-Za-z][A-Za-z&'’.-]*[A-Za-z]|[A-Za-z]", u)))


def plan_schema(catalogue: Catalogue, unread: tuple[str, ...]) -> dict[str, Any]:
    """The JSON the model writes; its formula pattern admits only catalogue names, operators and the constants."""
    names = sorted(catalogue.items, key=len, reverse=True)
    # (escaped by hand: llama.cpp's grammar takes no "\ ", which re.escape writes for a space)
    metrics = sorted((re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", "{" + m + "}") for m in catalogue.metrics),
                     key=len, reverse=True)
    constants = sorted((f"{c:g}" for c in CONSTANTS), key=len, reverse=True)
    token = "|".join([*metrics, *names, r"avg\(", r"prior\(", *constants, r"[()+*/ -]"])
    words = _words(unread)
    return {
        "type": "object",
        "properties": {
            "statement_metric": {"type": "boolean"},
            "formula": {"type": "string", "maxLength": _FORMULA_MAX, "pattern": f"^({token})*$"},
            "explains": {"type": "array", "items": {"type": "string", "enum": words or [""]},
                         "maxItems": max(len(words), 1)},
        },
        "required": ["statement_metric", "formula", "explains"],
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
    if not data.get("statement_metric", False):
        raise PlanRejected("the model too reads it as no metric of the statements")
    formula = str(data.get("formula", "")).strip()
    if not formula:
        raise PlanRejected("the model wrote no formula")
    missing = set(_words(unread.unread)) - set(data.get("explains", ()))
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


def propose_plan(intent: QueryIntent, unread: MetricPlan, catalogue: Catalogue, chat: ChatModel,
                 settings: AnswerSettings, prompts: PromptSettings | None = None,
                 cancel: Callable[[], bool] | None = None) -> tuple[MetricPlan, LlmCall]:
    """The plan the model proposes for an unread metric, checked; else the unread plan with why it was rejected."""
    res, call = call_llm(chat, "plan (the words the grammar could not read)",
                         _messages(intent, unread, catalogue, prompts), plan_schema(catalogue, unread.unread),
                         settings.max_tokens, cancel)
    if res is None:
        return replace(unread, note="; ".join(x for x in (unread.note, f"the plan model failed: {call.error}")
                                              if x)), call
    try:
        return check_plan(res.data, intent, unread, catalogue), call
    except PlanRejected as exc:
        return replace(unread, note="; ".join(x for x in (unread.note, f"the model's plan was rejected: {exc}")
                                              if x)), call
