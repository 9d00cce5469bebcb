"""The data of the sweep report: names, per-cell summaries, Pareto fronts and per-key summaries.

No figures and no text here (see :mod:`lobbysim.reporting.sweep_figures` and
:mod:`lobbysim.reporting.sweep`; the trade-offs' frontiers are the headline's,
:mod:`lobbysim.reporting.sweep_headline`): the frames they draw and tabulate, with every
interval from :mod:`lobbysim.stats.intervals`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.stats.intervals import INTERVAL_COLUMNS, interval_columns
from lobbysim.stats.metrics import metric_support

ID_COLUMNS = ("cell", "policy", "replication", "seed")
"""The columns of ``results`` besides the grid keys that are not metrics."""

SUMMARY_COLUMNS = INTERVAL_COLUMNS
"""The statistics :func:`summarise_cells` gives per cell, policy and metric."""

QUEUE_METRIC = "queue_time_p90"
"""The queue-time metric of the per-key panels and the "Cells" table."""

DRAW_METRIC = "draw_prob_true_mean"
"""The fairness metric of the trade-off figure when the headline has none."""

# --------------------------------------------------------------------------------------------
# Names and values


def headline_metrics(driver: str) -> tuple[str, ...]:
    """Return the metrics of the per-key panels and the "Cells" table, in order.

    Args:
        driver: the driving rater, whose ``rating_rmse`` is one of them.
    """
    return (
        QUEUE_METRIC,
        "abandonment_rate",
        DRAW_METRIC,
        f"{driver}.rating_rmse",
        "games_per_hour",
        "win_ratio_dispersion",
    )


def slug(key: str) -> str:
    """Return a file-name-safe form of a swept key: ``"matchmaker.tick"`` -> ``"matchmaker_tick"``.

    Runs of characters other than ASCII letters and digits become one ``_``; the result is
    lower-case, and ``"key"`` if nothing is left.
    """
    return re.sub(r"[^0-9A-Za-z]+", "_", key).strip("_").lower() or "key"


def by_key_files(grid_keys: Sequence[str]) -> dict[str, str]:
    """Return the per-key figure's file name of every swept key, ``by_<slug(key)>.png``.

    Keys with the same slug get ``_2``, ``_3``, ... appended in order, so no file is shared.
    """
    files: dict[str, str] = {}
    taken: set[str] = set()
    for key in grid_keys:
        base = f"by_{slug(key)}"
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        files[key] = f"{name}.png"
    return files


def format_value(value: object) -> str:
    """Return a grid value as text: numbers compactly (``0.25``, ``4``), anything else as is."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):g}"
    return str(value)


def metric_columns(results: pd.DataFrame, grid_keys: Sequence[str]) -> list[str]:
    """Return the metric columns of a sweep's results: all but the ids and the grid keys."""
    skip = {*ID_COLUMNS, *grid_keys}
    return [str(c) for c in results.columns if c not in skip]


