"""The figures of the sweep report: the trade-offs the headline states, panels per key.

- ``tradeoff_draw.png``: the headline's trade-off, drawn from its own computation
  (:func:`~lobbysim.reporting.sweep_headline.headline_tradeoffs`): one panel per setting of the
  keys the matchmaker does not choose (all cells in one panel when every key is a choice),
  each choice (a cell under a real policy) a point of mean queue time (lower is better) against
  the headline's fairness metric (the true skill gap, else the true draw probability), with
  95% intervals both ways, and the Pareto frontier the headline lists for that setting;
- ``tradeoff_rating.png``: the same against the driving rater's rating RMSE (lower is better),
  its frontier by the same computation
  (:func:`~lobbysim.reporting.sweep_headline.setting_tradeoffs`), when that rater has one;
- ``by_<key>.png`` per swept key: small panels of the headline metrics against that key's
  values, one line per policy, the other swept keys averaged over
  (:mod:`lobbysim.reporting.sweep_key_figures`).

The bounds ``uniform_random`` and ``oracle`` are references, never choices: the trade-off
figures leave them out, as the headline does. Queue times are in the sweep's one unit
(``SweepHeadline.seconds``: seconds when every run's mean wait is under two minutes).
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
from lobbysim.reporting.figures import (
    fit_tick_labels,
    marker,
    policy_colours,
    save_figure,
    titled,
)
from lobbysim.reporting.headline import metric_label
from lobbysim.reporting.sweep_headline import (
    QUEUE,
    SweepHeadline,
    Tradeoff,
    headline_tradeoffs,
    setting_tradeoffs,
)
from lobbysim.reporting.sweep_key_figures import axis_label, by_key_figure
from lobbysim.reporting.sweep_summary import (
    DRAW_METRIC,
    by_key_files,
    has_values,
    policies_in,
)
from lobbysim.stats.intervals import CONFIDENCE

TRADEOFF_DRAW_FILE = "tradeoff_draw.png"
TRADEOFF_RATING_FILE = "tradeoff_rating.png"

PANEL_COLUMNS = 3
"""At most this many settings' panels side by side in a trade-off figure."""


def _choice_markers(
    tradeoffs: Sequence[Tradeoff], cell_values: dict[int, tuple[str, ...]]
) -> dict[tuple[str, ...], str]:
    """Return a marker per combination of the choice keys' values, in first-met order."""
    combos = dict.fromkeys(cell_values.get(c.cell, ()) for t in tradeoffs for c in t.group.choices)
    return {combo: marker(k) for k, combo in enumerate(combos)}


def _tradeoff_panel(
    ax: Axes,
    tradeoff: Tradeoff,
    *,
    scale: float,
    colours: dict[str, str],
    markers: dict[tuple[str, ...], str],
    cell_values: dict[int, tuple[str, ...]],
) -> None:
    """Draw one setting's choices with their intervals, and its frontier as a ringed step line
    (the choices' markers have the gid ``choice:<cell>:<policy>``, the rings ``frontier``)."""
    metric = tradeoff.metric
    for choice in tradeoff.group.choices:
        x, y = choice.levels[QUEUE], choice.levels[metric]
        if not (math.isfinite(x.mean) and math.isfinite(y.mean)):
            continue
        colour = colours[choice.policy]
        xerr = yerr = None
        if math.isfinite(x.low) and math.isfinite(x.high):
            xerr = [[(x.mean - x.low) * scale], [(x.high - x.mean) * scale]]
        if math.isfinite(y.low) and math.isfinite(y.high):
            yerr = [[y.mean - y.low], [y.high - y.mean]]
        if xerr is not None or yerr is not None:
            ax.errorbar(
                [x.mean * scale],
                [y.mean],
                xerr=xerr,
                yerr=yerr,
                fmt="none",
                ecolor=colour,
                elinewidth=0.9,
                capsize=2.5,
                alpha=0.6,
                zorder=2,
            )
        ax.plot(
            [x.mean * scale],
            [y.mean],
            linestyle="none",
            marker=markers[cell_values.get(choice.cell, ())],
            markersize=7,
            color=colour,
            zorder=3,
            gid=f"choice:{choice.cell}:{choice.policy}",
        )
    fx = np.array([s.choice.levels[QUEUE].mean * scale for s in tradeoff.frontier])
    fy = np.array([s.choice.levels[metric].mean for s in tradeoff.frontier])
    if fx.size:
        ax.step(fx, fy, where="post", color="black", linestyle="--", linewidth=1.2, zorder=1)
        ax.plot(
            fx,
            fy,
            linestyle="none",
            marker="o",
            markersize=14,
            markerfacecolor="none",
            markeredgecolor="black",
            markeredgewidth=1.4,
            zorder=4,
            gid="frontier",
        )
    ax.grid(True, alpha=0.3)
    ax.margins(0.12)


