"""HiREC evidence curation (§4.2): one LLM call filters passages, judges answerability and, when
evidence is missing, writes the complementary question for the next retrieval round."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.models.base import ChatModel
from engine.retrieval.hierarchical import Passage
from engine.trace import LlmCall, call_llm, prompt

MAX_PASSAGE_CHARS = 1400  # a chunk plus its table header context


def curation_schema(n_passages: int, max_kept: int) -> dict:
    return {
        "type": "object",
        "properties": {
            # An enum (not minimum/maximum) so the grammar itself only lets the model name shown passages.
            "relevant_ids": {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_passages + 1)) or [1]},
                             "maxItems": max_kept},
            "answerable": {"type": "boolean"},
            "missing_information": {"type": "string", "maxLength": 250},
            "complementary_question": {"type": "string", "maxLength": 200},
        },
        "required": ["relevant_ids", "answerable", "missing_information", "complementary_question"],
        "additionalProperties": False,
    }


def render_passages(passages: Sequence[Passage]) -> str:
    """Numbered passages for a prompt. Passage text is fenced so it reads as quoted data."""
    blocks = []
    for i, p in enumerate(passages, start=1):
        text = p.prompt_text()[:MAX_PASSAGE_CHARS].replace("<<<", "< < <").replace(">>>", "> > >")
        blocks.append(f"[{i}] {p.title}, page {p.chunk.page_no}\n<<<\n{text}\n>>>")
    return "\n\n".join(blocks)


def evidence_messages(task: str, question: str, passages: Sequence[Passage]) -> list[dict[str, str]]:
    """The chat of every evidence step (curation, answer): one shared system prompt, the passages, then the
    task and the question. Steps of one run that show the same leading passages therefore share a prompt
    prefix, which the chat model can keep in its cache instead of reading it again."""
    return [{"role": "system", "content": prompt("evidence_system")},
            {"role": "user", "content": f"Passages:\n\n{render_passages(passages)}\n\n{task}\n\nQuestion: {question}"}]


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
           max_kept: int, cancel: Callable[[], bool] | None = None) -> CurationResult:
    """Run one curation round over ``shown`` (earlier kept passages first, then the new ones).

    Kept passages stay in the order they were shown, so the next round and the answer step open with the
    same passages as this prompt whenever the curator keeps a leading run of them.

    Raises:
        Cancelled: ``cancel`` returned true during the model call.
    """
    messages = evidence_messages(prompt("curation").replace("{max_kept}", str(max_kept)), question, shown)
    res, call = call_llm(chat, "curation", messages, curation_schema(len(shown), max_kept), max_tokens=256,
                         cancel=cancel)
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
