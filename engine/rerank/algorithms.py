"""The tournament rerankers' arithmetic, as pure functions (each checked against hand-computed cases).

FinCards (../shared/papers/003, §3.4): the length-adaptive Stage 1 cutoff (eq. 5), round-robin Stage 2 groups,
seeded bootstrap groups for Stage 3, normalised Borda scores (eq. 8–9) and the top-k Jaccard early stop.
The multi-agent variant (../shared/papers/002, §3.3): Elo updates of the pairwise referee (eq. 6), reciprocal-rank
fusion (eq. 7, :func:`engine.retrieval.fusion.rrf`), the alignment score (eq. 8) and section diversity.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from statistics import pvariance
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def stage1_cutoff(n_chunks: int, ratio: float = 0.5, n_min: int = 60, n_max: int = 150) -> int:
    """FinCards eq. 5: N = clamp(⌈r·L⌉, N_min, N_max), and N = L when L < N_min."""
    if n_chunks < n_min:
        return n_chunks
    return max(n_min, min(n_max, math.ceil(ratio * n_chunks)))


def round_robin_groups(ranked: Sequence[T], size: int) -> list[list[T]]:
    """Deal a ranked list into ⌈n/size⌉ groups like cards (item i to group i mod m), so every group holds high-,
    mid- and low-ranked candidates (FinCards Stage 2)."""
    if not ranked:
        return []
    m = math.ceil(len(ranked) / max(1, size))
    return [list(ranked[t::m]) for t in range(m)]


def group_size(n: int, lo: int = 15, hi: int = 25) -> int:
    """Stage 3's group size g ∈ [lo, hi] adapted to M candidates: as few groups as fit under ``hi``, of equal
    size; never below ``lo`` unless M itself is (one group of all)."""
    if n <= hi:
        return max(1, n)
    groups = math.ceil(n / hi)
    return max(lo, math.ceil(n / groups))


def bootstrap_groups(items: Sequence[T], size: int, rng: random.Random) -> list[list[T]]:
    """One bootstrap round: the items shuffled with the run's seeded generator and cut into groups of ``size``;
    a last group shorter than half a group joins the one before (a group of one cannot be ranked)."""
    order = list(items)
    rng.shuffle(order)
    groups = [order[i:i + size] for i in range(0, len(order), size)]
    if len(groups) > 1 and len(groups[-1]) < max(2, size // 2):
        groups[-2].extend(groups.pop())
    return groups


def borda(ranking: Sequence[T]) -> dict[T, float]:
    """FinCards eq. 8: in a group of |H|, the item at position ρ (1 = best) scores (|H| − ρ)/(|H| − 1) ∈ [0, 1];
    a group of one scores 1."""
    n = len(ranking)
    if n == 1:
        return {ranking[0]: 1.0}
    return {item: (n - pos) / (n - 1) for pos, item in enumerate(ranking, start=1)}


def accumulate(total: dict[T, float], scores: Mapping[T, float]) -> dict[T, float]:
    """FinCards eq. 9: S(i|q) sums an item's normalised Borda scores over every group of every round."""
    for item, s in scores.items():
        total[item] = total.get(item, 0.0) + s
    return total


def top_k(scores: Mapping[T, float], k: int, tiebreak: Mapping[T, float] | None = None) -> list[T]:
    """The k best items by score (ties: higher ``tiebreak`` first, then first seen)."""
    tb = tiebreak or {}
    return sorted(scores, key=lambda i: (-scores[i], -tb.get(i, 0.0)))[:k]


