"""Skill dynamics: true skills that drift, and newcomers who are still learning.

docs/model.md, "Skill dynamics". The statistical checks hold for every seed of a fixed range;
each tolerance is a multiple of the statistic's standard error, and a wrong formula (another
variance per day, increments that do not add up, the learning curve off by one game) moves the
statistic by many standard errors.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lobbysim.experiments.simulation import GAME_COLUMNS, simulate
from lobbysim.players.population import Population
from lobbysim.records.rows import GameResult
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import Player
from lobbysim.sim.skill_dynamics import SkillDynamics, learning_gap
from lobbysim.streams import Streams

DAY = 1440.0


def members_only(
    days: float,
    size: int,
    *,
    population: dict[str, Any],
    per_day: float = 1.0,
    raters: dict[str, Any] | None = None,
) -> Scenario:
    """A lobby of ``size`` members who never give up queueing and never leave the base.

    With no patience and no session time limit a queueing spell ends only when a pass matches
    the player, so every spell is seen by a pass and each member's walk starts when they first
    queue (the first ``enqueued`` of their waits).
    """
    spec: dict[str, Any] = {
        "name": "dynamics",
        "horizon": days * DAY,
        "warmup": 0,
        "arrivals": {"name": "none"},
        "population": {"patience_mean": None, "session_games_mean": 3, **population},
        "game": {"length": 10},
        "matchmaker": {"policy": "draw_chance", "tick": 5.0, "wake_on_arrival": False},
        "records": {"ratings_every": DAY},
        "base": {"size": size, "visits": {"name": "daily", "per_day": per_day}},
    }
    if raters is not None:
        spec["raters"] = raters
    return Scenario.from_dict(spec)


# ---------------------------------------------------------------------------- parameters
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"skill_drift_per_day": -0.1}, "skill_drift_per_day must be >= 0, got -0.1"),
        ({"skill_drift_per_day": math.nan}, "skill_drift_per_day must be a finite number, got nan"),
        ({"skill_drift_per_day": math.inf}, "skill_drift_per_day must be a finite number, got inf"),
        ({"learning_deficit": -1.0}, "learning_deficit must be >= 0, got -1.0"),
        ({"learning_deficit": True}, "learning_deficit must be a finite number, got True"),
        ({"learning_games": 0}, "learning_games must be > 0, got 0"),
        ({"learning_games": -3.0}, "learning_games must be > 0, got -3.0"),
        ({"learning_games": -math.inf}, "learning_games must be a finite number, got -inf"),
    ],
)
def test_bad_dynamics_parameters_are_one_line_errors_naming_them(
    params: dict[str, Any], message: str
) -> None:
    with pytest.raises(PluginError) as info:
        Population.from_params(params)
    assert str(info.value) == f"population: {message}"
    scenario = members_only(1.0, 10, population=params)
    with pytest.raises(PluginError, match=f"^population: {message}$"):
        simulate(scenario, 1)


def test_with_the_dynamics_off_nothing_is_built_and_no_drift_is_drawn() -> None:
    sim = LobbySimulation(members_only(0.2, 20, population={}), Streams(1))
    sim.run()
    assert sim.games.dynamics is None
    assert "drift" not in sim.streams.names()
    # a learning curve alone draws nothing either
    sim = LobbySimulation(members_only(0.2, 20, population={"learning_deficit": 1}), Streams(1))
    sim.run()
    assert sim.games.dynamics is not None and not sim.games.dynamics.drifts
    assert "drift" not in sim.streams.names()


# ---------------------------------------------------------------------------------- drift
def _players(n: int) -> list[Player]:
    return [Player(pid, 0.0, 0.0, 1.0, True, 0, 0.0) for pid in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_lazy_drift_read_at_many_times_has_the_distribution_of_one_read(seed: int) -> None:
    """Increments over a partition of [0, T] add up to one increment over [0, T]."""
    drift, days, n, reads = 0.3, 4.0, 4000, 40
    dynamics = SkillDynamics(drift, 0.0, 20.0, Streams(seed))
    rng = np.random.default_rng(seed)
    often, once = _players(n), _players(n)
    end = days * DAY
    times = np.sort(rng.uniform(0.0, end, size=(n, reads)), axis=1)
    for player, when in zip(often, times.tolist(), strict=True):
        for t in when:
            dynamics.bring_up_to_date(player, t, since=0.0)
        dynamics.bring_up_to_date(player, end)
    for player in once:
        dynamics.bring_up_to_date(player, end, since=0.0)
    a = np.array([p.skill for p in often])
    b = np.array([p.skill for p in once])
    assert all(p.skill_time == end for p in often + once)
    expected = drift * days
    # each: mean 0 (SE sqrt(var / n)) and variance drift * days (SE of a variance ratio:
    # sqrt(2 / n)); between them: the ratio of the variances, SE sqrt(2 / n + 2 / n)
    for x in (a, b):
        assert abs(x.mean()) < 4 * math.sqrt(expected / n)
        assert abs(x.var() / expected - 1) < 4 * math.sqrt(2 / n)
    assert abs(a.var() / b.var() - 1) < 4 * math.sqrt(4 / n)


def test_a_walk_starts_when_the_player_first_waits() -> None:
    dynamics = SkillDynamics(1.0, 0.0, 20.0, Streams(3))
    player = _players(1)[0]
    dynamics.bring_up_to_date(player, 500.0)  # not waiting, walk not started: unchanged
    assert player.skill == 0.0 and math.isnan(player.skill_time)
    dynamics.bring_up_to_date(player, 500.0, since=500.0)  # starts now: nothing elapsed
    assert player.skill == 0.0 and player.skill_time == 500.0
    dynamics.bring_up_to_date(player, 2000.0)
    assert player.skill != 0.0 and player.skill_time == 2000.0


def _drift_run(seed: int, drift: float) -> pd.DataFrame:
    """Return, per member who played, the skill increment over the run, the days since their
    walk started, and their games; ``drift`` per day."""
    days, size = 3.0, 500
    scenario = members_only(days, size, population={"skill_drift_per_day": drift}, per_day=2.0)
    result = simulate(scenario, seed)
    start = members_only(1 / DAY, size, population={})  # the skills as drawn: a 1-minute run
    drawn = simulate(start, seed).players.set_index("player_id").skill
    players = result.players.set_index("player_id")
    first_queued = result.waits.groupby("player_id").enqueued.min()
    out = pd.DataFrame(
        {
            "increment": players.skill - drawn,
            "days": (days * DAY - first_queued) / DAY,
            "games": players.games,
        }
    ).dropna()
    assert len(out) > 0.9 * size  # nearly every member came to play
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_drift_increments_have_mean_zero_and_variance_drift_times_days(seed: int) -> None:
    drift = 0.4
    run = _drift_run(seed, drift)
    z = run.increment / np.sqrt(drift * run.days)  # N(0, 1) each if the drift is right
    n = len(z)
    assert abs(z.mean()) < 4 / math.sqrt(n)
    # sum z^2 ~ chi-square(n): its mean is 1 with standard error sqrt(2 / n)
    assert abs((z**2).mean() - 1) < 4 * math.sqrt(2 / n)
    assert stats.chi2.sf((z**2).sum(), n) > 1e-4 and stats.chi2.cdf((z**2).sum(), n) > 1e-4
    # members who played much (their skill read at many more times) and little: same law
    many = run.games > run.games.median()
    zm, zf = z[many], z[~many]
    assert run.games[many].mean() > 1.5 * run.games[~many].mean()
    ratio = (zm**2).mean() / (zf**2).mean()
    assert abs(ratio - 1) < 4 * math.sqrt(2 / len(zm) + 2 / len(zf))


def test_a_run_with_drift_is_reproducible_and_moves_the_skills() -> None:
    scenario = members_only(1.0, 60, population={"skill_drift_per_day": 0.5})
    first, again = simulate(scenario, 4), simulate(scenario, 4)
    for kind in ("games", "participants", "waits", "ratings", "players"):
        pd.testing.assert_frame_equal(getattr(first, kind), getattr(again, kind))
    still = simulate(members_only(1.0, 60, population={}), 4)
    moved = first.players.skill.to_numpy() != still.players.skill.to_numpy()
    queued = first.players.player_id.isin(first.waits.player_id).to_numpy()
    assert queued.sum() > 20
    np.testing.assert_array_equal(moved, queued)  # the walk starts when a member first queues


# ------------------------------------------------------------------------- learning curve
def _learning_run(seed: int, deficit: float, games: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return per seat (game, side, player, n, performance) of every game, and the games."""
    population = {"learning_deficit": deficit, "learning_games": games, "session_games_mean": 4}
    scenario = members_only(2.0, 300, population=population, per_day=3.0)
    sim = LobbySimulation(scenario, Streams(seed))
    scored: list[GameResult] = []
    score = sim.games.score_finished

    def traced() -> list[GameResult]:
        results = score()
        scored.extend(results)
        return results

    sim.games.score_finished = traced  # type: ignore[method-assign]
    sim.run()
    rows = [
        (g.game_id, side, seat.player_id, seat.performance)
        for g in scored
        for side, seat in enumerate(g.seats)
    ]
    seats = pd.DataFrame(rows, columns=["game_id", "side", "player_id", "performance"])
    seats = seats.sort_values(["game_id", "side"], ignore_index=True)
    seats["n"] = seats.groupby("player_id").cumcount()  # games started before (1v1, no quits)
    skill = {p.pid: p.skill for p in sim.players if p is not None}
    seats["skill"] = seats.player_id.map(skill)
    games = pd.DataFrame.from_records(sim.records.games, columns=GAME_COLUMNS)
    return seats, games


