"""A tuning study's trials: a candidate setting with what its replications gave, its estimates
with their 95% intervals, and whether it is feasible, with confidence.

**Feasible with confidence.** A trial is feasible when the pessimistic end of each constraint's
95% interval over its replications keeps it (the upper end for ``<=``); the best trial is the
feasible trial with ``most`` replications and the best mean objective. The optimiser is told the
mean objective and each constraint's mean violation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from lobbysim.tuning.space import Space

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """A mean with its 95% interval over replications (NaN ends with fewer than 2)."""

    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Interval:
        x = np.asarray(values, dtype=float)
        x = x[np.isfinite(x)]
        n = len(x)
        if n == 0:
            return cls(math.nan, math.nan, math.nan, 0)
        mean = float(x.mean())
        if n < 2:
            return cls(mean, math.nan, math.nan, n)
        half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
        return cls(mean, mean - half, mean + half, n)


@dataclass
class Trial:
    """One candidate setting and what its replications gave.

    Attributes:
        number: 1-based, in the order the optimiser proposed it.
        drawn: the searched dimensions' values (by name).
        values: the scenario fields it sets (path -> value).
        runs: per replication (1-based) its metrics, for the replications run.
        error: why the candidate could not run (an invalid scenario, a failed run), or None.
        promoted: whether it earned ``most`` replications.
    """

    number: int
    drawn: dict[str, Any]
    values: dict[str, Any]
    runs: dict[int, dict[str, float]] = field(default_factory=dict)
    error: str | None = None
    promoted: bool = False

    def metric(self, name: str) -> list[float]:
        return [float(self.runs[r].get(name, math.nan)) for r in sorted(self.runs)]

    def estimate(self, name: str) -> Interval:
        return Interval.of(self.metric(name))


def feasible(space: Space, trial: Trial, optimistic: bool = False) -> bool:
    """Whether every constraint holds at the pessimistic (or optimistic) end of its interval."""
    if trial.error is not None or not trial.runs:
        return False
    for c in space.constraints:
        e = trial.estimate(c.metric)
        if e.n < 2:
            return False
        end = (
            (e.low if optimistic else e.high) if c.op == "<=" else (e.high if optimistic else e.low)
        )
        if not math.isfinite(end) or c.violation(end) > 0:
            return False
    return True


def violation(space: Space, trial: Trial) -> float:
    """Return the summed pessimistic violations, each relative to its bound's size."""
    total = 0.0
    for c in space.constraints:
        e = trial.estimate(c.metric)
        end = e.high if c.op == "<=" else e.low
        if not math.isfinite(end):
            return math.inf
        total += max(0.0, c.violation(end)) / max(abs(c.bound), 1e-12)
    return total


def progress_line(
    space: Space, trials: Sequence[Trial], best: Trial | None, runs: int | None = None
) -> str:
    """Return ``trials 8/24: best so far ... (trial 5); feasible 5 of 8`` (with ``runs``:
    ``tune: trials 8, 20 of 36 simulations: ...``, the search's spend of its budget)."""
    done = len(trials)
    ok = sum(feasible(space, t) for t in trials)
    head = f"tune: trials {done}/{space.trials}"
    if runs is not None:
        head = f"tune: trials {done}, {runs} of {space.search_budget} simulations"
    if best is None:
        return f"{head}: no feasible trial yet; feasible {ok} of {done}"
    e = best.estimate(space.objective)
    return (
        f"{head}: best so far {space.objective} {e.mean:.4g} (trial {best.number}); "
        f"feasible {ok} of {done}"
    )


def trials_table(space: Space, trials: Sequence[Trial]) -> pd.DataFrame:
    """Return one row per trial: its settings, replications, objective and constraints."""
    rows = []
    for t in trials:
        row: dict[str, Any] = {"trial": t.number}
        for name in space.names():
            value = t.drawn.get(name)
            row[name] = json.dumps(value) if isinstance(value, list | dict) else value
        row["replications"] = len(t.runs)
        row["promoted"] = t.promoted
        e = t.estimate(space.objective)
        row[space.objective] = e.mean
        row[f"{space.objective}_low"] = e.low
        row[f"{space.objective}_high"] = e.high
        for c in space.constraints:
            ce = t.estimate(c.metric)
            if c.metric != space.objective:
                row[c.metric] = ce.mean
            row[f"{c.metric}_{'high' if c.op == '<=' else 'low'}"] = (
                ce.high if c.op == "<=" else ce.low
            )
        row["feasible"] = feasible(space, t)
        row["error"] = t.error or ""
        rows.append(row)
    return pd.DataFrame(rows)
