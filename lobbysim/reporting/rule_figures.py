"""The figure of a run with a rule set: which rule holds your matches back.

Three panels from the rules' telemetry (:mod:`lobbysim.sim.rule_pass`), each value per
replication, then the mean over replications with its 95% interval:

(a) per rule, the share of the turned-down candidates it was the first to turn down
    (``rule_rejected_share@<rule>``, summing to 1 over the rules): the rule that rejects most
    is the one that holds matches back;
(b) per rule and policy, the share of games formed at each of the rule's steps, its first limit
    and its expansions (``rule_games_share@<rule>@step<k>``, summing to 1 over the steps): a
    rule whose games mostly form after an expansion only lets matches through once relaxed;
(c) per rule and step, the mean queue time of the players of the games formed at that step
    (``rule_queue_time@<rule>@step<k>``): what waiting for each expansion costs.

The rules and their step counts (the first limit and its expansions) come from the scenario's
``matchmaker.rules``. The intervals are cut to the metric's support, as in the summary
(:func:`lobbysim.stats.metrics.metric_support`), so the figure and the report's table agree.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import queue_time_unit
from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import marker, save_figure, style_axes
from lobbysim.scenario import Scenario
from lobbysim.stats.intervals import CONFIDENCE, interval
from lobbysim.stats.metrics import metric_support

RULES_FIGURE_FILE = "rules_holding_back.png"

REJECTED = "rejected_share"
GAMES = "games_share"
QUEUE = "queue_time"
QUANTITIES = (REJECTED, GAMES, QUEUE)
"""The quantities of :func:`rule_panel_data`, one per panel, in panel order."""

PANEL_COLUMNS = ("quantity", "rule", "policy", "step", "metric", "mean", "n", "ci_low", "ci_high")
"""The columns of :func:`rule_panel_data`."""

_WRAP = 14
"""Characters per line of a rule name in a tick label."""

_PANEL_CHARS = 90
"""About the characters of a rule name (small, bold) that fit across panel (c)."""


def rule_steps(scenario: Scenario) -> list[tuple[str, int]]:
    """Return each rule's name and its number of steps (the first limit and its expansions),
    in the scenario's order; none without a rule set."""
    rules = scenario.matchmaker.rules
    if rules is None:
        return []
    return [(rule.name, len(rule.expansions) + 1) for rule in rules]


def step_label(step: int) -> str:
    """Return the label of a rule's step: ``first limit``, then ``expansion 1``, ..."""
    return "first limit" if step == 0 else f"expansion {step}"


def rule_metric(quantity: str, rule: str, step: int | None = None) -> str:
    """Return the metric column of a quantity of a rule (and step), e.g.
    ``rule_games_share@skill@step1``."""
    name = f"rule_{quantity}@{rule}"
    return name if step is None else f"{name}@step{step}"


def rule_panel_data(
    metrics: pd.DataFrame, policies: Sequence[str], rules: Sequence[tuple[str, int]]
) -> pd.DataFrame:
    """Return the data of the three panels: per quantity, rule, policy (and step), the mean
    over the policy's replications with its 95% interval.

    Args:
        metrics: one row per policy and replication (a ``policy`` column), the rules' metrics
            as columns (a missing column counts as no data).
        policies: the policies, in order.
        rules: each rule's name and number of steps (:func:`rule_steps`).

    Returns:
        A frame of :data:`PANEL_COLUMNS`: ``quantity`` one of :data:`QUANTITIES`, ``step`` the
        expansion step (0: the first limit; -1 for the rejected share, which has none),
        ``metric`` the column read; ``mean``, ``ci_low`` and ``ci_high`` NaN without data (the
        interval also with a single replication), the interval cut to the metric's support
        like the summary's. The rows: the rejected shares (rule by rule, policy by policy),
        then the games shares, then the queue times (rule, policy, step).
    """
    rows = []

    def add(quantity: str, rule: str, policy: str, step: int) -> None:
        metric = rule_metric(quantity, rule, None if step < 0 else step)
        chosen = metrics[metrics["policy"] == policy]
        values = chosen[metric].to_numpy(dtype=float) if metric in metrics.columns else np.array([])
        mean, _, n, low, high = interval(values, metric_support(metric))
        rows.append((quantity, rule, policy, step, metric, mean, n, low, high))

    for rule, _ in rules:
        for policy in policies:
            add(REJECTED, rule, policy, -1)
    for quantity in (GAMES, QUEUE):
        for rule, steps in rules:
            for policy in policies:
                for step in range(steps):
                    add(quantity, rule, policy, step)
    return pd.DataFrame(rows, columns=list(PANEL_COLUMNS))


def _wrapped(name: str, width: int = _WRAP) -> str:
    return textwrap.fill(name, width=width, break_long_words=True, break_on_hyphens=True)


def _no_data(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="grey")


def _yerr(rows: pd.DataFrame) -> np.ndarray:
    """Return the error bars of rows (0 where there is no interval)."""
    mean = rows["mean"].to_numpy(dtype=float)
    yerr = np.vstack(
        [mean - rows["ci_low"].to_numpy(float), rows["ci_high"].to_numpy(float) - mean]
    )
    return np.where(np.isfinite(yerr), yerr, 0.0)


