"""Tests of the raters (lobbysim.raters): the Bayesian pair rule, the SPH Elo fast path, batches.

The oracles are the skill modules themselves, called one pair or one game at a time:
:func:`update_1v1` for the Bayesian rater and :func:`rating_changes` / :func:`rate_game` for the
SPH Elo. Batch updates are checked against loops of single-game updates.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

import lobbysim.raters.sph_elo as sph_elo_rater_module
from lobbysim.raters import RATERS, BayesianRater, Rater, SPHEloRater
from lobbysim.raters.base import EvenMatchQuality, PlayerTable, waves
from lobbysim.records.rows import DuelBatch, GameResult, Seat
from lobbysim.registry import PluginError, declared_parameters
from lobbysim.skill.gaussian import match_quality, update_1v1, win_probability
from lobbysim.skill.sph_elo import Participant, SPHParams, rate_game, rating_changes

PROPERTY_SETTINGS = settings(max_examples=100, deadline=None)


def seat(
    pid: int,
    team: int | None,
    score: float,
    joined: float = 0.0,
    left: float = 20.0,
    registered: bool = True,
) -> Seat:
    """A stint of ``pid`` in a game."""
    return Seat(pid, team, joined, left, score, registered, left < 20.0, 0.0)


def duel(
    gid: int, a: int, b: int, winner: int, score_a: float = 10.0, score_b: float = 5.0
) -> GameResult:
    """A full-time 1v1 game of 20 minutes: ``a`` on side 0, ``b`` on side 1."""
    return GameResult(gid, "1v1", 0.0, 20.0, (seat(a, 0, score_a), seat(b, 1, score_b)), winner)


def game(gid: int, mode: str, seats: list[Seat], length: float = 20.0) -> GameResult:
    """A team or ffa game from 0 to ``length`` minutes (no winner: SPH decides)."""
    return GameResult(gid, mode, 0.0, length, tuple(seats), None)


def bayesian(mu: list[float], var: list[float], **params: float) -> BayesianRater:
    """A Bayesian rater with players 0..n-1 at the given beliefs."""
    rater = BayesianRater(**params)
    rater.add_players(np.arange(len(mu)), np.array(mu), np.array(var))
    return rater


def sph_elo(ratings: list[float], **params: float) -> SPHEloRater:
    """An SPH Elo rater with players 0..n-1 at the given ratings."""
    rater = SPHEloRater(**params)
    ids = np.arange(len(ratings))
    rater.add_players(ids, np.zeros(len(ids)), np.ones(len(ids)))
    rater._table.columns[0][ids] = ratings  # white-box: start from arbitrary ratings
    return rater


def state(rater: Rater, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Means and variances of players 0..n-1."""
    ids = np.arange(n)
    return rater.means(ids), rater.variances(ids)


# --------------------------------------------------------------------------------------------
# Player table
# --------------------------------------------------------------------------------------------


