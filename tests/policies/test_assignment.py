"""Assignment strategies: exact blocks against networkx, sequential order, thresholds."""

from __future__ import annotations

import math
from collections.abc import Callable

import networkx as nx
import numpy as np
import pytest

from lobbysim.policies import POLICIES, Decision
from lobbysim.policies.assignment import (
    ASSIGNMENTS,
    GlobalMatching,
    Pool,
    Sequential,
    _neighbour_windows,
)
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.skill.gaussian import match_quality

BETA2 = 2.5


def make_pool(mu: np.ndarray, var: np.ndarray, waited: np.ndarray) -> Pool:
    def quality(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return match_quality(mu[i], var[i], mu[j], var[j], BETA2)

    return Pool(mu=mu, var=var, waited=waited, beta2=BETA2, quality_fn=quality)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("policy_name", ["draw_chance", "knowledge_gradient", "point_estimate"])
def test_global_block_is_an_exact_maximum_matching(seed: int, policy_name: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))  # one block
    pool = make_pool(rng.normal(0, 2, n), rng.uniform(0.2, 3, n), rng.uniform(0, 4, n))
    threshold = ThresholdSchedule(((0.0, 0.75), (2.0, 0.4)))
    policy = POLICIES.create(policy_name)
    pairs = GlobalMatching(block_size=8).pairs(pool, policy, threshold, rng, 0)

    # networkx on the same graph: admissible edges, symmetric scores; most pairs, then weight.
    scores = GlobalMatching._block_scores(pool, policy, np.argsort(pool.mu)[None, :])[0]
    order = np.argsort(pool.mu)
    graph = nx.Graph()
    weights = {}
    for a in range(n):
        for b in range(a + 1, n):
            i, j = order[a], order[b]
            q = pool.quality_fn(np.array([i]), np.array([j]))[0]
            if q >= threshold.at(np.array(max(pool.waited[i], pool.waited[j]))):
                w = (scores[a, b] + scores[b, a]) / 2
                weights[frozenset((int(i), int(j)))] = w
                graph.add_edge(int(i), int(j), weight=w - min(0.0, -1e-9) + 1e6)
    best = nx.max_weight_matching(graph, maxcardinality=True)
    assert len(pairs) == len(best)
    ours = sum(weights[frozenset(map(int, p))] for p in pairs)
    theirs = sum(weights[frozenset(p)] for p in best)
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    assert len({int(x) for p in pairs for x in p}) == 2 * len(pairs)  # nobody twice


def test_global_pass_cost_is_blockwise_and_everyone_matches_at_most_once() -> None:
    rng = np.random.default_rng(1)
    n = 1001
    pool = make_pool(rng.normal(0, 2, n), rng.uniform(0.2, 3, n), rng.uniform(0, 4, n))
    for pass_index in (0, 1):
        pairs = GlobalMatching().pairs(
            pool, POLICIES.create("draw_chance"), ThresholdSchedule(), rng, pass_index
        )
        flat = pairs.ravel()
        assert len(set(flat.tolist())) == flat.size
        assert len(pairs) >= 480  # threshold 0: nearly everyone pairs within blocks
        # pairs join rating neighbours: the typical gap is small relative to the spread
        assert np.median(np.abs(pool.mu[pairs[:, 0]] - pool.mu[pairs[:, 1]])) < 0.1


def test_sequential_serves_the_longest_waiting_first() -> None:
    mu = np.array([0.0, 0.1, 0.05, 5.0])
    waited = np.array([1.0, 0.5, 3.0, 0.1])
    pool = make_pool(mu, np.full(4, 1.0), waited)
    pairs = Sequential().pairs(
        pool, POLICIES.create("point_estimate"), ThresholdSchedule(), np.random.default_rng(0), 0
    )
    # player 2 waited longest and takes its nearest (0 at 0.05 away); 1 takes 3 (the only one left)
    assert pairs.tolist() == [[2, 0], [1, 3]]


