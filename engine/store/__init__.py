"""SQLite library (source of truth) and the HNSW/BM25 files derived from it."""

from __future__ import annotations

from engine.store.library import Library

__all__ = ["Library"]
