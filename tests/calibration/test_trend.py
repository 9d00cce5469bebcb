"""Logs that change over time (lobbysim/calibration/trend.py): a growing log is named
non-stationary with its last stationary stretch, and --window fits a stretch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lobbysim.calibration.fit import fit_log
from lobbysim.calibration.mapping import LogError
from lobbysim.calibration.read import read_log
from lobbysim.calibration.trend import activity_trend, window
from lobbysim.cli.main import main

ORIGIN = pd.Timestamp("2017-01-01", tz="UTC")


def growing_log(tmp_path: Path) -> Path:
    """40 days of 1v1 games among 300 players: 2 games a day for 25 days, then a launch
    doubling daily to ~60 a day held for the last 10 (timestamps)."""
    path = tmp_path / "growing.csv"
    if path.exists():
        return path
    rng = np.random.default_rng(3)
    per_day = np.array([2] * 25 + [2 * 2 ** (k + 1) for k in range(5)] + [60] * 10)
    day = np.repeat(np.arange(per_day.size), per_day)
    n = day.size
    start = ORIGIN + pd.to_timedelta(day * 1440 + rng.uniform(0, 1400, n), unit="min")
    end = start + pd.to_timedelta(rng.uniform(5, 15, n), unit="min")
    pairs = np.array([rng.choice(300, 2, replace=False) for _ in range(n)])
    won = rng.integers(2, size=n)
    frame = pd.DataFrame(
        {
            "match_id": np.repeat(np.arange(n), 2),
            "player_id": [f"p{p}" for p in pairs.ravel()],
            "start": np.repeat(start.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), 2),
            "end": np.repeat(end.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), 2),
            "team": np.tile([0, 1], n),
            "result": np.where(np.tile([0, 1], n) == np.repeat(won, 2), "win", "loss"),
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_a_growing_log_is_named_with_its_last_stationary_stretch(tmp_path: Path) -> None:
    log = read_log(growing_log(tmp_path))
    trend = activity_trend(log)
    assert not trend.stationary and trend.growth > 3
    assert 28 <= trend.stretch <= 30  # the ten days held at ~60 a day (and a ramp day or two)
    warning = trend.warning(log)
    assert warning is not None and warning.startswith("the log's activity grows ")
    assert "--window 2017-01-29T" in warning and "or --window auto" in warning
    cut, line = window(log, "auto")
    assert 590 <= cut.matches <= 700 and line.startswith("--window 2017-01-29")
    assert activity_trend(cut).stationary
    explicit, _ = window(log, "2017-01-31..")
    assert 550 < explicit.matches < 650  # the last ten days
    assert activity_trend(explicit).warning(explicit) is None


@pytest.mark.slow
def test_a_window_of_a_growing_log_fits_without_the_warning(tmp_path: Path) -> None:
    log = read_log(growing_log(tmp_path))
    explicit, _ = window(log, "2017-01-31..")
    assert fit_log(explicit).warnings == []


def test_a_stationary_log_has_no_trend_warning() -> None:
    sample = Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"
    log = read_log(sample)
    assert activity_trend(log).stationary  # two days: too short to judge
    assert activity_trend(log).warning(log) is None


def test_bad_windows_are_one_line(tmp_path: Path) -> None:
    log = read_log(growing_log(tmp_path))
    with pytest.raises(LogError, match=r"expected FROM\.\.TO"):
        window(log, "2017-01-31")
    with pytest.raises(LogError, match="ends before it starts"):
        window(log, "2017-02-05..2017-02-01")
    with pytest.raises(LogError, match="no match of the log starts within"):
        window(log, "2018-01-01..2018-02-01")
    with pytest.raises(LogError, match="expected a date or date-time"):
        window(log, "soon..later")


@pytest.mark.slow
def test_a_window_with_no_match_is_one_line_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    growing_log(tmp_path)
    argv = ["calibrate", str(tmp_path / "growing.csv"), "--to", str(tmp_path / "x.yaml")]
    assert main([*argv, "--window", "2018-01-01..2018-02-01", "--raters", "none"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--window: no match of the log starts within" in err
    assert not (tmp_path / "x.yaml").exists()
