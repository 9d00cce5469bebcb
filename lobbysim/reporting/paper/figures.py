"""The report's matplotlib figures: one PNG per metric and a 2x2 ``overview.png``.

Part of :mod:`lobbysim.reporting.paper` (no simulation): per-game means over paths with ±1 standard
error bands, window boundaries and the ideal reference values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lobbysim.paper import METRICS, PaperResult
from lobbysim.reporting.figures import new_axes, policy_colours, save_figure

METRIC_LABELS = {
    "draw_prob_true": "true draw probability (eq. 14)",
    "sq_error": "squared error (mu_0^n - s_0)^2",
    "skill_diff": "skill difference s_0 - s_opponent",
    "win": "player 0 win rate",
}
"""Axis labels of the metrics, in words."""

REFERENCE_LINES = {"skill_diff": 0.0, "win": 0.5}
"""Dashed reference lines: the ideal skill difference and win rate."""

MOVING_AVERAGE_GAMES = 20
"""Games in the trailing moving average drawn over the (very noisy) per-game win rate."""


def _case_title(result: PaperResult) -> str:
    study = result.study
    priors = ", equal priors" if study.equal_priors else ""
    return f"case {study.case}{priors}, {result.paths} paths, seed {result.seed}"


def _draw_metric(
    ax: Axes, result: PaperResult, metric: str, colours: dict[str, str], *, title: str
) -> list[Any]:
    """Draw one metric on ``ax``; return the legend handles."""
    handles: list[Any] = []
    smooth = metric == "win"
    for name in result.policies:
        frame = result.per_game[result.per_game["policy"] == name]
        games = frame["game"].to_numpy()
        mean = frame[metric].to_numpy()
        se = frame[f"{metric}_se"].to_numpy()
        colour = colours[name]
        ax.fill_between(games, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
        if smooth:
            ax.plot(games, mean, color=colour, linewidth=0.6, alpha=0.5)
            average = pd.Series(mean).rolling(MOVING_AVERAGE_GAMES, min_periods=1).mean()
            ax.plot(games, average.to_numpy(), color=colour, linewidth=2.0)
        else:
            ax.plot(games, mean, color=colour, linewidth=1.5)
        handles.append(Line2D([], [], color=colour, linewidth=2.0, label=name))
    handles.append(Patch(color="grey", alpha=0.3, label="band: ±1 standard error over paths"))
    if smooth:
        handles.append(
            Line2D([], [], color="grey", linewidth=0.6, alpha=0.7, label="thin: per-game mean")
        )
        handles.append(
            Line2D(
                [],
                [],
                color="grey",
                linewidth=2.0,
                label=f"thick: {MOVING_AVERAGE_GAMES}-game trailing moving average",
            )
        )
    if metric in REFERENCE_LINES:
        value = REFERENCE_LINES[metric]
        ax.axhline(value, color="black", linestyle="--", linewidth=1.0)
        handles.append(
            Line2D(
                [], [], color="black", linestyle="--", linewidth=1.0, label=f"ideal value {value:g}"
            )
        )
    for first, _ in result.study.windows[1:]:
        ax.axvline(first - 0.5, color="grey", linestyle=":", linewidth=0.8)
    handles.append(
        Line2D([], [], color="grey", linestyle=":", linewidth=0.8, label="window boundaries")
    )
    ax.set_xlim(1, result.study.n_games)
    ax.set_xlabel("game n")
    ax.set_ylabel(METRIC_LABELS[metric])
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return handles


def write_figures(result: PaperResult, out_dir: Path) -> list[Path]:
    """Write one PNG per metric and ``overview.png`` (a 2x2 grid) into ``out_dir``."""
    colours = policy_colours(result.policies)
    written: list[Path] = []
    for metric in METRICS:
        fig, ax = new_axes()
        title = f"{METRIC_LABELS[metric]}\n{_case_title(result)}"
        handles = _draw_metric(ax, result, metric, colours, title=title)
        ax.legend(handles=handles, fontsize="small", loc="best")
        written.append(save_figure(fig, out_dir / f"{metric}.png"))

    fig = Figure(figsize=(13.0, 9.5), layout="constrained")
    axes = fig.subplots(2, 2)
    panel_handles: list[Any] = []
    for ax, metric in zip(axes.flat, METRICS, strict=True):
        panel_handles = _draw_metric(ax, result, metric, colours, title=METRIC_LABELS[metric])
    # The last panel (win) has the fullest legend; the ideal values differ per panel.
    shared = [h for h in panel_handles if not str(h.get_label()).startswith("ideal value")]
    shared.append(
        Line2D(
            [],
            [],
            color="black",
            linestyle="--",
            linewidth=1.0,
            label="ideal value (0.5 win rate, 0 skill difference)",
        )
    )
    fig.legend(handles=shared, loc="outside lower center", ncol=4, fontsize="small")
    fig.suptitle(f"Paper study (Section 4): {_case_title(result)}")
    written.append(save_figure(fig, out_dir / "overview.png"))
    return written
