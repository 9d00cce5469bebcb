"""The SimPy lobby: trace-style tests of each behaviour, reproducibility and conservation."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
import trueskill

from lobbysim.experiments.simulation import collect, simulate
from lobbysim.policies import Decision
from lobbysim.raters import BayesianRater
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.skill.gaussian import match_quality, update_1v1
from lobbysim.streams import Streams
from tests.sim.lobby_helpers import base, players, scripted


def test_a_player_reneges_at_exactly_its_patience() -> None:
    sim = scripted(base(), [(0.0, players([0.0])), (4.0, players([0.0]))], iter([2.5, 1.25]))
    sim.env.run(until=20)
    result = collect(sim, 0)
    assert result.waits[["player_id", "enqueued", "left_queue", "outcome"]].values.tolist() == [
        [0, 0.0, 2.5, "abandoned"],
        [1, 4.0, 5.25, "abandoned"],
    ]
    assert result.players.state.tolist() == ["abandoned", "abandoned"]


def test_the_matchmaker_wakes_when_a_player_queues() -> None:
    # The tick is 50 minutes; with wake_on_arrival the second arrival is matched at once.
    for wake, matched_at in ((True, 7.5), (False, 50.0)):
        sim = scripted(
            base(tick=50.0, wake_on_arrival=wake),
            [(2.0, players([0.0])), (7.5, players([0.1]))],
            iter([math.inf] * 4),
        )
        sim.env.run(until=60)
        waits = collect(sim, 0).waits
        assert waits.left_queue.tolist() == [matched_at, matched_at]
        assert waits.outcome.tolist() == ["matched", "matched"]


def test_the_threshold_relaxes_on_schedule() -> None:
    quality = float(match_quality(0.0, 1.0, 3.0, 1.0, 2.5))
    schedule = [[0, 0.9], [3.0, quality - 0.01]]
    sim = scripted(
        base(tick=0.5, threshold=schedule), [(0.0, players([0.0, 3.0]))], iter([math.inf] * 4)
    )
    sim.env.run(until=20)
    result = collect(sim, 0)
    assert result.waits.left_queue.tolist() == [3.0, 3.0]
    assert result.games.quality_predicted.iloc[0] == pytest.approx(quality)


@pytest.mark.slow
def test_a_quitter_loses_a_1v1_and_the_game_ends_at_the_quit() -> None:
    scenario = Scenario.from_dict(
        {
            "horizon": 400,
            "warmup": 0,
            "game": {"length": 10, "quit_rate": 0.2},
            "arrivals": {"name": "poisson", "rate": 2.0},
            "population": {"patience_mean": None},
        }
    )
    result = simulate(scenario, seed=4)
    parts = result.participants
    quit_games = parts[parts.quit].game_id.unique()
    assert len(quit_games) > 50
    games = result.games.set_index("game_id")
    for game_id in quit_games:
        seats = parts[parts.game_id == game_id]
        quitter = seats[seats.quit]
        assert len(quitter) == 1
        assert games.loc[game_id, "winner"] != quitter.team.iloc[0]  # the quitter lost
        assert games.loc[game_id, "end"] - games.loc[game_id, "start"] < 10.0
        assert (seats.left == games.loc[game_id, "end"]).all()  # both leave when it ends
    full = parts[~parts.game_id.isin(quit_games)]
    assert np.allclose(full.minutes, 10.0)


def test_same_seed_same_bytes_and_common_random_numbers_across_policies() -> None:
    def run(policy: str, seed: int = 3) -> Any:
        scenario = Scenario.from_dict(
            {
                "horizon": 240,
                "warmup": 20,
                "arrivals": {"name": "poisson", "rate": 3.0},
                "game": {"length": 8, "quit_rate": 0.02},
                "matchmaker": {"policy": policy, "threshold": [[0, 0.6], [1, 0.3], [3, 0]]},
                "population": {"patience_mean": 2.0},
            }
        )
        return simulate(scenario, seed=seed)

    a, b = run("draw_chance"), run("draw_chance")
    for frame in ("games", "participants", "waits", "ratings", "players"):
        assert getattr(a, frame).to_csv().encode() == getattr(b, frame).to_csv().encode()
    assert a.metrics == b.metrics or all(
        (x == y) or (math.isnan(x) and math.isnan(y))
        for x, y in zip(a.metrics.values(), b.metrics.values(), strict=True)
    )
    c = run("point_estimate")
    # the same players arrive at the same times with the same skills, whatever the policy
    pd.testing.assert_series_equal(a.players.skill, c.players.skill)
    first_a = a.waits.groupby("player_id").enqueued.min()
    first_c = c.waits.groupby("player_id").enqueued.min()
    pd.testing.assert_series_equal(first_a, first_c)
    assert not a.games.equals(c.games)  # ... but different matches
    assert not run("draw_chance", seed=4).games.equals(a.games)


def test_conservation() -> None:
    scenario = Scenario.from_dict(
        {
            "horizon": 300,
            "warmup": 30,
            "arrivals": {"name": "bursts", "rate": 1.0},
            "game": {"length": 10, "quit_rate": 0.03, "quit_behind_multiplier": 3.0},
            "population": {
                "patience_mean": 1.5,
                "registered_fraction": 0.7,
                "session_minutes_mean": 60,
            },
        }
    )
    sim = LobbySimulation(scenario, Streams(8))
    change_sums: list[float] = []

    class Recording:
        """Delegates to the SPH Elo rater and keeps each game's sum of rating changes."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def update(self, games: Any) -> None:
            self.inner.update(games)
            change_sums.extend(self.inner.last_batch_change_sums)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    sim.raters = [(n, Recording(r) if n == "sph_elo" else r) for n, r in sim.raters]
    sim.run()
    result = collect(sim, 8)
    # every game's SPH Elo changes sum to zero
    assert len(change_sums) == len(result.games) > 100
    assert max(abs(x) for x in change_sums) < 1e-9
    players = result.players
    # every player who arrived is accounted for exactly once
    assert len(players) == players.player_id.nunique()
    assert sum(sim.states().values()) == len(players)
    waiting = set(result.waits[result.waits.outcome == "still_waiting"].player_id)
    assert waiting == set(players[players.state == "waiting"].player_id)
    # a player's spells never overlap and end in one way each
    assert (
        result.waits.groupby("player_id").outcome.apply(lambda o: (o != "matched").sum() <= 1)
    ).all()
    # SPH Elo is zero-sum game by game, so over the run too
    final = result.ratings[
        (result.ratings.rater == "sph_elo") & (result.ratings.time == result.ratings.time.max())
    ]
    registered = players.registered.to_numpy()
    assert final.rating.to_numpy()[registered].sum() == pytest.approx(500.0 * registered.sum())
    assert np.allclose(final.rating.to_numpy()[~registered], 500.0)
    # no participant's minutes exceed the game's
    games = result.games.set_index("game_id")
    lengths = (
        games.loc[result.participants.game_id, "end"].to_numpy()
        - games.loc[result.participants.game_id, "start"].to_numpy()
    )
    assert (result.participants.minutes.to_numpy() <= lengths + 1e-9).all()


