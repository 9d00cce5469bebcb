"""The notebook-friendly API: results show as their answer (a short repr, a small HTML view),
the metrics as pandas, one name for the per-replication table (``replications``; ``metrics``
kept) across :func:`lobbysim.simulate`, :func:`lobbysim.compare` and :func:`lobbysim.load_run`,
and the examples in :mod:`lobbysim.api`'s docstrings run."""

from __future__ import annotations

import dataclasses
import doctest
import pickle
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

import lobbysim
import lobbysim.api
import lobbysim.commands.run_folder
from lobbysim.cli.main import main
from lobbysim.experiments import run_experiment
from lobbysim.experiments import simulate as experiments_simulate
from lobbysim.experiments.replications import ExperimentResult
from lobbysim.experiments.simulation import SimulationResult
from lobbysim.reporting.headline import experiment_headline, headline_text
from lobbysim.reporting.notebook import NotebookExperimentResult, NotebookSimulationResult

SHORT = {"horizon": 60, "warmup": 10}
REPR_LIMIT = 1_000


@pytest.fixture(scope="module")
def run() -> NotebookSimulationResult:
    return lobbysim.simulate("one_visit", seed=3, progress=False, **SHORT)


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[NotebookExperimentResult, Path]:
    """The scenario's own policy and both bounds (the longest headline: its answer first),
    written to a folder as well."""
    out = tmp_path_factory.mktemp("notebook") / "compare"
    result = lobbysim.compare(
        "one_visit", replications=2, overrides=SHORT, out=out, report=False, progress=False
    )
    return result, out


# --- the doctests ---------------------------------------------------------------------------------


def test_the_api_docstrings_examples_run() -> None:
    started = time.perf_counter()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, attempted = doctest.testmod(lobbysim.api, optionflags=flags, report=True)
    folders = doctest.testmod(lobbysim.commands.run_folder, optionflags=flags, report=True)
    assert failed == 0 and folders.failed == 0
    assert attempted + folders.attempted >= 20  # every function's example ran, not none of them
    assert time.perf_counter() - started < 60  # ~4 s: small scenarios only
    documented = ("load_scenario", "simulate", "compare", "sweep", "load_run", "tune", "calibrate")
    assert all(">>> " in (getattr(lobbysim.api, name).__doc__ or "") for name in documented)


# --- one run ----------------------------------------------------------------------------------


def test_a_runs_repr_is_short_and_says_what_was_run(run: NotebookSimulationResult) -> None:
    text = repr(run)
    assert len(text) < 600
    assert text.startswith("SimulationResult: one_visit, seed 3, 60 min simulated")
    assert f"games {len(run.games):,}" in text and "queue_time_mean=" in text
    assert "game_id" not in text  # no frame dumped
    plain = experiments_simulate(lobbysim.load_scenario("one_visit", **SHORT), 3)
    assert type(plain) is SimulationResult and repr(plain) == text  # the view adds no text


def test_a_runs_html_is_a_table_of_its_key_metrics_with_units(
    run: NotebookSimulationResult,
) -> None:
    page = run._repr_html_()
    assert "<table>" in page and "<td>queue_time_mean</td>" in page and "<td>min</td>" in page
    assert "<body" not in page and "<style" not in page  # embeddable: no page, no page style
    assert len(page) < 3_000
    plain = experiments_simulate(lobbysim.load_scenario("one_visit", **SHORT), 3)
    assert "<table" in plain._repr_html_() and "games_per_hour" in plain._repr_html_()


def test_the_metrics_series_and_table_are_the_dict(run: NotebookSimulationResult) -> None:
    assert isinstance(run.metrics, dict)  # unchanged
    series = run.metrics_series
    assert list(series.index) == list(run.metrics) and series.index.name == "metric"
    pd.testing.assert_series_equal(series, pd.Series(run.metrics, dtype=float), check_names=False)
    table = run.metrics_table
    pd.testing.assert_series_equal(table["value"], series)
    assert table.loc["queue_time_mean", "unit"] == "min"
    assert table.loc["games_per_hour", ["unit", "better"]].tolist() == ["games/h", "higher"]
    assert run.key_metrics()[:2] == ["queue_time_mean", "queue_time_p90"]


def test_a_streamed_runs_repr_names_its_folder(tmp_path: Path) -> None:
    streamed = lobbysim.simulate(
        "one_visit", seed=3, records_dir=tmp_path, records__stream=True, progress=False, **SHORT
    )
    assert streamed.games is None
    assert f"records streamed to {tmp_path}" in repr(streamed)
    assert "<table" in streamed._repr_html_()


