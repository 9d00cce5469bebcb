"""The trade-off figure at the top of the run and compare report: queue time against fairness.

Two panels with the same x axis, the mean queue time of matched players (lower is better; in
the comparison's one unit of queue times, seconds where every mean wait is under two minutes,
as the answer and the tables give it: :func:`lobbysim.reporting.answer.queue_time_unit`; the
mean, not a percentile, which passes on a tick grid can pin to a multiple of the tick for every
policy): against the mean true draw probability of the games (higher is
better) and against the mean true skill gap (lower is better). One point per policy, its mean
over replications, with its 95% confidence interval in both directions (cut to what the
metric can take, as in
``summary.csv``: :func:`lobbysim.stats.metrics.metric_support`), labelled with the policy's name.
The
names are placed one by one, each at the first spot around its point (nearest first) where it
overlaps no name placed before, no point and no edge of the panel (:func:`place_labels`), so
that close points' names do not sit on top of each other; a name set away from its point gets a
thin line to it. The sweep report draws the same trade-off over a grid of settings
(:mod:`lobbysim.reporting.sweep_figures`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import queue_time_unit
from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import DPI, marker, new_panels, save_figure, style_axes
from lobbysim.stats.intervals import CONFIDENCE

TRADEOFF_FIGURE_FILE = "tradeoff.png"
"""The trade-off figure's file name."""

TRADEOFF_SIZE = (10.0, 3.8)
"""Its size in inches: wide and low, so that it fits the report's first screen."""

X_METRIC = "queue_time_mean"
Y_METRICS = (
    ("draw_prob_true_mean", "true draw probability (higher is better)"),
    ("skill_gap_true_mean", "true skill gap (lower is better)"),
)
"""The y axes of the panels: metric and axis label."""

_DIRECTIONS = (
    (1.0, 0.0, "left", "center"),
    (1.0, 1.0, "left", "bottom"),
    (1.0, -1.0, "left", "top"),
    (-1.0, 0.0, "right", "center"),
    (-1.0, 1.0, "right", "bottom"),
    (-1.0, -1.0, "right", "top"),
    (0.0, 1.0, "center", "bottom"),
    (0.0, -1.0, "center", "top"),
)
"""Where a name may go from its point, in order of preference: the direction (x, y) and the
text's alignment (horizontal, vertical) that keeps it on that side."""

_FIRST_DISTANCE = 7.0
"""Points between a point and its name in the first ring of spots."""

_RING_STEP = 11.0
"""Points further out per ring of spots."""

_RINGS = 8
"""Rings of spots tried before the spot with the least overlap is taken."""

_MARKER_SIZE = 7.0
"""The points' marker size (points)."""


@dataclass(frozen=True)
class PointLabel:
    """A name to place next to a point of an axes, in the data coordinates of that axes, with
    the point's error bars (``(low, high)``, NaN without one)."""

    ax: Axes
    text: str
    x: float
    y: float
    colour: str
    x_bar: tuple[float, float] = (math.nan, math.nan)
    y_bar: tuple[float, float] = (math.nan, math.nan)

    def obstacles(self, half: float) -> list[Bbox]:
        """Return the window boxes of the point's marker (``half`` its half size in pixels)
        and of its error bars, which no name should cover."""
        to_window = self.ax.transData.transform
        px, py = to_window((self.x, self.y))
        boxes = [Bbox.from_extents(px - half, py - half, px + half, py + half)]
        if all(math.isfinite(v) for v in self.x_bar):
            (x0, _), (x1, _) = to_window([(self.x_bar[0], self.y), (self.x_bar[1], self.y)])
            boxes.append(Bbox.from_extents(x0, py - half / 2, x1, py + half / 2))
        if all(math.isfinite(v) for v in self.y_bar):
            (_, y0), (_, y1) = to_window([(self.x, self.y_bar[0]), (self.x, self.y_bar[1])])
            boxes.append(Bbox.from_extents(px - half / 2, y0, px + half / 2, y1))
        return boxes


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


def _panel(
    ax: Axes, result: ExperimentResult, y_metric: str, colours: dict[str, str], scale: float = 1.0
) -> list[PointLabel]:
    """Draw one panel's points, the queue times (minutes) times ``scale``; return their names to
    place (none if no policy has both values)."""
    labels: list[PointLabel] = []
    for index, policy in enumerate(result.policies):
        x, y = _point(result.summary, policy, X_METRIC), _point(result.summary, policy, y_metric)
        x = (scale * x[0], scale * x[1], scale * x[2])
        if not (math.isfinite(x[0]) and math.isfinite(y[0])):
            continue
        ax.errorbar(
            [x[0]],
            [y[0]],
            xerr=_error(*x),
            yerr=_error(*y),
            color=colours[policy],
            marker=marker(index),
            markersize=_MARKER_SIZE,
            capsize=3,
            linestyle="none",
            label=policy,
            zorder=3,
        )
        labels.append(PointLabel(ax, policy, x[0], y[0], colours[policy], x[1:], y[1:]))
    ax.margins(x=0.25, y=0.15)
    return labels


