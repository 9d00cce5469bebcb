"""The headline of a parameter sweep: per setting of what the matchmaker does not choose, the
fairest choice, the quickest, the Pareto-efficient ones and, with both bounds, what each buys.

A sweep's grid mixes two kinds of keys. Those under ``matchmaker.`` and ``raters.``
(:data:`CHOICE_SECTIONS`) are the designer's choices, as is the policy; every other key (the
arrival rate, the player base, the game) is a *setting* the matchmaker has to live with. So the
headline compares the choices (each cell of a setting under each real policy) within each
setting, never across settings: a busier lobby is not a choice. The bounds ``uniform_random``
and ``oracle`` are references, never ranked, never on the frontier. Per setting
(:func:`build_sweep_headline`):

- the *fairest* choice, on the first fairness metric of :mod:`lobbysim.reporting.answer`'s (the
  true skill gap, else the true draw probability), and the one with the *shortest mean queue
  time*: each with its mean [95% interval] over the replications and its paired differences from
  every other choice (the cells share their replication seeds: common random numbers), as
  :func:`~lobbysim.experiments.replications.paired_differences` gives them, Benjamini-Hochberg
  adjusted over that pick's comparisons. The choices not significantly different from the best
  are named (a tie the replications cannot break), else the next best with its difference;
- the *Pareto-efficient* choices on mean queue time against fairness
  (:func:`frontier_steps`: :func:`~lobbysim.reporting.sweep_summary.pareto_front` on the means):
  those no other choice of the setting beats on both; from the shortest wait, each one's paired
  step from the previous (what the longer wait buys). The sweep report's trade-off figure draws
  these frontiers, one panel per setting (:func:`headline_tradeoffs`), and its rating figure
  the same computation against the rating error (:func:`setting_tradeoffs`);
- with ``uniform_random`` and ``oracle`` among the policies, per cell and real policy the answer
  sentence of :func:`~lobbysim.reporting.answer.answer_sentence`: the share of the oracle's gain
  over random pairing it captures and its costs.

This module computes the headline (:class:`SweepHeadline`);
:mod:`lobbysim.reporting.sweep_headline_wording` words it, for the report
(:func:`~lobbysim.reporting.sweep_headline_wording.sweep_headline_blocks`) and the terminal
(:func:`~lobbysim.reporting.sweep_headline_wording.sweep_headline_text`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.experiments.replications import ORACLE_SHARE_METRICS, paired_differences
from lobbysim.reporting.answer import BOUNDS, answer_sentence, queue_seconds, runs_answers
from lobbysim.reporting.headline import Estimate
from lobbysim.reporting.sweep_summary import format_value, pareto_front, policies_in
from lobbysim.reporting.verdicts import HIGHER_IS_BETTER, better_direction
from lobbysim.stats.intervals import FDR_LEVEL, difference_support, interval_columns
from lobbysim.stats.metrics import metric_support

CHOICE_SECTIONS = ("matchmaker.", "raters.")
"""Grid keys under these are the designer's choices; the others are settings."""

QUEUE = "queue_time_mean"
"""The queue-time metric of the headline (the wait every player pays)."""


def split_keys(grid_keys: Sequence[str]) -> tuple[list[str], list[str]]:
    """Return the grid keys that are choices (:data:`CHOICE_SECTIONS`) and those that are
    settings, each in grid order."""
    choices = [k for k in grid_keys if k.startswith(CHOICE_SECTIONS)]
    return choices, [k for k in grid_keys if k not in choices]


@dataclass(frozen=True)
class Choice:
    """One cell under one real policy, with its levels (mean [95% interval]) per metric."""

    cell: int
    policy: str
    levels: Mapping[str, Estimate]


@dataclass(frozen=True)
class Rival:
    """Another choice against the best: its paired difference (rival minus best)."""

    choice: Choice
    difference: Estimate
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return math.isfinite(self.p_adjusted) and self.p_adjusted < FDR_LEVEL


@dataclass(frozen=True)
class Pick:
    """The best choice on one metric and every other choice against it, closest first."""

    metric: str
    best: Choice
    rivals: tuple[Rival, ...]

    @property
    def tied(self) -> tuple[Rival, ...]:
        """The rivals not significantly different from the best (with a test)."""
        return tuple(r for r in self.rivals if math.isfinite(r.p_adjusted) and not r.significant)


@dataclass(frozen=True)
class Step:
    """A frontier point with its paired step from the previous one (None for the first)."""

    choice: Choice
    queue: Estimate | None
    fairness: Estimate | None


@dataclass(frozen=True)
class Setting:
    """The headline of one setting: its values, cells, picks, frontier and answers."""

    values: Mapping[str, Any]
    cells: tuple[int, ...]
    choices: tuple[Choice, ...]
    picks: tuple[Pick, ...]
    frontier: tuple[Step, ...]
    #: (cell, policy, sentence), per cell and real policy (with both bounds in the sweep).
    answers: tuple[tuple[int, str, str], ...] = ()


@dataclass(frozen=True)
class SweepHeadline:
    """The headline of a sweep (see the module docstring)."""

    fairness: str | None
    choice_keys: tuple[str, ...]
    setting_keys: tuple[str, ...]
    policies: tuple[str, ...]
    replications: tuple[int, int]
    #: The choice keys' values of each cell, as text, in the order of ``choice_keys``.
    cell_values: Mapping[int, tuple[str, ...]]
    settings: tuple[Setting, ...]
    #: The sweep's one unit of queue time: seconds when every run's mean wait is under two
    #: minutes (:func:`~lobbysim.reporting.answer.queue_seconds`), as its figures draw them.
    seconds: bool = True


# --------------------------------------------------------------------------------------------
# Numbers


def _levels(values: Mapping[str, np.ndarray]) -> dict[str, Estimate]:
    out = {}
    for metric, column in values.items():
        stats = interval_columns(column, metric_support(metric))
        out[metric] = Estimate(
            float(stats["mean"]), float(stats["ci_low"]), float(stats["ci_high"])
        )
    return out


def _sign(metric: str) -> float:
    """+1 where higher is better, -1 where lower is."""
    return 1.0 if better_direction(metric) == HIGHER_IS_BETTER else -1.0


def _pick(metric: str, choices: Sequence[Choice], runs: pd.DataFrame) -> Pick | None:
    """Return the best choice on ``metric`` with its paired differences from the others."""
    usable = [c for c in choices if math.isfinite(c.levels[metric].mean)]
    if not usable:
        return None
    sign = _sign(metric)
    best = max(usable, key=lambda c: sign * c.levels[metric].mean)  # the first on ties
    ids = {f"{c.cell}|{c.policy}": c for c in usable}
    frame = runs.assign(policy=runs["cell"].astype(str) + "|" + runs["policy"].astype(str))
    frame = frame[frame["policy"].isin(list(ids))][["policy", "replication", metric]]
    rivals = []
    if len(usable) > 1:
        differences = paired_differences(frame, f"{best.cell}|{best.policy}")
        for _, row in differences.iterrows():
            estimate = Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            rivals.append(Rival(ids[str(row["policy"])], estimate, float(row["p_adjusted"])))
    # closest to the best first (then in cell and policy order)
    rivals.sort(key=lambda r: -sign * (r.choice.levels[metric].mean - best.levels[metric].mean))
    return Pick(metric, best, tuple(rivals))


def _step(before: pd.DataFrame, after: pd.DataFrame, metric: str) -> Estimate:
    """Return the paired difference ``after - before`` over the replications both have."""
    diff = (after[metric] - before[metric]).to_numpy(dtype=float)
    stats = interval_columns(diff, difference_support(metric_support(metric)))
    return Estimate(float(stats["mean"]), float(stats["ci_low"]), float(stats["ci_high"]))


def frontier_steps(
    choices: Sequence[Choice], y: str, by_run: Mapping[tuple[int, str], pd.DataFrame]
) -> tuple[Step, ...]:
    """Return the Pareto-efficient choices on mean queue time (:data:`QUEUE`) against ``y``,
    from the shortest mean queue time, each with its paired step from the one before.

    The choices need the levels of both metrics; ``by_run`` is each (cell, policy)'s runs
    indexed by replication (:func:`runs_by_choice`). The headline's frontier is this with ``y``
    its fairness metric; the sweep report's figures draw these very steps."""
    usable = [
        c
        for c in choices
        if math.isfinite(c.levels[QUEUE].mean) and math.isfinite(c.levels[y].mean)
    ]
    on_front = pareto_front(
        [c.levels[QUEUE].mean for c in usable],
        [c.levels[y].mean for c in usable],
        minimize_y=better_direction(y) != HIGHER_IS_BETTER,
    )
    front = [c for c, on in zip(usable, on_front, strict=True) if on]
    front.sort(key=lambda c: (c.levels[QUEUE].mean, -_sign(y) * c.levels[y].mean))
    steps = []
    for k, choice in enumerate(front):
        if k == 0:
            steps.append(Step(choice, None, None))
            continue
        before = by_run[(front[k - 1].cell, front[k - 1].policy)]
        after = by_run[(choice.cell, choice.policy)]
        steps.append(Step(choice, _step(before, after, QUEUE), _step(before, after, y)))
    return tuple(steps)


def _answers(
    runs: pd.DataFrame,
    cells: Sequence[int],
    policies: Sequence[str],
    ticks: Mapping[int, float | None],
) -> tuple[tuple[int, str, str], ...]:
    """Return per cell and real policy its answer sentence (with both bounds in the cell);
    ``ticks``: each cell's pass interval, whence the queue times on its pass grid, never
    quoted."""
    out = []
    for cell in cells:
        mine = runs[runs["cell"] == cell]
        present = [p for p in policies if p in set(mine["policy"])]
        for answer in runs_answers(mine, present, tick=ticks.get(cell)):
            out.append((cell, answer.policy, answer_sentence(answer)))
    return tuple(out)


TICK_KEY = "matchmaker.tick"
"""The grid key of the pass interval: where it is swept, each cell's own."""


