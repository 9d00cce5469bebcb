"""The sweep report's per-key figures: ``by_<key>.png`` per swept key, small panels of the
headline metrics (:func:`~lobbysim.reporting.sweep_summary.headline_metrics`) against that
key's values, one line per policy, the other swept keys averaged over
(:func:`~lobbysim.reporting.sweep_summary.by_key_summary`). A numeric key's values are placed
to scale unless two would sit so close that their labels overlap (:func:`to_scale`); then, as
a category's, evenly spaced.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import fit_tick_labels, marker, policy_colours, save_figure, titled
from lobbysim.reporting.headline import metric_label
from lobbysim.reporting.sweep_headline import QUEUE
from lobbysim.reporting.sweep_summary import (
    DRAW_METRIC,
    QUEUE_METRIC,
    by_key_summary,
    format_value,
    has_values,
    headline_metrics,
    levels_of,
)
from lobbysim.reporting.verdicts import HIGHER_IS_BETTER, LOWER_IS_BETTER, better_direction
from lobbysim.stats.intervals import CONFIDENCE


def axis_label(metric: str, driver: str, *, seconds: bool = False) -> str:
    """Return a metric's axis label, with which way is better (queue times in seconds with
    ``seconds``, else minutes)."""
    labels = {
        QUEUE_METRIC: "90th percentile queue time (minutes)",
        QUEUE: f"mean queue time ({'s' if seconds else 'min'})",
        DRAW_METRIC: "mean true draw probability",
        "abandonment_rate": "abandonment rate",
        "games_per_hour": "games per hour",
        "win_ratio_dispersion": "mean |win ratio - 0.5|",
        f"{driver}.rating_rmse": f"{driver} rating RMSE",
    }
    label = labels.get(metric) or metric_label(metric)
    direction = better_direction(metric)
    if direction in (LOWER_IS_BETTER, HIGHER_IS_BETTER):
        label += f"\n({direction} is better)"
    return label


def _by_key_caption(
    key: str,
    others: Sequence[str],
    numeric: bool,
    policies: Sequence[str],
    empty: Sequence[str],
    *,
    scaled: bool,
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
    elif not scaled:
        caption += (
            " The values are evenly spaced, not to scale (to scale, the labels of the closest "
            "would overlap)."
        )
    if len(policies) > 1:
        caption += " Policies are offset sideways a little so their bars do not overlap."
    if empty:
        caption += f" Left out for lack of data: {', '.join(empty)}."
    return caption


PANEL_SPAN_POINTS = 190.0
"""About how many points (1/72 inch) a per-key panel's values span across (4.2 inches wide,
less its axis labels and margins)."""

TICK_CHAR_POINTS = 6.5
"""About how wide one character of a tick label is, in points (10-point type)."""


def to_scale(levels: Sequence[Any], numeric: bool) -> bool:
    """Return whether a numeric key's values are placed to scale: not where two neighbours would
    sit so close that their labels overlap (base sizes 100 and 110 beside 1,000); then they
    are evenly spaced, as categories are."""
    if not numeric or len(levels) < 2:
        return numeric
    values = np.asarray(levels, dtype=float)
    span = float(values[-1] - values[0])
    widths = [TICK_CHAR_POINTS * len(format_value(v)) for v in levels]
    for k in range(len(levels) - 1):
        room = (values[k + 1] - values[k]) / span * PANEL_SPAN_POINTS
        if room < (widths[k] + widths[k + 1]) / 2 + 4.0:
            return False
    return True


def tick_texts(levels: Sequence[Any]) -> list[str]:
    """Return a key's values as tick labels, each wrapped at its spaces to the room one value
    has on a panel (a threshold schedule ``[[0, 0.6], [2, 0.4], [4, 0.0]]`` on three lines
    where three such share a panel), so that neighbours do not overlap."""
    room = PANEL_SPAN_POINTS / max(len(levels), 1) / TICK_CHAR_POINTS
    width = max(int(room), 10)
    return [
        textwrap.fill(format_value(v), width, break_long_words=False, break_on_hyphens=False)
        for v in levels
    ]


def _positions(levels: Sequence[Any], scaled: bool) -> tuple[np.ndarray, float]:
    """Return the x position of each value of a key (to scale, else evenly spaced) and the
    smallest step between two."""
    if not scaled:
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


def by_key_figure(
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
    scaled = to_scale(levels, numeric)
    caption = _by_key_caption(key, others, numeric, policies, empty, scaled=scaled)
    if not metrics:
        return FigureOutcome(file, title, caption, skipped="no headline metric has any value")

    colours = policy_colours(policies)
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    fig = Figure(figsize=(4.2 * columns, 3.4 * rows + 0.9), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    positions, step = _positions(levels, scaled)
    where = {v: float(p) for v, p in zip(levels, positions, strict=True)}
    spread = 0.12 * step / max(len(policies) - 1, 1) if len(policies) > 1 else 0.0
    for panel, metric in enumerate(metrics):
        ax = axes[panel // columns][panel % columns]
        table = by_key_summary(results, key, metric, policies)
        _by_key_panel(ax, table, policies, colours, where, spread=spread, numeric=scaled)
        ax.set_xticks(positions, tick_texts(levels))
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
    fit_tick_labels(fig)
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))
