"""The sections of a run's report on what a scenario may add: a player base, a world, a rule set.

Each returns its blocks of the document model (:mod:`lobbysim.reporting.document`), or none
when the scenario has no such part; :func:`~lobbysim.reporting.run.report_blocks` places them,
after the tables of metrics and differences:

- :func:`tenure_blocks`, with a persistent player base: newcomers, veterans and the driving
  rater's convergence table (:mod:`lobbysim.reporting.tenure_figures`);
- :func:`world_blocks`, with a world: per region and policy the queue times, abandonment and
  true skill gap (:data:`REGION_COLUMNS`), the latency, and the regions' figure
  (:mod:`lobbysim.reporting.region_figures`);
- :func:`rule_blocks`, with a rule set: which rule holds the matches back (:data:`RULE_COLUMNS`),
  the rules' steps, how to read them (:data:`RULES_TEXT`) and the rules' figure
  (:mod:`lobbysim.reporting.rule_figures`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import queue_seconds
from lobbysim.reporting.document import (
    Block,
    FigureOutcome,
    md_details,
    md_figure,
    md_heading,
    md_items,
    md_table,
    md_text,
)
from lobbysim.reporting.region_figures import REGION_FIGURE_FILE
from lobbysim.reporting.rule_figures import RULES_FIGURE_FILE, rule_metric, step_label
from lobbysim.reporting.tables import display_interval
from lobbysim.reporting.tenure_figures import convergence_table, reference_text
from lobbysim.scenario.rules import RuleConfig
from lobbysim.stats.intervals import CONFIDENCE
from lobbysim.stats.metrics import VETERAN_GAMES


def tenure_blocks(result: ExperimentResult, curves: pd.DataFrame | None) -> list[Block]:
    """Return the section on newcomers, veterans and rating convergence (only with a base)."""
    base = result.scenario.base
    if base is None:
        return []
    blocks = [
        md_heading("Newcomers, veterans and rating convergence"),
        md_text(
            "A player's tenure is the number of games they had played before a moment. The "
            "newcomer_... and veteran_... metrics above split the queueing spells (by the "
            "games joined before the spell began) and the seats in games (by the games played "
            f"before that one) at {base.newcomer_games} games (base.newcomer_games): newcomers "
            f"below, veterans from there on. *.kendall_tau_veterans ranks the players with at "
            f"least {VETERAN_GAMES} games."
        ),
    ]
    driver = result.scenario.raters.driver.name
    if curves is None:
        blocks.append(
            md_text(f"No convergence curve: the driving rater {driver} is not on the skill scale.")
        )
        return blocks
    header, rows = convergence_table(curves, result.policies)
    blocks.append(
        md_details(
            f"Rating convergence table: {driver}'s RMSE by games played, "
            f"{len(rows)} rows (the figure below draws it)",
            [
                md_text(
                    f"The driving rater {driver}'s root mean squared error against true skill by "
                    "the games a player had finished by the rating sample (samples after the "
                    "warm-up, registered players): per replication, then the mean over "
                    f"replications [{CONFIDENCE:.0%} confidence interval] and the rating samples "
                    "behind it. " + reference_text(result)
                ),
                md_table(header, rows),
            ],
        )
    )
    return blocks


#: The per-region columns of the "Regions" table: metric prefix, column title.
REGION_COLUMNS = (
    ("queue_time_mean", "queue time ({unit})"),
    ("queue_time_peak", "at its 6 busiest hours"),
    ("queue_time_quiet", "at its 6 quietest hours"),
    ("abandonment_rate", "abandonment (%)"),
    ("skill_gap_true_mean", "true skill gap"),
)


def summary_cell(result: ExperimentResult) -> Callable[[str, str], str]:
    """Return what formats a policy's metric from the summary: ``mean [low, high]`` (``n/a``
    where the summary has no row), queue times in the comparison's one unit and the
    abandonment rate in percent (:func:`~lobbysim.reporting.tables.display_interval`)."""
    summary = result.summary.set_index(["policy", "metric"])
    seconds = queue_seconds(result.metrics)

    def cell(policy: str, metric: str) -> str:
        if (policy, metric) not in summary.index:
            return "n/a"
        row = summary.loc[(policy, metric)]
        mean, low, high = (float(row[c]) for c in ("mean", "ci_low", "ci_high"))
        return display_interval(metric, mean, low, high, seconds=seconds)

    return cell


def world_blocks(result: ExperimentResult, figures: Sequence[FigureOutcome]) -> list[Block]:
    """Return the section on regions and latency (only with a world): per region and policy,
    the queue time (at the region's busiest and quietest local hours too), abandonment and the
    true skill gap, each the mean [95% interval] over replications, and the figure of each
    region's queue time by local hour of the day."""
    world = result.scenario.world
    if world is None:
        return []
    cell = summary_cell(result)
    noun = result.noun()
    unit = "s" if queue_seconds(result.metrics) else "min"
    header = ["region", noun, *(title.format(unit=unit) for _, title in REGION_COLUMNS)]
    rows = [
        [region, policy, *(cell(policy, f"{prefix}@{region}") for prefix, _ in REGION_COLUMNS)]
        for region in world.region_names
        for policy in result.policies
    ]
    latency = [
        f"{policy}: mean {cell(policy, 'latency_ms_mean')} ms, p90 "
        f"{cell(policy, 'latency_ms_p90')} ms, {cell(policy, 'cross_region_share')} of games "
        "mixing regions"
        for policy in result.policies
    ]
    return [
        md_heading("Regions and latency"),
        md_text(
            f"Data centres {', '.join(world.data_centres)}; regions "
            + ", ".join(
                f"{r.name} ({r.share:.0%}, UTC{r.utc_offset_hours:+g})" for r in world.regions
            )
            + ". Per region: the queue time of its players, also in the region's busiest and "
            "quietest local hours of the day (where a latency limit hurts), its abandonment and "
            "the true skill gap of its players' games."
        ),
        md_details(
            f"Per-region table: {len(world.region_names)} regions x {len(result.policies)} "
            f"{result.noun(plural=len(result.policies) != 1)}",
            [md_table(header, rows)],
        ),
        md_items([("latency", line) for line in latency]),
        *(md_figure(f) for f in figures if f.file == REGION_FIGURE_FILE),
    ]


#: The per-rule columns of the "Which rule holds your matches back" table: quantity, title.
RULE_COLUMNS = (
    ("rejected_share", "rejected share"),
    ("relaxed_share", "past first step"),
    ("needed_share", "needed relaxing"),
    ("step_mean", "mean step"),
)

RULES_TEXT = (
    "How to read it: the rejected share says which rule turns candidates down first (the shares"
    " of the rules sum to 1), so the rule with the largest share is the one the matchmaker most"
    ' often cannot get past. "Past first step" is the share of games formed after the rule\'s '
    'clock had passed its first expansion (a later limit was in force); "needed relaxing" is '
    "the share of games that would have broken the first limit, the ones the expansion actually"
    " let through (a clock can pass a step for games that never needed it: then the first is "
    "high and the second low). The mean step is the step they were formed at on average (0: the"
    " first limit, 1: the first expansion, ...). A rule that rejects much and whose games "
    "mostly need its expansions holds matches back: its first limit is tighter than the "
    "population lets it keep, and the players wait for its expansions, as the queue times by "
    "step in the figure show. A rule that rejects much but is rarely relaxed is strict yet "
    "cheap: other candidates keep it. The rules are checked in the order listed, so a rule "
    "listed after a stricter one can look harmless only because the stricter one turned its "
    "candidates down first."
)


def rule_text(rule: RuleConfig) -> str:
    """Return the steps of a rule as the report lists them: its kind, limit and expansions (in
    minutes), and for a rule read from a FlexMatch file the same in the file's own units."""
    if rule.limit is None and not rule.expansions:
        steps = "no limit, one step"
    else:
        first = "none" if rule.limit is None else f"{rule.limit:g}"
        steps = f"{step_label(0)} {first}" + "".join(
            f"; {step_label(k)} from {wait:g} min: {limit:g}"
            for k, (wait, limit) in enumerate(rule.expansions, start=1)
        )
    optional = (
        "" if rule.optional_after is None else f"; optional after {rule.optional_after:g} min"
    )
    file = "" if rule.in_file() is None else f"; in its FlexMatch file: {rule.in_file()}"
    return f"{rule.kind} (clock {rule.clock}): {steps}{optional}{file}"


def rule_blocks(result: ExperimentResult, figures: Sequence[FigureOutcome]) -> list[Block]:
    """Return the section on the rule set (only with one): per rule and policy, the rejected
    share, the shares of games past the first step and that needed relaxing, and the mean
    step, each the mean [95% interval] over replications, the rules' steps, a reading guide
    and the figure of which rule holds the matches back."""
    rules = result.scenario.matchmaker.rules
    if rules is None:
        return []
    cell = summary_cell(result)
    noun = result.noun()
    header = ["rule", noun, *(title for _, title in RULE_COLUMNS)]
    rows = [
        [
            rule.name,
            policy,
            *(cell(policy, rule_metric(quantity, rule.name)) for quantity, _ in RULE_COLUMNS),
        ]
        for rule in rules
        for policy in result.policies
    ]
    # a comparison of rule sets lists the baseline's rules: the others' go by the same names
    whose = f" The rules listed are the baseline {result.baseline}'s." if noun != "policy" else ""
    return [
        md_heading("Which rule holds your matches back"),
        md_text(
            f"The matchmaker searches under a rule set ({result.scenario.matchmaker.algorithm})."
            f"{whose} Per rule and {noun}, from the metrics' start: the share of the turned-down "
            "candidates this rule was the first to turn down, the share of games formed past its "
            "first limit, and the mean expansion step of its games; each the mean over "
            f"replications [{CONFIDENCE:.0%} confidence interval]."
        ),
        md_details(
            f"Per-rule table: {len(rules)} rules x {len(result.policies)} "
            f"{result.noun(plural=len(result.policies) != 1)}",
            [md_table(header, rows)],
        ),
        md_items([(rule.name, rule_text(rule)) for rule in rules]),
        md_details("How to read the rule table", [md_text(RULES_TEXT)]),
        *(md_figure(f) for f in figures if f.file == RULES_FIGURE_FILE),
    ]
