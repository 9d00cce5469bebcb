"""A sweep's definition and its runs: cells, run keys, one run in a worker.

A sweep takes a scenario and a grid, field paths mapped to values
(``matchmaker.tick: [0.25, 1]``, ``arrivals.rate: [2, 4, 8]``). Every combination is a *cell*;
each cell runs for every policy and R replications, on the same replication seeds everywhere
(common random numbers: replication r of every cell and policy sees the same stream seeds).

Each run (a cell, a policy and a replication seed) is identified by the SHA-256 of its resolved
scenario (without the fields that cannot change its result: name, description, replications,
master seed and the sweep itself), its seed and :data:`lobbysim.RESULTS_VERSION` (bumped whenever
results change, so versions never mix). The store (:mod:`lobbysim.experiments.store`) keeps one
file per key, the executors (:mod:`lobbysim.experiments.executors`) run them, and the ``sweep``
command (:mod:`lobbysim.commands.sweep`) builds a sweep from a scenario file and writes its tables.
"""

from __future__ import annotations

import hashlib
import json
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim import RESULTS_VERSION
from lobbysim.registry import PluginError
from lobbysim.scenario import (
    Scenario,
    folder_label,
)

# Fields that cannot change one run's result: left out of the run's key.
NOT_IN_KEY = ("name", "description", "replications", "seed", "sweep", "compare")


class SweepError(ValueError):
    """A problem with a sweep's definition or arguments; one line per problem."""


@dataclass(frozen=True)
class Cell:
    """One combination of grid values.

    Attributes:
        number: 1-based, in the order of the Cartesian product (the last key varies fastest).
        values: the grid key paths mapped to this cell's values.
    """

    number: int
    values: Mapping[str, Any]

    def label(self) -> str:
        """Return ``key=value, ...`` for messages."""
        return ", ".join(f"{k}={table_value(v)}" for k, v in self.values.items())

    def table_values(self) -> dict[str, Any]:
        """Return the values as table cells: lists and mappings as compact text."""
        return {k: table_value(v) for k, v in self.values.items()}


def table_value(value: Any) -> Any:
    """Return a grid value as a table cell: scalars as they are, lists and mappings as text."""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, separators=(", ", ": "))
    return value


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: a cell, a policy and a replication.

    Attributes:
        key: the SHA-256 (hex) of the resolved scenario, the seed and the results version.
        cell: the cell.
        policy: the policy's name.
        replication: 1-based replication number; ``seed`` is its seed.
        scenario: the resolved scenario of this cell and policy.
        records_dir: where a scenario with ``records.stream`` writes its records.
    """

    key: str
    cell: Cell
    policy: str
    replication: int
    seed: int
    scenario: Scenario = field(repr=False)
    records_dir: Path | None = None


@dataclass(frozen=True)
class Sweep:
    """A sweep's definition, expanded into its runs."""

    base: Scenario
    grid: Mapping[str, tuple[Any, ...]]
    policies: tuple[str, ...]
    replications: int
    cells: tuple[Cell, ...]
    runs: tuple[SweepRun, ...] = field(repr=False)

    @property
    def grid_keys(self) -> list[str]:
        """Return the swept field paths, in grid order."""
        return list(self.grid)

    def definition(self) -> dict[str, Any]:
        """Return the sweep as scenario data with a ``sweep:`` section (for ``sweep.yaml``)."""
        data = self.base.to_dict()
        data["replications"] = self.replications
        data["sweep"] = {
            "grid": {k: list(v) for k, v in self.grid.items()},
            "policies": list(self.policies),
        }
        return data

    def identity(self) -> str:
        """Return the SHA-256 of the definition without the replications: a sweep folder's
        manifest holds it, so that more replications of the same sweep resume the folder."""
        data = self.definition()
        data.pop("replications")
        return digest(data)

    def folder_name(self) -> str:
        """Return ``<name>-sweep-<8 hex>``, the same for the same sweep (any replications)."""
        return f"{folder_label(self.base.name)}-sweep-{self.identity()[:8]}"


@dataclass
class SweepOutcome:
    """What one invocation of a sweep did.

    Attributes:
        folder: the sweep's folder.
        total: the sweep's runs.
        skipped: runs whose result was already there.
        ran: runs finished by this invocation.
        failed: runs that failed in this invocation (listed in ``failures``).
        results, failures: the tables written to ``results.csv`` and ``failures.csv``.
    """

    folder: Path
    total: int
    skipped: int
    ran: int
    failed: int
    results: pd.DataFrame
    failures: pd.DataFrame


def digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_key(scenario: Scenario, seed: int) -> str:
    """Return the key of one run: the hash of what determines its result."""
    data = {k: v for k, v in scenario.to_dict().items() if k not in NOT_IN_KEY}
    return digest({"scenario": data, "seed": int(seed), "results_version": RESULTS_VERSION})


def run_one(run: SweepRun) -> dict[str, float]:
    """Run one sweep run and return its metrics (in a worker process)."""
    from lobbysim.experiments.simulation import simulate

    return dict(simulate(run.scenario, run.seed, records_dir=run.records_dir).metrics)


def error_text(exc: BaseException) -> str:
    """Return what ``failures.csv`` says of a failed run: a plug-in's failure as its one line
    (it names the plug-in and the call), anything else as its traceback."""
    if isinstance(exc, PluginError):
        return str(exc)
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip()
