"""Which way a metric is better, the verdict on a comparison, and the paper claims' verdicts.

The one place for the wording of "which policy is better": :func:`better_direction` and
:func:`verdict` for the run and sweep reports, :func:`detectable_text` for what a comparison
without a significant difference could have detected, :func:`claim_verdict` for the paper's
claims, and :func:`metric_meaning` for the one-line description of each metric.
"""

from __future__ import annotations

import math

from lobbysim.reporting.document import format_number
from lobbysim.stats.intervals import (
    MAX_REPLICATIONS,
    POWER,
    detectable_difference,
    replications_to_detect,
)
from lobbysim.stats.metrics import VETERAN_GAMES, VETERANS_COUNT

LOWER_IS_BETTER = "lower"
HIGHER_IS_BETTER = "higher"
NEUTRAL = "neither"

LOWER_METRICS = frozenset(
    {
        "abandonment_rate",
        "skill_gap_true_mean",
        "team_gap_true_mean",
        "win_ratio_dispersion",
        "churn_per_week",
        "latency_ms_mean",
        "latency_ms_p90",
        "delta_ping_ms_mean",
    }
)
HIGHER_METRICS = frozenset(
    {
        "games_per_hour",
        "draw_prob_true_mean",
        "fair_band_share",
        "daily_active_players",
        "visits_per_member_week",
        "retained",
        *(f"retained_decile_{k}" for k in range(1, 11)),
        *(f"visits_per_member_week_decile_{k}" for k in range(1, 11)),
    }
)

NO_DIFFERENCE = "no significant difference"
NO_VERDICT = "no verdict (neither direction is better)"
NO_DATA = "no data"
NO_INTERVAL = "no interval (fewer than 2 replications)"

METRIC_MEANINGS = {
    "queue_time_mean": "mean minutes in the queue of the players who were matched",
    "queue_time_p50": "median minutes in the queue of the players who were matched",
    "queue_time_p90": "90th percentile of the queue time of matched players (minutes)",
    "queue_time_p99": "99th percentile of the queue time of matched players (minutes)",
    "queue_time_tail_mean": (
        "mean of the longest 1% of the queue times of matched players, ceil(n/100) of n waits, "
        "at least one (minutes): the tail wait, continuous where the percentiles sit on the "
        "pass grid"
    ),
    "abandonment_rate": "share of queueing spells that ended with the player giving up",
    "games_per_hour": "games started per simulated hour after the warm-up",
    "draw_prob_true_mean": "mean true draw probability of the games (higher: more even matches)",
    "skill_gap_true_mean": "mean true skill gap between the two sides of a game",
    "fair_band_share": (
        "share of team games whose predicted chance that the stronger team wins was within the "
        "fair band (metrics.fair_band, 45%-55% by default) at the start"
    ),
    "team_gap_true_mean": (
        "mean true gap between the teams' mean skills at the start of a team game"
    ),
    "stronger_side_win_rate": (
        "how often the truly stronger side won (no better direction: near 0.5 means even "
        "matches, near 1 means skill decides)"
    ),
    "win_ratio_dispersion": "mean |win ratio - 0.5| of players with at least 5 decided games",
    "daily_active_players": "members of the base who started a visit, per day (retention on)",
    "visits_per_member_week": "visits per member of the base and week (retention on)",
    "churn_per_week": "share of the base's members leaving for good per week (retention on)",
    "retained": (
        "share of the members in the base at the start of the metrics still in it at the end "
        "(retention on)"
    ),
    **{
        f"retained_decile_{k}": (
            f"share of the members in true skill decile {k} (1 lowest) at the start of the "
            "metrics still in the base at the end (retention on)"
        )
        for k in range(1, 11)
    },
    **{
        f"visits_per_member_week_decile_{k}": (
            f"visits per week of the members in true skill decile {k} (1 lowest) at the start of "
            "the metrics (retention on)"
        )
        for k in range(1, 11)
    },
    "latency_ms_mean": "mean latency of a seat to its game's data centre, ms (with a world)",
    "latency_ms_p90": "90th percentile of the seats' latency to their games' data centres, ms",
    "delta_ping_ms_mean": "mean latency of a seat above the player's best data centre, ms",
    "cross_region_share": "share of games whose players at the start come from several regions",
    "party_split_games": "games that started with a party split across teams or games (0)",
    "party_queue_time_mean": "mean queue time of matched spells of players in parties",
    "premade_win_rate": "how often the team with more players in parties won (teams differing)",
    "premade_share": "share of the seats at a game's start taken by players in parties",
    "queue_time_peak": "mean queue time of matched players in the region's 6 busiest local hours",
    "queue_time_quiet": (
        "mean queue time of matched players in the region's 6 quietest local hours"
    ),
    VETERANS_COUNT: (
        f"registered players with at least {VETERAN_GAMES} games who played after the warm-up "
        "(the players of the *.kendall_tau_veterans metrics)"
    ),
}
RULE_METRIC_MEANINGS = {
    "rule_rejected_share": "share of the turned-down candidates that rule {rule} turned down first",
    "rule_relaxed_share": "share of games formed with rule {rule}'s clock past its first step",
    "rule_needed_share": (
        "share of games that needed rule {rule} relaxed (they break its first limit)"
    ),
    "rule_step_mean": "mean expansion step of rule {rule} at which games formed (0: the first)",
    "rule_games_share": "share of games formed with rule {rule} at its step {step} (0: the first)",
    "rule_queue_time": "mean wait of the players of games formed with rule {rule} at step {step}",
}
RATER_METRIC_MEANINGS = {
    "rating_rmse": "root mean squared error of rater {rater}'s final ratings against true skill",
    "kendall_tau": "Kendall's tau between rater {rater}'s final ratings and true skill",
    "kendall_tau_veterans": (
        f"Kendall's tau between rater {{rater}}'s final ratings and true skill, among the "
        f"registered players with at least {VETERAN_GAMES} games ({VETERANS_COUNT} of them)"
    ),
}
TENURE_PREFIXES = {
    "newcomer_": (
        "newcomers only: queueing spells and seats in games (one term per seat) of players with "
        "fewer than base.newcomer_games games before them"
    ),
    "veteran_": (
        "veterans only: queueing spells and seats in games (one term per seat) of players with "
        "at least base.newcomer_games games before them"
    ),
}
"""The prefixes of the metrics by tenure (runs with a player base), and whom they measure."""

