"""The report of a parameter sweep: where the trade-offs lie across a grid of settings.

Reporting only: this module runs no simulation. A sweep runs a scenario for every combination of
some swept settings (a *cell*, e.g. ``matchmaker.tick`` = 0.25 and ``arrivals.rate`` = 4) under
several matchmaking policies, R replications per cell and policy on common random numbers. From
its per-run metrics (``results``, one row per successful run) and its failed runs
(``failures``), :func:`write_sweep_report` writes into a folder

- ``cells.csv``: per cell, policy and metric, the mean over replications with a 95% Student-t
  interval (:func:`~lobbysim.reporting.sweep_summary.summarise_cells`);
- ``tradeoff_draw.png``: the headline's trade-off, from its own computation: one panel per
  setting of the keys the matchmaker does not choose, each choice (a cell under a real policy)
  a point of mean queue time against the headline's fairness metric, with 95% intervals both
  ways, and the Pareto frontier the headline lists for that setting
  (:func:`~lobbysim.reporting.sweep_headline.frontier_steps`): the choices that no other
  choice of the setting beats on both at once. Waiting longer buys fairer matches; the
  frontier shows the best price available;
- ``tradeoff_rating.png``: the same against the driving rater's rating RMSE (lower is better),
  when that rater has one;
- ``by_<key>.png`` per swept key: small panels of the headline metrics against that key's
  values, one line per policy, the other swept keys averaged over;
- ``report.md`` and ``report.html``: first the headline
  (:mod:`lobbysim.reporting.sweep_headline`: per setting of the keys the matchmaker does not
  choose, the fairest choice, the quickest, the Pareto-efficient ones and, with both bounds, what
  each buys), then the set-up, the two trade-offs with a plain-language list of the frontier
  points, the per-key figures, a table of every cell's headline metrics (folded in the HTML)
  and the failed runs. Both are rendered from one list of content blocks with the renderers of
  :mod:`lobbysim.reporting.document`, and depend only on the input: the same input gives the
  same bytes.

The data (summaries, Pareto fronts) is :mod:`lobbysim.reporting.sweep_summary`, the figures
:mod:`lobbysim.reporting.sweep_figures`; this module holds the text and the entry point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from lobbysim.reporting.document import (
    Block,
    FigureOutcome,
    format_interval,
    md_details,
    md_figure,
    md_heading,
    md_items,
    md_table,
    md_text,
    write_documents,
)
from lobbysim.reporting.headline import metric_label, value_text
from lobbysim.reporting.sweep_figures import (
    TRADEOFF_DRAW_FILE,
    TRADEOFF_RATING_FILE,
    write_sweep_figures,
)
from lobbysim.reporting.sweep_headline import (
    QUEUE,
    SweepHeadline,
    Tradeoff,
    build_sweep_headline,
    setting_tradeoffs,
)
from lobbysim.reporting.sweep_headline_wording import sweep_headline_blocks
from lobbysim.reporting.sweep_summary import (
    DRAW_METRIC,
    by_key_files,
    format_value,
    headline_metrics,
    levels_of,
    policies_in,
    summarise_cells,
)
from lobbysim.reporting.verdicts import metric_meaning
from lobbysim.stats.intervals import CONFIDENCE

CELLS_FILE = "cells.csv"

MAX_ERROR_CHARS = 300
"""Longest error text shown per failed run (its last line, cut from the left beyond this)."""

# --------------------------------------------------------------------------------------------
# Report content


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _range(values: Sequence[int], word: str) -> str:
    if not values:
        return _count(0, word)
    low, high = min(values), max(values)
    return _count(low, word) if low == high else f"{low} to {high} {word}s"


def _description(
    results: pd.DataFrame, failures: pd.DataFrame, grid_keys: Sequence[str], policies: list[str]
) -> str:
    cells = {int(c) for c in results["cell"]} | {int(c) for c in failures.get("cell", [])}
    keys = ", ".join(grid_keys) if grid_keys else "no key"
    runs = results.groupby(["cell", "policy"], sort=False).size().tolist()
    return (
        f"A parameter sweep over {keys}: {_count(len(cells), 'cell')} (combinations of the swept "
        f"values) × {_count(len(policies), 'policy').replace('policys', 'policies')}, "
        f"{_range([int(r) for r in runs], 'replication')} per cell and policy on common random "
        f"numbers; {_count(len(results), 'run')} succeeded and {len(failures)} failed."
    )


def _setup_items(
    results: pd.DataFrame,
    failures: pd.DataFrame,
    grid_keys: Sequence[str],
    policies: list[str],
    driver: str,
    scenario_line: str,
) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    if scenario_line:
        items.append(("Scenario", scenario_line))
    for key in grid_keys:
        source = results if not results.empty or key not in failures.columns else failures
        levels, _ = levels_of(source[key])
        items.append((f"Swept {key}", ", ".join(format_value(v) for v in levels) or "none"))
    items.append(("Policies", ", ".join(policies) or "none"))
    items.append(("Driving rater", driver))
    return items


def _grid_cells(row: pd.Series, grid_keys: Sequence[str]) -> list[str]:
    return [format_value(row[k]) for k in grid_keys]


def _rating_frontier_blocks(
    tradeoffs: Sequence[Tradeoff], headline: SweepHeadline, driver: str, *, seconds: bool
) -> list[Block]:
    """Return the frontier of each setting against the rating error: a reading and a table
    (queue times in seconds with ``seconds``, else minutes)."""
    metric = f"{driver}.rating_rmse"
    header = ["setting", "cell", *headline.choice_keys, "policy", "mean wait", f"{driver} RMSE"]
    rows = []
    for tradeoff in tradeoffs:
        setting = ", ".join(f"{k}={v}" for k, v in tradeoff.group.values.items()) or "all"
        for step in tradeoff.frontier:
            choice = step.choice
            rows.append(
                [
                    setting,
                    str(choice.cell),
                    *headline.cell_values.get(choice.cell, ()),
                    choice.policy,
                    value_text(choice.levels[QUEUE], QUEUE, seconds=seconds),
                    value_text(choice.levels[metric], metric),
                ]
            )
    reading = (
        f"Per setting, the choices no other choice of the setting beats on both mean wait and "
        f"{driver}'s rating error (by the means), from the shortest wait; where intervals "
        "overlap, neighbouring points may not really differ."
    )
    return [md_text(reading), md_table(header, rows)]


def cells_table(
    results: pd.DataFrame, summary: pd.DataFrame, grid_keys: Sequence[str], driver: str
) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Cells" table.

    One row per (cell, policy), in the order of ``summary``: the cell number, its grid values,
    the policy, the successful replications and, per headline metric present in ``results``,
    the mean [95% interval] formatted by :func:`~lobbysim.reporting.document.format_interval`.
    """
    metrics = [m for m in headline_metrics(driver) if m in results.columns]
    header = ["cell", *grid_keys, "policy", "runs", *metrics]
    runs = results.groupby(["cell", "policy"], sort=False).size()
    indexed = summary.set_index(["cell", "policy", "metric"])
    rows = []
    for _, first in summary.drop_duplicates(["cell", "policy"]).iterrows():
        cell, policy = int(first["cell"]), str(first["policy"])
        row = [str(cell), *_grid_cells(first, grid_keys), policy, str(int(runs[(cell, policy)]))]
        for metric in metrics:
            s = indexed.loc[(cell, policy, metric)]
            row.append(format_interval(float(s["mean"]), float(s["ci_low"]), float(s["ci_high"])))
        rows.append(row)
    return header, rows


