"""Confidence intervals and standard errors: the one place lobbysim computes them.

Used by :mod:`lobbysim.experiments.replications` (summaries and paired differences), the
sweep report (per cell and per swept value), the run report's figures (±1 standard-error
bands) and the paper report's claims (paired standard errors). Imports nothing from lobbysim.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
"""The level of every confidence interval in the reports."""

INTERVAL_COLUMNS = ("mean", "sd", "n", "ci_low", "ci_high")
"""The columns of :func:`interval_columns`, in order."""


def interval(values: np.ndarray) -> tuple[float, float, int, float, float]:
    """Return ``(mean, sd, n, ci_low, ci_high)`` of finite values (95% Student t interval)."""
    values = values[np.isfinite(values)]
    n = int(values.size)
    if n == 0:
        return math.nan, math.nan, 0, math.nan, math.nan
    mean = float(values.mean())
    if n == 1:
        return mean, math.nan, 1, math.nan, math.nan
    sd = float(values.std(ddof=1))
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sd / math.sqrt(n)
    return mean, sd, n, mean - half, mean + half


def interval_columns(values: np.ndarray) -> dict[str, float | int]:
    """Return :func:`interval` as the columns of :data:`INTERVAL_COLUMNS`."""
    return dict(zip(INTERVAL_COLUMNS, interval(values), strict=True))


def excludes_zero(columns: dict[str, float | int]) -> bool:
    """Return whether an interval of :func:`interval_columns` (of >= 2 values) excludes 0."""
    return bool(columns["n"] > 1 and (columns["ci_low"] > 0 or columns["ci_high"] < 0))


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