def check_columns(frame: pd.DataFrame, grid_keys: Sequence[str], what: str) -> None:
    reserved = {*ID_COLUMNS, "metric", *SUMMARY_COLUMNS}
    clash = [k for k in grid_keys if k in reserved]
    if clash:
        raise ValueError(f"grid keys may not be named like a report column: {clash}")
    if len(set(grid_keys)) != len(grid_keys):
        raise ValueError(f"grid keys must be distinct: {list(grid_keys)}")
    missing = [c for c in ("cell", *grid_keys, "policy", "replication") if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the columns {missing}")


def policies_in(frame: pd.DataFrame) -> list[str]:
    """Return the policies of a frame in first-appearance order."""
    return [str(p) for p in dict.fromkeys(frame["policy"].tolist())]


# --------------------------------------------------------------------------------------------
# Summary and Pareto front


def summarise_cells(results: pd.DataFrame, grid_keys: Sequence[str]) -> pd.DataFrame:
    """Return per cell, policy and metric the mean over replications and its 95% interval.

    Args:
        results: one row per successful run: ``cell``, the grid keys, ``policy``,
            ``replication``, ``seed`` and the metrics (NaN where missing).
        grid_keys: the swept keys, i.e. the grid-value columns of ``results``.

    Returns:
        One row per (cell, policy, metric): ``cell``, the grid keys (the cell's values),
        ``policy``, ``metric`` and ``mean, sd, n, ci_low, ci_high`` from
        :func:`lobbysim.stats.intervals.interval` over the replications with a value, the interval
        cut
        to the metric's support (:func:`lobbysim.stats.metrics.metric_support`). Rows are
        ordered by cell number, then policy in first-appearance order in ``results``, then
        metric in the column order of ``results``.

    Raises:
        ValueError: if a required column is missing or a grid key clashes with one.
    """
    grid_keys = list(grid_keys)
    check_columns(results, grid_keys, "results")
    columns = ["cell", *grid_keys, "policy", "metric", *SUMMARY_COLUMNS]
    metrics = metric_columns(results, grid_keys)
    policies = policies_in(results)
    rows: list[dict[str, Any]] = []
    for cell, in_cell in results.groupby("cell", sort=True):
        first = in_cell.iloc[0]
        values = {key: first[key] for key in grid_keys}
        by_policy = {str(p): g for p, g in in_cell.groupby("policy", sort=False)}
        for policy in policies:
            group = by_policy.get(policy)
            if group is None:
                continue
            for metric in metrics:
                column = group[metric].to_numpy(dtype=float)
                stats = interval_columns(column, metric_support(metric))
                rows.append(
                    {"cell": int(cell), **values, "policy": policy, "metric": metric, **stats}
                )
    summary = pd.DataFrame(rows, columns=columns)
    if summary.empty:
        summary = summary.astype({"cell": "int64", "n": "int64"})
        summary = summary.astype({c: float for c in ("mean", "sd", "ci_low", "ci_high")})
    return summary


def pareto_front(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    minimize_x: bool = True,
    minimize_y: bool = True,
) -> np.ndarray:
    """Return which points ``(x[i], y[i])`` are on the Pareto front (not dominated).

    A point is dominated when another is at least as good on both coordinates and strictly
    better on one; "good" is lower unless ``minimize_x``/``minimize_y`` is False. Equal points
    do not dominate each other, so duplicates are on the front together or not at all. A point
    with a NaN coordinate is never on the front and dominates nothing. O(n log n): a sort, then
    a running minimum.

    Args:
        x: the first coordinate of each point.
        y: the second coordinate of each point (same length as ``x``).
        minimize_x: whether lower ``x`` is better (otherwise higher is).
        minimize_y: whether lower ``y`` is better (otherwise higher is).

    Returns:
        A boolean array, True for the points on the front.

    Raises:
        ValueError: if ``x`` and ``y`` are not one-dimensional of the same length.
    """
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.ndim != 1 or b.shape != a.shape:
        raise ValueError(f"x and y must be 1-d of one length, got {a.shape} and {b.shape}")
    if not minimize_x:
        a = -a
    if not minimize_y:
        b = -b
    on_front = np.zeros(a.size, dtype=bool)
    valid = np.flatnonzero(~(np.isnan(a) | np.isnan(b)))
    if valid.size == 0:
        return on_front
    order = valid[np.lexsort((b[valid], a[valid]))]  # by a, ties by b
    sa, sb = a[order], b[order]
    # The first index of each run of equal a; within a run, b ascends, so its first b is the least.
    new_run = np.r_[True, sa[1:] != sa[:-1]]
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(sa.size), 0))
    least_so_far = np.minimum.accumulate(sb)
    # A point is dominated by one with a strictly lower a iff the least b before its run is <= b;
    # by one with an equal a iff its b is not the least of the run.
    has_before = run_start > 0
    before = least_so_far[np.maximum(run_start - 1, 0)]
    dominated = (has_before & (before <= sb)) | (sb != sb[run_start])
    on_front[order] = ~dominated
    return on_front


def has_values(frame: pd.DataFrame, column: str) -> bool:
    return column in frame.columns and bool(np.isfinite(frame[column].to_numpy(dtype=float)).any())


def levels_of(column: pd.Series) -> tuple[list[Any], bool]:
    """Return a swept key's distinct values and whether they are numbers (then sorted)."""
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    values = list(dict.fromkeys(column.tolist()))
    if numeric:
        values = sorted(values)
    return values, numeric


def by_key_summary(
    results: pd.DataFrame, key: str, metric: str, policies: Sequence[str] | None = None
) -> pd.DataFrame:
    """Return per policy and value of ``key`` a metric's mean, averaged over the other keys.

    Per replication, the metric is first averaged over the cells that have this value of
    ``key`` (those of every combination of the other swept keys, NaN left out); the mean and
    95% interval are then over these per-replication averages (replications are the independent
    units: cells of one replication share its random numbers).

    Args:
        results: the sweep's per-run results.
        key: the swept key.
        metric: the metric column.
        policies: the policies, in order (default: first-appearance order in ``results``).

    Returns:
        Columns ``policy``, ``value``, ``mean, sd, n, ci_low, ci_high``; per policy the values
        in order (ascending when numeric, else first appearance).
    """
    policies = policies_in(results) if policies is None else list(policies)
    levels, _ = levels_of(results[key])
    rows: list[dict[str, Any]] = []
    for policy in policies:
        mine = results[results["policy"] == policy]
        for value in levels:
            pooled = mine[mine[key] == value]
            if pooled.empty:
                continue
            per_replication = pooled.groupby("replication", sort=True)[metric].mean()
            values = per_replication.to_numpy(dtype=float)
            stats = interval_columns(values, metric_support(metric))
            rows.append({"policy": policy, "value": value, **stats})
    return pd.DataFrame(rows, columns=["policy", "value", *SUMMARY_COLUMNS])