def test_a_variance_policy_on_a_rater_without_variances_is_a_configuration_error() -> None:
    scenario = Scenario.from_dict(
        {
            "matchmaker": {"policy": "knowledge_gradient"},
            "raters": {"driver": "sph_elo", "shadows": ["bayesian"]},
        }
    )
    with pytest.raises(PluginError, match="'knowledge_gradient' needs belief variances"):
        LobbySimulation(scenario, Streams(0))
    ok = scenario.replace(
        matchmaker=Scenario.from_dict({"matchmaker": {"policy": "point_estimate"}}).matchmaker
    )
    assert simulate(ok.replace(horizon=30, warmup=0), seed=1).metrics["games_per_hour"] > 0


def test_reneging_goes_on_when_the_next_wake_up_rounds_below_its_deadline() -> None:
    # At D0 the next wake-up is set for now + (D1 - now), which rounds to just below D1 here;
    # it must still remove the player (and the ones after), not leave reneging stalled.
    since, d0, d1 = 1.0519568355251696, 1.174142347094801, 3.9095038278263368
    p0, p1 = d0 - since, d1 - since
    d0, d1 = since + p0, since + p1  # the deadlines as the lobby computes them
    assert d0 + (d1 - d0) < d1
    scenario = base(threshold=[[0, 0.99]])  # nobody is ever matched
    arrivals = [(since, players([0.0, 10.0])), (5.0, players([20.0]))]
    sim = scripted(scenario, arrivals, iter([p0, p1, 1.0]))
    sim.env.run(until=20)
    waits = collect(sim, 0).waits
    assert waits.outcome.tolist() == ["abandoned"] * 3
    assert waits.left_queue.tolist() == pytest.approx([d0, d1, 6.0], abs=1e-12)
    assert (waits.left_queue >= waits.enqueued + np.array([p0, p1, 1.0]) - 1e-15).all()