def _overlap(a: Bbox, b: Bbox) -> float:
    """Return the area (pixels²) where two boxes overlap (0 if they do not)."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


def _outside(box: Bbox, frame: Bbox) -> float:
    """Return the area (pixels²) of ``box`` outside ``frame``."""
    return box.width * box.height - _overlap(box, frame)


def _text_box(note: Annotation, renderer: RendererBase) -> Bbox:
    """Return the window extent of an annotation's text (without its line), padded by 2 px."""
    note.update_positions(renderer)
    return Text.get_window_extent(note, renderer).padded(2)


def _annotate(label: PointLabel, ring: int, direction: int) -> Annotation:
    dx, dy, ha, va = _DIRECTIONS[direction]
    distance = _FIRST_DISTANCE + ring * _RING_STEP
    scale = distance / math.hypot(dx, dy)
    arrow = {"arrowstyle": "-", "color": label.colour, "linewidth": 0.6, "shrinkB": 4}
    return label.ax.annotate(
        label.text,
        (label.x, label.y),
        xytext=(dx * scale, dy * scale),
        textcoords="offset points",
        ha=ha,
        va=va,
        fontsize="small",
        color=label.colour,
        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7},
        arrowprops=arrow if ring > 0 else None,
        zorder=2.5,  # under the points and bars, over the grid
    )


def place_labels(fig: Figure, labels: Sequence[PointLabel]) -> list[Annotation]:
    """Place each name next to its point where it overlaps nothing placed before; return them.

    One at a time, in order: the spots of :data:`_DIRECTIONS` at :data:`_FIRST_DISTANCE`
    points, then ring by ring further out; the first spot whose text box overlaps no name
    already placed in its axes, no point's marker or error bar and stays inside the axes is
    taken; if none
    of the :data:`_RINGS` rings has one, the spot with the least overlap. The points' markers and
    error bars count as taken. The figure's layout is
    fixed first (a draw at :data:`~lobbysim.reporting.figures.DPI`, the resolution it is saved
    at), and the names, inside their axes, do not change it. Deterministic: the same points
    give the same spots.
    """
    if not labels:
        return []
    fig.set_dpi(DPI)
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    renderer: RendererBase = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    half = _MARKER_SIZE * DPI / 72 / 2 + 1
    markers: dict[int, list[Bbox]] = {}
    for label in labels:
        markers.setdefault(id(label.ax), []).extend(label.obstacles(half))
    placed: dict[int, list[Bbox]] = {}
    annotations = []
    for label in labels:
        frame = label.ax.get_window_extent(renderer)
        taken = placed.setdefault(id(label.ax), [])
        best: tuple[float, int, int] | None = None
        for ring in range(_RINGS):
            for direction in range(len(_DIRECTIONS)):
                note = _annotate(label, ring, direction)
                box = _text_box(note, renderer)
                note.remove()
                cost = _outside(box, frame) * 10 + sum(
                    _overlap(box, other) for other in [*taken, *markers[id(label.ax)]]
                )
                if best is None or cost < best[0]:
                    best = (cost, ring, direction)
                if cost == 0:
                    break
            if best is not None and best[0] == 0:
                break
        assert best is not None
        note = _annotate(label, best[1], best[2])
        taken.append(_text_box(note, renderer))
        annotations.append(note)
    return annotations


def tradeoff_figure(
    result: ExperimentResult, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    """Draw the mean queue time against true draw probability and skill gap, a point per policy."""
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
    scale, unit = queue_time_unit(result.metrics)
    labels = [
        _panel(ax, result, metric, colours, scale)
        for ax, (metric, _) in zip(axes, Y_METRICS, strict=True)
    ]
    if not any(labels):
        return FigureOutcome(
            TRADEOFF_FIGURE_FILE, title, caption, skipped="no policy has a mean queue time"
        )
    for ax, (_, ylabel) in zip(axes, Y_METRICS, strict=True):
        xlabel = f"mean queue time ({unit}, lower is better)"
        style_axes(ax, title="", xlabel=xlabel, ylabel=ylabel)
    fig.suptitle(
        f'{title}\nscenario "{result.scenario.name}", {replications} '
        f"replication{'s' if replications != 1 else ''} per policy; {bars}",
        fontsize="medium",
    )
    place_labels(fig, [label for panel in labels for label in panel])
    path = save_figure(fig, out_dir / TRADEOFF_FIGURE_FILE)
    return FigureOutcome(TRADEOFF_FIGURE_FILE, title, caption, path=path)