def _rejections_panel(
    ax: Axes,
    data: pd.DataFrame,
    policies: Sequence[str],
    rules: Sequence[tuple[str, int]],
    colours: dict[str, str],
) -> None:
    """Panel (a): per rule, a bar per policy of its share of the rejections."""
    x = np.arange(len(rules), dtype=float)
    width = 0.8 / max(len(policies), 1)
    for index, policy in enumerate(policies):
        rows = data[(data["quantity"] == REJECTED) & (data["policy"] == policy)]
        offset = (index - (len(policies) - 1) / 2) * width
        mean = rows["mean"].to_numpy(dtype=float)
        shown = np.isfinite(mean)
        ax.bar(
            (x + offset)[shown],
            mean[shown],
            width=width,
            yerr=_yerr(rows)[:, shown],
            color=colours[policy],
            capsize=2,
            label=policy,
        )
    if not np.isfinite(data.loc[data["quantity"] == REJECTED, "mean"]).any():
        _no_data(ax, "no candidate was turned down after the metrics' start")
    ax.set_ylim(0.0, 1.05)
    ax.set_xlim(-0.6, len(rules) - 0.4)
    _rule_ticks(ax, x, [name for name, _ in rules])
    style_axes(
        ax,
        title="(a) Share of the turned-down candidates each rule was the first to turn down",
        ylabel="share of rejections",
        grid="y",
    )