def jaccard(a: Sequence[Hashable] | set[Hashable], b: Sequence[Hashable] | set[Hashable]) -> float:
    """|A ∩ B| / |A ∪ B|; two empty sets are identical (1.0)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def rank_variance(positions: Mapping[T, Sequence[float]]) -> float:
    """Stability of a bootstrap: each candidate's normalised position (0 = top of its group, 1 = bottom) in every
    round it was ranked, its population variance, averaged over candidates ranked at least twice (0.0 when none
    was)."""
    spreads = [pvariance(p) for p in positions.values() if len(p) >= 2]
    return sum(spreads) / len(spreads) if spreads else 0.0


# --- the multi-agent variant ---------------------------------------------------------------------------------


def elo_update(r_i: float, r_j: float, s_i: float, tau: float, kappa: float) -> tuple[float, float]:
    """Eq. 6: p̂_i = σ((r_i − r_j)/τ); r_i += κ(s_i − p̂_i); r_j += κ((1 − s_i) − (1 − p̂_i)).

    With τ = 400/ln 10 this is chess Elo (p̂ = 1/(1 + 10^(−Δ/400))). The sum of the two ratings is kept.
    """
    p_i = 1.0 / (1.0 + math.exp(-(r_i - r_j) / tau))
    return r_i + kappa * (s_i - p_i), r_j + kappa * ((1.0 - s_i) - (1.0 - p_i))


def schedule_pairs(pool: Sequence[T], per_item: int) -> list[tuple[T, T]]:
    """A sparse match list over a ranked pool: each item meets the ``per_item`` items ranked just below it
    ((1,2), (2,3), …, then (1,3), (2,4), …), so close calls are adjudicated and no item plays more than
    2·``per_item`` matches."""
    pairs: list[tuple[T, T]] = []
    for gap in range(1, per_item + 1):
        pairs += [(pool[i], pool[i + gap]) for i in range(len(pool) - gap)]
    return pairs


@dataclass(frozen=True)
class AlignWeights:
    """The α's of eq. 8: entity, metric, period and numeric-evidence terms."""

    entity: float = 1.0
    metric: float = 1.0
    period: float = 1.0
    numeric: float = 1.0


@dataclass(frozen=True)
class AlignTerms:
    """Eq. 8 term by term, for the trace."""

    entity: float
    metric: float
    period: bool
    numeric: bool
    total: float


def alignment(entities: Sequence[str], metrics: Sequence[str], periods_match: bool, has_numbers: bool,
              q_entities: Sequence[str], q_metrics: Sequence[str], numeric_required: bool,
              w: AlignWeights = AlignWeights()) -> AlignTerms:
    """Eq. 8: α_E·Jacc(E_c, E_q) + α_M·Jacc(M_c, M_q) + α_P·1{period match} + α_N·v_q·1{|N_c| > 0}.

    A Jaccard term over an empty demand is 0 (the question asks for nothing there to match), not 1."""
    je = jaccard([e.lower() for e in entities], [e.lower() for e in q_entities]) if q_entities else 0.0
    jm = jaccard(metrics, q_metrics) if q_metrics else 0.0
    num = bool(numeric_required and has_numbers)
    total = w.entity * je + w.metric * jm + w.period * float(periods_match) + w.numeric * float(num)
    return AlignTerms(round(je, 4), round(jm, 4), periods_match, num, round(total, 6))


_WORD = re.compile(r"[a-z0-9]+")


def shingles(text: str, n: int = 3) -> set[tuple[str, ...]]:
    """Word n-grams of a text (lower-cased), the near-duplicate test's unit."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(max(1, len(words) - n + 1))} if words else set()


def diversify(ranked: Sequence[T], section: Mapping[T, str], text: Mapping[T, str], *, quota: int,
              near_duplicate: float = 0.8) -> tuple[list[T], dict[T, str]]:
    """Section diversity (paper 002 §3.3.5): walking the ranking, an item past its section's ``quota`` or a near
    duplicate (3-gram Jaccard ≥ ``near_duplicate``) of an item already taken from its section moves behind the
    items that keep their place, in its original order. Returns the new order and why each moved item moved."""
    kept: list[T] = []
    moved: list[T] = []
    why: dict[T, str] = {}
    per_section: dict[str, list[T]] = {}
    grams = {i: shingles(text.get(i, "")) for i in ranked}
    for item in ranked:
        sec = section.get(item, "")
        taken = per_section.setdefault(sec, [])
        dup = next((j for j in taken if jaccard(grams[item], grams[j]) >= near_duplicate), None)  # type: ignore[arg-type]
        if dup is not None:
            why[item] = f"near duplicate of {dup}"
        elif quota and sec and len(taken) >= quota:
            why[item] = f"section quota: {quota} already from {sec!r}"
        if item in why:
            moved.append(item)
        else:
            kept.append(item)
            taken.append(item)
    return kept + moved, why
