"""The answer step over curated passages (HiREC §4.3): a numeric question is answered by a formula over the ids of
the figures the passages print (:mod:`engine.answer.fact_formula`), a textual one in words
(:func:`engine.answer.generate.answer_text`). The one entry point of the question path and of eval's baselines."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.answer.fact_formula import answer_from_fact_formula
from engine.answer.fact_lines import passage_facts, passage_lines
from engine.answer.generate import NOT_ANSWERABLE, answer_text
from engine.models.base import ChatModel
from engine.records import AnswerResult, LlmCall, Passage, QueryIntent
from engine.settings import AnswerSettings, PromptSettings
from engine.store.library import Library

__all__ = ["answer_question"]


def answer_question(question: str, intent: QueryIntent, passages: Sequence[Passage], library: Library,
                    chat: ChatModel, settings: AnswerSettings, prompts: PromptSettings, *, computed: str = "",
                    known: Sequence[float] = (),
                    cancel: Callable[[], bool] | None = None) -> tuple[AnswerResult, tuple[LlmCall, ...]]:
    """Answer from ``passages``. A numeric question (``settings.numeric_mode`` "pot") is a formula over the
    figures they print (statement facts when ``settings.from_facts``, and figures of their text); with none to
    compute from it is not answerable, without a model call: no path lets the model type a figure. A written
    answer is given the statement facts printed in the passages, and ``computed``, the metrics the engine computed,
    whose values ``known`` count as grounded (:func:`~engine.answer.generate.answer_text`)."""
    limit = settings.max_fact_lines
    if intent.numeric and settings.numeric_mode == "pot":
        lines = passage_lines(library, passages, intent, limit, facts=settings.from_facts)
        if not lines:
            return AnswerResult("not_answerable", NOT_ANSWERABLE, method="pot",
                                reason="the passages print no figure the question's words name"), ()
        result, call = answer_from_fact_formula(question, intent, passages, lines, chat, settings, prompts, cancel)
        return result, (call,)
    lines = passage_facts(library, passages, intent, limit) if settings.from_facts else ()
    result, call = answer_text(question, passages, chat, settings, prompts, facts=lines, computed=computed,
                               known=known, cancel=cancel)
    return result, (call,)
