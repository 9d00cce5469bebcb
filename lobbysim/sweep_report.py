"""The report of a parameter sweep: where the trade-offs lie across a grid of settings.

Reporting only: this module runs no simulation. A sweep runs a scenario for every combination of
some swept settings (a *cell*, e.g. ``matchmaker.tick`` = 0.25 and ``arrivals.rate`` = 4) under
several matchmaking policies, R replications per cell and policy on common random numbers. From
its per-run metrics (``results``, one row per successful run) and its failed runs
(``failures``), :func:`write_sweep_report` writes into a folder

- ``cells.csv``: per cell, policy and metric, the mean over replications with a 95% Student-t
  interval (:func:`summarise_cells`);
- ``tradeoff_draw.png``: every (cell, policy) as a point of p90 queue time (lower is better)
  against the mean true draw probability (higher is better), with 95% intervals both ways and
  the Pareto frontier (:func:`pareto_front`): the settings that no other setting beats on both
  at once. Waiting longer buys more even matches; the frontier shows the best price available;
- ``tradeoff_rating.png``: the same against the driving rater's rating RMSE (lower is better),
  when that rater has one;
- ``by_<key>.png`` per swept key: small panels of the headline metrics against that key's
  values, one line per policy, the other swept keys averaged over;
- ``report.md`` and ``report.html``: the set-up, the two trade-offs with a plain-language list
  of the frontier points, the per-key figures, a table of every cell's headline metrics and the
  failed runs. Both are rendered from one list of content blocks with the renderers of
  :mod:`lobbysim.report`, and depend only on the input: the same input gives the same bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lobbysim.experiment import CONFIDENCE, interval
from lobbysim.paper_report.figures import policy_colours
from lobbysim.report import (
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    Block,
    FigureOutcome,
    better_direction,
    format_interval,
    md_heading,
    md_table,
    md_text,
    metric_meaning,
    render_html,
    render_markdown,
    save_figure,
)

ID_COLUMNS = ("cell", "policy", "replication", "seed")
"""The columns of ``results`` besides the grid keys that are not metrics."""

SUMMARY_COLUMNS = ("mean", "sd", "n", "ci_low", "ci_high")
"""The statistics :func:`summarise_cells` gives per cell, policy and metric."""

CELLS_FILE = "cells.csv"
TRADEOFF_DRAW_FILE = "tradeoff_draw.png"
TRADEOFF_RATING_FILE = "tradeoff_rating.png"
MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"

QUEUE_METRIC = "queue_time_p90"
"""The x axis of both trade-off figures."""

DRAW_METRIC = "draw_prob_true_mean"
"""The y axis of ``tradeoff_draw.png``."""

MAX_LABELLED_CELLS = 12
"""Up to this many cells, the trade-off figures map cell numbers to grid values in a legend."""

MAX_ERROR_CHARS = 300
"""Longest error text shown per failed run (its last line, cut from the left beyond this)."""

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


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


def _check_columns(frame: pd.DataFrame, grid_keys: Sequence[str], what: str) -> None:
    reserved = {*ID_COLUMNS, "metric", *SUMMARY_COLUMNS}
    clash = [k for k in grid_keys if k in reserved]
    if clash:
        raise ValueError(f"grid keys may not be named like a report column: {clash}")
    if len(set(grid_keys)) != len(grid_keys):
        raise ValueError(f"grid keys must be distinct: {list(grid_keys)}")
    missing = [c for c in ("cell", *grid_keys, "policy", "replication") if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the columns {missing}")


def _policies(frame: pd.DataFrame) -> list[str]:
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
        :func:`lobbysim.experiment.interval` over the replications with a value. Rows are
        ordered by cell number, then policy in first-appearance order in ``results``, then
        metric in the column order of ``results``.

    Raises:
        ValueError: if a required column is missing or a grid key clashes with one.
    """
    grid_keys = list(grid_keys)
    _check_columns(results, grid_keys, "results")
    columns = ["cell", *grid_keys, "policy", "metric", *SUMMARY_COLUMNS]
    metrics = metric_columns(results, grid_keys)
    policies = _policies(results)
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
                mean, sd, n, low, high = interval(group[metric].to_numpy(dtype=float))
                rows.append(
                    {
                        "cell": int(cell),
                        **values,
                        "policy": policy,
                        "metric": metric,
                        "mean": mean,
                        "sd": sd,
                        "n": n,
                        "ci_low": low,
                        "ci_high": high,
                    }
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


# --------------------------------------------------------------------------------------------
# Points of the trade-off figures


def _points(summary: pd.DataFrame, grid_keys: Sequence[str], x: str, y: str) -> pd.DataFrame:
    """Return per (cell, policy) the x and y statistics, with ``on_front`` (both means finite).

    Columns: ``cell``, the grid keys, ``policy``, ``x_mean, x_low, x_high, y_mean, y_low,
    y_high`` and ``on_front``; rows in the order of ``summary``, without the points whose x or y
    mean is NaN.
    """
    keep = ["cell", *grid_keys, "policy"]
    stats = ["mean", "ci_low", "ci_high"]
    xs = summary.loc[summary["metric"] == x, [*keep, *stats]]
    ys = summary.loc[summary["metric"] == y, ["cell", "policy", *stats]]
    xs = xs.rename(columns={"mean": "x_mean", "ci_low": "x_low", "ci_high": "x_high"})
    ys = ys.rename(columns={"mean": "y_mean", "ci_low": "y_low", "ci_high": "y_high"})
    points = xs.merge(ys, on=["cell", "policy"], how="inner", sort=False)
    points = points[np.isfinite(points["x_mean"]) & np.isfinite(points["y_mean"])]
    points = points.reset_index(drop=True)
    points["on_front"] = pareto_front(
        points["x_mean"].to_numpy(dtype=float),
        points["y_mean"].to_numpy(dtype=float),
        minimize_x=better_direction(x) != HIGHER_IS_BETTER,
        minimize_y=better_direction(y) != HIGHER_IS_BETTER,
    )
    return points


def _frontier(points: pd.DataFrame, y: str) -> pd.DataFrame:
    """Return the frontier points from the best x to the best y (cell and policy break ties)."""
    front = points[points["on_front"]]
    y_key = -front["y_mean"] if better_direction(y) == HIGHER_IS_BETTER else front["y_mean"]
    ordered = front.assign(_y=y_key, _rank=np.arange(len(front)))
    ordered = ordered.sort_values(["x_mean", "_y", "_rank"], kind="stable")
    return ordered.drop(columns=["_y", "_rank"])


def _cell_descriptions(frame: pd.DataFrame, grid_keys: Sequence[str]) -> dict[int, str]:
    """Return per cell number its grid values as ``"key=value, ..."`` (in cell order)."""
    if frame.empty:
        return {}
    firsts = frame.drop_duplicates("cell").sort_values("cell", kind="stable")
    return {
        int(row["cell"]): ", ".join(f"{k}={format_value(row[k])}" for k in grid_keys) or "-"
        for _, row in firsts.iterrows()
    }


# --------------------------------------------------------------------------------------------
# Figures


def _title(text: str, scenario_line: str) -> str:
    return f"{text}\n{scenario_line}" if scenario_line else text


def _axis_label(metric: str, driver: str) -> str:
    labels = {
        QUEUE_METRIC: "90th percentile queue time (minutes)",
        DRAW_METRIC: "mean true draw probability",
        "abandonment_rate": "abandonment rate",
        "games_per_hour": "games per hour",
        "win_ratio_dispersion": "mean |win ratio - 0.5|",
        f"{driver}.rating_rmse": f"{driver} rating RMSE",
    }
    label = labels.get(metric, metric)
    direction = better_direction(metric)
    if direction in (LOWER_IS_BETTER, HIGHER_IS_BETTER):
        label += f"\n({direction} is better)"
    return label


def _error_bars(ax: Axes, points: pd.DataFrame, colour: str) -> None:
    """Draw the x and y 95% intervals of the points that have them."""
    for axis in ("x", "y"):
        low = points[f"{axis}_low"].to_numpy(dtype=float)
        high = points[f"{axis}_high"].to_numpy(dtype=float)
        mean = points[f"{axis}_mean"].to_numpy(dtype=float)
        has = np.isfinite(low) & np.isfinite(high)
        if not has.any():
            continue
        err = np.vstack([mean[has] - low[has], high[has] - mean[has]])
        ax.errorbar(
            points["x_mean"].to_numpy(dtype=float)[has],
            points["y_mean"].to_numpy(dtype=float)[has],
            xerr=err if axis == "x" else None,
            yerr=err if axis == "y" else None,
            fmt="none",
            ecolor=colour,
            elinewidth=0.9,
            capsize=2.5,
            alpha=0.6,
            zorder=2,
        )


def _tradeoff_figure(
    points: pd.DataFrame,
    *,
    y: str,
    file: str,
    title: str,
    caption: str,
    out_dir: Path,
    driver: str,
    policies: Sequence[str],
    cells: dict[int, str],
    scenario_line: str,
) -> FigureOutcome:
    """Draw one trade-off figure of the points of :func:`_points`."""
    colours = policy_colours(policies)
    fig = Figure(figsize=(9.0, 6.0), layout="constrained")
    ax = fig.add_subplot()
    handles: list[Any] = []
    for k, policy in enumerate(policies):
        mine = points[points["policy"] == policy]
        if mine.empty:
            continue
        colour, marker = colours[policy], _MARKERS[k % len(_MARKERS)]
        _error_bars(ax, mine, colour)
        ax.plot(
            mine["x_mean"].to_numpy(dtype=float),
            mine["y_mean"].to_numpy(dtype=float),
            linestyle="none",
            marker=marker,
            markersize=6,
            color=colour,
            zorder=3,
        )
        for _, row in mine.iterrows():
            ax.annotate(
                str(int(row["cell"])),
                (float(row["x_mean"]), float(row["y_mean"])),
                xytext=(5, 4),
                textcoords="offset points",
                fontsize="x-small",
                fontweight="bold" if bool(row["on_front"]) else "normal",
                color=colour,
                zorder=5,
            )
        handles.append(Line2D([], [], linestyle="none", marker=marker, color=colour, label=policy))

    front = _frontier(points, y)
    fx = front["x_mean"].to_numpy(dtype=float)
    fy = front["y_mean"].to_numpy(dtype=float)
    right = float(points["x_mean"].max())
    if fx.size and right > fx[-1]:
        fx, fy = np.r_[fx, right], np.r_[fy, fy[-1]]
    ax.step(fx, fy, where="post", color="black", linestyle="--", linewidth=1.2, zorder=1)
    ax.plot(
        front["x_mean"].to_numpy(dtype=float),
        front["y_mean"].to_numpy(dtype=float),
        linestyle="none",
        marker="o",
        markersize=13,
        markerfacecolor="none",
        markeredgecolor="black",
        markeredgewidth=1.4,
        zorder=4,
    )
    handles += [
        Line2D([], [], color="black", linestyle="--", linewidth=1.2, label="Pareto frontier"),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=10,
            markerfacecolor="none",
            markeredgecolor="black",
            label="on the frontier",
        ),
    ]
    ax.set_xlabel(_axis_label(QUEUE_METRIC, driver))
    ax.set_ylabel(_axis_label(y, driver))
    ax.set_title(_title(title, scenario_line))
    ax.grid(True, alpha=0.3)
    ax.margins(0.08)
    ax.legend(handles=handles, fontsize="small", loc="best")
    shown = sorted({int(c) for c in points["cell"]})
    if len(shown) <= MAX_LABELLED_CELLS:
        labels = [Line2D([], [], linestyle="none", label=f"{c}: {cells.get(c, '')}") for c in shown]
        fig.legend(
            handles=labels,
            title="cells",
            fontsize="x-small",
            title_fontsize="small",
            handlelength=0,
            handletextpad=0,
            loc="outside lower center",
            ncols=2 if len(shown) > 3 else 1,
        )
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


