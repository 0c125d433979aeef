"""Index manifests: what an index was built from, written atomically beside the index files."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from engine import __version__
from engine.errors import IndexMismatchError

# Fields that make an index unusable when they differ (as opposed to ``generation``, which only makes it stale).
# The parser is not one: an index holds the stored chunks whichever parser wrote them, and a filing read again by
# a newer parser moves the generation. (Manifests written before may still carry a ``parser_version``; ignored.)
IDENTITY_FIELDS = ("kind", "model_id", "fingerprint", "dims", "chunking", "tokenizer")


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def link_or_copy(src: str | Path, dst: str | Path) -> None:
    """``dst`` becomes the same file as ``src``: a hard link (no copy, and nothing written into the file), made under
    a temporary name and renamed, so an existing ``dst`` (perhaps a link to a published file) is replaced, never
    written into. A copy where links are not possible. Published index files are never written again, so a link to
    one is as good as a copy."""
    src, dst = Path(src), Path(dst)
    if dst.exists() and os.path.samefile(src, dst):
        return
    tmp = dst.with_name(f".{dst.name}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copy2(src, tmp)
    os.replace(tmp, dst)


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
