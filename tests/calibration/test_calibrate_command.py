"""``lobbysim calibrate``: a run's log in, a scenario that runs and a report out; bad input is one
line and leaves nothing behind."""

from __future__ import annotations

import re
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
    """Two days of the quickstart's game cut from a running one (days 2 to 4), as a real log
    is: a log from a run's minute 0 starts with an empty lobby, whose members' first visits meet
    fewer opponents, and reads the base low (on six quickstart logs from minute 0 the base fit
    reads 436-531, mean 475; on the same runs cut from day 2 on 468-541, mean 502, for about
    500)."""
    result = simulate(as_scenario("quickstart", ["game.quit_rate=0", "horizon=5760"]), 4)
    games = result.games[result.games["start"] >= 2880.0].copy()
    for column in ("start", "end"):
        games[column] = games[column] - 2880.0
    participants = result.participants[result.participants["game_id"].isin(games["game_id"])]
    path = tmp_path_factory.mktemp("log") / "games.csv"
    write_log(records_to_log(games, participants, result.players), path)
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
    rows = pd.read_csv(report / "parameters.csv").set_index("field")
    # a two-day log of 500 members: the base (its fitted size at the log's start; the scenario
    # starts a warm-up earlier, its base sized to grow to it) and the skills come back roughly
    start = re.search(r"maximum likelihood \(base model\): ([\d,]+)", rows.loc["base.size", "how"])
    assert start is not None
    assert abs(float(start.group(1).replace(",", "")) / truth.base.size - 1) < 0.15
    assert fitted.warmup >= 1440.0 and fitted.horizon == fitted.warmup + 2 * 1440.0
    assert fitted.base.size <= float(start.group(1).replace(",", "")) + 1
    assert abs(fitted.population["skill_sd"] / 2.0 - 1) < 0.15
    assert fitted.matchmaker == truth.matchmaker  # from the template
    assert {"base.size", "base.visits.per_day", "population.skill_sd"} <= set(rows.index)
    assert "refined" in rows.loc["base.visits.per_day", "how"]
    html = (report / "report.html").read_text()
    assert "data:image/png;base64," in html and 'src="calibration' not in html
    scores = pd.read_csv(report / "scores.csv")
    assert "bayesian" in set(scores["rater"])
    daily = pd.read_csv(report / "daily.csv")
    assert {"games", "games_calibrated", "players", "players_calibrated"} <= set(daily.columns)
    run = simulate(fitted.replace(horizon=120.0, warmup=0.0), 1)  # the written scenario runs
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


def test_the_game_age_sets_the_warmup_and_a_bad_one_is_one_line(
    log_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--game-age DAYS: the written scenario's warm-up (and the refining simulations') is the
    game's age when the log starts, said in the printed warm-up line and the report's table."""
    to, report = tmp_path / "fitted.yaml", tmp_path / "report"
    argv = ["calibrate", str(log_file), "--to", str(to), "--report", str(report), "--quiet"]
    argv += ["--refine", "0", "--raters", "none"]
    for typed, shown in (("-1", "-1.0"), ("nan", "nan"), ("a week", "'a week'")):
        assert main([*argv, "--game-age", typed]) == 2
        captured = capsys.readouterr()
        assert captured.err.strip() == (
            "lobbysim: error: --game-age: expected the game's age in days, a number >= 0, "
            f"got {shown}"
        )
        assert captured.out == "" and not to.exists() and not report.exists()
    assert main([*argv, "--game-age", "5"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "warm-up 5 days before the log's span" in printed
    assert "the game's age as given, 5 days" in printed
    fitted = load_scenario(to)
    assert fitted.warmup == 5 * 1440.0 and fitted.horizon == fitted.warmup + 2 * 1440.0
    rows = pd.read_csv(report / "parameters.csv").set_index("field")
    assert "the game's age when the log starts, 5 days as given" in rows.loc["warmup", "how"]


def test_the_shipped_sample_log_is_what_lobbysim_writes_and_reads_whole(tmp_path: Path) -> None:
    import gzip
    import importlib.util

    from lobbysim.calibration.read import read_log

    shipped = (
        Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"
    )
    log = read_log(shipped)
    assert not log.skipped_text() and len(log.seats) == 6_806 and log.matches == 3_403
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


# --- what a user reads (issue 44) -------------------------------------------------------------


@pytest.mark.slow
def test_the_fitted_values_are_printed_with_their_errors_and_the_ranking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled sample log: the fitted values with ± standard errors, the raters' ranking
    and where the report is; --split 0.6 tunes on the first 60% of the matches."""
    sample = Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"
    to, report = tmp_path / "fitted.yaml", tmp_path / "report"
    argv = ["calibrate", str(sample), "--to", str(to), "--report", str(report), "--quiet"]
    argv += ["--refine", "0", "--raters", "bayesian,sph_elo", "--split", "0.6"]
    assert main(argv) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "Fitted over 2 days (± one standard error): base size 508 ± 28, newcomers " in printed
    assert "visits 1." in printed and "a member a day (Gamma shape 1.9" in printed
    assert "games 1v1, 10 min, quit rate 0.02" in printed and "skill sd " in printed
    assert "tuned on the first 2,041 matches" in printed  # floor(0.6 * 3,403)
    assert "Ranking by held-out log loss (lower is better): 1. bayesian 0.6" in printed
    assert f"Report: {report / 'report.html'}" in printed


