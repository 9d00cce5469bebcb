"""``lobbysim tune``: spaces, racing, feasibility with confidence, fresh-seed answers, resuming."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from lobbysim.cli.main import main
from lobbysim.commands.tune import load_study, tune
from lobbysim.experiments.replications import replication_seeds
from lobbysim.reporting.tune import pareto_front
from lobbysim.scenario import load_scenario
from lobbysim.tuning.racing import MIN_CHANCE, pooled_spread, prospects, rank
from lobbysim.tuning.space import SpaceError, expansion, load_space
from lobbysim.tuning.trials import Interval, Trial, feasible

pytest.importorskip("optuna")

SHORT = ["--set", "horizon=120", "--set", "warmup=20"]
SPACE = {
    "objective": {"minimize": "skill_gap_true_mean"},
    "constraints": ["queue_time_mean <= 0.05"],
    "parameters": {
        "matchmaker.threshold": {
            "shape": "expansion",
            "start": [0.1, 0.7],
            "step": [0.1, 0.5],
            "every": [0.5, 2.0],
            "limit": 0.0,
        },
        "matchmaker.tick": {"choices": [0.25, 0.5]},
    },
    "trials": 6,
    "batch": 3,
    "replications": [2, 4],
    "evaluate": 4,
    "seed": 3,
}


@pytest.fixture()
def space_file(tmp_path: Path) -> Path:
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(SPACE))
    return path


def test_an_expansion_moves_from_start_to_limit_by_step_every_interval() -> None:
    assert expansion(0.6, 0.2, 1.5, 0.0) == [[0.0, 0.6], [1.5, 0.4], [3.0, 0.2], [4.5, 0.0]]
    # the last step is the limit itself, never past it; upward for a latency limit
    assert expansion(0.5, 0.4, 1.0, 0.0) == [[0.0, 0.5], [1.0, 0.1], [2.0, 0.0]]
    assert expansion(50, 25, 0.5, 120) == [[0, 50], [0.5, 75], [1.0, 100], [1.5, 120]]
    assert expansion(0.3, 0.1, 1.0, 0.3) == [[0.0, 0.3]]


def test_a_space_reads_every_kind_of_dimension() -> None:
    scenario = load_scenario("one_visit")
    space = load_space(
        {
            **SPACE,
            "parameters": {
                **SPACE["parameters"],
                "matchmaker.assignment.block_size": {"int": [4, 10]},
                "game.quit_rate": {"low": 0.001, "high": 0.1, "log": True},
            },
        },
        scenario,
    )
    assert space.names() == [
        "matchmaker.threshold.start",
        "matchmaker.threshold.step",
        "matchmaker.threshold.every",
        "matchmaker.tick",
        "matchmaker.assignment.block_size",
        "game.quit_rate",
    ]
    assert (space.first, space.most, space.evaluate, space.minimize) == (2, 4, 4, True)
    drawn = {
        "matchmaker.threshold.start": 0.5,
        "matchmaker.threshold.step": 0.25,
        "matchmaker.threshold.every": 1.0,
        "matchmaker.tick": 0.5,
        "matchmaker.assignment.block_size": 6,
        "game.quit_rate": 0.01,
    }
    values = space.values(drawn)
    assert values["matchmaker.threshold"] == [[0.0, 0.5], [1.0, 0.25], [2.0, 0.0]]
    assert values["matchmaker.assignment.block_size"] == 6


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"parameters": {"matchmaker.tik": [0.1, 1.0]}}, "matchmaker.tik: unknown field"),
        ({"parameters": {"matchmaker.tick": [1.0, 0.1]}}, "empty range [1.0, 0.1]"),
        ({"constraints": ["queue_time_p91 <= 1"]}, "unknown metric 'queue_time_p91'"),
        ({"constraints": ["queue_time_p90 < 1"]}, "expected 'METRIC <= NUMBER'"),
        ({"objective": {"minimize": "fairness"}}, "objective.minimize: unknown metric"),
        ({"replications": [5, 2]}, "replications: expected [FIRST, MOST]"),
        ({"trails": 4}, "trails: unknown field (did you mean 'trials'?)"),
        ({"parameters": {"matchmaker.tick": 0.5}}, "nothing to search"),
        (
            {"parameters": {"matchmaker.tick": {"levels": [0.25, 0.5, 0.25]}}},
            "matchmaker.tick.levels: each value once, got 0.25 twice",
        ),
        ({"parameters": {"matchmaker.tick": {"levels": [0.5]}}}, "expected a list of 2 or more"),
        (  # a choice no trial could run is refused before any run (it answered "infeasible")
            {"parameters": {"matchmaker.policy": {"choices": ["draw_chance", "draw_chanse"]}}},
            "matchmaker.policy: unknown policy 'draw_chanse' (did you mean 'draw_chance'?)",
        ),
        (
            {
                "parameters": {
                    "matchmaker.threshold": {
                        "shape": "expansion",
                        "start": [0.2, 0.5],
                        "every": 1,
                        "limit": 0,
                    }
                }
            },
            "matchmaker.threshold.step: missing",
        ),
    ],
)
def test_a_bad_space_is_one_line_naming_the_field_and_nothing_is_written(
    change: dict[str, object],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump({**SPACE, **change}))
    out = tmp_path / "out"
    assert main(["tune", "one_visit", "--space", str(path), "--out", str(out), *SHORT]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_a_missing_space_file_and_a_bad_yaml_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tune", "one_visit", "--space", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("objective: [\n")
    assert main(["tune", "one_visit", "--space", str(bad)]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def _trial(number: int, objective: list[float], queue: list[float]) -> Trial:
    runs = {
        r + 1: {"skill_gap_true_mean": o, "queue_time_mean": q}
        for r, (o, q) in enumerate(zip(objective, queue, strict=True))
    }
    drawn = {
        "matchmaker.threshold.start": 0.1 + 0.05 * number,
        "matchmaker.threshold.step": 0.1 + 0.03 * number,
        "matchmaker.threshold.every": 0.5 + 0.1 * number,
        "matchmaker.tick": 0.25 if number % 2 else 0.5,
    }
    return Trial(number, drawn, {}, runs)


def test_racing_ranks_by_the_constraints_then_the_objective_and_drops_what_cannot_win() -> None:
    space = load_space(SPACE, load_scenario("one_visit"))
    best = _trial(1, [2.0, 2.1, 2.0, 2.1], [0.01] * 4)
    worse = _trial(2, [2.5, 2.6], [0.01, 0.01])  # clearly worse on the shared seeds
    close = _trial(3, [1.9, 2.3], [0.01, 0.01])  # paired difference straddles 0
    slow = _trial(4, [1.0, 1.1], [0.2, 0.21])  # better but cannot keep queue <= 0.05
    trials = [best, worse, close, slow]
    pooled = pooled_spread(space, trials, best)

    def odds(t: Trial) -> float:
        rng = np.random.default_rng(1)
        return prospects(space, [*trials, t], [(t.drawn, t.runs)], best, rng)[0][0]

    assert odds(worse) < MIN_CHANCE <= odds(close) and odds(slow) == 0.0
    # expected to keep the constraints first, by objective; then by how far they miss
    ranked = sorted([slow, worse, close], key=lambda t: rank(space, t, pooled))
    assert [t.number for t in ranked] == [3, 2, 4]
    # one replication: judged with the seed's effect on the others and the model's spread
    assert odds(_trial(8, [1.95], [0.01])) > odds(_trial(9, [2.15], [0.01]))
    assert odds(_trial(10, [1.0], [0.9])) == 0.0  # one replication far over the queue bound
    # feasibility at the pessimistic end: the interval's upper end must keep the bound
    edge = _trial(5, [2.0, 2.0, 2.0], [0.04, 0.05, 0.06])
    assert feasible(space, edge, optimistic=True) and not feasible(space, edge)
    e = Interval.of([0.04, 0.05, 0.06])
    assert math.isclose(e.high, 0.05 + 4.302652729911275 * 0.01 / math.sqrt(3))


def test_the_pareto_front_keeps_the_points_nothing_beats_on_both() -> None:
    points = [(1.0, 5.0), (2.0, 3.0), (3.0, 3.5), (4.0, 1.0), (2.5, 3.0), (math.nan, 0.0)]
    assert pareto_front(points, [True, True]) == [0, 1, 3]
    assert pareto_front(points, [True, False]) == [0]  # high second coordinate is better


@pytest.mark.slow
def test_a_study_answers_on_fresh_seeds_and_its_numbers_are_the_stores(
    space_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    assert (
        main(
            [
                "tune",
                "one_visit",
                "--space",
                str(space_file),
                "--out",
                str(out),
                *SHORT,
                "--jobs",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert printed.startswith("tune: minimise skill_gap_true_mean subject to queue_time_mean")
    trials = pd.read_csv(out / "trials.csv")
    assert list(trials["trial"]) == list(range(1, 7))
    assert set(trials["replications"]) <= {2, 3, 4}  # the first rung, then one more at a time
    assert (trials["promoted"] == (trials["replications"] == 4)).all()

    # every number of trials.csv is recomputed from the run store, independently
    scenario = load_scenario("one_visit")
    seeds = replication_seeds(scenario.seed, 4 + 4)
    records = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    study_runs = [r for r in records if r["cell"] > 0]
    assert {r["seed"] for r in study_runs} <= set(seeds[:4])
    for row in trials.itertuples(index=False):
        mine = sorted((r for r in study_runs if r["cell"] == row.trial), key=lambda r: r["seed"])
        assert len(mine) == row.replications
        gaps = [r["metrics"]["skill_gap_true_mean"] for r in mine]
        queue = [r["metrics"]["queue_time_mean"] for r in mine]
        assert math.isclose(row.skill_gap_true_mean, float(np.mean(gaps)))
        assert math.isclose(row.queue_time_mean_high, Interval.of(queue).high)
        assert row.feasible == (Interval.of(queue).high <= 0.05)
    # the best: feasible, most replications, lowest mean objective among those
    eligible = trials[trials["feasible"] & (trials["replications"] == 4)]
    best = eligible.loc[eligible["skill_gap_true_mean"].idxmin()]
    # the answer's lead: against what you ship on fresh seeds, naming the best trial
    flat = " ".join(printed.split())
    assert f"trial {best.trial} (" in flat
    assert "than what you ship on 4 fresh seeds" in flat or "the shipped setting is" in flat
    assert "chance" in flat and "replications" in flat  # the chance the constraint holds

    # the answer is on fresh seeds, which no trial ran on, paired against the scenario as is
    evaluation = pd.read_csv(out / "evaluation.csv")
    fresh_runs = [r for r in records if r["cell"] == 0]
    assert {r["seed"] for r in fresh_runs} == set(seeds[4:])
    tuned = evaluation[evaluation["policy"] == "tuned"].sort_values("replication")
    own = evaluation[evaluation["policy"] == "scenario"].sort_values("replication")
    gap = tuned["skill_gap_true_mean"].to_numpy() - own["skill_gap_true_mean"].to_numpy()
    differences = pd.read_csv(out / "differences.csv").set_index("metric")
    assert math.isclose(differences.loc["skill_gap_true_mean", "mean"], float(gap.mean()))
    assert (differences["n"] == 4).all()

    # tuned.yaml is the scenario with the best trial's settings, and runs as it is
    written = load_scenario(out / "tuned.yaml")
    setting = trials.set_index("trial").loc[best.trial]
    assert written.matchmaker.threshold == tuple(
        tuple(step)
        for step in expansion(
            setting["matchmaker.threshold.start"],
            setting["matchmaker.threshold.step"],
            setting["matchmaker.threshold.every"],
            0.0,
        )
    ) or [list(s) for s in written.matchmaker.threshold] == expansion(
        setting["matchmaker.threshold.start"],
        setting["matchmaker.threshold.step"],
        setting["matchmaker.threshold.every"],
        0.0,
    )
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and 'src="tune_' not in html


@pytest.mark.slow
def test_an_infeasible_study_says_so_with_the_closest_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "space.yaml"
    path.write_text(
        yaml.safe_dump({**SPACE, "constraints": ["queue_time_mean <= 0.0001"], "trials": 3})
    )
    out = tmp_path / "study"
    argv = ["tune", "one_visit", "--space", str(path), "--out", str(out), *SHORT, "--quiet"]
    assert main([*argv, "--jobs", "2"]) == 1
    printed = " ".join(capsys.readouterr().out.split())
    # a continuous space with its budget spent: not "infeasible", but what was tried
    assert "no feasible setting found in " in printed and "settings tried" in printed
    assert "the problem is infeasible" not in printed
    assert "closest: trial " in printed
    assert not (out / "tuned.yaml").exists() and (out / "trials.csv").exists()


@pytest.mark.slow
def test_a_study_killed_partway_resumes_to_the_same_trials_and_answer(
    space_file: Path, tmp_path: Path
) -> None:
    argv = ["--space", str(space_file), *SHORT, "--jobs", "1", "--quiet"]
    full = tmp_path / "full"
    assert main(["tune", "one_visit", *argv, "--out", str(full)]) == 0

    killed = tmp_path / "killed"
    process = subprocess.Popen(
        [sys.executable, "-m", "lobbysim", "tune", "one_visit", *argv, "--out", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    runs = killed / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(runs.glob("[!.]*.json"))) < 8:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("[!.]*.json")}
    assert len(before) >= 8 and not (killed / "trials.csv").exists()

    assert main(["tune", "one_visit", *argv, "--out", str(killed)]) == 0
    after = {p.name: p.stat().st_mtime_ns for p in runs.glob("[!.]*.json")}
    assert {name: after[name] for name in before} == before  # nothing done was run again
    for name in ("trials.csv", "evaluation.csv", "differences.csv", "tuned.yaml"):
        assert (killed / name).read_bytes() == (full / name).read_bytes(), name


@pytest.mark.slow
def test_a_dask_local_cluster_gives_the_process_pools_study(
    space_file: Path, tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    scenario, space = load_study("one_visit", space_file, sets=SHORT[1::2])
    tune(scenario, space, tmp_path / "local", jobs=2, progress=False, report=False)
    tune(
        scenario,
        space,
        tmp_path / "dask",
        executor="dask-local",
        jobs=2,
        progress=False,
        report=False,
    )
    for name in ("trials.csv", "evaluation.csv", "differences.csv", "tuned.yaml"):
        local = (tmp_path / "local" / name).read_bytes()
        assert (tmp_path / "dask" / name).read_bytes() == local, name


def test_a_space_error_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SpaceError, match=r"^space: trials: expected a whole number >= 1, got 0"):
        load_space({**SPACE, "trials": 0}, load_scenario("one_visit"))


def test_a_rules_expansion_sets_its_limit_and_expansions_and_exports_to_flexmatch() -> None:
    from lobbysim.commands.tune import _flexmatch
    from lobbysim.tuning.space import apply

    scenario = load_scenario("flexmatch_5v5")  # rules read from a FlexMatch rule set
    shape = {"shape": "expansion", "start": [50, 100], "step": [10, 60], "every": [0.5, 2]}
    space = load_space(
        {
            **SPACE,
            "constraints": ["queue_time_mean <= 2"],
            "parameters": {"matchmaker.rules.LowPing.expansions": {**shape, "limit": 200}},
        },
        scenario,
    )
    drawn = {
        f"matchmaker.rules.LowPing.expansions.{k}": v
        for k, v in {"start": 60, "step": 50, "every": 1.0}.items()
    }
    values = space.values(drawn)
    assert values == {
        "matchmaker.rules.LowPing.limit": 60.0,
        "matchmaker.rules.LowPing.expansions": [[1.0, 110.0], [2.0, 160.0], [3.0, 200.0]],
    }
    tuned = apply(scenario, values)
    low_ping = {r.name: r for r in tuned.matchmaker.rules}["LowPing"]
    assert (low_ping.limit, low_ping.expansions) == (
        60.0,
        ((1.0, 110.0), (2.0, 160.0), (3.0, 200.0)),
    )
    document = json.loads(_flexmatch(tuned) or "{}")
    rule = {r["name"]: r for r in document["rules"]}["LowPing"]
    assert rule["maxLatency"] == 60
    steps = {e["target"]: e["steps"] for e in document["expansions"]}["rules[LowPing].maxLatency"]
    assert [(s["waitTimeSeconds"], s["value"]) for s in steps] == [
        (60, 110),
        (120, 160),
        (180, 200),
    ]
    assert _flexmatch(load_scenario("one_visit")) is None  # no rule set: no file
    with pytest.raises(SpaceError, match="has no element named 'LowPong'"):
        load_space({**SPACE, "parameters": {"matchmaker.rules.LowPong.limit": [50, 90]}}, scenario)


def test_levels_are_searched_by_rank_and_choices_as_categories() -> None:
    """{levels: [...]} reaches the sampler as an ordinal (an integer rank), {choices: [...]}
    as a category; both map back to their values and write back as given."""
    import optuna

    from lobbysim.tuning.study import _suggest

    scenario = load_scenario("one_visit")
    data = {
        **SPACE,
        "parameters": {
            "matchmaker.tick": {"levels": [0.25, 0.5, 1.0, 2.0]},
            "matchmaker.policy": {"choices": ["point_estimate", "draw_chance"]},
        },
    }
    space = load_space(data, scenario)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    seen = set()
    for _ in range(12):
        trial = study.ask()
        drawn = _suggest(trial, space)
        seen.add(drawn["matchmaker.tick"])
        assert drawn["matchmaker.policy"] in ("point_estimate", "draw_chance")
        dists = trial.distributions
        assert isinstance(dists["matchmaker.tick"], optuna.distributions.IntDistribution)
        assert (dists["matchmaker.tick"].low, dists["matchmaker.tick"].high) == (0, 3)
        assert isinstance(dists["matchmaker.policy"], optuna.distributions.CategoricalDistribution)
    assert seen <= {0.25, 0.5, 1.0, 2.0} and len(seen) >= 3
    written = space.to_dict()["parameters"]
    assert written["matchmaker.tick"] == {"levels": [0.25, 0.5, 1.0, 2.0]}
    assert written["matchmaker.policy"] == {"choices": ["point_estimate", "draw_chance"]}


@pytest.mark.parametrize(
    ("objective", "shipped"),
    [({"minimize": "queue_time_mean"}, True), ({"maximize": "queue_time_mean"}, False)],
)
def test_no_setting_runs_twice_on_a_seed_and_the_spend_is_the_runs_made(
    objective: dict[str, str], shipped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two settings for six trials, one of them the scenario's own (a tick twice as long
    makes players wait longer, so minimising the wait finds the shipped tick, maximising it the
    other): each setting is tried once (the space is exhausted after two), every (setting,
    seed) runs once, and the study's simulations plus evaluations are exactly the runs made."""
    import lobbysim.tuning.study as study_module
    from lobbysim.tuning.study import run_study

    executed: list[str] = []
    real = study_module.run_local

    def counting(todo: Any, jobs: int, on_done: Any) -> None:
        executed.extend(run.key for run in todo)
        real(todo, jobs, on_done)

    monkeypatch.setattr(study_module, "run_local", counting)
    scenario = load_scenario("one_visit").replace(horizon=120.0, warmup=20.0)
    tick = scenario.matchmaker.tick
    data = {
        **SPACE,
        "objective": objective,
        "replications": [2, 2],
        "evaluate": 2,
        "constraints": [],
        "parameters": {"matchmaker.tick": {"choices": [tick, 2 * tick]}},
    }
    space = load_space(data, scenario)
    result = run_study(scenario, space, tmp_path / "study")
    proposed = [t.drawn["matchmaker.tick"] for t in result.trials]
    assert sorted(proposed) == [tick, 2 * tick]  # each setting once, the shipped one first
    assert proposed[0] == tick
    assert len(executed) == len(set(executed)), "a (setting, seed) ran twice"
    assert result.simulations + result.evaluations == len(executed)
    assert result.simulations == 2 * space.most  # two settings, each on its two seeds
    # the answer says whether the best is the shipped setting, and counts its runs once
    from lobbysim.reporting.tune import tune_headline_lines

    assert result.best is not None
    assert (result.best.values == {"matchmaker.tick": tick}) == shipped
    assert result.shipped == shipped
    assert result.evaluations == space.evaluate * (1 if shipped else 2)
    lines = tune_headline_lines(result)
    assert f"{result.simulations} distinct simulations in the search" in lines[0]
    assert ("the shipped setting is the best found" in lines[1]) == shipped
