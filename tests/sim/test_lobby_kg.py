"""In a live lobby under global assignment, the knowledge-gradient scores are the paper's KG.

A small persistent-base lobby runs with ``knowledge_gradient`` and ``global`` assignment (blocks
of 8, no focal player). Every call of :meth:`GlobalMatching._block_scores` (and the policy's
``score`` inside it) is recorded, unchanged. Each recorded score[b, i, j], block member i's score
for member j, is then recomputed from scratch: a scalar, math-module implementation of the paper's
KG (docs/model.md 3.1-3.2, the corrected square roots) for focal player i with the block's other
real members as the candidates, q_ij + W * F_ij with W = gamma / (1 - gamma). The same beliefs
are also pushed through the paper engine's own scoring path (``simulate_block``) and must give
the same scores; and the beliefs the scores were computed from must be the driving rater's at
that pass.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from lobbysim.paper import study as paper_study
from lobbysim.paper.study import PaperStudy, simulate_block
from lobbysim.policies.assignment import GlobalMatching
from lobbysim.policies.base import Decision
from lobbysim.policies.knowledge_gradient import KnowledgeGradient
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.streams import Streams

DAY = 1440.0
BLOCK = 8
REL = 1e-12
PAPER_PASSES = 12  # passes over >= 6 players also pushed through the paper engine


def scenario() -> Scenario:
    """A small player base (150 members, one day) matched by KG with global blocks of 8."""
    return Scenario.from_dict(
        {
            "name": "lobby_kg",
            "horizon": DAY,
            "warmup": 0,
            "arrivals": {"name": "none"},
            "population": {"session_games_mean": 4, "patience_mean": 8},
            "game": {"length": 10},
            "matchmaker": {
                "policy": "knowledge_gradient",
                "assignment": {"name": "global", "block_size": BLOCK},
                "tick": 0.5,
                "wake_on_arrival": False,
                "threshold": [[0, 0.5], [1, 0.3], [3, 0.0]],
            },
            "raters": {"driver": "bayesian", "shadows": []},
            "base": {"size": 150, "visits": {"name": "daily", "per_day": 12.0}},
        }
    )


@dataclass
class BlockCall:
    """One recorded ``_block_scores`` call of a pass, with the rater's beliefs at that moment."""

    time: float
    ids: np.ndarray  # the pool's player ids, in pool order (read from the lobby's queue)
    mu: np.ndarray  # the pool's beliefs, as the assignment was given them
    var: np.ndarray
    beta2: float
    blocks: np.ndarray  # (B, k) pool indices, -1 for padding
    scores: np.ndarray  # (B, k, k) what the assignment received
    rater_mu: np.ndarray  # the driving rater's means/variances of ids, read during the call
    rater_var: np.ndarray
    policy: Any
    decision: Decision | None = None  # what the policy was asked to score
    raw: np.ndarray | None = None  # and what it returned


@dataclass
class LobbyRun:
    calls: list[BlockCall]
    end_mu: dict[int, float]  # the rater's means after the run, for a staleness control


