"""The retention figure of a run with a retention model: who stays and who plays, by skill decile.

Three panels side by side (a low figure, so that the report stays short), one line per policy,
with the legend below them, by true skill decile of the members in the base when the
metrics start (the cohort of :mod:`lobbysim.sim.retention`): the share still in the base at the
end (``retained_decile_1`` lowest to ``retained_decile_10``), the churn per week, which is
``(1 - retained_decile_k) / weeks`` of the same replication, and the visits per member and week
(``visits_per_member_week_decile_k``); each the mean over replications with its 95% interval.
Next to fairness and queue time it answers the question of Activision's 2024 white paper on
skill in matchmaking: does looser skill matching lose the weaker players?
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import marker, save_figure, style_axes
from lobbysim.stats.intervals import CONFIDENCE, interval

RETENTION_FIGURE_FILE = "retention_by_skill_decile.png"
RETENTION_SIZE = (12.0, 4.6)
"""The figure's size in inches: three panels in a row."""
DECILES = range(1, 11)
MINUTES_PER_WEEK = 7 * 1440.0

Panel = tuple[str, Callable[[pd.DataFrame, int], np.ndarray]]


def _panels(weeks: float) -> list[Panel]:
    """Return each panel's y label and how it reads decile k's values from the metrics rows."""

    def retained(rows: pd.DataFrame, k: int) -> np.ndarray:
        return rows[f"retained_decile_{k}"].to_numpy(dtype=float)

    def churn(rows: pd.DataFrame, k: int) -> np.ndarray:
        return (1.0 - retained(rows, k)) / weeks

    def visits(rows: pd.DataFrame, k: int) -> np.ndarray:
        return rows[f"visits_per_member_week_decile_{k}"].to_numpy(dtype=float)

    return [
        ("share still in the base at the end", retained),
        ("share leaving for good per week", churn),
        ("visits per member and week", visits),
    ]


def _draw_panel(ax: Axes, result: ExperimentResult, panel: Panel, colours: dict[str, str]) -> None:
    """Draw one panel: a line with interval bars per policy, the policies side by side."""
    label, values = panel
    x = np.array(list(DECILES), dtype=float)
    width = 0.6 / max(len(result.policies), 1)
    for index, policy in enumerate(result.policies):
        rows = result.metrics[result.metrics.policy == policy]
        stats = [interval(values(rows, k)) for k in DECILES]
        mean = np.array([s[0] for s in stats])
        low = np.array([s[3] for s in stats])
        high = np.array([s[4] for s in stats])
        offset = (index - (len(result.policies) - 1) / 2) * width
        ax.errorbar(
            x + offset,
            mean,
            yerr=np.vstack([mean - low, high - mean]),
            color=colours[policy],
            marker=marker(index),
            capsize=2,
            label=policy,
        )
    style_axes(ax, title=label, xlabel="true skill decile (1: weakest)")
    ax.set_xticks(x, [str(k) for k in DECILES])


def retention_figure(
    result: ExperimentResult, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    """Draw retention, churn and visits by true skill decile, one line per policy."""
    title = "Retention, churn and visits by true skill decile"
    caption = (
        "Of the members in the base when the metrics start, by their true skill decile then "
        "(1: the weakest tenth): the share who have not left for good by the end, the share "
        "leaving per week, and their visits per week; the mean over replications with its "
        f"{CONFIDENCE:.0%} confidence interval. The policies share the replication seeds, so "
        "the metrics table's paired differences are sharper than the overlap of these "
        "intervals suggests."
    )
    columns = [
        f"{m}_{k}" for m in ("retained_decile", "visits_per_member_week_decile") for k in DECILES
    ]
    if not set(columns) <= set(result.metrics.columns):
        reason = "the scenario has no retention model (base.retention)"
        return FigureOutcome(RETENTION_FIGURE_FILE, title, caption, skipped=reason)
    scenario = result.scenario
    weeks = (scenario.horizon - scenario.metrics_start) / MINUTES_PER_WEEK
    fig = Figure(figsize=RETENTION_SIZE, layout="constrained")
    axes = fig.subplots(1, 3, sharex=True)
    for ax, panel in zip(axes, _panels(weeks), strict=True):
        _draw_panel(ax, result, panel, colours)
    replications = len(result.seeds)
    fig.suptitle(
        f'{title}\nscenario "{scenario.name}", {replications} '
        f"replication{'s' if replications != 1 else ''} per policy"
    )
    handles, _ = axes[0].get_legend_handles_labels()
    bars = f"error bars: {CONFIDENCE:.0%} CI over replications"
    handles.append(Line2D([], [], color="grey", marker="|", linestyle="none", label=bars))
    fig.legend(
        handles=handles, fontsize="small", loc="outside lower center", ncols=min(len(handles), 4)
    )
    path = save_figure(fig, out_dir / RETENTION_FIGURE_FILE)
    return FigureOutcome(RETENTION_FIGURE_FILE, title, caption, path=path)