def test_add_players_in_batches_grows_and_keeps_values() -> None:
    rater = BayesianRater()
    rng = np.random.default_rng(0)
    mu_all = rng.normal(25, 3, 300)
    var_all = rng.uniform(1, 9, 300)
    for lo, hi in [(0, 1), (1, 2), (2, 40), (40, 41), (41, 300)]:
        ids = np.arange(lo, hi)
        rater.add_players(ids, mu_all[lo:hi], var_all[lo:hi])
    np.testing.assert_array_equal(rater.means(np.arange(300)), mu_all)
    np.testing.assert_array_equal(rater.variances(np.arange(300)), var_all)
    with pytest.raises(ValueError, match="player id 5 is already added"):
        rater.add_players(np.array([5]), np.array([0.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="var0"):
        rater.add_players(np.array([300]), np.array([0.0]), np.array([0.0]))


def test_unknown_ids_are_named() -> None:
    for rater in (bayesian([20.0, 25.0], [1.0, 1.0]), sph_elo([400.0, 500.0])):
        before = rater.means(np.arange(2)).copy()
        with pytest.raises(KeyError, match="unknown player id 7"):
            rater.means(np.array([0, 7]))
        with pytest.raises(KeyError, match="unknown player id 9"):
            rater.update([duel(0, 0, 1, winner=0), duel(1, 1, 9, winner=0)])
        # All or nothing: the valid first game was not applied either.
        np.testing.assert_array_equal(rater.means(np.arange(2)), before)


def test_the_id_check_fast_path_agrees_with_the_plain_rule() -> None:
    """``index`` accepts ids exactly when each is known (ids below ``n_dense`` skip the lookup)."""
    rng = np.random.default_rng(11)
    for trial in range(60):
        table = PlayerTable("t", 1)
        added: set[int] = set()
        for _ in range(rng.integers(1, 5)):
            lo = int(rng.integers(0, 40))
            ids = [i for i in range(lo, lo + int(rng.integers(1, 30))) if i not in added]
            if rng.random() < 0.3:  # a gap: not every id is added
                ids = ids[::2]
            table.add(np.array(ids, dtype=np.int64), [np.zeros(len(ids))])
            added.update(ids)
        assert set(range(table.n_dense)) <= added and table.n_dense not in added
        for _ in range(30):
            query = rng.integers(-3, 75, size=int(rng.integers(1, 6)))
            plain_ok = all(int(i) in added for i in query)
            try:
                np.testing.assert_array_equal(table.index(query), query)
                assert plain_ok, (trial, query)
            except KeyError as exc:
                assert not plain_ok, (trial, query)
                bad = next(int(i) for i in query if int(i) not in added)
                assert f"unknown player id {bad}" in str(exc)


def test_failed_batch_changes_nothing() -> None:
    b = bayesian([20.0, 25.0, 30.0], [4.0, 4.0, 4.0])
    with pytest.raises(KeyError, match="unknown player id 9"):
        b.update([duel(0, 0, 1, winner=0), duel(1, 1, 9, winner=0)])
    np.testing.assert_array_equal(b.means(np.arange(3)), [20.0, 25.0, 30.0])
    # SPH Elo: the bad game is in a later wave, found only after the first wave was written.
    s = sph_elo([400.0, 500.0, 600.0])
    bad = game(2, "ffa", [seat(1, None, -3.0), seat(2, None, 1.0)])
    with pytest.raises(ValueError, match="score"):
        s.update([duel(0, 0, 1, winner=0), bad])
    np.testing.assert_array_equal(s.means(np.arange(3)), [400.0, 500.0, 600.0])


def test_waves_split_at_the_first_shared_player() -> None:
    assert waves([(0, 1), (2, 3), (0, 2), (4, 5), (), (5, 6)]) == [
        range(0, 2),
        range(2, 5),
        range(5, 6),
    ]
    assert waves([(0, 1), (2, 3), (), (4, 5)]) == [range(0, 4)]  # nobody twice: one wave
    assert waves([]) == [] and waves([(), ()]) == [range(0, 2)]


def test_waves_are_the_maximal_runs_without_a_shared_player() -> None:
    """The split of random batches (the quick answer for a batch with nobody twice included)
    against the rule itself: each wave has nobody twice, and its next game shares somebody."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        groups = [
            tuple(rng.choice(30, size=int(rng.integers(0, 4)), replace=False).tolist())
            for _ in range(int(rng.integers(0, 12)))
        ]
        runs = waves(groups)
        assert [k for run in runs for k in run] == list(range(len(groups)))
        for run in runs:
            ids = [pid for k in run for pid in groups[k]]
            assert len(ids) == len(set(ids))
            if run.stop < len(groups):
                assert set(ids) & set(groups[run.stop])


# --------------------------------------------------------------------------------------------
# Bayesian rater: 1v1
# --------------------------------------------------------------------------------------------


def test_bayesian_1v1_is_update_1v1_of_winner_and_loser() -> None:
    rater = bayesian([25.0, 22.0], [9.0, 4.0], beta2=2.5)
    rater.update([duel(0, 0, 1, winner=1)])  # the underdog on side 1 wins
    mu_w, var_w, mu_l, var_l = update_1v1(22.0, 4.0, 25.0, 9.0, 2.5)
    mu, var = state(rater, 2)
    np.testing.assert_allclose(mu, [mu_l, mu_w], rtol=1e-15)
    np.testing.assert_allclose(var, [var_l, var_w], rtol=1e-15)
    assert mu[1] > 22.0 and mu[0] < 25.0


def test_bayesian_1v1_with_a_guest_changes_nothing() -> None:
    rater = bayesian([25.0, 22.0], [9.0, 4.0], tau2=1.0)
    guest_game = GameResult(
        0, "1v1", 0.0, 20.0, (seat(0, 0, 3.0), seat(1, 1, 9.0, registered=False)), 0
    )
    unknown_guest = GameResult(
        1, "1v1", 0.0, 20.0, (seat(0, 0, 3.0), seat(77, 1, 9.0, registered=False)), 1
    )
    rater.update([guest_game, unknown_guest])
    mu, var = state(rater, 2)
    np.testing.assert_array_equal(mu, [25.0, 22.0])
    np.testing.assert_array_equal(var, [9.0, 4.0])


def test_bayesian_tau2_inflates_the_variance_before_the_update() -> None:
    rater = bayesian([25.0, 22.0], [0.5, 0.5], tau2=2.0)
    rater.update([duel(0, 0, 1, winner=0)])
    mu_w, var_w, mu_l, var_l = update_1v1(25.0, 0.5 + 2.0, 22.0, 0.5 + 2.0, 2.5)
    mu, var = state(rater, 2)
    np.testing.assert_allclose(mu, [mu_w, mu_l], rtol=1e-15)
    np.testing.assert_allclose(var, [var_w, var_l], rtol=1e-15)
    assert (var > 0.5).all()  # the drift outweighs one game's information here
    static = bayesian([25.0, 22.0], [0.5, 0.5])
    static.update([duel(0, 0, 1, winner=0)])
    assert (static.variances(np.arange(2)) < 0.5).all()


def test_bayesian_1v1_rejects_a_winner_that_is_no_side() -> None:
    rater = bayesian([25.0, 22.0], [9.0, 4.0])
    no_winner = GameResult(3, "1v1", 0.0, 20.0, duel(3, 0, 1, winner=0).seats, None)
    with pytest.raises(ValueError, match=r"game 3 .*winner None"):
        rater.update([no_winner])
    three_seats = GameResult(4, "1v1", 0.0, 20.0, (*no_winner.seats, seat(2, 1, 0.0)), 0)
    with pytest.raises(ValueError, match="exactly 2 seats"):
        rater.update([three_seats])


def mixed_batch() -> list[GameResult]:
    """Games where players recur (0 in games 1 and 3, 5 in a 1v1 and a team game)."""
    return [
        duel(0, 0, 1, winner=0),
        duel(1, 2, 3, winner=1),
        duel(2, 0, 2, winner=1, score_a=3.0, score_b=8.0),
        game(
            3,
            "team",
            [seat(4, 0, 6.0), seat(5, 0, 2.0, 5.0), seat(6, 1, 3.0), seat(7, 1, 1.0, 0.0, 10.0)],
        ),
        duel(4, 5, 8, winner=0, score_a=4.0, score_b=4.0),
        game(5, "ffa", [seat(1, None, 4.0), seat(3, None, 7.0, 2.0), seat(9, None, 0.0, 0.0, 5.0)]),
        duel(6, 10, 11, winner=1),
        duel(7, 12, 13, winner=0, score_a=0.0, score_b=0.0),
    ]


@pytest.mark.parametrize("name", ["bayesian", "sph_elo"])
def test_batch_equals_one_game_at_a_time(name: str) -> None:
    rng = np.random.default_rng(3)
    mu0, var0 = rng.normal(25, 3, 14), rng.uniform(1, 9, 14)
    batch = RATERS.create(name, {"tau2": 0.3} if name == "bayesian" else {})
    single = RATERS.create(name, {"tau2": 0.3} if name == "bayesian" else {})
    for r in (batch, single):
        r.add_players(np.arange(14), mu0, var0)
    if name == "sph_elo":
        ratings = rng.normal(500, 100, 14)
        for r in (batch, single):
            r._table.columns[0][:14] = ratings  # type: ignore[attr-defined]
    before, _ = state(batch, 14)
    games = mixed_batch()
    batch.update(games)
    sums = []
    for g in games:
        single.update([g])
        if isinstance(single, SPHEloRater):
            sums.extend(single.last_batch_change_sums)
    mu_b, var_b = state(batch, 14)
    mu_s, var_s = state(single, 14)
    np.testing.assert_allclose(mu_b, mu_s, rtol=1e-12)
    if var_b is not None and var_s is not None:
        np.testing.assert_allclose(var_b, var_s, rtol=1e-12)
    else:
        assert isinstance(batch, SPHEloRater)
        assert batch.last_batch_change_sums == pytest.approx(sums, abs=1e-12)
    moved = [0, 1, 2, 3, 4, 6, 9, 10, 11]  # the comparison is not vacuous
    assert (mu_b[moved] != before[moved]).all()


def test_the_table_views_are_the_columns_through_growth_and_pickling() -> None:
    """PlayerTable.views (read and written by the one-player paths) are the columns themselves:
    after the columns grow (new arrays), a write through either shows in the other, and a
    pickled table comes back with views of its own columns; a rater grown after one-game
    updates reads the same beliefs through its lists and its arrays."""
    import pickle

    table = PlayerTable("t", 2)
    for lo, hi in ((0, 3), (3, 40), (40, 41)):  # 16, then 40 (doubling: 32 < 40), then 80
        table.add(np.arange(lo, hi), [np.arange(lo, hi) + 0.5, np.ones(hi - lo)])
        for col, view in zip(table.columns, table.views, strict=True):
            assert view.obj is col and view.tolist() == col.tolist()
    table.views[0][39] = -1.25
    table.columns[1][2] = 7.0
    assert table.columns[0][39] == -1.25 and table.views[1][2] == 7.0
    copy = pickle.loads(pickle.dumps(table))
    assert [v.tolist() for v in copy.views] == [c.tolist() for c in table.columns]
    copy.views[0][0] = 3.0
    assert copy.columns[0][0] == 3.0 and table.columns[0][0] == 0.5

    rater = bayesian([25.0, 20.0], [8.0, 8.0])
    rater.rate_duel(1, 0)
    rater.add_players(np.arange(2, 40), np.full(38, 25.0), np.full(38, 8.0))  # columns grow
    rater.rate_duel(0, 39)
    mu, var = rater.belief_lists([0, 1, 39])
    assert mu == rater.means(np.array([0, 1, 39])).tolist() and mu[2] < 25.0 and mu[1] > 20.0
    assert var == rater.variances(np.array([0, 1, 39])).tolist()
    assert rater.belief_pair(39, 1) == (mu[2], var[2], mu[1], var[1])


def test_rate_duels_is_update_of_the_games_with_those_outcomes() -> None:
    """BayesianRater.rate_duels (the outcomes of games whose scores are not drawn yet) against
    update() of the same games, bit for bit: one game, a few of different players (applied one
    by one on floats), more than FLOAT_DUELS, and batches where a player plays twice (waves);
    an unknown player raises and changes nothing."""
    from lobbysim.raters.bayesian import FLOAT_DUELS

    rng = np.random.default_rng(8)
    n = 12
    mu0, var0 = rng.normal(25, 3, n).tolist(), rng.uniform(0.5, 9, n).tolist()
    batches = [[(3, 7)], [(0, 1), (2, 3)], [(4, 5), (6, 7), (8, 9), (10, 11)]]
    batches += [[(2 * k, 2 * k + 1) for k in range(FLOAT_DUELS + 1)], [(0, 1), (1, 2)]]
    batches += [[(0, 1), (2, 3), (3, 0)], [(5, 4), (4, 5)]]
    for _ in range(30):
        k = int(rng.integers(1, 7))
        batches.append([tuple(rng.choice(n, 2, replace=False).tolist()) for _ in range(k)])
    fast = bayesian(mu0, var0, tau2=0.2)
    plain = bayesian(mu0, var0, tau2=0.2)
    for batch in batches:
        fast.rate_duels(batch)
        plain.update([duel(g, w, lo, winner=0) for g, (w, lo) in enumerate(batch)])
        mu_f, var_f = state(fast, n)
        mu_p, var_p = state(plain, n)
        assert mu_f.tolist() == mu_p.tolist() and var_f.tolist() == var_p.tolist()
    assert mu_f.tolist() != mu0
    with pytest.raises(KeyError, match="99"):
        fast.rate_duels([(0, 1), (2, 99)])
    assert state(fast, n)[0].tolist() == mu_f.tolist()


def test_batch_waves_matter() -> None:
    # Player 0 plays games 1 and 3: game 3 must see the beliefs after game 1.
    games = [duel(0, 0, 1, winner=0), duel(1, 2, 3, winner=1), duel(2, 0, 2, winner=1)]
    rater = bayesian([25.0, 25.0, 25.0, 25.0], [8.0, 8.0, 8.0, 8.0])
    rater.update(games)
    mu_w, var_w, mu_l, var_l = update_1v1(25.0, 8.0, 25.0, 8.0, 2.5)  # games 1 and 2 alike
    expected = update_1v1(mu_l, var_l, mu_w, var_w, 2.5)  # game 3: 2 (a winner) beats 0
    np.testing.assert_array_equal(rater.means(np.array([2, 0])), [expected[0], expected[2]])
    np.testing.assert_array_equal(rater.variances(np.array([2, 0])), [expected[1], expected[3]])


# --------------------------------------------------------------------------------------------
# Bayesian rater: team and ffa games (the pair rule)
# --------------------------------------------------------------------------------------------


def pair_rule(
    g: GameResult, mu: dict[int, float], var: dict[int, float], beta2: float, tau2: float = 0.0
) -> tuple[dict[int, float], dict[int, float], dict[tuple[int, int], float]]:
    """The documented combination rule, pair by pair with scalar update_1v1 calls."""
    rated = [s for s in g.seats if s.registered]
    var0 = var
    var = {pid: v + tau2 for pid, v in var.items()}
    weights: dict[tuple[int, int], float] = {}
    for s, o in itertools.permutations(rated, 2):
        if g.mode == "team" and s.team == o.team:
            continue
        overlap = min(s.left, o.left) - max(s.joined, o.joined)
        if overlap > 0:
            weights[s.player_id, o.player_id] = overlap / g.length
    n = {s.player_id: sum(1 for i, _ in weights if i == s.player_id) for s in rated}
    new_mu, new_var = dict(mu), dict(var)
    for s in rated:
        i = s.player_id
        dmu, factor = 0.0, 1.0
        for o in rated:
            j = o.player_id
            if (i, j) not in weights:
                continue
            sph_i = Fraction(s.score) / Fraction(s.minutes)
            sph_j = Fraction(o.score) / Fraction(o.minutes)
            if sph_i == sph_j:
                continue
            if sph_i > sph_j:
                m, v, _, _ = update_1v1(mu[i], var[i], mu[j], var[j], beta2)
            else:
                _, _, m, v = update_1v1(mu[j], var[j], mu[i], var[i], beta2)
            share = weights[i, j] / n[i]
            dmu += share * (float(m) - mu[i])
            factor *= (float(v) / var[i]) ** share
        if n[i]:
            new_mu[i] = mu[i] + dmu
            new_var[i] = var[i] * factor
        else:
            new_var[i] = var0[i]
    return new_mu, new_var, weights


def test_bayesian_2v2_with_a_late_joiner_and_a_quitter() -> None:
    # Team 0: players 0 (full game), 1 (quit at 10). Team 1: 2 (full game), 3 (joined at 5).
    g = game(
        0,
        "team",
        [seat(0, 0, 12.0), seat(1, 0, 4.0, 0.0, 10.0), seat(2, 1, 9.0), seat(3, 1, 9.0, 5.0)],
    )
    mu = {0: 25.0, 1: 20.0, 2: 27.0, 3: 24.0}
    var = {0: 6.0, 1: 3.0, 2: 8.0, 3: 5.0}
    new_mu, new_var, weights = pair_rule(g, mu, var, beta2=2.5)
    assert weights == {
        (0, 2): 1.0,
        (0, 3): 0.75,  # 15 of 20 minutes together
        (1, 2): 0.5,
        (1, 3): 0.25,  # 5 to 10
        (2, 0): 1.0,
        (2, 1): 0.5,
        (3, 0): 0.75,
        (3, 1): 0.25,
    }
    rater = bayesian([mu[i] for i in range(4)], [var[i] for i in range(4)], beta2=2.5)
    rater.update([g])
    got_mu, got_var = state(rater, 4)
    np.testing.assert_allclose(got_mu, [new_mu[i] for i in range(4)], rtol=1e-12)
    np.testing.assert_allclose(got_var, [new_var[i] for i in range(4)], rtol=1e-12)
    # SPH 36/h (0) > 27/h (2) < 36/h (3, 9 in 15 min) ... 0 ties with 3: only (0, 2) moves 0.
    assert got_mu[0] > mu[0] and got_mu[1] < mu[1]


def test_bayesian_equal_sph_gives_no_update_for_that_pair() -> None:
    # 11 points in 11 minutes ties exactly with 10 in 10 (although 11/(11/60) != 10/(10/60)).
    tie = game(0, "ffa", [seat(0, None, 11.0, 0.0, 11.0), seat(1, None, 10.0, 10.0, 20.0)])
    rater = bayesian([25.0, 21.0], [6.0, 3.0])
    rater.update([tie])
    np.testing.assert_array_equal(rater.means(np.arange(2)), [25.0, 21.0])
    np.testing.assert_array_equal(rater.variances(np.arange(2)), [6.0, 3.0])
    # In a three-player ffa the tied pair still counts in n_i (one game's worth is shared).
    three = game(
        1,
        "ffa",
        [seat(0, None, 11.0, 0.0, 11.0), seat(1, None, 10.0, 0.0, 10.0), seat(2, None, 1.0)],
    )
    rater = bayesian([25.0, 21.0, 23.0], [6.0, 3.0, 4.0], tau2=0.2)
    rater.update([three])
    exp_mu, exp_var, _ = pair_rule(three, {0: 25.0, 1: 21.0, 2: 23.0}, {0: 6, 1: 3, 2: 4}, 2.5, 0.2)
    np.testing.assert_allclose(rater.means(np.arange(3)), [exp_mu[i] for i in range(3)], rtol=1e-12)
    np.testing.assert_allclose(
        rater.variances(np.arange(3)), [exp_var[i] for i in range(3)], rtol=1e-12
    )


EPS = 2.0**-52


def barely_faster_pair(mode: str) -> GameResult:
    """Player 0 has the higher SPH by a relative 2^-104, invisible to rounded float products.

    SPH_0 = (1 + e) / 1 and SPH_1 = (1 + 2e) / (1 + e) with e = 2^-52: exactly,
    (1 + e)^2 = 1 + 2e + e^2 > 1 + 2e, but both products round to 1 + 2e.
    """
    team0, team1 = (None, None) if mode == "ffa" else (0, 1)
    return GameResult(
        0,
        mode,
        0.0,
        1.0 + EPS,
        (
            Seat(0, team0, 0.0, 1.0, 1.0 + EPS, True, False, 0.0),
            Seat(1, team1, 0.0, 1.0 + EPS, 1.0 + 2 * EPS, True, False, 0.0),
        ),
        0,
    )


def test_sph_comparison_is_exact_when_float_products_tie() -> None:
    g = barely_faster_pair("ffa")
    assert (1.0 + EPS) * (1.0 + EPS) == (1.0 + 2 * EPS) * 1.0  # the float products tie
    rater = bayesian([25.0, 25.0], [4.0, 4.0])
    rater.update([g])
    mu = rater.means(np.arange(2))
    assert mu[0] > 25.0 > mu[1]  # not treated as a tie: player 0 won
    for mode in ("ffa", "1v1"):
        elo = sph_elo([500.0, 500.0])
        elo.update([barely_faster_pair(mode)])
        expected = rate_game(
            [
                Participant(s.player_id, s.team, s.score, s.minutes, True, 500.0)
                for s in barely_faster_pair(mode).seats
            ]
        )
        assert expected[0] > 500.0
        np.testing.assert_array_equal(elo.means(np.arange(2)), [expected[0], expected[1]])


def test_bayesian_teammates_are_never_compared() -> None:
    # Opponents are guests: no pair at all, so nothing changes although 0 and 1 differ in SPH.
    g = game(
        0,
        "team",
        [seat(0, 0, 30.0), seat(1, 0, 1.0), seat(2, 1, 5.0, registered=False), seat(3, 1, 2.0)],
    )
    g = GameResult(0, "team", 0.0, 20.0, (*g.seats[:3], seat(3, 1, 2.0, registered=False)), 0)
    rater = bayesian([25.0, 22.0, 0.0, 0.0], [6.0, 3.0, 1.0, 1.0], tau2=1.0)
    rater.update([g])
    np.testing.assert_array_equal(rater.means(np.arange(2)), [25.0, 22.0])
    np.testing.assert_array_equal(rater.variances(np.arange(2)), [6.0, 3.0])
    # A teammate's score does not touch player 0's update.
    results = []
    for teammate_score in (0.0, 100.0):
        two = game(
            1,
            "team",
            [seat(0, 0, 8.0), seat(1, 0, teammate_score), seat(2, 1, 5.0), seat(3, 1, 9.0)],
        )
        r = bayesian([25.0, 22.0, 24.0, 26.0], [6.0, 3.0, 5.0, 4.0])
        r.update([two])
        results.append((r.means(np.array([0]))[0], r.variances(np.array([0]))[0]))
    assert results[0] == results[1]


@st.composite
def ffa_games(draw: st.DrawFn, mode: str = "ffa") -> tuple[GameResult, np.ndarray, np.ndarray]:
    """A random ffa (or team) game of 2-8 rated players with random stints and scores."""
    n = draw(st.integers(2, 8))
    length = draw(st.floats(1.0, 30.0))
    seats = []
    for pid in range(n):
        a = draw(st.floats(0.0, length))
        b = draw(st.floats(0.0, length))
        score = draw(st.one_of(st.integers(0, 30).map(float), st.floats(0.0, 1e3)))
        team = None if mode == "ffa" else draw(st.integers(0, 1))
        seats.append(Seat(pid, team, min(a, b), max(a, b), score, True, False, 0.0))
    order = draw(st.permutations(range(n)))
    mu = np.array(draw(st.lists(st.floats(-50, 50), min_size=n, max_size=n)))
    var = np.array(draw(st.lists(st.floats(1e-3, 100.0), min_size=n, max_size=n)))
    return GameResult(0, mode, 0.0, length, tuple(seats[k] for k in order), None), mu, var


@PROPERTY_SETTINGS
@given(ffa_games(), st.floats(0.1, 10.0))
def test_bayesian_ffa_variances_stay_positive_and_never_grow(
    case: tuple[GameResult, np.ndarray, np.ndarray], beta2: float
) -> None:
    g, mu, var = case
    rater = bayesian(list(mu), list(var), beta2=beta2)
    rater.update([g])
    new_mu, new_var = state(rater, len(mu))
    assert new_var is not None
    assert np.isfinite(new_mu).all()
    assert (new_var > 0).all()
    assert (new_var <= var).all()


@PROPERTY_SETTINGS
@given(st.sampled_from(["ffa", "team"]).flatmap(ffa_games), st.randoms(use_true_random=False))
def test_bayesian_result_ignores_seat_order_and_matches_the_pair_rule(
    case: tuple[GameResult, np.ndarray, np.ndarray], rnd: Any
) -> None:
    g, mu, var = case
    shuffled = list(g.seats)
    rnd.shuffle(shuffled)
    results = []
    for seats in (g.seats, tuple(shuffled)):
        rater = bayesian(list(mu), list(var), tau2=0.1)
        rater.update([GameResult(0, g.mode, g.start, g.end, seats, None)])
        results.append(state(rater, len(mu)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    ids = range(len(mu))
    exp_mu, exp_var, _ = pair_rule(
        g,
        dict(zip(ids, mu.tolist(), strict=True)),
        dict(zip(ids, var.tolist(), strict=True)),
        2.5,
        0.1,
    )
    np.testing.assert_allclose(results[0][0], [exp_mu[i] for i in ids], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][1], [exp_var[i] for i in ids], rtol=1e-12)


def test_an_overlap_too_short_for_a_positive_weight_still_makes_opponents() -> None:
    # Found by the property test above: 5e-324 minutes together over a 2-minute game gives a
    # weight that underflows to 0.0, yet the two met: both get the dynamics variance (their
    # equal scores are a draw, no update), as the pair rule says; the bystanders get nothing.
    stints = [Seat(0, None, 0.0, 1.0, 0.0, True, False, 0.0),
              Seat(1, None, 0.0, 5e-324, 0.0, True, False, 0.0),
              Seat(2, None, 0.0, 0.0, 0.0, True, False, 0.0)]  # fmt: skip
    g = GameResult(0, "ffa", 0.0, 2.0, tuple(stints), None)
    rater = bayesian([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], tau2=0.1)
    rater.update([g])
    _, var = state(rater, 3)
    mu, exp_var, weights = pair_rule(
        g, dict.fromkeys(range(3), 0.0), dict.fromkeys(range(3), 1.0), 2.5, 0.1
    )
    assert set(weights) == {(0, 1), (1, 0)} and mu == dict.fromkeys(range(3), 0.0)
    np.testing.assert_allclose(var, [exp_var[i] for i in range(3)], rtol=1e-15)
    assert var.tolist() == pytest.approx([1.1, 1.1, 1.0], rel=1e-15)


def test_bayesian_rejects_malformed_team_games() -> None:
    rater = bayesian([0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="player 1 has team None"):
        rater.update([game(0, "team", [seat(0, 0, 1.0), seat(1, None, 1.0)])])
    with pytest.raises(ValueError, match="player 0 has more than one seat"):
        rater.update([game(0, "ffa", [seat(0, None, 1.0), seat(0, None, 1.0, 2.0)])])
    with pytest.raises(ValueError, match="mode"):
        rater.update([game(0, "2v2v2", [seat(0, None, 1.0)])])


# --------------------------------------------------------------------------------------------
# SPH Elo rater
# --------------------------------------------------------------------------------------------


@st.composite
def duels(draw: st.DrawFn) -> tuple[list[GameResult], list[float]]:
    """1-6 ordinary 1v1 games between disjoint players, with random ratings."""
    n_games = draw(st.integers(1, 6))
    games, ratings = [], []
    score = st.one_of(st.integers(0, 40).map(float), st.floats(0.0, 1e3))
    for k in range(n_games):
        seats = []
        for side in (0, 1):
            joined = draw(st.floats(0.0, 30.0))
            left = draw(st.floats(joined + 1e-3, 60.0))
            seats.append(Seat(2 * k + side, side, joined, left, draw(score), True, False, 0.0))
            ratings.append(draw(st.floats(0.0, 1500.0)))
        if draw(st.booleans()):
            seats.reverse()
        games.append(GameResult(k, "1v1", 0.0, 60.0, tuple(seats), draw(st.sampled_from([0, 1]))))
    return games, ratings


@PROPERTY_SETTINGS
@given(
    duels(),
    st.floats(10.0, 400.0),
    st.floats(0.5, 5.0),
    st.sampled_from([5.0, 20.0, math.inf]),
)
def test_sph_elo_fast_path_equals_rating_changes(
    case: tuple[list[GameResult], list[float]],
    t: float,
    game_mult: float,
    max_game_length: float,
) -> None:
    games, ratings = case
    params = SPHParams(t, game_mult, max_game_length)
    rater = sph_elo(ratings, t=t, game_mult=game_mult, max_game_length=max_game_length)
    with pytest.MonkeyPatch.context() as mp:  # the fast path must not fall back
        mp.setattr(sph_elo_rater_module, "rating_changes", None)
        rater.update(games)
    for g in games:
        expected = rating_changes(
            [
                Participant(s.player_id, s.team, s.score, s.minutes, True, ratings[s.player_id])
                for s in g.seats
            ],
            params,
        )
        for pid, change in expected.items():
            got = rater.means(np.array([pid]))[0] - ratings[pid]
            assert got == pytest.approx(change, rel=1e-12, abs=1e-12 * (1 + abs(ratings[pid])))
    assert rater.last_batch_change_sums == [0.0] * len(games)


def test_sph_elo_decides_1v1_by_sph_not_winner() -> None:
    rater = sph_elo([500.0, 500.0])
    # Side 0 "won" (e.g. the other quit) but side 1 has the higher score per hour.
    rater.update([duel(0, 0, 1, winner=0, score_a=3.0, score_b=9.0)])
    mu = rater.means(np.arange(2))
    assert mu[1] > 500.0 > mu[0]
    np.testing.assert_allclose(mu, [480.0, 520.0], rtol=1e-15)  # 0.5 * 2 * 20 each way


def test_sph_elo_unusual_1v1_games_follow_rating_changes() -> None:
    ratings = [450.0, 620.0, 500.0, 530.0]
    zero_minutes = GameResult(0, "1v1", 0.0, 20.0, (seat(0, 0, 3.0), seat(1, 1, 0.0, 5.0, 5.0)), 0)
    with_guest = GameResult(
        1, "1v1", 0.0, 20.0, (seat(2, 0, 3.0), seat(3, 1, 9.0, registered=False)), 1
    )
    rater = sph_elo(ratings)
    rater.update([zero_minutes, with_guest])
    np.testing.assert_array_equal(rater.means(np.arange(4)), ratings)
    assert rater.last_batch_change_sums == [0.0, 0.0]


def test_sph_elo_ffa_with_a_guest_matches_rate_game() -> None:
    ratings = [480.0, 560.0, 505.0, 500.0]
    g = game(
        0,
        "ffa",
        [
            seat(0, None, 14.0, 0.0, 18.0),
            seat(1, None, 9.0, 2.0, 20.0),
            seat(2, None, 30.0, registered=False),
            seat(3, None, 4.0, 15.0, 20.0),
        ],
    )
    rater = sph_elo(ratings)
    rater.update([g])
    expected = rate_game(
        [
            Participant(s.player_id, None, s.score, s.minutes, s.registered, ratings[s.player_id])
            for s in g.seats
        ]
    )
    assert set(expected) == {0, 1, 3}
    for pid, new in expected.items():
        assert rater.means(np.array([pid]))[0] == new
    assert rater.means(np.array([2]))[0] == 505.0
    assert rater.last_batch_change_sums == [
        pytest.approx(math.fsum(new - ratings[p] for p, new in expected.items()), abs=1e-12)
    ]


def test_sph_elo_records_zero_sum_per_game() -> None:
    rng = np.random.default_rng(5)
    rater = sph_elo(list(rng.normal(500, 150, 14)))
    games = mixed_batch()
    rater.update(games)
    sums = rater.last_batch_change_sums
    assert len(sums) == len(games)
    assert all(abs(total) <= 1e-9 for total in sums)
    before = rater.means(np.arange(14))
    rater.update(games[3:4])  # the team game alone: the recorded sum is its actual change
    moved = rater.means(np.arange(14)) - before
    assert rater.last_batch_change_sums == [pytest.approx(moved.sum(), abs=1e-9)]
    assert np.abs(moved).max() > 0


def test_sph_elo_unknown_player_id() -> None:
    rater = sph_elo([500.0, 500.0])
    with pytest.raises(KeyError, match="unknown player id 5"):
        rater.update([game(0, "ffa", [seat(0, None, 1.0), seat(5, None, 2.0)])])
    with pytest.raises(KeyError, match="unknown player id 5"):
        rater.means(np.array([5]))


# --------------------------------------------------------------------------------------------
# Registry and conformance
# --------------------------------------------------------------------------------------------


def test_registry_names_and_parameter_errors() -> None:
    assert RATERS.names() == ["bayesian", "sph_elo", "glicko2", "openskill"]
    with pytest.raises(PluginError, match="beta2"):
        RATERS.create("bayesian", {"beta2": 0})
    with pytest.raises(PluginError, match=r"tau2.*-1"):
        RATERS.create("bayesian", {"tau2": -1.0})
    with pytest.raises(PluginError, match="game_mult"):
        RATERS.create("sph_elo", {"game_mult": 0.0})
    with pytest.raises(PluginError, match="did you mean 'beta2'"):
        RATERS.create("bayesian", {"beta": 1.0})
    assert RATERS.create("sph_elo", {"t": 200.0}).t == 200.0


@pytest.mark.parametrize("name", RATERS.names())
def test_every_rater_conforms(name: str) -> None:
    rater = RATERS.create(name)
    assert isinstance(rater, Rater)
    assert isinstance(rater.has_variance, bool) and isinstance(rater.skill_scale, bool)
    rater.add_players(np.array([0, 1]), np.array([25.0, 25.0]), np.array([8.0, 8.0]))
    rater.add_players(np.array([2]), np.array([20.0]), np.array([8.0]))
    before = rater.means(np.arange(3)).copy()
    rater.update([duel(0, 0, 2, winner=0, score_a=10.0, score_b=2.0)])
    if "period" in declared_parameters(type(rater)):  # rated in periods: a later game closes it
        later = (seat(0, 0, 1.0, 1e4, 1e4 + 20), seat(2, 1, 0.0, 1e4, 1e4 + 20))
        rater.update([GameResult(1, "1v1", 1e4, 1e4 + 20, later, 0)])
    after = rater.means(np.arange(3))
    assert after[0] > before[0] and after[2] < before[2] and after[1] == before[1]
    variances = rater.variances(np.arange(3))
    assert (variances is None) == (not rater.has_variance)
    rater.update([])
    a, b = np.array([0, 1, 2, 0]), np.array([1, 2, 0, 0])
    p, q = rater.win_probability(a, b), rater.quality(a, b)
    assert p.shape == q.shape == (4,) and ((q >= 0) & (q <= 1)).all()
    assert p[0] > 0.5 > p[2] and p[3] == 0.5  # player 0 won, player 2 lost
    np.testing.assert_allclose(p + rater.win_probability(b, a), 1.0, rtol=1e-12)
    assert isinstance(rater.beta2, float) and rater.beta2 > 0


# --------------------------------------------------------------------------------------------
# The win model: win_probability, quality, beta2
# --------------------------------------------------------------------------------------------


def random_pairs(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``k`` pairs of different players among ``n``."""
    a = rng.integers(0, n, size=k)
    b = (a + rng.integers(1, n, size=k)) % n
    return a, b


def test_bayesian_quality_and_win_probability_are_the_gaussian_formulas() -> None:
    rng = np.random.default_rng(3)
    mu, var = rng.normal(25.0, 4.0, 30), rng.uniform(0.5, 9.0, 30)
    rater = bayesian(list(mu), list(var), beta2=1.7)  # not the default: its own beta2 is used
    a, b = random_pairs(rng, 30, 200)
    quality = rater.quality(a, b)
    p = rater.win_probability(a, b)
    np.testing.assert_array_equal(quality, match_quality(mu[a], var[a], mu[b], var[b], 1.7))
    np.testing.assert_array_equal(p, win_probability(mu[a], var[a], mu[b], var[b], 1.7))
    c = np.sqrt(2 * 1.7 + var[a] + var[b])
    phi = np.array([0.5 * math.erfc(-x / math.sqrt(2)) for x in (mu[a] - mu[b]) / c])
    np.testing.assert_allclose(p, phi, rtol=1e-12)
    np.testing.assert_allclose(p + rater.win_probability(b, a), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(quality, rater.quality(b, a))
    env = trueskill.TrueSkill(mu=25.0, sigma=3.0, beta=math.sqrt(1.7), tau=0.0, draw_probability=0)
    for i, j, q in zip(a[:40], b[:40], quality[:40], strict=False):
        ra = env.create_rating(mu[i], math.sqrt(var[i]))
        rb = env.create_rating(mu[j], math.sqrt(var[j]))
        assert q == pytest.approx(trueskill.quality_1vs1(ra, rb, env=env), rel=1e-9)
    assert rater.beta2 == 1.7


def test_sph_elo_win_probability_is_its_logistic_and_quality_its_evenness() -> None:
    rng = np.random.default_rng(4)
    ratings = rng.normal(500.0, 150.0, 30)
    ratings[:4] = [480.0, 480.0, 1.0e4, -1.0e4]  # a tie and a foregone pair
    rater = sph_elo(list(ratings), t=90.0)
    a, b = random_pairs(rng, 30, 300)
    a[:2], b[:2] = [0, 2], [1, 3]
    p = rater.win_probability(a, b)
    logistic = 1.0 / (1.0 + np.exp(-(ratings[a] - ratings[b]) / 90.0))
    np.testing.assert_allclose(p, logistic, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(p + rater.win_probability(b, a), 1.0)  # exactly
    assert p[0] == 0.5 and p[1] == 1.0
    quality = rater.quality(a, b)
    np.testing.assert_array_equal(quality, 1.0 - np.abs(2.0 * p - 1.0))
    assert quality[0] == 1.0 and quality[1] == 0.0 and ((quality >= 0) & (quality <= 1)).all()
    # the prediction its updates use: a full-time 1v1 with equal SPH moves the higher-rated
    # player by (0.5 - P) * game_mult * minutes
    hi = sph_elo([600.0, 450.0], t=90.0)
    p_hi = float(hi.win_probability(np.array([0]), np.array([1]))[0])
    hi.update([duel(0, 0, 1, winner=0, score_a=5.0, score_b=5.0)])
    assert hi.means(np.array([0]))[0] - 600.0 == pytest.approx((0.5 - p_hi) * 2.0 * 20.0)


def test_sph_elo_beta2_is_the_variance_of_its_gumbel_performances() -> None:
    """P = logistic((R_a - R_b) / t) is the model of performances R + Gumbel(scale t)."""
    rater = sph_elo([550.0, 500.0], t=120.0)
    assert rater.beta2 == pytest.approx(math.pi**2 * 120.0**2 / 6.0)
    rng = np.random.default_rng(5)
    noise = rng.gumbel(0.0, 120.0, size=(2, 400_000))
    assert noise[0].var() == pytest.approx(rater.beta2, rel=0.02)
    wins = np.mean(550.0 + noise[0] > 500.0 + noise[1])
    p = float(rater.win_probability(np.array([0]), np.array([1]))[0])
    assert wins == pytest.approx(p, abs=0.004)


class NoWinModel:
    """A user rater written before raters answered match quality: it lacks the win model."""

    name = "no_win_model"
    has_variance = False
    skill_scale = False

    def add_players(self, ids: Any, mu0: Any, var0: Any) -> None: ...
    def means(self, ids: Any) -> Any: ...
    def variances(self, ids: Any) -> None: ...
    def update(self, games: Any) -> None: ...


class EvenNoWinModel(EvenMatchQuality, NoWinModel):
    """The same rater with a win probability of its own and the quality derived from it."""

    beta2 = 1.0

    def win_probability(self, ids_a: Any, ids_b: Any) -> Any:
        return np.full(len(ids_a), 0.75)


def test_a_rater_without_a_win_model_is_refused_by_name_and_the_mixin_completes_one() -> None:
    with pytest.raises(PluginError) as info:
        RATERS.get("tests.raters.test_raters:NoWinModel")
    message = str(info.value)
    lacks = "'tests.raters.test_raters:NoWinModel' is not a rater: it lacks beta2, "
    lacks += "win_probability, "
    assert lacks in (
        message
    )
    assert "\n" not in message
    rater = RATERS.create("tests.raters.test_raters:EvenNoWinModel")
    assert isinstance(rater, Rater)
    np.testing.assert_array_equal(rater.quality(np.arange(2), np.arange(2)), [0.5, 0.5])


@pytest.mark.parametrize("tau2", [0.0, 0.0833])
def test_bayesian_one_game_batches_update_as_the_array_path(tau2: float) -> None:
    """A batch of one 1v1 game (a pass on every arrival) takes the float path; the beliefs are
    update_1v1's on arrays, bit for bit, game after game (upsets included)."""
    rng = np.random.default_rng(4)
    n = 12
    mu, var = rng.normal(25, 8, n), rng.uniform(0.5, 70, n)
    rater = bayesian(list(mu), list(var), tau2=tau2)
    ids = np.arange(n)
    for gid in range(300):
        a, b = (int(k) for k in rng.choice(n, 2, replace=False))
        winner = int(rng.integers(2))
        w, lo = (a, b) if winner == 0 else (b, a)
        expected = update_1v1(mu[w], var[w], mu[lo], var[lo], rater.beta2, tau2)
        mu[w], var[w], mu[lo], var[lo] = expected
        rater.update([duel(gid, a, b, winner)])
        assert rater.means(ids).tolist() == mu.tolist()
        assert rater.variances(ids).tolist() == var.tolist()


def test_bayesian_one_game_batches_check_as_the_array_path() -> None:
    """A batch of one 1v1 game refuses what a batch of two refuses, with the same message, and
    changes nothing then; a guest's game changes nobody."""
    rater = bayesian([20.0, 25.0, 30.0], [4.0, 4.0, 4.0])
    ids = np.arange(3)
    before = rater.means(ids).tolist(), rater.variances(ids).tolist()
    sideless = GameResult(1, "1v1", 0.0, 10.0, (seat(0, 0, 1.0), seat(1, 0, 0.0)), 0)
    for bad, error, message in (
        (duel(1, 1, 9, winner=0), KeyError, "unknown player id 9"),
        (duel(1, -1, 1, winner=1), KeyError, "unknown player id -1"),
        (duel(1, 0, 1, winner=2), ValueError, "winner 2 is neither side"),
        (sideless, ValueError, "two different teams"),
    ):
        with pytest.raises(error, match=message):  # the one-game path
            rater.update([bad])
        with pytest.raises(error, match=message):  # the array path says the same
            rater.update([duel(0, 2, 0, winner=0), bad])
        assert (rater.means(ids).tolist(), rater.variances(ids).tolist()) == before
    guest = GameResult(3, "1v1", 0.0, 10.0, (seat(0, 0, 1.0), seat(1, 1, 0.0, registered=False)), 0)
    rater.update([guest])
    assert (rater.means(ids).tolist(), rater.variances(ids).tolist()) == before


def test_sph_elo_one_game_batches_rate_as_the_array_path() -> None:
    """A batch of one 1v1 game (a pass on every arrival) takes the float path; the ratings are
    the vectorised path's, bit for bit: each game is also rated by a second rater alongside a
    game of two other players, which makes a batch of two (the array path). Scores tie in SPH
    (decided exactly), ratings tie, stints are cut short, and a game with a zero-minute stint
    goes to rating_changes on both paths."""
    rng = np.random.default_rng(5)
    n = 10
    start = list(rng.uniform(300, 700, n))
    start[1] = start[0]  # equal ratings: side a is the higher-rated one
    one, two = sph_elo(start), sph_elo([*start, 500.0, 500.0])
    ids = np.arange(n)
    for gid in range(400):
        a, b = (int(k) for k in rng.choice(n, 2, replace=False))
        if gid % 50 == 0:
            a, b = 0, 1
        score_a, score_b = (float(x) for x in rng.integers(0, 30, 2))
        left_a, left_b = 20.0, float(rng.choice([20.0, 7.5, 12.25, 0.0]))
        if gid % 7 == 0:  # equal SPH by construction: 6 in 20 minutes against 3 in 10
            score_a, score_b, left_b = 6.0, 3.0, 10.0
        seats = (seat(a, 0, score_a, left=left_a), seat(b, 1, score_b, left=left_b))
        result = GameResult(gid, "1v1", 0.0, 20.0, seats, 0)
        other = duel(10_000 + gid, n, n + 1, 0)
        one.update([result])
        two.update([result, other])
        assert one.means(ids).tolist() == two.means(ids).tolist()
        assert one.last_batch_change_sums == two.last_batch_change_sums[:1]
    assert one.means(ids).tolist() != start  # the games moved the ratings


def _duel_batch(rng: np.random.Generator, first_id: int, n_games: int, n_players: int) -> DuelBatch:
    """1v1 games as the lobby scores them: guests, quits, 0-minute games, repeated players."""
    columns: list[list[object]] = [[] for _ in range(13)]
    for k in range(n_games):
        a, b = (int(x) for x in rng.choice(n_players, 2, replace=False))
        start = float(rng.uniform(0, 100))
        end = start + float(rng.choice([0.0, 10.0, rng.uniform(0, 12)]))
        registered = rng.random(2) > 0.15
        scores = [float(x) for x in rng.integers(0, 12, 2)]
        if rng.random() < 0.1:  # equal SPH in other numbers (both stints are the game)
            scores = [6.0, 6.0]
        values = (first_id + k, start, end, a, b, bool(registered[0]), bool(registered[1]))
        values += (*scores, 0.0, 0.0, int(rng.integers(-1, 2)), int(rng.integers(0, 2)))
        for column, value in zip(columns, values, strict=True):
            column.append(value)
    return DuelBatch(*columns)  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [lambda: bayesian([0.0] * 12, [1.0] * 12, tau2=0.02), None])
def test_a_batch_of_duels_rates_as_its_game_results(make: Any) -> None:
    """The raters' column path (a DuelBatch from the lobby) against the same games as
    GameResult objects: the same ratings and variances bit for bit, batch after batch (a batch
    of one included), and the SPH Elo's change sums."""
    rng = np.random.default_rng(9)
    n = 12
    if make is None:  # the SPH Elo, from spread ratings
        start = [float(x) for x in rng.uniform(300, 700, n)]
        columns, objects = sph_elo(start), sph_elo(start)
    else:
        columns, objects = make(), make()
        for rater in (columns, objects):
            rater._table.columns[0][:n] = np.linspace(-20, 20, n)
            rater._table.columns[1][:n] = np.linspace(1, 50, n)
    ids = np.arange(n)
    for first in range(0, 2000, 50):
        batch = _duel_batch(rng, first, int(rng.choice([1, 2, 7, 50])), n)
        results = [GameResult(*vars_of(g)) for g in batch]  # plain objects, not the batch
        columns.update(batch)
        objects.update(results)
        assert columns.means(ids).tolist() == objects.means(ids).tolist()
        if make is not None:
            assert columns.variances(ids).tolist() == objects.variances(ids).tolist()
        else:
            assert columns.last_batch_change_sums == objects.last_batch_change_sums
        assert [batch.result(k) for k in range(len(batch))] == batch.results() == results
    assert columns.means(ids).tolist() != objects.means(ids)[::-1].tolist()


def vars_of(game: GameResult) -> tuple[object, ...]:
    """The fields of a game, in order."""
    return (game.game_id, game.mode, game.start, game.end, game.seats, game.winner)


def test_a_batch_of_duels_with_an_unknown_player_changes_nothing() -> None:
    for rater in (bayesian([20.0, 25.0, 30.0], [4.0, 4.0, 4.0]), sph_elo([400.0, 500.0, 600.0])):
        before = rater.means(np.arange(3)).tolist()
        batch = DuelBatch(
            (0, 1), (0.0, 0.0), (10.0, 10.0), (0, 1), (1, 9), (True, True), (True, True),
            (3.0, 1.0), (1.0, 2.0), (0.0, 0.0), (0.0, 0.0), (-1, -1), (0, 1),
        )  # fmt: skip
        with pytest.raises(KeyError, match="unknown player id 9"):
            rater.update(batch)
        assert rater.means(np.arange(3)).tolist() == before
        assert len(batch) == 2 and repr(batch) == "DuelBatch(2 games)"
        both = DuelBatch.concat([batch, batch])
        assert both.results() == batch.results() * 2 and list(both) == both[:]


def test_small_waves_update_on_floats_as_on_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waves of up to FLOAT_DUELS rated games take update_1v1_one game by game; the beliefs are
    update_1v1's over the wave's arrays, bit for bit (the reference: FLOAT_DUELS = 0)."""
    from lobbysim.raters import bayesian as module

    rng = np.random.default_rng(17)
    n = 16
    floats, arrays = (bayesian([0.0] * n, [1.0] * n, tau2=0.01) for _ in range(2))
    for rater in (floats, arrays):
        rater._table.columns[0][:n] = np.linspace(-30, 30, n)
        rater._table.columns[1][:n] = np.linspace(0.5, 80, n)
    ids = np.arange(n)
    for first in range(0, 3000, 10):
        batch = _duel_batch(rng, first, int(rng.integers(2, 7)), n)
        floats.update(batch)
        with monkeypatch.context() as patch:
            patch.setattr(module, "FLOAT_DUELS", 0)
            arrays.update(batch)
        assert floats.means(ids).tolist() == arrays.means(ids).tolist()
        assert floats.variances(ids).tolist() == arrays.variances(ids).tolist()


def test_belief_lists_are_the_means_and_variances() -> None:
    """GaussianBeliefs.belief_lists and mean_list (a small pass's beliefs on floats) give the
    floats of means() and variances() for dense and sparse ids, and name an unknown id as
    they do."""
    from lobbysim.raters.bayesian import BayesianRater

    rater = BayesianRater()
    ids = np.array([0, 1, 2, 3, 7, 9], dtype=np.int64)  # 0..3 dense, 7 and 9 beyond
    rater.add_players(ids, np.linspace(20, 30, 6), np.linspace(1, 6, 6))
    for chosen in ([2], [3, 0, 3], [9, 1], [7, 9, 2, 0]):
        mu, var = rater.belief_lists(chosen)
        array = np.array(chosen, dtype=np.int64)
        assert mu == rater.means(array).tolist() and var == rater.variances(array).tolist()
        assert rater.mean_list(chosen) == mu
        assert all(type(x) is float for x in mu + var + rater.mean_list(chosen))
    for unknown in ([4], [1, 8], [-1]):
        with pytest.raises(KeyError, match="unknown player id"):
            rater.belief_lists(unknown)
        with pytest.raises(KeyError, match="unknown player id"):
            rater.mean_list(unknown)


def test_mean_lists_only_where_the_means_are_the_gaussian_beliefs() -> None:
    """mean_lists gives the float path of a rater whose means are its Gaussian beliefs' own,
    and None (the array path) for the SPH Elo and for a rater that overrides means(); nor does
    such a rater declare float_beliefs (no small pass on floats)."""
    from lobbysim.raters.base import float_beliefs, mean_lists
    from lobbysim.raters.bayesian import BayesianRater
    from lobbysim.raters.sph_elo import SPHEloRater

    class Shifted(BayesianRater):
        def means(self, ids: np.ndarray) -> np.ndarray:
            return super().means(ids) + 1.0

    rater = BayesianRater()
    rater.add_players(np.arange(3), np.array([1.0, 2.0, 3.0]), np.ones(3))
    floats = mean_lists(rater)
    assert floats is not None and floats([2, 0]) == [3.0, 1.0]
    assert mean_lists(SPHEloRater()) is None
    assert mean_lists(Shifted()) is None
    assert float_beliefs(rater) is rater and float_beliefs(Shifted()) is None
    assert float_beliefs(SPHEloRater()) is None
