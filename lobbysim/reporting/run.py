"""The report of a lobby run or a policy comparison: figures, ``report.md`` and ``report.html``.

Reporting only: this module runs no simulation. :func:`write_report` takes the result of
:func:`~lobbysim.experiments.replications.run_experiment`
(:class:`~lobbysim.experiments.replications.ExperimentResult`) and writes into a folder

- five PNG figures drawn from the record frames pooled over each policy's replications
  (:mod:`lobbysim.reporting.run_figures`), each skipped with a note in the report when it has no
  data; with a persistent player base, a sixth: the driving rater's error by games played
  (:mod:`lobbysim.reporting.tenure_figures`);
- ``report.md``: first what was run, the headline (per headline metric the best policy with its
  paired difference from the baseline, :mod:`lobbysim.reporting.headline`) and the trade-off of
  queue time against fairness (:mod:`lobbysim.reporting.tradeoff_figure`); then the details:
  when the policies include both ``uniform_random`` and ``oracle``, the share of
  the oracle's gain each other policy captures; the set-up, a table of every metric per policy
  (mean and 95% interval over replications), for a comparison a table of the paired
  differences from the baseline with a verdict per metric
  (:func:`~lobbysim.reporting.verdicts.verdict`), with a player base a section on newcomers,
  veterans and the rating convergence curve, with a world one on regions and latency, with a
  rule set one on which rule holds the matches back (:mod:`lobbysim.reporting.rule_figures`),
  how to read the intervals, and the figures;
- ``report.html``: the same content as one standalone page (the figures embedded, so that it can
  be mailed alone), with the set-up, the long tables and the notes on reading them folded
  (``<details>``), so that the answer, the trade-off figure and the share of the oracle's gain
  come first and the page stays short.

Both documents are rendered from one list of content blocks
(:mod:`lobbysim.reporting.document`), so they say the same thing, and they depend only on the
result: writing the same result twice gives identical text.

This module assembles the report (:func:`report_blocks`, :func:`write_report`) and holds its core
tables (metrics, differences, the oracle's share); the sections on a player base, a world and a
rule set are :mod:`lobbysim.reporting.run_sections`'s.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from lobbysim.experiments.replications import (
    ORACLE_POLICY,
    UNIFORM_POLICY,
    ExperimentResult,
    oracle_shares,
)
from lobbysim.experiments.variants import RULE_SET
from lobbysim.reporting.answer import (
    SECONDS_UNDER,
    Cost,
    fairness_difference,
    measure_flags,
    queue_seconds,
)
from lobbysim.reporting.document import (
    Block,
    FigureOutcome,
    format_number,
    format_p_value,
    md_code,
    md_details,
    md_figure,
    md_heading,
    md_items,
    md_table,
    md_text,
    write_documents,
)
from lobbysim.reporting.headline import (
    Estimate,
    experiment_headline,
    headline_blocks,
    shown_unit,
    value_text,
)
from lobbysim.reporting.region_figures import REGION_FIGURE_FILE
from lobbysim.reporting.rule_figures import RULES_FIGURE_FILE
from lobbysim.reporting.run_figures import write_figures
from lobbysim.reporting.run_frames import Frames
from lobbysim.reporting.run_sections import rule_blocks, tenure_blocks, world_blocks
from lobbysim.reporting.tables import (
    FLAG_MARK,
    display_interval,
    display_scale,
    display_unit,
    flag_footnote,
)
from lobbysim.reporting.tenure_figures import driver_curves
from lobbysim.reporting.tradeoff_figure import TRADEOFF_FIGURE_FILE
from lobbysim.reporting.verdicts import better_direction, metric_meaning, verdict
from lobbysim.scenario import BaseConfig
from lobbysim.stats.intervals import CONFIDENCE, FDR_LEVEL, POWER


def _minutes(value: float) -> str:
    text = f"{value:g} minutes"
    return text if value < 120 else f"{text} ({value / 60:g} hours)"


# --------------------------------------------------------------------------------------------
# Tables


def metrics_table(result: ExperimentResult) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Metrics" table: per metric its unit, which way is
    better, and one column per policy. Queue times are in the comparison's one unit (seconds
    where every mean wait is under two minutes, :func:`~lobbysim.reporting.answer.queue_seconds`),
    the abandonment rate in percent; a measure
    :func:`~lobbysim.reporting.answer.measure_flags` flags carries
    :data:`~lobbysim.reporting.tables.FLAG_MARK` (:func:`table_flags` says why)."""
    summary = result.summary
    seconds = queue_seconds(result.metrics)
    flags = measure_flags(result.metrics, float(result.scenario.matchmaker.tick))
    header = ["metric", "unit", "better", *result.policies]
    rows = []
    for metric in summary["metric"].unique():
        name = str(metric)
        cells = [
            f"{name} {FLAG_MARK}" if name in flags else name,
            display_unit(name, seconds) or "-",
            better_direction(name),
        ]
        for policy in result.policies:
            found = summary[(summary["policy"] == policy) & (summary["metric"] == metric)]
            if found.empty:
                cells.append("n/a")
                continue
            row = found.iloc[0]
            mean, low, high = (float(row[c]) for c in ("mean", "ci_low", "ci_high"))
            cells.append(display_interval(name, mean, low, high, seconds=seconds))
        rows.append(cells)
    return header, rows