def test_the_notebook_views_are_the_results_themselves(run: NotebookSimulationResult) -> None:
    assert isinstance(run, SimulationResult)
    view = NotebookSimulationResult.of(run)
    assert view.games is run.games and view.metrics is run.metrics  # shared, not copied
    again = pickle.loads(pickle.dumps(run))
    assert type(again) is NotebookSimulationResult and repr(again) == repr(run)


# --- a comparison and its folder -----------------------------------------------------------------


def test_a_comparisons_repr_is_its_headline_cut_short(
    compared: tuple[NotebookExperimentResult, Path],
) -> None:
    result, out = compared
    text = repr(result)
    assert len(text) < REPR_LIMIT
    first = text.splitlines()[0]
    assert first == (
        "ExperimentResult: one_visit: 3 policies x 2 replications: draw_chance (baseline), "
        "uniform_random, oracle"
    )
    headline = headline_text(experiment_headline(result))
    assert result.headline == headline
    assert headline.splitlines()[0] in text  # the answer first, as the terminal prints it
    assert "more lines: print(result.headline)" in text  # the rest is one call away
    assert text.splitlines()[-2].startswith(f"  tables: .summary ({len(result.summary)} rows)")
    assert text.splitlines()[-1] == f"  folder: {out} (lobbysim.load_run(result.folder))"


def test_a_comparison_keeps_the_folder_it_wrote(
    compared: tuple[NotebookExperimentResult, Path],
) -> None:
    result, out = compared
    assert result.folder == out and (out / "replications.csv").is_file()
    again = lobbysim.load_run(result.folder)
    pd.testing.assert_frame_equal(again.replications, result.replications)
    assert f"folder: {out}" in result._repr_html_()
    assert pickle.loads(pickle.dumps(result)).folder == out
    assert NotebookExperimentResult.of(result).folder == out  # a view of the view keeps it
    # a result that wrote nothing has no folder, and says none
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(ExperimentResult)}
    in_memory = NotebookExperimentResult.of(ExperimentResult(**fields))
    assert in_memory.folder is None and "folder:" not in repr(in_memory)


def test_a_comparisons_html_is_its_headline_and_key_metrics(
    compared: tuple[NotebookExperimentResult, Path],
) -> None:
    result, _ = compared
    page = result._repr_html_()
    assert "Headline: each policy" in page and "draw_chance" in page
    assert '<th scope="col">uniform_random</th>' in page and "<td>skill_gap_true_mean</td>" in page
    assert page.count("<tr>") <= 12  # the key metrics, not every metric
    assert "<body" not in page and "<style" not in page
    assert "Key metrics, mean [95% CI] over 2 replications" in page


def test_replications_is_the_per_replication_table_everywhere(
    compared: tuple[NotebookExperimentResult, Path],
) -> None:
    result, out = compared
    assert isinstance(result, ExperimentResult)
    assert result.replications is result.metrics
    assert isinstance(result.metrics, pd.DataFrame)  # unchanged
    folder = lobbysim.load_run(out)
    assert folder.metrics is folder.replications
    pd.testing.assert_frame_equal(folder.replications, result.replications)
    plain = run_experiment(lobbysim.load_scenario("one_visit", **SHORT), ["draw_chance"], 1)
    assert type(plain) is ExperimentResult and plain.replications is plain.metrics
    assert len(repr(plain)) < 300 and "replications (= .metrics, 1 x" in repr(plain)


def test_a_folders_repr_and_html_are_its_headline(
    compared: tuple[NotebookExperimentResult, Path],
) -> None:
    result, out = compared
    folder = lobbysim.load_run(out)
    text = repr(folder)
    assert len(text) < REPR_LIMIT
    assert text.startswith(f"RunFolder {out}: one_visit: 3 policies x 2 replications")
    assert folder.headline == result.headline  # the same headline, read back from the tables
    assert folder.headline.splitlines()[0] in text
    assert ".records(policy, kind); no report" in text
    page = folder._repr_html_()
    assert "<table>" in page and "Headline: each policy" in page
    assert folder.as_result().runs == {}


def test_a_folder_the_cli_wrote_for_one_policy(tmp_path: Path) -> None:
    scenario = lobbysim.load_scenario("one_visit", replications=2, **SHORT)
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump(scenario.to_dict()))
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "-q"]) == 0
    folder = lobbysim.load_run(out)
    assert folder.differences is None and folder.metrics is folder.replications
    text = repr(folder)
    assert len(text) < REPR_LIMIT and "one_visit: draw_chance, 2 replications" in text
    assert "Headline: draw_chance, mean [95% CI] over 2 replications." in text
    assert "report: report.html" in text
    page = folder._repr_html_()
    assert "<table>" in page and "<td>queue_time_mean</td>" in page
