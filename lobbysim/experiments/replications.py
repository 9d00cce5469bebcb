"""Replications and policy comparisons on common random numbers, with confidence intervals.

An experiment runs a scenario for each policy on the same R replication seeds (spawned from the
scenario's seed with ``numpy.random.SeedSequence``), so replication r of every policy sees the same
arrivals, the same players and the same skills: differences between policies are paired. The
replications run on a local process pool; results are gathered in a fixed order, so the outcome
does not depend on the number of workers.

Summaries: per policy and metric, the mean over replications with a 95% Student-t confidence
interval; for a comparison, per other policy and metric, the paired difference from the baseline
(the first policy) with its interval, called significant when the interval excludes 0. The
intervals are computed by :mod:`lobbysim.intervals`. When a comparison holds both reference
policies ``uniform_random`` and ``oracle``, :func:`oracle_shares` says how much of the oracle's
gain over uniformly random matching each other policy captures.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lobbysim.experiments.simulation import SimulationResult, simulate
from lobbysim.intervals import excludes_zero, interval, interval_columns
from lobbysim.parallel import run_tasks
from lobbysim.scenario import MatchmakerConfig, PluginSpec, Scenario


def replication_seeds(seed: int, replications: int) -> list[int]:
    """Return the seeds of ``replications`` replications, derived from one master seed."""
    return [
        int(np.random.SeedSequence(seed, spawn_key=(r,)).generate_state(1, dtype=np.uint32)[0])
        for r in range(replications)
    ]


def with_policy(scenario: Scenario, policy: str) -> Scenario:
    """Return the scenario with its matchmaking policy replaced (default parameters)."""
    matchmaker: MatchmakerConfig = dataclasses.replace(
        scenario.matchmaker, policy=PluginSpec(policy)
    )
    return scenario.replace(matchmaker=matchmaker)


@dataclass
class ExperimentResult:
    """What an experiment produced.

    Attributes:
        scenario: the scenario as run (its policy is the first of ``policies``).
        policies: the policies compared (one for a plain run); the first is the baseline.
        seeds: the replication seeds, shared by every policy.
        runs: ``runs[policy][r]`` is the :class:`SimulationResult` of replication r.
        metrics: one row per policy and replication: ``policy, replication, seed`` and every metric.
        summary: one row per policy and metric: ``mean, sd, n, ci_low, ci_high``.
        differences: one row per non-baseline policy and metric: the paired difference
            ``policy - baseline`` with ``mean, sd, n, ci_low, ci_high, significant``.
    """

    scenario: Scenario
    policies: list[str]
    seeds: list[int]
    runs: dict[str, list[SimulationResult]] = field(repr=False)
    metrics: pd.DataFrame
    summary: pd.DataFrame
    differences: pd.DataFrame

    @property
    def baseline(self) -> str:
        """Return the baseline policy (the first)."""
        return self.policies[0]


def _run_one(args: tuple[Scenario, int, Path | None]) -> SimulationResult:
    scenario, seed, records_dir = args
    return simulate(scenario, seed, records_dir=records_dir)


def run_experiment(
    scenario: Scenario,
    policies: Sequence[str] | None = None,
    replications: int | None = None,
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    records_root: Path | None = None,
) -> ExperimentResult:
    """Run ``scenario`` for each policy on the same replication seeds.

    Args:
        scenario: the scenario; its own policy is used when ``policies`` is None.
        policies: registered policy names to compare (each with default parameters).
        replications: replications per policy (default: the scenario's ``replications``).
        jobs: worker processes (1: in this process).
        progress: called as ``progress(done, total)`` after each finished run.
        records_root: with ``records.stream``, replication r of a policy streams its records
            to ``records_root/<policy>/rep-<r>`` (required then).
    """
    if scenario.records.stream and records_root is None:
        raise ValueError("records.stream is set: run_experiment() needs records_root")
    replications = scenario.replications if replications is None else replications
    if replications < 1:
        raise ValueError(f"replications must be >= 1, got {replications}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    names = [scenario.matchmaker.policy.name] if not policies else list(dict.fromkeys(policies))
    scenarios = {
        name: scenario if name == scenario.matchmaker.policy.name else with_policy(scenario, name)
        for name in names
    }
    seeds = replication_seeds(scenario.seed, replications)

    def records_dir(name: str, r: int) -> Path | None:
        if not scenario.records.stream or records_root is None:
            return None
        return records_root / name / f"rep-{r + 1}"

    tasks = [
        (scenarios[name], seed, records_dir(name, r))
        for name in names
        for r, seed in enumerate(seeds)
    ]
    results = run_tasks(_run_one, tasks, jobs, progress)
    runs = {
        name: results[k * replications : (k + 1) * replications] for k, name in enumerate(names)
    }
    metrics = pd.DataFrame(
        [
            {"policy": name, "replication": r + 1, "seed": seeds[r], **run.metrics}
            for name in names
            for r, run in enumerate(runs[name])
        ]
    )
    summary = summarise(metrics)
    differences = paired_differences(metrics, names[0])
    return ExperimentResult(scenarios[names[0]], names, seeds, runs, metrics, summary, differences)


def metric_columns(metrics: pd.DataFrame) -> list[str]:
    """Return the metric columns of a per-replication metrics frame."""
    return [c for c in metrics.columns if c not in ("policy", "replication", "seed")]


def summarise(metrics: pd.DataFrame) -> pd.DataFrame:
    """Return per policy and metric the mean over replications and its 95% interval."""
    rows = []
    for policy, group in metrics.groupby("policy", sort=False):
        for metric in metric_columns(metrics):
            values = group[metric].to_numpy(dtype=float)
            rows.append({"policy": policy, "metric": metric, **interval_columns(values)})
    return pd.DataFrame(rows)


def paired_differences(metrics: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Return per other policy and metric the paired difference from ``baseline``."""
    base = metrics[metrics.policy == baseline].set_index("replication")
    rows = []
    for policy, group in metrics.groupby("policy", sort=False):
        if policy == baseline:
            continue
        other = group.set_index("replication")
        for metric in metric_columns(metrics):
            diff = (other[metric] - base[metric]).to_numpy(dtype=float)
            columns = interval_columns(diff)
            significant = excludes_zero(columns)
            rows.append(
                {
                    "policy": policy,
                    "baseline": baseline,
                    "metric": metric,
                    **columns,
                    "significant": significant,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "policy",
            "baseline",
            "metric",
            "mean",
            "sd",
            "n",
            "ci_low",
            "ci_high",
            "significant",
        ],
    )


UNIFORM_POLICY = "uniform_random"
"""The reference policy of no skill matching: 0% of the oracle's gain."""

ORACLE_POLICY = "oracle"
"""The reference policy that matches on true skills: 100% of the gain."""

ORACLE_SHARE_METRICS = ("skill_gap_true_mean", "draw_prob_true_mean")
"""The metrics whose oracle share :func:`oracle_shares` computes."""

ORACLE_SHARE_COLUMNS = ["policy", "metric", "share", "se", "n", "ci_low", "ci_high"]


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
    Student-t with n - 1 degrees of freedom at :data:`lobbysim.intervals.CONFIDENCE`.

    Args:
        metrics: one row per policy and replication (``policy``, ``replication``, metrics).
        uniform, oracle: the two reference policies.
        names: the metrics to compute the share of (those in ``metrics``).

    Returns:
        Columns :data:`ORACLE_SHARE_COLUMNS` (``share`` as a fraction, ``se`` its standard
        error, ``n`` the paired replications), one row per policy other than the two
        references and metric, in the order of ``metrics``; empty without both references.
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
            rows.append({"policy": policy, "metric": name, **share_interval(*gains)})
    return pd.DataFrame(rows, columns=ORACLE_SHARE_COLUMNS)


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
