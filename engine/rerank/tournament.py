"""The rankings over Stage 1's candidates: cards only (no model), FinCards Stages 2 and 3 (paper 003 §3.4), and the
multi-agent variant (paper 002 §3.3, Algorithm 1). Each returns the candidates best first and what its trace needs;
the model calls go through :class:`engine.rerank.calls.Calls`."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from engine.errors import Cancelled
from engine.records import EloMatch
from engine.rerank.algorithms import (
    accumulate, bootstrap_groups, borda, diversify, elo_update, group_size, jaccard, rank_variance, round_robin_groups,
    schedule_pairs, top_k,
)
from engine.rerank.calls import Calls, Candidate
from engine.retrieval.fusion import rrf
from engine.settings import RerankSettings


@dataclass
class Ranking:
    """A ranking of the Stage 1 candidates and the terms behind it, per chunk id."""

    order: list[Candidate]
    finalists: set[int]
    final: dict[int, float]
    screen_score: dict[int, int] = field(default_factory=dict)
    borda: dict[int, float] = field(default_factory=dict)
    round_ranks: dict[int, list[int]] = field(default_factory=dict)
    listwise_rank: dict[int, int] = field(default_factory=dict)
    elo: dict[int, float] = field(default_factory=dict)
    rrf: dict[int, float] = field(default_factory=dict)
    moved: dict[int, str] = field(default_factory=dict)
    matches: list[EloMatch] = field(default_factory=list)
    rounds: int = 0
    stop: str = ""
    rank_variance: float | None = None
    jaccards: list[float] = field(default_factory=list)  # the top-k Jaccard of rounds 2.. with the round before


def _check(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise Cancelled("cancelled by the user")


def _diversified(ranked: Sequence[Candidate], s: RerankSettings) -> tuple[list[Candidate], dict[int, str]]:
    by_id = {c.id: c for c in ranked}
    order, why = diversify([c.id for c in ranked], {c.id: c.card.section for c in ranked},
                           {c.id: c.chunk.text for c in ranked}, quota=s.section_quota, near_duplicate=s.near_duplicate)
    return [by_id[i] for i in order], why


def cards_only(cands: Sequence[Candidate], s: RerankSettings) -> Ranking:
    """The model-free mode: S = 1/(ζ + fused rank) + λ·(Align + card fit), then section diversity."""
    final = {c.id: 1.0 / (s.rrf_zeta + c.base_rank) + s.align_lambda * c.card_score for c in cands}
    ranked = sorted(cands, key=lambda c: (-final[c.id], c.base_rank))
    order, moved = _diversified(ranked, s)
    return Ranking(order, {c.id for c in cands}, final, moved=moved)


def _rest(cands: Sequence[Candidate], finalists: set[int]) -> list[Candidate]:
    return [c for c in cands if c.id not in finalists]


def fincards(cands: Sequence[Candidate], calls: Calls, *, stage3: bool = True) -> Ranking:
    """FinCards Stages 2 and 3 over the Stage 1 candidates (in the fused order they arrive in).

    Stage 2: round-robin groups of g; each group's finalists (k_min..k_max) with reasons and scores, the coverage
    constraints enforced; the union deduplicated keeping the highest score. Stage 3: up to R_max seeded bootstrap
    rounds of complete listwise rankings in shuffled groups, normalised Borda scores summed, stopping when the
    top-k Jaccard of two consecutive rounds reaches the threshold. The candidates no group picked follow in BM25
    order."""
    s = calls.settings
    score: dict[int, int] = {}
    by_id = {c.id: c for c in cands}
    for g, members in enumerate(round_robin_groups(list(cands), calls.fits(s.screen_group)), start=1):
        _check(calls.cancel)
        picks = calls.screen(members, g, s.screen_min, s.screen_max)
        picks += _coverage(members, [c for c, _, _ in picks], calls)
        for c, sc, _ in picks:
            score[c.id] = max(score.get(c.id, -1), sc)
    s2 = sorted(score, key=lambda i: (-score[i], by_id[i].base_rank))
    rest = _rest(cands, set(score))
    if not stage3 or len(s2) < 2:
        order = [by_id[i] for i in s2] + rest
        final = {c.id: float(len(order) - n) for n, c in enumerate(order)}
        return Ranking(order, set(score), final, screen_score=score, stop="Stage 3 off" if not stage3 else "")
    rng = random.Random(s.seed)
    fit = calls.fits(s.bootstrap_group_max, "rerank_rank")  # a group's complete ranking within one prompt
    size = group_size(len(s2), min(s.bootstrap_group_min, fit), fit)
    total: dict[int, float] = {}
    positions: dict[int, list[float]] = {}
    ranks: dict[int, list[int]] = {}
    prev: list[int] | None = None
    jaccards: list[float] = []
    stop = f"{s.rounds} rounds (R_max)"
    rounds = 0
    for r in range(1, s.rounds + 1):
        if calls.capped:
            stop = f"{calls.cap_note()} before round {r}"
            break
        rounds = r
        judged = 0
        for g, ids in enumerate(bootstrap_groups(s2, size, rng), start=1):
            _check(calls.cancel)
            order, judgement = calls.rank([by_id[i] for i in ids], "bootstrap", r, g)
            if not judgement:  # an echo of the shuffled order: no Borda points
                continue
            judged += 1
            accumulate(total, borda([c.id for c in order]))
            for pos, c in enumerate(order):
                positions.setdefault(c.id, []).append(pos / max(1, len(order) - 1))
                ranks.setdefault(c.id, []).append(pos + 1)
        head = top_k(total, s.top_k, {i: score[i] for i in s2})
        if prev is not None:
            jaccards.append(round(j := jaccard(head, prev), 4))
            if j >= s.stop_jaccard:
                stop = f"top-{s.top_k} Jaccard {j:.2f} ≥ {s.stop_jaccard} after round {r}" + \
                    ("" if judged else f" (no group of round {r} was judged)")
                break
        prev = head
    s3 = sorted(s2, key=lambda i: (-total.get(i, 0.0), -score[i], by_id[i].base_rank))
    # FinCards' stability measure needs a candidate judged in two rounds at least; with none it is unknown, not 0
    variance = round(rank_variance(positions), 5) if any(len(p) >= 2 for p in positions.values()) else None
    order = [by_id[i] for i in s3] + rest
    final = {c.id: total.get(c.id, 0.0) for c in cands}
    return Ranking(order, set(score), final, screen_score=score, borda=total,
                   round_ranks=ranks, rounds=rounds, stop=stop, rank_variance=variance,
                   jaccards=jaccards)


def _coverage(members: Sequence[Candidate], picked: Sequence[Candidate], calls: Calls) -> list[tuple[Candidate, int, str]]:
    """FinCards' coverage constraints: a trend question keeps at least one temporally grounded table card, a
    definition or policy question at least one explanatory card (the best such card of the group by card fit)."""
    relation = calls.intent_relation
    if relation == "trend":
        ok = lambda c: c.card.evidence_type == "table_numeric" and bool(c.card.periods)  # noqa: E731
        what = "a table with periods (trend question)"
    elif relation in ("definition", "policy"):
        ok = lambda c: c.card.evidence_type in ("policy_text", "qualitative_explanation") or \
            c.card.claim_role == "definition"  # noqa: E731
        what = f"an explanatory card ({relation} question)"
    else:
        return []
    if any(ok(c) for c in picked):
        return []
    best = sorted((c for c in members if ok(c)), key=lambda c: (-c.card_score, c.base_rank))
    if not best:
        return []
    g = calls.groups[-1]
    calls.groups[-1] = type(g)(g.stage, g.round, g.group, g.members, (*g.order, best[0].id),
                               (*g.reasons, f"coverage: {what}"), (*g.scores, 0), g.fallback)
    return [(best[0], 0, f"coverage: {what}")]


def multiagent(cands: Sequence[Candidate], calls: Calls) -> Ranking:
    """Paper 002 Algorithm 1: batch picker over disjoint batches of B (m finalists each) → listwise judge over the
    deduplicated finalists (at most ``judge_max``) → pairwise referee over the judge's top h with Elo → RRF of
    the two orders + λ·Align → section quotas and near-duplicate suppression. The candidates no batch picked
    follow in the order they arrived in."""
    s = calls.settings
    by_id = {c.id: c for c in cands}
    finalists: list[int] = []
    batch = calls.fits(s.batch, "rerank_pick")
    for g, start in enumerate(range(0, len(cands), batch), start=1):
        _check(calls.cancel)
        for c in calls.pick(cands[start:start + batch], g, s.picks):
            if c.id not in finalists:
                finalists.append(c.id)
    judged = sorted(finalists, key=lambda i: by_id[i].base_rank)[:calls.fits(s.judge_max, "rerank_rank")]
    _check(calls.cancel)
    # the judge is shown the finalists in the fused order: an echo of it (its trace says so) keeps that order
    pi_l = [c.id for c in calls.rank([by_id[i] for i in judged], "judge", 0, 1)[0]] if len(judged) > 1 else judged
    pool = pi_l[:s.referee_pool]
    rating = {i: s.elo_start for i in pool}
    matches: list[EloMatch] = []
    sides: list[int] = []  # the position (1: shown first) each usable verdict named
    for n, (a, b) in enumerate(schedule_pairs(pool, s.matches_per_item)):
        _check(calls.cancel)
        if calls.capped:
            matches.append(EloMatch(a, b, None, round(rating[a], 2), round(rating[b], 2), calls.cap_note()))
            continue
        if _position_only(sides):
            matches.append(EloMatch(a, b, None, round(rating[a], 2), round(rating[b], 2),
                                    f"not played: {_position_note(sides)}"))
            continue
        flip = bool(n % 2)
        winner = calls.referee(by_id[a], by_id[b], flip=flip)
        if winner is None:
            matches.append(EloMatch(a, b, None, round(rating[a], 2), round(rating[b], 2), "no usable verdict"))
            continue
        sides.append(1 if (winner.id == b) == flip else 2)
        rating[a], rating[b] = elo_update(rating[a], rating[b], 1.0 if winner.id == a else 0.0, s.elo_tau, s.elo_kappa)
        matches.append(EloMatch(a, b, winner.id, round(rating[a], 2), round(rating[b], 2)))
    if _position_only(sides):  # the verdicts followed the order shown, not the cards: the ratings stay as they began
        rating = {i: s.elo_start for i in pool}
        matches = [replace(m, fallback=f"not counted: {_position_note(sides)}") if m.winner is not None else m
                   for m in matches]
    pi_p = sorted(pool, key=lambda i: (-rating[i], pi_l.index(i)))
    fused = dict(rrf([pi_l, pi_p], k=s.rrf_zeta))
    final = {i: fused.get(i, 0.0) + s.align_lambda * by_id[i].align.total for i in finalists}
    l_rank = {i: n for n, i in enumerate(pi_l, start=1)}
    ranked = sorted(finalists, key=lambda i: (-final[i], l_rank.get(i, len(pi_l) + 1), by_id[i].base_rank))
    order, moved = _diversified([by_id[i] for i in ranked], s)
    return Ranking(order + _rest(cands, set(finalists)), set(finalists), final, listwise_rank=l_rank,
                   elo={i: round(r, 2) for i, r in rating.items()}, rrf={i: round(v, 6) for i, v in fused.items()},
                   moved=moved, matches=matches)


POSITION_ONLY = 6  # usable referee verdicts that, all naming the same position, show the referee reads no card


def _position_only(sides: Sequence[int]) -> bool:
    """The referee names the same position whichever card is shown there: the pairs are shown in alternating
    order, so over :data:`POSITION_ONLY` verdicts a referee that judged the cards would name both positions."""
    return len(sides) >= POSITION_ONLY and len(set(sides)) == 1


def _position_note(sides: Sequence[int]) -> str:
    return (f"the referee named the card shown {'first' if sides[0] == 1 else 'second'} in all {len(sides)} "
            "matches, whichever it was: no judgement")