@pytest.fixture(scope="module")
def lobby_run() -> LobbyRun:
    """Run the lobby once, recording every block-scoring call (behaviour unchanged)."""
    calls: list[BlockCall] = []
    original_block_scores = GlobalMatching._block_scores
    original_score = KnowledgeGradient.score
    sim = LobbySimulation(scenario(), Streams(5))

    def record_block_scores(pool: Any, policy: Any, blocks: np.ndarray) -> np.ndarray:
        ids = np.fromiter(sim.pool, dtype=np.int64, count=len(sim.pool))
        call = BlockCall(
            time=float(sim.env.now),
            ids=ids,
            mu=pool.mu.copy(),
            var=pool.var.copy(),
            beta2=float(pool.beta2),
            blocks=blocks.copy(),
            scores=np.empty(0),
            rater_mu=np.array(sim.driver.means(ids), dtype=np.float64),
            rater_var=np.array(sim.driver.variances(ids), dtype=np.float64),
            policy=policy,
        )
        calls.append(call)
        scores = original_block_scores(pool, policy, blocks)
        call.scores = scores.copy()
        return scores

    def record_score(self: KnowledgeGradient, decision: Decision) -> np.ndarray:
        raw = original_score(self, decision)
        if calls and calls[-1].decision is None:
            calls[-1].decision = _frozen(decision)
            calls[-1].raw = np.array(raw, copy=True)
        return raw

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(GlobalMatching, "_block_scores", staticmethod(record_block_scores))
        mp.setattr(KnowledgeGradient, "score", record_score)
        sim.run()
    everyone = np.array(sorted({int(p) for c in calls for p in c.ids}), dtype=np.int64)
    end_mu = dict(zip(everyone.tolist(), sim.driver.means(everyone).tolist(), strict=True))
    return LobbyRun(calls, end_mu)


def _frozen(decision: Decision) -> Decision:
    """Return a copy of the decision's arrays (the paper engine updates its beliefs in place)."""
    return dataclasses.replace(
        decision,
        focal_mu=np.array(decision.focal_mu, copy=True),
        focal_var=np.array(decision.focal_var, copy=True),
        mu=np.array(decision.mu, copy=True),
        var=np.array(decision.var, copy=True),
    )


# ---------------------------------------------------------------- the paper's KG, by hand
def _density(
    mu_a: float, var_a: float, mu_b: float, var_b: float, beta2: float, *, literal: bool
) -> float:
    """q of eq. (5): exp(-d^2 / (2 c^2)) / (sqrt(2 pi) c); ``literal``: c^2 for c (the misprint)."""
    c2 = var_a + var_b + 2.0 * beta2
    scale = c2 if literal else math.sqrt(c2)
    d = mu_a - mu_b
    return math.exp(-d * d / (2.0 * c2)) / (math.sqrt(2.0 * math.pi) * scale)


def _update(
    mu_w: float, var_w: float, mu_l: float, var_l: float, beta2: float, *, literal: bool
) -> tuple[float, float, float, float]:
    """The 1v1 Gaussian update after w beats l (docs/model.md 3.1, no dynamics)."""
    c2 = var_w + var_l + 2.0 * beta2
    scale = c2 if literal else math.sqrt(c2)
    t = (mu_w - mu_l) / scale
    pdf = math.exp(-t * t / 2.0) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * math.erfc(-t / math.sqrt(2.0))
    v = pdf / cdf
    w = v * (v + t)
    return (
        mu_w + var_w / scale * v,
        var_w * (1.0 - var_w / c2 * w),
        mu_l - var_l / scale * v,
        var_l * (1.0 - var_l / c2 * w),
    )


def paper_kg(
    mu0: float,
    var0: float,
    mu: list[float],
    var: list[float],
    beta2: float,
    weight: float,
    *,
    literal: bool = False,
) -> list[float]:
    """Return q_0j + weight * F_j for each candidate j, in scalar loops.

    F_j = P(0 beats j) max_k q_0k(after the win) + P(j beats 0) max_k q_0k(after the loss), the
    max over every candidate k: j with its updated belief, every other k unchanged.
    """
    out = []
    for j in range(len(mu)):
        c2 = var0 + var[j] + 2.0 * beta2
        scale = c2 if literal else math.sqrt(c2)
        p_win = 0.5 * math.erfc(-((mu0 - mu[j]) / scale) / math.sqrt(2.0))
        f = 0.0
        for focal_won, p in ((True, p_win), (False, 1.0 - p_win)):
            if focal_won:
                m0, v0, mj, vj = _update(mu0, var0, mu[j], var[j], beta2, literal=literal)
            else:
                mj, vj, m0, v0 = _update(mu[j], var[j], mu0, var0, beta2, literal=literal)
            best = 0.0
            for k in range(len(mu)):
                mk, vk = (mj, vj) if k == j else (mu[k], var[k])
                best = max(best, _density(m0, v0, mk, vk, beta2, literal=literal))
            f += p * best
        out.append(_density(mu0, var0, mu[j], var[j], beta2, literal=literal) + weight * f)
    return out


