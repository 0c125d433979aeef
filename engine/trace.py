"""Trace records: every stage returns its output plus one of these; the runner persists them."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.models.base import ChatMessage, ChatModel, ChatResult
from engine.settings import RESOURCES_DIR


@dataclass(frozen=True)
class LlmCall:
    """One model call as the audit trail shows it: prompt, raw output(s), tokens, time."""

    purpose: str
    model_id: str
    messages: tuple[dict[str, str], ...]
    raw: str
    raw_attempts: tuple[str, ...]
    tokens_in: int
    tokens_out: int
    seconds: float
    attempts: int
    error: str = ""
    cached_tokens: int = 0  # of tokens_in, how many the model took from its prefix cache

    def to_dict(self) -> dict[str, Any]:
        return {
            "purpose": self.purpose, "model_id": self.model_id, "messages": list(self.messages), "raw": self.raw,
            "raw_attempts": list(self.raw_attempts), "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
            "seconds": round(self.seconds, 3), "attempts": self.attempts, "error": self.error,
            "cached_tokens": self.cached_tokens,
        }


@dataclass(frozen=True)
class StageTrace:
    stage: str  # intent | rewrite | documents | passages | curation | answer | outcome
    round: int
    payload: dict[str, Any]
    seconds: float
    llm_calls: tuple[LlmCall, ...] = field(default_factory=tuple)

    @property
    def tokens_in(self) -> int:
        return sum(c.tokens_in for c in self.llm_calls)

    @property
    def tokens_out(self) -> int:
        return sum(c.tokens_out for c in self.llm_calls)

    def to_dict(self) -> dict[str, Any]:
        return {**self.payload, "llm_calls": [c.to_dict() for c in self.llm_calls]}


def call_llm(chat: ChatModel, purpose: str, messages: Sequence[ChatMessage], schema: dict[str, Any],
             max_tokens: int, cancel: Callable[[], bool] | None = None) -> tuple[ChatResult | None, LlmCall]:
    """Call the model under a schema; never raises for model failures — the LlmCall records the error.

    Raises:
        Cancelled: ``cancel`` returned true while the model was working; the runner ends the run there.
    """
    from engine.errors import ModelError, ModelOutputError

    started = time.perf_counter()
    try:
        res = chat.complete_json(messages, schema, max_tokens=max_tokens, cancel=cancel)
    except ModelOutputError as exc:
        return None, LlmCall(purpose, chat.model_id, tuple(dict(m) for m in messages), "", tuple(exc.raw_outputs),
                             exc.prompt_tokens, exc.completion_tokens, time.perf_counter() - started,
                             len(exc.raw_outputs), f"invalid output: {exc}", cached_tokens=exc.cached_tokens)
    except ModelError as exc:
        return None, LlmCall(purpose, chat.model_id, tuple(dict(m) for m in messages), "", (), 0, 0,
                             time.perf_counter() - started, 0, f"model error: {exc}")
    return res, LlmCall(purpose, res.model_id, tuple(dict(m) for m in messages), res.raw, tuple(res.raw_attempts),
                        res.prompt_tokens, res.completion_tokens, res.seconds, res.attempts,
                        cached_tokens=res.cached_tokens)


_PROMPTS: dict[str, str] = {}


def prompt(name: str) -> str:
    """A prompt template from ``resources/prompts``."""
    if name not in _PROMPTS:
        _PROMPTS[name] = (Path(RESOURCES_DIR) / "prompts" / f"{name}.md").read_text(encoding="utf-8").strip()
    return _PROMPTS[name]
