"""A chat model loaded at its first call.

A question the statement facts answer never calls the chat model, and loading it costs seconds and about 1.9 GB
(the 1.5B GGUF mapped, its context and buffers): a process that only answers such questions (``filinglens ask``,
an evaluation of the facts path, five askers at once) should not pay for it. :class:`DeferredChat` stands in for
the model: the file is found and checked when it is made (so a missing model is still reported before the first
question), the model is loaded, once, by the first call that needs it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import Any

from engine.errors import ModelError
from engine.models.base import ChatMessage, ChatModel, ChatResult

log = logging.getLogger(__name__)


@dataclass
class _Session:
    """A prefix session opened on the stand-in: opened on the model too (``on_model``) once it is loaded."""

    stack: ExitStack
    on_model: bool


class DeferredChat:
    """A :class:`engine.models.base.ChatModel` that loads the real one (``load()``) at its first call.

    ``prefix_session`` keeps its meaning: a session opened before the model was loaded is opened on the model when
    a call in it loads it, and closed with it.
    """

    def __init__(self, load: Callable[[], ChatModel], model_id: str,
                 on_load: Callable[[str], None] | None = None) -> None:
        self._load = load
        self._on_load = on_load  # told "loading the chat model …" when the load starts (the app's status line)
        self.model_id = model_id
        self._model: ChatModel | None = None
        self.load_seconds: float | None = None  # how long the load took, once loaded
        self._lock = threading.Lock()
        self._local = threading.local()  # this thread's open sessions: ExitStacks, innermost last

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def model(self) -> ChatModel:
        """The real model, loaded on the first call (raises ModelError when it cannot be)."""
        with self._lock:
            if self._model is None:
                if self._on_load is not None:
                    self._on_load(f"loading the chat model {self.model_id}…")
                began = time.perf_counter()
                try:
                    self._model = self._load()
                except ModelError:
                    raise
                except Exception as exc:  # llama.cpp's own errors: a damaged file, too little memory
                    raise ModelError(f"the chat model {self.model_id} could not be loaded: {exc}") from exc
                self.load_seconds = time.perf_counter() - began
                log.info("loaded the chat model %s in %.1f s", self.model_id, self.load_seconds)
                if self._on_load is not None:
                    self._on_load(f"loaded the chat model in {self.load_seconds:.1f} s; running…")
            model = self._model
        for session in getattr(self._local, "sessions", []):  # sessions this thread opened before the load
            if not session.on_model:
                session.stack.enter_context(model.prefix_session())
                session.on_model = True
        return model

    def complete_json(self, messages: Sequence[ChatMessage], schema: dict[str, Any], *, max_tokens: int = 512,
                      cancel: Callable[[], bool] | None = None) -> ChatResult:
        return self.model().complete_json(messages, schema, max_tokens=max_tokens, cancel=cancel)

    def prefix_session(self) -> AbstractContextManager[None]:
        return self._session()

    @contextlib.contextmanager
    def _session(self) -> Iterator[None]:
        sessions = self._local.__dict__.setdefault("sessions", [])
        with ExitStack() as stack:
            model = self._model
            session = _Session(stack, on_model=model is not None)
            if model is not None:
                stack.enter_context(model.prefix_session())
            sessions.append(session)
            try:
                yield
            finally:
                sessions.remove(session)