@pytest.mark.parametrize("seed", [1, 2])
def test_the_truth_of_a_game_is_the_effective_skill_on_the_learning_curve(seed: int) -> None:
    deficit, games = 3.0, 4.0
    seats, records = _learning_run(seed, deficit, games)
    assert seats.n.max() > 15
    # the record's true skill gap is exactly the gap of the effective skills
    seats["effective"] = seats.skill - deficit * np.exp(-seats.n / games)
    sides = seats.pivot(index="game_id", columns="side", values="effective")
    gap = records.set_index("game_id").skill_gap_true
    np.testing.assert_allclose(
        gap.loc[sides.index].to_numpy(), (sides[0] - sides[1]).abs().to_numpy(), atol=1e-12
    )
    # performances are drawn around it: mean(performance - skill) by n is -deficit e^(-n / L)
    beta2 = 2.5
    by_n = (seats.performance - seats.skill).groupby(seats.n).agg(["mean", "count"])
    by_n = by_n[(by_n.index < 4 * games) & (by_n["count"] >= 50)]  # where the curve bends
    assert len(by_n) == 4 * games

    def chi2(shift: int) -> float:
        predicted = -deficit * np.exp(-(by_n.index + shift) / games)
        return float((((by_n["mean"] - predicted) ** 2) * by_n["count"] / beta2).sum())

    limit = stats.chi2.ppf(1 - 1e-4, len(by_n))
    assert chi2(0) < limit
    assert chi2(1) > limit and chi2(-1) > limit  # off by one game: rejected
    assert learning_gap(0, deficit, games) == deficit