def table_flags(result: ExperimentResult) -> list[Block]:
    """Return the footnote of the flagged measures under a table (none without any)."""
    tick = float(result.scenario.matchmaker.tick)
    note = flag_footnote(measure_flags(result.metrics, tick), tick)
    return [md_text(note)] if note else []


def differences_table(
    differences: pd.DataFrame,
    noun: str = "policy",
    seconds: bool | None = None,
    flags: Mapping[str, str] | None = None,
) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Which policy is better" table (``noun``: what the
    variants compared are, ``policy`` or ``rule set``, in its header).

    One row per non-baseline policy and metric, in the order of ``differences``: the paired
    difference ``policy - baseline`` with its 95% interval, the paired t-test's p-value, the
    Benjamini-Hochberg adjusted p-value, and the :func:`verdict`, which follows the adjusted
    p-value (the ``significant`` column); a difference that is not significant says the
    smallest difference the comparison could detect at 80% power (the ``detectable`` column)
    and the replications that would detect half that
    (:func:`~lobbysim.reporting.verdicts.detectable_text`). Each difference carries its unit: a
    queue time's in seconds with ``seconds`` (the comparison's unit,
    :func:`~lobbysim.reporting.answer.queue_seconds`; None: seconds where under two minutes),
    the abandonment rate's in percentage points. A metric of ``flags``
    (:func:`~lobbysim.reporting.answer.measure_flags`) carries
    :data:`~lobbysim.reporting.tables.FLAG_MARK`, as in the "Metrics" table.
    """
    flags = flags or {}
    header = ["metric", f"{noun} vs baseline", "difference [95% CI]", "p", "adjusted p", "verdict"]
    rows = []
    for _, row in differences.iterrows():
        policy, baseline, metric = str(row["policy"]), str(row["baseline"]), str(row["metric"])
        mean = float(row["mean"])
        estimate = Estimate(mean, float(row["ci_low"]), float(row["ci_high"]))
        shown = value_text(estimate, metric, signed=True, seconds=seconds)
        in_seconds = seconds
        if in_seconds is None:  # as duration_text decides: every number under two minutes
            numbers = [v for v in (mean, estimate.low, estimate.high) if math.isfinite(v)]
            in_seconds = all(abs(v) < SECONDS_UNDER for v in numbers)
        scale = display_scale(metric, in_seconds)
        rows.append(
            [
                f"{metric} {FLAG_MARK}" if metric in flags else metric,
                f"{policy} - {baseline}",
                shown if math.isfinite(estimate.low) or shown == "n/a" else f"{shown} [n/a]",
                format_p_value(float(row["p_value"])),
                format_p_value(float(row["p_adjusted"])),
                verdict(
                    metric,
                    mean,
                    bool(row["significant"]),
                    policy=policy,
                    baseline=baseline,
                    n=int(row["n"]),
                    sd=scale * float(row["sd"]),
                    unit=display_unit(metric, in_seconds, difference=True)
                    if scale != 1.0
                    else shown_unit(metric),
                ),
            ]
        )
    return header, rows


ORACLE_GAIN_COLUMNS = ("oracle_gain", "oracle_low", "oracle_high")
"""The oracle's paired difference from random pairing in a share row: mean, low, high."""

