"""HiREC evidence curation (§4.2): one LLM call filters passages, judges answerability and, when
evidence is missing, writes the complementary question for the next retrieval round."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.models.base import ChatModel
from engine.prompts import evidence_messages, prompt
from engine.records import LlmCall, Passage
from engine.settings import CurationSettings, PromptSettings
from engine.trace import call_llm


def curation_schema(n_passages: int, settings: CurationSettings) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            # An enum (not minimum/maximum) so the grammar itself only lets the model name shown passages.
            "relevant_ids": {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_passages + 1)) or [1]},
                             "maxItems": settings.max_kept},
            "answerable": {"type": "boolean"},
            "missing_information": {"type": "string", "maxLength": settings.max_note_chars},
            "complementary_question": {"type": "string", "maxLength": settings.max_question_chars},
        },
        "required": ["relevant_ids", "answerable", "missing_information", "complementary_question"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class CurationResult:
    kept: tuple[Passage, ...]
    dropped: tuple[Passage, ...]
    answerable: bool
    missing_information: str
    complementary_question: str
    call: LlmCall
    ok: bool  # False when the model's output was unusable; the round then keeps every passage shown


def curate(question: str, shown: Sequence[Passage], kept_before: Sequence[Passage], chat: ChatModel,
           settings: CurationSettings, prompts: PromptSettings,
           cancel: Callable[[], bool] | None = None) -> CurationResult:
    """Run one curation round over ``shown`` (earlier kept passages first, then the new ones).

    Kept passages stay in the order they were shown, so the next round and the answer step open with the
    same passages as this prompt whenever the curator keeps a leading run of them.

    Raises:
        Cancelled: ``cancel`` returned true during the model call.
    """
    max_kept = settings.max_kept
    task = prompt("curation", prompts).replace("{max_kept}", str(max_kept))
    res, call = call_llm(chat, "curation", evidence_messages(task, question, shown, prompts),
                         curation_schema(len(shown), settings), max_tokens=settings.max_tokens, cancel=cancel)
    if res is None:
        kept = tuple(shown[:max_kept])
        return CurationResult(kept, tuple(shown[max_kept:]), False, "", "", call, ok=False)
    ids = [i for i in dict.fromkeys(res.data["relevant_ids"]) if 1 <= i <= len(shown)]
    before = {p.chunk.id for p in kept_before}
    # Passages kept in earlier rounds stay kept (Algorithm 1 merges them); new ones fill up to k'_P.
    picked = {shown[i - 1].chunk.id for i in ids}
    chosen = [p for p in shown if p.chunk.id in before]
    chosen += [p for p in shown if p.chunk.id in picked and p.chunk.id not in before]
    chosen = chosen[:max_kept]
    chosen_ids = {p.chunk.id for p in chosen}
    answerable = bool(res.data["answerable"]) and bool(chosen)
    return CurationResult(
        kept=tuple(chosen),
        dropped=tuple(p for p in shown if p.chunk.id not in chosen_ids),
        answerable=answerable,
        missing_information=res.data["missing_information"].strip() if not answerable else "",
        complementary_question=res.data["complementary_question"].strip() if not answerable else "",
        call=call,
        ok=True,
    )
