"""The figures of the run and compare report, drawn from the records of every replication.

First the trade-off of queue time against fairness, one point per policy
(:mod:`lobbysim.reporting.tradeoff_figure`), then five PNG figures pooled over each policy's
replications: queue times, true draw probability over time, the driving rater's error over
time, fairness by skill band and abandonment over time, each skipped (with the reason, for the
report to say) when it has no data; with a player base, a sixth: the driving rater's error by
games played (:mod:`lobbysim.reporting.tenure_figures`). What each figure takes of a replication,
its part, comes from :mod:`lobbysim.experiments.figure_data` (through
:class:`~lobbysim.reporting.run_frames.Frames`), the per-run statistics from
:mod:`lobbysim.stats.metrics`, the ±1 standard-error bands from :mod:`lobbysim.stats.intervals`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lobbysim.experiments.figure_data import (
    ABANDONMENT,
    DRAW_PROBABILITY,
    FAIRNESS,
    QUEUE_WAITS,
    RATING_ERROR,
    TIME_BINS,
    shown_from,
    time_edges,
)
from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import queue_time_unit
from lobbysim.reporting.document import FigureOutcome, format_number
from lobbysim.reporting.figures import new_axes, policy_colours, save_figure, style_axes
from lobbysim.reporting.region_figures import region_hours_figure
from lobbysim.reporting.retention_figures import retention_figure
from lobbysim.reporting.rule_figures import rules_figure
from lobbysim.reporting.run_frames import Frames
from lobbysim.reporting.run_frames import driver_on_skill_scale as driver_on_skill_scale
from lobbysim.reporting.tenure_figures import convergence_figure, driver_curves
from lobbysim.reporting.tradeoff_figure import tradeoff_figure
from lobbysim.stats.intervals import mean_and_se
from lobbysim.stats.metrics import MIN_GAMES_FOR_WIN_RATIO

OVER_TIME_SIZE = (8.0, 4.4)
"""Size of the over-time figures in inches (wide and low: a line per policy over time, the
legend below)."""

FIGURE_SIZES = {
    "queue_times.png": (8.0, 4.5),
    "draw_probability_over_time.png": OVER_TIME_SIZE,
    "rating_error_over_time.png": OVER_TIME_SIZE,
    "fairness_by_skill_band.png": (8.0, 4.2),
    "abandonment_over_time.png": OVER_TIME_SIZE,
}
"""Size in inches of each figure of :data:`FIGURE_FILES` (low, so that the page stays short)."""

SKILL_BANDS = 5
"""Skill bands (quantiles of true skill) in the fairness figure."""

FIGURE_FILES = (
    "queue_times.png",
    "draw_probability_over_time.png",
    "rating_error_over_time.png",
    "fairness_by_skill_band.png",
    "abandonment_over_time.png",
)
"""The figures' file names, in report order."""


# --------------------------------------------------------------------------------------------
# Time axes


def _time_centres(result: ExperimentResult) -> np.ndarray:
    """Return the centres of the over-time figures' bins (of
    :func:`~lobbysim.experiments.figure_data.time_edges`)."""
    edges = time_edges(result.scenario)
    return (edges[:-1] + edges[1:]) / 2


def _shown_from(result: ExperimentResult) -> float:
    """Return where the over-time figures' axes start: the metrics' start (the end of the
    warm-up, or the policy switch if later), unless that leaves no time to show."""
    return shown_from(result.scenario)


def _burn_in(result: ExperimentResult) -> str:
    """Return what the over-time figures leave out, in words ("" when they show it all)."""
    start = _shown_from(result)
    if start <= 0:
        return ""
    return f"from {clock_text(start)}, {_start_event(result)}"


def _start_event(result: ExperimentResult) -> str:
    """Return what the over-time figures start at: the policy switch or the end of the warm-up."""
    switch = getattr(result.scenario.matchmaker, "switch_at", None)
    if switch is not None and float(switch) >= float(result.scenario.warmup):
        return "the policy switch"
    return "the end of the warm-up"


def clock_text(minute: float) -> str:
    """Return a simulated time in words: ``"minute 90"`` under three hours, ``"hour 5.5"``
    under a day, else ``"day 2, 06:00"`` (day 1, 00:00 is the start)."""
    if minute < HOURS_FROM:
        return f"minute {minute:g}"
    if minute < DAY:
        return f"hour {minute / 60:g}"
    day, rest = divmod(round(minute), round(DAY))
    return f"day {day + 1}, {rest // 60:02d}:{rest % 60:02d}"