def _members(blocks: np.ndarray, b: int) -> list[int]:
    """Return the block's real slots (padding slots hold -1)."""
    return [s for s in range(blocks.shape[1]) if blocks[b, s] >= 0]


def _relative_error(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) / abs(y) for x, y in zip(a, b, strict=True))


def _block_reference(
    call: BlockCall,
    b: int,
    i: int,
    weight: float,
    mu: np.ndarray,
    var: np.ndarray,
    *,
    literal: bool = False,
) -> tuple[list[int], list[float]]:
    """Return member i's candidates (slots) and the paper's KG for them from beliefs mu/var."""
    slots = [s for s in _members(call.blocks, b) if s != i]
    pool_index = [int(call.blocks[b, s]) for s in slots]
    focal = int(call.blocks[b, i])
    ref = paper_kg(
        float(mu[focal]),
        float(var[focal]),
        [float(mu[p]) for p in pool_index],
        [float(var[p]) for p in pool_index],
        call.beta2,
        weight,
        literal=literal,
    )
    return slots, ref


# ---------------------------------------------------------------- the paper engine's path
def paper_engine_scores(
    policy: Any,
    beta2: float,
    focal: tuple[float, float],
    candidates: list[tuple[float, float]],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Decision, np.ndarray]:
    """Score the candidates as the paper engine does: one game of one path of ``simulate_block``
    with its priors set to these beliefs (player 0 the focal player), through ``policy``."""
    beliefs = [focal, *candidates]
    means = np.array([m for m, _ in beliefs])
    variances = np.array([v for _, v in beliefs])
    monkeypatch.setattr(
        paper_study, "draw_priors", lambda study, seed: (means.copy(), means.copy(), variances)
    )
    seen: list[tuple[Decision, np.ndarray]] = []

    class Recorded:
        def score(self, decision: Decision) -> np.ndarray:
            raw = policy.score(decision)
            seen.append((_frozen(decision), np.array(raw, copy=True)))
            return raw

    study = PaperStudy(
        n_players=len(beliefs),
        n_games=1,
        beta2=beta2,
        middle_rank=1,
        windows=((1, 1),),
        block_paths=1,
    )
    simulate_block(study, Recorded(), seed=0, block=0, n_paths=1)  # type: ignore[arg-type]
    ((decision, raw),) = seen
    return decision, raw[0]


# ---------------------------------------------------------------- the tests
def test_the_run_exercises_global_kg_blocks(lobby_run: LobbyRun) -> None:
    calls = lobby_run.calls
    assert calls, "no pass scored a block"
    assert all(isinstance(c.policy, KnowledgeGradient) for c in calls)
    assert all(c.decision is not None for c in calls)
    sizes = [c.ids.size for c in calls]
    assert max(sizes) >= 9 and sum(s >= 6 for s in sizes) >= PAPER_PASSES
    assert any(c.blocks.shape[0] >= 2 for c in calls)  # several blocks in one pass
    assert any((c.blocks < 0).any() for c in calls)  # a partial block, padded


