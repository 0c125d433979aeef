"""Parse and validate a model's JSON output against a JSON schema (Draft 2020-12).

Kept apart from the llama adapter so any chat backend (and the scripted test models) validate the
same way. ``jsonschema`` is a light pure-Python dependency, but it is still imported lazily so that
``import engine`` never needs it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from engine.errors import MissingDependencyError, ModelError, ModelOutputError

_MAX_REASON = 300


def _short(text: str, limit: int = _MAX_REASON) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def schema_key(schema: dict[str, Any]) -> str:
    """A canonical string for a schema, usable as a cache key (schemas are unhashable dicts)."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=64)
def _validator_for(key: str) -> Any:
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(
            "validating model output needs jsonschema: pip install jsonschema==4.26.0"
        ) from exc
    schema = json.loads(key)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        # A broken schema is a programming error in the caller, not bad model output.
        raise ModelError(f"invalid JSON schema passed to the model: {_short(exc.message)}") from exc
    return Draft202012Validator(schema)


def check_schema(schema: dict[str, Any]) -> None:
    """Raise :class:`ModelError` if ``schema`` is not a valid Draft 2020-12 schema (cached)."""
    _validator_for(schema_key(schema))


def clip_strings(data: Any, schema: dict[str, Any]) -> Any:
    """Cut strings longer than their ``maxLength`` (recursively through objects and arrays).

    The grammar cannot bound long strings (see ``engine.models.llama``), and an over-long explanation is
    better kept clipped than discarded with the whole answer; every other violation still fails.
    """
    if isinstance(data, str) and isinstance(schema.get("maxLength"), int):
        return data[: schema["maxLength"]]
    if isinstance(data, dict):
        props = schema.get("properties", {})
        return {k: clip_strings(v, props[k]) if k in props else v for k, v in data.items()}
    if isinstance(data, list) and isinstance(schema.get("items"), dict):
        return [clip_strings(v, schema["items"]) for v in data]
    return data


def validate_json(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Parse ``text`` as one JSON object and validate it against ``schema``.

    Args:
        text: The raw model output.
        schema: A Draft 2020-12 JSON schema whose top level is an object.

    Returns:
        The parsed object.

    Raises:
        ModelOutputError: The text is not JSON, not an object, or violates the schema. The message is
            a one-line reason short enough to feed back to the model; ``raw_outputs`` holds ``text``.
        ModelError: The schema itself is invalid.
    """
    validator = _validator_for(schema_key(schema))
    try:
        # strict=False: llama.cpp's JSON grammar lets a string hold raw control characters (a newline typed
        # inside the text), which strict parsing rejects although the object is fine.
        data = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        if not text.strip():
            reason = "the output was empty"
        elif exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            reason = "the JSON is incomplete (it was cut off before it closed)"
        else:
            reason = f"not valid JSON: {exc.msg} (character {exc.pos})"
        raise ModelOutputError(reason, raw_outputs=[text]) from exc
    if not isinstance(data, dict):
        raise ModelOutputError(
            f"expected a JSON object, got {type(data).__name__}", raw_outputs=[text]
        )
    data = clip_strings(data, schema)
    errors = list(validator.iter_errors(data))
    if errors:
        from jsonschema.exceptions import best_match

        err = best_match(errors)
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ModelOutputError(
            f"schema violation at {where}: {_short(err.message, 200)}", raw_outputs=[text]
        )
    return data
