"""Replications and policy comparisons on common random numbers, with confidence intervals.

An experiment runs a scenario for each policy on the same R replication seeds (spawned from the
scenario's seed with ``numpy.random.SeedSequence``), so replication r of every policy sees the same
arrivals, the same players and the same skills: differences between policies are paired. The
replications run on a local process pool; results are gathered in a fixed order, so the outcome
does not depend on the number of workers.

Summaries: per policy and metric, the mean over replications with a 95% Student-t confidence
interval, cut to the values the metric can take (:func:`lobbysim.stats.metrics.metric_support`: no
negative queue time, no share above 1); for a comparison, per other policy and metric, the paired
difference from the baseline (the first policy) with its interval and the p-value of a paired
t-test, and the p-values adjusted for false discoveries (Benjamini-Hochberg) over the whole
family of the comparison, every metric of every other policy: a difference is called significant
when its adjusted p-value is below 0.05. (Significant implies that the interval excludes 0, but
an interval can exclude 0 without the adjusted p-value being below 0.05.) Each difference also
has the smallest difference the comparison could detect, at 80% power (``detectable``). The
intervals, p-values and detectable differences are computed by :mod:`lobbysim.stats.intervals`. When
a comparison holds both reference policies ``uniform_random`` and ``oracle``,
:func:`oracle_shares` says how much of the oracle's gain over uniformly random matching each
other policy captures.

What is compared is a set of *variants*, a label and a scenario each, on the same seeds: policies
(:func:`policy_scenarios`, the default: each the scenario with another policy), or FlexMatch rule
sets (a :class:`~lobbysim.experiments.variants.Variants`, lobbysim/experiments/variants.py: each
the scenario read with another rule-set file, its own policy for all). The
tables are the same either way (the labels in their ``policy`` column); the result's ``kind``
says what the labels are, and the report and headline say it
(:meth:`ExperimentResult.noun`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.experiments.costs import experiment_costs
from lobbysim.experiments.figure_data import FigureData, figure_data
from lobbysim.experiments.simulation import SimulationResult, simulate
from lobbysim.experiments.variants import PLURALS, POLICY, Variants
from lobbysim.records.rows import RECORD_COLUMNS
from lobbysim.running.time_left import RemainingTime
from lobbysim.running.workers import collecting, run_tasks, task_progress
from lobbysim.scenario import MatchmakerConfig, PluginSpec, Scenario
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.specs import record_folders, resolve_policies, spec_label
from lobbysim.stats.intervals import (
    FDR_LEVEL,
    benjamini_hochberg,
    detectable_difference,
    difference_support,
    interval,
    interval_columns,
    paired_p_value,
)
from lobbysim.stats.metrics import metric_support


def replication_seeds(seed: int, replications: int) -> list[int]:
    """Return the seeds of ``replications`` replications, derived from one master seed."""
    return [
        int(np.random.SeedSequence(seed, spawn_key=(r,)).generate_state(1, dtype=np.uint32)[0])
        for r in range(replications)
    ]


def with_policy(scenario: Scenario, policy: str | PluginSpec) -> Scenario:
    """Return the scenario with its matchmaking policy replaced: a name (default parameters)
    or a :class:`PluginSpec` with its parameters."""
    spec = policy if isinstance(policy, PluginSpec) else PluginSpec(policy)
    matchmaker: MatchmakerConfig = dataclasses.replace(scenario.matchmaker, policy=spec)
    return scenario.replace(matchmaker=matchmaker)


def policy_scenarios(
    scenario: Scenario, policies: Sequence[str | PluginSpec | Mapping[str, Any]] | None
) -> dict[str, Scenario]:
    """Return the scenario of each policy to run, by label, in order (see
    :func:`lobbysim.scenario.specs.resolve_policies`): the scenario's own policy when
    ``policies`` is empty, and the scenario itself wherever its own policy is meant."""
    own = scenario.matchmaker.policy
    specs = resolve_policies(own, policies or [own], "policies")
    return {
        spec_label(spec): scenario if spec == own else with_policy(scenario, spec) for spec in specs
    }


@dataclass
class ExperimentResult:
    """What an experiment produced.

    Attributes:
        scenario: the scenario as run (the first variant's: its policy is the first of
            ``policies``, or its rules the first rule set's).
        policies: the labels of the variants compared, the policies (one for a plain run) or,
            with ``kind`` ``"rule set"``, the rule sets; the first is the baseline.
        seeds: the replication seeds, shared by every policy.
        runs: ``runs[policy][r]`` is the :class:`SimulationResult` of replication r: its
            metrics and, as :func:`run_experiment`'s ``keep`` says, its record frames (by
            default; streamed, where its record files are), or not (then None).
        metrics: one row per policy and replication: ``policy, replication, seed`` and every metric;
            ``replications`` is the same frame, the name of the per-replication table everywhere
            (:func:`lobbysim.load_run`'s too); ``metrics`` is kept.
        summary: one row per policy and metric: ``mean, sd, n, ci_low, ci_high`` (the interval
            cut to the metric's support).
        differences: one row per non-baseline policy and metric: the paired difference
            ``policy - baseline`` with ``mean, sd, n, ci_low, ci_high, p_value, p_adjusted,
            significant, detectable`` (:data:`DIFFERENCE_COLUMNS`, see
            :func:`paired_differences`).
        precision: with ``--replications auto``, where the procedure stopped and why
            (:class:`lobbysim.experiments.sequential.Precision`); None otherwise.
        figure_data: with ``keep="report"`` (``lobbysim run`` and ``compare``),
            ``figure_data[policy][r]``: what the run report's figures take of replication r
            (:class:`~lobbysim.experiments.figure_data.FigureData`), computed by the worker
            that ran it; empty otherwise (the report computes it from the frames).
        kind: what ``policies`` are, :data:`~lobbysim.experiments.variants.POLICY` (the default) or
            ``"rule set"``.
        sources: of rule sets, each label's rule-set file; empty otherwise.

    Shown, it is a few lines: what was run and the tables it holds. :func:`lobbysim.compare`
    returns its notebook view, :class:`lobbysim.reporting.notebook.NotebookExperimentResult`,
    which shows the headline and a table of the key metrics too.
    """

    scenario: Scenario
    policies: list[str]
    seeds: list[int]
    runs: dict[str, list[SimulationResult]] = field(repr=False)
    metrics: pd.DataFrame
    summary: pd.DataFrame
    differences: pd.DataFrame
    precision: Any = field(default=None, repr=False, compare=False)
    figure_data: dict[str, list[FigureData | None]] = field(
        default_factory=dict, repr=False, compare=False
    )
    kind: str = POLICY
    sources: dict[str, str] = field(default_factory=dict, repr=False)

    def noun(self, plural: bool = False) -> str:
        """Return what the variants are: ``policy`` (``policies``) or ``rule set`` (``rule
        sets``)."""
        return PLURALS[self.kind] if plural else self.kind

    @property
    def baseline(self) -> str:
        """Return the baseline policy (the first)."""
        return self.policies[0]

    @property
    def replications(self) -> pd.DataFrame:
        """Return the per-replication table: the very ``metrics`` frame, by the name
        :func:`lobbysim.load_run`'s folder gives it too."""
        return self.metrics

    def describe(self) -> str:
        """Return what was run, in a line: the scenario, the policies and the replications."""
        n = len(self.seeds)
        runs = f"{n} replication{'s' if n != 1 else ''}"
        if len(self.policies) == 1:
            return f"{self.scenario.name}: {self.policies[0]}, {runs}"
        policies = ", ".join([f"{self.baseline} (baseline)", *self.policies[1:]])
        what = f"{len(self.policies)} {self.noun(plural=True)}"
        return f"{self.scenario.name}: {what} x {runs}: {policies}"

    def tables(self, records: str = ".runs") -> str:
        """Return the line that names the result's tables, with their sizes, and ``records``,
        where the record frames are."""
        rows, columns = self.metrics.shape
        return (
            f"tables: .summary ({len(self.summary)} rows), .differences ({len(self.differences)}),"
            f" .replications (= .metrics, {rows} x {columns}), {records}"
        )

    def __repr__(self) -> str:
        return f"ExperimentResult: {self.describe()}\n  {self.tables()}"


def _fraction_done(now: float, horizon: float) -> None:
    task_progress(now / horizon if horizon > 0 else 1.0)


KEEP = ("frames", "report", "metrics")
"""What a replication keeps once it has run (``run_experiment(keep=...)``): ``frames``, its
metrics and record frames (streamed: where its record files are); ``report``, its metrics and
what the run report's figures take of it
(:func:`~lobbysim.experiments.figure_data.figure_data`, computed in the worker that ran it),
its frames dropped there; ``metrics``, its metrics alone. In both of the latter, the first
replication of each policy keeps its frames where its records are not streamed (the run
folder's ``records/<policy>/`` are written from them), and a streamed replication where its
record files are."""


def _run_one(
    args: tuple[Scenario, int, Path | None, bool, bool, bool],
) -> tuple[SimulationResult, FigureData | None]:
    """Run one replication in a worker; return what it keeps (:data:`KEEP`)."""
    scenario, seed, records_dir, report, frames, figures = args
    progress = _fraction_done if report else None
    with collecting():  # the lobby's garbage, before the worker's next run
        run = simulate(scenario, seed, records_dir=records_dir, progress=progress)
    data = figure_data(run) if figures else None  # from its frames, or its record files
    if not frames:
        drop_frames(run)
    return run, data


def drop_frames(run: SimulationResult) -> None:
    """Drop a run's record frames (its metrics, and its record files if streamed, stay)."""
    for kind in RECORD_COLUMNS:
        setattr(run, kind, None)


def run_experiment(
    scenario: Scenario | str | Path | Mapping[str, Any],
    policies: Sequence[str | PluginSpec | Mapping[str, Any]] | None = None,
    replications: int | None = None,
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    records_root: Path | None = None,
    partial: bool = False,
    estimate: RemainingTime | None = None,
    first: int = 0,
    keep: str = "frames",
    variants: Variants | None = None,
) -> ExperimentResult:
    """Run ``scenario`` for each policy (or each of ``variants``) on the same replication seeds.

    Args:
        scenario: the scenario, a YAML file's path, a bundled scenario's name or plain data
            (:func:`lobbysim.scenario.inputs.as_scenario`); its own policy is used when
            ``policies`` is None.
        policies: the policies to compare: names (default parameters; the scenario's own
            policy's name means it as the scenario gives it), specs with parameters
            (``"knowledge_gradient(gamma=0.95)"``), mappings or :class:`PluginSpec` values
            (:mod:`lobbysim.scenario.specs`). Each goes by its label, the spec's canonical text,
            in every output; the first is the baseline of the paired differences.
        replications: replications per policy (default: the scenario's ``replications``).
        jobs: worker processes (1: in this process).
        progress: called as ``progress(done, total)`` after each finished run.
        records_root: with ``records.stream``, replication r of a policy streams its records
            to ``records_root/<folder>/rep-<r>``, the folder the label's
            (:func:`lobbysim.scenario.specs.record_folders`; required then).
        partial: also call ``progress`` as each run advances in simulated time, with ``done``
            counting the fractions of the runs in flight.
        estimate: planned with the runs' expected costs
            (:func:`lobbysim.experiments.costs.experiment_costs`) and told as they start,
            advance and end, it estimates the time left
            (:class:`lobbysim.running.time_left.RemainingTime`).
        first: the replications already run (by an earlier call): these are replications
            ``first + 1`` to ``first + replications``, on the seeds a run of all of them gives
            them (:func:`combine` joins the parts into the result of one run).
        keep: what each replication keeps once it has run (:data:`KEEP`): ``"frames"`` (the
            default), its record frames; ``"report"`` (``lobbysim run`` and ``compare``), its
            metrics and the figure data of the run report (the result's ``figure_data``),
            computed in the worker that ran it, which drops its frames, so that memory does
            not grow with the replications; ``"metrics"``, its metrics alone.
        variants: compare these instead of ``policies`` (which must then be None): each
            label's scenario, a rule set's say
            (:class:`~lobbysim.experiments.variants.Variants`); ``scenario`` gives the
            replications, the seed and the records' streaming, which the variants share.
    """
    if keep not in KEEP:
        raise ValueError(f"keep: expected one of {', '.join(KEEP)}, got {keep!r}")
    if not isinstance(scenario, Scenario):
        scenario = as_scenario(scenario)
    if scenario.records.stream and records_root is None:
        raise ValueError("records.stream is set: run_experiment() needs records_root")
    replications = scenario.replications if replications is None else replications
    if replications < 1:
        raise ValueError(f"replications must be >= 1, got {replications}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if first < 0:
        raise ValueError(f"first must be >= 0, got {first}")
    if variants is not None and policies is not None:
        raise ValueError("give policies or variants, not both")
    scenarios = dict(variants.scenarios) if variants else policy_scenarios(scenario, policies)
    names = list(scenarios)
    folders = record_folders(names)
    seeds = replication_seeds(scenario.seed, first + replications)[first:]
    report = partial and progress is not None

    def records_dir(name: str, r: int) -> Path | None:
        if not scenario.records.stream or records_root is None:
            return None
        return records_root / folders[name] / f"rep-{first + r + 1}"

    # run replication by replication (each policy's first, then each one's second, ...), so
    # that the time left is estimated from every policy's cost early on; the results come back
    # in the order of the policies, whatever the order the runs ran in
    order = [(name, r) for r in range(replications) for name in names]
    figures = keep == "report"

    def frames(r: int) -> bool:
        # the first replication's frames are the run folder's records, unless streamed
        return keep == "frames" or (first + r == 0 and not scenario.records.stream)

    tasks = [
        (scenarios[name], seeds[r], records_dir(name, r), report, frames(r), figures)
        for name, r in order
    ]
    if estimate is not None:
        estimate.plan(experiment_costs(scenarios, replications), jobs)
    ran = run_tasks(_run_one, tasks, jobs, progress, partial=report, estimate=estimate)
    by_run = dict(zip(order, ran, strict=True))
    runs = {name: [by_run[(name, r)][0] for r in range(replications)] for name in names}
    data = {name: [by_run[(name, r)][1] for r in range(replications)] for name in names}
    result = _assemble(scenarios[names[0]], names, seeds, runs, first, data if figures else {})
    if variants is not None:
        result.kind, result.sources = variants.kind, dict(variants.sources)
    return result


def _assemble(
    scenario: Scenario,
    names: list[str],
    seeds: list[int],
    runs: dict[str, list[SimulationResult]],
    first: int = 0,
    figure_data: dict[str, list[FigureData | None]] | None = None,
) -> ExperimentResult:
    """Return the result of runs of replications ``first + 1`` on: its tables computed."""
    metrics = pd.DataFrame(
        [
            {"policy": name, "replication": first + r + 1, "seed": seeds[r], **run.metrics}
            for name in names
            for r, run in enumerate(runs[name])
        ]
    )
    summary = summarise(metrics)
    differences = paired_differences(metrics, names[0])
    return ExperimentResult(
        scenario, names, seeds, runs, metrics, summary, differences, figure_data=figure_data or {}
    )


def combine(parts: Sequence[ExperimentResult]) -> ExperimentResult:
    """Return consecutive parts of one experiment (replications 1 to a, a + 1 to b, ..., each
    from :func:`run_experiment` with ``first``) as one: the very result, tables and all, of
    running all their replications at once (the seeds are the same: :func:`replication_seeds`)."""
    if not parts:
        raise ValueError("combine() needs at least one part")
    names = parts[0].policies
    numbers = [int(r) for part in parts for r in part.metrics["replication"].unique()]
    if numbers != list(range(1, len(numbers) + 1)) or any(p.policies != names for p in parts):
        raise ValueError("combine() needs consecutive parts of one experiment, from the first")
    seeds = [seed for part in parts for seed in part.seeds]
    runs = {name: [run for part in parts for run in part.runs[name]] for name in names}
    data = {}
    if all(part.figure_data for part in parts):
        data = {name: [d for part in parts for d in part.figure_data[name]] for name in names}
    result = _assemble(parts[0].scenario, names, seeds, runs, 0, data)
    result.kind, result.sources = parts[0].kind, dict(parts[0].sources)
    return result


def metric_columns(metrics: pd.DataFrame) -> list[str]:
    """Return the metric columns of a per-replication metrics frame."""
    return [c for c in metrics.columns if c not in ("policy", "replication", "seed")]


def summarise(metrics: pd.DataFrame) -> pd.DataFrame:
    """Return per policy and metric the mean over replications and its 95% interval.

    The interval is cut to the metric's support (:func:`lobbysim.stats.metrics.metric_support`), so
    ``ci_low`` and ``ci_high`` are what the report shows; the uncut Student-t interval is
    ``mean -+ t sd / sqrt(n)``.
    """
    rows = []
    for policy, group in metrics.groupby("policy", sort=False):
        for metric in metric_columns(metrics):
            values = group[metric].to_numpy(dtype=float)
            columns = interval_columns(values, metric_support(metric))
            rows.append({"policy": policy, "metric": metric, **columns})
    return pd.DataFrame(rows)


DIFFERENCE_COLUMNS = [
    "policy",
    "baseline",
    "metric",
    "mean",
    "sd",
    "n",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "detectable",
]
"""The columns of :func:`paired_differences` (and of a comparison's ``differences.csv``)."""


def paired_differences(metrics: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Return per other policy and metric the paired difference from ``baseline``.

    Per replication r, ``policy_r - baseline_r``: their mean with its 95% interval (cut to the
    differences the metric allows), ``p_value`` the two-sided paired t-test's
    (:func:`lobbysim.stats.intervals.paired_p_value`: NaN with fewer than 2 pairs), ``p_adjusted``
    the Benjamini-Hochberg adjustment over every row with a p-value (every metric of every other
    policy: one family per comparison), and ``significant`` whether ``p_adjusted`` is below
    :data:`lobbysim.stats.intervals.FDR_LEVEL`, and ``detectable`` the minimum detectable difference
    (:func:`lobbysim.stats.intervals.detectable_difference`: the smallest true difference a
    two-sided
    paired t-test at 0.05 over these ``n`` pairs finds with 80% power, in the metric's units;
    NaN with fewer than 2 pairs). Columns :data:`DIFFERENCE_COLUMNS`.
    """
    base = metrics[metrics.policy == baseline].set_index("replication")
    rows = []
    for policy, group in metrics.groupby("policy", sort=False):
        if policy == baseline:
            continue
        other = group.set_index("replication")
        for metric in metric_columns(metrics):
            diff = (other[metric] - base[metric]).to_numpy(dtype=float)
            support = difference_support(metric_support(metric))
            rows.append(
                {
                    "policy": policy,
                    "baseline": baseline,
                    "metric": metric,
                    **interval_columns(diff, support),
                    "p_value": paired_p_value(diff),
                }
            )
    frame = pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
    frame["p_adjusted"] = benjamini_hochberg(frame["p_value"].to_numpy(dtype=float))
    frame["significant"] = (frame["p_adjusted"] < FDR_LEVEL).astype(bool)
    frame["detectable"] = [
        detectable_difference(sd, n) for sd, n in zip(frame["sd"], frame["n"], strict=True)
    ]
    return frame


UNIFORM_POLICY = "uniform_random"
"""The reference policy of no skill matching: 0% of the oracle's gain."""

ORACLE_POLICY = "oracle"
"""The reference policy that matches on true skills: 100% of the gain."""

ORACLE_SHARE_METRICS = ("skill_gap_true_mean", "draw_prob_true_mean")
"""The metrics whose oracle share :func:`oracle_shares` computes."""

ORACLE_SHARE_BETTER = {"skill_gap_true_mean": -1.0, "draw_prob_true_mean": 1.0}
"""Which way each share metric is better (-1: lower); a metric named ``<group>_<metric>`` (the
newcomers' and veterans') goes the way of its ``<metric>``."""

ORACLE_SHARE_COLUMNS = [
    "policy",
    "metric",
    "share",
    "se",
    "n",
    "ci_low",
    "ci_high",
    "oracle_gain",
    "oracle_low",
    "oracle_high",
]


def oracle_shares(
    metrics: pd.DataFrame,
    *,
    uniform: str = UNIFORM_POLICY,
    oracle: str = ORACLE_POLICY,
    names: Sequence[str] = ORACLE_SHARE_METRICS,
) -> pd.DataFrame:
    """Return per other policy and metric the share of the oracle's gain over uniform it captures.

    For a metric m, policy p captures ``(m_p - m_uniform) / (m_oracle - m_uniform)`` of the gain:
    0 is no better than random matching, 1 as good as matching on true skills. The ratio is the
    same whichever way the metric is better (for the true skill gap, lower is better, and the
    share is ``(m_uniform - m_p) / (m_uniform - m_oracle)``), so it needs no direction.

    The policies share the replication seeds (common random numbers), so the gains are paired:
    per replication r, ``a_r = m_p,r - m_uniform,r`` and ``b_r = m_oracle,r - m_uniform,r``
    (replications where any of the three is missing are left out). The share is the ratio of
    the mean gains, ``S = mean(a) / mean(b)``, not the mean of per-replication ratios, which is
    biased and unstable when a replication's oracle gain is small. Its standard error is the
    delta method's (a first-order Taylor expansion of the ratio): the standard error of the
    mean of the linearised terms ``a_r - S b_r``, divided by ``|mean(b)|``; the interval is
    Student-t with n - 1 degrees of freedom at :data:`lobbysim.stats.intervals.CONFIDENCE`.

    A share of a gain the oracle does not make is no measure: where the oracle's paired gain
    over uniform (``oracle_gain``, mean [``oracle_low``, ``oracle_high``], the Student-t
    interval of ``b_r``) is not significantly on the better side (its interval reaches 0 or
    beyond; :data:`ORACLE_SHARE_BETTER` says which side), the share and its interval are NaN.
    That is where the ratio's interval is unbounded (Fieller's theorem: the denominator is not
    significantly away from 0) and where matching on true skill is no fairer than random
    pairing, as in team games whose teams are balanced on ratings after the players are chosen
    (``oracle_gain`` then says by how much).

    Args:
        metrics: one row per policy and replication (``policy``, ``replication``, metrics).
        uniform, oracle: the two reference policies.
        names: the metrics to compute the share of (those in ``metrics``).

    Returns:
        Columns :data:`ORACLE_SHARE_COLUMNS` (``share`` as a fraction, ``se`` its standard
        error, ``n`` the paired replications, the oracle's gain in the metric's units), one row
        per policy other than the two references and metric, in the order of ``metrics``;
        empty without both references.
    """
    policies = list(dict.fromkeys(metrics["policy"])) if len(metrics) else []
    if uniform not in policies or oracle not in policies:
        return pd.DataFrame(columns=ORACLE_SHARE_COLUMNS)
    by_policy = {p: g.set_index("replication") for p, g in metrics.groupby("policy", sort=False)}
    rows = []
    for policy in policies:
        if policy in (uniform, oracle):
            continue
        for name in (n for n in names if n in metrics.columns):
            table = pd.DataFrame(
                {
                    "p": by_policy[policy][name],
                    "u": by_policy[uniform][name],
                    "o": by_policy[oracle][name],
                }
            ).astype(float)
            table = table[np.isfinite(table.to_numpy()).all(axis=1)]
            gains = (table["p"] - table["u"]).to_numpy(), (table["o"] - table["u"]).to_numpy()
            row = {"policy": policy, "metric": name, **share_interval(*gains)}
            mean, _, n, low, high = interval(gains[1])
            row.update(oracle_gain=mean, oracle_low=low, oracle_high=high)
            if n >= 2 and not _oracle_gains(low, high, _better(name)):
                row.update(share=math.nan, se=math.nan, ci_low=math.nan, ci_high=math.nan)
            rows.append(row)
    return pd.DataFrame(rows, columns=ORACLE_SHARE_COLUMNS)


def _better(metric: str) -> float:
    """Return which way a share metric is better: -1 lower, 1 higher, 0 not known."""
    for name, sign in ORACLE_SHARE_BETTER.items():
        if metric == name or metric.endswith(f"_{name}"):
            return sign
    return 0.0


def _oracle_gains(low: float, high: float, better: float) -> bool:
    """Whether an oracle's gain interval [low, high] is wholly on the ``better`` side of 0
    (either side where the direction is not known)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return False
    if better > 0:
        return low > 0
    if better < 0:
        return high < 0
    return low > 0 or high < 0


def share_interval(gain: np.ndarray, oracle_gain: np.ndarray) -> dict[str, float | int]:
    """Return the ratio of mean paired gains with its delta-method standard error and interval.

    See :func:`oracle_shares`: ``share = mean(gain) / mean(oracle_gain)``; NaN where the oracle
    gains average 0 or there is no replication, no interval with fewer than 2.
    """
    n = int(gain.size)
    out: dict[str, float | int] = {
        "share": math.nan,
        "se": math.nan,
        "n": n,
        "ci_low": math.nan,
        "ci_high": math.nan,
    }
    scale = float(np.mean(oracle_gain)) if n else 0.0
    if scale == 0.0:
        return out
    share = float(np.mean(gain)) / scale
    out["share"] = share
    # The interval of the mean of the linearised terms (whose mean is 0 by construction) gives
    # the half width, in units of the gain; divided by |mean(oracle_gain)|, in units of share.
    _, sd, _, low, high = interval(gain - share * oracle_gain)
    if n >= 2:
        half = (high - low) / 2 / abs(scale)
        out["se"] = sd / math.sqrt(n) / abs(scale)
        out["ci_low"], out["ci_high"] = share - half, share + half
    return out
