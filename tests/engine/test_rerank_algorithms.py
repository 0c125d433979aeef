"""The tournament rerankers' arithmetic against hand-computed cases (FinCards §3.4, paper 002 §3.3)."""

from __future__ import annotations

import math
import random

import pytest

from engine.rerank.algorithms import (
    AlignWeights, accumulate, alignment, borda, bootstrap_groups, diversify, elo_update, group_size, jaccard,
    rank_variance, round_robin_groups, schedule_pairs, stage1_cutoff, top_k,
)
from engine.retrieval.fusion import rrf


def test_stage1_cutoff_is_eq5() -> None:
    assert stage1_cutoff(40) == 40  # L < N_min: every chunk
    assert stage1_cutoff(100) == 60  # ⌈50⌉ clamped up to N_min
    assert stage1_cutoff(201) == 101  # ⌈100.5⌉
    assert stage1_cutoff(1000) == 150  # clamped down to N_max
    assert stage1_cutoff(130, ratio=0.5, n_min=60, n_max=150) == 65


def test_round_robin_deals_like_cards() -> None:
    assert round_robin_groups(list(range(1, 8)), 3) == [[1, 4, 7], [2, 5], [3, 6]]
    assert round_robin_groups([], 25) == []
    groups = round_robin_groups(list(range(150)), 25)
    assert len(groups) == 6 and all(len(g) == 25 for g in groups)
    assert [g[0] for g in groups] == [0, 1, 2, 3, 4, 5]  # every group gets one of the top six


def test_group_size_and_seeded_bootstrap() -> None:
    assert group_size(12) == 12 and group_size(25) == 25 and group_size(26) == 15 and group_size(60) == 20
    a = bootstrap_groups(list(range(40)), 20, random.Random(3))
    b = bootstrap_groups(list(range(40)), 20, random.Random(3))
    assert a == b and sorted(x for g in a for x in g) == list(range(40)) and [len(g) for g in a] == [20, 20]
    # a last group shorter than half a group joins the one before
    assert [len(g) for g in bootstrap_groups(list(range(23)), 10, random.Random(0))] == [10, 13]


def test_normalised_borda_and_accumulation() -> None:
    assert borda(["a", "b", "c", "d", "e"]) == {"a": 1.0, "b": 0.75, "c": 0.5, "d": 0.25, "e": 0.0}
    assert borda(["x"]) == {"x": 1.0}
    total: dict[str, float] = {}
    accumulate(total, borda(["a", "b", "c"]))  # a 1, b .5, c 0
    accumulate(total, borda(["c", "a"]))  # c 1, a 0
    assert total == {"a": 1.0, "b": 0.5, "c": 1.0}
    assert top_k(total, 2, tiebreak={"c": 2.0, "a": 1.0}) == ["c", "a"]


def test_jaccard_stop_and_rank_variance() -> None:
    assert jaccard([1, 2, 3], [2, 3, 4]) == 0.5 and jaccard([], []) == 1.0 and jaccard([1], []) == 0.0
    assert rank_variance({"a": [0.0, 1.0], "b": [0.5, 0.5], "c": [0.2]}) == pytest.approx((0.25 + 0.0) / 2)
    assert rank_variance({"a": [0.3]}) == 0.0


def test_elo_is_chess_elo_at_tau_400_over_ln10() -> None:
    tau = 400 / math.log(10)
    ri, rj = elo_update(1500, 1500, 1.0, tau, 32)
    assert (ri, rj) == pytest.approx((1516.0, 1484.0))  # even odds: half of κ changes hands
    ri, rj = elo_update(1600, 1400, 0.0, tau, 32)  # the favourite (p̂ = 1/(1+10^-0.5) = 0.7597) loses
    assert ri == pytest.approx(1600 - 32 * 0.759747, abs=1e-3) and rj == pytest.approx(1400 + 32 * 0.759747, abs=1e-3)
    assert ri + rj == pytest.approx(3000)


def test_referee_schedule_meets_neighbours() -> None:
    assert schedule_pairs(["a", "b", "c", "d"], 2) == [("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("b", "d")]
    assert schedule_pairs(["a"], 2) == []


def test_rrf_is_eq7() -> None:
    fused = dict(rrf([["a", "b", "c"], ["b", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62) and fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)


def test_alignment_is_eq8_term_by_term() -> None:
    t = alignment(["Europe", "Consumer"], ["revenue", "gross profit"], True, True, ["europe"], ["revenue"], True)
    assert (t.entity, t.metric, t.period, t.numeric) == (0.5, 0.5, True, True) and t.total == 3.0
    t = alignment([], ["revenue"], False, True, [], ["revenue"], False, AlignWeights(metric=2.0))
    assert (t.entity, t.metric, t.numeric, t.total) == (0.0, 1.0, False, 2.0)  # v_q = 0: figures earn nothing


def test_diversity_quota_and_near_duplicates() -> None:
    text = {1: "revenue grew ten percent in europe", 2: "revenue grew ten percent in europe", 3: "cash flow was",
            4: "margins fell", 5: "legal matters"}
    section = {1: "MD&A", 2: "MD&A", 3: "MD&A", 4: "MD&A", 5: "Legal"}
    order, why = diversify([1, 2, 3, 4, 5], section, text, quota=2)
    assert order == [1, 3, 5, 2, 4]
    assert why == {2: "near duplicate of 1", 4: "section quota: 2 already from 'MD&A'"}
    assert diversify([1, 2], {}, {1: "a b c", 2: "d e f"}, quota=0) == ([1, 2], {})