RETENTION_TENURE = {
    "newcomer_": "members with fewer than base.newcomer_games games when the metrics start",
    "veteran_": "members with at least base.newcomer_games games when the metrics start",
}
"""Whom the retention metrics by tenure measure (the tenure at the start of the metrics)."""
RETENTION_METRICS = frozenset(
    {"daily_active_players", "visits_per_member_week", "churn_per_week", "retained"}
)


CLAIM_VERDICTS = ("supported", "not supported", "contradicted")
"""The verdicts on a claim of the paper (:func:`claim_verdict`)."""

Z_THRESHOLD = 2.0
"""|z| at which a difference counts as significant (about a two-sided 5% test)."""


def better_direction(metric: str) -> str:
    """Return which way a metric is better: :data:`LOWER_IS_BETTER`, ``HIGHER_...`` or ``NEUTRAL``.

    Lower is better for queue times, the abandonment rate, the true skill gap, the win-ratio
    dispersion and a rater's RMSE; higher for games per hour, the true draw probability and a
    rater's Kendall's tau (over every rated player or only the veterans). A metric by tenure
    (``newcomer_...``, ``veteran_...``) goes the way of the metric it measures for its group.
    ``stronger_side_win_rate``, the count of veterans (and any unknown metric) are neutral.
    """
    for prefix in TENURE_PREFIXES:
        if metric.startswith(prefix):
            metric = metric.removeprefix(prefix)
            break
    metric = metric.partition("@")[0]  # one region's: the way of the metric it measures
    if (
        metric.startswith("queue_time_")
        or metric in LOWER_METRICS
        or metric.endswith(".rating_rmse")
    ):
        return LOWER_IS_BETTER
    if metric in HIGHER_METRICS or metric.endswith((".kendall_tau", ".kendall_tau_veterans")):
        return HIGHER_IS_BETTER
    return NEUTRAL


def detectable_text(sd: float, n: int, unit: str = "") -> str:
    """Return what a paired comparison of ``n`` replications could have detected.

    ``"detectable: ±X at 80% power with N replications; ~M replications would detect half that,
    ±X/2"``: X is the minimum detectable difference
    (:func:`lobbysim.stats.intervals.detectable_difference`, the ``detectable`` column of
    ``differences.csv``) of paired differences of standard deviation ``sd``, and M the
    replications that would detect a difference half as large
    (:func:`lobbysim.stats.intervals.replications_to_detect`; the rule is always half the detectable
    difference, about four times the replications, whatever difference was observed: it says
    what more replications buy without reading anything into a difference that was not
    significant). ``unit`` follows each size. With differences of no spread (``sd`` 0: the same
    every replication) ``"identical in every replication"``; with fewer than 2 replications
    ``"fewer than 2 replications with data: no test"``.
    """
    detectable = detectable_difference(sd, n)
    if not math.isfinite(detectable):
        return "fewer than 2 replications with data: no test"
    if detectable == 0:
        return "identical in every replication"

    def size(value: float) -> str:
        return f"±{format_number(value)}" + (f" {unit}" if unit else "")

    half = detectable / 2
    needed = replications_to_detect(half, sd)
    more = (
        f"~{needed:,} replications would detect half that, {size(half)}"
        if needed is not None
        else f"over {MAX_REPLICATIONS:,} replications would be needed for half that, {size(half)}"
    )
    runs = f"{n:,} replication{'s' if n != 1 else ''}"
    return f"detectable: {size(detectable)} at {POWER:.0%} power with {runs}; {more}"


