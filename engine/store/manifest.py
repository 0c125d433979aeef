"""Index manifests: what an index was built from, written atomically beside the index files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import __version__
from engine.errors import IndexMismatchError
from engine.files import write_atomic

# Fields that make an index unusable when they differ (as opposed to ``generation``, which only makes it stale).
# The parser is not one: an index holds the stored chunks whichever parser wrote them, and a filing read again by
# a newer parser moves the generation. (Manifests written before may still carry a ``parser_version``; ignored.)
IDENTITY_FIELDS = ("kind", "model_id", "fingerprint", "dims", "chunking", "tokenizer")


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    write_atomic(path, json.dumps({**manifest, "package_version": __version__}, indent=2, sort_keys=True).encode())


def read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError):
        return None  # a torn or unreadable manifest means: rebuild


def check_compatible(path: Path, found: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Raise IndexMismatchError naming each field where the index on disk differs from what is asked."""
    diffs = [
        f"{k}: index has {found.get(k)!r}, settings ask for {wanted.get(k)!r}"
        for k in IDENTITY_FIELDS
        if k in wanted and found.get(k) != wanted.get(k)
    ]
    if diffs:
        raise IndexMismatchError(
            f"the index at {path.parent} was built differently ({'; '.join(diffs)}). "
            "Run `filinglens index rebuild` to rebuild it with the current settings."
        )
