"""The report of a tuning study: the answer first, then the trial cloud and the convergence.

The headline (:func:`tune_headline_lines`, also what ``lobbysim tune`` prints) gives the best
feasible candidate's settings and, on fresh seeds it was not chosen on, its objective and
constraints beside the scenario as it is, with their paired differences and 95% intervals; or,
when no trial kept the constraints, says so and names the closest. Two figures follow:

* ``tune_trials.png``: every trial's objective against the first constraint's metric (means over
  its replications; feasible trials filled, promoted ones larger), the constraint's bound, and
  the Pareto front of the trials with the most replications (none better on both);
* ``tune_convergence.png``: each trial's objective in the order proposed and the best feasible
  value so far.

Then the trials table, folded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from lobbysim.reporting.answer import SECONDS_UNDER
from lobbysim.reporting.document import (
    Block,
    FigureOutcome,
    md_details,
    md_figure,
    md_heading,
    md_table,
    md_text,
    write_documents,
)
from lobbysim.reporting.figures import new_axes, save_figure
from lobbysim.reporting.headline import (
    Estimate,
    metric_label,
    metric_unit,
    value_text,
    wrap_terminal,
)
from lobbysim.tuning.racing import TUNED
from lobbysim.tuning.space import Constraint, Space
from lobbysim.tuning.study import OWN, StudyResult
from lobbysim.tuning.trials import Interval, Trial, feasible

TRIALS_FIGURE = "tune_trials.png"
CONVERGENCE_FIGURE = "tune_convergence.png"


def _estimate(e: Interval) -> Estimate:
    return Estimate(e.mean, e.low, e.high)


def _settings(space: Space, trial: Trial) -> str:
    return ", ".join(f"{name}={trial.drawn[name]!r}" for name in space.names())


def _row(frame: pd.DataFrame, metric: str) -> pd.Series | None:
    rows = frame[frame["metric"] == metric]
    return None if rows.empty else rows.iloc[0]


def tune_headline_lines(result: StudyResult) -> list[str]:
    """Return the study's answer as lines of plain text (unwrapped): what was asked and spent,
    then the fresh-seed result against the shipped setting, then each metric."""
    space = result.space
    ok = sum(feasible(space, t) for t in result.trials)
    goal = f"{'minimise' if space.minimize else 'maximise'} {space.objective}"
    held = (
        "; ".join(f"{c.metric} {c.op} {bound_text(c.bound, c.metric)}" for c in space.constraints)
        or "no constraints"
    )
    lines = [
        f"tune: {goal} subject to {held} (each at the pessimistic end of its 95% interval); "
        f"{len(result.trials)} trials ({_tried_text(result)}), {result.simulations} distinct "
        f"simulations in the search and {result.evaluations} in the fresh-seed evaluation, "
        f"feasible {ok} of {len(result.trials)}"
    ]
    if result.best is None:
        lines.append(infeasible_line(result))
        if result.closest is not None:
            c = result.closest
            parts = []
            for con in space.constraints:
                e = c.estimate(con.metric)
                end = e.high if con.op == "<=" else e.low
                parts.append(
                    f"{con.metric} {value_text(Estimate(end, math.nan, math.nan), con.metric)} "
                    f"at its {'upper' if con.op == '<=' else 'lower'} end (bound "
                    f"{bound_text(con.bound, con.metric)})"
                )
            lines.append(f"closest: trial {c.number} ({_settings(space, c)}): " + "; ".join(parts))
        return lines
    best = result.best
    fresh = space.evaluate
    lines.append(lead_line(result))
    lines.append(
        f"on {fresh} fresh seeds no trial ran on, tuned against the scenario as it is "
        "(paired, mean [95% CI]; each constraint's chance of holding in one replication, "
        "[95% Wilson interval]):"
    )
    metrics = [space.objective, *dict.fromkeys(c.metric for c in space.constraints)]
    for metric in metrics:
        tuned = _level(result.evaluation, TUNED, metric)
        own = _level(result.evaluation, OWN, metric)
        row = _row(result.differences, metric)
        text = (
            f"  {metric_label(metric)}: {value_text(_estimate(tuned), metric)} against "
            f"{value_text(_estimate(own), metric)}"
        )
        if row is not None and not result.shipped:
            diff = Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            text += f", difference {value_text(diff, metric, signed=True)}"
            if metric == space.objective:
                text += f" ({_verdict(diff, space.minimize)})"
        for con in space.constraints:
            if con.metric != metric:
                continue
            end = tuned.high if con.op == "<=" else tuned.low
            shown = value_text(Estimate(end, math.nan, math.nan), metric)
            verdict = "held" if math.isfinite(end) and con.violation(end) <= 0 else "NOT held"
            k, n, p, low, high = chance(result.fresh(metric), con)
            text += (
                f"; {metric_label(metric)} {con.op} {bound_text(con.bound, metric)} {verdict} on "
                f"fresh seeds (interval end {shown}); it held in {k} of {n} replications, "
                f"chance {p:.0%} [{low:.0%}, {high:.0%}]"
            )
        lines.append(text)
    if not result.kept:
        missed = [c for c, ok in result.held().items() if not ok]
        lines.append(
            f"the fresh seeds do not keep {'; '.join(missed)} at the pessimistic end of the 95% "
            f"interval: trial {best.number} is the closest found, written as closest.yaml, not "
            "tuned.yaml"
        )
    return lines


def _tried_text(result: StudyResult) -> str:
    size = result.size
    of = f" of {size:,}" if size is not None else ""
    return f"{result.tried}{of} settings tried"


def infeasible_line(result: StudyResult) -> str:
    """Return why there is no answer: every setting the space allows was tried and none is
    feasible (the problem is infeasible within this space), or the budget was spent first."""
    space = result.space
    size = result.size
    if size is not None and result.tried >= size and result.exhausted:
        return (
            f"the problem is infeasible within this space: all {size:,} settings it allows "
            "were tried and none keeps every constraint at the pessimistic end of its 95% "
            "interval"
        )
    of = f" of {size:,}" if size is not None else ""
    return (
        f"no feasible setting found in {result.simulations} simulations ({result.tried}{of} "
        f"settings tried; the search's budget is {space.search_budget}): the budget ran out "
        "before every setting was ruled out, so a larger budget may find one"
    )


def lead_line(result: StudyResult) -> str:
    """Return the answer's first line: the fresh-seed result against the shipped setting."""
    space = result.space
    best = result.best
    assert best is not None
    setting = f"trial {best.number} ({_settings(space, best)})"
    if result.shipped:
        return (
            f"the shipped setting is the best found: {setting} is the scenario's own setting, "
            "so the tuned and the shipped runs below are the same runs"
        )
    row = _row(result.differences, space.objective)
    if row is None:
        return f"best: {setting}"
    diff = Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
    verdict = _verdict(diff, space.minimize)
    gain = f"{metric_label(space.objective)} {value_text(diff, space.objective, signed=True)}"
    if verdict == "better":
        return f"better than what you ship on {space.evaluate} fresh seeds: {gain}; {setting}"
    if verdict == "worse":
        return f"worse than what you ship on {space.evaluate} fresh seeds: {gain}; {setting}"
    return f"no better than what you ship on {space.evaluate} fresh seeds: {gain}; {setting}"


