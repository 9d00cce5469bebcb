"""The paper's Section 4 claims, checked against a study's result with paired z-scores.

Part of :mod:`lobbysim.reporting.paper` (no simulation): the distance and paired-difference
statistics, the verdict logic and :func:`evaluate_claims`, whose table goes into ``claims.csv``
and ``summary.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.paper import METRICS, PaperResult, PaperStudy
from lobbysim.reporting.verdicts import CLAIM_VERDICTS, Z_THRESHOLD, claim_verdict, z_score
from lobbysim.stats.intervals import standard_error

KG = "knowledge_gradient"
"""The policy whose claims the paper makes; every comparison is KG against another policy."""

VERDICTS = CLAIM_VERDICTS

CLAIM_COLUMNS = [
    "claim",
    "comparison",
    "window",
    "statistic",
    "estimate",
    "se",
    "z",
    "verdict",
    "relative_difference",
]

CLAIM_TEXT = {
    "a": "(a) KG explores more in the first ~100 games (lower true draw probability)",
    "b": "(b) KG learns player 0's skill faster (lower squared error early)",
    "c": "(c) after ~100 games KG gives higher true draw probability",
    "d": "(d) after ~100 games KG's win ratio is closer to 0.5",
    "e": "(e) after ~100 games KG's skill difference is closer to 0",
    "f": "(f) the three policies perform similarly (middle case)",
}
"""The paper's qualitative Section 4 claims, as checked by :func:`evaluate_claims`."""


def _relative(estimate: float, reference: float) -> float:
    """Return estimate / |reference|, NaN when the reference is 0."""
    return estimate / abs(reference) if reference != 0 else math.nan


def _window_row(windows: pd.DataFrame, kind: str, policy: str, window: str) -> pd.Series:
    rows = windows[
        (windows["kind"] == kind) & (windows["policy"] == policy) & (windows["window"] == window)
    ]
    if len(rows) != 1:
        raise ValueError(f"windows has {len(rows)} rows for {kind} {policy!r} in window {window}")
    return rows.iloc[0]


def _paired_claim(
    result: PaperResult, claim: str, other: str, window: str, metric: str, direction: int
) -> dict[str, Any]:
    """A claim about the paired difference KG - other of one metric in one window.

    ``direction`` is -1 (claimed < 0), +1 (claimed > 0) or 0 (claimed: no significant difference).
    """
    paired = _window_row(result.windows, "paired_difference", f"{KG} - {other}", window)
    other_mean = _window_row(result.windows, "mean", other, window)
    estimate, se = float(paired[metric]), float(paired[f"{metric}_se"])
    z = z_score(estimate, se)
    verdict = claim_verdict(z, direction)
    expected = {0: f"|z| < {Z_THRESHOLD:g}", -1: "< 0", 1: "> 0"}[direction]
    return {
        "claim": CLAIM_TEXT[claim],
        "comparison": f"{KG} vs {other}",
        "window": window,
        "statistic": f"{metric}: KG - other, paired; expected {expected}",
        "estimate": estimate,
        "se": se,
        "z": z,
        "verdict": verdict,
        "relative_difference": _relative(estimate, float(other_mean[metric])),
    }


def distance_difference(
    kg_values: np.ndarray, other_values: np.ndarray, target: float
) -> tuple[float, float]:
    """Return (estimate, se) of |mean(kg) - target| - |mean(other) - target| over paired paths.

    Per path p, u_p = sgn_kg * (kg_p - target) - sgn_other * (other_p - target), where sgn is the
    sign of that policy's mean minus the target (+1 when the mean sits exactly on the target, so
    that its variability still counts). mean(u) is exactly the difference of distances and
    std(u, ddof=1) / sqrt(paths) its standard error (the delta method for |.|, paired by path).

    Args:
        kg_values: KG's per-path values (e.g. late-window win rates), shape (paths,).
        other_values: the other policy's per-path values on the same paths.
        target: the ideal value (0.5 for the win rate, 0 for the skill difference).
    """
    kg = np.asarray(kg_values, dtype=np.float64)
    other = np.asarray(other_values, dtype=np.float64)
    if kg.shape != other.shape or kg.ndim != 1 or kg.size < 2:
        raise ValueError(f"need two paired 1-d arrays of >= 2 paths, got {kg.shape}, {other.shape}")
    sgn_kg = 1.0 if kg.mean() >= target else -1.0
    sgn_other = 1.0 if other.mean() >= target else -1.0
    u = sgn_kg * (kg - target) - sgn_other * (other - target)
    return float(u.mean()), standard_error(u)