def test_threshold_relaxes_with_waiting_time() -> None:
    schedule = ThresholdSchedule(((0, 0.9), (1, 0.6), (3, 0.0)))
    assert schedule.at(np.array([0.0, 0.99, 1.0, 2.5, 3.0, 100.0])).tolist() == [
        0.9,
        0.9,
        0.6,
        0.6,
        0.0,
        0.0,
    ]
    mu, var = np.array([0.0, 3.0]), np.array([1.0, 1.0])
    q = float(match_quality(0.0, 1.0, 3.0, 1.0, BETA2))
    assert 0.3 < q < 0.6
    for waited, expected in ((0.5, 0), (2.0, 0), (3.5, 1)):
        pool = make_pool(mu, var, np.array([waited, 0.0]))
        for strategy in (Sequential(), GlobalMatching()):
            pairs = strategy.pairs(
                pool, POLICIES.create("draw_chance"), schedule, np.random.default_rng(0), 0
            )
            assert len(pairs) == expected, (strategy, waited)


def test_the_first_step_is_at_one_where_it_holds() -> None:
    """ThresholdSchedule.first_step, which the small passes read instead of calling at_one for
    waits in [0, until): exactly at_one there, and at_one's search elsewhere (the step
    boundaries, a negative wait and NaN sort past every step, to the last one)."""
    for steps in (((0, 0.5),), ((0, 0.9), (1, 0.6), (3, 0.0)), ((0.0, 0.5), (1e-9, 0.2))):
        schedule = ThresholdSchedule(steps)
        until, first = schedule.first_step
        assert until == (steps[1][0] if len(steps) > 1 else math.inf) and first == steps[0][1]
        for wait in (0.0, -0.0, 5e-324, 1e-9, 0.5, 0.99, 1.0, 2.0, 3.0, 1e9, -1.0, math.nan):
            if 0.0 <= wait < until:
                assert schedule.at_one(wait) == first
            assert schedule.at_one(wait) == schedule.at(np.array([wait]))[0]


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ((), "must not be empty"),
        (((1, 0.5),), "must start at wait 0, got 1.0"),
        (((0, 0.5), (0, 0.2)), "waits must increase"),
        (((0, 1.5),), r"min_quality must be in \[0, 1\], got 1.5 at wait 0.0"),
    ],
)
def test_threshold_schedule_rejects_bad_steps(steps: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ThresholdSchedule(steps)


def test_assignment_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match=r"block_size must be a whole number in 2\.\.10, got 12"):
        ASSIGNMENTS.create("global", {"block_size": 12})
    with pytest.raises(ValueError, match="candidates must be a whole number >= 1, got 0"):
        ASSIGNMENTS.create("sequential", {"candidates": 0})
    assert ASSIGNMENTS.names() == ["sequential", "global"]


def test_neighbour_windows_hold_the_nearest_players() -> None:
    mu = np.array([5.0, 1.0, 3.0, 2.0, 4.0, 0.0])
    windows = _neighbour_windows(mu, 2)
    assert sorted(windows[2].tolist()) == [3, 4]  # 3.0's neighbours are 2.0 and 4.0
    assert sorted(windows[5].tolist()) == [1, 3]  # 0.0 at the edge: 1.0 and 2.0
    assert all(i not in windows[i] for i in range(6))


def test_global_pairs_only_with_a_focal_player_weighted_by_its_own_score() -> None:
    # One focal player in one block: the pass makes exactly one pair, the focal player's best
    # partner by its own KG score (not by the mean of both players' scores for each other).
    policy = POLICIES.create("knowledge_gradient")
    own_differs_from_mean = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        pool = make_pool(rng.normal(0, 2, 8), rng.uniform(0.2, 3, 8), rng.uniform(0, 4, 8))
        order = np.argsort(pool.mu)
        focal_slot = int(rng.integers(8))
        pool.focal = np.arange(8) == order[focal_slot]
        pairs = GlobalMatching(block_size=8).pairs(pool, policy, ThresholdSchedule(), rng, 0)
        assert len(pairs) == 1
        assert order[focal_slot] in pairs[0]
        partner = int(pairs[0][pairs[0] != order[focal_slot]][0])
        scores = GlobalMatching._block_scores(pool, policy, order[None, :])[0]
        own = np.where(np.arange(8) == focal_slot, -np.inf, scores[focal_slot])
        mean = np.where(np.arange(8) == focal_slot, -np.inf, (own + scores[:, focal_slot]) / 2)
        assert partner == order[int(np.argmax(own))]
        own_differs_from_mean += int(np.argmax(own) != np.argmax(mean))
    assert own_differs_from_mean > 0  # the weight rule is exercised