def test_true_skills_of_the_waiting_are_current_and_on_the_learning_curve() -> None:
    population = {"skill_drift_per_day": 0.5, "learning_deficit": 1.5, "learning_games": 3}
    sim = LobbySimulation(members_only(1.0, 200, population=population, per_day=4), Streams(2))
    sim.start_arrivals()
    sim.start_service()
    until = 0.5 * DAY + 4.9  # just before a tick, when players are waiting for its pass
    while len(sim.pool) < 4:
        sim.advance(until)
        until += 5.0
    waiting = list(sim.pool.values())
    truth = sim.games.true_skills(waiting)
    now = sim.env.now
    expected = [
        w.player.skill - 1.5 * math.exp(-(w.player.games + w.player.unscored) / 3) for w in waiting
    ]
    np.testing.assert_allclose(truth, expected, rtol=0, atol=0)
    assert all(w.player.skill_time == now for w in waiting)


# --------------------------------------------------------------- the dynamics factor tau2
@pytest.mark.slow
def test_a_rater_with_a_dynamics_variance_ranks_drifting_skills_better() -> None:
    """A month of drift (0.05 per day) in a base of daily visitors: the Bayesian rater with
    tau2 matched to the drift per game (three games per member and day: 0.05 / 3) ranks the
    final true skills better than with tau2 = 0, whose beliefs harden on old skills.

    Kendall tau (tau2 = 0 -> 0.05 / 3) measured: seed 1 0.789 -> 0.798, seed 2 0.764 -> 0.787;
    seeds 1 to 8 all gain, by 0.008 to 0.039 (mean 0.027).
    """
    drift, games_per_day = 0.05, 3.0
    matched = drift / games_per_day
    gains = []
    for seed in (1, 2):
        taus = []
        for tau2 in (0.0, matched):
            scenario = members_only(
                30.0,
                250,
                population={"skill_drift_per_day": drift, "session_games_mean": games_per_day},
                raters={"driver": {"name": "bayesian", "tau2": tau2}, "shadows": []},
            )
            taus.append(simulate(scenario, seed).metrics["bayesian.kendall_tau"])
        gains.append(taus[1] - taus[0])
        print(
            f"seed {seed}: kendall tau {taus[0]:.4f} (tau2 0), {taus[1]:.4f} (tau2 {matched:.4f})"
        )
    assert min(gains) > 0 and sum(gains) / len(gains) > 0.01, gains
