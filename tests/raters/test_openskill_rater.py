"""Tests of the openskill adapter (lobbysim.raters.openskill) and of both new raters in a lobby.

The oracle is the ``openskill`` library itself: the same games passed to ``model.rate`` by hand,
with the teams and ranks written out here, must give the adapter's beliefs to 1e-12.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.raters import RATERS, OpenSkillRater, Rater
from lobbysim.raters.openskill import MODELS
from lobbysim.records.rows import GameResult, Seat
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.scenario.plugins import build_raters
from lobbysim.skill.gaussian import match_quality

MU0 = [1.0, -0.5, 2.0, 0.0, -2.5, 0.5, 3.0, -1.0]
VAR0 = [4.0, 3.0, 2.0, 4.0, 1.5, 4.0, 0.5, 2.5]


def stint(
    pid: int, team: int | None, score: float, joined: float = 0.0, left: float = 20.0
) -> Seat:
    """A registered player's stint."""
    return Seat(pid, team, joined, left, score, True, False, 0.0)


def guest(pid: int, team: int | None, score: float) -> Seat:
    """A guest's full-time stint."""
    return Seat(pid, team, 0.0, 20.0, score, False, False, 0.0)


def hand_built_games() -> tuple[list[GameResult], list[tuple[list[list[int]], list[float]]]]:
    """Games of every mode, and the teams and ranks they mean, written out by hand."""
    games = [
        GameResult(0, "1v1", 0.0, 20.0, (stint(0, 0, 3.0), stint(1, 1, 5.0)), 1),
        GameResult(  # side 1 wins on total score; the guest and the 0-minute seat are left out
            1,
            "team",
            0.0,
            20.0,
            (
                stint(3, 1, 4.0),
                stint(2, 0, 6.0),
                guest(9, 1, 8.0),
                stint(4, 0, 1.0, 5.0, 20.0),
                stint(5, 1, 0.0, 7.0, 7.0),
                stint(0, 1, 2.0),
            ),
            1,
        ),
        GameResult(2, "team", 0.0, 20.0, (stint(6, 0, 3.0), stint(7, 1, 3.0)), None),  # draw
        GameResult(  # ffa by score per hour: 6 (0.5/min) > 1 = 5 (0.2/min, a tie) > 2 (0.1/min)
            3,
            "ffa",
            0.0,
            20.0,
            (
                stint(2, None, 2.0),
                stint(5, None, 2.0, 10.0, 20.0),
                guest(9, None, 30.0),
                stint(6, None, 10.0),
                stint(1, None, 4.0),
            ),
            None,
        ),
        GameResult(4, "1v1", 0.0, 20.0, (stint(7, 0, 1.0), stint(3, 1, 0.0)), 0),
        GameResult(5, "1v1", 0.0, 20.0, (stint(4, 0, 1.0), guest(9, 1, 0.0)), 0),  # no change
    ]
    expected_calls = [
        ([[0], [1]], [1.0, 0.0]),
        ([[2, 4], [0, 3]], [1.0, 0.0]),  # sides in order, players in id order
        ([[6], [7]], [0.0, 0.0]),
        ([[1], [2], [5], [6]], [1.0, 3.0, 1.0, 0.0]),
        ([[7], [3]], [0.0, 1.0]),
    ]
    return games, expected_calls


def adapter(model: str = "PlackettLuce", **params: float) -> OpenSkillRater:
    """An adapter with players 0..7 at the priors MU0, VAR0."""
    rater = OpenSkillRater(model=model, **params)  # type: ignore[arg-type]
    rater.add_players(np.arange(8), np.array(MU0), np.array(VAR0))
    return rater


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("tau2", [0.0, 0.3])
def test_the_adapter_equals_calling_model_rate_directly(model: str, tau2: float) -> None:
    models = pytest.importorskip("openskill.models")
    rater = adapter(model, beta2=1.7, tau2=tau2)
    games, calls = hand_built_games()
    rater.update(games[:2])
    rater.update(games[2:])
    library = getattr(models, model)(beta=math.sqrt(1.7), tau=math.sqrt(tau2))
    beliefs = {p: (MU0[p], math.sqrt(VAR0[p])) for p in range(8)}
    for teams, ranks in calls:
        ratings = [
            [library.rating(mu=beliefs[p][0], sigma=beliefs[p][1]) for p in t] for t in teams
        ]
        for team, new in zip(teams, library.rate(ratings, ranks=ranks), strict=True):
            for p, rating in zip(team, new, strict=True):
                beliefs[p] = (rating.mu, rating.sigma)
    ids = np.arange(8)
    np.testing.assert_allclose(rater.means(ids), [beliefs[p][0] for p in ids], rtol=1e-12)
    np.testing.assert_allclose(rater.variances(ids), [beliefs[p][1] ** 2 for p in ids], rtol=1e-12)
    assert rater.means(np.array([0]))[0] != MU0[0] and rater.means(np.array([4]))[0] != MU0[4]


