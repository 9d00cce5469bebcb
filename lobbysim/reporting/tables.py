"""A comparison's numbers in one unit per quantity: the cells of the tables and the terminal's.

Queue times are all in seconds or all in minutes for one comparison
(:func:`~lobbysim.reporting.answer.queue_seconds`: seconds when every policy's mean wait is under
two minutes in every replication), the abandonment rate in percent and its differences in
percentage points (:func:`~lobbysim.reporting.headline.is_percent`), as the answer and the
headline say them: :func:`display_unit`, :func:`display_scale` and :func:`display_interval` for
the report's tables (:mod:`lobbysim.reporting.run`, :mod:`lobbysim.reporting.run_sections`),
:func:`queue_time_axis_label` for a figure's axis. A measure
:func:`~lobbysim.reporting.answer.measure_flags` flags (on the pass grid in every run, or of
zero-width interval) carries :data:`FLAG_MARK` in a table, with :func:`flag_footnote` under it.
:func:`metrics_text` is the terminal's table and :func:`terminal_summary` what ``lobbysim run``
and ``compare`` print.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import measure_flags, queue_seconds
from lobbysim.reporting.document import HTML_FILE, format_interval
from lobbysim.reporting.headline import (
    TERMINAL_EXTRA,
    Estimate,
    experiment_headline,
    headline_metrics,
    headline_text,
    is_percent,
    metric_unit,
    wrap_terminal,
)
from lobbysim.stats.intervals import CONFIDENCE


def display_unit(metric: str, seconds: bool | None, *, difference: bool = False) -> str:
    """Return the unit a metric's numbers are shown in: ``s`` or ``min`` for a queue time
    (``seconds``: the comparison's unit, :func:`~lobbysim.reporting.answer.queue_seconds`;
    None: minutes), ``%`` for the abandonment rate (``points`` for a difference of it), else
    :func:`metric_unit`."""
    if metric_unit(metric) == "min":
        return "s" if seconds else "min"
    if is_percent(metric):
        return "points" if difference else "%"
    return metric_unit(metric)


def display_interval(
    metric: str,
    mean: float,
    low: float,
    high: float,
    *,
    seconds: bool | None,
    signed: bool = False,
) -> str:
    """Return ``"mean [low, high]"`` in :func:`display_unit`'s unit, without the unit (a
    table's unit column says it): queue times in seconds with ``seconds``, the abandonment rate
    in percent."""
    scale = display_scale(metric, seconds)
    return format_interval(scale * mean, scale * low, scale * high, signed=signed)


def display_scale(metric: str, seconds: bool | None) -> float:
    """Return what a metric's stored values are multiplied by to show them in
    :func:`display_unit`'s unit: 60 for a queue time in seconds, 100 for a percent, else 1."""
    if metric_unit(metric) == "min" and seconds:
        return 60.0
    return 100.0 if is_percent(metric) else 1.0


def queue_time_axis_label(runs: pd.DataFrame, what: str = "mean queue time") -> str:
    """Return a figure's axis label for a comparison's queue times in its one unit
    (:func:`~lobbysim.reporting.answer.queue_time_unit`): ``"mean queue time (s)"``; multiply
    the values (minutes) by 60 where :func:`~lobbysim.reporting.answer.queue_seconds` holds."""
    return f"{what} ({'s' if queue_seconds(runs) else 'min'})"


def _estimate(row: pd.Series) -> Estimate:
    return Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))


FLAG_MARK = "†"
"""The mark of a measure :func:`~lobbysim.reporting.answer.measure_flags` flags, in tables."""


def flag_footnote(flags: Mapping[str, str], tick: float) -> str:
    """Return the tables' footnote on the flagged measures (empty without any)."""
    if not flags:
        return ""
    reasons = "; ".join(
        f"{metric}: {flag}" + (f" (every value a multiple of the {tick:g}-minute pass interval)"
                               if flag == "on the pass grid" else
                               " (one value in every replication of some policy)")
        for metric, flag in flags.items()
    )  # fmt: skip
    return f"{FLAG_MARK} flagged, not used in the answer: {reasons}."


def _metrics_rows(result: ExperimentResult, metrics: Sequence[str]) -> list[list[str]]:
    summary = result.summary.set_index(["policy", "metric"])
    seconds = queue_seconds(result.metrics)
    flags = measure_flags(result.metrics, float(result.scenario.matchmaker.tick))
    rows = []
    for metric in metrics:
        name = f"{metric} {FLAG_MARK}" if metric in flags else metric
        cells = [name, display_unit(metric, seconds) or "-"]
        for policy in result.policies:
            if (policy, metric) not in summary.index:
                cells.append("n/a")
                continue
            e = _estimate(summary.loc[(policy, metric)])
            if not math.isfinite(e.low):
                cells.append(display_interval(metric, e.mean, e.mean, e.mean, seconds=seconds)
                             .partition(" [")[0])  # fmt: skip
            else:
                cells.append(display_interval(metric, e.mean, e.low, e.high, seconds=seconds))
        rows.append(cells)
    return rows


def metrics_text(result: ExperimentResult) -> str:
    """Return the terminal's table of the headline metrics and a few more, with units."""
    columns = list(result.summary["metric"].unique())
    driver = result.scenario.raters.driver.name
    headline = headline_metrics(columns, driver)
    metrics = [*headline[:1], *(m for m in TERMINAL_EXTRA if m in columns), *headline[1:]]
    n = len(result.seeds)
    what = (
        f"mean [{CONFIDENCE:.0%} CI] over {n} replications"
        if n > 1
        else "the value of the 1 replication: no interval"
    )
    rows = [["metric", "unit", *result.policies], *_metrics_rows(result, metrics)]
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = [f"Metrics ({what}):"]
    lines += [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows
    ]
    tick = float(result.scenario.matchmaker.tick)
    flags = measure_flags(result.metrics, tick)
    shown = {m: f for m, f in flags.items() if m in metrics}
    if shown:
        lines += wrap_terminal(flag_footnote(shown, tick), indent="    ")
    return "\n".join(line.rstrip() for line in lines)


def terminal_summary(result: ExperimentResult, folder: Path) -> str:
    """Return what ``lobbysim run`` and ``compare`` print: headline, metrics, the report's path."""
    files = "summary.csv" + (", differences.csv" if len(result.policies) > 1 else "")
    return "\n\n".join(
        [
            headline_text(experiment_headline(result)),
            metrics_text(result),
            f"Every metric: {files} in {folder}\nReport: {folder / HTML_FILE}",
        ]
    )
