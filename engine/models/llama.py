"""Chat LLM adapter over llama-cpp-python with schema-constrained JSON output.

Generation is constrained by a GBNF grammar built from the JSON schema
(``LlamaGrammar.from_json_schema``) and the result is still validated with ``jsonschema``, because
the grammar cannot express everything a schema can (e.g. ``minimum`` on numbers). We build the
grammar ourselves instead of passing ``response_format={"type": "json_object", "schema": ...}``:
in llama-cpp-python 0.3.36 that path silently falls back to "any JSON" when the schema cannot be
converted, and a grammar that llama.cpp's parser rejects crashes the process (segfault) rather than
raising, so every grammar is checked once with the C parser before it is used.

Cancelling a call uses llama.cpp's abort callback, which the CPU backend polls between the nodes of
every compute graph: a cancel stops prompt processing (the long part on a CPU) and generation alike
within milliseconds, and ``llama_decode`` then fails, which ``create_chat_completion`` passes on as a
``RuntimeError``. (``create_chat_completion`` takes no ``stopping_criteria``, so that per-token hook is
out of reach.) A backend that does not poll the callback (GPU offload may not) finishes the call first.

Prompt-prefix cache: by default every call starts from an empty cache, so a call's output never depends
on what the model was asked before. Inside :meth:`LlamaChatModel.prefix_session` (the question pipeline
opens one per run) calls from the session's thread keep the cache, and llama.cpp reads only the part of
a prompt after the prefix it shares with the previous call. A run's output then depends only on its own
calls, and a curation round or answer step that opens with the passages of the previous prompt reads
only what is new (on two CPU cores that is about 1 s saved per 75 prompt tokens).

``llama_cpp`` is imported inside the constructor so ``import engine`` works without it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import Cancelled, MissingDependencyError, ModelError, ModelOutputError
from engine.models.base import ChatMessage, ChatResult
from engine.models.jsonschema_util import check_schema, validate_json

log = logging.getLogger(__name__)

_OVERFLOW = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")
# The rejected reply is shown back to the model on a retry; cap it so retries do not eat the context.
_MAX_ECHO_CHARS = 2000


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependencyError(
            "the chat model needs llama-cpp-python, built portable: "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir llama-cpp-python==0.3.36'
        ) from exc
    return llama_cpp


class LlamaChatModel:
    """A :class:`engine.models.base.ChatModel` over any GGUF file.

    The chat template comes from the GGUF metadata (``chat_format=None``). One instance may be shared
    between threads: calls are serialised by a lock, since a llama.cpp context is not thread-safe.

    Args:
        gguf_path: The model file.
        n_ctx: Context window in tokens.
        gpu_layers: Layers offloaded to the GPU (-1 = all, 0 = CPU only).
        threads: CPU threads for generation and prompt processing; ``None`` = all cores.
        seed: Sampling seed (generation is greedy at temperature 0 anyway).
        json_retries: Extra attempts after a reply fails the schema.
        model_id: Name recorded in traces; default is the file name.
    """

    def __init__(
        self,
        gguf_path: str | Path,
        *,
        n_ctx: int = 8192,
        gpu_layers: int = 0,
        threads: int | None = None,
        seed: int = 0,
        json_retries: int = 2,
        model_id: str | None = None,
    ) -> None:
        self.gguf_path = Path(gguf_path)
        if not self.gguf_path.is_file():
            raise ModelError(f"GGUF file not found: {self.gguf_path}")
        self.model_id = model_id or self.gguf_path.name
        self.n_ctx = n_ctx
        self.gpu_layers = gpu_layers
        self.threads = threads or os.cpu_count() or 1
        self.seed = seed
        self.json_retries = json_retries
        self._lock = threading.RLock()
        self._session: int | None = None  # thread id of the open prefix session
        self._clean = False  # the cache holds only this session's calls
        self._grammars: dict[str, Any] = {}
        llama_cpp = _import_llama_cpp()
        self._llama_cpp = llama_cpp
        started = time.perf_counter()
        try:
            self._llm: Any = llama_cpp.Llama(
                model_path=str(self.gguf_path),
                n_ctx=n_ctx,
                n_gpu_layers=gpu_layers,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                seed=seed,
                chat_format=None,  # use the template stored in the GGUF
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {self.gguf_path}: {exc}") from exc
        self._install_abort_callback()
        self.chat_format: str = self._llm.chat_format or "unknown"
        if self.chat_format == "llama-2" and "tokenizer.chat_template" not in self._llm.metadata:
            log.warning("%s has no chat template; falling back to the llama-2 format", self.gguf_path.name)
        log.info(
            "loaded %s (%s, n_ctx=%d, gpu_layers=%d, threads=%d, chat format %s) in %.1fs",
            self.model_id,
            self.gguf_path,
            n_ctx,
            gpu_layers,
            self.threads,
            self.chat_format,
            time.perf_counter() - started,
        )

    # -- prefix cache ----------------------------------------------------------------------------

    @contextmanager
    def prefix_session(self) -> Iterator[None]:
        """Calls made in this block from this thread may reuse the previous call's prompt prefix.

        The session starts from an empty cache, so its outputs depend only on its own calls. A call from
        another thread, a failed or cancelled call, and the end of the session empty the cache again.
        """
        with self._lock:
            self._session, self._clean = threading.get_ident(), False
        try:
            yield
        finally:
            with self._lock:
                self._session, self._clean = None, False

    def _cached_prefix(self, before: Any) -> int:
        """Prompt tokens of the call just made that matched the cache left by the call before."""
        after = self._llm._input_ids
        n = min(len(before), len(after))
        if n == 0:
            return 0
        differs = np.flatnonzero(np.asarray(before[:n]) != np.asarray(after[:n]))
        return int(differs[0]) if differs.size else n

    # -- cancellation ----------------------------------------------------------------------------

    def _install_abort_callback(self) -> None:
        """Let llama.cpp poll the cancel check of the call in progress (set per call by ``_generate``)."""
        self._cancel: Callable[[], bool] | None = None
        self._aborted = False
        # The ctypes wrapper must live as long as the context, or llama.cpp calls freed memory.
        self._abort_callback = self._llama_cpp.ggml_abort_callback(self._should_abort)
        self._llama_cpp.llama_set_abort_callback(self._llm._ctx.ctx, self._abort_callback, None)

    def _should_abort(self, _data: int | None) -> bool:
        cancel = self._cancel
        if cancel is not None and cancel():
            self._aborted = True
            return True
        return False

    # -- grammar ---------------------------------------------------------------------------------

    def _grammar_for(self, schema: dict[str, Any]) -> Any:
        # The grammar writes properties in the schema's order (the order is the prompt's plan: figures before
        # the formula, reasoning before the answer), so neither the key nor the grammar may sort them.
        key = json.dumps(schema)
        grammar = self._grammars.get(key)
        if grammar is not None:
            return grammar
        check_schema(schema)
        try:
            grammar_schema = json.dumps(_relax_for_grammar(schema))
            gbnf = self._llama_cpp.llama_grammar.json_schema_to_gbnf(grammar_schema)
            grammar = self._llama_cpp.LlamaGrammar.from_string(_compact(gbnf), verbose=False)
        except Exception as exc:  # the converter raises bare Exception/ValueError/KeyError
            raise ModelError(f"JSON schema cannot be turned into a llama.cpp grammar: {exc}") from exc
        self._check_grammar(grammar)
        self._grammars[key] = grammar
        return grammar

    def _check_grammar(self, grammar: Any) -> None:
        """Parse the grammar with llama.cpp once: a grammar it rejects would segfault generation."""
        lc = self._llama_cpp
        try:
            vocab = self._llm._model.vocab
            init, free = lc.llama_sampler_init_grammar, lc.llama_sampler_free
        except AttributeError:  # internals moved in another version: skip the pre-check
            return
        sampler = init(vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not sampler:
            raise ModelError("llama.cpp rejected the grammar generated from the JSON schema")
        free(sampler)

    # -- generation ------------------------------------------------------------------------------

    def _generate(
        self,
        messages: list[dict[str, str]],
        grammar: Any,
        max_tokens: int,
        cancel: Callable[[], bool] | None = None,
    ) -> tuple[dict[str, Any], int]:
        """One completion and the number of its prompt tokens that came from the prefix cache."""
        with self._lock:
            if self._llm is None:
                raise ModelError(f"{self.model_id} was closed")
            self._cancel, self._aborted = cancel, False
            in_session = self._session == threading.get_ident()
            if not (in_session and self._clean):
                # Outside a session, reusing the previous prompt's KV cache would make temperature-0 output
                # depend on call history; the reset also discards whatever an aborted call left behind.
                self._llm.reset()
            self._clean = False
            before = self._llm._input_ids.copy()
            try:
                response = self._llm.create_chat_completion(
                    messages=messages,
                    temperature=0.0,
                    max_tokens=max_tokens,
                    grammar=grammar,
                    seed=self.seed,
                )
            except ValueError as exc:
                match = _OVERFLOW.search(str(exc))
                if match:
                    raise _ContextOverflow(int(match.group(1)), int(match.group(2))) from exc
                raise ModelError(f"{self.model_id}: generation failed: {exc}") from exc
            except RuntimeError as exc:  # llama_decode failed: our abort callback, or llama.cpp itself
                if self._aborted:
                    raise Cancelled(f"{self.model_id}: the call was cancelled") from exc
                raise ModelError(f"{self.model_id}: generation failed: {exc}") from exc
            finally:
                self._cancel = None
            prompt_tokens = int((response.get("usage") or {}).get("prompt_tokens", 0))
            self._clean = in_session
            return response, min(self._cached_prefix(before), prompt_tokens)

    def complete_json(
        self,
        messages: Sequence[ChatMessage],
        schema: dict[str, Any],
        *,
        max_tokens: int = 512,
        cancel: Callable[[], bool] | None = None,
    ) -> ChatResult:
        """Generate a schema-valid JSON object at temperature 0.

        Args:
            messages: The chat so far (system/user/assistant).
            schema: A Draft 2020-12 object schema; arrays and strings should be bounded.
            max_tokens: Generation budget per attempt.
            cancel: Polled by llama.cpp while it processes the prompt and generates; true stops the call.

        Returns:
            The parsed object with raw text, summed token counts over all attempts, and timing.

        Raises:
            ModelOutputError: Every attempt (1 + ``json_retries``) failed the schema; carries all raw outputs.
            ModelError: The prompt does not fit the context window, or the schema is unusable.
            Cancelled: ``cancel`` returned true; the call stopped where it was and is not retried.
        """
        grammar = self._grammar_for(schema)
        history: list[dict[str, str]] = [{"role": m["role"], "content": m["content"]} for m in messages]
        raws: list[str] = []
        prompt_tokens = completion_tokens = cached_tokens = 0
        started = time.perf_counter()
        reason = ""
        attempts = 1 + self.json_retries
        for attempt in range(1, attempts + 1):
            try:
                response, cached = self._generate(history, grammar, max_tokens, cancel)
            except _ContextOverflow as exc:
                raise self._overflow_error(exc.prompt_tokens, attempt, reason, raws, "does not fit") from exc
            usage = response.get("usage") or {}
            prompt_tokens += int(usage.get("prompt_tokens", 0))
            cached_tokens += cached
            completion_tokens += int(usage.get("completion_tokens", 0))
            choice = response["choices"][0]
            raw = choice["message"].get("content") or ""
            raws.append(raw)
            try:
                data = validate_json(raw, schema)
            except ModelOutputError as exc:
                reason = str(exc)
                if choice.get("finish_reason") == "length":
                    used = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
                    if used >= self.n_ctx - 1:
                        # llama.cpp silently shortens max_tokens to what is left of the context.
                        prompt_used = int(usage.get("prompt_tokens", 0))
                        raise self._overflow_error(
                            prompt_used, attempt, reason, raws, "left no room for the answer"
                        ) from exc
                    reason += f" (the reply hit the {max_tokens}-token limit: answer more briefly)"
                log.warning("%s: attempt %d/%d rejected: %s", self.model_id, attempt, attempts, reason)
                echoed = raw if len(raw) <= _MAX_ECHO_CHARS else raw[:_MAX_ECHO_CHARS] + "…"
                history.append({"role": "assistant", "content": echoed})
                history.append(
                    {
                        "role": "user",
                        "content": f"Your reply was rejected: {reason}. Do the task above again and "
                        "reply with only one JSON object that satisfies the schema.",
                    }
                )
                continue
            return ChatResult(
                data=data,
                raw=raw,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                attempts=attempt,
                seconds=time.perf_counter() - started,
                model_id=self.model_id,
                raw_attempts=tuple(raws),
                cached_tokens=cached_tokens,
            )
        raise ModelOutputError(
            f"{self.model_id}: no schema-valid JSON after {attempts} attempts; last error: {reason}",
            raw_outputs=raws, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cached_tokens=cached_tokens,
        )

    def _overflow_error(
        self, prompt_tokens: int, attempt: int, reason: str, raws: list[str], what: str
    ) -> ModelError:
        message = (
            f"{self.model_id}: prompt of {prompt_tokens} tokens {what} in the context window of "
            f"{self.n_ctx} tokens (n_ctx); shorten the input or raise models.n_ctx"
        )
        if attempt == 1:
            return ModelError(message)
        # The retry history pushed it over: report it as the output failure it is.
        return ModelOutputError(f"{message} (on retry {attempt - 1}; last error: {reason})", raw_outputs=raws)

    def close(self) -> None:
        """Free the llama.cpp model and context now rather than at garbage collection."""
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None

    def __repr__(self) -> str:
        return f"LlamaChatModel({self.model_id!r}, n_ctx={self.n_ctx}, gpu_layers={self.gpu_layers})"


GRAMMAR_MAX_STRING = 256
_SPACE_RULE = 'space ::= " "?'


def _compact(gbnf: str) -> str:
    """The grammar with no whitespace between JSON tokens: the converter lets the model put a space after every
    bracket, colon and comma, and a small model does ("[ 1, 5]"), each space a token of its own before a digit —
    a decode step, about a tenth of a second on a CPU, that says nothing. Strings keep their spaces."""
    if _SPACE_RULE not in gbnf:  # pragma: no cover - a converter that names its whitespace otherwise
        raise ModelError("llama-cpp-python's JSON grammar has no 'space' rule to compact")
    return gbnf.replace(_SPACE_RULE, 'space ::= ""')


def _relax_for_grammar(schema: Any) -> Any:
    """The schema the grammar enforces: long ``maxLength`` bounds are dropped.

    llama-cpp-python's converter unrolls ``maxLength: N`` into N nested optional rules, which llama.cpp
    refuses beyond a few hundred. Long strings are bounded by ``max_tokens`` instead, and the reply is
    still validated against the full schema afterwards.
    """
    if isinstance(schema, dict):
        out = {k: _relax_for_grammar(v) for k, v in schema.items()}
        if isinstance(out.get("maxLength"), int) and out["maxLength"] > GRAMMAR_MAX_STRING:
            del out["maxLength"]
        return out
    if isinstance(schema, list):
        return [_relax_for_grammar(v) for v in schema]
    return schema


class _ContextOverflow(Exception):
    def __init__(self, prompt_tokens: int, n_ctx: int) -> None:
        super().__init__(f"{prompt_tokens} > {n_ctx}")
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx

