"""The headline of a run or comparison: per headline metric, which policy is best, and by how much.

The answer to "which policy, at what queue-time cost", read from the frames the experiment
wrote (:class:`~lobbysim.experiments.replications.ExperimentResult`: ``differences.csv`` and
``summary.csv``). For each headline metric (:func:`headline_metrics`: the queue time p90, the
true draw probability, the true skill gap, the driving rater's Kendall's tau and, with a
retention model, the daily active players and the churn per week):

- a policy is *better* than the baseline (the first policy) when its paired difference from the
  baseline goes the metric's better way (:func:`~lobbysim.reporting.verdicts.better_direction`)
  and is significant, i.e. its Benjamini-Hochberg adjusted p-value is below 0.05
  (:func:`~lobbysim.experiments.replications.paired_differences`); the best is the better policy
  with the largest improvement, shown with its difference, 95% interval and adjusted p-value,
  the very numbers of its row in ``differences.csv``;
- when no policy is better but some are significantly worse, the baseline is best;
- otherwise no policy differs significantly from the baseline on that metric; the difference
  closest to significance (the smallest adjusted p-value) is shown for its size, with the
  smallest difference its comparison could detect at 80% power and the replications that would
  detect half that (:func:`~lobbysim.reporting.verdicts.detectable_text`).

With one replication there is no interval and no verdict, only the values. :func:`build_headline`
returns the structured :class:`Headline`; :func:`headline_blocks` renders it for the report's
document model (:mod:`lobbysim.reporting.document`) and :func:`headline_text` and
:func:`terminal_summary` as plain text for the terminal, every number with its unit, the
headline's lines wrapped to :data:`TERMINAL_WIDTH` characters.

One unit per quantity (:mod:`lobbysim.reporting.tables`): a comparison's queue times all in
seconds or all in minutes, the abandonment rate in percent (:func:`value_text`). The lead says
"minus the baseline" only over differences, else levels.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.answer import (
    BOUNDS,
    answer_sentence,
    answers,
    detail_sentences,
    duration_text,
    grid_notes,
    points_text,
    queue_seconds,
)
from lobbysim.reporting.document import (
    Block,
    format_interval,
    format_number,
    format_p_value,
    md_items,
    md_text,
)
from lobbysim.reporting.verdicts import (
    HIGHER_IS_BETTER,
    NEUTRAL,
    better_direction,
    detectable_text,
)
from lobbysim.stats.intervals import CONFIDENCE, FDR_LEVEL, detectable_difference

BETTER = "better"
"""Outcome: some policy is significantly better than the baseline; ``best`` is the best one."""
BASELINE_BEST = "baseline best"
"""Outcome: no policy is better than the baseline, and some are significantly worse."""
NO_DIFFERENCE = "no difference"
"""Outcome: no policy differs significantly from the baseline."""
NO_INTERVAL = "no interval"
"""Outcome: fewer than 2 replications, so no interval and no verdict (only the values)."""
NO_DATA = "no data"
"""Outcome: the metric has no value."""
LEVEL = "level"
"""Outcome of a run of one policy: its value with its interval, nothing to compare."""

RETENTION_HEADLINE = ("daily_active_players", "churn_per_week")
"""The headline metrics of a run with a retention model (when its metrics have them)."""

TERMINAL_EXTRA = ("queue_time_p90", "queue_time_tail_mean", "games_per_hour")
"""Metrics the terminal's table shows besides the headline metrics."""

TERMINAL_WIDTH = 100
"""The width the headline's lines are wrapped to in the terminal."""

_LABELS = {
    "queue_time_mean": "mean queue time",
    "queue_time_p50": "queue time p50",
    "queue_time_p90": "queue time p90",
    "queue_time_p99": "queue time p99",
    "queue_time_tail_mean": "tail wait (mean of the longest 1%)",
    "abandonment_rate": "abandonment rate",
    "games_per_hour": "games per hour",
    "draw_prob_true_mean": "true draw probability",
    "skill_gap_true_mean": "true skill gap",
    "fair_band_share": "games in the fair band",
    "team_gap_true_mean": "true team gap",
    "daily_active_players": "daily active players",
    "churn_per_week": "churn per week",
}