ORACLE_METRIC_TITLES = {
    "skill_gap_true_mean": "true skill gap (lower is better)",
    "draw_prob_true_mean": "true draw probability (higher is better)",
}
"""The columns of the oracle-share table: the metrics of
:data:`~lobbysim.experiments.replications.ORACLE_SHARE_METRICS`."""


def _percent_interval(row: pd.Series) -> str:
    """Return a share as ``"50% [30%, 70%]"`` (``n/a`` without one, ``[n/a]`` no interval;
    where the oracle is no fairer than random pairing, none, with the oracle's difference)."""
    share, low, high = (100 * float(row[c]) for c in ("share", "ci_low", "ci_high"))
    if not math.isfinite(share) and math.isfinite(float(row.get("oracle_low", math.nan))):
        mean, low, high = (float(row[c]) for c in ORACLE_GAIN_COLUMNS)
        gain = Cost(str(row["metric"]), mean, low, high)
        return f"none: the oracle is no fairer than random ({fairness_difference(gain)})"
    if not math.isfinite(share):
        return "n/a"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{format_number(share)}% [n/a]"
    return f"{format_number(share)}% [{format_number(low)}%, {format_number(high)}%]"


def oracle_share_table(shares: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the oracle-share table: per policy, a column per metric."""
    header = ["policy", *ORACLE_METRIC_TITLES.values()]
    rows = []
    for policy, group in shares.groupby("policy", sort=False):
        cells = [str(policy)]
        for metric in ORACLE_METRIC_TITLES:
            found = group[group["metric"] == metric]
            cells.append(_percent_interval(found.iloc[0]) if len(found) else "n/a")
        rows.append(cells)
    return header, rows


def _oracle_blocks(result: ExperimentResult) -> list[Block]:
    """Return the oracle-share section, or nothing without both reference policies."""
    shares = oracle_shares(result.metrics)
    if shares.empty:
        return []
    header, rows = oracle_share_table(shares)
    return [
        md_heading("Share of the oracle's gain"),
        md_text(
            f"How much of the way from {UNIFORM_POLICY} (uniformly random opponents: 0%) to "
            f"{ORACLE_POLICY} (matching on true skills: 100%) each policy goes: the share of "
            f"the oracle's gain [{CONFIDENCE:.0%} confidence interval]."
        ),
        md_table(header, rows),
        md_details("How the share is computed", [_oracle_method_text()]),
    ]


def _oracle_method_text() -> Block:
    """Return the oracle-share section's paragraph on the method."""
    return md_text(
        "The share is (policy - uniform) / (oracle - uniform) of the metric's mean. The "
        "policies share the replication seeds, so the gains are paired replication by "
        "replication; the share is the ratio of the mean paired gains, and its "
        f"{CONFIDENCE:.0%} interval comes from the delta method (a Student-t interval on "
        "the linearised per-replication terms). Below 0%: worse than random; above 100%: "
        "better than the oracle (possible by chance, or on the draw probability, which the "
        "oracle does not maximise pair by pair). Where the oracle's own gain is not "
        "significant (its interval reaches 0, or lies on the worse side), there is no share "
        "to give: the cell says so, with the oracle's difference from random pairing."
    )


INTERVALS_TEXT = (
    f"Every interval is a {CONFIDENCE:.0%} Student-t confidence interval over the replications: "
    "each replication is one independent run, and the interval is where the mean over many "
    "more replications would likely lie. The paired differences compare a policy and the "
    "baseline replication by replication, on common random numbers (replication r of every "
    "policy sees the same arrivals, players and skills), so the noise both share cancels: the "
    "interval of a difference is much narrower than the two separate intervals in the Metrics "
    "table would suggest, and two overlapping intervals there can still give a significant "
    "difference. An interval of a metric that cannot be negative (queue times, rates, skill "
    "gaps, RMSEs) is cut at 0, one of a share or probability at 0 and 1, one of a Kendall's tau "
    "at -1 and 1: a Student-t interval is symmetric around the mean, and with few replications "
    "it can reach past a value no replication can take. summary.csv holds the intervals as cut "
    "and shown here (its mean and sd are not cut). Each paired difference also has the p-value "
    "of a two-sided paired t-test, below 0.05 exactly when its interval excludes 0; because a "
    "comparison tests every metric of every policy at once, the p-values are adjusted for false "
    "discoveries (Benjamini-Hochberg, over all the comparison's differences), and 'significant', "
    f"the verdicts and the headline use the adjusted p-value: below {FDR_LEVEL:.2g}. So a "
    "difference whose interval excludes 0 can still be 'no significant difference' after the "
    "adjustment; both are in the table and in differences.csv. A difference that is not "
    "significant is not shown to be absent: the verdict says how large a difference the "
    "comparison could have detected, the smallest true difference a paired t-test at 0.05 finds "
    f"with {POWER:.0%} power over these replications, (t(0.975) + t({POWER:.1f})) sd / sqrt(n) "
    "with t the Student-t quantiles of n - 1 degrees of freedom and sd that of the paired "
    "differences (the detectable column of differences.csv; the false-discovery adjustment "
    "asks for somewhat more), and how many replications would detect half that: the "
    "detectable difference shrinks with the square root of the replications, so halving it "
    "takes about four times as many. With few "
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
    noun = result.noun()
    if result.kind == RULE_SET:  # the files compared, each with the scenario's own policy
        policies = [
            f"{p}: {result.sources[p]}" + (" (baseline)" if p == result.baseline else "")
            if p in result.sources
            else shown
            for p, shown in zip(result.policies, policies, strict=True)
        ]
        compared = [
            ("Policy", f"{scenario.matchmaker.policy.name}, the scenario's, for every rule set"),
            ("FlexMatch rule sets", ", ".join(policies)),
        ]
    else:
        compared = [("Policies", ", ".join(policies))]
    seeds = ", ".join(str(s) for s in result.seeds)
    game = scenario.game
    mode = game.describe()
    return [
        ("Horizon", _minutes(float(scenario.horizon))),
        (
            "Warm-up",
            f"{_minutes(float(scenario.warmup))}, left out of the metrics and of the "
            "distribution figures",
        ),
        (
            "Replications",
            f"{len(result.seeds)} per {noun}, on common random numbers (the same seeds for "
            f"every {noun})",
        ),
        ("Seeds", f"master seed {scenario.seed}; replication seeds {seeds}"),
        *compared,
        ("Games", f"{mode}, {game.length:g} minutes"),
        ("Arrivals", f"{arrivals.name} ({params})" if params else arrivals.name),
        ("Raters", f"driving: {scenario.raters.driver.name}; shadows: {shadows}"),
        *_base_items(scenario.base),
    ]


def _base_items(base: BaseConfig | None) -> list[tuple[str, str]]:
    """Return the set-up line of a persistent player base (none without one)."""
    if base is None:
        return []
    params = ", ".join(f"{k}={v}" for k, v in base.visits.params.items())
    visits = f"{base.visits.name} ({params})" if params else base.visits.name
    return [
        (
            "Player base",
            f"{base.size} members at the start, visiting by {visits}; "
            f"{base.newcomers_per_day:g} newcomers and a leaving hazard of "
            f"{base.leave_per_day:g} per day; newcomers until {base.newcomer_games} games",
        )
    ]


def report_blocks(
    result: ExperimentResult,
    figures: Sequence[FigureOutcome],
    *,
    command: str | None = None,
    curves: pd.DataFrame | None = None,
) -> list[Block]:
    """Return the report's content, in order, for the renderers of the document model.

    ``curves`` are the driving rater's convergence curves
    (:func:`~lobbysim.reporting.tenure_figures.driver_curves`), shown only with a player base.
    """
    scenario = result.scenario
    comparison = len(result.policies) >= 2
    noun, plural = result.noun(), result.noun(plural=True)
    blocks = _opening_blocks(result, figures)
    blocks += _oracle_blocks(result)
    blocks.append(md_heading("Set-up"))
    description = " ".join(scenario.description.split())
    if description:
        blocks.append(md_text(description))
    setup = [md_items(_setup_items(result))]
    if command:
        setup += [md_text("Reproduce with:"), md_code(command)]
    blocks.append(
        md_details(
            f"Horizon, warm-up, replications and seeds, {plural}, game, arrivals and raters"
            + (", player base" if scenario.base is not None else "")
            + ("; the command that reproduces the run" if command else ""),
            setup,
        )
    )

    header, rows = metrics_table(result)
    names = [row[0].removesuffix(f" {FLAG_MARK}") for row in rows]
    meanings = [(name, metric_meaning(name)) for name in names if metric_meaning(name)]
    blocks += [
        md_heading("Metrics"),
        md_details(
            f"The full metrics table: {len(rows)} metrics x {len(result.policies)} "
            f"{noun if len(result.policies) == 1 else plural}, mean [{CONFIDENCE:.0%} "
            "interval] (also in summary.csv)",
            [
                md_text(
                    f"Per metric and {noun}: the mean over replications [{CONFIDENCE:.0%} "
                    "confidence interval, cut at the values the metric can take]; 'better' says "
                    "which way the metric is better. n/a: no data (for example the RMSE of a "
                    "rater that is not on the skill scale); [n/a]: no interval (fewer than 2 "
                    "replications with data). Queue times are in one unit, s (seconds) where "
                    "every policy's mean wait is under two minutes in every replication, else "
                    "min; the abandonment rate in percent (its differences in points)."
                ),
                md_table(header, rows),
                *table_flags(result),
                *([md_items(meanings)] if meanings else []),
            ],
        ),
    ]

    if comparison:
        header, rows = differences_table(
            result.differences,
            noun,
            seconds=queue_seconds(result.metrics),
            flags=measure_flags(result.metrics, float(result.scenario.matchmaker.tick)),
        )
        text = md_text(
            f"Per metric, the paired difference {noun} - baseline (mean over replications "
            f"[{CONFIDENCE:.0%} confidence interval]), the p-value of the paired t-test, the "
            "p-value adjusted for false discoveries (Benjamini-Hochberg, over every row of "
            f"this table with a p-value) and the verdict: the better {noun} when the adjusted "
            "p-value is "
            f"below {FDR_LEVEL:.2g}, otherwise no significant difference, with the smallest "
            f"difference the comparison could detect ({POWER:.0%} power, a paired t-test at "
            "0.05 over these replications) and the replications that would detect half "
            "that. stronger_side_win_rate has no better direction, so it gets no verdict."
        )
        blocks += [
            md_heading(f"Which {noun} is better"),
            md_details(
                f"The paired differences from the baseline {result.baseline}: {len(rows)} rows, "
                "each with its p-values and verdict (also in differences.csv)",
                [text, md_table(header, rows), *table_flags(result)],
            ),
        ]

    blocks += tenure_blocks(result, curves)
    blocks += world_blocks(result, figures)
    blocks += rule_blocks(result, figures)
    blocks += [
        md_heading("How to read the intervals"),
        md_details(
            f"{CONFIDENCE:.0%} Student-t intervals over replications, paired differences on "
            "common random numbers, p-values adjusted for false discoveries",
            [md_text(INTERVALS_TEXT)],
        ),
    ]
    blocks.append(md_heading("Figures"))
    placed = (TRADEOFF_FIGURE_FILE, REGION_FIGURE_FILE, RULES_FIGURE_FILE)  # in their sections
    blocks += [md_figure(f) for f in figures if f.file not in placed]
    return blocks


def _what_was_run(result: ExperimentResult) -> str:
    """Return the report's one line on what was run."""
    n = len(result.seeds)
    runs = f"{n} replication{'s' if n != 1 else ''} of {_minutes(float(result.scenario.horizon))}"
    if len(result.policies) < 2:
        return f"A run of the matchmaking policy {result.baseline}: {runs}."
    if result.kind == RULE_SET:
        return (
            f"A comparison of {len(result.policies)} FlexMatch rule sets "
            f"({', '.join(result.policies)}) against the baseline {result.baseline}, each with "
            f"the matchmaking policy {result.scenario.matchmaker.policy.name}: {runs} per rule "
            "set, on common random numbers."
        )
    return (
        f"A comparison of {len(result.policies)} matchmaking policies "
        f"({', '.join(result.policies)}) against the baseline {result.baseline}: {runs} "
        "per policy, on common random numbers."
    )


def _opening_blocks(result: ExperimentResult, figures: Sequence[FigureOutcome]) -> list[Block]:
    """Return the report's first screen: title, what was run, headline, trade-off figure.

    With answers in the headline (a comparison with both bounds), the answers, then the figure,
    then the headline's per-metric lines; without, the per-metric lines, then the figure.
    """
    blocks = [
        md_heading(f"Lobby report: {result.scenario.name}", level=1),
        md_text(_what_was_run(result)),
    ]
    headline = experiment_headline(result)
    tradeoff = [md_figure(f) for f in figures if f.file == TRADEOFF_FIGURE_FILE]
    if headline.answers:
        blocks += headline_blocks(dataclasses.replace(headline, items=(), notes=()))
        blocks += tradeoff
        blocks += headline_blocks(dataclasses.replace(headline, answers=()))
    else:
        blocks += headline_blocks(headline)
        blocks += tradeoff
    return blocks


def write_report(
    result: ExperimentResult,
    out_dir: Path,
    *,
    command: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write the report of an experiment (a run or a policy comparison) into ``out_dir``.

    Args:
        result: what :func:`~lobbysim.experiments.replications.run_experiment` returned.
        out_dir: an existing folder to write into.
        command: the command that reproduces the run, quoted in the set-up if given.
        progress: called as ``progress(done, total)`` after each figure and at the end (the
            documents are the last step).

    Returns:
        The files written: the figures that had data (the trade-off figure,
        :data:`~lobbysim.reporting.tradeoff_figure.TRADEOFF_FIGURE_FILE`, then those of
        :data:`~lobbysim.reporting.run_figures.FIGURE_FILES`, in that order),
        then ``report.md`` and ``report.html``.
    """
    out_dir = Path(out_dir)
    frames = Frames(result)
    curves = driver_curves(result, frames) if result.scenario.base is not None else None
    steps = {"total": 1}

    def figure_done(done: int, total: int) -> None:
        steps["total"] = total + 1
        if progress is not None:
            progress(done, total + 1)

    figures = write_figures(result, out_dir, frames=frames, curves=curves, progress=figure_done)
    blocks = report_blocks(result, figures, command=command, curves=curves)
    markdown, page = write_documents(blocks, out_dir, f"Lobby report: {result.scenario.name}")
    if progress is not None:
        progress(steps["total"], steps["total"])
    return [*(f.path for f in figures if f.path is not None), markdown, page]
