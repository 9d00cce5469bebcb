"""``lobbysim run``, ``compare``, ``validate`` and ``plugins``: outputs, intervals, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lobbysim.cli.main import main
from lobbysim.commands import run as runs
from lobbysim.policies import POLICIES
from lobbysim.raters import RATERS
from lobbysim.scenario import load_scenario

SMALL = """\
name: small
horizon: 90
warmup: 10
seed: 3
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 8}
matchmaker:
  policy: draw_chance
  threshold: [[0, 0.5], [1, 0.0]]
records: {ratings_every: 30}
"""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


@pytest.mark.slow
def test_run_writes_a_complete_repeatable_folder(scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "run1"
    assert (
        main(["run", str(scenario_file), "--replications", "2", "--out", str(out), "--jobs", "1"])
        == 0
    )
    names = {p.name for p in out.iterdir()}
    assert {
        "scenario.yaml",
        "replications.csv",
        "summary.csv",
        "records",
        "report.md",
        "report.html",
    } <= names
    assert "differences.csv" not in names
    records = {p.stem for p in (out / "records" / "draw_chance").iterdir()}
    assert records == {"games", "participants", "waits", "ratings", "players", "manifest"}
    # the resolved scenario runs again from the folder alone, to the same bytes
    again = tmp_path / "run2"
    assert main(["run", str(out / "scenario.yaml"), "--out", str(again), "--jobs", "1"]) == 0
    assert (out / "replications.csv").read_bytes() == (again / "replications.csv").read_bytes()
    assert load_scenario(out / "scenario.yaml") == load_scenario(again / "scenario.yaml")
    assert not list(tmp_path.glob("*.tmp-*"))


@pytest.mark.slow
def test_set_overrides_fields(scenario_file: Path, tmp_path: Path) -> None:
    _, result = runs.run(
        scenario_file,
        out=tmp_path / "o",
        replications=1,
        sets=["matchmaker.tick=0.5", "game.length=6", "matchmaker.assignment.block_size=4"],
    )
    assert result.scenario.matchmaker.tick == 0.5
    assert result.scenario.game.length == 6.0
    assert dict(result.scenario.matchmaker.assignment.params) == {"block_size": 4}


@pytest.mark.slow
def test_compare_intervals_shrink_with_replications(scenario_file: Path, tmp_path: Path) -> None:
    widths = {}
    for r in (2, 8):
        _, result = runs.run(
            scenario_file,
            policies=["point_estimate", "draw_chance"],
            replications=r,
            out=tmp_path / f"r{r}",
            jobs=2,
        )
        s = result.summary
        row = s[(s.policy == "draw_chance") & (s.metric == "draw_prob_true_mean")].iloc[0]
        widths[r] = row.ci_high - row.ci_low
        d = result.differences
        assert set(d.policy) == {"draw_chance"} and set(d.baseline) == {"point_estimate"}
        # common random numbers: replication r of both policies used the same seed
        m = result.metrics
        assert (
            m[m.policy == "point_estimate"].seed.to_numpy()
            == m[m.policy == "draw_chance"].seed.to_numpy()
        ).all()
    assert widths[8] < 0.5 * widths[2]
    assert (tmp_path / "r8" / "differences.csv").exists()


@pytest.mark.slow
def test_results_do_not_depend_on_the_number_of_workers(
    scenario_file: Path, tmp_path: Path
) -> None:
    _, one = runs.run(
        scenario_file,
        policies=["random", "draw_chance"],
        replications=3,
        out=tmp_path / "a",
        jobs=1,
    )
    _, two = runs.run(
        scenario_file,
        policies=["random", "draw_chance"],
        replications=3,
        out=tmp_path / "b",
        jobs=2,
    )
    pd.testing.assert_frame_equal(one.metrics, two.metrics)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["compare", "{s}", "--policies", "draw_chanse,random"],
            "--policies: unknown policy 'draw_chanse' (did you mean 'draw_chance'?)",
        ),
        (
            ["run", "{s}", "--set", "matchmaker.tik=1"],
            "matchmaker.tik: unknown field (did you mean 'tick'?)",
        ),
        (["run", "{s}", "--set", "nonsense"], "--set: expected key.path=value, got 'nonsense'"),
        (
            ["run", "{s}", "--replications", "0"],
            "--replications: expected a whole number >= 1, got 0",
        ),
        (["run", "{s}", "--seed", "-1"], "--seed: expected a whole number >= 0, got -1"),
        (
            ["run", "{s}", "--set", "raters.driver=sph_elo"],
            "'draw_chance' needs belief variances, but the driving rater 'sph_elo' has none",
        ),
        (["run", "{missing}"], "cannot read the file"),
        (
            ["run", "{s}", "--set", "game.team_size=3"],
            "game.team_size: mode 1v1 has one player a side, got 3; use mode: team for teams",
        ),
        (
            ["run", "{s}", "--set", "matchmaker.focal_rank=0"],
            "matchmaker.focal_rank: expected a non-zero whole number (1 = highest prior mean, "
            "-1 = lowest), got 0",
        ),
        (
            [
                "run",
                "{s}",
                "--set",
                "matchmaker.focal_rank=1",
                "--set",
                "matchmaker.focal_players=[0]",
            ],
            "matchmaker.focal_rank: give focal_players or focal_rank, not both",
        ),
        (
            [
                "run",
                "{s}",
                "--set",
                "arrivals={{name: cohort, size: 10}}",
                "--set",
                "matchmaker.focal_rank=-11",
            ],
            "matchmaker.focal_rank: expected a rank within the cohort of 10 players "
            "(1..10 or -1..-10), got -11",
        ),
        (
            ["run", "{s}", "--set", "population.prior_seed=4"],
            "population: prior_seed needs prior: informative (other priors are all equal)",
        ),
        (
            ["run", "{s}", "--set", "warmup=90"],
            "warmup: 90.0 must be shorter than the horizon (90.0)",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_folder(
    argv: list[str],
    message: str,
    scenario_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "never"
    argv = [a.format(s=scenario_file, missing=tmp_path / "missing.yaml") for a in argv]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob("never*"))


def test_a_non_empty_out_folder_is_refused(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "full"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["run", str(scenario_file), "--out", str(out)]) == 2
    assert "is not empty; refusing to write into it" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_an_interrupted_run_leaves_no_folder(
    scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runs, "write_run_folder", interrupted)
    out = tmp_path / "cut"
    assert main(["run", str(scenario_file), "--out", str(out), "--jobs", "1"]) == 130
    assert not out.exists() and not list(tmp_path.glob("cut*"))


def test_validate_reports_every_file(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("horizon: 10\nwarmup: 20\n")
    assert main(["validate", str(scenario_file)]) == 0
    assert main(["validate", str(scenario_file), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: warmup: 20.0 must be shorter than the horizon (10.0)" in err


def test_plugins_lists_every_registered_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    text = capsys.readouterr().out
    for name in [
        *POLICIES.names(),
        *RATERS.names(),
        "poisson",
        "time_of_day",
        "bursts",
        "trace",
        "sequential",
        "global",
        "ffa",
    ]:
        assert name in text
    assert "gamma=0.99" in text


@pytest.mark.slow
def test_a_streamed_run_keeps_every_replications_records(
    scenario_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "streamed"
    assert (
        main(
            [
                "run",
                str(scenario_file),
                "--replications",
                "2",
                "--out",
                str(out),
                "--set",
                "records.stream=true",
                "--jobs",
                "2",
            ]
        )
        == 0
    )
    for rep in ("rep-1", "rep-2"):
        files = {p.name for p in (out / "records" / "draw_chance" / rep).iterdir()}
        kinds = {"games.csv", "participants.csv", "waits.csv", "ratings.csv", "players.csv"}
        assert files == {*kinds, "manifest.json"}
    kept = tmp_path / "kept"
    assert (
        main(["run", str(scenario_file), "--replications", "2", "--out", str(kept), "--jobs", "1"])
        == 0
    )
    # streaming changes where the records go, not the results
    assert (out / "replications.csv").read_bytes() == (kept / "replications.csv").read_bytes()
    assert (out / "queue_times.png").exists() and (out / "report.html").exists()


def test_every_problem_of_a_file_is_reported_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "horizon: 100\nwarmup: 30\nseed: -2\n"
        "game: {mode: teams, length: -5, quit_rat: 0.1}\n"
        "matchmaker: {tick: fast}\n"
    )
    assert main(["validate", str(bad)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"lobbysim: error: {bad}: game.quit_rat: unknown field (did you mean 'quit_rate'?)",
        f"lobbysim: error: {bad}: game.mode: expected 1v1, team or ffa, got 'teams' "
        "(did you mean 'team'?)",
        f"lobbysim: error: {bad}: game.length: expected a number > 0, got -5.0",
        f"lobbysim: error: {bad}: matchmaker.tick: expected a number, got 'fast'",
        f"lobbysim: error: {bad}: seed: expected a whole number >= 0, got -2",
    ]
    plugins = tmp_path / "plugins.yaml"
    plugins.write_text(
        "arrivals: {name: poison, rate: 2}\npopulation: {skil_sd: 2}\n"
        "matchmaker: {policy: {name: knowledge_gradient, gama: 0.9}}\n"
    )
    out = tmp_path / "never"
    assert main(["run", str(plugins), "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(
        line.startswith(f"lobbysim: error: {plugins}: ") for line in lines
    )
    assert "unknown arrival model 'poison' (did you mean 'poisson'?)" in lines[0]
    assert "has no parameter 'gama' (did you mean 'gamma'?)" in lines[1]
    assert "has no parameter 'skil_sd' (did you mean 'skill_sd'?)" in lines[2]
    assert not out.exists()


def test_schema_and_plugin_problems_come_out_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "both.yaml"
    bad.write_text(
        "seed: -2\narrivals: {name: poison, rate: 2}\n"
        "matchmaker: {tick: 0, policy: {name: knowledge_gradient, gama: 0.9}}\n"
        "raters: {shadows: [sph_elo, {name: sph_elo, tt: 3}]}\n"
    )
    assert main(["validate", str(bad)]) == 2
    lines = [
        line.removeprefix(f"lobbysim: error: {bad}: ")
        for line in capsys.readouterr().err.splitlines()
    ]
    assert lines[:2] == [
        "matchmaker.tick: expected a number > 0, got 0.0",
        "seed: expected a whole number >= 0, got -2",
    ]
    assert len(lines) == 5
    assert "arrivals: unknown arrival model 'poison' (did you mean 'poisson'?)" in lines[2]
    assert "matchmaker.policy: " in lines[3] and "'gama' (did you mean 'gamma'?)" in lines[3]
    assert lines[4].startswith("raters.shadows[1]: ") and "'tt' (did you mean 't'?)" in lines[4]