_UNITS = {
    "abandonment_rate": "share of spells",
    "games_per_hour": "games/h",
    "draw_prob_true_mean": "probability",
    "skill_gap_true_mean": "skill points",
    "fair_band_share": "share of games",
    "team_gap_true_mean": "skill points",
    "stronger_side_win_rate": "share of games",
    "win_ratio_dispersion": "win ratio",
    "daily_active_players": "players/day",
    "visits_per_member_week": "visits/week",
    "churn_per_week": "share/week",
    "retained": "share",
    "latency_ms_mean": "ms",
    "latency_ms_p90": "ms",
    "delta_ping_ms_mean": "ms",
    "cross_region_share": "share of games",
}

_DIMENSIONLESS = frozenset({"probability", "share", "share of spells", "share of games", "tau"})
"""Units not written after a number (the label says what the number is)."""


def metric_unit(metric: str) -> str:
    """Return a metric's unit: ``min`` for queue times, ``probability``, ``tau``, ..."""
    for prefix in ("newcomer_", "veteran_"):
        metric = metric.removeprefix(prefix)
    metric = metric.partition("@")[0]  # one region's: the metric's unit
    if metric.startswith("queue_time_"):
        return "min"
    if metric.endswith(".rating_rmse"):
        return "skill points"
    if metric.endswith((".kendall_tau", ".kendall_tau_veterans")):
        return "tau"
    if metric.startswith(("retained_decile_", "retained_deciles_")):
        return "share"
    if metric.startswith("visits_per_member_week"):
        return "visits/week"
    if metric.startswith("veterans_"):
        return "players"
    return _UNITS.get(metric, "")


def metric_label(metric: str) -> str:
    """Return a metric's name in words (``queue time p90``, ``bayesian's Kendall's tau``)."""
    rater, _, kind = metric.rpartition(".")
    if rater and kind == "kendall_tau":
        return f"{rater}'s Kendall's tau"
    return _LABELS.get(metric, metric)


def shown_unit(metric: str) -> str:
    """Return the unit written after a metric's numbers: empty for a dimensionless one."""
    unit = metric_unit(metric)
    return "" if unit in _DIMENSIONLESS else unit


def is_percent(metric: str) -> bool:
    """Whether a metric is shown in percent (its differences in percentage points): the
    abandonment rate (of a tenure group or region too), one form in sentences and tables."""
    for prefix in ("newcomer_", "veteran_"):
        metric = metric.removeprefix(prefix)
    return metric.partition("@")[0] == "abandonment_rate"


def with_unit(text: str, metric: str) -> str:
    """Return a formatted number or interval followed by the metric's unit (if it has one)."""
    unit = shown_unit(metric)
    return text if not unit or text == "n/a" else f"{text} {unit}"


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% interval (``low`` and ``high`` NaN: no interval)."""

    mean: float
    low: float
    high: float

    def text(self, *, signed: bool = False) -> str:
        """Return ``"mean [low, high]"``, or the mean alone without an interval."""
        if math.isfinite(self.mean) and not math.isfinite(self.low):
            return format_number(self.mean, signed=signed)
        return format_interval(self.mean, self.low, self.high, signed=signed)


@dataclass(frozen=True)
class Difference:
    """One policy's paired difference from the baseline: a row of ``differences.csv``.

    ``sd`` is the standard deviation of the paired differences and ``n`` their number, whence
    the smallest difference the comparison could detect (the row's ``detectable``).
    """

    policy: str
    estimate: Estimate
    p_value: float
    p_adjusted: float
    sd: float = math.nan
    n: int = 0


@dataclass(frozen=True)
class HeadlineItem:
    """The headline on one metric (``outcome`` is :data:`BETTER`, :data:`BASELINE_BEST`, ...).

    ``best`` is the best policy (with :data:`BETTER` the policy, with :data:`BASELINE_BEST` the
    baseline), ``difference`` the best policy's difference from the baseline (with
    :data:`NO_DIFFERENCE` the difference closest to significance: the smallest adjusted
    p-value), ``worse`` the
    policies significantly worse than the baseline (with :data:`BASELINE_BEST`), ``levels`` per
    policy its mean over replications with its interval (from ``summary.csv``).
    """

    metric: str
    outcome: str
    best: str | None = None
    difference: Difference | None = None
    worse: tuple[Difference, ...] = ()
    levels: Mapping[str, Estimate] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Return the metric in words with its unit and better direction."""
        direction = better_direction(self.metric)
        unit = metric_unit(self.metric)
        parts = [] if unit == "min" else [unit]  # a queue time's numbers carry s or min
        if direction != NEUTRAL:
            parts.append(f"{direction} is better")
        return f"{metric_label(self.metric)} ({', '.join(p for p in parts if p)})"


@dataclass(frozen=True)
class Headline:
    """The headline of an experiment: one :class:`HeadlineItem` per headline metric."""

    baseline: str
    policies: tuple[str, ...]
    replications: int
    tests: int
    items: tuple[HeadlineItem, ...]
    #: The answer first: per real policy, the share of the oracle's gain it captures and its
    #: costs against random pairing, with its regions' and tenure groups' sentences
    #: (:mod:`lobbysim.reporting.answer`; none without both bounds in the comparison).
    answers: tuple[str, ...] = ()
    #: Warnings on the measures (a queue-time percentile on the pass grid for every policy).
    notes: tuple[str, ...] = ()
    #: What the compared variants are (``policy``, or ``rule set`` for FlexMatch rule sets), and
    #: their plural: the words of the lead and of each item.
    noun: str = "policy"
    plural: str = "policies"
    #: Queue times in seconds (True) or minutes (False) throughout, or by each interval (None).
    seconds: bool | None = None


def headline_metrics(columns: Sequence[str], driver: str) -> list[str]:
    """Return the headline metrics among a run's metric columns, in headline order."""
    wanted = [
        "queue_time_mean",
        "abandonment_rate",
        "draw_prob_true_mean",
        "skill_gap_true_mean",
        "team_gap_true_mean",
        "fair_band_share",
        f"{driver}.kendall_tau",
        *RETENTION_HEADLINE,
    ]
    return [m for m in wanted if m in columns]


def _estimate(row: pd.Series) -> Estimate:
    return Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))


def _difference(row: pd.Series) -> Difference:
    p_value, p_adjusted = float(row["p_value"]), float(row["p_adjusted"])
    sd, n = float(row["sd"]), int(row["n"])
    return Difference(str(row["policy"]), _estimate(row), p_value, p_adjusted, sd, n)


def _improvement(difference: Difference, metric: str) -> float:
    """Return how much better than the baseline a difference is (negative: worse)."""
    mean = difference.estimate.mean
    return mean if better_direction(metric) == HIGHER_IS_BETTER else -mean


def headline_item(
    metric: str, differences: pd.DataFrame, levels: Mapping[str, Estimate], replications: int
) -> HeadlineItem:
    """Return the headline on one metric from the comparison's paired differences.

    ``differences`` holds the rows of ``differences.csv`` (any metrics: this one's are used);
    empty for a run of one policy.
    """
    rows = differences[differences["metric"] == metric]
    if not any(math.isfinite(e.mean) for e in levels.values()):
        return HeadlineItem(metric, NO_DATA, levels=levels)
    if rows.empty:
        return HeadlineItem(metric, LEVEL, levels=levels)
    if replications < 2:
        return HeadlineItem(metric, NO_INTERVAL, levels=levels)
    flags = dict(zip(rows["policy"], rows["significant"], strict=True))
    # the bounds (random pairing, the oracle) are references, never ranked
    candidates = [_difference(row) for _, row in rows.iterrows() if row["policy"] not in BOUNDS]
    if not candidates:
        return HeadlineItem(metric, LEVEL, levels=levels)
    significant = [
        d for d in candidates if bool(flags[d.policy]) and better_direction(metric) != NEUTRAL
    ]
    better = [d for d in significant if _improvement(d, metric) > 0]
    if better:
        best = max(better, key=lambda d: _improvement(d, metric))
        return HeadlineItem(metric, BETTER, best.policy, best, levels=levels)
    worse = tuple(d for d in significant if _improvement(d, metric) < 0)
    if worse:
        baseline = str(rows["baseline"].iloc[0])
        return HeadlineItem(metric, BASELINE_BEST, baseline, worse=worse, levels=levels)
    tested = [d for d in candidates if math.isfinite(d.p_adjusted)]
    closest = min(tested, key=lambda d: d.p_adjusted) if tested else None
    return HeadlineItem(metric, NO_DIFFERENCE, difference=closest, levels=levels)


def build_headline(
    differences: pd.DataFrame,
    summary: pd.DataFrame,
    policies: Sequence[str],
    metrics: Sequence[str],
    replications: int,
) -> Headline:
    """Return the headline of an experiment on ``metrics`` (see the module docstring).

    Args:
        differences: the paired differences (``differences.csv``; empty for one policy).
        summary: per policy and metric the mean and interval (``summary.csv``).
        policies: the policies, the baseline first.
        metrics: the headline metrics (:func:`headline_metrics`).
        replications: the replications per policy.
    """
    items = []
    for metric in metrics:
        rows = summary[summary["metric"] == metric].set_index("policy")
        levels = {p: _estimate(rows.loc[p]) for p in policies if p in rows.index}
        items.append(headline_item(metric, differences, levels, replications))
    tests = int(differences["p_value"].notna().sum()) if len(differences) else 0
    return Headline(policies[0], tuple(policies), replications, tests, tuple(items))


def experiment_headline(result: ExperimentResult) -> Headline:
    """Return the headline of an experiment's result, its answers first."""
    driver = result.scenario.raters.driver.name
    metrics = headline_metrics(list(result.summary["metric"].unique()), driver)
    headline = build_headline(
        result.differences, result.summary, result.policies, metrics, len(result.seeds)
    )
    # a measure no policy moves says nothing about the policies: a note, not a headline item
    same = constant_metrics(result.metrics, metrics) if len(result.policies) > 1 else {}
    kept = [item for item in headline.items if item.metric not in same]
    # the significant differences among real policies first, each group in headline order
    significant = (BETTER, BASELINE_BEST)
    items = sorted(kept, key=lambda item: item.outcome not in significant)
    headline = replace(
        headline,
        items=tuple(items),
        noun=result.noun(),
        plural=result.noun(plural=True),
        seconds=queue_seconds(result.metrics),
    )
    said = []
    if len(result.seeds) >= 2:
        for answer in answers(result):
            said += [answer_sentence(answer), *detail_sentences(result, answer)]
    noun = result.noun()
    notes = [*grid_notes(result), *(constant_note(m, v, noun) for m, v in same.items())]
    return replace(headline, answers=tuple(said), notes=tuple(notes))


def constant_metrics(runs: pd.DataFrame, metrics: Sequence[str]) -> dict[str, float]:
    """Return the metrics among ``metrics`` that take one value in every run of every policy
    (``runs``: one row per policy and replication), each with that value.

    Such a measure (no abandonment at all where players have no patience limit, a queue time of
    0 where every game is scheduled) cannot tell policies apart, so the headline leaves it out
    and says so (:func:`constant_note`).
    """
    out = {}
    for metric in metrics:
        if metric not in runs.columns:
            continue
        values = runs[metric].to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        if len(finite) == len(values) and len(values) and np.all(finite == finite[0]):
            out[metric] = float(finite[0])
    return out


def constant_note(metric: str, value: float, noun: str = "policy") -> str:
    """Return the note for a headline measure left out because no policy (``noun``: no rule
    set) moves it."""
    shown = value_text(Estimate(value, math.nan, math.nan), metric)
    return (
        f"{metric_label(metric)} is {shown} in every replication of every {noun}: "
        f"left out of the headline (no {noun} moves it here)"
    )


# --------------------------------------------------------------------------------------------
# Wording


