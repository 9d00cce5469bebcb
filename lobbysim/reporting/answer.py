"""The answer a user came for: what a matchmaker buys over random pairing, and what it costs.

When a comparison has both bounds, ``uniform_random`` (no matchmaking) and ``oracle`` (matching
on true skills), each real policy gets one sentence (:func:`answer_sentence`):

    draw_chance captures 62% [55%, 69%] of the fairness the oracle adds over random pairing
    (true skill gap), at a cost of +2.3 s [+1.9, +2.7] mean wait and +8.1 s [+6.0, +10.2] tail
    wait; no significant change in abandonment (could detect ±0.4 points).

The share is :func:`~lobbysim.experiments.replications.oracle_shares`'s (the ratio of the mean
paired gains over random pairing, with its delta-method interval) on the first fairness metric
the run has (the true skill gap, else the true draw probability); the costs are paired
differences from ``uniform_random`` on the same seeds
(:func:`~lobbysim.experiments.replications.paired_differences`), mean [95% interval]. Words
follow the signs: a share whose interval lies below 0 reads "less fair than random pairing by
X [..] of the fairness the oracle adds over it", one whose interval holds 0 "not
significantly fairer than random pairing"; a difference whose interval lies above 0 is a cost,
one below 0 a saving ("with 2.1 s [1.5, 2.7] less tail wait"), and one whose interval holds 0
reads "no significant change in mean wait (could detect ±Y)", Y the smallest difference the
comparison detects at 80% power (:func:`~lobbysim.stats.intervals.detectable_difference`).
The oracle is a bound and gets no sentence.

The tail cost is ``queue_time_tail_mean``, the mean of the longest 1% of waits
(:func:`~lobbysim.stats.metrics.tail_mean`), not a percentile: with passes every ``tick``
minutes and games lasting whole ticks the waits fall on the pass grid, and a percentile pins
to a multiple of the tick. :func:`measure_flags` marks a queue-time measure whose values are
multiples of the pass interval in every run of every policy, or whose interval has zero width
for some policy (the same value in every replication); a flagged measure is never quoted in a
sentence (the tables mark it, :func:`grid_notes` says why).

With a world, one more sentence per policy gives each region's mean-wait cost; with a player
base, one gives the share for newcomers and veterans. Where the oracle is not significantly
fairer than random pairing on that metric (team games can make it so), the next fairness metric
on which it is gives the share; on none, the sentence says so and gives the policy's and the
oracle's paired differences from random pairing instead of a ratio (:func:`_no_share_sentence`).

Queue times have one unit per comparison (:func:`queue_seconds`): seconds when every policy's
mean wait is under two minutes in every replication, else minutes, in the sentences, the
tables and the figures alike (:func:`duration_text`, :func:`queue_time_unit`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lobbysim.experiments.replications import (
    ORACLE_POLICY,
    ORACLE_SHARE_METRICS,
    UNIFORM_POLICY,
    ExperimentResult,
    oracle_shares,
    paired_differences,
)
from lobbysim.reporting.document import format_number
from lobbysim.stats.intervals import detectable_difference
from lobbysim.stats.metrics import QUEUE_METRICS

BOUNDS = (UNIFORM_POLICY, ORACLE_POLICY)
"""The reference policies: bounds of what matchmaking can do, never ranked as best."""

COSTS = (
    ("queue_time_mean", "mean wait"),
    ("queue_time_tail_mean", "tail wait"),
    ("abandonment_rate", "abandonment"),
)
"""The costs of matchmaking, against random pairing: metric, words."""

SECONDS_UNDER = 2.0
"""Queue times are shown in seconds when every policy's mean wait is under this many minutes in
every replication (:func:`queue_seconds`)."""

ON_GRID = "on the pass grid"
"""A flag of :func:`measure_flags`: the values are multiples of the pass interval in every run."""
ZERO_WIDTH = "zero-width interval"
"""A flag of :func:`measure_flags`: some policy has the same value in every replication."""

_FAIRNESS_WORDS = {
    "skill_gap_true_mean": "true skill gap",
    "draw_prob_true_mean": "true draw probability",
}


@dataclass(frozen=True)
class Cost:
    """A paired difference from random pairing: mean [low, high] in the metric's units."""

    metric: str
    mean: float
    low: float
    high: float
    sd: float = math.nan
    """The standard deviation of the paired differences (NaN: unknown)."""
    n: int = 0
    """The number of paired replications behind the difference."""

    @property
    def sign(self) -> int:
        """+1 when the interval lies above 0, -1 below, 0 when it holds 0 (or is unknown)."""
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return 0
        return 1 if self.low > 0 else -1 if self.high < 0 else 0


