"""``lobbysim calibrate``: a run's log in, a scenario that runs and a report out; bad input is one
line and leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lobbysim.calibration.export import records_to_log, write_log
from lobbysim.cli.main import main
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import load_scenario
from lobbysim.scenario.inputs import as_scenario


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = simulate(as_scenario("quickstart", ["game.quit_rate=0"]), 4)
    path = tmp_path_factory.mktemp("log") / "games.csv"
    write_log(records_to_log(result.games, result.participants, result.players), path)
    return path


@pytest.mark.slow
def test_calibrate_writes_a_scenario_that_runs_and_a_report(
    log_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    to, report = tmp_path / "fitted.yaml", tmp_path / "report"
    argv = ["calibrate", str(log_file), "--to", str(to), "--report", str(report)]
    argv += ["--refine", "1", "--raters", "bayesian", "--template", "quickstart"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "bayesian (" in printed and f"wrote {to}" in printed
    fitted = load_scenario(to)
    truth = load_scenario("quickstart")
    assert fitted.game.mode == "1v1" and fitted.game.length == truth.game.length
    assert fitted.base is not None and truth.base is not None
    # a two-day log of 500 members: the base and the skills come back roughly
    assert abs(fitted.base.size / truth.base.size - 1) < 0.15
    assert abs(fitted.population["skill_sd"] / 2.0 - 1) < 0.15
    assert fitted.matchmaker == truth.matchmaker  # from the template
    rows = pd.read_csv(report / "parameters.csv").set_index("field")
    assert {"base.size", "base.visits.per_day", "population.skill_sd"} <= set(rows.index)
    assert "refined" in rows.loc["base.visits.per_day", "how"]
    html = (report / "report.html").read_text()
    assert "data:image/png;base64," in html and 'src="calibration' not in html
    scores = pd.read_csv(report / "scores.csv")
    assert "bayesian" in set(scores["rater"])
    daily = pd.read_csv(report / "daily.csv")
    assert {"games", "games_calibrated", "players", "players_calibrated"} <= set(daily.columns)
    run = simulate(fitted.replace(horizon=120.0), 1)  # the written scenario runs as it is
    assert len(run.games) > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns=["player_id"]), "player_id"),
        (lambda f: f.iloc[0:0], "no rows"),
    ],
)
def test_a_bad_log_is_one_line_and_writes_nothing(
    change: object,
    message: str,
    log_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "bad.csv"
    change(pd.read_csv(log_file)).to_csv(bad, index=False)  # type: ignore[operator]
    to, report = tmp_path / "fitted.yaml", tmp_path / "report"
    argv = ["calibrate", str(bad), "--to", str(to), "--report", str(report), "--refine", "0"]
    assert main([*argv, "--raters", "none"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert message in err.lower() or message in err, err
    assert not to.exists() and not report.exists()


def test_a_timestamp_past_2262_is_a_row_skipped_not_a_traceback(
    log_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = pd.read_csv(log_file)
    origin = pd.Timestamp("2024-03-01", tz="UTC")
    for column in ("start", "end"):  # the run's minutes as ISO 8601 timestamps
        stamps = origin + pd.to_timedelta(frame[column], unit="min")
        frame[column] = stamps.dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    far = frame.iloc[:2].copy()  # one more match, one of its rows in the year 2300
    far["match_id"] = -1
    far.loc[far.index[0], ["start", "end"]] = ["2300-01-01T00:00:00Z", "2300-01-01T00:10:00Z"]
    path = tmp_path / "stamped.csv"
    pd.concat([frame, far]).to_csv(path, index=False)
    reason = "1 a time that cannot be read (or a timestamp outside 1677-2262)"
    assert main(["log", "check", str(path)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err == ""
    assert f"2 rows skipped: {reason}, 1 a match with fewer than two sides" in captured.out
    to, report = tmp_path / "fitted.yaml", tmp_path / "report"
    argv = ["calibrate", str(path), "--to", str(to), "--report", str(report), "--refine", "0"]
    assert main([*argv, "--raters", "none"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert reason in " ".join(captured.out.split())  # the note is wrapped
    assert to.is_file()


def test_bad_options_are_one_line(
    log_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["calibrate", str(log_file), "--to", str(tmp_path / "x.txt")]) == 2
    assert "--to: expected a .yaml file" in capsys.readouterr().err
    assert (
        main(["calibrate", str(log_file), "--to", str(tmp_path / "x.yaml"), "--refine", "-1"]) == 2
    )
    assert "--refine" in capsys.readouterr().err


def test_the_shipped_sample_log_is_what_lobbysim_writes_and_reads_whole(tmp_path: Path) -> None:
    import gzip
    import importlib.util

    from lobbysim.calibration.read import read_log

    shipped = (
        Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"
    )
    log = read_log(shipped)
    assert not log.skipped_text() and len(log.seats) == 7_398 and log.matches == 3_699
    spec = importlib.util.spec_from_file_location(
        "make_sample_log", shipped.parents[3] / "scripts" / "make_sample_log.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.TARGET = tmp_path
    script.main()
    made = gzip.decompress((tmp_path / "quickstart_games.csv.gz").read_bytes())
    assert made == gzip.decompress(shipped.read_bytes())
