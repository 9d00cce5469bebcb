"""Experiments: one replication, replications of policies on common random numbers, sweeps.

* :mod:`~lobbysim.experiments.simulation`: :func:`simulate` runs one replication of a scenario
  and returns its record frames and metrics (or streams the records to files, CSV by default or
  Parquet: :mod:`lobbysim.records.files`).
* :mod:`~lobbysim.experiments.replications`: :func:`run_experiment` runs R replications of each
  policy on the same seeds; summaries and paired differences with intervals.
* :mod:`~lobbysim.experiments.sweeps`, :mod:`~lobbysim.experiments.store` and
  :mod:`~lobbysim.experiments.executors`: a grid of settings, its run keys, the loss-free store
  of finished runs and the local or Dask executors that run them.

Layers (docs/architecture.md): experiments use the engines (:mod:`lobbysim.sim`) and the model,
never the reports or the commands above them.
"""

from lobbysim.experiments.replications import (
    ExperimentResult,
    paired_differences,
    replication_seeds,
    run_experiment,
    summarise,
)
from lobbysim.experiments.simulation import SimulationResult, simulate

__all__ = [
    "ExperimentResult",
    "SimulationResult",
    "paired_differences",
    "replication_seeds",
    "run_experiment",
    "simulate",
    "summarise",
]