def _distance_claim(
    result: PaperResult, claim: str, other: str, metric: str, target: float
) -> dict[str, Any]:
    """Claim (d) or (e): in the late window KG's metric is closer to ``target`` than other's."""
    labels = result.study.window_labels()
    late = len(labels) - 1
    k = METRICS.index(metric)
    kg_values = result.path_windows[KG][:, late, k]
    other_values = result.path_windows[other][:, late, k]
    estimate, se = distance_difference(kg_values, other_values, target)
    z = z_score(estimate, se)
    return {
        "claim": CLAIM_TEXT[claim],
        "comparison": f"{KG} vs {other}",
        "window": labels[late],
        "statistic": (
            f"|{metric}_KG - {target:g}| - |{metric}_other - {target:g}|, paired; expected < 0"
        ),
        "estimate": estimate,
        "se": se,
        "z": z,
        "verdict": claim_verdict(z, -1),
        "relative_difference": _relative(estimate, float(other_values.mean()) - target),
    }


def applicable_claims(study: PaperStudy) -> list[str]:
    """Return the letters of the paper's claims that apply to the study's case.

    Top and bottom: (a)-(e). Middle: (a) and (f), plus (d) and (e) with equal priors (the paper:
    with equal priors KG comes closer to a 0.5 win ratio and 0 skill difference in the middle).
    """
    if study.case in ("top", "bottom"):
        return ["a", "b", "c", "d", "e"]
    return ["a", "d", "e", "f"] if study.equal_priors else ["a", "f"]


def evaluate_claims(result: PaperResult) -> pd.DataFrame:
    """Check the paper's Section 4 claims that apply to the result's case, KG against each other.

    Early is the study's first window, late its last. Claims (a)-(c) and (f) use the paired
    differences KG - other of ``result.windows`` (z = difference / its SE over paths); (d) and
    (e) use the per-path late-window averages of ``result.path_windows`` (see
    :func:`distance_difference`). A directional claim is "supported" when z lies in the claimed
    direction with |z| >= 2, "contradicted" when it lies against it with |z| >= 2 and "not
    supported" otherwise; claim (f), no difference, is "supported" when |z| < 2.

    Args:
        result: the study's result.

    Returns:
        One row per claim, comparison and (for (f)) metric, with the columns of
        :data:`CLAIM_COLUMNS`; ``relative_difference`` is the estimate relative to the other
        policy's window mean (for (d)/(e): to its distance from the target). Empty when KG or
        every other policy is absent.
    """
    rows: list[dict[str, Any]] = []
    if KG in result.policies:
        labels = result.study.window_labels()
        early, late = labels[0], labels[-1]
        others = [name for name in result.policies if name != KG]
        for claim in applicable_claims(result.study):
            for other in others:
                if claim == "a":
                    rows.append(_paired_claim(result, "a", other, early, "draw_prob_true", -1))
                elif claim == "b":
                    rows.append(_paired_claim(result, "b", other, early, "sq_error", -1))
                elif claim == "c":
                    rows.append(_paired_claim(result, "c", other, late, "draw_prob_true", +1))
                elif claim == "d":
                    rows.append(_distance_claim(result, "d", other, "win", 0.5))
                elif claim == "e":
                    rows.append(_distance_claim(result, "e", other, "skill_diff", 0.0))
                else:
                    for metric in METRICS:
                        rows.append(_paired_claim(result, "f", other, late, metric, 0))
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)
