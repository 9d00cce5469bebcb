"""The calibrated scenario's warm-up (lobbysim/calibration/run.py, ``warmup_plan``, ``after``):
days before the log's span, a base sized to hold the fitted members at their end, and the
simulation compared from there."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lobbysim.calibration.fit import BaseFit
from lobbysim.calibration.run import MAX_WARMUP_DAYS, WARMUP_GAMES, after, warmup_plan
from lobbysim.scenario import load_scenario
from tests.calibration.logs import random_log

SAMPLE = Path(__file__).resolve().parents[2] / "lobbysim" / "scenarios" / "logs"


def base(size: float, newcomers: float, leave: float) -> BaseFit:
    return BaseFit(size, newcomers, 1.0, 2.0, leave, 0.0, int(size), 0.1)


def data(per_day: float, games: float, size: int = 500) -> dict[str, Any]:
    return {
        "population": {"session_games_mean": games},
        "base": {"size": size, "visits": {"per_day": per_day}},
    }


def test_the_warmup_lets_a_member_play_its_games_and_the_base_reach_the_fitted_size() -> None:
    # 2 visits a day of 5 games: 20 games in 2 days
    warmup, size = warmup_plan(base(500.0, 5.0, 0.01), data(2.0, 5.0))
    assert warmup == 2 * 1440.0
    # the base at minute 0 grows to 500 by the warm-up's end: 500 (its steady size) stays 500
    assert size == 500
    # a base below its steady size (10 / 0.01 = 1000) was smaller two days before
    _, grown = warmup_plan(base(400.0, 10.0, 0.01), data(2.0, 5.0))
    expected = 1000 + (400 - 1000) * math.exp(0.02)
    assert grown == round(expected) and grown < 400
    # no leaving: N0 - nu W
    assert warmup_plan(base(400.0, 10.0, 0.0), data(2.0, 5.0))[1] == 380
    # a slow visitor: the longest warm-up; a busy one: a day
    assert warmup_plan(base(500.0, 5.0, 0.01), data(0.1, 2.0))[0] == MAX_WARMUP_DAYS * 1440.0
    assert warmup_plan(base(500.0, 5.0, 0.01), data(10.0, 6.0))[0] == 1440.0
    assert WARMUP_GAMES == 20


def test_a_base_growing_fast_gets_a_shorter_warmup_never_an_empty_base() -> None:
    # 300 members and 200 newcomers a day: 4 days back the base would be empty
    warmup, size = warmup_plan(base(300.0, 200.0, 0.01), data(0.5, 4.0))
    assert warmup == 1440.0 and size >= 1  # 10 days wanted; only one day back has members
    assert size == round(20000 + (300 - 20000) * math.exp(0.01))
    # none at all where even a day back is empty
    assert warmup_plan(base(100.0, 200.0, 0.01), data(0.5, 4.0)) == (0.0, 100)


def test_after_keeps_the_matches_from_a_minute_on_the_clock_moved_back() -> None:
    log = random_log(np.random.default_rng(4), matches=200, players=30)
    cut = after(log, 30.0)
    firsts = log.seats.groupby("match")["start"].first().to_numpy()
    assert cut.matches == int((firsts >= 30.0).sum()) > 0
    assert cut.seats["start"].min() >= 0.0
    assert np.isclose(cut.seats["end"].max(), log.seats["end"].max() - 30.0)
    assert sorted(cut.seats["start"] + 30.0) == sorted(
        log.seats.loc[log.seats["start"] >= 30.0, "start"]
    )
    assert after(log, 0.0) is log


@pytest.mark.slow
def test_the_calibrated_scenario_carries_its_warmup() -> None:
    """On the bundled sample log (2 days, ~2 visits a day of ~5 games): a warm-up of
    ceil(20 / (visits x games a visit)) days (2 or 3: the refined visit rate and games a visit
    are near 10 games a day), the horizon that plus 2 days, the comparison simulation from the
    warm-up's end."""
    from lobbysim.calibration.read import read_log
    from lobbysim.calibration.run import calibrate

    log = read_log(SAMPLE / "quickstart_games.csv.gz")
    cal = calibrate(log, load_scenario("quickstart"), refine=1, seed=5)
    population, visits = cal.scenario.population, cal.scenario.base.visits.params  # type: ignore[union-attr]
    days = math.ceil(20 / (float(visits["per_day"]) * float(population["session_games_mean"])))
    assert days in (2, 3) and cal.warmup == days * 1440.0
    assert cal.scenario.warmup == cal.warmup
    assert cal.scenario.horizon == cal.warmup + 2 * 1440.0
    assert cal.simulated is not None and cal.simulated.seats["start"].min() >= 0.0
    assert cal.simulated.seats["start"].min() < 60.0  # games from the warm-up's end on