def test_a_split_outside_0_1_is_one_line_before_the_log_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["calibrate", str(tmp_path / "missing.csv"), "--to", str(tmp_path / "x.yaml")]
    assert main([*argv, "--split", "1.5"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "lobbysim: error: --split: expected a share of the matches in (0, 1), got 1.5"
    )
    assert captured.out == "" and list(tmp_path.iterdir()) == []


def test_a_header_of_a_bundled_mapping_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    lichess = Path(__file__).resolve().parent / "data" / "lichess_games.csv"
    assert main(["log", "check", str(lichess)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lobbysim: error: ") and "\n" not in err
    assert err.endswith(
        "no column 'match_id'; the file has: id, rated, created_at, last_move_at, turns, "
        "victory_status, winner, increment_code, white_id, white_rating, black_id, black_rating, "
        "moves, opening_eco, opening_name, opening_ply; its header is that of the bundled "
        "mapping 'lichess': give --columns lichess"
    )
    # a header that is neither the default layout's nor a bundled mapping's: no hint
    from lobbysim.calibration.mapping import bundled_matches

    assert bundled_matches(["id", "white_id", "black_id"]) == []
    assert bundled_matches(["id", "created_at", "last_move_at", "white_id", "black_id", "winner"])


def test_pm_rounds_to_the_error() -> None:
    from lobbysim.reporting.calibration import _pm

    assert _pm(463.6, 38.2) == "464 ± 38"
    assert _pm(14.12, 11.4) == "14 ± 11"
    assert _pm(0.0217, 0.0251) == "0.022 ± 0.025"
    assert _pm(1.8234, float("nan")) == "1.82"


@pytest.mark.slow
def test_a_long_fit_shows_its_progress(tmp_path: Path) -> None:
    """The simulations (in simulated minutes, over them all) and the raters' replays, through
    the project's progress display (plain lines where the output is not a terminal)."""
    import io

    from lobbysim.commands.calibrate import run_calibrate
    from lobbysim.running.progress import Progress

    sample = Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"
    out = io.StringIO()
    run_calibrate(
        sample,
        tmp_path / "fitted.yaml",
        raters=["bayesian"],
        refine=1,
        report=tmp_path / "report",
        progress=Progress(file=out, every=0.0),
    )
    lines = out.getvalue().splitlines()
    simulated = [line for line in lines if line.startswith("calibrate: simulate the fit: ")]
    replays = [line for line in lines if line.startswith("calibrate: replay the raters: ")]
    # two simulations of the log's two days, counted together
    assert simulated[-1].startswith("calibrate: simulate the fit: 5,760/5,760 min (100%)")
    assert re.match(r"calibrate: replay the raters: (\d+)/\1 replays \(100%\)", replays[-1])
    assert len(replays) >= 9  # the Bayesian rater's grid of 9, a line each (every=0)
