"""Confidence intervals and standard errors: the one place lobbysim computes them.

Used by :mod:`lobbysim.experiments.replications` (summaries and paired differences with their
p-values and the Benjamini-Hochberg correction), the sweep report (per cell and per swept
value), the run report's figures (±1 standard-error bands) and the paper report's claims
(paired standard errors). Imports nothing from lobbysim.

A paired comparison that finds no significant difference also says how large a difference it
could have found: :func:`detectable_difference` (the minimum detectable difference at
:data:`POWER`) and :func:`replications_to_detect` (the replications a stated difference needs).

An interval can be cut to the support of what it estimates (``support=(low, high)``, for
example ``(0, inf)`` for a queue time or ``(0, 1)`` for a share): a Student-t interval is
symmetric around the mean, so with few replications it can reach past a bound that no value can
cross (a negative queue time); the cut interval keeps the same mean and sd and ends at the bound.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
"""The level of every confidence interval in the reports."""

FDR_LEVEL = 1 - CONFIDENCE
"""The false discovery rate at which a paired difference counts as significant: its
Benjamini-Hochberg adjusted p-value (:func:`benjamini_hochberg`) must be below it."""

INTERVAL_COLUMNS = ("mean", "sd", "n", "ci_low", "ci_high")
"""The columns of :func:`interval_columns`, in order."""

POWER = 0.80
"""The power at which :func:`detectable_difference` states the smallest detectable difference."""

MAX_REPLICATIONS = 10_000
"""The most replications :func:`replications_to_detect` looks at (a scenario's own limit)."""

UNBOUNDED = (-math.inf, math.inf)
"""The support of a quantity that can take any value: its intervals are not cut."""


def interval(
    values: np.ndarray, support: tuple[float, float] = UNBOUNDED
) -> tuple[float, float, int, float, float]:
    """Return ``(mean, sd, n, ci_low, ci_high)`` of finite values (95% Student t interval).

    ``ci_low`` and ``ci_high`` are cut to ``support`` (``(low, high)``, the values the
    quantity can take), never past the mean; the mean and sd are not cut.
    """
    values = values[np.isfinite(values)]
    n = int(values.size)
    if n == 0:
        return math.nan, math.nan, 0, math.nan, math.nan
    mean = float(values.mean())
    if n == 1:
        return mean, math.nan, 1, math.nan, math.nan
    sd = float(values.std(ddof=1))
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sd / math.sqrt(n)
    # cut at the support, but never past the mean (which values outside the support can move)
    low = min(max(mean - half, support[0]), mean)
    high = max(min(mean + half, support[1]), mean)
    return mean, sd, n, low, high


def interval_columns(
    values: np.ndarray, support: tuple[float, float] = UNBOUNDED
) -> dict[str, float | int]:
    """Return :func:`interval` as the columns of :data:`INTERVAL_COLUMNS`."""
    return dict(zip(INTERVAL_COLUMNS, interval(values, support), strict=True))


def difference_support(support: tuple[float, float]) -> tuple[float, float]:
    """Return the support of a difference of two quantities of ``support``: (lo - hi, hi - lo)."""
    low, high = support
    return low - high, high - low


def paired_p_value(differences: np.ndarray) -> float:
    """Return the two-sided p-value of a paired t-test that the mean difference is 0.

    Over the finite paired differences: NaN with fewer than 2; with no spread (every difference
    equal), 1 when they are all 0 and 0 otherwise (the limit of the t statistic); otherwise
    ``2 P(T > |t|)`` for ``t = mean / (sd / sqrt(n))`` and T Student's t with n - 1 degrees of
    freedom (``scipy.stats.ttest_1samp``'s value, computed with the sd of :func:`interval`, so
    that p < 1 - CONFIDENCE exactly when the interval excludes 0).
    """
    values = differences[np.isfinite(differences)]
    n = values.size
    if n < 2:
        return math.nan
    if np.ptp(values) == 0:
        return 1.0 if values[0] == 0 else 0.0
    t = float(values.mean()) / (float(values.std(ddof=1)) / math.sqrt(n))
    return float(2 * stats.t.sf(abs(t), n - 1))


def _detectable_factor(n: int, alpha: float, power: float) -> float:
    """Return ``(t_{1-alpha/2, n-1} + t_{power, n-1}) / sqrt(n)``: the MDD of sd 1 at n."""
    quantiles = stats.t.ppf([1 - alpha / 2, power], n - 1)
    return float(quantiles.sum()) / math.sqrt(n)


def detectable_difference(
    sd: float, n: int, *, alpha: float = 1 - CONFIDENCE, power: float = POWER
) -> float:
    """Return the minimum detectable difference of a paired comparison of ``n`` replications.

    The smallest true mean difference that a two-sided paired t-test at level ``alpha`` (0.05)
    detects with probability ``power`` (80%), given ``sd``, the standard deviation of the
    paired differences::

        MDD = (t_{1-alpha/2, n-1} + t_{power, n-1}) * sd / sqrt(n)

    with ``t_{q, n-1}`` the q-quantile of Student's t with n - 1 degrees of freedom. This is the
    usual central-t approximation (the t statistic's shift taken as a shifted central t): the
    exact power at the MDD, from the noncentral t, is 73% for n = 2, 77% for 3, 79% for 5 and
    within 0.2 points of 80% from n = 10 on. For large n the MDD tends to
    ``(z_{1-alpha/2} + z_power) sd / sqrt(n)``, ``(1.960 + 0.842) sd / sqrt(n)``. It is the MDD of
    one test at ``alpha``: the Benjamini-Hochberg adjustment of a comparison's many differences
    (:func:`benjamini_hochberg`) asks for somewhat more. In the units of the differences; NaN
    for fewer than 2 replications or a sd that is not a number, 0 for a sd of 0.
    """
    if n < 2 or not math.isfinite(sd):
        return math.nan
    return _detectable_factor(int(n), alpha, power) * float(sd)


def replications_to_detect(
    difference: float,
    sd: float,
    *,
    alpha: float = 1 - CONFIDENCE,
    power: float = POWER,
    limit: int = MAX_REPLICATIONS,
) -> int | None:
    """Return the replications a paired comparison needs to detect ``difference`` with ``power``.

    The smallest n >= 2 whose :func:`detectable_difference` is at most ``|difference|``, that
    is ``(t_{1-alpha/2, n-1} + t_{power, n-1}) * sd / sqrt(n) <= |difference|``, for paired
    differences of standard deviation ``sd`` (the central-t approximation of
    :func:`detectable_difference`); 2 when ``sd`` is 0. None when more than ``limit``
    replications (10,000) would be needed, or when ``difference`` is 0: no number of
    replications detects a difference of 0 with a power above ``alpha``.

    Raises:
        ValueError: ``difference`` or ``sd`` is not a finite number, or ``sd`` is negative.
    """
    if not (math.isfinite(difference) and math.isfinite(sd)) or sd < 0:
        raise ValueError(
            f"replications_to_detect needs a finite difference and sd >= 0, got {difference}, {sd}"
        )
    target = abs(difference)
    if target == 0:
        return None
    if detectable_difference(sd, limit, alpha=alpha, power=power) > target:
        return None
    # the MDD falls strictly as n grows: bisect for the first n at or below the target
    low, high = 1, limit  # MDD(low) > target (n = 1 has none), MDD(high) <= target
    while high - low > 1:
        middle = (low + high) // 2
        if detectable_difference(sd, middle, alpha=alpha, power=power) <= target:
            high = middle
        else:
            low = middle
    return high


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Return the Benjamini-Hochberg adjusted p-values (the false discovery rate correction).

    The family is the finite p-values (m of them; NaN stays NaN): the i-th smallest becomes
    ``min over j >= i of p_(j) m / j``, at most 1, as ``scipy.stats.false_discovery_control``
    computes it (here on the finite ones). A test is significant at false discovery rate q when
    its adjusted p-value is below q.
    """
    from scipy.stats import false_discovery_control

    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    finite = np.isfinite(p)
    if finite.any():
        out[finite] = false_discovery_control(p[finite], method="bh")
    return out


def standard_error(values: np.ndarray) -> float:
    """Return the standard error of the mean of a 1-d array: ``sd(ddof=1) / sqrt(n)``."""
    return float(values.std(ddof=1) / math.sqrt(values.size))


def mean_and_se(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return per column the mean over rows and its standard error, ignoring NaN.

    The mean is NaN for a column without values, the standard error for one with fewer than
    two (no warnings either way).
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    finite = np.isfinite(values)
    count = finite.sum(axis=0).astype(float)
    mean = np.full(values.shape[1], np.nan)
    np.divide(np.where(finite, values, 0.0).sum(axis=0), count, out=mean, where=count > 0)
    squares = np.where(finite, (values - mean) ** 2, 0.0).sum(axis=0)
    se = np.full(values.shape[1], np.nan)
    several = count > 1
    se[several] = np.sqrt(squares[several] / (count[several] - 1) / count[several])
    return mean, se