def _setting_title(tradeoff: Tradeoff) -> str:
    values = tradeoff.group.values
    if not values:
        return f"all {len(tradeoff.group.cells)} cells"
    return ", ".join(f"{k}={v}" for k, v in values.items())


def _tradeoff_legend(
    fig: Figure,
    policies: Sequence[str],
    colours: dict[str, str],
    markers: dict[tuple[str, ...], str],
    choice_keys: Sequence[str],
    cells_of: dict[tuple[str, ...], list[int]],
) -> None:
    """Add the legend below the panels: policies by colour, choices by marker, the frontier."""
    handles: list[Any] = [
        Line2D([], [], linestyle="none", marker="s", color=colours[p], label=p) for p in policies
    ]
    if choice_keys and len(markers) > 1:
        for combo, shape in markers.items():
            words = ", ".join(f"{k}={v}" for k, v in zip(choice_keys, combo, strict=True))
            cells = ", ".join(map(str, cells_of.get(combo, [])))
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker=shape,
                    color="grey",
                    label=f"{words} (cell{'s' if ',' in cells else ''} {cells})",
                )
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
    fig.legend(
        handles=handles,
        fontsize="small",
        loc="outside lower center",
        ncols=min(3, len(handles)),
    )


def _tradeoff_figure(
    tradeoffs: Sequence[Tradeoff],
    *,
    outcome: FigureOutcome,
    out_dir: Path,
    driver: str,
    policies: Sequence[str],
    headline: SweepHeadline,
    scenario_line: str,
    scale: float,
) -> FigureOutcome:
    """Draw one trade-off figure: a panel per setting, its choices and its frontier; queue
    times (minutes) times ``scale`` (60: in seconds)."""
    seconds = scale == 60.0
    real = [p for p in policies if any(c.policy == p for t in tradeoffs for c in t.group.choices)]
    colours = policy_colours(policies)
    cell_values = dict(headline.cell_values)
    markers = _choice_markers(tradeoffs, cell_values)
    cells_of: dict[tuple[str, ...], list[int]] = {}
    for cell, combo in sorted(cell_values.items()):
        cells_of.setdefault(combo, []).append(cell)
    columns = min(PANEL_COLUMNS, len(tradeoffs))
    rows = math.ceil(len(tradeoffs) / columns)
    fig = Figure(figsize=(max(4.6 * columns, 7.5), 3.9 * rows + 1.6), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    metric = tradeoffs[0].metric
    for k, tradeoff in enumerate(tradeoffs):
        ax = axes[k // columns][k % columns]
        _tradeoff_panel(
            ax, tradeoff, scale=scale, colours=colours, markers=markers, cell_values=cell_values
        )
        if len(tradeoffs) > 1 or tradeoff.group.values:
            ax.set_title(_setting_title(tradeoff), fontsize="medium")
        ax.set_xlabel(axis_label(QUEUE, driver, seconds=seconds), fontsize="small")
        ax.set_ylabel(axis_label(metric, driver), fontsize="small")
    for k in range(len(tradeoffs), rows * columns):
        axes[k // columns][k % columns].set_axis_off()
    _tradeoff_legend(fig, real, colours, markers, headline.choice_keys, cells_of)
    fig.suptitle(titled(outcome.title, scenario_line))
    fit_tick_labels(fig)
    path = save_figure(fig, out_dir / outcome.file)
    return FigureOutcome(outcome.file, outcome.title, outcome.caption, path=path)


_TRADEOFF_CAPTION = (
    "{panels} each choice (a cell under a real policy; colour: the policy{markers}) is the mean "
    "over replications of its mean queue time and {y}, with {confidence:.0%} confidence "
    "intervals in both directions (none with a single replication). Ringed points are the "
    "setting's Pareto frontier (dashed step line){which}: no other choice of the setting has "
    "{better_y} and a mean queue time as short, both at least as good and one strictly better. "
    "The bounds uniform_random and oracle are references, not choices, and are not drawn."
)


def _tradeoff_caption(
    tradeoffs: Sequence[Tradeoff],
    y_words: str,
    better_y: str,
    choice_keys: Sequence[str],
    *,
    headline: bool,
) -> str:
    if len(tradeoffs) > 1 or (tradeoffs and tradeoffs[0].group.values):
        keys = ", ".join(tradeoffs[0].group.values) if tradeoffs else ""
        panels = (
            f"One panel per setting of what the matchmaker does not choose ({keys}); choices "
            "are compared within a setting, never across. In each,"
        )
    else:
        panels = "Every cell is a choice of the matchmaker: one panel;"
    return _TRADEOFF_CAPTION.format(
        panels=panels,
        markers=f"; marker: the value of {', '.join(choice_keys)}" if choice_keys else "",
        y=y_words,
        confidence=CONFIDENCE,
        which=", the one the headline lists" if headline else "",
        better_y=better_y,
    )


def _tradeoff_skip_reason(results: pd.DataFrame, y: str, driver: str) -> str | None:
    """Return why a trade-off figure against ``y`` cannot be drawn, or None."""
    if not has_values(results, y):
        if y == f"{driver}.rating_rmse":
            return (
                f"the driving rater {driver} has no rating_rmse (the column is missing or "
                "has no values: a rater not on the true-skill scale has no RMSE)"
            )
        return f"no run has a {y}"
    if not has_values(results, QUEUE):
        return f"no run has a {QUEUE}"
    return None


def _drawn(tradeoffs: Sequence[Tradeoff]) -> list[Tradeoff]:
    """Return the trade-offs with at least one choice that has both metrics."""
    return [
        t
        for t in tradeoffs
        if any(
            math.isfinite(c.levels[QUEUE].mean) and math.isfinite(c.levels[t.metric].mean)
            for c in t.group.choices
        )
    ]


def _tradeoff_outcomes(
    results: pd.DataFrame,
    grid_keys: Sequence[str],
    headline: SweepHeadline,
    out_dir: Path,
    *,
    driver: str,
    scenario_line: str,
) -> list[FigureOutcome]:
    """Draw (or skip) the two trade-off figures."""
    policies = policies_in(results) if not results.empty else []
    fairness = headline.fairness or DRAW_METRIC
    rating = f"{driver}.rating_rmse"
    fair_words = metric_label(fairness)
    specs = (
        (
            TRADEOFF_DRAW_FILE,
            fairness,
            f"Trade-off per setting: mean queue time against {fair_words}",
            f"the {fair_words}",
            f"a {fair_words} as good",
            True,
        ),
        (
            TRADEOFF_RATING_FILE,
            rating,
            f"Trade-off per setting: mean queue time against the rating error of {driver}",
            f"the {driver} rating RMSE",
            f"a {driver} rating RMSE as low",
            False,
        ),
    )
    outcomes = []
    for file, y, title, y_words, better_y, stated in specs:
        reason = _tradeoff_skip_reason(results, y, driver)
        tradeoffs: list[Tradeoff] = []
        if reason is None:
            every = (
                headline_tradeoffs(headline) if stated else setting_tradeoffs(results, grid_keys, y)
            )
            tradeoffs = _drawn(every)
            if not tradeoffs:
                reason = f"no choice (a cell under a real policy) has both {QUEUE} and {y}"
        caption = _tradeoff_caption(
            tradeoffs, y_words, better_y, headline.choice_keys, headline=stated
        )
        if reason is not None:
            outcomes.append(FigureOutcome(file, title, caption, skipped=reason))
            continue
        outcomes.append(
            _tradeoff_figure(
                tradeoffs,
                outcome=FigureOutcome(file, title, caption),
                out_dir=out_dir,
                driver=driver,
                policies=policies,
                headline=headline,
                scenario_line=scenario_line,
                scale=60.0 if headline.seconds else 1.0,
            )
        )
    return outcomes


def write_sweep_figures(
    results: pd.DataFrame,
    grid_keys: Sequence[str],
    headline: SweepHeadline,
    out_dir: Path,
    *,
    driver: str,
    scenario_line: str = "",
) -> list[FigureOutcome]:
    """Write the sweep's figures into ``out_dir``; return what became of each.

    Args:
        results: the per-run results.
        grid_keys: the swept keys.
        headline: :func:`~lobbysim.reporting.sweep_headline.build_sweep_headline` of
            ``results``: the trade-off figure draws its frontiers.
        out_dir: an existing folder.
        driver: the driving rater.
        scenario_line: a line naming the scenario, under each figure's title if given.

    Returns:
        The two trade-off figures, then one per swept key (in the order of ``grid_keys``),
        each either written or skipped with the reason.
    """
    out_dir = Path(out_dir)
    outcomes = _tradeoff_outcomes(
        results, grid_keys, headline, out_dir, driver=driver, scenario_line=scenario_line
    )
    policies = policies_in(results) if not results.empty else []
    for key, file in by_key_files(grid_keys).items():
        if results.empty:
            outcomes.append(
                FigureOutcome(file, f"Headline metrics by {key}", "", skipped="no run succeeded")
            )
            continue
        outcomes.append(
            by_key_figure(
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
