"""The share of the oracle's gain over uniform_random a policy captures: the formula, its paired
delta-method interval and the run report's table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lobbysim.experiments.replications import (
    ORACLE_SHARE_COLUMNS,
    ExperimentResult,
    oracle_shares,
    paired_differences,
    share_interval,
    summarise,
)
from lobbysim.reporting.document import render_markdown
from lobbysim.reporting.run import oracle_share_table, report_blocks
from lobbysim.scenario import Scenario
from lobbysim.stats.intervals import CONFIDENCE


def _frame(values: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    """Return a metrics frame: per policy, per replication (skill gap, draw probability)."""
    rows = [
        {
            "policy": policy,
            "replication": r + 1,
            "seed": 100 + r,
            "skill_gap_true_mean": gap,
            "draw_prob_true_mean": draw,
        }
        for policy, reps in values.items()
        for r, (gap, draw) in enumerate(reps)
    ]
    return pd.DataFrame(rows)


CONSTANT = _frame(
    {
        "kg": [(1.25, 0.2)] * 3,
        "uniform_random": [(2.0, 0.1)] * 3,
        "oracle": [(0.5, 0.3)] * 3,
        "bad": [(2.3, 0.07)] * 3,
    }
)


def _share(shares: pd.DataFrame, policy: str, metric: str) -> pd.Series:
    return shares[(shares.policy == policy) & (shares.metric == metric)].iloc[0]


def test_half_way_from_uniform_to_oracle_is_50_percent() -> None:
    shares = oracle_shares(CONSTANT)
    assert list(shares.columns) == ORACLE_SHARE_COLUMNS
    assert list(zip(shares.policy, shares.metric, strict=True)) == [
        ("kg", "skill_gap_true_mean"),
        ("kg", "draw_prob_true_mean"),
        ("bad", "skill_gap_true_mean"),
        ("bad", "draw_prob_true_mean"),
    ]
    # Skill gap, lower is better: (2.0 - 1.25) / (2.0 - 0.5); draw: (0.2 - 0.1) / (0.3 - 0.1).
    assert _share(shares, "kg", "skill_gap_true_mean").share == pytest.approx(0.5)
    assert _share(shares, "kg", "draw_prob_true_mean").share == pytest.approx(0.5)
    # Worse than random matching: a negative share, the same way for both directions.
    assert _share(shares, "bad", "skill_gap_true_mean").share == pytest.approx(-0.2)
    assert _share(shares, "bad", "draw_prob_true_mean").share == pytest.approx(-0.15)
    kg = _share(shares, "kg", "skill_gap_true_mean")
    assert kg.n == 3 and kg.se == pytest.approx(0.0) and kg.ci_low == pytest.approx(0.5)


def test_paired_interval_is_the_delta_method() -> None:
    uniform = np.array([2.0, 2.4, 1.8, 2.2])
    oracle = np.array([0.5, 0.9, 0.6, 0.4])
    policy = np.array([1.2, 1.9, 1.1, 1.3])
    frame = _frame(
        {
            "uniform_random": [(u, 0.1) for u in uniform],
            "oracle": [(o, 0.3) for o in oracle],
            "kg": [(p, 0.2) for p in policy],
        }
    )
    row = _share(oracle_shares(frame), "kg", "skill_gap_true_mean")
    a, b = uniform - policy, uniform - oracle  # paired gains, lower is better
    share = a.mean() / b.mean()
    # Var(S) ~ (Var a - 2 S Cov(a, b) + S^2 Var b) / (n mean(b)^2), sample moments.
    cov = np.cov(a, b, ddof=1)
    se = math.sqrt((cov[0, 0] - 2 * share * cov[0, 1] + share**2 * cov[1, 1]) / 4) / b.mean()
    t = stats.t.ppf(0.5 + CONFIDENCE / 2, 3)
    assert row.share == pytest.approx(share)
    assert row.se == pytest.approx(se)
    assert (row.ci_low, row.ci_high) == pytest.approx((share - t * se, share + t * se))
    # Not the mean of per-replication ratios.
    assert row.share != pytest.approx(float(np.mean(a / b)))


def test_pairs_by_replication_and_drops_missing_ones() -> None:
    frame = _frame(
        {
            "uniform_random": [(2.0, 0.1), (3.0, 0.1), (2.0, 0.1)],
            "oracle": [(1.0, 0.3), (2.0, 0.3), (1.0, 0.3)],  # a gain of 1 in each replication
            "kg": [(1.5, 0.2), (2.0, 0.2), (math.nan, 0.2)],
        }
    )
    # Shuffled rows: replication r of every policy still pairs with replication r.
    frame = frame.sample(frac=1.0, random_state=1)
    row = _share(oracle_shares(frame), "kg", "skill_gap_true_mean")
    assert row.n == 2
    assert row.share == pytest.approx(((2.0 - 1.5) + (3.0 - 2.0)) / ((2.0 - 1.0) + (3.0 - 2.0)))


def test_no_shares_without_both_references() -> None:
    for dropped in ("oracle", "uniform_random"):
        shares = oracle_shares(CONSTANT[CONSTANT.policy != dropped])
        assert shares.empty and list(shares.columns) == ORACLE_SHARE_COLUMNS


def test_share_of_an_oracle_without_gain_is_undefined() -> None:
    out = share_interval(np.array([0.1, 0.2]), np.array([0.0, 0.0]))
    assert math.isnan(out["share"]) and math.isnan(out["ci_low"])
    one = share_interval(np.array([0.5]), np.array([1.0]))
    assert one["share"] == 0.5 and math.isnan(one["ci_low"]) and one["n"] == 1


def _result(metrics: pd.DataFrame) -> ExperimentResult:
    policies = list(dict.fromkeys(metrics.policy))
    seeds = sorted(set(metrics.seed))
    return ExperimentResult(
        Scenario(name="oracle share"),
        policies,
        seeds,
        {},
        metrics,
        summarise(metrics),
        paired_differences(metrics, policies[0]),
    )


def test_the_report_states_the_share_near_the_top() -> None:
    markdown = render_markdown(report_blocks(_result(CONSTANT), []))
    heading = "## Share of the oracle's gain"
    assert heading in markdown
    assert markdown.index(heading) < markdown.index("## Set-up")
    section = markdown[markdown.index(heading) : markdown.index("## Set-up")]
    assert "| kg | 50.0% [50.0%, 50.0%] | 50.0% [50.0%, 50.0%] |" in section
    assert "| bad | -20.0% [-20.0%, -20.0%] | -15.0% [-15.0%, -15.0%] |" in section
    assert "delta method" in section
    plain = render_markdown(report_blocks(_result(CONSTANT[CONSTANT.policy != "oracle"]), []))
    assert heading not in plain


def test_no_share_where_the_oracle_is_not_significantly_fairer() -> None:
    """The share of a gain the oracle does not make is NaN, with the oracle's gain and interval:
    where its gain's interval reaches 0 (Fieller: the ratio's interval is unbounded) and where it
    is significantly on the worse side (the ratio of two losses would read as a gain)."""
    uniform = np.array([1.0, 1.1, 0.9, 1.0])
    cases = {
        "flat": np.array([0.95, 1.15, 0.9, 1.02]),  # oracle - uniform: -0.05, +0.05, 0, +0.02
        "worse": uniform + np.array([0.2, 0.25, 0.15, 0.2]),  # the oracle less fair
    }
    for name, oracle in cases.items():
        frame = _frame(
            {
                "uniform_random": [(u, 0.1) for u in uniform],
                "oracle": [(o, 0.1) for o in oracle],
                "kg": [(u + 0.3, 0.1) for u in uniform],  # 0.3 less fair than random
            }
        )
        row = _share(oracle_shares(frame), "kg", "skill_gap_true_mean")
        assert math.isnan(row.share) and math.isnan(row.ci_low) and math.isnan(row.se), name
        b = oracle - uniform
        t = stats.t.ppf(0.5 + CONFIDENCE / 2, 3) * b.std(ddof=1) / 2
        assert (row.oracle_gain, row.oracle_low, row.oracle_high) == pytest.approx(
            (b.mean(), b.mean() - t, b.mean() + t)
        )
        assert row.n == 4
    # the delta method's share stands where the gain is significant, whichever way is better
    assert _share(oracle_shares(CONSTANT), "kg", "draw_prob_true_mean").share == pytest.approx(0.5)


def test_a_groups_share_goes_the_way_of_its_metric() -> None:
    """``newcomer_skill_gap_true_mean`` is better lower, as the skill gap is: an oracle that
    raises it has no share to give."""
    frame = pd.DataFrame(
        [
            {"policy": p, "replication": r, "newcomer_skill_gap_true_mean": v + 0.01 * r}
            for p, v in (("uniform_random", 1.0), ("oracle", 1.5), ("kg", 1.2))
            for r in range(3)
        ]
    )
    names = ["newcomer_skill_gap_true_mean"]
    (row,) = oracle_shares(frame, names=names).itertuples(index=False)
    assert math.isnan(row.share) and row.oracle_gain == pytest.approx(0.5)
    frame.loc[frame.policy == "oracle", "newcomer_skill_gap_true_mean"] -= 1.0  # now 0.5
    (row,) = oracle_shares(frame, names=names).itertuples(index=False)
    assert row.share == pytest.approx(-0.4)  # kg is 0.2 less fair than random: a negative share


def test_the_report_table_says_where_there_is_no_share() -> None:
    uniform = [(1.0, 0.1), (1.1, 0.1), (0.9, 0.1), (1.0, 0.1)]
    oracle = [(1.2, 0.12), (1.3, 0.13), (1.1, 0.11), (1.2, 0.12)]  # less fair on the gap
    frame = _frame({"uniform_random": uniform, "oracle": oracle, "kg": [(1.1, 0.11)] * 4})
    header, (row,) = oracle_share_table(oracle_shares(frame))
    assert header[1].startswith("true skill gap") and row[0] == "kg"
    assert row[1] == (
        "none: the oracle is no fairer than random (+0.200 [+0.200, +0.200] skill points)"
    )
    assert row[2] == "50.0% [17.5%, 82.5%]"  # the draw probability: the oracle gains