def _error_line(error: object) -> str:
    """Return the last non-empty line of an error text, at most :data:`MAX_ERROR_CHARS` long."""
    if error is None or (isinstance(error, float) and math.isnan(error)):
        return "(no message)"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    last = " ".join(lines[-1].split()) if lines else "(no message)"
    return last if len(last) <= MAX_ERROR_CHARS else "…" + last[-(MAX_ERROR_CHARS - 1) :]


def failures_table(
    failures: pd.DataFrame, grid_keys: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Failed runs" table, sorted by cell, then as given.

    The error is its last non-empty line (for a traceback, the exception), cut to
    :data:`MAX_ERROR_CHARS` characters.
    """
    header = ["cell", *grid_keys, "policy", "replication", "seed", "error"]
    rows = []
    ordered = failures.assign(_rank=np.arange(len(failures)))
    if "cell" in ordered.columns:
        ordered = ordered.sort_values(["cell", "_rank"], kind="stable")
    for _, row in ordered.iterrows():
        rows.append(
            [
                *(format_value(row[c]) if c in row.index else "" for c in header[:-1]),
                _error_line(row.get("error")),
            ]
        )
    return header, rows


TRADEOFFS_TEXT = (
    "Shorter queues and fairer matches pull against each other: a matchmaker that waits "
    "longer can find more even opponents and learn ratings from more informative games. "
    "Each figure has a panel per setting of what the matchmaker does not choose, as the "
    "headline compares; each choice (a cell under a real policy) is one point, and the Pareto "
    "frontier joins the choices that no other choice of the setting beats on both axes at "
    "once. A choice off the frontier can be improved on both counts by moving to a frontier "
    "point; choosing among frontier points is a matter of how much waiting a fairer match is "
    "worth."
)


def _tradeoff_blocks(
    results: pd.DataFrame,
    grid_keys: Sequence[str],
    headline: SweepHeadline,
    by_file: dict[str, FigureOutcome],
    driver: str,
) -> list[Block]:
    """Return the "Trade-offs" section: per trade-off its figure and its frontier's reading."""
    blocks = [md_heading("Trade-offs"), md_text(TRADEOFFS_TEXT)]
    fairness = metric_label(headline.fairness or DRAW_METRIC)
    blocks.append(md_heading(f"Queue time against {fairness}", level=3))
    figure = by_file.get(TRADEOFF_DRAW_FILE)
    if figure is not None:
        blocks.append(md_figure(figure))
        if figure.path is not None:
            blocks.append(
                md_text(
                    "The ringed points of each panel are the Pareto-efficient choices the "
                    "headline lists for that setting, with their paired steps (above)."
                )
            )
    blocks.append(md_heading(f"Queue time against the rating error of {driver}", level=3))
    figure = by_file.get(TRADEOFF_RATING_FILE)
    if figure is not None:
        blocks.append(md_figure(figure))
        if figure.path is not None:
            tradeoffs = setting_tradeoffs(results, grid_keys, f"{driver}.rating_rmse")
            seconds = headline.seconds
            blocks += _rating_frontier_blocks(tradeoffs, headline, driver, seconds=seconds)
    return blocks


def _per_key_blocks(grid_keys: Sequence[str], by_file: dict[str, FigureOutcome]) -> list[Block]:
    """Return the "Per swept parameter" section: one figure per swept key."""
    blocks = [md_heading("Per swept parameter")]
    if not grid_keys:
        return [*blocks, md_text("No key was swept.")]
    blocks.append(
        md_text(
            "Per swept key, the headline metrics against its values, one line per policy. "
            "Where several keys are swept, each point averages over the other keys' values, "
            "so a line shows the key's effect on average, not in any one cell."
        )
    )
    files = by_key_files(grid_keys)
    return blocks + [md_figure(by_file[files[k]]) for k in grid_keys]


def _cells_blocks(
    results: pd.DataFrame, summary: pd.DataFrame, grid_keys: Sequence[str], driver: str
) -> list[Block]:
    """Return the "Cells" section: every cell's headline metrics and what they mean."""
    blocks = [md_heading("Cells")]
    if summary.empty:
        return [*blocks, md_text("No run succeeded, so there is nothing to tabulate.")]
    header, rows = cells_table(results, summary, grid_keys, driver)
    meanings = [(m, metric_meaning(m)) for m in header[3 + len(grid_keys) :]]
    table = [
        md_text(
            f"Per cell and policy: the grid values, the successful replications (runs) and "
            f"the headline metrics as the mean over replications [{CONFIDENCE:.0%} "
            "confidence interval, cut at the values the metric can take: no queue time below "
            "0, no probability above 1]. n/a: no data; [n/a]: no interval (fewer than 2 "
            f"replications with data). Every metric of every cell is in {CELLS_FILE}."
        ),
        md_table(header, rows),
        md_items([(m, t) for m, t in meanings if t]),
    ]
    return [
        *blocks,
        md_details(f"Every cell's headline metrics ({_count(len(rows), 'row')})", table),
    ]


def _failures_blocks(failures: pd.DataFrame, grid_keys: Sequence[str]) -> list[Block]:
    """Return the "Failed runs" section."""
    blocks = [md_heading("Failed runs")]
    if failures.empty:
        return [*blocks, md_text("None: every run finished.")]
    header, rows = failures_table(failures, grid_keys)
    return [
        *blocks,
        md_text(
            f"{_count(len(failures), 'run')} raised an error or lost its worker and "
            f"{'is' if len(failures) == 1 else 'are'} left out of every figure and table "
            "above; the error shown is the last line of its message."
        ),
        md_table(header, rows),
    ]


def sweep_report_blocks(
    results: pd.DataFrame,
    failures: pd.DataFrame,
    summary: pd.DataFrame,
    grid_keys: Sequence[str],
    figures: Sequence[FigureOutcome],
    *,
    title: str,
    driver: str,
    scenario_line: str = "",
    headline: SweepHeadline | None = None,
) -> list[Block]:
    """Return the sweep report's content, in order, for the renderers of the document model: the
    title, what was run, the headline (:mod:`lobbysim.reporting.sweep_headline`; ``headline``:
    the one the figures were drawn from, else built here), then the rest."""
    policies = policies_in(results)
    by_file = {f.file: f for f in figures}
    setup = _setup_items(results, failures, grid_keys, policies, driver, scenario_line)
    headline = build_sweep_headline(results, grid_keys) if headline is None else headline
    return [
        md_heading(title, level=1),
        md_text(_description(results, failures, grid_keys, policies)),
        *sweep_headline_blocks(headline),
        md_heading("Set-up"),
        md_items(setup),
        *_tradeoff_blocks(results, grid_keys, headline, by_file, driver),
        *_per_key_blocks(grid_keys, by_file),
        *_cells_blocks(results, summary, grid_keys, driver),
        *_failures_blocks(failures, grid_keys),
    ]


def write_sweep_report(
    results: pd.DataFrame,
    failures: pd.DataFrame | None,
    grid_keys: Sequence[str],
    out_dir: Path,
    *,
    title: str,
    driver: str,
    scenario_line: str = "",
    tick: float | None = None,
) -> list[Path]:
    """Write the report of a parameter sweep into ``out_dir``.

    Args:
        results: one row per successful run: ``cell`` (1-based), one column per swept key
            (named by its key path), ``policy``, ``replication`` (1-based), ``seed``, then the
            metrics (NaN where missing).
        failures: one row per failed run: ``cell``, the grid keys, ``policy``,
            ``replication``, ``seed``, ``error``; None or empty when none failed.
        grid_keys: the swept keys, in order.
        out_dir: an existing folder to write into.
        title: the report's title.
        driver: the driving rater (the y axis of ``tradeoff_rating.png`` is its
            ``rating_rmse``).
        scenario_line: a one-line description of the scenario, for the set-up and the figures.
        tick: the scenario's pass interval (minutes), where ``matchmaker.tick`` is not swept:
            no answer quotes a queue time on the pass grid
            (:func:`~lobbysim.reporting.sweep_headline.build_sweep_headline`).

    Returns:
        The files written: ``cells.csv``, the figures that were drawn (``tradeoff_draw.png``,
        ``tradeoff_rating.png``, then ``by_<key>.png`` per swept key), ``report.md`` and
        ``report.html``.

    Raises:
        ValueError: if ``results`` lacks a required column or a grid key clashes with one.
    """
    out_dir = Path(out_dir)
    grid_keys = list(grid_keys)
    failures = pd.DataFrame() if failures is None else failures
    summary = summarise_cells(results, grid_keys)
    cells = out_dir / CELLS_FILE
    summary.to_csv(cells, index=False, lineterminator="\n")
    headline = build_sweep_headline(results, grid_keys, tick=tick)
    figures = write_sweep_figures(
        results, grid_keys, headline, out_dir, driver=driver, scenario_line=scenario_line
    )
    blocks = sweep_report_blocks(
        results,
        failures,
        summary,
        grid_keys,
        figures,
        title=title,
        driver=driver,
        scenario_line=scenario_line,
        headline=headline,
    )
    markdown, page = write_documents(blocks, out_dir, title)
    return [cells, *(f.path for f in figures if f.path is not None), markdown, page]