def test_a_refining_simulation_is_read_from_its_warmups_end() -> None:
    """The refining simulations start mid-game, as a log does: the log from the warm-up's end on
    its own clock, the newcomers counted from their joining (their first queueing spell) within
    the span, the skills drawn of the players in that part."""
    from lobbysim.calibration.run import _joined, _simulated
    from lobbysim.experiments.simulation import simulate
    from lobbysim.scenario.inputs import as_scenario

    scenario = as_scenario(
        "quickstart",
        ["base.size=60", "base.newcomers_per_day=80", "horizon=720", "warmup=360"],
    )
    log, drawn, joined = _simulated(scenario, 3, warmup=360.0)
    result = simulate(scenario, 3)
    games, waits, players = result.games, result.waits, result.players
    assert games is not None and waits is not None and players is not None
    assert log.matches == int((games["start"].to_numpy() >= 360.0).sum()) > 0
    assert log.seats["start"].min() >= 0.0 and log.seats["end"].max() <= 360.0 + 60.0
    first = waits.groupby("player_id")["enqueued"].min()
    late = int(((first.index >= 60) & (first.to_numpy() >= 360.0)).sum())
    early = int(((first.index >= 60) & (first.to_numpy() < 360.0)).sum())
    assert late > 0 and early > 0
    assert joined == pytest.approx(late / 0.25)  # per day, over the span's quarter day
    skills = players.set_index("player_id")["skill"]
    assert drawn == pytest.approx(float(np.std(skills.reindex(log.player_ids))))
    # from minute 0 (no warm-up): every player beyond the base's joined as a newcomer
    assert _joined(waits, 60, 0.0, len(players)) == len(players) - 60
    assert _joined(waits, 60, 360.0, len(players)) == late


def test_a_given_game_age_is_the_warmup_in_whole_days() -> None:
    """The game's age when the log starts sets the warm-up (rounded to whole days, at most
    MAX_GAME_AGE_DAYS; 0: a log from the launch), whatever the visit rate; a base growing fast
    still shortens it so that the base is never empty."""
    from lobbysim.calibration.run import MAX_GAME_AGE_DAYS

    plan = base(500.0, 5.0, 0.01)
    # 2 visits a day of 5 games would give 2 days; the age overrides it
    assert warmup_plan(plan, data(2.0, 5.0), 9.0) == (9 * 1440.0, 500)
    assert warmup_plan(plan, data(2.0, 5.0), 2.4)[0] == 2 * 1440.0
    assert warmup_plan(plan, data(2.0, 5.0), 2.5)[0] == 3 * 1440.0
    assert warmup_plan(plan, data(2.0, 5.0), 0.0) == (0.0, 500)
    assert warmup_plan(plan, data(2.0, 5.0), 400.0)[0] == MAX_GAME_AGE_DAYS * 1440.0
    # the base at minute 0 grows to the fitted 400 by the age's end (steady size 1000)
    _, grown = warmup_plan(base(400.0, 10.0, 0.01), data(2.0, 5.0), 10.0)
    assert grown == round(1000 + (400 - 1000) * math.exp(0.1))
    # 300 members and 200 newcomers a day: only one day back has members
    assert warmup_plan(base(300.0, 200.0, 0.01), data(0.5, 4.0), 14.0)[0] == 1440.0


@pytest.mark.parametrize("age", [-1.0, math.nan, math.inf, True, "3"])
def test_a_game_age_that_is_not_a_number_of_days_is_named(age: object) -> None:
    from lobbysim.calibration.run import calibrate, game_age_problem
    from lobbysim.scenario import ScenarioError

    problem = game_age_problem(age)
    assert problem == (f"--game-age: expected the game's age in days, a number >= 0, got {age!r}")
    with pytest.raises(ScenarioError, match="game_age: expected the game's age"):
        calibrate(random_log(np.random.default_rng(1)), refine=0, game_age=age)  # type: ignore[arg-type]