def value_text(
    estimate: Estimate, metric: str, *, signed: bool = False, seconds: bool | None = None
) -> str:
    """Return an estimate with its unit: a queue time in seconds with ``seconds`` (the
    comparison's unit), minutes with False, and with None in seconds where it is under two
    minutes (:func:`~lobbysim.reporting.answer.duration_text`); the abandonment rate in percent,
    a difference of it (``signed``) in percentage points."""
    e = estimate
    low, high = (e.low, e.high) if math.isfinite(e.low) else (math.nan, math.nan)
    if metric_unit(metric) == "min":
        return duration_text(e.mean, low, high, signed=signed, seconds=seconds)
    if is_percent(metric) and (signed or not math.isfinite(e.mean)):
        return points_text(e.mean, low, high) if math.isfinite(e.mean) else "n/a"
    if is_percent(metric):
        bounds = f" [{format_number(100 * low)}%, {format_number(100 * high)}%]"
        return f"{format_number(100 * e.mean)}%" + (bounds if math.isfinite(high) else "")
    return with_unit(estimate.text(signed=signed), metric)


def _difference_text(
    difference: Difference, metric: str, against: str = "", seconds: bool | None = None
) -> str:
    """Return ``"+6.1 s [3.0, 9.2]<against> (adjusted p 0.01)"``."""
    estimate = value_text(difference.estimate, metric, signed=True, seconds=seconds)
    return f"{estimate}{against} (adjusted p {format_p_value(difference.p_adjusted)})"


def _levels_text(item: HeadlineItem, seconds: bool | None = None) -> str:
    return ", ".join(
        f"{policy}{' (bound)' if policy in BOUNDS else ''} "
        f"{value_text(estimate, item.metric, seconds=seconds)}"
        for policy, estimate in item.levels.items()
    )


def item_sentence(
    item: HeadlineItem, baseline: str, noun: str = "policy", seconds: bool | None = None
) -> str:
    """Return the headline on one metric as one sentence, numbers with units; ``noun``: what
    the variants compared are (``policy``, ``rule set``); ``seconds``: the comparison's unit of
    queue times (:attr:`Headline.seconds`)."""
    if item.outcome == BETTER and item.difference is not None:
        against = f" against {baseline}"
        text = _difference_text(item.difference, item.metric, against, seconds)
        return f"{item.best} is best: {text}"
    if item.outcome == BASELINE_BEST:
        worse = "; ".join(
            f"{d.policy} {_difference_text(d, item.metric, seconds=seconds)}" for d in item.worse
        )
        return f"no {noun} beats {baseline}; worse: {worse}"
    if item.outcome == NO_DIFFERENCE:
        text = f"no {noun} differs significantly from {baseline}"
        closest = item.difference
        if closest is None:
            return f"{text} (fewer than 2 replications with data: no test)"
        parts = []
        if closest.estimate.mean != 0:
            estimate = value_text(closest.estimate, item.metric, signed=True, seconds=seconds)
            p_value = format_p_value(closest.p_adjusted)
            parts.append(f"closest: {closest.policy} {estimate}, adjusted p {p_value}")
        parts.append(_detectable(closest, item.metric, seconds))
        return f"{text} ({'; '.join(parts)})"
    if item.outcome == NO_INTERVAL:
        return f"{_levels_text(item, seconds)}; n/a (1 replication): no verdict"
    if item.outcome == LEVEL:
        return _levels_text(item, seconds)
    return "no data"


def _detectable(difference: Difference, metric: str, seconds: bool | None = None) -> str:
    """Return :func:`detectable_text` for a difference in the unit its differences are shown
    in: a queue time's sizes in seconds with ``seconds`` (with None, where they are under two
    minutes), the abandonment rate's in percentage points."""
    sd, unit = difference.sd, shown_unit(metric)
    if metric_unit(metric) == "min":
        small = detectable_difference(sd, difference.n) < 2
        if seconds or (seconds is None and small):
            sd, unit = 60 * sd, "s"
    elif is_percent(metric):
        sd, unit = 100 * sd, "points"
    return detectable_text(sd, difference.n, unit)