def _rule_ticks(ax: Axes, x: np.ndarray, names: Sequence[str]) -> None:
    """Label the x ticks with the rule names, wrapped, and rotated when there are many."""
    many = len(names) > 6 or max((len(n) for n in names), default=0) > 2 * _WRAP
    if many:
        ax.set_xticks(x, names, rotation=30, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(x, [_wrapped(n) for n in names])


def _step_colours(count: int) -> list[tuple[float, float, float, float]]:
    """Return a colour per step: light (the first limit) to dark (the last expansion)."""
    cmap = colormaps["viridis_r"]
    return [cmap(v) for v in np.linspace(0.15, 0.9, max(count, 1))]


def _steps_panel(
    ax: Axes,
    data: pd.DataFrame,
    policies: Sequence[str],
    rules: Sequence[tuple[str, int]],
    colours: dict[str, str],
) -> list[Patch]:
    """Panel (b): a horizontal bar per rule and policy, stacked by the share of games formed
    at each step; return the legend's patches (one per step)."""
    most = max(steps for _, steps in rules)
    shades = _step_colours(most)
    games = data[data["quantity"] == GAMES]
    ticks, labels, tick_colours = [], [], []
    y = 0.0
    for rule, _ in rules:
        ax.text(0.0, y - 0.55, rule, fontweight="bold", fontsize="small", va="bottom")
        for policy in policies:
            rows = games[(games["rule"] == rule) & (games["policy"] == policy)]
            shares = rows["mean"].to_numpy(dtype=float)
            if np.isfinite(shares).any():
                left = 0.0
                for step, share in enumerate(shares):
                    if not math.isfinite(share) or share <= 0:
                        continue
                    ax.barh(y, share, left=left, height=0.7, color=shades[step])
                    if share >= 0.08:
                        text = f"{share:.0%}"
                        dark = step >= most / 2
                        ax.text(
                            left + share / 2,
                            y,
                            text,
                            ha="center",
                            va="center",
                            fontsize="x-small",
                            color="white" if dark else "black",
                        )
                    left += share
            else:
                ax.text(0.01, y, "no games", va="center", fontsize="x-small", color="grey")
            ticks.append(y)
            labels.append(policy)
            tick_colours.append(colours[policy])
            y += 1.0
        y += 0.8  # room for the next rule's name
    ax.set_yticks(ticks, labels, fontsize="small")
    for label, colour in zip(ax.get_yticklabels(), tick_colours, strict=True):
        label.set_color(colour)
    ax.set_ylim(y - 0.5, -1.4)  # the first rule on top
    ax.set_xlim(0.0, 1.0)
    style_axes(
        ax,
        title="(b) Share of each rule's games formed at each step (mean over replications)",
        xlabel="share of games",
        grid="x",
    )
    return [Patch(color=shades[k], label=step_label(k)) for k in range(most)]


def _queue_panel(
    ax: Axes,
    data: pd.DataFrame,
    policies: Sequence[str],
    rules: Sequence[tuple[str, int]],
    colours: dict[str, str],
    unit: tuple[float, str] = (1.0, "min"),
) -> None:
    """Panel (c): per rule and step, a point per policy with its interval: the mean queue time
    of the games formed at that step, in ``unit`` (a scale from minutes and its name: the
    comparison's one unit, :func:`~lobbysim.reporting.answer.queue_time_unit`)."""
    scale, shown_unit = unit
    queue = data[data["quantity"] == QUEUE]
    queue = queue.assign(**{c: queue[c] * scale for c in ("mean", "ci_low", "ci_high")})
    positions: dict[tuple[str, int], float] = {}
    x = 0.0
    groups = []
    for rule, steps in rules:
        start = x
        for step in range(steps):
            positions[(rule, step)] = x
            x += 1.0
        groups.append((rule, start, x - 1.0))
        x += 0.6  # a gap between rules
    width = 0.6 / max(len(policies), 1)
    for index, policy in enumerate(policies):
        rows = queue[queue["policy"] == policy]
        mean = rows["mean"].to_numpy(dtype=float)
        shown = np.isfinite(mean)
        if not shown.any():
            continue
        at = np.array(
            [positions[(r, int(s))] for r, s in zip(rows["rule"], rows["step"], strict=True)]
        )
        offset = (index - (len(policies) - 1) / 2) * width
        ax.errorbar(
            (at + offset)[shown],
            mean[shown],
            yerr=_yerr(rows)[:, shown],
            color=colours[policy],
            marker=marker(index),
            linestyle="none",
            capsize=2,
            label=policy,
        )
    finite = queue[np.isfinite(queue["mean"])]
    span = x - 0.9 + 0.7  # the x axis' length, in slots
    names = [
        _wrapped(rule, max(4, int((last - first + 1.4) / span * _PANEL_CHARS)))
        for rule, first, last in groups
    ]
    lines = max(name.count("\n") + 1 for name in names)
    top = float(np.nanmax(finite[["mean", "ci_high"]].to_numpy(float))) if len(finite) else 1.0
    ax.set_ylim(0.0, (1.15 + 0.1 * lines) * top if top > 0 else 1.0)
    if finite.empty:
        _no_data(ax, "no game was formed after the metrics' start")
    for index, ((_, first, last), name) in enumerate(zip(groups, names, strict=True)):
        ax.text(
            (first + last) / 2,
            0.97,
            name,
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="top",
            fontweight="bold",
            fontsize="small",
        )
        if index:
            ax.axvline(first - 0.8, color="grey", linewidth=0.8, alpha=0.5)
    ax.set_xlim(-0.7, x - 0.9)
    ax.set_xticks(
        [positions[key] for key in positions],
        [step_label(step) for _, step in positions],
        rotation=30,
        ha="right",
        rotation_mode="anchor",
        fontsize="small",
    )
    style_axes(
        ax,
        title="(c) Mean queue time of the players of the games formed at each step",
        ylabel=f"queue time ({shown_unit})",
        grid="y",
    )


def rules_figure(result: ExperimentResult, out_dir: Path, colours: dict[str, str]) -> FigureOutcome:
    """Draw which rule holds the matches back: rejections, games by step, queue time by step."""
    title = "Which rule holds your matches back"
    caption = (
        "From the rules' telemetry after the metrics' start, per replication, then the mean "
        f"over replications with its {CONFIDENCE:.0%} confidence interval (error bars). (a) Of "
        "the candidates the matchmaker turned down, the share each rule was the first to turn "
        "down. (b) Per rule, the share of games formed at its first limit and at each "
        "expansion (by the rule's clock). (c) The mean queue time of the players of the games "
        "formed at each step: a rule whose games form mostly after an expansion, at a long "
        "wait, is the one holding matches back."
    )
    rules = rule_steps(result.scenario)
    if not rules:
        reason = "the scenario has no rule set (matchmaker.rules)"
        return FigureOutcome(RULES_FIGURE_FILE, title, caption, skipped=reason)
    data = rule_panel_data(result.metrics, result.policies, rules)
    if not np.isfinite(data["mean"]).any():
        present = data["metric"].isin(result.metrics.columns).any()
        reason = (
            "no candidate was turned down and no game formed after the metrics' start"
            if present
            else "the metrics have no rule telemetry (rule_... columns)"
        )
        return FigureOutcome(RULES_FIGURE_FILE, title, caption, skipped=reason)

    policies = result.policies
    bars = len(rules) * (len(policies) + 0.8)
    heights = [2.6, 0.8 + 0.28 * bars, 3.0]
    fig = Figure(figsize=(10.0, sum(heights) + 1.2), layout="constrained")
    ax_a, ax_b, ax_c = fig.subplots(3, 1, height_ratios=heights)
    _rejections_panel(ax_a, data, policies, rules, colours)
    step_patches = _steps_panel(ax_b, data, policies, rules, colours)
    _queue_panel(ax_c, data, policies, rules, colours, queue_time_unit(result.metrics))

    replications = len(result.seeds)
    fig.suptitle(
        f'{title}\nscenario "{result.scenario.name}", {replications} '
        f"replication{'s' if replications != 1 else ''} per policy"
    )
    handles: list[Artist] = [Patch(color=colours[p], label=p) for p in policies]
    bars_text = f"error bars: {CONFIDENCE:.0%} CI over replications"
    handles.append(Line2D([], [], color="grey", marker="|", linestyle="none", label=bars_text))
    ax_a.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax_b.legend(
        handles=step_patches,
        title="formed at",
        fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    ax_c.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    path = save_figure(fig, out_dir / RULES_FIGURE_FILE)
    return FigureOutcome(RULES_FIGURE_FILE, title, caption, path=path)
