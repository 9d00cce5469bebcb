"""The figure of a run with a world: each region's queue time by its local hour of the day.

One panel per region, one line per policy: the mean queue time of the region's matched
queueing spells that began in each local hour of the day (the region's time zone, from the
scenario's ``world``), after the metrics' start, per replication, then the mean over replications
with its 95% interval; grey bars behind the lines give the share of the region's queueing spells
begun in each hour (the baseline policy's, pooled over replications): where they are low, the
region is quiet, and a latency limit has few players to match within it. The records' ``region``
column (:data:`lobbysim.records.rows.WORLD_COLUMNS`) says whose spell is whose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lobbysim.experiments.figure_data import HOURS, NO_REGIONS, REGION_HOURS
from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import queue_time_unit
from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import marker, save_figure, style_axes
from lobbysim.reporting.run_frames import Frames
from lobbysim.stats.intervals import CONFIDENCE, interval

REGION_FIGURE_FILE = "queue_time_by_region_and_hour.png"


def hourly_queue_times(
    result: ExperimentResult, frames: Frames, policy: str, region: str, offset: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """Return, for one policy and region, the mean matched queue time per local hour of each
    replication (rows: replications; NaN for an hour with none) and the count of the region's
    spells per local hour, summed over replications; None without the records' regions."""
    rows, counts = [], np.zeros(HOURS)
    # per replication (from the spells after the metrics' start): the mean matched queue time
    # and the spells by local hour
    for part in frames.parts(policy, (REGION_HOURS, region, offset)):
        if part is None:
            continue
        if part == NO_REGIONS:
            return None
        means, spells = part
        counts += spells
        rows.append(means)
    if not rows:
        return None
    return np.vstack(rows), counts


def region_hours_figure(
    result: ExperimentResult, frames: Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    """Draw each region's queue time by local hour of the day, one line per policy."""
    title = "Queue time by region and local hour of the day"
    caption = (
        "Per region (its own time zone), the mean queue time of its players' matched queueing "
        "spells begun in each local hour of the day after the metrics' start: per replication, "
        f"then the mean over replications with its {CONFIDENCE:.0%} confidence interval. Grey "
        "bars: the share of the region's queueing spells begun in that hour (the baseline's); "
        "the quiet hours are where a latency limit leaves few players to match."
    )
    world = result.scenario.world
    if world is None:
        return FigureOutcome(
            REGION_FIGURE_FILE, title, caption, skipped="the scenario has no world"
        )
    fig = Figure(figsize=(8.0, 2.6 * len(world.regions) + 1.0), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(world.regions), 1, sharex=True))
    x = np.arange(HOURS, dtype=float)
    width = 0.5 / max(len(result.policies), 1)
    # the comparison's one unit of queue time (seconds when every mean wait is under 2 min)
    scale, unit = queue_time_unit(result.metrics)
    drawn = False
    for r, (ax, region) in enumerate(zip(axes, world.regions, strict=True)):
        volume = ax.twinx()
        for index, policy in enumerate(result.policies):
            data = hourly_queue_times(result, frames, policy, region.name, region.utc_offset_hours)
            if data is None:
                continue
            per_run, counts = data
            per_run = per_run * scale
            if index == 0 and counts.sum() > 0:
                volume.bar(x, counts / counts.sum(), color="grey", alpha=0.25, width=0.9)
            stats = [interval(per_run[:, h]) for h in range(HOURS)]
            mean = np.array([s[0] for s in stats])
            if not np.isfinite(mean).any():
                continue
            low = np.array([s[3] for s in stats])
            high = np.array([s[4] for s in stats])
            yerr = np.vstack([mean - low, high - mean])
            offset = (index - (len(result.policies) - 1) / 2) * width
            ax.errorbar(
                x + offset,
                mean,
                yerr=np.where(np.isfinite(yerr), yerr, 0.0),
                color=colours[policy],
                marker=marker(index),
                markersize=3,
                capsize=2,
                label=policy,
            )
            drawn = True
        ax.set_zorder(volume.get_zorder() + 1)  # the lines over the bars
        ax.patch.set_visible(False)
        volume.set_yticks([])
        volume.set_ylim(bottom=0.0)
        ax.set_ylim(bottom=0.0)
        last = r == len(world.regions) - 1
        style_axes(
            ax,
            title=f"{region.name} (UTC{region.utc_offset_hours:+g}, {region.share:.0%} of players)",
            xlabel="local hour of the day the spell began" if last else None,
            ylabel=f"queue time ({unit})",
        )
    if not drawn:
        reason = "no region has a matched queueing spell after the metrics' start"
        return FigureOutcome(REGION_FIGURE_FILE, title, caption, skipped=reason)
    axes[-1].set_xticks(x[::2], [str(h) for h in range(0, HOURS, 2)])
    replications = len(result.seeds)
    fig.suptitle(
        f'{title}\nscenario "{result.scenario.name}", {replications} '
        f"replication{'s' if replications != 1 else ''} per policy"
    )
    handles, _ = axes[0].get_legend_handles_labels()
    bars = f"error bars: {CONFIDENCE:.0%} CI over replications"
    handles.append(Line2D([], [], color="grey", marker="|", linestyle="none", label=bars))
    handles.append(Patch(color="grey", alpha=0.25, label="share of the region's spells"))
    # below the panels, where it covers no line
    fig.legend(handles=handles, fontsize="small", loc="outside lower center", ncols=3)
    path = save_figure(fig, out_dir / REGION_FIGURE_FILE)
    return FigureOutcome(REGION_FIGURE_FILE, title, caption, path=path)
