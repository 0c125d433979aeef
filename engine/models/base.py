"""Tiny model interfaces with one batch method each.

Pipelines depend only on these protocols, so tests can swap in scripted models and users can plug in
any GGUF or cross-encoder folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, runtime_checkable

import numpy as np


class ChatMessage(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class ChatResult:
    """One schema-valid JSON completion, with everything the audit trace needs."""

    data: dict[str, Any]
    raw: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    seconds: float
    model_id: str
    raw_attempts: tuple[str, ...] = field(default_factory=tuple)
    cached_tokens: int = 0  # prompt tokens served from the model's cache (a shared prefix), not read again


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    model_id: str
    dims: int

    # Read-only properties, so an adapter may compute the hash lazily (a plain attribute satisfies them too).
    @property
    def fingerprint(self) -> str:
        """Hash of the weights: part of every index manifest."""
        ...

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dims), rows L2-normalised."""
        ...


@runtime_checkable
class CrossScorer(Protocol):
    """Scores (query, passage) pairs; higher is more relevant."""

    name: str

    @property
    def fingerprint(self) -> str:
        """Hash of the weights: part of every trace that used the scorer."""
        ...

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Return one float score per pair."""
        ...


@runtime_checkable
class ChatModel(Protocol):
    """A chat LLM that answers under a JSON schema."""

    model_id: str

    def complete_json(
        self,
        messages: Sequence[ChatMessage],
        schema: dict[str, Any],
        *,
        max_tokens: int = 512,
        cancel: Callable[[], bool] | None = None,
    ) -> ChatResult:
        """Return schema-valid JSON or raise :class:`engine.errors.ModelOutputError` after bounded retries.

        ``cancel`` is polled while the model works (prompt processing and generation, not only between
        retries); once it returns true the call stops and raises :class:`engine.errors.Cancelled`.
        """
        ...

    def prefix_session(self) -> AbstractContextManager[None]:
        """A scope (one question's run) inside which a call may reuse the prompt prefix it shares with the
        previous call instead of reading it again; outside it every call starts from an empty cache. A model
        without such a cache returns ``contextlib.nullcontext()``."""
        ...