def verdict(
    metric: str,
    difference: float,
    significant: bool,
    *,
    policy: str,
    baseline: str,
    n: int = 2,
    sd: float = math.nan,
    unit: str = "",
) -> str:
    """Return the verdict on one paired difference ``policy - baseline`` of a metric.

    Args:
        metric: the metric's name (its direction comes from :func:`better_direction`).
        difference: the mean paired difference ``policy - baseline``.
        significant: whether it is significant: its Benjamini-Hochberg adjusted p-value is
            below 0.05 (:func:`lobbysim.experiments.replications.paired_differences`).
        policy: the policy compared with the baseline.
        baseline: the baseline policy.
        n: the number of paired replications behind the difference.
        sd: the standard deviation of the paired differences; with it, "no significant
            difference" says what the comparison could have detected (:func:`detectable_text`).
        unit: the unit of ``sd`` (and of the sizes said), as the difference is shown.

    Returns:
        ``"<policy> better"``, ``"<baseline> better"``, :data:`NO_DIFFERENCE` (followed by
        ``" (<detectable_text>)"`` when ``sd`` is given), or for a neutral metric
        :data:`NO_VERDICT`; :data:`NO_DATA` when the difference is not a number and
        :data:`NO_INTERVAL` with fewer than 2 replications.
    """
    if not math.isfinite(difference):
        return NO_DATA
    direction = better_direction(metric)
    if direction == NEUTRAL:
        return NO_VERDICT
    if n < 2:
        return NO_INTERVAL
    if not significant or difference == 0:
        if math.isnan(sd):
            return NO_DIFFERENCE
        return f"{NO_DIFFERENCE} ({detectable_text(sd, n, unit)})"
    policy_lower = difference < 0
    policy_better = policy_lower == (direction == LOWER_IS_BETTER)
    return f"{policy} better" if policy_better else f"{baseline} better"


def metric_meaning(metric: str) -> str:
    """Return a one-line description of a metric (empty for an unknown one)."""
    measured, at, region = metric.partition("@")
    if at and measured in RULE_METRIC_MEANINGS:  # rule_...@<rule>[@step<k>]
        rule, _, step = region.partition("@")
        return RULE_METRIC_MEANINGS[measured].format(rule=rule, step=step.removeprefix("step"))
    if at and measured in METRIC_MEANINGS:
        return f"{METRIC_MEANINGS[measured]}; players of region {region} only"
    if metric in METRIC_MEANINGS:
        return METRIC_MEANINGS[metric]
    for prefix, whom in TENURE_PREFIXES.items():
        measured = metric.removeprefix(prefix)
        if metric.startswith(prefix) and measured in METRIC_MEANINGS:
            if measured in RETENTION_METRICS:
                whom = RETENTION_TENURE[prefix]
            return f"{METRIC_MEANINGS[measured]}; {whom}"
    rater, _, kind = metric.rpartition(".")
    if rater and kind in RATER_METRIC_MEANINGS:
        return RATER_METRIC_MEANINGS[kind].format(rater=rater)
    return ""


def z_score(estimate: float, se: float) -> float:
    """Return estimate / se; +-inf for a non-zero estimate with zero SE, NaN for 0 / 0."""
    if se > 0:
        return estimate / se
    if estimate == 0 or math.isnan(estimate):
        return math.nan
    return math.copysign(math.inf, estimate)


def claim_verdict(z: float, direction: int) -> str:
    """Return the verdict on a claim about a difference with z-score ``z``.

    ``direction`` is -1 (claimed < 0) or +1 (claimed > 0): "supported" when z lies in that
    direction with |z| >= :data:`Z_THRESHOLD`, "contradicted" when against it, otherwise "not
    supported". 0 claims no significant difference: "supported" when |z| < the threshold.
    """
    if direction == 0:
        return "supported" if abs(z) < Z_THRESHOLD else "not supported"
    if math.isnan(z):
        return "not supported"
    if direction * z >= Z_THRESHOLD:
        return "supported"
    if direction * z <= -Z_THRESHOLD:
        return "contradicted"
    return "not supported"
