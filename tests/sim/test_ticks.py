"""Timed matchmaking passes (``wake_on_arrival: false``): the tick grid and game ends on it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import collect, simulate
from lobbysim.scenario import Scenario
from tests.sim.lobby_helpers import base, players, scripted

SEEDS = range(5)


def timed(tick: float, rate: float, session_games: int, horizon: float, length: float) -> Scenario:
    """A 1v1 lobby with passes only on the tick: no quits, anyone admissible, endless patience."""
    return Scenario.from_dict(
        {
            "horizon": horizon,
            "warmup": 0,
            "arrivals": {"name": "poisson", "rate": rate},
            "population": {"session_games_mean": session_games, "patience_mean": None},
            "game": {"length": length},
            "matchmaker": {
                "policy": "point_estimate",
                "tick": tick,
                "wake_on_arrival": False,
                "threshold": [[0, 0.0]],
            },
            "raters": {"driver": "bayesian", "shadows": []},
        }
    )


def spells(waits: pd.DataFrame) -> pd.Series:
    """Return each queueing spell's number within its player's session (0: the first)."""
    return waits.sort_values(["player_id", "enqueued"]).groupby("player_id").cumcount()


@pytest.mark.parametrize("tick", [0.1, 0.3])
@pytest.mark.parametrize("seed", SEEDS)
def test_players_requeued_at_a_game_end_make_that_ticks_pass(tick: float, seed: int) -> None:
    # Games last 3 minutes, a whole number of ticks: both players queue again exactly on a tick,
    # and that tick's pass pairs everybody waiting but one if their number is odd. Only that
    # left-over waits a tick or more (here 2-6% of the players queueing again; 70-80% when
    # the game ends rounded off the tick, so that they wait a tick less a rounding error:
    # hence "late" is a wait of over half a tick).
    result = simulate(timed(tick, rate=10.0, session_games=10, horizon=100, length=3.0), seed)
    waits = result.waits
    assert (waits.outcome != "abandoned").all()
    requeued = waits[(spells(waits) > 0) & (waits.outcome == "matched")]
    assert len(requeued) > 3000
    late = float((requeued.wait > tick / 2).mean())
    assert late <= 0.10, late
    # every game ends on the tick grid, bit for bit
    assert (result.games.end == np.round(result.games.end / tick) * tick).all()


@pytest.mark.parametrize(("rate", "tick"), [(1.0, 0.5), (2.0, 1.0), (4.0, 0.3)])
@pytest.mark.parametrize("seed", SEEDS)
def test_mean_wait_of_fresh_arrivals_has_its_closed_form(
    rate: float, tick: float, seed: int
) -> None:
    """Poisson arrivals (rate lambda), one game each, a pass every tau minutes pairing everyone
    waiting but one if their number is odd.

    A player waits for the next tick (tau / 2 on average: Poisson arrival times are uniform
    within a tick) plus tau for every pass that leaves it over. The number carried over,
    C_{k+1} = (C_k + N_k) mod 2 with N_k ~ Poisson(lambda tau) arrivals, is a symmetric two-state
    chain that flips with probability p = (1 - exp(-2 lambda tau)) / 2, so in steady state half
    of the passes carry one player: tau / 2 per tick, 1 / (2 lambda) per player, and

        E[wait] = tau / 2 + 1 / (2 lambda).

    Standard error of the mean over n players and K = T / tau ticks: the residuals give
    tau^2 / (12 n); the carries sum to tau * C, with C a sum of K chain states of variance 1/4
    and lag-j correlation rho^j, rho = 1 - 2p = exp(-2 lambda tau), so
    var(tau C / n) = tau^2 K (1 + rho) / (4 (1 - rho) n^2); the count n itself (Poisson) adds
    (1 / (2 lambda))^2 / n. Over 250 other seeds the means centred on E[wait] with a spread
    within 6% of this standard error; the test allows 4.5 standard errors. The
    pass makes every pair it can: threshold 0, and blocks of 8 in rating order (alternately
    offset by 4) hold an even number of players whenever the pool does.
    """
    horizon, warmup = 1000.0, 50.0
    result = simulate(timed(tick, rate, session_games=1, horizon=horizon, length=1.0), seed)
    waits = result.waits
    wait = waits[(waits.enqueued >= warmup) & (waits.outcome == "matched")].wait.to_numpy()
    expected = tick / 2 + 1 / (2 * rate)
    n = wait.size
    ticks = (horizon - warmup) / tick
    rho = math.exp(-2 * rate * tick)
    var = (
        tick**2 / (12 * n)
        + tick**2 * ticks * (1 + rho) / (4 * (1 - rho) * n**2)
        + (1 / (2 * rate)) ** 2 / n
    )
    assert abs(wait.mean() - expected) <= 4.5 * math.sqrt(var), (wait.mean(), expected)


def test_a_game_ends_on_its_tick_even_where_no_timeout_could_reach_it() -> None:
    # Matched on tick 4 (0.4), a one-minute game ends on tick 14: 14 * 0.1 is
    # 1.4000000000000001, and no delay d gives 0.4 + d == 14 * 0.1 in floating point. The
    # ticker itself ends the game, so both players queue again in time for tick 14's pass.
    tick = 0.1
    assert all(0.4 + d != 14 * tick for d in (14 * tick - 0.4, 1.0, 1.0000000000000002))
    scenario = base(tick=tick, wake_on_arrival=False).replace(
        game=Scenario.from_dict({"game": {"length": 1.0}}).game
    )
    sim = scripted(scenario, [(0.35, players([0.0, 0.5], games=2))], iter([math.inf] * 4))
    sim.env.run(until=3)
    result = collect(sim, 0)
    assert result.games.start.tolist() == [4 * tick, 14 * tick]
    assert result.games.end.tolist() == [14 * tick, 24 * tick]
    second = result.waits[result.waits.enqueued > 1.0]
    assert second.enqueued.tolist() == [14 * tick] * 2
    assert second.wait.tolist() == [0.0, 0.0]
