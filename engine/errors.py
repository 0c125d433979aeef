"""The engine's error hierarchy: every error says what went wrong and where."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class Cancelled(EngineError):
    """The user cancelled the work in progress; raised from inside a model call as well as between stages."""


class ConfigError(EngineError):
    """A setting or preset is invalid.

    ``problems`` maps a dotted field path (``"models.threads"``) to what is wrong with it, so a form can
    point at the field; it is empty when the error is not about one field (a missing preset file).
    """

    def __init__(self, message: str, *, problems: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems = dict(problems or {})


class MissingDependencyError(EngineError):
    """An optional dependency is not installed; the message carries the install hint."""


class IngestError(EngineError):
    """A file could not be ingested; the message is the one-line reason shown to the user."""


class StoreError(EngineError):
    """The library on disk is missing, locked or inconsistent."""


class LibraryTooNewError(StoreError):
    """The library was written by a newer FilingLens: its schema has migrations this version does not know."""


class IndexMismatchError(StoreError):
    """An index on disk was built with another model or chunking than the one requested."""


class IndexNotReadyError(StoreError):
    """The library has filings but no complete search index yet (none was ever built, or the first build is
    still running)."""


class IndexDamagedError(StoreError):
    """A published index is missing a file or holds one of another size than its manifest records."""


class ModelError(EngineError):
    """A model is missing, fails its hash check, or did not return usable output."""


class ModelOutputError(ModelError):
    """The model kept returning output that does not satisfy the requested JSON schema."""

    def __init__(self, message: str, *, raw_outputs: list[str] | None = None, prompt_tokens: int = 0,
                 completion_tokens: int = 0, cached_tokens: int = 0) -> None:
        super().__init__(message)
        self.raw_outputs = raw_outputs or []
        # what the failed attempts cost, so a failed call still counts in the run's tokens
        self.prompt_tokens, self.completion_tokens, self.cached_tokens = prompt_tokens, completion_tokens, cached_tokens
