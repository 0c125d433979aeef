"""sha256 of model files, computed once per process.

A leaf module: the registry (GGUF packs) and the sentence-transformers adapters (weights fingerprints)
both hash files, and neither may import the other for it.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def sha256_file(path: Path) -> str:
    """sha256 hex digest of a file, cached per process by (path, size, mtime)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _hash_lock:
        cached = _hash_cache.get(key)
    if cached is not None:
        return cached
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    with _hash_lock:
        _hash_cache[key] = digest
    return digest