def chance(values: Sequence[float], con: Constraint) -> tuple[int, int, float, float, float]:
    """Return how many of the replications keep the constraint, of how many, the share, and
    its 95% Wilson interval (NaN without replications)."""
    x = [v for v in values if math.isfinite(v)]
    n = len(x)
    k = sum(con.violation(v) <= 0 for v in x)
    if n == 0:
        return 0, 0, math.nan, math.nan, math.nan
    low, high = wilson(k, n)
    return k, n, k / n, low, high


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Return the 95% Wilson score interval of a proportion of ``k`` in ``n``."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _verdict(diff: Estimate, minimize: bool) -> str:
    """Return whether the tuned setting is better, worse or not distinguishable."""
    if not (math.isfinite(diff.low) and math.isfinite(diff.high)) or diff.low <= 0 <= diff.high:
        return "no significant difference"
    lower = diff.high < 0
    return "better" if lower == minimize else "worse"


def bound_text(bound: float, metric: str) -> str:
    """Return a constraint's bound in the unit the metric is shown in (seconds for a short
    queue time)."""
    return value_text(Estimate(bound, math.nan, math.nan), metric)


def tune_headline_text(result: StudyResult) -> str:
    """Return the headline wrapped for a terminal."""
    out = []
    for line in tune_headline_lines(result):
        indent = "    " if line.startswith("  ") else "  "
        out += wrap_terminal(line, indent=indent)
    return "\n".join(out)


