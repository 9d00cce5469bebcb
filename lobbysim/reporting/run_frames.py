"""What the run report's figures take of each replication of an experiment, gathered once.

Shared by :mod:`lobbysim.reporting.run_figures`, :mod:`lobbysim.reporting.tenure_figures` and
:mod:`lobbysim.reporting.region_figures`: :class:`Frames` gives, per policy, each replication's
part of a figure (:mod:`lobbysim.experiments.figure_data`). A replication of ``lobbysim run`` or
``compare`` brings its parts from its worker (its frames dropped there); of a result that kept
its record frames, the parts are computed here from them, one replication at a time (read back
from its record files when the records were streamed), and only the parts are kept, so that
the report's memory does not grow with the replications. :func:`driver_on_skill_scale` says
whether the driving rater's error is an RMSE.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lobbysim.experiments.figure_data import (
    FigureData,
    Key,
    figure_data,
    rater_on_skill_scale,
    report_keys,
)
from lobbysim.experiments.replications import ExperimentResult
from lobbysim.experiments.simulation import SimulationResult


class Frames:
    """The figures' parts of every replication of an experiment, computed once each."""

    def __init__(self, result: ExperimentResult) -> None:
        self._runs = result.runs
        self._brought = result.figure_data
        self._on_scale = driver_on_skill_scale(result)
        self._computed: dict[tuple[str, int], FigureData] = {}

    def parts(self, policy: str, key: Key) -> list[Any]:
        """Return per replication of a policy its part ``key``, None where it has none."""
        return [self._part(policy, r, run, key) for r, run in enumerate(self._runs.get(policy, []))]

    def _part(self, policy: str, replication: int, run: SimulationResult, key: Key) -> Any:
        runs = self._brought.get(policy)
        brought = runs[replication] if runs is not None else None
        if brought is not None and key in brought:
            return brought[key]
        computed = self._computed.get((policy, replication))
        if computed is None:
            # every part the report draws, from one look at the run's frames (or files)
            keys = report_keys(run.scenario, self._on_scale)
            keys = [k for k in keys if brought is None or k not in brought]
            computed = figure_data(run, [*keys, *([] if key in keys else [key])])
            self._computed[(policy, replication)] = computed
        elif key not in computed:
            computed.parts.update(figure_data(run, [key]).parts)
        return computed[key]


def driver_on_skill_scale(result: ExperimentResult) -> bool:
    """Return whether the driving rater's ratings live on the true-skill scale.

    Looked up in the rater registry; for a rater that cannot be looked up, whether its
    ``rating_rmse`` metric has any value.
    """
    name = result.scenario.raters.driver.name
    on_scale = rater_on_skill_scale(name)
    if on_scale is not None:
        return on_scale
    column = f"{name}.rating_rmse"
    if column not in result.metrics.columns:
        return False
    return bool(np.isfinite(result.metrics[column].to_numpy(dtype=float)).any())
