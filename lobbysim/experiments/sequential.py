"""Replications until the headline is precise: the sequential procedure of ``--replications auto``.

How many replications a comparison needs depends on how much its metrics vary, which is known
only once it has run. The sequential procedure for a relative precision (Law & Kelton,
*Simulation Modeling and Analysis*, on obtaining a specified precision) runs a first batch, then
more replications until the 95% intervals are as narrow as asked, or a cap is reached:

1. Run ``first`` replications of every policy: the scenario's ``replications``, at least
   :data:`MIN_FIRST` (an interval from fewer says little of the spread).
2. Check every criterion (:func:`precision_checks`), on the headline metrics the caller names
   (``lobbysim compare``'s: mean queue time, abandonment rate, true draw probability, true skill
   gap, the driving rater's Kendall's tau and, with a retention model, daily active players and
   churn):

   * *relative*: for every policy and headline metric, the half-width of the metric's 95%
     Student-t interval over the replications (uncut: ``t * sd / sqrt(n)``) is at most
     ``precision`` times the absolute value of its mean;
   * *share*: with both bounds in the comparison (``uniform_random`` and ``oracle``), for every
     other policy, the half-width of the 95% interval of the share of the oracle's fairness gain
     it captures (:func:`~lobbysim.experiments.replications.oracle_shares`, on the metric the
     answer uses: the true skill gap, else the true draw probability) is at most ``precision``,
     absolute: the share is a fraction, so 0.1 is 10 percentage points.

   A metric with fewer than 2 finite values for a policy (none measured), or a share the
   oracle's gain cannot define (no gain), is not a criterion.
3. If every criterion holds, stop: the *precision* rule. Else, if ``max_replications`` are run,
   stop: the *cap* rule (the target is not reached, and the output says by how much). Else run
   more: as many as the least precise criterion needs by the square-root rule (a half-width
   shrinks as ``1 / sqrt(n)``: ``n * (half-width / target)^2``), at least one more, at most
   twice as many as so far, never past the cap; and check again.

Every replication's seed comes from the scenario's one seed (:func:`replication_seeds`, by its
number alone), and the parts are joined in order (:func:`~lobbysim.experiments.replications.
combine`), so a procedure that stops at n replications gives exactly the result, to the byte of
every table, of running n replications at once. The intervals of a sequentially stopped
experiment cover their means a little less often than 95% (the stop depends on the data); a
first batch of at least 5 keeps that small.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.experiments.replications import (
    ORACLE_POLICY,
    ORACLE_SHARE_METRICS,
    UNIFORM_POLICY,
    ExperimentResult,
    combine,
    oracle_shares,
    policy_scenarios,
    run_experiment,
)
from lobbysim.experiments.variants import Variants
from lobbysim.running.progress import Progress
from lobbysim.running.time_left import RemainingTime
from lobbysim.scenario import PluginSpec, Scenario
from lobbysim.stats.intervals import interval
from lobbysim.validation import MAX_REPLICATIONS

MIN_FIRST = 5
"""The smallest first batch of ``--replications auto``."""
DEFAULT_PRECISION = 0.1
"""``--precision``: half-widths of at most 10% of the mean, and of 10 points of a share."""
DEFAULT_MAX_REPLICATIONS = 50
"""``--max-replications``: the cap of ``--replications auto``."""

RELATIVE = "relative"
SHARE = "share"
PRECISION_RULE = "precision"
CAP_RULE = "cap"

PRECISION_COLUMNS = [
    "replications",
    "criterion",
    "policy",
    "metric",
    "mean",
    "half_width",
    "target",
    "met",
]
"""The columns of ``precision.csv`` (:meth:`Precision.frame`)."""


@dataclass(frozen=True)
class Criterion:
    """One interval the procedure narrows: a policy's headline metric (``relative``: its
    half-width at most ``target = precision * |mean|``) or its captured share (``share``: at most
    ``target = precision``)."""

    kind: str
    policy: str
    metric: str
    mean: float
    half_width: float
    target: float

    @property
    def met(self) -> bool:
        return math.isfinite(self.half_width) and self.half_width <= self.target

    @property
    def ratio(self) -> float:
        """How many times too wide the interval is (<= 1: precise enough)."""
        if not math.isfinite(self.half_width):
            return math.inf
        if self.target > 0:
            return self.half_width / self.target
        return 0.0 if self.half_width == 0 else math.inf

    def text(self) -> str:
        """Say the criterion: ``queue_time_mean of draw_chance, ±4.2% of its mean (target
        10%)`` or ``draw_chance's captured share (skill_gap_true_mean), ±6.1 points (target
        10)``."""
        if self.kind == SHARE:
            return (
                f"{self.policy}'s captured share ({self.metric}), "
                f"±{100 * self.half_width:.1f} points (target {100 * self.target:g})"
            )
        if not math.isfinite(self.half_width):
            relative = "n/a"
        elif self.mean == 0:
            relative = "0%" if self.half_width == 0 else "inf"
        else:
            relative = f"{100 * self.half_width / abs(self.mean):.1f}%"
        target = 100 * self.target / abs(self.mean) if self.mean else 0.0
        return f"{self.metric} of {self.policy}, ±{relative} of its mean (target {target:.3g}%)"


@dataclass(frozen=True)
class Rule:
    """The stopping rule of ``--replications auto`` (see the module docstring)."""

    first: int
    precision: float = DEFAULT_PRECISION
    max_replications: int = DEFAULT_MAX_REPLICATIONS

    def describe(self, noun: str = "policy") -> str:
        """Say the rule in a line; ``noun``: what the variants compared are (``rule set``)."""
        points = f"{100 * self.precision:g}"
        return (
            f"replications auto: {self.first} per {noun} first, then more until every headline "
            f"metric's 95% interval is within ±{points}% of its mean and every captured share's "
            f"within ±{points} points, at most {self.max_replications} per {noun}"
        )


@dataclass(frozen=True)
class Precision:
    """Where the procedure stopped: the replications, the rule that stopped it, every
    criterion's state then, and the replications of each step (``noun``: what the variants
    compared are, ``policy`` or ``rule set``)."""

    replications: int
    rule: str
    criteria: tuple[Criterion, ...]
    steps: tuple[int, ...]
    noun: str = "policy"

    @property
    def reached(self) -> bool:
        return all(c.met for c in self.criteria)

    def widest(self, kind: str) -> Criterion | None:
        """Return the least precise criterion of a kind (None if there is none)."""
        found = [c for c in self.criteria if c.kind == kind]
        return max(found, key=lambda c: c.ratio) if found else None

    def lines(self) -> list[str]:
        """Say which rule stopped the procedure and the half-widths reached."""
        n = self.replications
        if self.rule == PRECISION_RULE:
            found = ((RELATIVE, "interval"), (SHARE, "share"))
            widest = [(words, c) for kind, words in found if (c := self.widest(kind)) is not None]
            reached = "".join(f"; widest {words}: {c.text()}" for words, c in widest)
            return [
                f"replications auto: stopped at {n} per {self.noun}, the precision reached "
                f"({len(self.criteria)} intervals within their targets){reached}"
            ]
        missed = sorted((c for c in self.criteria if not c.met), key=lambda c: -c.ratio)
        lines = [
            f"replications auto: stopped at the cap, {n} per {self.noun} (--max-replications): the "
            f"target was NOT reached for {len(missed)} of {len(self.criteria)} intervals:"
        ]
        lines += [f"  {c.text()}" for c in missed[:5]]
        if len(missed) > 5:
            lines.append(f"  and {len(missed) - 5} more (precision.csv lists them all)")
        return lines

    def frame(self) -> pd.DataFrame:
        """Return the criteria as a table (:data:`PRECISION_COLUMNS`)."""
        rows = [
            {
                "replications": self.replications,
                "criterion": c.kind,
                "policy": c.policy,
                "metric": c.metric,
                "mean": c.mean,
                "half_width": c.half_width,
                "target": c.target,
                "met": c.met,
            }
            for c in self.criteria
        ]
        return pd.DataFrame(rows, columns=PRECISION_COLUMNS)


def first_batch(replications: int) -> int:
    """Return the first batch for a scenario of ``replications``: at least :data:`MIN_FIRST`."""
    return max(int(replications), MIN_FIRST)


def check_rule(
    first: int, precision: object, cap: object, headline: Sequence[str], where: str = "--"
) -> list[str]:
    """Return one line per problem of ``--replications auto`` with these options: a precision
    that is not a number > 0, a cap that is not a whole number at least the first batch (and at
    most :data:`~lobbysim.validation.MAX_REPLICATIONS`), no headline metric to be precise on."""
    problems = []
    value = float(precision) if isinstance(precision, numbers.Real) else math.nan
    if isinstance(precision, bool) or not 0 < value < math.inf:
        problems.append(f"{where}precision: expected a number > 0, got {precision!r}")
    if not (
        isinstance(cap, int) and not isinstance(cap, bool) and first <= cap <= MAX_REPLICATIONS
    ):
        name = f"{where}max-replications" if where == "--" else f"{where}max_replications"
        problems.append(
            f"{name}: expected a whole number from the first batch of {first} (the scenario's "
            f"replications, at least {MIN_FIRST}) to {MAX_REPLICATIONS:,}, got {cap!r}"
        )
    if not headline:
        problems.append(
            f"{where}replications auto: the runs have none of the headline metrics (mean queue "
            "time, abandonment, true draw probability, true skill gap, Kendall's tau) to be "
            "precise on"
        )
    return problems


def precision_checks(
    metrics: pd.DataFrame,
    headline: Sequence[str],
    precision: float,
    *,
    shares: bool = True,
) -> list[Criterion]:
    """Return every criterion of the procedure (see the module docstring) on per-replication
    ``metrics`` (``policy``, ``replication``, the metrics), for the ``headline`` metrics; with
    ``shares``, the captured shares too where both bounds are there."""
    out = []
    policies = list(dict.fromkeys(metrics["policy"]))
    for policy in policies:
        rows = metrics[metrics["policy"] == policy]
        for metric in headline:
            if metric not in rows.columns:
                continue
            mean, _, n, low, high = interval(rows[metric].to_numpy(dtype=float))
            if n < 2:
                continue
            half = (high - low) / 2
            out.append(Criterion(RELATIVE, policy, metric, mean, half, precision * abs(mean)))
    bounds = UNIFORM_POLICY in policies and ORACLE_POLICY in policies
    fairness = next((m for m in ORACLE_SHARE_METRICS if m in metrics.columns), None)
    if shares and bounds and fairness is not None:
        for row in oracle_shares(metrics, names=[fairness]).itertuples(index=False):
            if not (math.isfinite(row.ci_low) and math.isfinite(row.ci_high)):
                continue
            half = (float(row.ci_high) - float(row.ci_low)) / 2
            out.append(Criterion(SHARE, str(row.policy), fairness, row.share, half, precision))
    return out


def next_count(n: int, criteria: Sequence[Criterion], cap: int) -> int:
    """Return the replications to have after ``n``: what the least precise criterion needs by
    the square-root rule, at least ``n + 1``, at most ``2 n`` and ``cap``."""
    worst = max((c.ratio for c in criteria), default=1.0)
    needed = math.ceil(n * worst**2) if math.isfinite(worst) else 2 * n
    return min(max(needed, n + 1), 2 * n, cap)


def run_until_precise(
    scenario: Scenario,
    policies: Sequence[str | PluginSpec | Mapping[str, Any]] | None,
    rule: Rule,
    headline: Sequence[str],
    *,
    jobs: int = 1,
    progress: Progress | None = None,
    desc: str = "compare",
    records_root: Path | None = None,
    note: Callable[[str], None] | None = None,
    keep: str = "frames",
    variants: Variants | None = None,
) -> tuple[ExperimentResult, Precision]:
    """Run the procedure of the module docstring; return the result (as one experiment of all
    its replications) and where it stopped.

    Args:
        scenario, policies: as :func:`~lobbysim.experiments.replications.run_experiment`'s.
        rule: the first batch, the precision and the cap.
        headline: the metrics to be precise on.
        jobs: worker processes.
        progress: shows each batch's runs as a stage (``desc``, the replications in it).
        records_root: as :func:`~lobbysim.experiments.replications.run_experiment`'s.
        note: called with a line after each batch (its widest interval, the next step) and
            with :meth:`Precision.lines` at the end.
        keep: what each replication keeps, as
            :func:`~lobbysim.experiments.replications.run_experiment`'s.
        variants: compare these instead of ``policies`` (None then), as
            :func:`~lobbysim.experiments.replications.run_experiment`'s: rule sets, say.

    Raises:
        ValueError: no criterion can be checked after the first batch (no headline metric has
            two values for any policy: no game was played, say).
    """
    display = progress if progress is not None else Progress(enabled=False)
    say = note if note is not None else (lambda line: None)
    noun = variants.kind if variants is not None else "policy"
    say(rule.describe(noun))
    count = len(variants.scenarios) if variants else len(policy_scenarios(scenario, policies))
    parts: list[ExperimentResult] = []
    n, target, steps = 0, rule.first, []
    while True:
        runs = f"replications {n + 1}-{target}" if target > n + 1 else f"replication {target}"
        estimate = RemainingTime() if display.fine else None
        total = (target - n) * count
        left = None if estimate is None else estimate.left
        stage = display.stage(
            f"{desc} ({runs})", "runs", total, decimals=1 if display.fine else 0, estimate=left
        )
        with stage as up:
            parts.append(
                run_experiment(
                    scenario,
                    policies,
                    target - n,
                    jobs=jobs,
                    progress=up,
                    records_root=records_root,
                    partial=display.fine,
                    estimate=estimate,
                    first=n,
                    keep=keep,
                    variants=variants,
                )
            )
        n = target
        steps.append(n)
        result = parts[0] if len(parts) == 1 else combine(parts)
        criteria = precision_checks(result.metrics, headline, rule.precision)
        if not criteria:
            raise ValueError(
                f"after {n} replications no headline metric has two values for any policy (no "
                "game played?): there is no interval to make precise"
            )
        if all(c.met for c in criteria):
            stop = PRECISION_RULE
        elif n >= rule.max_replications:
            stop = CAP_RULE
        else:
            target = next_count(n, criteria, rule.max_replications)
            widest = max(criteria, key=lambda c: c.ratio)
            say(
                f"replications auto: after {n} per {noun} the widest interval is "
                f"{widest.text()}: {target - n} more"
            )
            continue
        precision = Precision(n, stop, tuple(criteria), tuple(steps), noun)
        for line in precision.lines():
            say(line)
        result.precision = precision
        return result, precision
