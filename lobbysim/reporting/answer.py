"""The answer a user came for: what a matchmaker buys over random pairing, and what it costs.

When a comparison has both bounds, ``uniform_random`` (no matchmaking) and ``oracle`` (matching
on true skills), each real policy gets one sentence (:func:`answer_sentences`):

    draw_chance captures 62% [55%, 69%] of the fairness the oracle adds over random pairing
    (true skill gap), at a cost of +2.3 s [1.9, 2.7] mean wait, +8.1 s [6.0, 10.2] p99 wait and
    +0.4 points [0.2, 0.6] of abandonment.

The share is :func:`~lobbysim.experiments.replications.oracle_shares`'s (the ratio of the mean
paired gains over random pairing, with its delta-method interval) on the first fairness metric
the run has (the true skill gap, else the true draw probability); the costs are paired
differences from ``uniform_random`` on the same seeds
(:func:`~lobbysim.experiments.replications.paired_differences`), mean [95% interval]. With a
world, one more sentence per policy gives each region's mean-wait cost; with a player base, one
gives the share for newcomers and veterans. Where the oracle is not significantly fairer than
random pairing on that metric (team games can make it so), the next fairness metric on which it
is gives the share; on none, the sentence says so and gives the policy's and the oracle's paired
differences from random pairing instead of a ratio (:func:`_no_share_sentence`). Queue times
are in seconds where every number of the interval is under two minutes (:func:`duration_text`).

:func:`grid_notes` warns when a queue-time percentile is a multiple of the pass interval for
every policy: an artefact of the pass grid (passes every ``tick`` minutes, games lasting whole
ticks: the waits themselves fall on the grid), which no policy can move.
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

BOUNDS = (UNIFORM_POLICY, ORACLE_POLICY)
"""The reference policies: bounds of what matchmaking can do, never ranked as best."""

COSTS = (
    ("queue_time_mean", "mean wait"),
    ("queue_time_p99", "p99 wait"),
    ("abandonment_rate", "of abandonment"),
)
"""The costs of matchmaking, against random pairing: metric, words."""

SECONDS_UNDER = 2.0
"""Queue times whose interval is all under this many minutes are shown in seconds."""

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


def has_bounds(policies: Sequence[str]) -> bool:
    """Whether a comparison has both bounds (random pairing and the oracle)."""
    return all(b in policies for b in BOUNDS)


def duration_text(mean: float, low: float, high: float, *, signed: bool = True) -> str:
    """Return a queue time (minutes) with its interval, in seconds when every number of it is
    under :data:`SECONDS_UNDER` minutes, else in minutes: ``"+2.3 s [1.9, 2.7]"``."""
    if not math.isfinite(mean):
        return "n/a"
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


def _points_text(cost: Cost) -> str:
    """A share's difference in percentage points: ``"+0.4 points [0.2, 0.6]"``."""
    centre = format_number(100 * cost.mean, signed=True)
    if not (math.isfinite(cost.low) and math.isfinite(cost.high)):
        return f"{centre} points"
    low, high = (
        format_number(100 * cost.low, signed=True),
        format_number(100 * cost.high, signed=True),
    )
    return f"{centre} points [{low}, {high}]"


def _percent(value: float) -> str:
    return f"{100 * value:.0f}%" if math.isfinite(value) else "n/a"


def _costs(runs: pd.DataFrame, policy: str, metrics: Sequence[str]) -> dict[str, Cost]:
    """Return a policy's paired differences from random pairing on ``metrics`` (``runs``: one
    row per policy and replication)."""
    frame = runs[runs["policy"].isin([UNIFORM_POLICY, policy])]
    wanted = [m for m in metrics if m in frame.columns]
    differences = paired_differences(frame[["policy", "replication", *wanted]], UNIFORM_POLICY)
    out = {}
    for _, row in differences.iterrows():
        out[str(row["metric"])] = Cost(
            str(row["metric"]), float(row["mean"]), float(row["ci_low"]), float(row["ci_high"])
        )
    return out


def answers(result: ExperimentResult) -> list[Answer]:
    """Return each real policy's answer (none without both bounds in the comparison)."""
    return runs_answers(result.metrics, result.policies)


def runs_answers(runs: pd.DataFrame, policies: Sequence[str]) -> list[Answer]:
    """Return each real policy's answer from per-run metrics, one row per policy and replication
    (``policy``, ``replication``, the metrics): a comparison's, or one sweep cell's; none
    without both bounds among ``policies``."""
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
    out = []
    for policy in policies:
        if policy in BOUNDS or policy not in shares.index:
            continue
        row = shares.loc[policy]
        costs = _costs(runs, policy, [m for m, _ in COSTS])
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
                tuple(costs[m] for m, _ in COSTS if m in costs),
                oracle_gain,
                gain,
            )
        )
    return out


def _cost_text(cost: Cost) -> str:
    words = dict(COSTS).get(cost.metric.partition("@")[0], cost.metric)
    if cost.metric.startswith("queue_time_"):
        return f"{duration_text(cost.mean, cost.low, cost.high)} {words}"
    return f"{_points_text(cost)} {words}"