def test_global_pairs_always_include_a_focal_player() -> None:
    rng = np.random.default_rng(5)
    n = 40
    pool = make_pool(rng.normal(0, 2, n), rng.uniform(0.2, 3, n), rng.uniform(0, 4, n))
    pool.focal = np.zeros(n, dtype=bool)
    pool.focal[rng.choice(n, 10, replace=False)] = True
    everyone = GlobalMatching().pairs(
        make_pool(pool.mu, pool.var, pool.waited),
        POLICIES.create("draw_chance"),
        ThresholdSchedule(),
        rng,
        0,
    )
    assert len(everyone) == n // 2
    for pass_index in (0, 1):
        pairs = GlobalMatching().pairs(
            pool, POLICIES.create("draw_chance"), ThresholdSchedule(), rng, pass_index
        )
        assert len(pairs) >= 5
        assert pool.focal[pairs].any(axis=1).all()
        assert len(set(pairs.ravel().tolist())) == pairs.size


def test_global_kg_scores_use_each_focal_players_games_played() -> None:
    # Finite-horizon KG weighs the look-ahead by N - n with n the choosing player's own games:
    # every row of a block's scores is the single decision of that player with its n.
    kg = POLICIES.create("knowledge_gradient", {"rule": "finite_horizon", "horizon": 12})
    pairs_differ = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        mu, var, waited = rng.normal(0, 2, 8), rng.uniform(0.2, 3, 8), rng.uniform(0, 4, 8)
        fresh = make_pool(mu, var, waited)
        fresh.games_played = np.zeros(8, dtype=np.int64)
        pool = make_pool(mu, var, waited)
        pool.games_played = rng.integers(0, 16, 8)
        block = np.argsort(mu)[None, :]
        scores = GlobalMatching._block_scores(pool, kg, block)[0]
        assert not np.allclose(scores, GlobalMatching._block_scores(fresh, kg, block)[0])
        for i, player in enumerate(block[0]):
            others = np.delete(np.arange(8), i)
            cand = block[0, others]
            single = Decision(
                focal_mu=mu[player],
                focal_var=var[player],
                mu=mu[cand],
                var=var[cand],
                beta2=BETA2,
                waited=waited[cand],
                games_played=int(pool.games_played[player]),
            )
            np.testing.assert_allclose(scores[i, others], kg.score(single), rtol=1e-13)
        threshold = ThresholdSchedule()
        ours = GlobalMatching().pairs(pool, kg, threshold, np.random.default_rng(0), 0)
        theirs = GlobalMatching().pairs(fresh, kg, threshold, np.random.default_rng(0), 0)
        pairs_differ += {frozenset(p) for p in ours.tolist()} != {
            frozenset(p) for p in theirs.tolist()
        }
    assert pairs_differ > 0


@pytest.mark.parametrize("policy_name", ["draw_chance", "knowledge_gradient", "point_estimate"])
def test_a_pool_of_two_is_decided_as_by_the_blocks(policy_name: str) -> None:
    """GlobalMatching's shortcut for two players (most passes on every arrival) against the
    block solver: the same pair or none, and the random stream left in the same place, over
    pools near and far from the threshold, ties of means, NaN quality and focal players."""
    policy = POLICIES.create(policy_name)
    threshold = ThresholdSchedule(((0.0, 0.75), (2.0, 0.4)))
    draws = np.random.default_rng(5)
    decided = {0: 0, 1: 0}
    for _ in range(400):
        mu = draws.normal(0, 2, 2)
        if draws.random() < 0.1:
            mu[1] = mu[0]
        pool = make_pool(mu, draws.uniform(0.2, 3, 2), draws.uniform(0, 4, 2))
        if draws.random() < 0.05:
            pool.quality_fn = lambda i, j: np.full(len(i), np.nan)
        if draws.random() < 0.2:
            pool.focal = draws.random(2) < 0.5
        seed = int(draws.integers(1 << 30))
        fast_rng, slow_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        matching = GlobalMatching()
        fast = matching.pairs(pool, policy, threshold, fast_rng, 3)
        slow = matching._blocks(pool, policy, threshold, slow_rng, 3)
        assert fast.dtype == slow.dtype and fast.tolist() == slow.tolist()
        assert fast_rng.random() == slow_rng.random()
        decided[len(fast)] += 1
    assert min(decided.values()) > 50