def headline_lead(headline: Headline) -> str:
    """Return the sentence that says what the headline compares and by which rule."""
    n = headline.replications
    runs = f"{n} replication{'s' if n != 1 else ''} per {headline.noun}"
    if len(headline.policies) < 2:
        what = f"mean [{CONFIDENCE:.0%} CI] over {n} replications" if n > 1 else "1 replication"
        return f"Headline: {headline.baseline}, {what}" + (": no interval." if n < 2 else ".")
    if n < 2:
        return (
            f"Headline: each {headline.noun} against {headline.baseline}, 1 replication: no "
            "interval and no verdict (run 2 or more replications)."
        )
    if headline.items and all(item.outcome in (LEVEL, NO_DATA) for item in headline.items):
        # nothing but the bounds besides the baseline: levels, no differences
        bounds = " and ".join(p for p in headline.policies if p in BOUNDS)
        return (
            f"Headline: each {headline.noun}'s level, mean [{CONFIDENCE:.0%} CI] over {runs} "
            f"(the bounds {bounds} are references, not ranked: no other {headline.noun} to "
            f"set against {headline.baseline})."
        )
    return (
        f"Headline: each {headline.noun} minus {headline.baseline}, paired over {runs}, mean "
        f"[{CONFIDENCE:.0%} CI]; significant: Benjamini-Hochberg adjusted p < {FDR_LEVEL:.2g} "
        f"over all {headline.tests} differences."
    )


def headline_blocks(headline: Headline) -> list[Block]:
    """Return the headline as report blocks: the answers, the lead sentence, one item per
    metric, the notes."""
    items = [
        (item.label, item_sentence(item, headline.baseline, headline.noun, headline.seconds))
        for item in headline.items
    ]
    blocks = [md_text(f"**{sentence}**") for sentence in headline.answers]
    if items:
        blocks += [md_text(headline_lead(headline)), md_items(items)]
    blocks += [md_text(f"Note: {note}") for note in headline.notes]
    return blocks


_SHOWN_UNITS = sorted(
    {"min", "skill points", "players", *_UNITS.values()} - _DIMENSIONLESS, key=len, reverse=True
)
_UNBROKEN = re.compile(
    r"[^\s\[]+ (?:s|min|points)(?: \[[^\]]*\])?(?=[\s,.;)]|$)"  # a queue time: "1.7 s [1.6, 1.8]"
    r"|(?:[^\s\[]+ \[[^\]]*\]|±\S+)"
    rf"(?: (?:{'|'.join(re.escape(u) for u in _SHOWN_UNITS)})\b)?"
    r"|\bp (?:< )?\S+"
)
"""What the terminal's wrapping keeps on one line: a number with its interval and unit, a ±
size with its unit, a p-value."""

_NO_BREAK = "\u00a0"


def wrap_terminal(
    line: str, width: int = TERMINAL_WIDTH, indent: str = "    ", *, clauses: bool = True
) -> list[str]:
    """Return ``line`` wrapped to ``width`` characters, continued lines indented by ``indent``.

    Breaks after a clause's ``"; "`` where it can (with ``clauses``; without, lines are filled),
    otherwise between words, never inside an interval, a p-value or a ± size (a word longer than
    ``width`` stays whole).
    """
    kept = _UNBROKEN.sub(lambda m: m.group().replace(" ", _NO_BREAK), line)
    packed: list[str] = []
    for clause in re.split(r"(?<=;) ", kept) if clauses else [kept]:
        if packed and len(packed[-1]) + 1 + len(clause) <= width:
            packed[-1] += " " + clause
        else:
            packed.append(indent + clause if packed else clause)
    wrapper = textwrap.TextWrapper(
        width=width,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    lines = [wrapped for part in packed for wrapped in wrapper.wrap(part)]
    return [wrapped.replace(_NO_BREAK, " ") for wrapped in lines]


def headline_text(headline: Headline) -> str:
    """Return the headline as terminal text: the lead, then one indented entry per metric.

    Every line is wrapped to :data:`TERMINAL_WIDTH` characters (:func:`wrap_terminal`).
    """
    lines = []
    for sentence in headline.answers:
        lines += wrap_terminal(sentence, indent="  ")
    if lines:
        lines.append("")
    lines += wrap_terminal(headline_lead(headline), indent="  ")
    for item in headline.items:
        sentence = item_sentence(item, headline.baseline, headline.noun, headline.seconds)
        lines += wrap_terminal(f"  {item.label}: {sentence}")
    for note in headline.notes:
        lines += wrap_terminal(f"Note: {note}", indent="  ")
    return "\n".join(lines)