def test_the_raters_beta2_defaults_to_the_games_and_an_explicit_one_is_kept() -> None:
    game = {"length": 10, "beta2": 1.0}
    scenario = Scenario.from_dict(
        {"horizon": 100, "warmup": 0, "game": game, "raters": {"driver": "bayesian"}}
    )
    sim = scripted(scenario, [(0.0, players([0.0, 1.5], var=2.0, skill=[3.0, -3.0]))])
    assert sim.driver.beta2 == 1.0
    assert sim.matchmaker.beta2 == 1.0
    sim.env.run(until=20)
    sim.apply_pending()
    (game_row,) = collect(sim, 0).games.itertuples()
    winner, loser = (0, 1) if game_row.winner == 0 else (1, 0)
    mu0, var0 = [0.0, 1.5], [2.0, 2.0]
    want = update_1v1(mu0[winner], var0[winner], mu0[loser], var0[loser], beta2=1.0)
    ids = np.array([winner, loser])
    np.testing.assert_allclose(sim.driver.means(ids), [want[0], want[2]], rtol=1e-14)
    np.testing.assert_allclose(sim.driver.variances(ids), [want[1], want[3]], rtol=1e-14)
    oracle = trueskill.TrueSkill(
        mu=0.0, sigma=1.0, beta=1.0, tau=0.0, draw_probability=0.0, backend="mpmath"
    )
    new_w, new_l = oracle.rate_1vs1(
        oracle.create_rating(mu0[winner], math.sqrt(var0[winner])),
        oracle.create_rating(mu0[loser], math.sqrt(var0[loser])),
    )
    np.testing.assert_allclose(sim.driver.means(ids), [new_w.mu, new_l.mu], rtol=1e-9)
    np.testing.assert_allclose(
        sim.driver.variances(ids), [new_w.sigma**2, new_l.sigma**2], rtol=1e-9
    )

    explicit = Scenario.from_dict(
        {
            "game": game,
            "raters": {
                "driver": {"name": "bayesian", "beta2": 3.0},
                "shadows": ["sph_elo", {"name": "bayesian", "tau2": 0.01}],
            },
        }
    )
    sim = LobbySimulation(explicit, Streams(0))
    assert sim.driver.beta2 == 3.0  # a deliberate model mismatch stays
    assert sim.matchmaker.beta2 == 3.0
    assert sim.shadows[1].beta2 == 1.0  # a shadow without beta2 gets the game's too


SEEN_BETA2: list[float] = []


@dataclass(frozen=True)
class SeesBeta2:
    """A policy that notes the ``beta2`` it is given and likes everybody alike."""

    name: ClassVar[str] = "sees_beta2"
    needs_variance: ClassVar[bool] = False

    def score(self, decision: Decision) -> Any:
        SEEN_BETA2.append(decision.beta2)
        return np.zeros(np.shape(decision.mu))


@dataclass(frozen=True, eq=False)
class FlatQuality(BayesianRater):
    """A Bayesian rater that finds every match of quality 0.42."""

    name: ClassVar[str] = "flat_quality"

    def quality(self, ids_a: Any, ids_b: Any) -> Any:
        return np.full(np.shape(ids_a), 0.42)


@pytest.mark.parametrize(
    ("driver", "beta2", "quality"),
    [
        ({"name": "bayesian", "beta2": 3.0}, 3.0, None),
        ({"name": "sph_elo", "t": 90.0}, math.pi**2 * 90.0**2 / 6.0, 1.0),
        ({"name": "tests.sim.test_lobby:FlatQuality"}, 1.0, 0.42),
    ],
)
def test_the_matchmaker_asks_the_driving_rater_for_quality_and_beta2(
    driver: dict[str, Any], beta2: float, quality: float | None
) -> None:
    scenario = Scenario.from_dict(
        {
            "horizon": 30,
            "warmup": 0,
            "game": {"length": 10, "beta2": 1.0},
            "matchmaker": {
                "tick": 1.0,
                "policy": "tests.sim.test_lobby:SeesBeta2",
                "assignment": "sequential",
            },
            "raters": {"driver": driver, "shadows": []},
        }
    )
    SEEN_BETA2.clear()
    sim = scripted(scenario, [(0.0, players([0.0, 1.0, 5.0, 9.0]))], iter([math.inf] * 9))
    sim.env.run(until=12)
    games = collect(sim, 0).games
    assert len(games) == 2 and len(SEEN_BETA2) >= 2
    assert all(seen == pytest.approx(beta2) for seen in SEEN_BETA2)
    assert sim.matchmaker.beta2 == pytest.approx(beta2)
    if quality is None:  # TrueSkill's quality of the two pairs from the priors
        parts = collect(sim, 0).participants.sort_values(["game_id", "team"])
        mu = parts.player_id.map({0: 0.0, 1: 1.0, 2: 5.0, 3: 9.0}).to_numpy()
        expected = match_quality(mu[0::2], 1.0, mu[1::2], 1.0, 3.0)
        np.testing.assert_array_equal(games.quality_predicted.to_numpy(), expected)
    else:  # the Elo's players all start at 500: even matches; or the user rater's own
        assert games.quality_predicted.tolist() == [quality, quality]


def test_a_run_keeps_blas_on_one_thread_and_restores_the_limit() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]

    scenario = Scenario.from_dict(
        {"horizon": 30, "warmup": 0, "arrivals": {"name": "poisson", "rate": 2.0}}
    )
    sim = LobbySimulation(scenario, Streams(1))
    during: list[list[int]] = []
    before_pass = sim.matchmaker.before_pass

    def watched() -> None:
        during.append(blas_threads())
        before_pass()

    sim.matchmaker.before_pass = watched
    with threadpool_limits(limits=2, user_api="blas"):
        outside = blas_threads()
        sim.run()
        assert blas_threads() == outside
    assert during and outside
    assert all(threads == [1] * len(outside) for threads in during)
    assert outside != [1] * len(outside)  # the test would not see a missing limit otherwise
