"""File helpers every floor uses: atomic writes and hard-link-or-copy (index sets, model registry, training)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


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