def fairness_difference(cost: Cost) -> str:
    """A difference in a fairness metric with its interval: the true draw probability's in
    points, the true skill gap's in skill points (``"+0.062 [+0.049, +0.075] skill points"``)."""
    if cost.metric.endswith("draw_prob_true_mean"):
        return _points_text(cost)
    centre = format_number(cost.mean, signed=True)
    if not (math.isfinite(cost.low) and math.isfinite(cost.high)):
        return f"{centre} skill points"
    low, high = (format_number(v, signed=True) for v in (cost.low, cost.high))
    return f"{centre} [{low}, {high}] skill points"


def answer_sentence(answer: Answer) -> str:
    """Return the answer as one sentence (see the module docstring)."""
    if answer.oracle_gain is not None and not math.isfinite(answer.share):
        return _no_share_sentence(answer)
    share = _percent(answer.share)
    if math.isfinite(answer.low) and math.isfinite(answer.high):
        share += f" [{_percent(answer.low)}, {_percent(answer.high)}]"
    costs = [_cost_text(c) for c in answer.costs]
    if len(costs) > 1:
        cost = ", ".join(costs[:-1]) + f" and {costs[-1]}"
    else:
        cost = costs[0] if costs else "no cost measured"
    fairness = _FAIRNESS_WORDS.get(answer.fairness, answer.fairness)
    return (
        f"{answer.policy} captures {share} of the fairness the oracle adds over random pairing "
        f"({fairness}), at a cost of {cost}."
    )


def _no_share_sentence(answer: Answer) -> str:
    """The answer where the oracle is no fairer than random pairing: both differences, no share."""
    assert answer.oracle_gain is not None
    fairness = _FAIRNESS_WORDS.get(answer.fairness, answer.fairness)
    costs = [_cost_text(c) for c in answer.costs]
    cost = ", ".join(costs[:-1]) + f" and {costs[-1]}" if len(costs) > 1 else "".join(costs)
    text = (
        f"{answer.policy} has no share of the oracle's gain to capture: matching on true skill is "
        f"no fairer than random pairing here ({fairness} "
        f"{fairness_difference(answer.oracle_gain)} for the oracle)"
    )
    if answer.gain is not None:
        text += f"; {answer.policy}'s is {fairness_difference(answer.gain)} against random pairing"
    return text + (f", at a cost of {cost}." if cost else ".")


def _share_text(shares: pd.DataFrame, policy: str, metric: str) -> str | None:
    rows = shares[(shares["policy"] == policy) & (shares["metric"] == metric)]
    if rows.empty or not math.isfinite(float(rows["share"].iloc[0])):
        return None
    row = rows.iloc[0]
    text = _percent(float(row["share"]))
    if math.isfinite(float(row["ci_low"])):
        text += f" [{_percent(float(row['ci_low']))}, {_percent(float(row['ci_high']))}]"
    return text


def detail_sentences(result: ExperimentResult, answer: Answer) -> list[str]:
    """Return the answer's further sentences: each region's mean-wait cost (with a world), the
    share for newcomers and veterans (with a player base)."""
    out = []
    world = result.scenario.world
    if world is not None:
        metrics = [f"queue_time_mean@{r}" for r in world.region_names]
        costs = _costs(result.metrics, answer.policy, metrics)
        parts = [
            f"{name} {duration_text(c.mean, c.low, c.high)}"
            for name in world.region_names
            if (c := costs.get(f"queue_time_mean@{name}")) is not None
        ]
        if parts:
            out.append(f"{answer.policy}'s mean-wait cost by region: {', '.join(parts)}.")
    groups = [f"{g}_{answer.fairness}" for g in ("newcomer", "veteran")]
    if all(g in result.metrics.columns for g in groups):
        shares = oracle_shares(result.metrics, names=groups)
        texts = [_share_text(shares, answer.policy, g) for g in groups]
        if all(t is not None for t in texts):
            out.append(
                f"{answer.policy} captures {texts[0]} of the oracle's gain for newcomers and "
                f"{texts[1]} for veterans."
            )
    return out


def grid_notes(result: ExperimentResult) -> list[str]:
    """Return a warning per queue-time percentile that is a multiple of the pass interval for
    every policy (see the module docstring)."""
    tick = float(result.scenario.matchmaker.tick)
    summary = result.summary.set_index(["policy", "metric"])
    out = []
    for metric, words in (("queue_time_p90", "p90"), ("queue_time_p99", "p99")):
        values = [
            float(summary.loc[(p, metric), "mean"])
            for p in result.policies
            if (p, metric) in summary.index
        ]
        if len(values) < 2 or not all(math.isfinite(v) and v > 0 for v in values):
            continue
        on_grid = all(abs(v / tick - round(v / tick)) < 1e-9 for v in values)
        if on_grid and len(set(values)) == 1:
            out.append(
                f"queue time {words} is {format_number(values[0])} min for every policy: a "
                f"multiple of the {format_number(tick)}-minute pass interval (matchmaker.tick), "
                "an artefact of the pass grid; the mean wait is the measure that differs."
            )
    return out