def test_results_ignore_the_seat_order_and_batches_equal_one_game_at_a_time() -> None:
    pytest.importorskip("openskill")
    games, _ = hand_built_games()
    whole = adapter()
    whole.update(games)
    single = adapter()
    for game in games:
        single.update([game])
    flipped = adapter()
    flipped.update(
        [
            GameResult(g.game_id, g.mode, g.start, g.end, g.seats[::-1], g.winner)
            if g.mode != "1v1"
            else g
            for g in games
        ]
    )
    ids = np.arange(8)
    for other in (single, flipped):
        np.testing.assert_array_equal(other.means(ids), whole.means(ids))
        np.testing.assert_array_equal(other.variances(ids), whole.variances(ids))


def test_win_probability_is_the_librarys_predict_win_and_quality_trueskills() -> None:
    models = pytest.importorskip("openskill.models")
    rater = adapter(beta2=2.2)
    rater.update(hand_built_games()[0])
    library = models.PlackettLuce(beta=math.sqrt(2.2))
    ids = np.arange(8)
    mu, var = rater.means(ids), rater.variances(ids)
    a, b = np.array([0, 1, 2, 3, 6, 5]), np.array([1, 0, 7, 4, 2, 5])
    p = rater.win_probability(a, b)
    for k in range(a.size):
        teams = [
            [library.rating(mu=float(mu[a[k]]), sigma=math.sqrt(var[a[k]]))],
            [library.rating(mu=float(mu[b[k]]), sigma=math.sqrt(var[b[k]]))],
        ]
        assert p[k] == pytest.approx(library.predict_win(teams)[0], rel=1e-12)
    assert p[5] == 0.5
    np.testing.assert_allclose(p + rater.win_probability(b, a), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(
        rater.quality(a, b), match_quality(mu[a], var[a], mu[b], var[b], 2.2)
    )


def test_errors_name_the_parameter_or_the_game() -> None:
    pytest.importorskip("openskill")
    with pytest.raises(
        PluginError, match=r"model must be one of .*\(did you mean 'PlackettLuce'\?\)"
    ):
        RATERS.create("openskill", {"model": "PlacketLuce"})
    for param, value in [("beta2", 0.0), ("beta2", math.nan), ("tau2", -1.0), ("tau2", True)]:
        with pytest.raises(PluginError, match=rf"^rater 'openskill': {param} must be ") as info:
            RATERS.create("openskill", {param: value})
        assert "\n" not in str(info.value)
    rater = adapter()
    games, _ = hand_built_games()
    with pytest.raises(ValueError, match=r"game 1 \(team\): winner 4 is no side"):
        rater.update([games[0], GameResult(1, "team", 0.0, 20.0, games[1].seats, 4)])
    with pytest.raises(KeyError, match="unknown player id 11"):
        rater.update(
            [games[0], GameResult(7, "1v1", 0.0, 20.0, (stint(0, 0, 1), stint(11, 1, 0)), 0)]
        )
    np.testing.assert_array_equal(rater.means(np.arange(8)), MU0)  # all or nothing


def test_without_the_package_the_rater_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "openskill", None)
    monkeypatch.setitem(sys.modules, "openskill.models", None)
    with pytest.raises(PluginError) as info:
        RATERS.create("openskill")
    message = str(info.value)
    assert message.startswith("rater 'openskill': the openskill package is not installed")
    assert message.endswith("install it with: pip install 'lobbysim[openskill]'")
    assert "glicko2" in RATERS and "openskill" in RATERS  # lobbysim itself imports without it


def test_the_lobby_gives_the_adapter_the_games_beta2_and_checks_the_protocol() -> None:
    pytest.importorskip("openskill")
    scenario = Scenario.from_dict(
        {
            "game": {"beta2": 1.7},
            "raters": {"driver": "openskill", "shadows": [{"name": "openskill", "beta2": 3.0}]},
        }
    )
    driver, shadow = build_raters(scenario)
    assert isinstance(driver, Rater) and driver.skill_scale and driver.has_variance
    assert driver.beta2 == 1.7 and shadow.beta2 == 3.0


@pytest.mark.slow
def test_a_lobby_run_with_both_new_raters_as_shadows() -> None:
    pytest.importorskip("openskill")
    scenario = Scenario.from_dict(
        {
            "name": "shadows",
            "horizon": 480.0,
            "warmup": 60.0,
            "seed": 3,
            "arrivals": {"name": "poisson", "rate": 2.0},
            "population": {"session_games_mean": 12, "patience_mean": 5.0},
            "game": {"mode": "1v1", "length": 10.0},
            "raters": {"driver": "bayesian", "shadows": ["openskill", "glicko2"]},
        }
    )
    metrics = simulate(scenario).metrics
    tau = {name: metrics[f"{name}.kendall_tau"] for name in ("bayesian", "openskill", "glicko2")}
    # Seen: bayesian 0.526, openskill 0.490, glicko2 0.459 (seed 3).
    assert all(0.3 < value < 0.8 for value in tau.values()), tau
    assert abs(tau["openskill"] - tau["bayesian"]) < 0.1, tau
    assert math.isfinite(metrics["openskill.rating_rmse"])  # on the skill scale
    assert math.isnan(metrics["glicko2.rating_rmse"])  # not on it: Kendall's tau only