HOURS_FROM = 180.0
"""Minutes: an over-time axis reaching this far is in hours, not minutes."""

DAY = 1440.0
"""Minutes in a day: an over-time axis reaching a day is in days and time of day."""

MAX_TIME_TICKS = 8
"""At most this many labelled ticks on an over-time axis."""

_HOUR_STEPS = (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 12.0, 24.0, 48.0, 72.0, 168.0)
"""Tick spacings of an axis in hours or days (hours)."""


def time_ticks(start: float, end: float) -> tuple[np.ndarray, list[str], str]:
    """Return the ticks (minutes), their labels and the unit's words of an over-time axis from
    ``start`` to ``end`` (minutes since the start): minutes under :data:`HOURS_FROM`, hours
    under a day, else the day and the time of day (``"day 2"`` over ``"06:00"``), at most
    :data:`MAX_TIME_TICKS` ticks on round values."""
    if end < HOURS_FROM:
        span = max(end - start, 1e-9)
        minutes = next(
            (float(m) for m in (1, 2, 5, 10, 15, 20, 30, 60) if span / m <= MAX_TIME_TICKS), 60.0
        )
        ticks = np.arange(math.ceil(start / minutes) * minutes, end + 1e-9, minutes, dtype=float)
        return ticks, [f"{t:g}" for t in ticks], "minutes since the start"
    hours = max(end - start, 1e-9) / 60
    step_h = next((h for h in _HOUR_STEPS if hours / h <= MAX_TIME_TICKS), _HOUR_STEPS[-1])
    step = step_h * 60
    ticks = np.arange(math.ceil(start / step - 1e-9) * step, end + 1e-9, step, dtype=float)
    if end < DAY:
        return ticks, [f"{t / 60:g}" for t in ticks], "hours since the start"
    labels = []
    for tick in ticks:
        day, rest = divmod(round(tick), round(DAY))
        clock = f"{rest // 60:02d}:{rest % 60:02d}"
        labels.append(f"day {day + 1}" if step_h >= 24 else f"day {day + 1}\n{clock}")
    return ticks, labels, "day and time of day; day 1, 00:00 is the start"


def _time_caption(result: ExperimentResult) -> str:
    """Return the over-time captions' sentence on the window shown."""
    burn_in = _burn_in(result)
    if not burn_in:
        return ""
    return (
        f" The axis starts where the metrics start ({burn_in}): the burn-in before it is left out."
    )


def _time_axis(ax: Axes, result: ExperimentResult, what: str) -> str:
    """Limit an over-time axes to the shown window, with ticks in minutes, hours or days
    (:func:`time_ticks`); return its x label."""
    start, end = _shown_from(result), float(result.scenario.horizon)
    ax.set_xlim(start, end)
    ticks, labels, unit = time_ticks(start, end)
    ax.set_xticks(ticks, labels)
    window = f"; from {_start_event(result)}" if start > 0 else ""
    return f"time {what}({unit}{window})"


def _legend_below(fig: Figure, handles: Sequence[Artist]) -> None:
    """Put an over-time figure's legend below its axes, where it covers no line."""
    fig.legend(
        handles=handles,
        fontsize="small",
        loc="outside lower center",
        ncols=min(len(handles), 3),
    )


# --------------------------------------------------------------------------------------------
# Figures


def _scenario_line(result: ExperimentResult) -> str:
    replications = len(result.seeds)
    plural = "s" if replications != 1 else ""
    return f'scenario "{result.scenario.name}", {replications} replication{plural} per policy'


