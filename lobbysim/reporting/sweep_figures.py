"""The figures of the sweep report: two trade-offs with their Pareto frontier, panels per key.

- ``tradeoff_draw.png``: every (cell, policy) as a point of p90 queue time (lower is better)
  against the mean true draw probability (higher is better), with 95% intervals both ways and
  the Pareto frontier;
- ``tradeoff_rating.png``: the same against the driving rater's rating RMSE (lower is better),
  when that rater has one;
- ``by_<key>.png`` per swept key: small panels of the headline metrics against that key's
  values, one line per policy, the other swept keys averaged over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import marker, policy_colours, save_figure, titled
from lobbysim.reporting.sweep_summary import (
    DRAW_METRIC,
    QUEUE_METRIC,
    by_key_files,
    by_key_summary,
    cell_descriptions,
    format_value,
    frontier,
    has_values,
    headline_metrics,
    levels_of,
    policies_in,
    tradeoff_points,
)
from lobbysim.reporting.verdicts import HIGHER_IS_BETTER, LOWER_IS_BETTER, better_direction
from lobbysim.stats.intervals import CONFIDENCE

TRADEOFF_DRAW_FILE = "tradeoff_draw.png"
TRADEOFF_RATING_FILE = "tradeoff_rating.png"

MAX_LABELLED_CELLS = 12
"""Up to this many cells, the trade-off figures map cell numbers to grid values in a legend."""


def axis_label(metric: str, driver: str) -> str:
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


def _policy_points(
    ax: Axes, points: pd.DataFrame, policies: Sequence[str], colours: dict[str, str]
) -> list[Any]:
    """Draw each policy's points with their intervals and cell numbers; return legend handles."""
    handles: list[Any] = []
    for k, policy in enumerate(policies):
        mine = points[points["policy"] == policy]
        if mine.empty:
            continue
        colour, shape = colours[policy], marker(k)
        _error_bars(ax, mine, colour)
        ax.plot(
            mine["x_mean"].to_numpy(dtype=float),
            mine["y_mean"].to_numpy(dtype=float),
            linestyle="none",
            marker=shape,
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
        handles.append(Line2D([], [], linestyle="none", marker=shape, color=colour, label=policy))
    return handles


def _frontier_line(ax: Axes, points: pd.DataFrame, y: str) -> list[Any]:
    """Draw the Pareto frontier as a step line with ringed points; return legend handles."""
    front = frontier(points, y)
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
    return [
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


def _cells_legend(fig: Figure, points: pd.DataFrame, cells: dict[int, str]) -> None:
    """Add a legend of the shown cells' grid values below the axes, if there are few cells."""
    shown = sorted({int(c) for c in points["cell"]})
    if len(shown) > MAX_LABELLED_CELLS:
        return
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


def _tradeoff_figure(
    points: pd.DataFrame,
    *,
    y: str,
    outcome: FigureOutcome,
    out_dir: Path,
    driver: str,
    policies: Sequence[str],
    cells: dict[int, str],
    scenario_line: str,
) -> FigureOutcome:
    """Draw one trade-off figure of the points of :func:`tradeoff_points`."""
    fig = Figure(figsize=(9.0, 6.0), layout="constrained")
    ax = fig.add_subplot()
    handles = _policy_points(ax, points, policies, policy_colours(policies))
    handles += _frontier_line(ax, points, y)
    ax.set_xlabel(axis_label(QUEUE_METRIC, driver))
    ax.set_ylabel(axis_label(y, driver))
    ax.set_title(titled(outcome.title, scenario_line))
    ax.grid(True, alpha=0.3)
    ax.margins(0.08)
    ax.legend(handles=handles, fontsize="small", loc="best")
    _cells_legend(fig, points, cells)
    path = save_figure(fig, out_dir / outcome.file)
    return FigureOutcome(outcome.file, outcome.title, outcome.caption, path=path)


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


def _by_key_caption(
    key: str, others: Sequence[str], numeric: bool, policies: Sequence[str], empty: Sequence[str]
) -> str:
    averaged = (
        f"averaged over the other swept key{'s' if len(others) > 1 else ''} "
        f"({', '.join(others)}): per replication, the mean over the cells with that value of "
        f"{key}, then the mean over replications"
        if others
        else "the mean over replications (no other key is swept)"
    )
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
    return caption


def _positions(levels: Sequence[Any], numeric: bool) -> tuple[np.ndarray, float]:
    """Return the x position of each value of a key and the smallest step between two."""
    if not numeric:
        return np.arange(len(levels), dtype=float), 1.0
    positions = np.asarray(levels, dtype=float)
    gaps = np.diff(positions)
    return positions, float(gaps.min()) if gaps.size else 1.0


def _by_key_panel(
    ax: Axes,
    table: pd.DataFrame,
    policies: Sequence[str],
    colours: dict[str, str],
    where: dict[Any, float],
    *,
    spread: float,
    numeric: bool,
) -> None:
    """Draw one metric's lines (and interval bars) per policy on one panel."""
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
            marker=marker(k),
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
    wanted = [m for m in headline_metrics(driver) if m in results.columns]
    metrics = [m for m in wanted if has_values(results, m)]
    empty = [m for m in wanted if m not in metrics]
    levels, numeric = levels_of(results[key]) if not results.empty else ([], True)
    caption = _by_key_caption(key, others, numeric, policies, empty)
    if not metrics:
        return FigureOutcome(file, title, caption, skipped="no headline metric has any value")

    colours = policy_colours(policies)
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    fig = Figure(figsize=(4.2 * columns, 3.4 * rows + 0.9), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    positions, step = _positions(levels, numeric)
    where = {v: float(p) for v, p in zip(levels, positions, strict=True)}
    spread = 0.12 * step / max(len(policies) - 1, 1) if len(policies) > 1 else 0.0
    for panel, metric in enumerate(metrics):
        ax = axes[panel // columns][panel % columns]
        table = by_key_summary(results, key, metric, policies)
        _by_key_panel(ax, table, policies, colours, where, spread=spread, numeric=numeric)
        ax.set_xticks(positions, [format_value(v) for v in levels])
        ax.set_xlabel(key)
        ax.set_ylabel(axis_label(metric, driver), fontsize="small")
        ax.set_title(metric, fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.margins(x=0.1)
    for panel in range(len(metrics), rows * columns):
        axes[panel // columns][panel % columns].set_axis_off()
    handles = [
        Line2D([], [], color=colours[p], marker=marker(k), label=p) for k, p in enumerate(policies)
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(policies), 4))
    suptitle = f"{title}, other keys averaged" if others else title
    fig.suptitle(titled(suptitle, scenario_line))
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def _tradeoff_skip_reason(results: pd.DataFrame, y: str, driver: str) -> str | None:
    """Return why a trade-off figure against ``y`` cannot be drawn, or None."""
    if not has_values(results, y):
        if y == f"{driver}.rating_rmse":
            return (
                f"the driving rater {driver} has no rating_rmse (the column is missing or "
                "has no values: a rater not on the true-skill scale has no RMSE)"
            )
        return f"no run has a {y}"
    if not has_values(results, QUEUE_METRIC):
        return f"no run has a {QUEUE_METRIC}"
    return None


def _tradeoff_outcomes(
    results: pd.DataFrame,
    summary: pd.DataFrame,
    grid_keys: Sequence[str],
    out_dir: Path,
    *,
    driver: str,
    scenario_line: str,
) -> list[FigureOutcome]:
    """Draw (or skip) the two trade-off figures."""
    policies = policies_in(results)
    cells = cell_descriptions(results, grid_keys)
    specs = (
        (
            TRADEOFF_DRAW_FILE,
            DRAW_METRIC,
            "Trade-off: queue time against match evenness",
            "a true draw probability as high",
        ),
        (
            TRADEOFF_RATING_FILE,
            f"{driver}.rating_rmse",
            f"Trade-off: queue time against the rating error of {driver}",
            f"a {driver} rating RMSE as low",
        ),
    )
    outcomes = []
    for file, y, title, y_words in specs:
        outcome = FigureOutcome(file, title, _tradeoff_caption(y_words, len(cells)))
        reason = _tradeoff_skip_reason(results, y, driver)
        points = tradeoff_points(summary, grid_keys, QUEUE_METRIC, y) if reason is None else None
        if points is not None and points.empty:
            reason = f"no cell has both {QUEUE_METRIC} and {y}"
        if reason is not None or points is None:
            outcomes.append(FigureOutcome(file, title, outcome.caption, skipped=reason))
            continue
        outcomes.append(
            _tradeoff_figure(
                points,
                y=y,
                outcome=outcome,
                out_dir=out_dir,
                driver=driver,
                policies=policies,
                cells=cells,
                scenario_line=scenario_line,
            )
        )
    return outcomes


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
        summary: :func:`~lobbysim.reporting.sweep_summary.summarise_cells` of ``results``.
        grid_keys: the swept keys.
        out_dir: an existing folder.
        driver: the driving rater.
        scenario_line: a line naming the scenario, under each figure's title if given.

    Returns:
        The two trade-off figures, then one per swept key (in the order of ``grid_keys``),
        each either written or skipped with the reason.
    """
    out_dir = Path(out_dir)
    outcomes = _tradeoff_outcomes(
        results, summary, grid_keys, out_dir, driver=driver, scenario_line=scenario_line
    )
    policies = policies_in(results)
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
