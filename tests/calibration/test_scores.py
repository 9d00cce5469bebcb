"""Raters scored on a match log (lobbysim/calibration/scores.py): the replay's timing rule, the
staged replay against the event-by-event one, the Bayesian rater's predictions against
TrueSkill's formulas by hand, the scores, and a generated log scored against its truth."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import trueskill

import lobbysim.raters.openskill as openskill_adapter
from lobbysim.calibration.grid import EXTEND_STEPS, GRIDS
from lobbysim.calibration.grid import extend as _extend
from lobbysim.calibration.matchlog import MatchLog, from_records
from lobbysim.calibration.probabilities import gaussian_probability
from lobbysim.calibration.replay import (
    LogArrays,
    Predictor,
    Truth,
    oracle_predictions,
    replay,
    replay_by_event,
)
from lobbysim.calibration.scores import (
    ORACLE,
    calibration_curve,
    pair_scores,
    ranking,
    score_log,
    scores_text,
)
from lobbysim.experiments.simulation import simulate
from lobbysim.raters import RATERS, Rater
from lobbysim.scenario import PluginSpec
from lobbysim.scenario.inputs import as_scenario
from tests.calibration.logs import make_log, random_log

# ------------------------------------------------------------------------------------------
# Logs made by hand: tests/calibration/logs.py (a lobbysim run's:
# lobbysim.calibration.matchlog.from_records)


def fresh(name: str, players: int, **params: float) -> Rater:
    """Return a new rater as the replay takes it: no player added (each enters at their first
    match; ``players`` is the log's count, unused)."""
    return RATERS.create(name, params)


def with_players(name: str, players: int, **params: float) -> Rater:
    """Return a new rater with every player of the log added at the prior N(0, 4)."""
    rater = RATERS.create(name, params)
    ids = np.arange(players)
    rater.add_players(ids, np.zeros(players), np.full(players, 4.0))
    return rater


RATER_SETTINGS = [
    ("bayesian", {"beta2": 2.5, "tau2": 0.01}),
    ("sph_elo", {}),
    ("glicko2", {"period": 10.0}),
    ("openskill", {}),
]


# ------------------------------------------------------------------------------------------
# The replay


def phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def trueskill_win(mu_w: float, var_w: float, mu_l: float, var_l: float, beta2: float):
    """TrueSkill's 1v1 update after w beats l (no draw margin, no tau), by hand."""
    c2 = var_w + var_l + 2.0 * beta2
    c = math.sqrt(c2)
    t = (mu_w - mu_l) / c
    v = math.exp(-t * t / 2.0) / math.sqrt(2.0 * math.pi) / phi(t)
    w = v * (v + t)
    return (
        mu_w + var_w / c * v,
        var_w * (1.0 - var_w / c2 * w),
        mu_l - var_l / c * v,
        var_l * (1.0 - var_l / c2 * w),
    )


def test_bayesian_predictions_are_trueskills_formula_by_hand() -> None:
    """Three matches: the second starts before the first ends (predicted from the priors), the
    third starts the moment the second ends (predicted after both updates)."""
    a, b, c = 10, 20, 30
    log = make_log(
        [
            (0.0, 10.0, [(a, 0, 0), (b, 1, 1)]),  # a beats b
            (5.0, 15.0, [(b, 0, 1), (c, 1, 0)]),  # c beats b: b as after the first match
            (15.0, 25.0, [(a, 0, 1), (b, 1, 0)]),  # b beats a: b as after both matches
        ]
    )
    beta2 = 2.5
    spec = PluginSpec("bayesian", {"beta2": beta2, "tau2": 0.0})
    result = score_log(log, [spec], tune=False)
    p = result.pairs.sort_values("match")["bayesian"].to_numpy()
    mu = {a: 0.0, b: 0.0, c: 0.0}
    var = {a: 4.0, b: 4.0, c: 4.0}
    want = [phi(0.0), phi(0.0)]  # no update has ended before the first two starts
    mu[a], var[a], mu[b], var[b] = trueskill_win(mu[a], var[a], mu[b], var[b], beta2)
    mu[c], var[c], mu[b], var[b] = trueskill_win(mu[c], var[c], mu[b], var[b], beta2)
    want.append(phi((mu[a] - mu[b]) / math.sqrt(2 * beta2 + var[a] + var[b])))
    np.testing.assert_allclose(p, want, rtol=0, atol=1e-12)
    assert abs(want[2] - 0.5) > 0.05  # the third prediction is not a trivial one

    # the by-hand formulas are TrueSkill's: the trueskill package (mpmath) agrees
    env = trueskill.TrueSkill(
        mu=0.0, sigma=2.0, beta=math.sqrt(beta2), tau=0.0, draw_probability=0.0, backend="mpmath"
    )
    ra, rb, rc = (env.create_rating() for _ in range(3))
    ra, rb = env.rate_1vs1(ra, rb)
    rc, rb = env.rate_1vs1(rc, rb)
    assert mu[a] == pytest.approx(float(ra.mu), rel=1e-9)
    assert var[b] == pytest.approx(float(rb.sigma) ** 2, rel=1e-9)
    assert mu[c] == pytest.approx(float(rc.mu), rel=1e-9)
    assert result.value("bayesian", "all", "log_loss") == pytest.approx(
        -(2 * math.log(0.5) + math.log(1.0 - want[2])) / 3, abs=1e-12
    )


def test_a_match_of_zero_length_is_predicted_before_it_is_rated() -> None:
    log = make_log(
        [
            (0.0, 0.0, [(1, 0, 0), (2, 1, 1)]),
            (0.0, 0.0, [(1, 0, 0), (3, 1, 1)]),  # starts with the first: not after it
            (0.0, 5.0, [(1, 0, 0), (2, 1, 1)]),
        ]
    )
    arrays = LogArrays.from_log(log)
    p = replay(fresh("bayesian", arrays.players), arrays)
    assert p[0] == p[1] == p[2] == 0.5
    assert arrays.events == [0, 1, 2, ~0, ~1, ~2]


def reference(name: str, params: dict[str, float], arrays: LogArrays) -> np.ndarray:
    """Each match predicted by a fresh rater given exactly the matches that ended at or before
    its start (in order of end, then start): the timing rule, applied literally."""
    p = np.full(arrays.pair_y.size, np.nan)
    order = sorted(range(arrays.matches), key=lambda k: (arrays.end[k], k))
    for m in range(arrays.matches):
        rater = with_players(name, arrays.players, **params)
        done = [arrays.games[k] for k in order if arrays.end[k] <= arrays.start[m] and k != m]
        if done:
            rater.update(done)
        ms = np.array([m])
        pairs = arrays.pairs_of(ms)
        p[pairs] = Predictor(rater).pairs(arrays, ms, pairs)
    return p


@pytest.mark.parametrize(("name", "params"), [s for s in RATER_SETTINGS if s[0] != "glicko2"])
def test_replay_follows_the_timing_rule(name: str, params: dict[str, float]) -> None:
    arrays = LogArrays.from_log(random_log(np.random.default_rng(3), matches=40))
    got = replay(fresh(name, arrays.players, **params), arrays)
    np.testing.assert_allclose(got, reference(name, params, arrays), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("name", "params"), RATER_SETTINGS)
@pytest.mark.parametrize("kinds", [("1v1",), ("1v1", "2v2", "ffa")])
def test_staged_replay_equals_the_event_by_event_replay(
    name: str, params: dict[str, float], kinds: tuple[str, ...]
) -> None:
    log = random_log(np.random.default_rng(5), matches=150, kinds=kinds, zero_length=True)
    arrays = LogArrays.from_log(log)
    assert arrays.duel == (kinds == ("1v1",)) or not arrays.duel
    staged = replay(fresh(name, arrays.players, **params), arrays)
    one_by_one = replay_by_event(fresh(name, arrays.players, **params), arrays)
    assert not np.isnan(staged).any()
    np.testing.assert_allclose(staged, one_by_one, rtol=0, atol=1e-12)


class MeanOnly:
    """A user rater the replay does not know (the generic predictor: every update may move
    anything): Elo-like means, moved by 1v1 winners only."""

    name = "mean_only_test"
    has_variance = False
    skill_scale = False
    beta2 = 1.0

    def __init__(self) -> None:
        self.mu: dict[int, float] = {}

    def add_players(self, ids, mu0, var0) -> None:
        self.mu.update(dict.fromkeys(np.asarray(ids).tolist(), 0.0))

    def means(self, ids):
        return np.array([self.mu[i] for i in np.asarray(ids).tolist()])

    def variances(self, ids):
        return None

    def update(self, games) -> None:
        for g in games:
            for s in g.seats:
                won = g.winner is not None and s.team == g.winner
                self.mu[s.player_id] += 0.1 if won else -0.05

    def win_probability(self, ids_a, ids_b):
        return 1.0 / (1.0 + np.exp(-(self.means(ids_a) - self.means(ids_b))))

    def quality(self, ids_a, ids_b):
        return 1.0 - np.abs(2.0 * self.win_probability(ids_a, ids_b) - 1.0)


def test_a_rater_the_replay_does_not_know_is_replayed_exactly() -> None:
    log = random_log(np.random.default_rng(8), matches=60)
    arrays = LogArrays.from_log(log)

    def make() -> MeanOnly:
        rater = MeanOnly()
        rater.add_players(np.arange(arrays.players), None, None)
        return rater

    staged = replay(make(), arrays)
    np.testing.assert_allclose(staged, replay_by_event(make(), arrays), rtol=0, atol=1e-12)
    # a team side's probability: the mean over its players' pairs
    ms = np.array([m for m in range(arrays.matches) if arrays.pair_lo[m + 1] - arrays.pair_lo[m]])
    assert Predictor(make()).pairs(arrays, ms, arrays.pairs_of(ms)) == pytest.approx(0.5)


def test_side_predictions_are_each_raters_own_for_one_player_sides() -> None:
    rng = np.random.default_rng(11)
    arrays = LogArrays.from_log(random_log(rng, matches=60, kinds=("1v1",)))
    a, b = arrays.duel_a, arrays.duel_b
    for name, params in RATER_SETTINGS:
        rater = with_players(name, arrays.players, **params)
        rater.update(arrays.games[:40])
        np.testing.assert_allclose(
            Predictor(rater).duels(a, b), rater.win_probability(a, b), rtol=0, atol=1e-12
        )


def test_team_and_oracle_formula() -> None:
    """Two sides of 2 and 1 players: Phi((mean_a - mean_b) / sqrt(beta2/2 + beta2 + ...))."""
    got = gaussian_probability(
        np.array([1.0]), np.array([0.5]), np.array([2.0]),
        np.array([0.0]), np.array([0.3]), np.array([1.0]), 2.0,
    )  # fmt: skip
    want = phi(1.0 / math.sqrt(2.0 / 2 + 2.0 + 0.5 / 4 + 0.3))
    assert got[0] == pytest.approx(want, abs=1e-14)
    log = make_log([(0.0, 1.0, [(1, 0, 0), (2, 0, 0), (3, 1, 1)])])
    truth = Truth.from_skills(log, {1: 1.0, 2: 3.0, 3: 0.5}, 2.5)
    oracle = oracle_predictions(LogArrays.from_log(log), truth)
    assert oracle[0] == pytest.approx(phi((2.0 - 0.5) / math.sqrt(2.5 / 2 + 2.5)), abs=1e-14)
    with pytest.raises(ValueError, match="no true skill"):
        Truth.from_skills(log, {1: 1.0}, 2.5)


# ------------------------------------------------------------------------------------------
# The log's arrays


def test_free_for_all_is_scored_pairwise_and_draws_count_half() -> None:
    log = make_log([(0.0, 5.0, [(1, 0, 1), (2, 1, 0), (3, 2, 1)])])
    arrays = LogArrays.from_log(log)
    assert arrays.pair_a.tolist() == [0, 0, 1] and arrays.pair_b.tolist() == [1, 2, 2]
    assert arrays.pair_y.tolist() == [0.0, 0.5, 1.0]
    (game,) = arrays.games
    assert game.mode == "ffa" and [s.score for s in game.seats] == [0.0, 1.0, 0.0]


def test_games_the_raters_see() -> None:
    log = make_log(
        [
            (0.0, 5.0, [(1, 0, 1), (2, 1, 0)]),  # a 1v1 won by side 1
            (6.0, 9.0, [(1, 0, 0), (2, 1, 0)]),  # a drawn 1v1: a team game of equal scores
            (10.0, 20.0, [(1, 0, 0), (2, 0, 0), (3, 1, 1), (4, 1, 1)]),  # 2v2, side 0 won
        ]
    )
    one, drawn, team = LogArrays.from_log(log).games
    assert (one.mode, one.winner, [s.score for s in one.seats]) == ("1v1", 1, [0.0, 1.0])
    assert (drawn.mode, drawn.winner, {s.score for s in drawn.seats}) == ("team", None, {0.0})
    assert (team.mode, team.winner) == ("team", 0)
    assert all(s.joined == 10.0 and s.left == 20.0 and s.registered for s in team.seats)


def test_earlier_matches_count_those_ended_by_the_start() -> None:
    log = make_log(
        [
            (0.0, 10.0, [(1, 0, 0), (2, 1, 1)]),
            (10.0, 20.0, [(1, 0, 0), (3, 1, 1)]),  # 1 has one earlier match (ended at 10)
            (12.0, 30.0, [(2, 0, 0), (1, 1, 1)]),  # 1 has one: the second is still on
            (30.0, 31.0, [(1, 0, 0), (2, 1, 1)]),
        ]
    )
    assert LogArrays.from_log(log).seen.tolist() == [0, 0, 1, 2]


# ------------------------------------------------------------------------------------------
# Scores


def test_pair_scores_by_hand() -> None:
    p = np.array([0.8, 0.3, 0.5, 0.6])
    y = np.array([1.0, 1.0, 0.0, 0.5])
    got = {metric: (value, n) for metric, value, n in pair_scores(p, y)}
    loss = -(math.log(0.8) + math.log(0.3) + math.log(0.5) + 0.5 * math.log(0.6 * 0.4)) / 4
    assert got["log_loss"][0] == pytest.approx(loss, abs=1e-14) and got["log_loss"][1] == 4
    assert got["brier"][0] == pytest.approx((0.04 + 0.49 + 0.25 + 0.01) / 4, abs=1e-14)
    assert got["pair_order"] == (pytest.approx(1.5 / 3), 3)  # right, wrong, a coin: half
    clipped = dict((m, v) for m, v, _ in pair_scores(np.array([0.0]), np.array([1.0])))
    assert clipped["log_loss"] == pytest.approx(-math.log(1e-15))


def test_calibration_curve() -> None:
    p = np.array([0.05, 0.05, 0.55, 1.0, 0.95])
    y = np.array([0.0, 1.0, 1.0, 1.0, 0.0])
    curve = calibration_curve(p, y)
    assert curve["n"].tolist() == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert curve.loc[9, "predicted"] == pytest.approx(0.975)
    assert curve.loc[9, "observed"] == 0.5
    assert curve.loc[0, "observed"] == 0.5 and np.isnan(curve.loc[1, "predicted"])
    both = calibration_curve(p, y, symmetric=True)  # each pair counted from both sides
    assert both.equals(calibration_curve(np.r_[p, 1 - p], np.r_[y, 1 - y]))
    assert both["n"].sum() == 2 * len(p) and both["n"].tolist() == both["n"].tolist()[::-1]


def test_the_setting_chosen_has_the_least_log_loss_on_the_first_part() -> None:
    log = random_log(np.random.default_rng(2), matches=200, kinds=("1v1",))
    spec = PluginSpec("bayesian", {"beta2": 1.0})  # held: only tau2 is tuned
    result = score_log(log, [spec, "sph_elo"])
    grid = result.grid[result.grid["rater"] == "bayesian"]
    assert grid["params"].tolist() == ["beta^2 1, tau^2 0", "beta^2 1, tau^2 0.01",
                                       "beta^2 1, tau^2 0.05"]  # fmt: skip
    # 100 pairs in the first part, too few with 5 earlier matches: all counted, and said
    assert (grid["n"] == 100).all() and result.tuning_pairs == 100
    assert result.tune_experienced == 0
    assert any(note.startswith("tuned on every pair of the first part") for note in result.notes)
    best = grid.loc[grid["log_loss"].idxmin()]
    assert bool(best["chosen"]) and grid["chosen"].sum() == 1
    assert result.chosen["bayesian"]["beta2"] == 1.0
    assert result.first_matches == 100
    # the second part's scores are those of a replay of the chosen setting over the whole log
    arrays = LogArrays.from_log(log)
    p = replay(fresh("bayesian", arrays.players, **result.chosen["bayesian"]), arrays)
    second = arrays.pair_match >= 100
    ((_, loss, n), *_rest) = pair_scores(p[second], arrays.pair_y[second])
    assert result.value("bayesian", "second", "log_loss") == pytest.approx(loss, abs=1e-15)
    assert result.count("bayesian", "second") == n == 100
    # the grid, then any steps past its end (:func:`_extend`)
    elo = result.grid[result.grid["rater"] == "sph_elo"]
    assert elo["params"].tolist()[: len(GRIDS["sph_elo"])] == [
        f"K {setting['game_mult']:g}" for setting in GRIDS["sph_elo"]
    ]
    assert elo.loc[elo["chosen"], "log_loss"].item() == elo["log_loss"].min()


def test_openskill_is_skipped_with_a_note_where_it_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> None:
        raise ValueError(
            f"the openskill package is not installed: {openskill_adapter.INSTALL_HINT}"
        )

    monkeypatch.setattr(openskill_adapter, "openskill_models", missing)
    log = random_log(np.random.default_rng(4), matches=30, kinds=("1v1",))
    calls: list[tuple[int, int]] = []
    result = score_log(log, ["sph_elo", "openskill"], step=lambda d, p: calls.append((d, p)))
    assert set(result.scores["rater"]) == {"sph_elo"}
    assert any("openskill skipped" in note and "pip install" in note for note in result.notes)
    assert calls[-1][0] == calls[-1][1]  # the progress ends at 100% without openskill's plan


def test_bad_arguments() -> None:
    log = random_log(np.random.default_rng(4), matches=10)
    with pytest.raises(ValueError, match="split"):
        score_log(log, ["sph_elo"], split=1.0)
    with pytest.raises(ValueError, match="no parameter"):
        score_log(log, [PluginSpec("sph_elo", {"k": 3.0})])


# ------------------------------------------------------------------------------------------
# A generated log, scored against its truth


@pytest.fixture(scope="module")
def generated() -> tuple[MatchLog, Truth]:
    """The quickstart (a persistent base of 500 players, two days: ~3,750 1v1 games) without
    quits, so that a game is won by the higher performance N(skill, beta2) and the oracle's
    probability is the truth."""
    scenario = as_scenario("quickstart", {"game.quit_rate": 0.0})
    result = simulate(scenario, 3)
    assert result.games is not None and result.participants is not None
    log = from_records(result.games, result.participants)
    assert result.players is not None
    skills = result.players.set_index("player_id")["skill"]
    return log, Truth.from_skills(log, skills, scenario.game.beta2)


@pytest.mark.slow
def test_no_rater_beats_the_oracle_on_a_generated_log(generated: tuple[MatchLog, Truth]) -> None:
    log, truth = generated
    result = score_log(log, truth=truth)
    raters = [name for name in result.labels if name != ORACLE]
    assert raters == ["bayesian", "sph_elo", "glicko2", "openskill"]
    oracle_loss = result.value(ORACLE, "second", "log_loss")
    oracle_order = result.value(ORACLE, "second", "pair_order")
    assert result.count(ORACLE, "second") > 1500
    for name in raters:
        assert result.value(name, "second", "log_loss") > oracle_loss + 0.01, name
        assert result.value(name, "second", "brier") > result.value(ORACLE, "second", "brier")
        assert 0.5 < result.value(name, "second", "pair_order") < oracle_order + 0.02, name
        assert result.value(name, "second_experienced", "log_loss") > result.value(
            ORACLE, "second_experienced", "log_loss"
        )
    # the oracle is calibrated: in each well-filled bin the outcome is near the prediction
    curve = result.calibration
    own = curve[(curve["rater"] == ORACLE) & (curve["part"] == "all") & (curve["n"] >= 200)]
    assert (abs(own["predicted"] - own["observed"]) < 0.08).all()
    lines = scores_text(result)
    assert all(len(line) <= 100 for line in lines)
    print("\n".join(lines))  # shown with pytest -s
    text = "\n".join(lines)
    assert "bayesian (beta^2" in text and "(oracle " in text and "matches/s" in text


def test_scores_frames_are_tidy(generated: tuple[MatchLog, Truth]) -> None:
    log, truth = generated
    result = score_log(log, ["bayesian"], truth=truth, tune=False)
    assert list(result.scores.columns) == ["rater", "part", "metric", "value", "n"]
    assert set(result.scores["part"]) == {
        "all", "first", "second", "all_experienced", "second_experienced",
    }  # fmt: skip
    assert list(result.calibration.columns) == [
        "rater", "part", "bin", "lo", "hi", "predicted", "observed", "n",
    ]  # fmt: skip
    counts = result.calibration.groupby(["rater", "part"])["n"].sum()
    # every pair counted from both sides
    assert counts[("bayesian", "second")] == 2 * result.count("bayesian", "second")
    assert result.count("bayesian", "all") == log.matches
    assert 0 < result.count("bayesian", "all_experienced") < log.matches
    assert result.grid.empty and len(result.speed) == 1


# ------------------------------------------------------------------------------------------
# A grid extended past a chosen value at its end


def test_extend_walks_past_either_end_to_the_least_loss() -> None:
    """On a loss with its least at 3, a grid below it walks up (x2 a step: 1 -> 2 -> 4, 8 is
    worse) and a grid above it walks down (16 / 2 a step: 8 -> 4, 2 is worse)."""

    def loss(setting: dict[str, Any]) -> float:
        return (math.log(setting["k"]) - math.log(3.0)) ** 2

    def recorded(setting: dict[str, Any]) -> float:
        tried.append(setting["k"])
        return loss(setting)

    for grid, walked, best in (([0.5, 1.0], [2.0, 4.0, 8.0], 4.0), ([16.0, 8.0], [4.0, 2.0], 4.0)):
        settings = [{"k": k} for k in grid]
        tried: list[float] = []
        start = min(settings, key=loss)
        chosen, chosen_loss = _extend(start, loss(start), settings, {}, recorded, lambda s: True)
        assert chosen == {"k": best} and chosen_loss == loss({"k": best})
        assert tried == walked  # each step tried, the last one worse


def test_extend_stops_at_its_step_limit_its_range_and_a_held_parameter() -> None:
    def falling(setting: dict[str, Any]) -> float:
        return -setting["k"]  # always better further up

    settings = [{"k": 1.0}, {"k": 2.0}]
    chosen, _ = _extend({"k": 2.0}, -2.0, settings, {}, falling, lambda s: True)
    assert chosen == {"k": 2.0 * 2**EXTEND_STEPS}
    chosen, _ = _extend({"k": 2.0}, -2.0, settings, {}, falling, lambda s: s["k"] <= 8.0)
    assert chosen == {"k": 8.0}
    chosen, _ = _extend({"k": 2.0}, -2.0, settings, {"k": 2.0}, falling, lambda s: True)
    assert chosen == {"k": 2.0}  # the spec sets it: held
    # a smallest 0 has nothing below it; a difference steps where the ratio cannot
    zero = [{"k": 0.0}, {"k": 1.0}]
    assert _extend({"k": 0.0}, 0.0, zero, {}, lambda s: s["k"], lambda s: True)[0] == {"k": 0.0}
    assert _extend({"k": 1.0}, -1.0, zero, {}, falling, lambda s: s["k"] <= 2.0)[0] == {"k": 2.0}


def test_the_tuning_loss_counts_the_first_parts_experienced_pairs(
    generated: tuple[MatchLog, Truth],
) -> None:
    """Each setting's tuning loss is over the first part's pairs whose players all had 5 or more
    earlier matches (``n`` in ``grid``), and over all of its pairs with ``tune_experienced=0``."""
    log, _ = generated
    arrays = LogArrays.from_log(log)
    result = score_log(log, ["sph_elo"])
    first = arrays.pair_match < result.first_matches
    seasoned = first & (arrays.seen[arrays.pair_match] >= 5)
    assert 200 <= seasoned.sum() < first.sum()
    assert (result.grid["n"] == seasoned.sum()).all() and result.tuning_pairs == seasoned.sum()
    assert "on their" in scores_text(result)[0] + scores_text(result)[1]
    every = score_log(log, ["sph_elo"], tune_experienced=0)
    assert (every.grid["n"] == first.sum()).all() and every.tune_experienced == 0
    with pytest.raises(ValueError, match="tune_experienced must be >= 0"):
        score_log(log, ["sph_elo"], tune_experienced=-1)


def test_a_grid_below_the_best_setting_is_extended_in_score_log(
    generated: tuple[MatchLog, Truth],
) -> None:
    """sph_elo's K on this log is best inside GRIDS' 1 to 16: a grid of 0.5 and 1 alone walks up
    to it, each step a row of ``grid``, with no note; at a range bound the note says so; a
    parameter that changes next to nothing is neither walked nor noted."""
    log, _ = generated
    full = score_log(log, ["sph_elo"]).chosen["sph_elo"]["game_mult"]
    assert 1.0 < full < 16.0
    low = {"sph_elo": [{"game_mult": 0.5}, {"game_mult": 1.0}]}
    result = score_log(log, ["sph_elo"], grids=low)
    grid = result.grid
    assert grid["params"].tolist()[:3] == ["K 0.5", "K 1", "K 2"]
    assert result.chosen["sph_elo"]["game_mult"] == full
    assert grid.loc[grid["chosen"], "log_loss"].item() == grid["log_loss"].min()
    assert grid["log_loss"].iloc[-1] >= grid["log_loss"].min()  # the walk ended on a worse one
    assert not [note for note in result.notes if "largest value tried" in note]
    # glicko2's period falls to a quarter each step: 15 -> 3.75 minutes, and the next (0.94) is
    # below its range; tau changes the loss by less than MIN_GAIN: neither walked nor noted
    short = {"glicko2": [{"tau": t, "period": p} for t in (0.3, 0.6) for p in (60.0, 15.0)]}
    capped = score_log(log, ["glicko2"], grids=short)
    assert capped.chosen["glicko2"]["period"] == 3.75
    # then the coordinate pass: the grid's other tau beside the period the walk moved
    assert capped.grid["params"].tolist()[4:] == ["tau 0.15, period 15 min",
                                                  "tau 0.3, period 3.75 min",
                                                  "tau 0.6, period 3.75 min"]  # fmt: skip
    assert [note for note in capped.notes if "tried" in note] == [
        "glicko2: period 3.75 min is the smallest value tried, the grid extended as far as "
        "allowed (up to 4 steps, within 1 to 10080); the best may lie further"
    ]


def test_matches_of_zero_recorded_length_are_replayed_at_the_median_length() -> None:
    """The SPH Elo's update is per minute: a match of recorded length 0 is replayed as the
    median length of the others (a warning names the share), so a win of zero recorded length
    moves it as a win of that length does."""
    zero = make_log(
        [
            (0.0, 0.0, [(1, 0, 0), (2, 1, 1)]),  # 1 beats 2, length 0 on record
            (3.0, 7.0, [(3, 0, 0), (4, 1, 1)]),
            (8.0, 14.0, [(3, 0, 0), (4, 1, 1)]),
            (20.0, 25.0, [(1, 0, 0), (2, 1, 1)]),
        ]
    )
    timed = make_log(
        [
            (-5.0, 0.0, [(1, 0, 0), (2, 1, 1)]),  # the same, 5 minutes long (the median of 4, 6)
            (3.0, 7.0, [(3, 0, 0), (4, 1, 1)]),
            (8.0, 14.0, [(3, 0, 0), (4, 1, 1)]),
            (20.0, 25.0, [(1, 0, 0), (2, 1, 1)]),
        ]
    )
    arrays = LogArrays.from_log(zero)
    assert (arrays.zero_length, arrays.replay_length) == (1, 5.0)
    p = replay(fresh("sph_elo", arrays.players), arrays)
    want = replay(fresh("sph_elo", arrays.players), LogArrays.from_log(timed))
    assert p[3] > 0.5 and p[3] == pytest.approx(want[3], abs=1e-12)
    result = score_log(zero, ["sph_elo"], tune=False)
    assert result.warnings == [
        "25.0% of the matches (1) have a recorded length of 0 (rounded or missing times); the "
        "SPH Elo's update is per minute, so they are replayed as 5 minutes, the median length "
        "of the others"
    ]
    assert any(line.startswith("Warning: 25.0% of the matches") for line in scores_text(result))
    assert score_log(timed, ["sph_elo"], tune=False).warnings == []


def test_score_log_counts_its_replays_and_ranks_the_raters() -> None:
    """``step(done, planned)`` after every replay (the progress bar's), ending at done ==
    planned == every grid setting, step past a grid's end and whole-log replay; the ranking
    orders the raters by held-out log loss."""
    log = random_log(np.random.default_rng(2), matches=120, kinds=("1v1",))
    calls: list[tuple[int, int]] = []
    result = score_log(log, ["bayesian", "sph_elo"], step=lambda d, p: calls.append((d, p)))
    assert [d for d, _ in calls] == list(range(1, len(calls) + 1))
    assert calls[-1][0] == calls[-1][1] == len(result.grid) + 2
    assert all(d <= p for d, p in calls)
    ranked = ranking(result)
    assert [name for name, _ in ranked] == sorted(
        ["bayesian", "sph_elo"], key=lambda n: result.value(n, "second", "log_loss")
    )
    assert any(line.startswith("Ranking by held-out log loss") for line in scores_text(result))