def _band_line(
    ax: Axes, x: np.ndarray, per_replication: np.ndarray, colour: str, label: str
) -> bool:
    """Draw the mean over replications with a ±1 SE band; return False if all is NaN."""
    mean, se = mean_and_se(per_replication)
    if not np.isfinite(mean).any():
        return False
    ax.fill_between(x, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
    ax.plot(x, mean, color=colour, linewidth=1.8, marker="o", markersize=3, label=label)
    return True


def _band_legend(fig: Figure, ax: Axes) -> None:
    """Add the policies' lines and the band's meaning in a legend below the axes."""
    handles, _ = ax.get_legend_handles_labels()
    handles = [*handles, Patch(color="grey", alpha=0.3, label="band: ±1 SE over replications")]
    _legend_below(fig, handles)


def _queue_times(
    result: ExperimentResult, frames: Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[0]
    title = "Queue time of matched players"
    caption = (
        "Empirical CDF of the queue time of every matched queueing spell that began after the "
        "warm-up, pooled over replications; circles mark the median (p50), triangles the 90th "
        "percentile (p90)."
    )
    # in the comparison's one unit of queue time (seconds when every mean wait is under 2 min)
    scale, unit = queue_time_unit(result.metrics)
    waits: dict[str, np.ndarray] = {}
    for policy in result.policies:
        # per replication its matched waits after the warm-up, sorted: pooled, then sorted
        parts = [p for p in frames.parts(policy, (QUEUE_WAITS,)) if p is not None]
        values = np.sort(np.concatenate(parts)) if parts else np.array([])
        if values.size:
            waits[policy] = values * scale
    if not waits:
        return FigureOutcome(file, title, caption, skipped="no matched waits after the warm-up")

    fig, ax = new_axes(*FIGURE_SIZES[file])
    for policy, values in waits.items():
        n = values.size
        index = np.unique(np.linspace(0, n - 1, min(n, 2000)).astype(np.int64))
        x, y = values[index], (index + 1) / n
        p50, p90 = (float(v) for v in np.percentile(values, [50, 90]))
        label = (
            f"{policy}: p50 {format_number(p50)}, p90 {format_number(p90)} {unit} ({n:,} spells)"
        )
        colour = colours[policy]
        ax.step(np.r_[x[0], x], np.r_[0.0, y], where="post", color=colour, label=label)
        ax.plot([p50], [0.5], marker="o", color=colour, markersize=7, linestyle="none")
        ax.plot([p90], [0.9], marker="^", color=colour, markersize=7, linestyle="none")
    for level in (0.5, 0.9):
        ax.axhline(level, color="grey", linestyle="--", linewidth=0.8)

    pooled = np.concatenate(list(waits.values()))
    positive = pooled[pooled > 0]
    xlabel = f"queue time ({unit})"
    threshold = 0.0
    if positive.size:
        low = float(np.percentile(positive, 5))
        if positive.max() / low > 100:
            if positive.size == pooled.size:
                ax.set_xscale("log")
                xlabel = f"queue time ({unit}, log scale)"
            else:
                threshold = 10.0 ** math.floor(math.log10(low))
                ax.set_xscale("symlog", linthresh=threshold)
                xlabel = (
                    f"queue time ({unit}; log scale above {threshold:g}, linear below, "
                    "so that waits of 0 show)"
                )
    if ax.get_xscale() == "symlog":
        ax.set_xlim(left=-0.3 * threshold)  # just left of 0, so the jump at 0 shows
    elif ax.get_xscale() == "linear":
        ax.set_xlim(left=-0.02 * max(float(pooled.max()), 1e-9))
    ax.set_ylim(0.0, 1.02)
    style_axes(
        ax,
        title=f"{title}\n{_scenario_line(result)}",
        xlabel=xlabel,
        ylabel="share of matched players who waited at most this long",
    )
    handles, _ = ax.get_legend_handles_labels()
    handles += [
        Line2D([], [], marker="o", color="grey", linestyle="none", label="median (p50)"),
        Line2D([], [], marker="^", color="grey", linestyle="none", label="90th percentile (p90)"),
    ]
    ax.legend(handles=handles, fontsize="small", loc="lower right")
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def _draw_probability(
    result: ExperimentResult, frames: Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[1]
    title = "True draw probability of the games over time"
    caption = (
        f"Mean true draw probability of the games started in each of {TIME_BINS} time bins "
        "(games still running at the horizon are not recorded, so the last bins are thin): "
        "per replication, then the mean over replications with a ±1 standard-error band."
        + _time_caption(result)
    )
    centres = _time_centres(result)
    fig, ax = new_axes(*FIGURE_SIZES[file])
    drawn = False
    for policy in result.policies:
        rows = [p for p in frames.parts(policy, (DRAW_PROBABILITY,)) if p is not None]
        if rows:
            drawn |= _band_line(ax, centres, np.vstack(rows), colours[policy], policy)
    if not drawn:
        return FigureOutcome(file, title, caption, skipped="no games were played")
    style_axes(
        ax,
        title=f"{title}\n{_scenario_line(result)}",
        xlabel=_time_axis(ax, result, "the game started "),
        ylabel="true draw probability\n(mean over the games of a bin)",
    )
    _band_legend(fig, ax)
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def _rating_error(
    result: ExperimentResult, frames: Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[2]
    driver = result.scenario.raters.driver.name
    on_scale = driver_on_skill_scale(result)
    statistic = "rmse" if on_scale else "tau"
    if on_scale:
        title = f"Rating error of the driving rater {driver}: RMSE against true skill"
        ylabel = "RMSE of the rating\nagainst true skill (skill units)"
        caption = (
            f"Root mean squared error of the driving rater {driver}'s ratings against the true "
            "skills of the registered players in the lobby at each rating sample; mean over "
            "replications with a ±1 standard-error band."
        ) + _time_caption(result)
    else:
        title = (
            f"Rating accuracy of the driving rater {driver}: Kendall's tau against true skill\n"
            f"({driver} is not on the skill scale, so tau instead of RMSE)"
        )
        ylabel = "Kendall's tau between\nrating and true skill"
        caption = (
            f"{driver} is not on the skill scale, so instead of an RMSE: Kendall's tau between "
            f"its ratings and the true skills of the registered players in the lobby at each "
            "rating sample; mean over replications with a ±1 standard-error band."
        ) + _time_caption(result)
    start = _shown_from(result)
    fig, ax = new_axes(*FIGURE_SIZES[file])
    drawn = False
    for policy in result.policies:
        parts = frames.parts(policy, (RATING_ERROR, driver, statistic))
        series = [s[s.index >= start] for s in parts if s is not None]
        series = [s for s in series if not s.empty]
        if not series:
            continue
        times = np.array(sorted(set().union(*(s.index for s in series))), dtype=float)
        matrix = np.vstack([s.reindex(times).to_numpy(dtype=float) for s in series])
        drawn |= _band_line(ax, times, matrix, colours[policy], policy)
    if not drawn:
        return FigureOutcome(
            file, title, caption, skipped=f"no rating samples of {driver} to compare"
        )
    style_axes(
        ax,
        title=f"{title}\n{_scenario_line(result)}",
        xlabel=_time_axis(ax, result, "of the rating sample "),
        ylabel=ylabel,
    )
    _band_legend(fig, ax)
    return FigureOutcome(
        file, title.replace("\n", " "), caption, path=save_figure(fig, out_dir / file)
    )


def _fairness(
    result: ExperimentResult, frames: Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[3]
    title = "Fairness by skill band: distance of the win ratio from 0.5"
    caption = (
        f"Players in {SKILL_BANDS} bands of true skill (quintiles over all players of a policy's "
        f"replications); per band, the mean |win ratio - 0.5| of the players with at least "
        f"{MIN_GAMES_FOR_WIN_RATIO} games (over the whole run, warm-up included); lower is "
        "fairer. n = players counted in the band (the range over the policies)."
    )
    bars: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for policy in result.policies:
        # per replication: every player's skill, and the skill and the distance of the win
        # ratio from 0.5 of those with enough games, pooled over the replications
        parts = [p for p in frames.parts(policy, (FAIRNESS,)) if p is not None]
        if not parts:
            continue
        skill = np.concatenate([p[0] for p in parts])
        edges = np.quantile(skill, np.linspace(0, 1, SKILL_BANDS + 1)[1:-1])
        rated = np.concatenate([p[1] for p in parts])
        if not rated.size:
            continue
        distance = np.concatenate([p[2] for p in parts])
        band = np.searchsorted(edges, rated, side="right")
        counts = np.bincount(band, minlength=SKILL_BANDS)
        sums = np.bincount(band, weights=distance, minlength=SKILL_BANDS)
        means = np.full(SKILL_BANDS, np.nan)
        np.divide(sums, counts, out=means, where=counts > 0)
        bars[policy] = (means, counts)
    if not bars:
        return FigureOutcome(
            file,
            title,
            caption,
            skipped=f"no player played at least {MIN_GAMES_FOR_WIN_RATIO} games",
        )
    fig, ax = new_axes(*FIGURE_SIZES[file])
    width = 0.8 / len(bars)
    positions = np.arange(SKILL_BANDS, dtype=float)
    for k, (policy, (means, _)) in enumerate(bars.items()):
        x = positions - 0.4 + width * (k + 0.5)
        shown = np.isfinite(means)
        ax.bar(x[shown], means[shown], width=width, color=colours[policy], label=policy)
    ax.set_xticks(positions, _band_labels([counts for _, counts in bars.values()]))
    ax.margins(y=0.05)
    style_axes(
        ax,
        title=f"{title}\n{_scenario_line(result)}",
        xlabel=f"true-skill band ({SKILL_BANDS} quantile bands)",
        ylabel=f"mean |win ratio - 0.5| (players with >= {MIN_GAMES_FOR_WIN_RATIO} games)",
        grid="y",
    )
    ax.legend(fontsize="small", loc="best")
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def _band_labels(counts: Sequence[np.ndarray]) -> list[str]:
    """Return the skill bands' tick labels: the band, its end of the scale, and the players
    counted in it (the range over the policies), on separate lines so that none overlaps."""
    labels = []
    for band in range(SKILL_BANDS):
        label = f"band {band + 1}"
        if band == 0:
            label += "\n(lowest skill)"
        elif band == SKILL_BANDS - 1:
            label += "\n(highest skill)"
        else:
            label += "\n"
        low, high = (int(f(c[band] for c in counts)) for f in (min, max))
        labels.append(f"{label}\nn = {low:,}" + (f"-{high:,}" if high != low else ""))
    return labels


def _abandonment(
    result: ExperimentResult, frames: Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[4]
    title = "Abandonment over time"
    caption = (
        f"Share of the queueing spells begun in each of {TIME_BINS} time bins that ended with "
        "the player giving up (spells still waiting at the horizon left out): per replication, "
        "then the mean over replications with a ±1 standard-error band." + _time_caption(result)
    )
    centres = _time_centres(result)
    fig, ax = new_axes(*FIGURE_SIZES[file])
    drawn = False
    for policy in result.policies:
        rows = [p for p in frames.parts(policy, (ABANDONMENT,)) if p is not None]
        if rows:  # in percent, as the headline and the tables give it
            drawn |= _band_line(ax, centres, 100 * np.vstack(rows), colours[policy], policy)
    if not drawn:
        return FigureOutcome(file, title, caption, skipped="no queueing spell was decided")
    ax.set_ylim(bottom=0.0)
    style_axes(
        ax,
        title=f"{title}\n{_scenario_line(result)}",
        xlabel=_time_axis(ax, result, "the spell began "),
        ylabel="queueing spells abandoned (%)",
    )
    _band_legend(fig, ax)
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def write_figures(
    result: ExperimentResult,
    out_dir: Path,
    *,
    frames: Frames | None = None,
    curves: pd.DataFrame | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FigureOutcome]:
    """Write the report's figures into ``out_dir``; return what became of each.

    First the trade-off of queue time against fairness, one point per policy
    (:data:`~lobbysim.reporting.tradeoff_figure.TRADEOFF_FIGURE_FILE`, drawn from the summary),
    then the five of :data:`FIGURE_FILES`, then, only for a scenario with a player base, the
    driving rater's error by games played (:mod:`lobbysim.reporting.tenure_figures`), from
    ``curves`` when the caller has computed them (:func:`driver_curves`), and with a retention
    model the retained share by skill decile (:mod:`lobbysim.reporting.retention_figures`), and
    with a world each region's queue time by local hour (:mod:`lobbysim.reporting.region_figures`),
    and with a rule set which rule holds the matches back (:mod:`lobbysim.reporting.rule_figures`).
    ``progress(done, total)`` is called after each figure.
    """
    colours = policy_colours(result.policies)
    frames = Frames(result) if frames is None else frames
    makers = (_queue_times, _draw_probability, _rating_error, _fairness, _abandonment)
    base = result.scenario.base
    count = 1 + len(makers) + (0 if base is None else 1 + (base.retention is not None))
    count += result.scenario.world is not None
    count += result.scenario.matchmaker.rules is not None

    def done(outcome: FigureOutcome) -> None:
        outcomes.append(outcome)
        if progress is not None:
            progress(len(outcomes), count)

    outcomes: list[FigureOutcome] = []
    done(tradeoff_figure(result, Path(out_dir), colours))
    for make in makers:
        done(make(result, frames, Path(out_dir), colours))
    if base is not None:
        curves = driver_curves(result, frames) if curves is None else curves
        done(convergence_figure(result, curves, Path(out_dir), colours))
        if base.retention is not None:
            done(retention_figure(result, Path(out_dir), colours))
    if result.scenario.world is not None:
        done(region_hours_figure(result, frames, Path(out_dir), colours))
    if result.scenario.matchmaker.rules is not None:
        done(rules_figure(result, Path(out_dir), colours))
    return outcomes