@dataclass(frozen=True)
class Answer:
    """One real policy's answer: the share of the oracle's fairness gain it captures (a
    fraction, with its interval) on ``fairness``, and its costs against random pairing."""

    policy: str
    fairness: str
    share: float
    low: float
    high: float
    costs: tuple[Cost, ...]
    oracle_gain: Cost | None = None
    gain: Cost | None = None
    """The oracle's and the policy's paired differences from random pairing on ``fairness``:
    given where the share is not (the oracle no fairer than random pairing)."""
    seconds: bool | None = None
    """Queue times in seconds (True), minutes (False), or by each interval's values (None)."""


def has_bounds(policies: Sequence[str]) -> bool:
    """Whether a comparison has both bounds (random pairing and the oracle)."""
    return all(b in policies for b in BOUNDS)


def queue_seconds(runs: pd.DataFrame) -> bool:
    """Return whether a comparison's queue times are shown in seconds: when every policy's mean
    wait (``queue_time_mean``) is under :data:`SECONDS_UNDER` minutes in every replication
    (``runs``: one row per policy and replication). One unit for every queue time of the
    comparison, in its sentences, tables and figures."""
    if "queue_time_mean" not in runs.columns:
        return True
    values = runs["queue_time_mean"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    return bool(np.all(np.abs(values) < SECONDS_UNDER))


def queue_time_unit(runs: pd.DataFrame) -> tuple[float, str]:
    """Return ``(scale, unit)`` for a comparison's queue times: ``(60.0, "s")`` or ``(1.0,
    "min")`` (:func:`queue_seconds`); a value in minutes times ``scale`` is in ``unit``. For the
    figures' axes and labels: ``f"mean queue time ({unit})"``."""
    return (60.0, "s") if queue_seconds(runs) else (1.0, "min")


def duration_text(
    mean: float, low: float, high: float, *, signed: bool = True, seconds: bool | None = None
) -> str:
    """Return a queue time (minutes) with its interval: in seconds with ``seconds`` True (the
    comparison's unit, :func:`queue_seconds`), minutes with False; with None, seconds when every
    number of it is under :data:`SECONDS_UNDER` minutes: ``"+2.3 s [+1.9, +2.7]"``."""
    if not math.isfinite(mean):
        return "n/a"
    if seconds is None:
        values = [v for v in (mean, low, high) if math.isfinite(v)]
        seconds = all(abs(v) < SECONDS_UNDER for v in values)
    scale, unit = (60.0, "s") if seconds else (1.0, "min")
    centre = format_number(mean * scale, signed=signed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{centre} {unit}"
    bounds = (
        f"{format_number(low * scale, signed=signed)}, {format_number(high * scale, signed=signed)}"
    )
    return f"{centre} {unit} [{bounds}]"


def points_text(mean: float, low: float, high: float, *, signed: bool = True) -> str:
    """A difference of two shares in percentage points: ``"+0.4 points [+0.2, +0.6]"``."""
    centre = format_number(100 * mean, signed=signed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{centre} points"
    bounds = (format_number(100 * v, signed=signed) for v in (low, high))
    return f"{centre} points [{', '.join(bounds)}]"


def _points_text(cost: Cost) -> str:
    return points_text(cost.mean, cost.low, cost.high)


def _percent(value: float) -> str:
    """A share in whole percent (``"-3%"``); one that rounds to 0 is ``"0%"``, never ``"-0%"``."""
    return f"{round(100 * value) + 0:d}%" if math.isfinite(value) else "n/a"


def _costs(runs: pd.DataFrame, policy: str, metrics: Sequence[str]) -> dict[str, Cost]:
    """Return a policy's paired differences from random pairing on ``metrics`` (``runs``: one
    row per policy and replication)."""
    frame = runs[runs["policy"].isin([UNIFORM_POLICY, policy])]
    wanted = [m for m in metrics if m in frame.columns]
    differences = paired_differences(frame[["policy", "replication", *wanted]], UNIFORM_POLICY)
    out = {}
    for _, row in differences.iterrows():
        out[str(row["metric"])] = Cost(
            str(row["metric"]),
            float(row["mean"]),
            float(row["ci_low"]),
            float(row["ci_high"]),
            float(row["sd"]),
            int(row["n"]),
        )
    return out


_TOLERANCE = 1e-9
"""Relative width under which an interval counts as of zero width (float noise of equal runs)."""


def _zero_width(cost: Cost) -> bool:
    """Whether a paired difference is the same in every replication (to float noise)."""
    if cost.n < 2 or not (math.isfinite(cost.low) and math.isfinite(cost.high)):
        return False
    return cost.high - cost.low <= _TOLERANCE * max(1.0, abs(cost.mean))


def measure_flags(
    runs: pd.DataFrame, tick: float | None = None, metrics: Sequence[str] = QUEUE_METRICS
) -> dict[str, str]:
    """Return the measures among ``metrics`` no sentence may quote, each with why.

    :data:`ON_GRID`: a queue time whose finite values are multiples of the pass interval
    ``tick`` (minutes) in every run of every policy (``runs``: one row per policy and
    replication), not all 0, an artefact of the pass grid; :data:`ZERO_WIDTH`: a measure that
    some policy with 2 or more replications has at one value in every replication (0 in every
    run, say), so its interval has zero width. A measure without a value is not flagged."""
    out: dict[str, str] = {}
    for metric in metrics:
        if metric not in runs.columns:
            continue
        values = runs[metric].to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        if not finite.size:
            continue
        on_zero = bool(np.all(finite == 0))  # no wait at all: one value, not the grid
        if tick is not None and tick > 0 and metric.startswith("queue_time_") and not on_zero:
            steps = finite / tick
            if np.all(np.abs(steps - np.round(steps)) < 1e-9 * np.maximum(1.0, np.abs(steps))):
                out[metric] = ON_GRID
                continue
        for _, group in runs.groupby("policy", sort=False):
            own = group[metric].to_numpy(dtype=float)
            own = own[np.isfinite(own)]
            if own.size >= 2 and np.ptp(own) <= _TOLERANCE * max(1.0, float(np.abs(own).max())):
                out[metric] = ZERO_WIDTH
                break
    return out


def answers(result: ExperimentResult) -> list[Answer]:
    """Return each real policy's answer (none without both bounds in the comparison)."""
    tick = float(result.scenario.matchmaker.tick)
    return runs_answers(result.metrics, result.policies, tick=tick)


def runs_answers(
    runs: pd.DataFrame, policies: Sequence[str], *, tick: float | None = None
) -> list[Answer]:
    """Return each real policy's answer from per-run metrics, one row per policy and replication
    (``policy``, ``replication``, the metrics): a comparison's, or one sweep cell's; none
    without both bounds among ``policies``. ``tick``: the pass interval (minutes), whence the
    queue times on the pass grid (:func:`measure_flags`), which no answer quotes, nor a measure
    of zero-width interval."""
    if not has_bounds(policies):
        return []
    names = [m for m in ORACLE_SHARE_METRICS if m in runs.columns]
    if not names:
        return []
    every = oracle_shares(runs, names=names)
    # the first fairness metric on which the oracle is fairer than random pairing, else the first
    defined = every[np.isfinite(every["share"].to_numpy(dtype=float))]["metric"].tolist()
    fairness = next((m for m in names if m in defined), names[0])
    shares = every[every["metric"] == fairness].set_index("policy")
    flagged = measure_flags(runs, tick, [m for m, _ in COSTS])
    seconds = queue_seconds(runs)
    out = []
    for policy in policies:
        if policy in BOUNDS or policy not in shares.index:
            continue
        row = shares.loc[policy]
        costs = _costs(runs, policy, [m for m, _ in COSTS if m not in flagged])
        # a difference of zero width (the same in every replication) is not quoted either
        kept = [costs[m] for m, _ in COSTS if m in costs and not _zero_width(costs[m])]
        share = float(row["share"])
        oracle_gain = gain = None
        if not math.isfinite(share):
            oracle_gain = Cost(
                fairness, float(row["oracle_gain"]), float(row["oracle_low"]),
                float(row["oracle_high"]),
            )  # fmt: skip
            gain = _costs(runs, policy, [fairness]).get(fairness)
        out.append(
            Answer(
                policy,
                fairness,
                share,
                float(row["ci_low"]),
                float(row["ci_high"]),
                tuple(kept),
                oracle_gain,
                gain,
                seconds,
            )
        )
    return out


def _words(metric: str) -> str:
    return dict(COSTS).get(metric.partition("@")[0], metric)


def _size_text(cost: Cost, value: float, seconds: bool | None) -> str:
    """A size of a cost's metric without sign or interval (``"0.4 s"``, ``"0.3 points"``)."""
    if cost.metric.startswith("queue_time_"):
        return duration_text(value, math.nan, math.nan, signed=False, seconds=seconds)
    return points_text(value, math.nan, math.nan, signed=False)


def _cost_text(cost: Cost, seconds: bool | None = None) -> str:
    """A cost: ``"+2.3 s [+1.9, +2.7] mean wait"``."""
    words = _words(cost.metric)
    if cost.metric.startswith("queue_time_"):
        return f"{duration_text(cost.mean, cost.low, cost.high, seconds=seconds)} {words}"
    return f"{_points_text(cost)} {words}"


def _saving_text(cost: Cost, seconds: bool | None) -> str:
    """A saving, a difference below 0 told by its size: ``"2.1 s [1.5, 2.7] less tail wait"``."""
    words = _words(cost.metric)
    if cost.metric.startswith("queue_time_"):
        size = duration_text(-cost.mean, -cost.high, -cost.low, signed=False, seconds=seconds)
    else:
        size = points_text(-cost.mean, -cost.high, -cost.low, signed=False)
    return f"{size} less {words}"


def _unchanged_text(cost: Cost, seconds: bool | None) -> str:
    """A difference whose interval holds 0: ``"mean wait (could detect ±0.4 s)"``."""
    detectable = detectable_difference(cost.sd, cost.n)
    if not math.isfinite(detectable):
        return _words(cost.metric)
    return f"{_words(cost.metric)} (could detect ±{_size_text(cost, detectable, seconds)})"


def _join(parts: Sequence[str], word: str = "and") -> str:
    return ", ".join(parts[:-1]) + f" {word} {parts[-1]}" if len(parts) > 1 else "".join(parts)


def costs_clauses(costs: Sequence[Cost], seconds: bool | None = None) -> list[str]:
    """Return the clauses on the costs, by the sign of each interval: ``"at a cost of A and B"``
    (above 0), ``"with C less D"`` (below 0), ``"no significant change in E (could detect
    ±Y)"`` (holding 0); none without costs."""
    above = [_cost_text(c, seconds) for c in costs if c.sign > 0]
    below = [_saving_text(c, seconds) for c in costs if c.sign < 0]
    held = [_unchanged_text(c, seconds) for c in costs if c.sign == 0]
    out = []
    if above:
        out.append(f"at a cost of {_join(above)}")
    if below:
        out.append(f"with {_join(below)}")
    if held:
        out.append(f"no significant change in {_join(held, 'or')}")
    return out


def _with_costs(text: str, clauses: Sequence[str]) -> str:
    if not clauses:
        return text + "."
    return f"{text}, {'; '.join(clauses)}."


def fairness_difference(cost: Cost) -> str:
    """A difference in a fairness metric with its interval, in the metric's own units: the
    true draw probability's as a probability (``"+0.0123 [+0.0101, +0.0145]"``), the true
    skill gap's in skill points (``"+0.062 [+0.049, +0.075] skill points"``)."""
    unit = "" if cost.metric.endswith("draw_prob_true_mean") else " skill points"
    centre = format_number(cost.mean, signed=True)
    if not (math.isfinite(cost.low) and math.isfinite(cost.high)):
        return f"{centre}{unit}"
    low, high = (format_number(v, signed=True) for v in (cost.low, cost.high))
    return f"{centre} [{low}, {high}]{unit}"


def share_words(share: float, low: float, high: float) -> str:
    """Return what a policy does with the fairness the oracle adds, by the sign of the share's
    interval: ``"captures 55% [50%, 59%] of"``, ``"is less fair than random pairing by 74%
    [46%, 101%] of"`` (below 0), ``"is not significantly fairer than random pairing: 5% [-10%,
    20%] of"`` (holding 0); each followed by the fairness the oracle adds."""
    interval = math.isfinite(low) and math.isfinite(high)
    if interval and high < 0:
        return f"is less fair than random pairing by {_percent(-share)} [{_percent(-high)}, " + (
            f"{_percent(-low)}] of"
        )
    text = _percent(share) + (f" [{_percent(low)}, {_percent(high)}]" if interval else "")
    if interval and low <= 0:
        return f"is not significantly fairer than random pairing: {text} of"
    return f"captures {text} of"


def answer_sentence(answer: Answer) -> str:
    """Return the answer as one sentence (see the module docstring)."""
    if answer.oracle_gain is not None and not math.isfinite(answer.share):
        return _no_share_sentence(answer)
    fairness = _FAIRNESS_WORDS.get(answer.fairness, answer.fairness)
    words = share_words(answer.share, answer.low, answer.high)
    over = "it" if words.startswith("is ") else "random pairing"
    text = f"{answer.policy} {words} the fairness the oracle adds over {over} ({fairness})"
    return _with_costs(text, costs_clauses(answer.costs, answer.seconds))


def _no_share_sentence(answer: Answer) -> str:
    """The answer where the oracle is no fairer than random pairing: both differences, no share."""
    assert answer.oracle_gain is not None
    fairness = _FAIRNESS_WORDS.get(answer.fairness, answer.fairness)
    text = (
        f"{answer.policy} has no share of the oracle's gain to capture: matching on true skill "
        f"is no fairer than random pairing here ({fairness} "
        f"{fairness_difference(answer.oracle_gain)} for the oracle)"
    )
    if answer.gain is not None:
        text += f"; {answer.policy}'s is {fairness_difference(answer.gain)} against random pairing"
    return _with_costs(text, costs_clauses(answer.costs, answer.seconds))


def _share_text(shares: pd.DataFrame, policy: str, metric: str) -> str | None:
    """A share in the words of its sign (:func:`share_words`), or None where there is none."""
    rows = shares[(shares["policy"] == policy) & (shares["metric"] == metric)]
    if rows.empty or not math.isfinite(float(rows["share"].iloc[0])):
        return None
    row = rows.iloc[0]
    return share_words(float(row["share"]), float(row["ci_low"]), float(row["ci_high"]))


def detail_sentences(result: ExperimentResult, answer: Answer) -> list[str]:
    """Return the answer's further sentences: each region's mean wait against random pairing
    (with a world), the share for newcomers and veterans (with a player base), each in the
    words of its sign."""
    out = []
    world = result.scenario.world
    if world is not None and "queue_time_mean" in {c.metric for c in answer.costs}:
        metrics = [f"queue_time_mean@{r}" for r in world.region_names]
        costs = _costs(result.metrics, answer.policy, metrics)
        parts = []
        for name in world.region_names:
            cost = costs.get(f"queue_time_mean@{name}")
            if cost is None or not math.isfinite(cost.mean):
                continue
            if cost.sign == 0:
                detectable = detectable_difference(cost.sd, cost.n)
                could = (
                    f" (could detect ±{_size_text(cost, detectable, answer.seconds)})"
                    if math.isfinite(detectable) and detectable > 0
                    else ""
                )
                parts.append(f"{name} no significant change{could}")
            else:
                text = duration_text(cost.mean, cost.low, cost.high, seconds=answer.seconds)
                parts.append(f"{name} {text}")
        if parts:
            out.append(
                f"{answer.policy}'s mean wait against random pairing by region: {', '.join(parts)}."
            )
    groups = [f"{g}_{answer.fairness}" for g in ("newcomer", "veteran")]
    if all(g in result.metrics.columns for g in groups):
        shares = oracle_shares(result.metrics, names=groups)
        texts = [_share_text(shares, answer.policy, g) for g in groups]
        if all(t is not None for t in texts):
            out.append(
                f"For newcomers {answer.policy} {texts[0]} the oracle's gain; for veterans "
                f"{answer.policy} {texts[1]} it."
            )
    return out


def grid_notes(result: ExperimentResult) -> list[str]:
    """Return a note per queue-time measure :func:`measure_flags` flags on the pass grid in
    every run of every policy, and per cost the answer leaves out for a zero-width interval
    (see the module docstring); the tables mark every flagged measure."""
    tick = float(result.scenario.matchmaker.tick)
    costs = {m for m, _ in COSTS}
    out = []
    for metric, flag in measure_flags(result.metrics, tick).items():
        if flag == ZERO_WIDTH and metric not in costs:
            continue  # a percentile no sentence uses: the tables' mark says it
        words = metric.removeprefix("queue_time_").replace("_", " ")
        name = "tail wait" if metric == "queue_time_tail_mean" else f"queue time {words}"
        if flag == ON_GRID:
            out.append(
                f"{name} is a multiple of the {format_number(tick)}-minute pass interval "
                "(matchmaker.tick) in every run of every policy: an artefact of the pass grid, "
                "which no policy can move off it; flagged in the tables and not used in the "
                "answer (the tail wait, the mean of the longest 1% of waits, is the tail "
                "measure that moves)."
            )
        else:
            out.append(
                f"{name} takes one value in every replication of some policy (a zero-width "
                "interval): flagged in the tables and not used in the answer."
            )
    return out
