"""sha256 of model and filing files.

A leaf module: the registry (GGUF packs) and the sentence-transformers adapters (weights fingerprints)
both hash files, and neither may import the other for it.

Decisions worth knowing:
- :func:`sha256_file` reads the file once per process (filings at ingest: their hash is their identity).
- :func:`model_sha256` also remembers a model file's hash across processes, by (path, size, mtime), in
  ``model-hashes.json`` of the user's cache folder, so that starting the app or a question does not read a
  1 GB model. ``verify=True`` (install, ``filinglens models verify``) reads the whole file again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def _key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def _digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def sha256_file(path: Path) -> str:
    """sha256 hex digest of a file, cached per process by (path, size, mtime)."""
    key = _key(path)
    with _hash_lock:
        cached = _hash_cache.get(key)
    if cached is None:
        cached = _digest(path)
        with _hash_lock:
            _hash_cache[key] = cached
    return cached


def cache_dir() -> Path:
    """The user's cache folder for FilingLens: ``$FILINGLENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/filinglens``,
    else ``~/.cache/filinglens``."""
    explicit = os.environ.get("FILINGLENS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "filinglens"


def _hashes_file() -> Path:
    return cache_dir() / "model-hashes.json"


def _read_hashes() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(_hashes_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: hash again
    return data if isinstance(data, dict) else {}


def remember_sha256(path: Path, digest: str) -> None:
    """Remember a hash just computed while writing ``path`` (an install), as :func:`model_sha256` would."""
    key = _key(path)
    with _hash_lock:
        _hash_cache[key] = digest
    _record(key, digest)


def _record(key: tuple[str, int, int], digest: str) -> None:
    """Add one hash to the cache file (written atomically; a concurrent writer may win, which costs a rehash)."""
    path = _hashes_file()
    data = _read_hashes()
    data[key[0]] = {"size": key[1], "mtime_ns": key[2], "sha256": digest}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".model-hashes.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache folder only costs a rehash next time


def model_sha256(path: Path, *, verify: bool = False) -> str:
    """sha256 of a model file, remembered across processes while its path, size and mtime stay the same.

    Args:
        path: The file.
        verify: Read the whole file even when a hash is remembered (and remember the new one).
    """
    key = _key(path)
    if not verify:
        with _hash_lock:
            cached = _hash_cache.get(key)
        if cached is not None:
            return cached
        entry = _read_hashes().get(key[0])
        if isinstance(entry, dict) and (entry.get("size"), entry.get("mtime_ns")) == key[1:]:
            digest = entry.get("sha256")
            if isinstance(digest, str) and len(digest) == 64:
                with _hash_lock:
                    _hash_cache[key] = digest
                return digest
    digest = _digest(path)
    with _hash_lock:
        _hash_cache[key] = digest
    _record(key, digest)
    return digest