_TRADEOFF_CAPTION = (
    "One point per cell and policy: the mean over replications, with {confidence:.0%} "
    "confidence intervals in both directions (none with a single replication); the numbers are "
    "cell numbers{mapping}. Ringed points are on the Pareto frontier (dashed step line): no other "
    "point has {better_x} and {better_y}, both at least as good and one strictly better. Bold "
    "numbers mark frontier points."
)


def _tradeoff_caption(y_words: str, cells: int) -> str:
    mapping = (
        " (the legend below gives their grid values)"
        if cells <= MAX_LABELLED_CELLS
        else " (the Cells table gives their grid values)"
    )
    return _TRADEOFF_CAPTION.format(
        confidence=CONFIDENCE,
        mapping=mapping,
        better_x="a p90 queue time as short",
        better_y=y_words,
    )


def _has_values(frame: pd.DataFrame, column: str) -> bool:
    return column in frame.columns and bool(np.isfinite(frame[column].to_numpy(dtype=float)).any())


def _levels(column: pd.Series) -> tuple[list[Any], bool]:
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
    policies = _policies(results) if policies is None else list(policies)
    levels, _ = _levels(results[key])
    rows: list[dict[str, Any]] = []
    for policy in policies:
        mine = results[results["policy"] == policy]
        for value in levels:
            pooled = mine[mine[key] == value]
            if pooled.empty:
                continue
            per_replication = pooled.groupby("replication", sort=True)[metric].mean()
            mean, sd, n, low, high = interval(per_replication.to_numpy(dtype=float))
            rows.append(
                {
                    "policy": policy,
                    "value": value,
                    "mean": mean,
                    "sd": sd,
                    "n": n,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return pd.DataFrame(rows, columns=["policy", "value", *SUMMARY_COLUMNS])


def _by_key_figure(
    results: pd.DataFrame,
    key: str,
    grid_keys: Sequence[str],
    *,
    file: str,
    out_dir: Path,
    driver: str,
    policies: Sequence[str],
    scenario_line: str,
) -> FigureOutcome:
    """Draw the panels of the headline metrics against one swept key."""
    title = f"Headline metrics by {key}"
    others = [k for k in grid_keys if k != key]
    averaged = (
        f"averaged over the other swept key{'s' if len(others) > 1 else ''} "
        f"({', '.join(others)}): per replication, the mean over the cells with that value of "
        f"{key}, then the mean over replications"
        if others
        else "the mean over replications (no other key is swept)"
    )
    wanted = [m for m in headline_metrics(driver) if m in results.columns]
    metrics = [m for m in wanted if _has_values(results, m)]
    empty = [m for m in wanted if m not in metrics]
    levels, numeric = _levels(results[key]) if not results.empty else ([], True)
    caption = (
        f"Per headline metric, its value against {key}, one line per policy: {averaged}; "
        f"bars: {CONFIDENCE:.0%} confidence intervals over replications (none with a single "
        "replication)."
    )
    if not numeric:
        caption += (
            " The values of the key are categories, in the order first met; the dotted lines "
            "only join a policy's points."
        )
    if len(policies) > 1:
        caption += " Policies are offset sideways a little so their bars do not overlap."
    if empty:
        caption += f" Left out for lack of data: {', '.join(empty)}."
    if not metrics:
        return FigureOutcome(file, title, caption, skipped="no headline metric has any value")

    colours = policy_colours(policies)
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    fig = Figure(figsize=(4.2 * columns, 3.4 * rows + 0.9), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    if numeric:
        positions = np.asarray(levels, dtype=float)
        gaps = np.diff(positions)
        step = float(gaps.min()) if gaps.size else 1.0
    else:
        positions = np.arange(len(levels), dtype=float)
        step = 1.0
    where = {v: float(p) for v, p in zip(levels, positions, strict=True)}
    spread = 0.12 * step / max(len(policies) - 1, 1) if len(policies) > 1 else 0.0
    for panel, metric in enumerate(metrics):
        ax = axes[panel // columns][panel % columns]
        table = by_key_summary(results, key, metric, policies)
        for k, policy in enumerate(policies):
            mine = table[(table["policy"] == policy) & np.isfinite(table["mean"])]
            if mine.empty:
                continue
            offset = (k - (len(policies) - 1) / 2) * spread
            x = np.array([where[v] for v in mine["value"]]) + offset
            mean = mine["mean"].to_numpy(dtype=float)
            low = mine["ci_low"].to_numpy(dtype=float)
            high = mine["ci_high"].to_numpy(dtype=float)
            colour = colours[policy]
            ax.plot(
                x,
                mean,
                color=colour,
                marker=_MARKERS[k % len(_MARKERS)],
                markersize=4,
                linewidth=1.4 if numeric else 1.0,
                linestyle="-" if numeric else ":",
            )
            has = np.isfinite(low) & np.isfinite(high)
            if has.any():
                ax.errorbar(
                    x[has],
                    mean[has],
                    yerr=np.vstack([mean[has] - low[has], high[has] - mean[has]]),
                    fmt="none",
                    ecolor=colour,
                    elinewidth=0.9,
                    capsize=2.5,
                    alpha=0.7,
                )
        ax.set_xticks(positions, [format_value(v) for v in levels])
        ax.set_xlabel(key)
        ax.set_ylabel(_axis_label(metric, driver), fontsize="small")
        ax.set_title(metric, fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.margins(x=0.1)
    for panel in range(len(metrics), rows * columns):
        axes[panel // columns][panel % columns].set_axis_off()
    handles = [
        Line2D([], [], color=colours[p], marker=_MARKERS[k % len(_MARKERS)], label=p)
        for k, p in enumerate(policies)
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(policies), 4))
    suptitle = f"{title}, other keys averaged" if others else title
    fig.suptitle(_title(suptitle, scenario_line))
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def write_sweep_figures(
    results: pd.DataFrame,
    summary: pd.DataFrame,
    grid_keys: Sequence[str],
    out_dir: Path,
    *,
    driver: str,
    scenario_line: str = "",
) -> list[FigureOutcome]:
    """Write the sweep's figures into ``out_dir``; return what became of each.

    Args:
        results: the per-run results.
        summary: :func:`summarise_cells` of ``results``.
        grid_keys: the swept keys.
        out_dir: an existing folder.
        driver: the driving rater.
        scenario_line: a line naming the scenario, under each figure's title if given.

    Returns:
        The two trade-off figures, then one per swept key (in the order of ``grid_keys``),
        each either written or skipped with the reason.
    """
    out_dir = Path(out_dir)
    policies = _policies(results)
    cells = _cell_descriptions(results, grid_keys)
    outcomes = []
    rating = f"{driver}.rating_rmse"
    specs = (
        (
            TRADEOFF_DRAW_FILE,
            DRAW_METRIC,
            "Trade-off: queue time against match evenness",
            "a true draw probability as high",
        ),
        (
            TRADEOFF_RATING_FILE,
            rating,
            f"Trade-off: queue time against the rating error of {driver}",
            f"a {driver} rating RMSE as low",
        ),
    )
    for file, y, title, y_words in specs:
        caption = _tradeoff_caption(y_words, len(cells))
        reason = None
        if not _has_values(results, y):
            reason = f"no run has a {y}"
            if y == rating:
                reason = (
                    f"the driving rater {driver} has no rating_rmse (the column is missing or "
                    "has no values: a rater not on the true-skill scale has no RMSE)"
                )
        elif not _has_values(results, QUEUE_METRIC):
            reason = f"no run has a {QUEUE_METRIC}"
        if reason is not None:
            outcomes.append(FigureOutcome(file, title, caption, skipped=reason))
            continue
        points = _points(summary, grid_keys, QUEUE_METRIC, y)
        if points.empty:
            outcomes.append(
                FigureOutcome(
                    file, title, caption, skipped=f"no cell has both {QUEUE_METRIC} and {y}"
                )
            )
            continue
        outcomes.append(
            _tradeoff_figure(
                points,
                y=y,
                file=file,
                title=title,
                caption=caption,
                out_dir=out_dir,
                driver=driver,
                policies=policies,
                cells=cells,
                scenario_line=scenario_line,
            )
        )
    for key, file in by_key_files(grid_keys).items():
        if results.empty:
            outcomes.append(
                FigureOutcome(file, f"Headline metrics by {key}", "", skipped="no run succeeded")
            )
            continue
        outcomes.append(
            _by_key_figure(
                results,
                key,
                grid_keys,
                file=file,
                out_dir=out_dir,
                driver=driver,
                policies=policies,
                scenario_line=scenario_line,
            )
        )
    return outcomes


# --------------------------------------------------------------------------------------------
# Report content


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _range(values: Sequence[int], word: str) -> str:
    if not values:
        return _count(0, word)
    low, high = min(values), max(values)
    return _count(low, word) if low == high else f"{low} to {high} {word}s"


def _description(
    results: pd.DataFrame, failures: pd.DataFrame, grid_keys: Sequence[str], policies: list[str]
) -> str:
    cells = {int(c) for c in results["cell"]} | {int(c) for c in failures.get("cell", [])}
    keys = ", ".join(grid_keys) if grid_keys else "no key"
    runs = results.groupby(["cell", "policy"], sort=False).size().tolist()
    return (
        f"A parameter sweep over {keys}: {_count(len(cells), 'cell')} (combinations of the swept "
        f"values) × {_count(len(policies), 'policy').replace('policys', 'policies')}, "
        f"{_range([int(r) for r in runs], 'replication')} per cell and policy on common random "
        f"numbers; {_count(len(results), 'run')} succeeded and {len(failures)} failed."
    )


def _setup_items(
    results: pd.DataFrame,
    failures: pd.DataFrame,
    grid_keys: Sequence[str],
    policies: list[str],
    driver: str,
    scenario_line: str,
) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    if scenario_line:
        items.append(("Scenario", scenario_line))
    for key in grid_keys:
        source = results if not results.empty or key not in failures.columns else failures
        levels, _ = _levels(source[key])
        items.append((f"Swept {key}", ", ".join(format_value(v) for v in levels) or "none"))
    items.append(("Policies", ", ".join(policies) or "none"))
    items.append(("Driving rater", driver))
    return items


def _grid_cells(row: pd.Series, grid_keys: Sequence[str]) -> list[str]:
    return [format_value(row[k]) for k in grid_keys]


def _frontier_blocks(
    points: pd.DataFrame, grid_keys: Sequence[str], y: str, y_words: str, driver: str
) -> list[Block]:
    """Return the plain-language reading of one trade-off's frontier and its table."""
    front = _frontier(points, y)
    dominated = len(points) - len(front)
    x_name, y_name = "p90 queue time", _axis_label(y, driver).split("\n")[0]
    if len(front) == 1:
        row = front.iloc[0]
        reading = (
            f"One point is best on both at once: cell {int(row['cell'])} under "
            f"{row['policy']}; no setting tried trades a longer wait for {y_words}."
        )
    else:
        reading = (
            f"{len(front)} points are on the frontier. Listed from the shortest {x_name} to the "
            f"best {y_name}: moving down the list, each step buys {y_words} with a longer wait; "
            "no other setting gets both at once."
        )
    reading += (
        f" The other {_count(dominated, 'point')} "
        f"{'is' if dominated == 1 else 'are'} dominated: some frontier point is at least as "
        "good on both. The frontier is drawn through the means; where intervals overlap, "
        "neighbouring points may not really differ."
    )
    header = ["cell", *grid_keys, "policy", QUEUE_METRIC, y]
    rows = [
        [
            str(int(row["cell"])),
            *_grid_cells(row, grid_keys),
            str(row["policy"]),
            format_interval(float(row["x_mean"]), float(row["x_low"]), float(row["x_high"])),
            format_interval(float(row["y_mean"]), float(row["y_low"]), float(row["y_high"])),
        ]
        for _, row in front.iterrows()
    ]
    return [md_text(reading), md_table(header, rows)]


def cells_table(
    results: pd.DataFrame, summary: pd.DataFrame, grid_keys: Sequence[str], driver: str
) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Cells" table.

    One row per (cell, policy), in the order of ``summary``: the cell number, its grid values,
    the policy, the successful replications and, per headline metric present in ``results``,
    the mean [95% interval] formatted by :func:`lobbysim.report.format_interval`.
    """
    metrics = [m for m in headline_metrics(driver) if m in results.columns]
    header = ["cell", *grid_keys, "policy", "runs", *metrics]
    runs = results.groupby(["cell", "policy"], sort=False).size()
    indexed = summary.set_index(["cell", "policy", "metric"])
    rows = []
    for _, first in summary.drop_duplicates(["cell", "policy"]).iterrows():
        cell, policy = int(first["cell"]), str(first["policy"])
        row = [str(cell), *_grid_cells(first, grid_keys), policy, str(int(runs[(cell, policy)]))]
        for metric in metrics:
            s = indexed.loc[(cell, policy, metric)]
            row.append(format_interval(float(s["mean"]), float(s["ci_low"]), float(s["ci_high"])))
        rows.append(row)
    return header, rows


def _error_line(error: object) -> str:
    """Return the last non-empty line of an error text, at most :data:`MAX_ERROR_CHARS` long."""
    if error is None or (isinstance(error, float) and math.isnan(error)):
        return "(no message)"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    last = " ".join(lines[-1].split()) if lines else "(no message)"
    return last if len(last) <= MAX_ERROR_CHARS else "…" + last[-(MAX_ERROR_CHARS - 1) :]


def failures_table(
    failures: pd.DataFrame, grid_keys: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Failed runs" table, sorted by cell, then as given.

    The error is its last non-empty line (for a traceback, the exception), cut to
    :data:`MAX_ERROR_CHARS` characters.
    """
    header = ["cell", *grid_keys, "policy", "replication", "seed", "error"]
    rows = []
    ordered = failures.assign(_rank=np.arange(len(failures)))
    if "cell" in ordered.columns:
        ordered = ordered.sort_values(["cell", "_rank"], kind="stable")
    for _, row in ordered.iterrows():
        rows.append(
            [
                *(format_value(row[c]) if c in row.index else "" for c in header[:-1]),
                _error_line(row.get("error")),
            ]
        )
    return header, rows


def sweep_report_blocks(
    results: pd.DataFrame,
    failures: pd.DataFrame,
    summary: pd.DataFrame,
    grid_keys: Sequence[str],
    figures: Sequence[FigureOutcome],
    *,
    title: str,
    driver: str,
    scenario_line: str = "",
) -> list[Block]:
    """Return the sweep report's content, in order, for the renderers of :mod:`lobbysim.report`."""
    policies = _policies(results)
    by_file = {f.file: f for f in figures}
    blocks = [
        md_heading(title, level=1),
        md_text(_description(results, failures, grid_keys, policies)),
        md_heading("Set-up"),
        Block(
            "items",
            items=tuple(
                _setup_items(results, failures, grid_keys, policies, driver, scenario_line)
            ),
        ),
    ]

    blocks += [
        md_heading("Trade-offs"),
        md_text(
            "Shorter queues and better matches pull against each other: a matchmaker that waits "
            "longer can find more even opponents and learn ratings from more informative games. "
            "Each figure shows every cell and policy as one point; the Pareto frontier joins "
            "the points that no other point beats on both axes at once. A setting off the "
            "frontier can be improved on both counts by moving to a frontier point; choosing "
            "among frontier points is a matter of how much waiting a better match is worth."
        ),
    ]
    rating = f"{driver}.rating_rmse"
    tradeoffs = (
        (TRADEOFF_DRAW_FILE, DRAW_METRIC, "more even matches", "Queue time against match evenness"),
        (
            TRADEOFF_RATING_FILE,
            rating,
            "more accurate ratings",
            f"Queue time against the rating error of {driver}",
        ),
    )
    for file, y, y_words, heading in tradeoffs:
        blocks.append(md_heading(heading, level=3))
        figure = by_file.get(file)
        if figure is not None:
            blocks.append(Block("figure", figure=figure))
        if figure is None or figure.path is None:
            continue
        points = _points(summary, grid_keys, QUEUE_METRIC, y)
        blocks += _frontier_blocks(points, grid_keys, y, y_words, driver)

    blocks.append(md_heading("Per swept parameter"))
    if grid_keys:
        blocks.append(
            md_text(
                "Per swept key, the headline metrics against its values, one line per policy. "
                "Where several keys are swept, each point averages over the other keys' values, "
                "so a line shows the key's effect on average, not in any one cell."
            )
        )
        files = by_key_files(grid_keys)
        blocks += [Block("figure", figure=by_file[files[k]]) for k in grid_keys]
    else:
        blocks.append(md_text("No key was swept."))

    blocks.append(md_heading("Cells"))
    if summary.empty:
        blocks.append(md_text("No run succeeded, so there is nothing to tabulate."))
    else:
        header, rows = cells_table(results, summary, grid_keys, driver)
        blocks += [
            md_text(
                f"Per cell and policy: the grid values, the successful replications (runs) and "
                f"the headline metrics as the mean over replications [{CONFIDENCE:.0%} "
                "confidence interval]. n/a: no data; [n/a]: no interval (fewer than 2 "
                f"replications with data). Every metric of every cell is in {CELLS_FILE}."
            ),
            md_table(header, rows),
        ]
        meanings = [(m, metric_meaning(m)) for m in header[3 + len(grid_keys) :]]
        blocks.append(Block("items", items=tuple((m, t) for m, t in meanings if t)))

    blocks.append(md_heading("Failed runs"))
    if failures.empty:
        blocks.append(md_text("None: every run finished."))
    else:
        header, rows = failures_table(failures, grid_keys)
        blocks += [
            md_text(
                f"{_count(len(failures), 'run')} raised an error or lost its worker and "
                f"{'is' if len(failures) == 1 else 'are'} left out of every figure and table "
                "above; the error shown is the last line of its message."
            ),
            md_table(header, rows),
        ]
    return blocks


# --------------------------------------------------------------------------------------------
# The entry point


def write_sweep_report(
    results: pd.DataFrame,
    failures: pd.DataFrame | None,
    grid_keys: Sequence[str],
    out_dir: Path,
    *,
    title: str,
    driver: str,
    scenario_line: str = "",
) -> list[Path]:
    """Write the report of a parameter sweep into ``out_dir``.

    Args:
        results: one row per successful run: ``cell`` (1-based), one column per swept key
            (named by its key path), ``policy``, ``replication`` (1-based), ``seed``, then the
            metrics (NaN where missing).
        failures: one row per failed run: ``cell``, the grid keys, ``policy``,
            ``replication``, ``seed``, ``error``; None or empty when none failed.
        grid_keys: the swept keys, in order.
        out_dir: an existing folder to write into.
        title: the report's title.
        driver: the driving rater (the y axis of ``tradeoff_rating.png`` is its
            ``rating_rmse``).
        scenario_line: a one-line description of the scenario, for the set-up and the figures.

    Returns:
        The files written: ``cells.csv``, the figures that were drawn (``tradeoff_draw.png``,
        ``tradeoff_rating.png``, then ``by_<key>.png`` per swept key), ``report.md`` and
        ``report.html``.

    Raises:
        ValueError: if ``results`` lacks a required column or a grid key clashes with one.
    """
    out_dir = Path(out_dir)
    grid_keys = list(grid_keys)
    failures = pd.DataFrame() if failures is None else failures
    summary = summarise_cells(results, grid_keys)
    cells = out_dir / CELLS_FILE
    summary.to_csv(cells, index=False, lineterminator="\n")
    figures = write_sweep_figures(
        results, summary, grid_keys, out_dir, driver=driver, scenario_line=scenario_line
    )
    blocks = sweep_report_blocks(
        results,
        failures,
        summary,
        grid_keys,
        figures,
        title=title,
        driver=driver,
        scenario_line=scenario_line,
    )
    markdown = out_dir / MARKDOWN_FILE
    markdown.write_text(render_markdown(blocks), encoding="utf-8")
    page = out_dir / HTML_FILE
    page.write_text(render_html(blocks, title), encoding="utf-8")
    return [cells, *(f.path for f in figures if f.path is not None), markdown, page]
