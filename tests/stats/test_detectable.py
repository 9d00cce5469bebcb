"""The minimum detectable difference of a paired comparison, the replications a difference needs,
the ``detectable`` column of ``differences.csv`` and the terminal's wrapping of the headline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lobbysim.experiments.replications import DIFFERENCE_COLUMNS, paired_differences
from lobbysim.reporting.headline import wrap_terminal
from lobbysim.stats.intervals import (
    MAX_REPLICATIONS,
    POWER,
    detectable_difference,
    paired_p_value,
    replications_to_detect,
)

Z_SUM = 1.959963984540054 + 0.8416212335729143
"""z_.975 + z_.8: the large-n limit of sqrt(n) MDD / sd."""


def _exact_power(difference: float, sd: float, n: int) -> float:
    """Return the power of the two-sided paired t-test at 0.05, from the noncentral t."""
    df, shift = n - 1, difference / (sd / math.sqrt(n))
    critical = stats.t.ppf(0.975, df)
    # P(T > c) + P(T < -c) for T noncentral t of shift s; the second is P(T' > c) with shift -s
    # (nct.cdf far in the lower tail can be NaN with 1 degree of freedom)
    return float(stats.nct.sf(critical, df, shift) + stats.nct.sf(critical, df, -shift))


@pytest.mark.parametrize("n", [2, 3, 5, 10, 30, 200])
@pytest.mark.parametrize("sd", [0.37, 1.0, 12.5])
def test_the_detectable_difference_is_its_formula(n: int, sd: float) -> None:
    expected = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n)
    assert detectable_difference(sd, n) == pytest.approx(expected, rel=1e-12)
    assert POWER == 0.8


def test_the_detectable_difference_against_table_values() -> None:
    # t tables: t_.975,1 = 12.7062, t_.8,1 = 1.3764; t_.975,9 = 2.2622, t_.8,9 = 0.8834
    assert detectable_difference(1.0, 2) == pytest.approx((12.7062 + 1.3764) / math.sqrt(2), 1e-4)
    assert detectable_difference(2.0, 10) == pytest.approx(
        2 * (2.2622 + 0.8834) / math.sqrt(10), 1e-4
    )
    # another level and power: t_.995,9 = 3.2498, t_.9,9 = 1.3830
    mdd = detectable_difference(1.0, 10, alpha=0.01, power=0.9)
    assert mdd == pytest.approx((3.2498 + 1.3830) / math.sqrt(10), rel=1e-4)


def test_the_detectable_difference_tends_to_the_normal_one() -> None:
    for n in (10_000, 1_000_000):
        scaled = detectable_difference(1.0, n) * math.sqrt(n)
        assert scaled == pytest.approx(Z_SUM, rel=2 / n)
        assert scaled > Z_SUM  # t quantiles are above the normal ones
    # falls as 1 / sqrt(n) and scales with sd
    assert detectable_difference(3.0, 400) == pytest.approx(3 * detectable_difference(1.0, 400))
    assert detectable_difference(1.0, 400) < detectable_difference(1.0, 100) / 1.99


def test_no_detectable_difference_without_two_replications() -> None:
    assert math.isnan(detectable_difference(1.0, 1))
    assert math.isnan(detectable_difference(1.0, 0))
    assert math.isnan(detectable_difference(math.nan, 5))
    assert detectable_difference(0.0, 5) == 0.0


@pytest.mark.parametrize("n", [2, 5, 10, 30])
def test_the_power_at_the_detectable_difference_is_about_80_percent(n: int) -> None:
    # the central-t approximation against the exact power of the noncentral t
    power = _exact_power(detectable_difference(1.0, n), 1.0, n)
    assert power == pytest.approx(0.8, abs=0.075 if n == 2 else 0.012)
    assert power <= 0.8 + 0.002


def test_a_simulated_t_test_at_the_detectable_difference_has_80_percent_power() -> None:
    # 40,000 fixed-seed comparisons of 10 pairs at the MDD: the share the t-test finds has a
    # standard error of 0.002 around the exact 79.9%
    n, sd = 10, 2.5
    mdd = detectable_difference(sd, n)
    rng = np.random.default_rng(20240611)
    pairs = rng.normal(mdd, sd, size=(40_000, n))
    t = pairs.mean(axis=1) / (pairs.std(axis=1, ddof=1) / math.sqrt(n))
    found = np.mean(2 * stats.t.sf(np.abs(t), n - 1) < 0.05)
    assert found == pytest.approx(_exact_power(mdd, sd, n), abs=0.01)
    assert found == pytest.approx(0.8, abs=0.012)
    # one of them, by the project's own p-value
    assert (paired_p_value(pairs[0]) < 0.05) == (2 * stats.t.sf(abs(t[0]), n - 1) < 0.05)


def test_replications_to_detect_is_the_smallest_n_that_does() -> None:
    # an effect of one sd needs 10 pairs: MDD(10) = 0.995 sd, MDD(9) = 1.065 sd
    assert replications_to_detect(1.0, 1.0) == 10
    assert replications_to_detect(-1.0, 1.0) == 10  # either sign
    for difference, sd in ((0.1, 1.0), (0.25, 0.4), (3.0, 7.0), (0.05, 0.06)):
        n = replications_to_detect(difference, sd)
        assert n is not None and n >= 2
        assert detectable_difference(sd, n) <= difference
        if n > 2:
            assert detectable_difference(sd, n - 1) > difference
    # close to the normal approximation (Z_SUM sd / d)^2 for a small effect: 785 -> 787
    n = replications_to_detect(0.1, 1.0)
    assert n is not None and abs(n - (Z_SUM / 0.1) ** 2) < 3
    assert replications_to_detect(100.0, 1.0) == 2
    assert replications_to_detect(0.5, 0.0) == 2  # no spread: any difference shows


def test_half_the_detectable_difference_needs_about_four_times_the_replications() -> None:
    # fewer than 4n with few replications, as the t quantiles fall too: 5 -> 14, 10 -> 34
    for n, low in ((5, 14), (10, 34), (40, 155), (200, 795), (1000, 3995)):
        for sd in (0.2, 3.0):
            needed = replications_to_detect(detectable_difference(sd, n) / 2, sd)
            assert needed == low and 2.5 * n < needed <= 4 * n
    assert replications_to_detect(detectable_difference(1.0, 2) / 2, 1.0) == 3  # t with 1 df


def test_replications_to_detect_is_capped() -> None:
    assert replications_to_detect(0.01, 1.0) is None  # about 78,500 needed
    at_cap = detectable_difference(1.0, MAX_REPLICATIONS)
    assert replications_to_detect(at_cap, 1.0) == MAX_REPLICATIONS
    assert replications_to_detect(at_cap * 0.999, 1.0) is None
    assert replications_to_detect(0.01, 1.0, limit=100_000) == pytest.approx(78_500, rel=0.01)
    assert replications_to_detect(0.0, 1.0) is None  # a difference of 0 is never detected
    for bad in ((math.nan, 1.0), (1.0, math.inf), (1.0, -0.1)):
        with pytest.raises(ValueError, match="replications_to_detect"):
            replications_to_detect(*bad)


def test_differences_have_the_detectable_difference() -> None:
    rng = np.random.default_rng(5)
    n = 6
    rows = []
    for policy, shift in (("base", 0.0), ("new", 0.3)):
        for r in range(n):
            one = math.nan if (policy == "new" and r > 0) else float(rng.normal(shift, 1.0))
            values = {"games_per_hour": float(rng.normal(shift, 1.0)), "queue_time_p90": one}
            rows.append({"policy": policy, "replication": r + 1, "seed": r, **values})
    differences = paired_differences(pd.DataFrame(rows), "base").set_index("metric")
    assert "detectable" in DIFFERENCE_COLUMNS
    games = differences.loc["games_per_hour"]
    assert games["n"] == n
    assert games["detectable"] == pytest.approx(detectable_difference(games["sd"], n), rel=1e-12)
    assert games["detectable"] == pytest.approx(
        (stats.t.ppf(0.975, 5) + stats.t.ppf(0.8, 5)) * games["sd"] / math.sqrt(n)
    )
    # one pair only: no interval, no p-value, no detectable difference
    assert differences.loc["queue_time_p90", "n"] == 1
    assert math.isnan(differences.loc["queue_time_p90", "detectable"])


def test_the_terminal_wraps_at_clauses_and_keeps_numbers_whole() -> None:
    line = (
        "  true skill gap (skill points, lower is better): no policy differs significantly from "
        "uniform_random (closest: point_estimate -0.00435 [-0.0185, +0.00976] skill points, "
        "adjusted p 0.39; detectable: ±0.0176 skill points at 80% power with 3 replications; "
        "~6 replications would detect half that, ±0.00880 skill points)"
    )
    lines = wrap_terminal(line, width=60)
    assert all(len(wrapped) <= 60 for wrapped in lines)
    assert " ".join(" ".join(lines).split()) == " ".join(line.split())
    assert lines[0].startswith("  true skill gap") and all(x.startswith("    ") for x in lines[1:])
    text = "\n".join(lines)
    for whole in (
        "-0.00435 [-0.0185, +0.00976] skill points",
        "p 0.39;",
        "±0.0176 skill points",
        "±0.00880 skill points)",
    ):
        assert whole in text
    assert "    detectable: ±0.0176" in text  # a clause starts a line
    assert wrap_terminal("short; line") == ["short; line"]