def _ticks(
    firsts: pd.DataFrame, grid_keys: Sequence[str], tick: float | None
) -> dict[int, float | None]:
    """Return each cell's pass interval: its value of :data:`TICK_KEY` where that is swept,
    else ``tick`` (the scenario's)."""
    out: dict[int, float | None] = {}
    for _, row in firsts.iterrows():
        value = row[TICK_KEY] if TICK_KEY in grid_keys else tick
        number = (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
        out[int(row["cell"])] = number if number is not None and math.isfinite(number) else None
    return out


def _grouped(firsts: pd.DataFrame, keys: Sequence[str]) -> dict[tuple[str, ...], list[int]]:
    """Return the cells per combination of the values of ``keys`` (as text), in cell order."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for _, row in firsts.iterrows():
        values = tuple(format_value(row[k]) for k in keys)
        groups.setdefault(values, []).append(int(row["cell"]))
    return groups


def runs_by_choice(results: pd.DataFrame) -> dict[tuple[int, str], pd.DataFrame]:
    """Return each (cell, policy)'s runs, indexed by replication."""
    return {
        (int(cell), str(policy)): group.set_index("replication")
        for (cell, policy), group in results.groupby(["cell", "policy"], sort=False)
    }


@dataclass(frozen=True)
class Group:
    """One setting's cells and its choices (real policies only) with their levels."""

    values: Mapping[str, Any]
    cells: tuple[int, ...]
    choices: tuple[Choice, ...]


def setting_groups(
    results: pd.DataFrame,
    grid_keys: Sequence[str],
    metrics: Sequence[str],
    by_run: Mapping[tuple[int, str], pd.DataFrame] | None = None,
) -> tuple[Group, ...]:
    """Return per setting (each combination of the values of the keys that are not choices,
    :func:`split_keys`) its cells and its choices: each cell under each real policy (not the
    bounds), with the levels of ``metrics`` (those in ``results``)."""
    _, setting_keys = split_keys(grid_keys)
    if results.empty:
        return ()
    by_run = runs_by_choice(results) if by_run is None else by_run
    real = [p for p in policies_in(results) if p not in BOUNDS]
    metrics = [m for m in metrics if m in results.columns]
    firsts = results.drop_duplicates("cell").sort_values("cell", kind="stable")
    groups = []
    for values, cells in _grouped(firsts, setting_keys).items():
        choices = []
        for cell in cells:
            for policy in real:
                group = by_run.get((cell, policy))
                if group is not None:
                    columns = {m: group[m].to_numpy(dtype=float) for m in metrics}
                    choices.append(Choice(cell, policy, _levels(columns)))
        groups.append(
            Group(dict(zip(setting_keys, values, strict=True)), tuple(cells), tuple(choices))
        )
    return tuple(groups)


@dataclass(frozen=True)
class Tradeoff:
    """One setting's choices and its frontier on mean queue time against ``metric``."""

    metric: str
    group: Group
    frontier: tuple[Step, ...]


def setting_tradeoffs(
    results: pd.DataFrame, grid_keys: Sequence[str], metric: str
) -> tuple[Tradeoff, ...]:
    """Return per setting its choices and their frontier on mean queue time against ``metric``
    (:func:`frontier_steps`, as the headline computes its own against fairness), for a
    metric the headline does not state (the driving rater's rating error); none where no run
    has both metrics."""
    if results.empty or QUEUE not in results.columns or metric not in results.columns:
        return ()
    by_run = runs_by_choice(results)
    return tuple(
        Tradeoff(metric, group, frontier_steps(group.choices, metric, by_run))
        for group in setting_groups(results, grid_keys, (metric, QUEUE), by_run)
    )


def headline_tradeoffs(headline: SweepHeadline) -> tuple[Tradeoff, ...]:
    """Return the headline's own frontiers per setting, as :class:`Tradeoff` values (the sweep
    report's trade-off figure draws these: the frontier the headline states)."""
    if headline.fairness is None:
        return ()
    return tuple(
        Tradeoff(
            headline.fairness,
            Group(setting.values, setting.cells, setting.choices),
            setting.frontier,
        )
        for setting in headline.settings
    )


def build_sweep_headline(
    results: pd.DataFrame, grid_keys: Sequence[str], *, tick: float | None = None
) -> SweepHeadline:
    """Return the headline of a sweep from its per-run results.

    Args:
        results: one row per successful run: ``cell``, the grid keys, ``policy``,
            ``replication``, ``seed`` (optional) and the metrics; replication r of every cell and
            policy ran on the same seeds (common random numbers), so differences pair on it.
        grid_keys: the swept keys, in grid order.
        tick: the scenario's pass interval (minutes), where ``matchmaker.tick`` is not swept
            (swept, each cell's own): a cell's answer quotes no queue time on its pass grid.
    """
    choice_keys, setting_keys = split_keys(grid_keys)
    policies = policies_in(results) if not results.empty else []
    fairness = next(
        (m for m in ORACLE_SHARE_METRICS if m in results.columns and results[m].notna().any()),
        None,
    )
    metrics = [m for m in (fairness, QUEUE) if m is not None and m in results.columns]
    sizes = results.groupby(["cell", "policy"]).size() if not results.empty else pd.Series([0])
    replications = (int(sizes.min()), int(sizes.max()))
    firsts = results.drop_duplicates("cell").sort_values("cell", kind="stable")
    cell_values = {
        int(row["cell"]): tuple(format_value(row[k]) for k in choice_keys)
        for _, row in firsts.iterrows()
    }
    by_run = runs_by_choice(results) if not results.empty else {}
    ticks = _ticks(firsts, grid_keys, tick) if not results.empty else {}
    settings = []
    for group in setting_groups(results, grid_keys, metrics, by_run):
        cells, choices = group.cells, group.choices
        runs = results[results["cell"].isin(cells)]
        picks = [_pick(m, choices, runs) for m in metrics]
        frontier = (
            frontier_steps(choices, fairness, by_run)
            if fairness is not None and QUEUE in metrics
            else ()
        )
        said = _answers(runs, cells, policies, ticks) if replications[1] >= 2 else ()
        settings.append(
            Setting(
                group.values,
                tuple(cells),
                tuple(choices),
                tuple(p for p in picks if p is not None),
                frontier,
                said,
            )
        )
    return SweepHeadline(
        fairness,
        tuple(choice_keys),
        tuple(setting_keys),
        tuple(policies),
        replications,
        cell_values,
        tuple(settings),
        queue_seconds(results) if not results.empty else True,
    )