@pytest.mark.parametrize("policy_name", ["draw_chance", "knowledge_gradient", "point_estimate"])
def test_a_pool_of_one_block_is_decided_as_by_the_blocks(policy_name: str) -> None:
    """GlobalMatching's path for a pool of 3 to block_size players (one block, no padding)
    against the general block solver: the same pairs in the same order, and the random stream
    left in the same place, over pools near and far from the threshold, ties of means, NaN
    quality and focal players."""
    policy = POLICIES.create(policy_name)
    threshold = ThresholdSchedule(((0.0, 0.75), (2.0, 0.4)))
    draws = np.random.default_rng(6)
    made = []
    for _ in range(300):
        n = int(draws.integers(3, 9))
        mu = draws.normal(0, 2, n)
        if draws.random() < 0.1:
            mu[1] = mu[0]
        pool = make_pool(mu, draws.uniform(0.2, 3, n), draws.uniform(0, 4, n))
        if draws.random() < 0.05:
            pool.quality_fn = lambda i, j: np.full(len(i), np.nan)
        if draws.random() < 0.2:
            pool.focal = draws.random(n) < 0.5
        seed = int(draws.integers(1 << 30))
        fast_rng, slow_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        matching = GlobalMatching(block_size=8)
        fast = matching.pairs(pool, policy, threshold, fast_rng, 3)
        slow = matching._blocks(pool, policy, threshold, slow_rng, 3)
        assert fast.dtype == slow.dtype and fast.tolist() == slow.tolist()
        assert fast_rng.random() == slow_rng.random()
        made.append(len(fast))
    assert min(made) == 0 and max(made) == 4 and len(set(made)) == 5


