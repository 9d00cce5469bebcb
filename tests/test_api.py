"""The notebook-shaped API: ``import lobbysim`` then ``lobbysim.simulate``, ``compare``, ``sweep``,
``load_scenario``, ``load_run``; any form of scenario; progress that changes nothing."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import lobbysim
from lobbysim.cli.main import main
from lobbysim.experiments import run_experiment
from lobbysim.experiments import simulate as experiments_simulate
from lobbysim.running.progress import Progress
from lobbysim.scenario import ScenarioError
from lobbysim.scenario.loading import load_run_scenario

KINDS = ("games", "participants", "waits", "ratings", "players")
SHORT = {"horizon": 45, "warmup": 10}


def assert_same_run(a: lobbysim.experiments.SimulationResult, b: object) -> None:
    for kind in KINDS:
        pd.testing.assert_frame_equal(getattr(a, kind), getattr(b, kind))
    assert a.metrics == b.metrics  # type: ignore[attr-defined]


def test_import_lobbysim_and_simulate_in_a_notebook_cell() -> None:
    result = lobbysim.simulate("one_visit", seed=1, horizon=45, warmup=10, progress=False)
    cli_path = experiments_simulate(load_run_scenario("one_visit", ["horizon=45", "warmup=10"]), 1)
    assert_same_run(result, cli_path)
    assert len(result.games) > 50 and result.scenario.horizon == 45.0


def test_import_lobbysim_stays_light() -> None:
    code = (
        "import sys, lobbysim; print(sorted(m for m in ('pandas', 'simpy', 'tqdm', "
        "'lobbysim.api') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert {
        "simulate",
        "compare",
        "sweep",
        "tune",
        "calibrate",
        "load_run",
        "load_scenario",
        "Scenario",
    } <= set(dir(lobbysim))
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        lobbysim.simulat  # noqa: B018


def test_a_path_a_name_a_dict_and_a_scenario_give_the_same_run(tmp_path: Path) -> None:
    scenario = lobbysim.load_scenario("one_visit", overrides=SHORT)
    path = tmp_path / "q.yaml"
    path.write_text(__import__("yaml").safe_dump(scenario.to_dict()))
    runs = [
        lobbysim.simulate(given, seed=2, progress=False)
        for given in (path, str(path), scenario.to_dict(), scenario)
    ]
    for run in runs[1:]:
        assert_same_run(runs[0], run)
    assert lobbysim.load_scenario("one_visit", overrides=SHORT) == scenario
    assert isinstance(scenario, lobbysim.Scenario)


def test_overrides_nested_dotted_and_keywords_are_the_same() -> None:
    nested = lobbysim.load_scenario(
        "one_visit", overrides={"matchmaker": {"tick": 1.0, "assignment": {"block_size": 4}}}
    )
    dotted = lobbysim.load_scenario(
        "one_visit",
        overrides={"matchmaker.tick": 1.0, "matchmaker.assignment.block_size": 4},
    )
    keywords = lobbysim.load_scenario(
        "one_visit", matchmaker__tick=1.0, matchmaker__assignment__block_size=4
    )
    texts = lobbysim.load_scenario(
        "one_visit", overrides=["matchmaker.tick=1.0", "matchmaker.assignment.block_size=4"]
    )
    assert nested == dotted == keywords == texts
    assert nested.matchmaker.tick == 1.0 and nested.matchmaker.assignment.params["block_size"] == 4
    # a plug-in of another name replaces the one in place, parameters and all
    cohort = lobbysim.load_scenario("one_visit", arrivals={"name": "cohort", "size": 30})
    assert dict(cohort.arrivals.params) == {"size": 30}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: lobbysim.simulate(3), TypeError, "scenario: expected a scenario file's path"),
        (lambda: lobbysim.simulate("one_visit", seed="1"), TypeError, "seed: expected a whole"),
        (lambda: lobbysim.simulate("one_visit", seed=-1), ValueError, "seed: expected a whole"),
        (
            lambda: lobbysim.load_scenario("one_visit", overrides="horizon=5"),
            TypeError,
            "overrides: expected a mapping",
        ),
        (
            lambda: lobbysim.load_scenario("one_visit", matchmaker={"tik": 1}),
            ScenarioError,
            "one_visit (with overrides): matchmaker.tik: unknown field (did you mean 'tick'?)",
        ),
        (
            lambda: lobbysim.load_scenario({"horizon": "long"}),
            ScenarioError,
            "scenario (a dict): horizon: expected a number, got 'long'",
        ),
        (lambda: lobbysim.load_scenario("quickstrat"), ScenarioError, "did you mean 'quickstart'"),
        (lambda: lobbysim.compare("one_visit", policies=3), TypeError, "policies: expected"),
        (
            lambda: lobbysim.compare("one_visit", replications=0),
            ValueError,
            "replications: expected a whole number from 1",
        ),
        (
            lambda: lobbysim.compare("one_visit", ["draw_chance", "kg(x=1)"]),
            ValueError,
            "policies: kg(x=1): unknown policy 'kg'",
        ),
        (lambda: lobbysim.sweep("one_visit", grid=[1]), TypeError, "grid: expected a mapping"),
        (lambda: lobbysim.simulate("one_visit", progress="yes"), TypeError, "progress:"),
        (lambda: lobbysim.load_run(3), TypeError, "folder: expected a path"),
    ],
)
def test_wrong_arguments_are_named(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]
    assert message in str(info.value)


def test_compare_labels_variants_and_reads_back_from_its_folder(tmp_path: Path) -> None:
    policies = ["draw_chance", "knowledge_gradient(gamma=0.95)"]
    result = lobbysim.compare(
        "one_visit",
        policies,
        replications=2,
        overrides=SHORT,
        out=tmp_path / "o",
        report=False,
        jobs=2,
        progress=False,
    )
    assert result.policies == policies
    d = result.differences
    assert set(d.policy) == {"knowledge_gradient(gamma=0.95)"} and set(d.baseline) == {
        "draw_chance"
    }
    assert result.scenario.matchmaker.policy.name == "draw_chance"
    folder = lobbysim.load_run(tmp_path / "o")
    pd.testing.assert_frame_equal(folder.summary, result.summary)
    pd.testing.assert_frame_equal(folder.differences, result.differences)
    pd.testing.assert_frame_equal(folder.replications, result.metrics)
    assert folder.policies == policies and folder.report is None  # report=False
    assert folder.scenario.horizon == 45.0
    games = folder.records("knowledge_gradient(gamma=0.95)", "games")
    pd.testing.assert_frame_equal(games, result.runs["knowledge_gradient(gamma=0.95)"][0].games)
    assert set(folder.records()) == set(KINDS)  # the reference's frames, by kind
    with pytest.raises(KeyError, match="did you mean 'knowledge_gradient"):
        folder.records("knowledge_gradient(gamma=0.9)")


@pytest.mark.slow
def test_load_run_reads_a_folder_the_cli_wrote(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    argv = ["compare", "one_visit", "--policies", "draw_chance,knowledge_gradient(gamma=0.95)"]
    sets = ["--set", "horizon=45", "--set", "warmup=10", "--replications", "2", "-q"]
    assert main([*argv, *sets, "--jobs", "2", "--out", str(out)]) == 0
    in_memory = lobbysim.compare(
        "one_visit",
        "draw_chance,knowledge_gradient(gamma=0.95)",
        replications=2,
        overrides=SHORT,
        jobs=2,
        progress=False,
    )
    folder = lobbysim.load_run(out)
    assert folder.report == out / "report.html"
    pd.testing.assert_frame_equal(folder.summary, in_memory.summary)
    pd.testing.assert_frame_equal(folder.differences, in_memory.differences)
    with pytest.raises(ValueError, match="not the folder of a finished lobbysim run"):
        lobbysim.load_run(tmp_path)


def test_compare_without_policies_says_what_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    result = lobbysim.compare(
        "one_visit", replications=1, overrides={"horizon": 40, "warmup": 10}, jobs=2
    )
    assert result.policies == ["draw_chance", "uniform_random", "oracle"]
    assert "compare: draw_chance (the scenario's policy" in capsys.readouterr().err
    assert lobbysim.compare(
        "one_visit", replications=1, overrides={"horizon": 40, "warmup": 10}, progress=False
    ).metrics.equals(result.metrics)
    assert capsys.readouterr().err == ""


def test_run_experiment_takes_a_path_or_a_dict(tmp_path: Path) -> None:
    scenario = lobbysim.load_scenario("one_visit", horizon=30, warmup=10)
    path = tmp_path / "q.yaml"
    path.write_text(__import__("yaml").safe_dump(scenario.to_dict()))
    by_object = run_experiment(scenario, ["draw_chance", "oracle"], 1)
    by_dict = run_experiment(scenario.to_dict(), ["draw_chance", "oracle"], 1)
    by_path = run_experiment(str(path), ["draw_chance", "oracle"], 1)
    pd.testing.assert_frame_equal(by_dict.metrics, by_object.metrics)
    pd.testing.assert_frame_equal(by_path.metrics, by_object.metrics)


def test_sweep_takes_a_dict_grid_and_specs(tmp_path: Path) -> None:
    outcome = lobbysim.sweep(
        "one_visit",
        {"matchmaker": {"tick": [0.5, 1.0]}},
        ["draw_chance", "knowledge_gradient(gamma=0.9)"],
        replications=1,
        overrides={"horizon": 40, "warmup": 10},
        out=tmp_path / "s",
        report=False,
        jobs=2,
        progress=False,
    )
    results = outcome.results
    assert list(results["matchmaker.tick"]) == [0.5, 0.5, 1.0, 1.0]
    assert list(results.policy) == ["draw_chance", "knowledge_gradient(gamma=0.9)"] * 2
    assert outcome.ran == 4 and outcome.failed == 0


# --- progress ------------------------------------------------------------------------------------


def test_progress_lines_in_a_log_change_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    quiet = lobbysim.simulate("one_visit", seed=4, progress=False, **SHORT)
    assert capsys.readouterr().err == ""
    logged = lobbysim.simulate("one_visit", seed=4, progress=Progress(every=0.0), **SHORT)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 10
    assert lines[0].startswith("simulate one_visit: ") and " min (" in lines[0]
    assert lines[-1].startswith("simulate one_visit: 45/45 min (100%)")
    assert_same_run(quiet, logged)


def test_progress_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    lobbysim.simulate("one_visit", seed=4, horizon=30, warmup=5)
    assert "simulate one_visit" in terminal.getvalue() and "30/30" in terminal.getvalue()


@pytest.mark.slow
def test_the_cli_logs_progress_without_a_terminal_and_quiet_silences_it(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOBBYSIM_PROGRESS_EVERY", "0")
    argv = ["compare", "one_visit", "--policies", "draw_chance,oracle", "--replications", "2"]
    argv += ["--set", "horizon=40", "--set", "warmup=10", "--jobs", "2"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = capfd.readouterr().err.splitlines()
    runs = [line for line in err if line.startswith("compare: ")]
    assert runs[-1].startswith("compare: 4/4 runs (100%)")
    # inside the runs too: fractions of a run, from the worker processes
    assert any("." in line.split("/")[0] for line in runs)
    assert any(line.startswith("report: ") for line in err)
    assert main([*argv, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capfd.readouterr().err == ""
    for name in ("replications.csv", "summary.csv", "differences.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


BASE_LOBBY = {
    "horizon": 240,
    "warmup": 30,
    "seed": 9,
    "arrivals": {"name": "poisson", "rate": 0.5},
    "base": {"size": 150, "newcomers_per_day": 50, "leave_per_day": 0.05},
    "population": {"patience_mean": 3.0, "session_games_mean": 3},
    "game": {"length": 6},
    "matchmaker": {"tick": 0.5, "wake_on_arrival": False, "threshold": [[0, 0.4], [1, 0.0]]},
    "records": {"ratings_every": 20},
}


def test_a_run_stopped_for_progress_gives_the_same_records() -> None:
    # timed passes only and a player base: exact tick times and visits at fractions of minutes
    plain = experiments_simulate(BASE_LOBBY, 9)
    stops: list[float] = []
    watched = experiments_simulate(BASE_LOBBY, 9, progress=lambda now, end: stops.append(now))
    assert len(stops) == 100 and stops[-1] == 240.0
    assert_same_run(plain, watched)
