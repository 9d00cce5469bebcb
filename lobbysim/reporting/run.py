"""The report of a lobby run or a policy comparison: figures, ``report.md`` and ``report.html``.

Reporting only: this module runs no simulation. :func:`write_report` takes the result of
:func:`~lobbysim.experiments.replications.run_experiment`
(:class:`~lobbysim.experiments.replications.ExperimentResult`) and writes into a folder

- five PNG figures drawn from the record frames pooled over each policy's replications
  (:mod:`lobbysim.reporting.run_figures`), each skipped with a note in the report when it has no
  data;
- ``report.md``: the set-up, a table of every metric per policy (mean and 95% interval over
  replications), for a comparison a table of the paired differences from the baseline with a
  verdict per metric (:func:`~lobbysim.reporting.verdicts.verdict`), how to read the intervals,
  and the figures;
- ``report.html``: the same content as one standalone page.

Both documents are rendered from one list of content blocks
(:mod:`lobbysim.reporting.document`), so they say the same thing, and they depend only on the
result: writing the same result twice gives identical text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.intervals import CONFIDENCE
from lobbysim.reporting.document import (
    Block,
    FigureOutcome,
    format_interval,
    md_code,
    md_figure,
    md_heading,
    md_items,
    md_table,
    md_text,
    write_documents,
)
from lobbysim.reporting.run_figures import write_figures
from lobbysim.reporting.verdicts import better_direction, metric_meaning, verdict


def _minutes(value: float) -> str:
    text = f"{value:g} minutes"
    return text if value < 120 else f"{text} ({value / 60:g} hours)"


# --------------------------------------------------------------------------------------------
# Tables


def metrics_table(result: ExperimentResult) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Metrics" table: per metric, one column per policy."""
    summary = result.summary
    header = ["metric", "better", *result.policies]
    rows = []
    for metric in summary["metric"].unique():
        cells = [str(metric), better_direction(str(metric))]
        for policy in result.policies:
            found = summary[(summary["policy"] == policy) & (summary["metric"] == metric)]
            if found.empty:
                cells.append("n/a")
                continue
            row = found.iloc[0]
            cells.append(
                format_interval(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            )
        rows.append(cells)
    return header, rows


def differences_table(differences: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Which policy is better" table.

    One row per non-baseline policy and metric, in the order of ``differences``: the paired
    difference ``policy - baseline`` with its 95% interval, and the :func:`verdict`.
    """
    header = ["metric", "policy vs baseline", "difference [95% CI]", "verdict"]
    rows = []
    for _, row in differences.iterrows():
        policy, baseline, metric = str(row["policy"]), str(row["baseline"]), str(row["metric"])
        mean = float(row["mean"])
        rows.append(
            [
                metric,
                f"{policy} - {baseline}",
                format_interval(mean, float(row["ci_low"]), float(row["ci_high"]), signed=True),
                verdict(
                    metric,
                    mean,
                    bool(row["significant"]),
                    policy=policy,
                    baseline=baseline,
                    n=int(row["n"]),
                ),
            ]
        )
    return header, rows


INTERVALS_TEXT = (
    f"Every interval is a {CONFIDENCE:.0%} Student-t confidence interval over the replications: "
    "each replication is one independent run, and the interval is where the mean over many "
    "more replications would likely lie. The paired differences compare a policy and the "
    "baseline replication by replication, on common random numbers (replication r of every "
    "policy sees the same arrivals, players and skills), so the noise both share cancels: the "
    "interval of a difference is much narrower than the two separate intervals in the Metrics "
    "table would suggest, and two overlapping intervals there can still give a significant "
    "difference. 'Significant' means the difference's interval excludes 0. With few "
    "replications the intervals are wide (and a metric with no data in a replication, shown as "
    "n/a when no replication has any, is left out of its interval); run more replications to "
    "narrow them."
)


def _setup_items(result: ExperimentResult) -> list[tuple[str, str]]:
    scenario = result.scenario
    arrivals = scenario.arrivals
    params = ", ".join(f"{k}={v}" for k, v in arrivals.params.items())
    shadows = ", ".join(s.name for s in scenario.raters.shadows) or "none"
    policies = [f"{p} (baseline)" if p == result.baseline else p for p in result.policies]
    seeds = ", ".join(str(s) for s in result.seeds)
    game = scenario.game
    mode = game.mode
    if mode == "team":
        mode = f"team ({game.team_size} vs {game.team_size})"
    elif mode == "ffa":
        mode = f"free-for-all ({game.ffa_size} players)"
    return [
        ("Horizon", _minutes(float(scenario.horizon))),
        (
            "Warm-up",
            f"{_minutes(float(scenario.warmup))}, left out of the metrics and of the "
            "distribution figures",
        ),
        (
            "Replications",
            f"{len(result.seeds)} per policy, on common random numbers (the same seeds for "
            "every policy)",
        ),
        ("Seeds", f"master seed {scenario.seed}; replication seeds {seeds}"),
        ("Policies", ", ".join(policies)),
        ("Games", f"{mode}, {game.length:g} minutes"),
        ("Arrivals", f"{arrivals.name} ({params})" if params else arrivals.name),
        ("Raters", f"driving: {scenario.raters.driver.name}; shadows: {shadows}"),
    ]


def report_blocks(
    result: ExperimentResult, figures: Sequence[FigureOutcome], *, command: str | None = None
) -> list[Block]:
    """Return the report's content, in order, for the renderers of the document model."""
    scenario = result.scenario
    comparison = len(result.policies) >= 2
    blocks = [md_heading(f"Lobby report: {scenario.name}", level=1)]
    description = " ".join(scenario.description.split())
    if description:
        blocks.append(md_text(description))
    if comparison:
        blocks.append(
            md_text(
                f"A comparison of {len(result.policies)} matchmaking policies "
                f"({', '.join(result.policies)}) against the baseline {result.baseline}."
            )
        )
    else:
        blocks.append(md_text(f"A run of the matchmaking policy {result.baseline}."))

    blocks += [md_heading("Set-up"), md_items(_setup_items(result))]
    if command:
        blocks += [md_text("Reproduce with:"), md_code(command)]

    header, rows = metrics_table(result)
    blocks += [
        md_heading("Metrics"),
        md_text(
            f"Per metric and policy: the mean over replications [{CONFIDENCE:.0%} confidence "
            "interval]; 'better' says which way the metric is better. n/a: no data (for "
            "example the RMSE of a rater that is not on the skill scale); [n/a]: no interval "
            "(fewer than 2 replications with data)."
        ),
        md_table(header, rows),
    ]
    meanings = [(row[0], metric_meaning(row[0])) for row in rows if metric_meaning(row[0])]
    if meanings:
        blocks.append(md_items(meanings))

    if comparison:
        header, rows = differences_table(result.differences)
        blocks += [
            md_heading("Which policy is better"),
            md_text(
                "Per metric, the paired difference policy - baseline (mean over replications "
                f"[{CONFIDENCE:.0%} confidence interval]) and the verdict: the better policy when "
                "the interval excludes 0, otherwise no significant difference. "
                "stronger_side_win_rate has no better direction, so it gets no verdict."
            ),
            md_table(header, rows),
        ]

    blocks += [md_heading("How to read the intervals"), md_text(INTERVALS_TEXT)]
    blocks.append(md_heading("Figures"))
    blocks += [md_figure(f) for f in figures]
    return blocks


def write_report(
    result: ExperimentResult, out_dir: Path, *, command: str | None = None
) -> list[Path]:
    """Write the report of an experiment (a run or a policy comparison) into ``out_dir``.

    Args:
        result: what :func:`~lobbysim.experiments.replications.run_experiment` returned.
        out_dir: an existing folder to write into.
        command: the command that reproduces the run, quoted in the set-up if given.

    Returns:
        The files written: the figures that had data (of
        :data:`~lobbysim.reporting.run_figures.FIGURE_FILES`, in that order),
        then ``report.md`` and ``report.html``.
    """
    out_dir = Path(out_dir)
    figures = write_figures(result, out_dir)
    blocks = report_blocks(result, figures, command=command)
    markdown, page = write_documents(blocks, out_dir, f"Lobby report: {result.scenario.name}")
    return [*(f.path for f in figures if f.path is not None), markdown, page]
