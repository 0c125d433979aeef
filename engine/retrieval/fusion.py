"""Reciprocal-rank fusion (Cormack et al. 2009): score = sum over rankings of 1 / (k + rank)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def rrf(rankings: Sequence[Sequence[T]], k: int = 60) -> list[tuple[T, float]]:
    """Fuse ranked lists (best first); ties keep first-seen order. Ranks count from 1."""
    scores: dict[T, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])
