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
    """On the bundled sample log (2 days, ~2 visits a day of ~5 games): a 2-day warm-up, the
    horizon 2 + 2 days, the comparison simulation from the warm-up's end."""
    from lobbysim.calibration.read import read_log
    from lobbysim.calibration.run import calibrate

    log = read_log(SAMPLE / "quickstart_games.csv.gz")
    cal = calibrate(log, load_scenario("quickstart"), refine=1, seed=5)
    assert cal.warmup == 2 * 1440.0
    assert cal.scenario.warmup == cal.warmup
    assert cal.scenario.horizon == cal.warmup + 2 * 1440.0
    assert cal.simulated is not None and cal.simulated.seats["start"].min() >= 0.0
    assert cal.simulated.seats["start"].min() < 60.0  # games from the warm-up's end on