def test_lobby_block_scores_are_the_papers_kg(
    lobby_run: LobbyRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = lobby_run.calls
    policy = calls[0].policy
    gamma = policy.gamma
    weight = gamma / (1.0 - gamma)
    assert policy.rule == "discounted" and weight == pytest.approx(99.0, rel=1e-12)

    checked = 0
    for call in calls:
        for b in range(call.blocks.shape[0]):
            for i in _members(call.blocks, b):
                slots, ref = _block_reference(call, b, i, weight, call.mu, call.var)
                got = [float(call.scores[b, i, s]) for s in slots]
                assert _relative_error(got, ref) < REL, (call.time, b, i, got, ref)
                checked += len(slots)
    assert checked > 10_000

    # The comparison is sharp: W off by one (100 for 99), or the printed paper's c^2 for c (the
    # lost square root), breaks it.
    call = max(calls, key=lambda c: c.ids.size)
    first = _members(call.blocks, 0)[0]
    slots, ref = _block_reference(call, 0, first, weight, call.mu, call.var)
    got = [float(call.scores[0, first, s]) for s in slots]
    _, off_by_one = _block_reference(call, 0, first, weight + 1.0, call.mu, call.var)
    _, no_sqrt = _block_reference(call, 0, first, weight, call.mu, call.var, literal=True)
    assert _relative_error(got, ref) < REL
    assert _relative_error(got, off_by_one) > 1e-4
    assert _relative_error(got, no_sqrt) > 1e-2

    # The paper engine's path gives the same scores for the same beliefs, with the lobby's own
    # policy object: one game of simulate_block with these beliefs as its priors.
    big = [c for c in calls if c.ids.size >= 6][:PAPER_PASSES]
    for call in big:
        for b in range(call.blocks.shape[0]):
            for i in _members(call.blocks, b):
                slots, ref = _block_reference(call, b, i, weight, call.mu, call.var)
                focal = int(call.blocks[b, i])
                cands = [int(call.blocks[b, s]) for s in slots]
                decision, paper = paper_engine_scores(
                    call.policy,
                    call.beta2,
                    (float(call.mu[focal]), float(call.var[focal])),
                    [(float(call.mu[p]), float(call.var[p])) for p in cands],
                    monkeypatch,
                )
                assert decision.games_played == 0 and decision.beta2 == call.beta2
                np.testing.assert_array_equal(decision.mu[0], call.mu[cands])
                np.testing.assert_array_equal(decision.var[0], call.var[cands])
                lobby = call.scores[b, i, slots]
                np.testing.assert_array_equal(paper, lobby)
                assert _relative_error(paper.tolist(), ref) < REL


def test_block_scores_use_the_driving_raters_current_beliefs(lobby_run: LobbyRun) -> None:
    stale = 0
    for call in lobby_run.calls:
        # The pool handed to the assignment holds the rater's beliefs of the queue at this pass.
        np.testing.assert_array_equal(call.mu, call.rater_mu)
        np.testing.assert_array_equal(call.var, call.rater_var)
        # ... and the policy was asked about exactly those: each block member as the focal
        # player, the block's other members as its candidates (in any order; a partial block's
        # padding slots far away), and the assignment got the policy's score for each of them.
        decision = call.decision
        assert decision is not None and call.raw is not None
        beliefs = zip(call.rater_mu.tolist(), call.rater_var.tolist(), strict=True)
        rater = dict(zip(call.ids.tolist(), beliefs, strict=True))  # id -> (mean, variance)
        for b in range(call.blocks.shape[0]):
            members = _members(call.blocks, b)
            for i in members:
                focal = rater[int(call.ids[call.blocks[b, i]])]
                assert (float(decision.focal_mu[b, i]), float(decision.focal_var[b, i])) == focal
                row = list(
                    zip(decision.mu[b, i].tolist(), decision.var[b, i].tolist(), strict=True)
                )
                free = list(range(len(row)))
                for s in members:
                    if s == i:
                        continue
                    belief = rater[int(call.ids[call.blocks[b, s]])]
                    slot = next(t for t in free if row[t] == belief)  # StopIteration: missing
                    free.remove(slot)
                    assert call.scores[b, i, s] == call.raw[b, i, slot]
                assert all(row[t][0] >= 1e8 for t in free)  # only padding is left
        ids = call.ids.tolist()
        end = np.array([lobby_run.end_mu[p] for p in ids])
        stale += not np.array_equal(end, call.rater_mu)
    # Beliefs move during the run, so the check above would catch a pool of stale beliefs.
    assert stale > len(lobby_run.calls) // 2
