"""The trade-off figure at the top of the run and compare report: queue time against fairness.

Two panels with the same x axis, the queue time p90 of matched players (minutes, lower is
better): against the mean true draw probability of the games (higher is better) and against the
mean true skill gap (lower is better). One point per policy, its mean over replications, with
its 95% confidence interval in both directions (cut to what the metric can take, as in
``summary.csv``: :func:`lobbysim.metrics.metric_support`), labelled with the policy's name. The
sweep report draws the same trade-off over a grid of settings
(:mod:`lobbysim.reporting.sweep_figures`).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.intervals import CONFIDENCE
from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import marker, new_panels, save_figure, style_axes

TRADEOFF_FIGURE_FILE = "tradeoff.png"
"""The trade-off figure's file name."""

TRADEOFF_SIZE = (10.0, 3.8)
"""Its size in inches: wide and low, so that it fits the report's first screen."""

X_METRIC = "queue_time_p90"
Y_METRICS = (
    ("draw_prob_true_mean", "true draw probability (higher is better)"),
    ("skill_gap_true_mean", "true skill gap (lower is better)"),
)
"""The y axes of the panels: metric and axis label."""

_LABEL_OFFSETS = ((7, 6, "left"), (7, -13, "left"), (-7, 6, "right"), (-7, -13, "right"))
"""Where each policy's name goes from its point (points; cycled), so that close points'
names do not sit on top of each other."""


def _point(summary: pd.DataFrame, policy: str, metric: str) -> tuple[float, float, float]:
    """Return a policy's ``(mean, ci_low, ci_high)`` of a metric (NaN where missing)."""
    found = summary[(summary["policy"] == policy) & (summary["metric"] == metric)]
    if found.empty:
        return math.nan, math.nan, math.nan
    row = found.iloc[0]
    return float(row["mean"]), float(row["ci_low"]), float(row["ci_high"])


def _error(mean: float, low: float, high: float) -> list[list[float]] | None:
    """Return matplotlib's asymmetric error of an interval, or None without one."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    return [[mean - low], [high - mean]]


def _panel(ax: Axes, result: ExperimentResult, y_metric: str, colours: dict[str, str]) -> bool:
    """Draw one panel's points; return False if no policy has both values."""
    drawn = False
    for index, policy in enumerate(result.policies):
        x, y = _point(result.summary, policy, X_METRIC), _point(result.summary, policy, y_metric)
        if not (math.isfinite(x[0]) and math.isfinite(y[0])):
            continue
        ax.errorbar(
            [x[0]],
            [y[0]],
            xerr=_error(*x),
            yerr=_error(*y),
            color=colours[policy],
            marker=marker(index),
            markersize=7,
            capsize=3,
            linestyle="none",
            label=policy,
            zorder=3,
        )
        dx, dy, align = _LABEL_OFFSETS[index % len(_LABEL_OFFSETS)]
        ax.annotate(
            policy,
            (x[0], y[0]),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=align,
            fontsize="small",
            color=colours[policy],
            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7},
            zorder=2.5,  # under the points and bars, over the grid
        )
        drawn = True
    ax.margins(x=0.25, y=0.15)
    return drawn


def tradeoff_figure(
    result: ExperimentResult, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    """Draw queue time p90 against true draw probability and skill gap, a point per policy."""
    replications = len(result.seeds)
    title = "Queue time against match fairness, one point per policy"
    bars = (
        f"error bars: {CONFIDENCE:.0%} confidence intervals over replications, both ways"
        if replications > 1
        else "no error bars: one replication gives no interval"
    )
    caption = (
        f"Each policy's mean over {replications} replication{'s' if replications != 1 else ''}; "
        f"{bars} (cut at 0 and 1, the values the metrics can take). The intervals are each "
        "policy's own: the policies ran on common random numbers, so the paired differences of "
        "the headline are sharper than the overlap of these bars suggests."
    )
    fig, axes = new_panels(len(Y_METRICS), *TRADEOFF_SIZE)
    drawn = [
        _panel(ax, result, metric, colours) for ax, (metric, _) in zip(axes, Y_METRICS, strict=True)
    ]
    if not any(drawn):
        return FigureOutcome(
            TRADEOFF_FIGURE_FILE, title, caption, skipped="no policy has a queue time p90"
        )
    for ax, (_, ylabel) in zip(axes, Y_METRICS, strict=True):
        style_axes(ax, title="", xlabel="queue time p90 (minutes, lower is better)", ylabel=ylabel)
    fig.suptitle(
        f'{title}\nscenario "{result.scenario.name}", {replications} '
        f"replication{'s' if replications != 1 else ''} per policy; {bars}",
        fontsize="medium",
    )
    path = save_figure(fig, out_dir / TRADEOFF_FIGURE_FILE)
    return FigureOutcome(TRADEOFF_FIGURE_FILE, title, caption, path=path)
