"""``lobbysim sweep``: grids, common random numbers, resuming after a SIGKILL, failures, Dask."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lobbysim.cli.main import main
from lobbysim.commands.sweep import build_sweep, parse_grid_option, run_sweep
from lobbysim.experiments.replications import replication_seeds
from lobbysim.experiments.simulation import simulate
from lobbysim.experiments.sweeps import SweepError, run_key

SMALL = """\
name: tiny
horizon: 60
warmup: 10
seed: 4
replications: 2
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 8}
matchmaker: {policy: draw_chance, threshold: [[0, 0.5], [1, 0.0]]}
records: {ratings_every: 30}
"""

DEADLY = """\
import os
from dataclasses import dataclass
from typing import ClassVar

from lobbysim.players.arrivals import Poisson


@dataclass(frozen=True)
class Deadly(Poisson):
    name: ClassVar[str] = "deadly"
    how: str = "fine"

    def sample(self, rng, start, end):
        if self.how == "exit":
            os._exit(3)  # the worker process dies
        if self.how == "raise":
            raise RuntimeError("boom in the arrival model")
        return super().sample(rng, start, end)
"""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SMALL)
    return path


GRID = ["matchmaker.tick=0.25,1", "arrivals.rate=1,2"]


# --- the definition -------------------------------------------------------------------------------


def test_grid_options_are_read_as_yaml_values() -> None:
    assert parse_grid_option("matchmaker.tick=0.25, 1,2.5") == ("matchmaker.tick", (0.25, 1, 2.5))
    assert parse_grid_option("matchmaker.threshold=[[0, 0.5]],[[0, 0.0], [1, 0.2]]") == (
        "matchmaker.threshold",
        ([[0, 0.5]], [[0, 0.0], [1, 0.2]]),
    )
    assert parse_grid_option("matchmaker.assignment=global,sequential")[1] == (
        "global",
        "sequential",
    )
    for bad, message in [
        ("tick", "--grid: expected key.path=v1,v2,..., got 'tick'"),
        ("tick=", "--grid: expected key.path=v1,v2,..., got 'tick='"),
        ("matchmaker.tick=1,1", "--grid matchmaker.tick: a value is repeated in '1,1'"),
    ]:
        with pytest.raises(SweepError, match=bad.split("=")[0]) as err:
            parse_grid_option(bad)
        assert str(err.value) == message


def test_cells_are_the_product_and_share_the_replication_seeds(scenario_file: Path) -> None:
    sweep = build_sweep(scenario_file, grid=GRID, policies=["point_estimate", "draw_chance"])
    assert [dict(c.values) for c in sweep.cells] == [
        {"matchmaker.tick": 0.25, "arrivals.rate": 1},
        {"matchmaker.tick": 0.25, "arrivals.rate": 2},
        {"matchmaker.tick": 1, "arrivals.rate": 1},
        {"matchmaker.tick": 1, "arrivals.rate": 2},
    ]
    assert len(sweep.runs) == 4 * 2 * 2
    seeds = replication_seeds(4, 2)
    assert {(r.replication, r.seed) for r in sweep.runs} == {(1, seeds[0]), (2, seeds[1])}
    run = sweep.runs[-1]
    assert run.scenario.matchmaker.tick == 1.0 and run.scenario.arrivals.params["rate"] == 2
    assert run.scenario.matchmaker.policy.name == "draw_chance"
    assert len({r.key for r in sweep.runs}) == len(sweep.runs)
    # the key is what determines the result: not the name, the replications or the master seed
    assert run_key(run.scenario.replace(name="other", replications=9), run.seed) == run.key
    assert run_key(run.scenario, run.seed + 1) != run.key
    assert run_key(run.scenario.replace(horizon=61.0), run.seed) != run.key


def test_the_yaml_sweep_section_is_used_and_grid_options_replace_it(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        SMALL + "sweep:\n  grid: {matchmaker.tick: [0.5, 1, 2]}\n  policies: [random, fifo]\n"
    )
    sweep = build_sweep(path)
    assert sweep.grid == {"matchmaker.tick": (0.5, 1, 2)} and sweep.policies == ("random", "fifo")
    sweep = build_sweep(path, grid=["arrivals.rate=1,3"], policies=["point_estimate"])
    assert sweep.grid == {"arrivals.rate": (1, 3)} and sweep.policies == ("point_estimate",)


@pytest.mark.parametrize(
    ("argv", "messages"),
    [
        ([], ["nothing to sweep: give --grid key.path=v1,v2,... or a sweep: section with a grid"]),
        (
            ["--grid", "matchmaker.tik=1,2"],
            [
                "cell 1 (matchmaker.tik=1): matchmaker.tik: unknown field (did you mean 'tick'?)",
                "cell 2 (matchmaker.tik=2): matchmaker.tik: unknown field (did you mean 'tick'?)",
            ],
        ),
        (
            ["--grid", "arrivals.rate=2,-1"],
            [
                "cell 2 (arrivals.rate=-1): arrivals: arrival model 'poisson': "
                "rate must be > 0, got -1"
            ],
        ),
        (["--grid", "horizon=30", "--policies", "draw_chanse"], ["unknown policy 'draw_chanse'"]),
        (["--grid", "horizon=30", "--executor", "dask"], ["--executor dask needs --scheduler"]),
        (
            ["--grid", "horizon=30", "--replications", "0"],
            ["--replications: expected a whole number >= 1, got 0"],
        ),
    ],
)
def test_bad_sweeps_are_reported_at_once_with_exit_2_and_nothing_run(
    argv: list[str],
    messages: list[str],
    scenario_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "never"
    assert main(["sweep", str(scenario_file), *argv, "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(messages) and "Traceback" not in "".join(lines)
    for line, message in zip(lines, messages, strict=True):
        assert line.startswith("lobbysim: error: ") and message in line
    assert not out.exists()


def test_asking_for_dask_without_it_says_what_to_install(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    argv = ["sweep", str(scenario_file), "--grid", "horizon=30", "--executor", "dask-local"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'lobbysim[dask]'" in err and err.count("\n") == 1


# --- running ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_sweep_runs_every_cell_like_simulate_and_writes_its_report(
    scenario_file: Path, tmp_path: Path
) -> None:
    sweep = build_sweep(scenario_file, grid=GRID, policies=["point_estimate", "draw_chance"])
    outcome = run_sweep(sweep, tmp_path / "out", jobs=1)
    assert (outcome.total, outcome.skipped, outcome.ran, outcome.failed) == (16, 0, 16, 0)
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(results.columns[:6]) == [
        "cell",
        "matchmaker.tick",
        "arrivals.rate",
        "policy",
        "replication",
        "seed",
    ]
    assert len(results) == 16 and results.cell.tolist() == sorted(results.cell.tolist())
    # one run, checked against the simulator itself
    run = sweep.runs[5]
    row = results[(results.cell == run.cell.number) & (results.policy == run.policy)]
    row = row[row.replication == run.replication].iloc[0]
    direct = simulate(run.scenario, run.seed).metrics
    for metric, value in direct.items():
        assert row[metric] == pytest.approx(value, rel=1e-12, nan_ok=True)
    for name in ("cells.csv", "report.md", "report.html", "tradeoff_draw.png", "sweep.yaml"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert "Pareto" in (tmp_path / "out" / "report.md").read_text()
    # the folder's sweep.yaml repeats the sweep: every run is found done
    again = run_sweep(build_sweep(tmp_path / "out" / "sweep.yaml"), tmp_path / "out", jobs=1)
    assert (again.skipped, again.ran) == (16, 0)


def test_results_do_not_depend_on_the_number_of_workers(
    scenario_file: Path, tmp_path: Path
) -> None:
    sweep = build_sweep(scenario_file, grid=["matchmaker.tick=0.25,1"], policies=["random"])
    run_sweep(sweep, tmp_path / "one", jobs=1, write_report=False)
    run_sweep(sweep, tmp_path / "two", jobs=2, write_report=False)
    one, two = (tmp_path / "one" / "results.csv"), (tmp_path / "two" / "results.csv")
    assert one.read_bytes() == two.read_bytes()


def test_more_replications_reuse_the_runs_already_done(scenario_file: Path, tmp_path: Path) -> None:
    sweep = build_sweep(scenario_file, grid=["matchmaker.tick=0.25,1"], replications=2)
    run_sweep(sweep, tmp_path / "o", write_report=False)
    more = build_sweep(scenario_file, grid=["matchmaker.tick=0.25,1"], replications=3)
    assert more.folder_name() == sweep.folder_name()
    outcome = run_sweep(more, tmp_path / "o", write_report=False)
    assert (outcome.skipped, outcome.ran) == (4, 2)


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_that_raises_or_kills_its_worker_is_reported_and_the_rest_completes(
    jobs: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "deadly.py").write_text(DEADLY)
    path = tmp_path / "s.yaml"
    path.write_text(
        SMALL.replace(
            "{name: poisson, rate: 1.5}", f"{{name: '{tmp_path}/deadly.py:Deadly', rate: 1.5}}"
        )
    )
    how = "fine,raise" if jobs == 1 else "fine,raise,exit"  # os._exit would end this process
    out = tmp_path / "o"
    argv = ["sweep", str(path), "--grid", f"arrivals.how={how}", "--jobs", str(jobs)]
    assert main([*argv, "--out", str(out)]) == 1
    captured = capsys.readouterr()
    results = pd.read_csv(out / "results.csv")
    failures = pd.read_csv(out / "failures.csv")
    assert set(results["arrivals.how"]) == {"fine"} and len(results) == 2
    assert sorted(failures["arrivals.how"]) == sorted(how.split(",")[1:] * 2)
    raised = failures[failures["arrivals.how"] == "raise"]
    assert raised.error.str.contains("RuntimeError: boom in the arrival model").all()
    # a plug-in's failure is its one line naming the model, not a traceback
    assert raised.error.str.startswith("arrivals: the arrival model").all()
    assert not raised.error.str.contains("Traceback").any()
    assert set(raised.seed) == set(replication_seeds(4, 2))
    if jobs == 2:
        died = failures[failures["arrivals.how"] == "exit"]
        assert died.error.str.contains("worker process running it died").all()
    assert "failed: cell 2, policy draw_chance, replication 1 (seed" in captured.err
    assert "Failed runs" in (out / "report.md").read_text()
    # failures are retried on the next run, successes are not
    again = run_sweep(build_sweep(path, grid=[f"arrivals.how={how}"]), out, jobs=jobs)
    assert (again.skipped, again.ran, again.failed) == (2, 0, len(failures))


@pytest.mark.slow
def test_a_sweep_killed_partway_resumes_to_the_same_table_without_rerunning(
    scenario_file: Path, tmp_path: Path
) -> None:
    grid = ["matchmaker.tick=0.25,0.5,1", "arrivals.rate=1,2"]
    argv = ["--grid", grid[0], "--grid", grid[1], "--policies", "point_estimate,draw_chance"]
    argv += ["--replications", "3", "--jobs", "1"]
    total = 6 * 2 * 3
    full = tmp_path / "full"
    assert main(["sweep", str(scenario_file), *argv, "--out", str(full)]) == 0

    killed = tmp_path / "killed"
    command = [sys.executable, "-m", "lobbysim", "sweep", str(scenario_file), *argv]
    process = subprocess.Popen(
        [*command, "--out", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    runs = killed / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(runs.glob("[!.]*.json"))) < total // 3:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("[!.]*.json")}
    assert total // 3 <= len(before) < total
    for path in runs.glob("[!.]*.json"):
        json.loads(path.read_text())  # every result file is complete
    assert not (killed / "results.csv").exists()

    sweep = build_sweep(
        scenario_file, grid=grid, policies=["point_estimate", "draw_chance"], replications=3
    )
    outcome = run_sweep(sweep, killed, jobs=1)
    assert (outcome.skipped, outcome.ran, outcome.failed) == (len(before), total - len(before), 0)
    after = {p.name: p.stat().st_mtime_ns for p in runs.glob("[!.]*.json")}
    assert {name: after[name] for name in before} == before  # nothing done was run again
    assert len(after) == total and not list(runs.glob(".tmp-*"))
    assert (killed / "results.csv").read_bytes() == (full / "results.csv").read_bytes()


@pytest.mark.slow
def test_a_dask_local_cluster_gives_the_local_executors_results(
    scenario_file: Path, tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    sweep = build_sweep(scenario_file, grid=GRID, policies=["point_estimate", "draw_chance"])
    run_sweep(sweep, tmp_path / "local", jobs=2, write_report=False)
    outcome = run_sweep(sweep, tmp_path / "dask", executor="dask-local", jobs=2)
    assert (outcome.ran, outcome.failed) == (16, 0)
    local = (tmp_path / "local" / "results.csv").read_bytes()
    assert (tmp_path / "dask" / "results.csv").read_bytes() == local
    assert np.isfinite(outcome.results.draw_prob_true_mean).all()


@pytest.mark.slow
def test_on_dask_a_run_that_raises_or_kills_its_worker_is_reported(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    (tmp_path / "deadly.py").write_text(DEADLY)
    path = tmp_path / "s.yaml"
    arrivals = f"{{name: '{tmp_path}/deadly.py:Deadly', rate: 1.5}}"
    path.write_text(SMALL.replace("{name: poisson, rate: 1.5}", arrivals))
    sweep = build_sweep(path, grid=["arrivals.how=fine,raise,exit"])
    outcome = run_sweep(sweep, tmp_path / "o", executor="dask-local", jobs=2, write_report=False)
    assert (outcome.ran, outcome.failed) == (2, 4)
    errors = outcome.failures.set_index(["arrivals.how", "replication"]).error
    assert errors[("raise", 1)].endswith("RuntimeError: boom in the arrival model")
    assert "KilledWorker" in errors[("exit", 2)]
    assert set(outcome.results["arrivals.how"]) == {"fine"}


def test_list_valued_grids_become_text_cells_in_the_tables_and_report(
    scenario_file: Path, tmp_path: Path
) -> None:
    grid = ["matchmaker.threshold=[[0, 0.0]],[[0, 0.8], [2, 0.0]]"]
    sweep = build_sweep(scenario_file, grid=grid, replications=2)
    assert sweep.runs[-1].scenario.matchmaker.threshold == ((0.0, 0.8), (2.0, 0.0))
    outcome = run_sweep(sweep, tmp_path / "o")
    assert outcome.results["matchmaker.threshold"].tolist() == [
        "[[0, 0.0]]",
        "[[0, 0.0]]",
        "[[0, 0.8], [2, 0.0]]",
        "[[0, 0.8], [2, 0.0]]",
    ]
    assert (tmp_path / "o" / "by_matchmaker_threshold.png").stat().st_size > 0
    assert "[[0, 0.8], [2, 0.0]]" in (tmp_path / "o" / "report.md").read_text()


def test_a_streamed_sweep_keeps_each_runs_records_and_the_same_metrics(
    scenario_file: Path, tmp_path: Path
) -> None:
    grid = ["matchmaker.tick=0.25,1"]
    kept = run_sweep(build_sweep(scenario_file, grid=grid), tmp_path / "kept", write_report=False)
    sweep = build_sweep(scenario_file, grid=grid, sets=["records.stream=true"])
    streamed = run_sweep(sweep, tmp_path / "streamed", jobs=2, write_report=False)
    pd.testing.assert_frame_equal(streamed.results, kept.results)
    for run in sweep.runs:
        assert (tmp_path / "streamed" / "records" / run.key / "games.csv").stat().st_size > 0


@pytest.mark.slow
def test_a_sweep_runs_on_an_existing_cluster_by_its_scheduler_address(
    scenario_file: Path, tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed")
    sweep = build_sweep(scenario_file, grid=["matchmaker.tick=0.25,1"], replications=1)
    local = run_sweep(sweep, tmp_path / "local", write_report=False)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        argv = ["sweep", str(scenario_file), "--grid", "matchmaker.tick=0.25,1"]
        argv += ["--replications", "1", "--executor", "dask"]
        argv += ["--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "remote")]
        assert main(argv) == 0
    remote = pd.read_csv(tmp_path / "remote" / "results.csv")
    pd.testing.assert_frame_equal(remote, pd.read_csv(tmp_path / "local" / "results.csv"))
    assert len(local.results) == 2
