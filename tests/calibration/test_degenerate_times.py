"""Degenerate times (lobbysim/calibration/precision.py): rounded and zero-length matches are
found and named, the game length and the visit gaps are fitted from the exact ones, and a match
given twice, once with rounded times, keeps its exact copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lobbysim.calibration.fit import fit_log
from lobbysim.calibration.precision import exact_copy, grain, time_precision
from lobbysim.calibration.read import read_log
from lobbysim.commands.log import describe

SAMPLE = Path(__file__).resolve().parents[2] / "lobbysim" / "scenarios" / "logs"
ORIGIN = pd.Timestamp("2024-03-01T07:00:00", tz="UTC")


def stamped(frame: pd.DataFrame) -> pd.DataFrame:
    """The sample log's minutes as ISO 8601 timestamps from :data:`ORIGIN` (to the microsecond)."""
    out = frame.copy()
    for column in ("start", "end"):
        stamps = ORIGIN + pd.to_timedelta(out[column], unit="min")
        out[column] = stamps.dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return out


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(SAMPLE / "quickstart_games.csv.gz")


def test_grain() -> None:
    seconds = np.array([1.50421e9, 1504210150.0, 1504210150.123, 30.5, 5 * 3600.0, 0.12345678])
    assert grain(seconds).tolist() == [1e4, 10.0, 1e-3, 0.1, 3600.0, 0.0]


@pytest.mark.slow
def test_forty_percent_of_zero_length_rounded_matches_are_named_and_left_out_of_lengths(
    sample: pd.DataFrame, tmp_path: Path
) -> None:
    """40% of the matches have their times floored to the day (as an export that kept only the
    date would): they last 0 minutes. The warning names the share; the game length is the
    exact matches' (within 5%); the visit gap threshold splits the gaps as the exact fit's."""
    rng = np.random.default_rng(7)
    ids = sample["match_id"].unique()
    rounded = rng.choice(ids, int(0.4 * len(ids)), replace=False)
    frame = sample.copy()
    hit = frame["match_id"].isin(rounded)
    frame.loc[hit, "start"] = (frame.loc[hit, "start"] + 420.0) // 1440 * 1440 - 420.0
    frame.loc[hit, "end"] = frame.loc[hit, "start"]  # ORIGIN is 07:00: floored to midnight
    exact_path, degenerate_path = tmp_path / "exact.csv", tmp_path / "degenerate.csv"
    stamped(sample).to_csv(exact_path, index=False)
    stamped(frame).to_csv(degenerate_path, index=False)
    exact_log = read_log(exact_path)
    exact = fit_log(exact_log)
    log = read_log(degenerate_path)
    times = time_precision(log)
    share = float(times.zero.mean())
    # rounded: the 40%, and the sample's 1.0% of exact matches from a whole minute to a whole
    # minute (on the minute's grid, once the log has a rounded share, they are set aside too)
    on_grid = float(times.rounded.mean())
    assert 0.39 < share < 0.41 and share <= on_grid < share + 0.011
    fit = fit_log(log)
    (warning,) = fit.warnings
    assert warning.startswith(f"{share:.1%} of the matches last 0 minutes and {on_grid:.1%} have ")
    assert "rounded to a grid of 1 day" in warning
    assert warning.endswith(f"fitted from the {int(times.exact.sum()):,} matches with exact times")
    assert any(f"warning: {share:.1%} of the matches last 0 minutes" in s for s in describe(log))
    durations = (sample.groupby("match_id")["end"].first() - sample.groupby("match_id")["start"]
                 .first())  # fmt: skip
    kept = durations[~durations.index.isin(rounded)]
    assert fit.length == pytest.approx(float(np.median(kept)), rel=0.05)
    assert fit.length == pytest.approx(exact.length, rel=0.05)
    # the visit gap threshold from the exact matches splits the exact log's gaps as the exact
    # fit's does: on the sample log cut from a running game it is 9.9 minutes against 7.1 (the
    # crossing of the mixture's two components, in the empty stretch between a queue's minutes
    # and a visit's hours), and 8 of the 6,366 gaps lie between them (the log drawn from minute
    # 0 read 6.9 against 7.1)
    seats = exact_log.seats.sort_values(["player", "start"])
    same = seats["player"].to_numpy()[1:] == seats["player"].to_numpy()[:-1]
    gaps = (seats["start"].to_numpy()[1:] - seats["end"].to_numpy()[:-1])[same]
    lo, hi = sorted([fit.sessions.threshold, exact.sessions.threshold])
    assert 3.0 < fit.sessions.threshold < 20.0
    assert float(np.mean((gaps >= lo) & (gaps < hi))) < 0.005
    # without setting them aside the median length is 0's neighbour and the gap a day's
    assert float(np.median(np.where(times.zero, 0.0, durations.to_numpy()))) < 0.7 * fit.length


