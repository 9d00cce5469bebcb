"""The record frames of an experiment's runs, loaded once for the run report's figures.

Shared by :mod:`lobbysim.reporting.run_figures` and :mod:`lobbysim.reporting.tenure_figures`:
:class:`Frames` reads each frame of each replication once (from its file when the records were
streamed, with the schema's dtypes: :func:`lobbysim.record_files.read_records`), and
:func:`driver_on_skill_scale` says whether the driving rater's error is an RMSE.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.experiments.simulation import SimulationResult
from lobbysim.raters import RATERS
from lobbysim.record_files import read_records


def _frame(run: SimulationResult, kind: str) -> pd.DataFrame | None:
    """Return one record frame of a run, read back from its file if it was streamed."""
    frame: pd.DataFrame | None = getattr(run, kind)
    if frame is None and run.records_dir is not None:
        fmt = run.scenario.records.format
        frame = read_records(run.records_dir, [kind], fmt=fmt).get(kind)
    return frame


class Frames:
    """The record frames of every run of an experiment, loaded once."""

    def __init__(self, result: ExperimentResult) -> None:
        self._runs = result.runs
        self._cache: dict[tuple[str, int, str], pd.DataFrame | None] = {}

    def get(self, policy: str, replication: int, kind: str) -> pd.DataFrame | None:
        """Return one frame of one replication (0-based) of a policy, or None."""
        key = (policy, replication, kind)
        if key not in self._cache:
            self._cache[key] = _frame(self._runs[policy][replication], kind)
        return self._cache[key]

    def per_run(self, policy: str, *kinds: str) -> list[tuple[pd.DataFrame, ...]]:
        """Return per replication of a policy its frames of these kinds (if it has them all)."""
        out = []
        for r in range(len(self._runs.get(policy, []))):
            frames = [self.get(policy, r, kind) for kind in kinds]
            if all(f is not None for f in frames):
                out.append(tuple(f for f in frames if f is not None))
        return out

    def pooled(self, policy: str, kind: str) -> pd.DataFrame | None:
        """Return the frames of one kind of a policy's replications, concatenated."""
        frames = [f for (f,) in self.per_run(policy, kind) if not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else None


def driver_on_skill_scale(result: ExperimentResult) -> bool:
    """Return whether the driving rater's ratings live on the true-skill scale.

    Looked up in the rater registry; for a rater that cannot be looked up, whether its
    ``rating_rmse`` metric has any value.
    """
    name = result.scenario.raters.driver.name
    try:
        return bool(RATERS.get(name).skill_scale)
    except (ValueError, KeyError, AttributeError):
        column = f"{name}.rating_rmse"
        if column not in result.metrics.columns:
            return False
        return bool(np.isfinite(result.metrics[column].to_numpy(dtype=float)).any())
