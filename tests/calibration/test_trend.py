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
from lobbysim.calibration.trend import FOLLOW, Trend, activity_trend, window
from lobbysim.cli.main import main
from lobbysim.commands.calibrate import default_window

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
    with pytest.raises(LogError, match=r"expected FROM\.\.TO, auto or all"):
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


def test_a_launch_is_fitted_over_its_last_stationary_stretch_by_default(tmp_path: Path) -> None:
    """No curve of the base model (steady newcomers, steady leaving) follows 2 games a day for
    25 days and then a launch: calibrate fits the last stationary stretch unless told
    otherwise, saying in one line what it left out and why; --window all fits everything."""
    log = read_log(growing_log(tmp_path))
    trend = activity_trend(log)
    assert trend.strays() > 10 * FOLLOW
    lines: list[str] = []
    cut = default_window(log, lines.append)
    assert len(lines) == 1 and 590 <= cut.matches <= 700
    line = lines[0]
    assert line.startswith("fitting the log's last stationary stretch by default, --window 2017")
    assert f"{cut.matches:,} of its {log.matches:,} matches" in line
    assert f"the {log.matches - cut.matches:,} before it are left out because" in line
    assert "grows 42.1-fold" in line and line.endswith("--window all fits the whole log")
    whole, said = window(log, "all")
    assert whole is log and said.startswith("--window all: the whole log fitted")


def test_a_base_growing_by_steady_newcomers_is_followed_not_cut() -> None:
    """Activity that grows as a base of steady newcomers and leaving grows (a + b exp(-l t): 30
    games a day rising towards 300) is followed: no warning, a note, the whole log fitted; the
    same days with a step in the middle are not."""
    rng = np.random.default_rng(5)
    days = np.arange(20, dtype=np.float64)
    steady = rng.poisson(300.0 - 270.0 * np.exp(-0.08 * (days + 0.5))).astype(np.float64)
    growing = Trend(steady, 4.0, False, 13)
    assert growing.strays() <= FOLLOW
    assert growing.note() is not None and "the base model follows it" in str(growing.note())
    stepped = Trend(np.where(days < 10, 30.0, 300.0), 10.0, False, 10)
    assert stepped.strays() > FOLLOW and stepped.note() is None
    lines: list[str] = []
    sample = Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"
    log = read_log(sample)
    assert default_window(log, lines.append) is log and lines == []  # stationary: untouched
