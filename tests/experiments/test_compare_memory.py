"""``compare`` in bounded memory: a replication keeps its metrics and what the report draws of it.

Once a replication has run and its records are written, ``lobbysim run`` and ``compare``
(:func:`lobbysim.commands.run.run`) keep of it only its metrics and, for the report, the small
parts its figures take of it (:mod:`lobbysim.experiments.figure_data`), computed in its worker:
not its record frames, so that a comparison's memory does not grow with its replications. The
parts are those the report computes from the frames of a result that kept them.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.commands.run import run
from lobbysim.experiments.figure_data import FigureData, report_keys
from lobbysim.experiments.replications import ExperimentResult, run_experiment
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS
from lobbysim.reporting.run_frames import Frames
from lobbysim.scenario import Scenario
from lobbysim.scenario.loading import load_run_scenario
from lobbysim.scenario.specs import record_folders

POLICIES = ["draw_chance", "uniform_random"]
#: quickstart (a base of members with their ratings, newcomers) cut down to a fraction of a second
SETS = [
    "base.size=200",
    "base.newcomers_per_day=30",
    "horizon=240",
    "warmup=120",
    "records.ratings_every=60",
]


def _frames(result: ExperimentResult, policy: str, r: int) -> list[str]:
    """Return the record kinds whose frames replication ``r`` of ``policy`` holds."""
    return [k for k in RECORD_COLUMNS if getattr(result.runs[policy][r], k) is not None]


def _pickled(value: Any) -> int:
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _compare(out: Path, replications: int, *sets: str) -> ExperimentResult:
    """Run ``lobbysim compare quickstart`` (no report) into ``out``."""
    _, result = run(
        "quickstart",
        replications=replications,
        policies=POLICIES,
        out=out,
        sets=[*SETS, *sets],
        report=False,
    )
    return result


def test_streamed_replications_keep_no_record_frames(tmp_path: Path) -> None:
    """Every replication's records are in the folder; the result holds none of their frames,
    and what it holds of a replication is a small share of what its frames would be."""
    out = tmp_path / "compare"
    result = _compare(out, 2, "records.stream=true")
    for policy, folder in record_folders(POLICIES).items():
        assert len(result.runs[policy]) == 2
        for r, one in enumerate(result.runs[policy]):
            assert _frames(result, policy, r) == []
            assert one.metrics  # what the summary is made of
            frames = read_records(out / "records" / folder / f"rep-{r + 1}")
            assert set(frames) == set(RECORD_COLUMNS) and len(frames["games"]) > 20
            assert _pickled(one) < _pickled(frames) / 5, (policy, r)


def test_in_memory_records_keep_the_first_replications_frames_only(tmp_path: Path) -> None:
    """Without streamed records, the first replication's frames are the folder's records; the
    others' are dropped in their workers."""
    out = tmp_path / "compare"
    result = _compare(out, 2)
    for policy, folder in record_folders(POLICIES).items():
        assert _frames(result, policy, 0) == list(RECORD_COLUMNS)
        assert _frames(result, policy, 1) == []
        assert (out / "records" / folder / "games.csv").exists()
    assert result.figure_data == {}  # no report: no figure data either


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_run_scenario("quickstart", SETS)


def test_the_figure_data_of_a_streamed_replication_is_small(tmp_path: Path) -> None:
    """With the report (keep="report"), each replication brings the parts of its report's
    figures from its worker, a fraction of its frames."""
    streamed = load_run_scenario("quickstart", [*SETS, "records.stream=true"])
    result = run_experiment(streamed, POLICIES, 2, records_root=tmp_path, keep="report")
    for policy in POLICIES:
        for r, one in enumerate(result.runs[policy]):
            assert _frames(result, policy, r) == []
            data = result.figure_data[policy][r]
            assert isinstance(data, FigureData)
            assert list(data.parts) == report_keys(one.scenario, True)
            assert one.records_dir is not None
            frames = read_records(one.records_dir)
            size = sum(int(f.memory_usage(deep=True).sum()) for f in frames.values())
            assert 0 < data.nbytes < size / 4, (policy, r, data.nbytes, size)


def test_a_report_of_streamed_records_keeps_their_parts_not_their_frames(tmp_path: Path) -> None:
    """A result whose replications streamed their records and brought no figure data (the
    API's): the report reads each replication's records back once, for its parts, and keeps
    the parts only, not every replication's frames."""
    streamed = load_run_scenario("quickstart", [*SETS, "records.stream=true"])
    result = run_experiment(streamed, POLICIES, 2, records_root=tmp_path)
    assert result.figure_data == {}
    frames = Frames(result)
    for policy in POLICIES:
        for key in report_keys(streamed, True):
            assert all(p is not None for p in frames.parts(policy, key)), (policy, key)
    records = 0
    for policy in POLICIES:
        for one in result.runs[policy]:
            assert one.records_dir is not None
            records += _pickled(read_records(one.records_dir))
    assert _pickled(frames) < records / 4, (_pickled(frames), records)


def _same(a: Any, b: Any) -> bool:
    """Whether two parts are equal, NaN for NaN."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    if isinstance(a, pd.Series | pd.DataFrame):
        return bool(a.equals(b))
    return bool(a == b)


@pytest.mark.slow
def test_the_workers_parts_are_those_the_report_computes_from_the_frames(
    scenario: Scenario,
) -> None:
    """keep="report" (what compare does) draws from the very parts a result that kept its frames
    (keep="frames", the API's default) gives the report: the same figures."""
    kept = run_experiment(scenario, POLICIES, 2, keep="frames")
    lean = run_experiment(scenario, POLICIES, 2, keep="report")
    assert kept.figure_data == {} and _frames(lean, POLICIES[1], 1) == []
    from_frames, brought = Frames(kept), Frames(lean)
    keys = report_keys(scenario, True)
    assert ("convergence", "bayesian") in keys  # a base: the convergence curve too
    for policy in POLICIES:
        for key in keys:
            a, b = from_frames.parts(policy, key), brought.parts(policy, key)
            assert len(a) == len(b) == 2 and all(x is not None for x in a), (policy, key)
            assert all(_same(x, y) for x, y in zip(a, b, strict=True)), (policy, key)
