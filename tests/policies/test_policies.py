"""Opponent-selection policies: hand-built choices, KG against a loop reference, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lobbysim.policies import (
    POLICIES,
    Decision,
    DrawChance,
    KnowledgeGradient,
    PointEstimate,
    choose,
    kg_lookahead,
)
from lobbysim.registry import PluginError
from lobbysim.skill.gaussian import draw_density, update_1v1, win_probability

BETA2 = 2.5


def decision(mu0: float, v0: float, mu: list[float], var: list[float], **kw: object) -> Decision:
    return Decision(np.float64(mu0), np.float64(v0), np.array(mu), np.array(var), BETA2, **kw)  # type: ignore[arg-type]


def best(policy: object, d: Decision) -> int:
    scores = policy.score(d)  # type: ignore[attr-defined]
    return int(np.argmax(scores))


def test_point_estimate_picks_the_nearest_mean() -> None:
    d = decision(1.0, 1.0, [-3.0, 2.5, 0.2, 1.3, 9.0], [1.0, 0.1, 5.0, 30.0, 1.0])
    assert best(PointEstimate(), d) == 3


def test_draw_chance_prefers_certainty_over_a_nearer_but_uncertain_mean() -> None:
    # Candidate 0 is nearest in mean but hugely uncertain; candidate 1 is farther but well known.
    d = decision(0.0, 1.0, [0.1, 1.0, -4.0], [50.0, 0.5, 0.5])
    assert best(PointEstimate(), d) == 0
    assert best(DrawChance(), d) == 1
    quality = DrawChance().score(d)
    assert quality[1] > 2.5 * quality[0]


def test_knowledge_gradient_explores_where_it_pays() -> None:
    # Player 0 is uncertain (variance 3); all candidates are well known. DrawChance takes the
    # nearest mean; KG plays the opponent 2 below, whose game tells more about player 0.
    d = decision(0.0, 3.0, [0.2, 2.0, -2.0], [0.05, 0.05, 0.05])
    assert best(DrawChance(), d) == 0
    assert best(KnowledgeGradient(), d) == 2
    q_now, f = kg_lookahead(d)
    assert q_now[0] > q_now[2]  # worse game now ...
    assert f[2] - f[0] > 0.002  # ... for a better expected best game afterwards
    # With a negligible look-ahead weight KG is DrawChance (q and q~ are proportional).
    assert best(KnowledgeGradient(gamma=1e-9), d) == 0


def reference_f(
    mu0: float, v0: float, mu: np.ndarray, var: np.ndarray, beta2: float
) -> list[float]:
    """F_j straight from the definition, one candidate and one outcome at a time."""
    out = []
    m = len(mu)
    for j in range(m):
        p = float(win_probability(mu0, v0, mu[j], var[j], beta2))
        outcomes = []
        for focal_wins in (True, False):
            if focal_wins:
                m0, s0, mj, sj = update_1v1(mu0, v0, mu[j], var[j], beta2)
            else:
                mj, sj, m0, s0 = update_1v1(mu[j], var[j], mu0, v0, beta2)
            best_q = -math.inf
            for k in range(m):
                mk, sk = (mj, sj) if k == j else (mu[k], var[k])
                best_q = max(best_q, float(draw_density(m0, s0, mk, sk, beta2)))
            outcomes.append(best_q)
        out.append(p * outcomes[0] + (1 - p) * outcomes[1])
    return out


@pytest.mark.parametrize("seed", range(12))
def test_kg_lookahead_matches_the_loop_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    mu0, v0 = rng.normal(0, 2), rng.uniform(0.01, 4)
    mu, var = rng.normal(0, 3, m), rng.uniform(0.01, 4, m)
    q_now, f = kg_lookahead(decision(mu0, v0, list(mu), list(var)))
    np.testing.assert_allclose(f, reference_f(mu0, v0, mu, var, BETA2), rtol=1e-12)
    np.testing.assert_allclose(q_now, draw_density(mu0, v0, mu, var, BETA2), rtol=1e-14)


def test_kg_lookahead_is_the_same_batched_and_one_at_a_time() -> None:
    rng = np.random.default_rng(7)
    paths, m = 3000, 49  # more rows than one block, so the blocking is exercised
    mu0, v0 = rng.normal(0, 2, paths), rng.uniform(0.5, 3, paths)
    mu, var = rng.normal(0, 2, (paths, m)), rng.uniform(0.5, 3, (paths, m))
    q_all, f_all = kg_lookahead(Decision(mu0, v0, mu, var, BETA2))
    for row in (0, 1234, paths - 1):
        q_one, f_one = kg_lookahead(Decision(mu0[row], v0[row], mu[row], var[row], BETA2))
        np.testing.assert_array_equal(f_all[row], f_one)
        np.testing.assert_array_equal(q_all[row], q_one)


@pytest.mark.parametrize(("gamma", "horizon", "played"), [(0.99, 599, 500), (0.9, 20, 11)])
def test_discounted_and_finite_horizon_rules_coincide(
    gamma: float, horizon: int, played: int
) -> None:
    assert gamma / (1 - gamma) == pytest.approx(horizon - played)
    rng = np.random.default_rng(3)
    d = Decision(
        rng.normal(size=50),
        rng.uniform(1, 3, 50),
        rng.normal(size=(50, 20)),
        rng.uniform(1, 3, (50, 20)),
        BETA2,
        games_played=played,
    )
    discounted = KnowledgeGradient(rule="discounted", gamma=gamma).score(d)
    finite = KnowledgeGradient(rule="finite_horizon", horizon=horizon).score(d)
    np.testing.assert_allclose(discounted, finite, rtol=1e-12)
    np.testing.assert_array_equal(discounted.argmax(axis=-1), finite.argmax(axis=-1))


def test_finite_horizon_weight_runs_down_to_zero() -> None:
    kg = KnowledgeGradient(rule="finite_horizon", horizon=10)
    assert [kg.weight(n) for n in (0, 4, 10, 12)] == [10.0, 6.0, 0.0, 0.0]
    assert kg.weight(np.array([[0, 4], [10, 12]])).tolist() == [[10.0, 6.0], [0.0, 0.0]]


def test_finite_horizon_kg_takes_one_games_played_per_focal_player() -> None:
    # A batch of decisions with games_played of the batch's shape scores each row as the single
    # decision with that row's count (the weight broadcast over the candidates).
    rng = np.random.default_rng(4)
    played = np.array([[0, 3, 9], [10, 14, 5]])
    d = Decision(
        rng.normal(size=(2, 3)),
        rng.uniform(1, 3, (2, 3)),
        rng.normal(size=(2, 3, 6)),
        rng.uniform(1, 3, (2, 3, 6)),
        BETA2,
        games_played=played,
    )
    kg = KnowledgeGradient(rule="finite_horizon", horizon=10)
    scores = kg.score(d)
    assert scores.shape == (2, 3, 6)
    for r, c in np.ndindex(2, 3):
        one = Decision(
            d.focal_mu[r, c],
            d.focal_var[r, c],
            d.mu[r, c],
            d.var[r, c],
            BETA2,
            games_played=int(played[r, c]),
        )
        np.testing.assert_array_equal(scores[r, c], kg.score(one))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"gamma": 1.0}, r"gamma must be in \(0, 1\), got 1.0"),
        ({"gamma": 0.0}, r"gamma must be in \(0, 1\), got 0.0"),
        ({"gamma": -0.5}, r"gamma must be in \(0, 1\), got -0.5"),
        ({"rule": "finite_horizon", "horizon": -3}, r"horizon must be >= 0, got -3"),
        ({"rule": "finite_horizon"}, r"the finite_horizon rule needs horizon"),
        ({"rule": "greedy"}, r"rule must be 'discounted' or 'finite_horizon', got 'greedy'"),
    ],
)
def test_knowledge_gradient_rejects_bad_parameters(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KnowledgeGradient(**params)  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="policy 'knowledge_gradient': " + message):
        POLICIES.create("knowledge_gradient", params)


def test_registry_errors_name_the_problem() -> None:
    with pytest.raises(
        PluginError, match=r"unknown policy 'draw_chanse' \(did you mean 'draw_chance'\?\)"
    ):
        POLICIES.get("draw_chanse")
    with pytest.raises(PluginError, match=r"has no parameter 'gama' \(did you mean 'gamma'\?\)"):
        POLICIES.create("knowledge_gradient", {"gama": 0.9})
    assert isinstance(POLICIES.create("lobbysim.policies:DrawChance"), DrawChance)


def test_ties_are_broken_at_random_not_by_position() -> None:
    scores = np.array([0.5, 0.9, 0.1, 0.9, 0.9])
    rng = np.random.default_rng(11)
    picks = np.array([int(choose(scores, rng)) for _ in range(3000)])
    assert set(picks) == {1, 3, 4}
    counts = np.bincount(picks, minlength=5)[[1, 3, 4]]
    assert np.all(np.abs(counts - 1000) < 5 * math.sqrt(3000 * (1 / 3) * (2 / 3)))
    # the stream advances by the same amount with and without ties (common random numbers)
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    choose(np.array([1.0, 2.0, 3.0]), a)
    choose(np.array([1.0, 1.0, 1.0]), b)
    assert a.random() == b.random()


@pytest.mark.parametrize("name", POLICIES.names())
def test_every_registered_policy_scores_a_batch(name: str) -> None:
    rng = np.random.default_rng(1)
    d = Decision(
        rng.normal(size=(4,)),
        rng.uniform(1, 3, 4),
        rng.normal(size=(4, 9)),
        rng.uniform(1, 3, (4, 9)),
        BETA2,
        waited=rng.uniform(0, 5, (4, 9)),
    )
    policy = POLICIES.create(name)
    scores = policy.score(d)
    assert scores.shape == (4, 9)
    assert np.all(np.isfinite(scores))
    picks = choose(scores, np.random.default_rng(9))
    assert np.array_equal(picks, choose(scores, np.random.default_rng(9)))
    assert isinstance(policy.needs_variance, bool)


def test_fifo_picks_the_longest_waiting_and_needs_waiting_times() -> None:
    fifo = POLICIES.create("fifo")
    d = decision(0.0, 1.0, [0.0, 5.0, -1.0], [1.0, 1.0, 1.0], waited=np.array([2.0, 7.5, 1.0]))
    assert best(fifo, d) == 1
    with pytest.raises(ValueError, match="needs the candidates' waiting times"):
        fifo.score(decision(0.0, 1.0, [0.0], [1.0]))


@pytest.mark.parametrize("spread", [0.0, 1e-3, 10.0])
def test_kg_pruning_is_exact_when_the_bound_fails_or_is_loose(spread: float) -> None:
    # Equal means (the equal-priors study) defeat the nearest-candidates bound, so every row falls
    # back to the dense computation; a wide spread makes the bound succeed everywhere.
    rng = np.random.default_rng(42)
    m = 40
    mu = spread * rng.normal(size=m)
    var = rng.uniform(0.5, 3, m)
    _, f = kg_lookahead(decision(0.0, 2.0, list(mu), list(var)))
    np.testing.assert_allclose(f, reference_f(0.0, 2.0, mu, var, BETA2), rtol=1e-12)