def test_a_clean_log_has_no_warning(sample: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "exact.csv"
    stamped(sample).to_csv(path, index=False)
    log = read_log(path)
    assert time_precision(log).warning() is None
    assert not any(line.startswith("warning") for line in describe(log))


def test_exact_copy() -> None:
    # seconds: an exact copy (to the millisecond) and its copy rounded to 1e4 s
    keep = exact_copy(np.array([1504213456.789, 1504210000.0]), np.array([1504214100.5, 1.50421e9]),
                      1.0)  # fmt: skip
    assert keep is not None and keep.tolist() == [True, False]
    # two copies of one precision that differ: the times disagree
    assert exact_copy(np.array([60.5, 61.5]), np.array([70.25, 70.25]), 60.0) is None
    # a 'rounded' copy farther from the exact one than its grid: not a rounding
    assert exact_copy(np.array([100.123, 180.0]), np.array([110.5, 180.0]), 60.0) is None
    assert exact_copy(np.array([100.123, 60.0]), np.array([110.5, 120.0]), 60.0) is not None


LICHESS_HEADER = (
    "id,rated,created_at,last_move_at,turns,victory_status,winner,increment_code,white_id,"
    "white_rating,black_id,black_rating,moves,opening_eco,opening_name,opening_ply\n"
)


def test_a_game_given_twice_keeps_its_exact_copy(tmp_path: Path) -> None:
    """Lichess's layout: game g1 given twice, the second copy's times written 1.50421E+12
    (rounded to 1e7 ms); g2 given twice with times that disagree at one precision is dropped."""
    rows = [
        "g1,TRUE,1504213456789,1504214100500,20,mate,white,10+0,ann,1500,bob,1500,e4,C20,x,2",
        "g1,TRUE,1.50421E+12,1.50421E+12,20,mate,white,10+0,ann,1500,bob,1500,e4,C20,x,2",
        "g2,TRUE,1504220000123,1504220600123,20,mate,black,10+0,ann,1500,cid,1500,e4,C20,x,2",
        "g2,TRUE,1504220000999,1504220600123,20,mate,black,10+0,ann,1500,cid,1500,e4,C20,x,2",
        "g3,TRUE,1504230000321,1504230700321,20,mate,black,10+0,bob,1500,cid,1500,e4,C20,x,2",
    ]
    path = tmp_path / "games.csv"
    path.write_text(LICHESS_HEADER + "\n".join(rows) + "\n")
    log = read_log(path, "lichess")
    assert log.matches == 2 and log.skipped["rounded_copy"] == 1
    assert log.skipped["inconsistent_match"] == 2  # g2's two rows
    first = log.seats[log.seats["match"] == 0]
    assert first["end"].iloc[0] - first["start"].iloc[0] == pytest.approx(643.711 / 60, abs=1e-6)


def test_a_match_given_twice_in_seat_rows_keeps_its_exact_copy(tmp_path: Path) -> None:
    header = "match_id,player_id,start,end,team,result\n"
    rows = [
        "m1,a,2024-03-01T10:03:17.250Z,2024-03-01T10:14:02.500Z,0,win",
        "m1,b,2024-03-01T10:03:17.250Z,2024-03-01T10:14:02.500Z,1,loss",
        "m1,a,2024-03-01T10:00:00Z,2024-03-01T10:00:00Z,0,win",  # the copy, to the hour
        "m1,b,2024-03-01T10:00:00Z,2024-03-01T10:00:00Z,1,loss",
        "m2,a,2024-03-01T11:00:01.500Z,2024-03-01T11:09:00.500Z,0,loss",  # moved, not copied
        "m2,c,2024-03-01T11:00:00Z,2024-03-01T11:00:00Z,1,win",
    ]
    path = tmp_path / "seats.csv"
    path.write_text(header + "\n".join(rows) + "\n")
    log = read_log(path)
    assert log.matches == 1 and log.skipped["rounded_copy"] == 2
    assert log.skipped["inconsistent_match"] == 2
    assert log.seats["end"].iloc[0] - log.seats["start"].iloc[0] == pytest.approx(10.7541667)


@pytest.mark.slow
def test_the_report_and_the_command_carry_the_warning(sample: pd.DataFrame, tmp_path: Path) -> None:
    from lobbysim.commands.calibrate import run_calibrate

    frame = sample.copy()
    hit = frame["match_id"] % 5 < 2  # 40% of the matches, floored to the day
    frame.loc[hit, "start"] = (frame.loc[hit, "start"] + 420.0) // 1440 * 1440 - 420.0
    frame.loc[hit, "end"] = frame.loc[hit, "start"]
    path = tmp_path / "degenerate.csv"
    stamped(frame).to_csv(path, index=False)
    said: list[str] = []
    report = tmp_path / "report"
    run_calibrate(path, tmp_path / "f.yaml", raters=[], refine=0, report=report, note=said.append)
    (line,) = [s for s in said if s.startswith("Warning: ")]
    assert "of the matches last 0 minutes" in line
    text = (report / "report.md").read_text()
    assert "Warning" in text and "of the matches last 0 minutes" in text