def test_a_small_pool_on_floats_is_decided_as_by_the_blocks() -> None:
    """small_pool_pairs (a pass of 2 to block_size players on floats, DrawChance under a
    Gaussian quality) against the general block solver with DrawChance: the same pairs in the
    same order, each with its quality as the pool's quality function gives it, and the random
    stream left in the same place; over pools near and far from the threshold, ties of means
    (and of -0.0 and 0.0), equal waits and both wait orders."""
    from lobbysim.sim.fast.small_pass import small_pool_pairs
    from lobbysim.streams import Uniforms

    policy = POLICIES.create("draw_chance")
    threshold = ThresholdSchedule(((0.0, 0.75), (1.0, 0.5), (2.0, 0.4)))
    draws = np.random.default_rng(8)
    made: dict[int, set[int]] = {n: set() for n in range(2, 9)}
    for _ in range(1500):
        n = int(draws.integers(2, 9))
        mu = draws.normal(0, 2, n) * draws.choice([0.2, 1.0, 1.0, 8.0])
        if draws.random() < 0.15:
            mu[-1] = mu[0]
        if draws.random() < 0.05:
            mu[0], mu[-1] = 0.0, -0.0
        var = draws.uniform(0.2, 3, n)
        waited = draws.choice([0.5, 1.0, 1.5, 2.0, 3.0], n) if draws.random() < 0.3 else None
        waited = draws.uniform(0, 4, n) if waited is None else waited
        pool = make_pool(mu, var, waited)
        seed = int(draws.integers(1 << 30))
        fast_rng, slow_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        mu_l, var_l = mu.tolist(), var.tolist()

        fast = small_pool_pairs(
            mu_l, var_l, waited.tolist(), BETA2, threshold, (fast_ties := Uniforms(fast_rng)).take
        )
        slow = GlobalMatching(block_size=8)._blocks(pool, policy, threshold, slow_rng, 3)
        assert fast is not None
        assert [[a, b] for a, b, _ in fast] == slow.tolist()
        if len(slow):
            expected = pool.quality_fn(slow[:, 0], slow[:, 1]).tolist()
            assert [q for _, _, q in fast] == expected
        assert fast_ties.generator().random() == slow_rng.random()
        made[n].add(len(fast))
    assert all(made[n] == set(range(n // 2 + 1)) for n in made), made


def test_a_small_pool_breaks_ties_as_the_blocks_do() -> None:
    """Pools of 3 to 5 whose pairs tie in quality (means on a grid of whole numbers, one
    variance for all): small_pool_pairs, with the tie-break uniforms drawn as a
    streams.Uniforms hands them out, against the block solver with the generator itself; the
    same pairs and the same tie-breaks, pass after pass on one stream."""
    from lobbysim.sim.fast.small_pass import small_pool_pairs
    from lobbysim.streams import Uniforms

    policy = POLICIES.create("draw_chance")
    threshold = ThresholdSchedule(((0.0, 0.6), (1.0, 0.3)))
    draws = np.random.default_rng(5)
    fast_ties, slow_rng = Uniforms(np.random.default_rng(9)), np.random.default_rng(9)
    picked: set[tuple[tuple[int, int], ...]] = set()
    for _ in range(600):
        n = int(draws.integers(3, 6))
        mu = draws.integers(0, 3, n).astype(float)
        var = np.full(n, float(draws.choice([0.5, 1.0])))
        waited = draws.choice([0.5, 1.5], n)
        fast = small_pool_pairs(
            mu.tolist(), var.tolist(), waited.tolist(), BETA2, threshold, fast_ties.take
        )
        slow = GlobalMatching(block_size=8)._blocks(
            make_pool(mu, var, waited), policy, threshold, slow_rng, 3
        )
        assert fast is not None
        assert [[a, b] for a, b, _ in fast] == slow.tolist()
        if n == 3:
            picked.add(tuple((a, b) for a, b, _ in fast))
    assert fast_ties.generator().random() == slow_rng.random()
    assert len(picked) >= 4  # the ties went several ways


def test_a_small_pool_leaves_what_floats_cannot_decide_to_the_arrays() -> None:
    """A NaN mean or a quality that is not finite (a NaN variance) in a pool of three or more:
    None, and nothing drawn; a pool of two decides even then (as GlobalMatching._two does)."""
    from lobbysim.sim.fast.small_pass import small_pool_pairs
    from lobbysim.skill.gaussian import match_quality_of_pairs

    threshold = ThresholdSchedule(((0.0, 0.5),))
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state

    def draw(k: int) -> list[float]:
        return rng.random(k).tolist()

    for n in (3, 4, 6):
        mu, var = [0.0, 0.5, 0.25, 0.75, 1.0, 0.1][:n], [1.0] * n
        assert small_pool_pairs(mu, var, [1.0] * n, BETA2, threshold, draw) is not None
        state = rng.bit_generator.state
        nan_mean = [mu[0], math.nan, *mu[2:]]
        assert small_pool_pairs(nan_mean, var, [1.0] * n, BETA2, threshold, draw) is None
        nan_var = [*var[:-1], math.nan]
        assert small_pool_pairs(mu, nan_var, [1.0] * n, BETA2, threshold, draw) is None
        assert rng.bit_generator.state == state
    (q,) = match_quality_of_pairs([math.nan, 0.0], [1.0, 1.0], [1], [0], BETA2)
    assert math.isnan(q)  # not admissible: the pool of two is decided, with no pair
    assert small_pool_pairs([math.nan, 0.0], [1.0, 1.0], [1.0, 1.0], BETA2, threshold, draw) == []
    (q,) = match_quality_of_pairs([0.5, 0.0], [1.0, 1.0], [1], [0], BETA2)
    got = small_pool_pairs([0.5, 0.0], [1.0, 1.0], [1.0, 1.0], BETA2, threshold, draw)
    assert q > 0.5 and got == [(1, 0, q)]
    assert small_pool_pairs([0.0, 40.0], [1.0, 1.0], [1.0, 1.0], BETA2, threshold, draw) == []


def list_quality(
    mu: list[float], var: list[float]
) -> Callable[[list[int], list[int]], list[float]]:
    """The match quality of pairs of pool indices, on lists (as a small pass asks for it)."""
    from lobbysim.skill.gaussian import match_quality_of_pairs

    def quality(a: list[int], b: list[int]) -> list[float]:
        return match_quality_of_pairs(mu, var, a, b, BETA2)

    return quality