def _level(evaluation: pd.DataFrame, label: str, metric: str) -> Interval:
    if evaluation.empty or metric not in evaluation.columns:
        return Interval(math.nan, math.nan, math.nan, 0)
    return Interval.of(evaluation.loc[evaluation["policy"] == label, metric].tolist())


def pareto_front(points: Sequence[tuple[float, float]], minimize: Sequence[bool]) -> list[int]:
    """Return the indices of the points no other point beats on both coordinates.

    ``minimize`` says, per coordinate, whether lower is better.
    """
    if not points:
        return []
    signs = np.array([1.0 if m else -1.0 for m in minimize])
    values = np.array(points, dtype=float).reshape(len(points), 2) * signs
    out = []
    for i, p in enumerate(values):
        if not np.all(np.isfinite(p)):
            continue
        dominated = np.any(
            np.all(values <= p, axis=1)
            & np.any(values < p, axis=1)
            & np.all(np.isfinite(values), axis=1)
        )
        if not dominated:
            out.append(i)
    return out


def trials_figure(result: StudyResult, out: Path) -> FigureOutcome:
    """Draw the trial cloud with the constraint's bound and the Pareto front."""
    space = result.space
    title = "Every trial: objective against the first constraint"
    caption = (
        "Each point is a trial's mean over its replications (filled: feasible at the "
        "pessimistic end of its 95% intervals; large: promoted to the most replications). The "
        "dashed line is the constraint's bound, the line through points the Pareto front of "
        "the promoted trials, the star the best feasible trial."
    )
    if not space.constraints:
        return FigureOutcome(TRIALS_FIGURE, title, caption, skipped="the study has no constraint")
    con = space.constraints[0]
    ran = [t for t in result.trials if t.runs]
    if not ran:
        return FigureOutcome(TRIALS_FIGURE, title, caption, skipped="no trial ran")
    fig, ax = new_axes(7.0, 4.6)
    x = [t.estimate(con.metric).mean for t in ran]
    y = [t.estimate(space.objective).mean for t in ran]
    # a queue time in seconds where every point and the bound are under two minutes, as the
    # headline's bound_text shows it; other metrics in their own unit
    scale, unit = 1.0, metric_unit(con.metric)
    if unit == "min" and all(abs(v) < SECONDS_UNDER for v in [*x, con.bound] if math.isfinite(v)):
        scale, unit = 60.0, "s"
    x = [v * scale for v in x]
    for t, xi, yi in zip(ran, x, y, strict=True):
        ok = feasible(space, t)
        ax.scatter(
            [xi],
            [yi],
            s=60 if t.promoted else 22,
            marker="o",
            facecolors="tab:blue" if ok else "none",
            edgecolors="tab:blue",
            linewidths=1.0,
        )
    ax.axvline(con.bound * scale, color="grey", linestyle="--", linewidth=1.0)
    promoted = [i for i, t in enumerate(ran) if t.promoted]
    front = pareto_front([(x[i], y[i]) for i in promoted], [con.op == "<=", space.minimize])
    if front:
        pts = sorted((x[promoted[i]], y[promoted[i]]) for i in front)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="tab:orange", linewidth=1.2)
    if result.best is not None:
        b = result.best
        ax.scatter(
            [b.estimate(con.metric).mean * scale],
            [b.estimate(space.objective).mean],
            marker="*",
            s=220,
            color="tab:red",
            zorder=5,
        )
    shown = f"{unit}; " if unit else ""
    ax.set_xlabel(
        f"{metric_label(con.metric)} ({shown}bound {con.bound * scale:g}"
        f"{' ' + unit if unit in ('s', 'min') else ''})"
    )
    ax.set_ylabel(f"{metric_label(space.objective)} ({space.objective})")
    ax.grid(alpha=0.3)
    handles = [
        Line2D([], [], marker="o", linestyle="", color="tab:blue", label="feasible trial"),
        Line2D(
            [],
            [],
            marker="o",
            linestyle="",
            markerfacecolor="none",
            color="tab:blue",
            label="infeasible trial",
        ),
        Line2D([], [], color="grey", linestyle="--", label="the constraint's bound"),
        Line2D([], [], color="tab:orange", label="Pareto front (promoted trials)"),
        Line2D(
            [], [], marker="*", linestyle="", color="tab:red", markersize=12, label="best feasible"
        ),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    path = save_figure(fig, out / TRIALS_FIGURE)
    return FigureOutcome(TRIALS_FIGURE, title, caption, path=path)


def convergence_figure(result: StudyResult, out: Path) -> FigureOutcome:
    """Draw each trial's objective in order and the best feasible value so far."""
    space = result.space
    title = "Convergence: the best feasible value as trials accumulate"
    caption = (
        "Each trial's mean objective in the order the optimiser proposed it (filled: "
        "feasible); the step line is the best feasible trial so far with the most replications."
    )
    ran = [t for t in result.trials if t.runs]
    if not ran:
        return FigureOutcome(CONVERGENCE_FIGURE, title, caption, skipped="no trial ran")
    fig, ax = new_axes(7.0, 3.8)
    best: float | None = None
    steps_x, steps_y = [], []
    for t in result.trials:
        if t.runs:
            ok = feasible(space, t)
            value = t.estimate(space.objective).mean
            ax.scatter(
                [t.number],
                [value],
                s=22,
                facecolors="tab:blue" if ok else "none",
                edgecolors="tab:blue",
            )
            if (
                ok
                and len(t.runs) >= space.most
                and (best is None or (value < best if space.minimize else value > best))
            ):
                best = value
        if best is not None:
            steps_x.append(t.number)
            steps_y.append(best)
    if steps_x:
        ax.step(steps_x, steps_y, where="post", color="tab:red", linewidth=1.5)
    ax.set_xlabel("trial")
    ax.set_ylabel(f"{metric_label(space.objective)} ({space.objective})")
    ax.grid(alpha=0.3)
    path = save_figure(fig, out / CONVERGENCE_FIGURE)
    return FigureOutcome(CONVERGENCE_FIGURE, title, caption, path=path)


def write_tune_report(result: StudyResult, out: Path, title: str) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` (figures embedded in the HTML) into ``out``."""
    blocks: list[Block] = [md_heading(title, 1)]
    lines = tune_headline_lines(result)
    blocks.append(md_text(f"**{lines[0]}**"))
    blocks += [md_text(line.strip()) for line in lines[1:]]
    blocks.append(md_figure(trials_figure(result, out)))
    blocks.append(md_figure(convergence_figure(result, out)))
    table = result.table()
    rows = [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    blocks.append(
        md_details(
            f"Every trial ({len(table)}; also trials.csv)",
            [md_table([str(c) for c in table.columns], rows)],
        )
    )
    return write_documents(blocks, out, title)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    return str(value)
