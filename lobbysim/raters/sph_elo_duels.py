"""The SPH Elo on arrays of pairs: each pair's predicted outcome, and ordinary 1v1 games rated
together, bit for bit as :func:`~lobbysim.skill.sph_elo.rating_changes` rates them one by one.

:func:`predicted_hi` is the Elo's predicted outcome of pairs, evaluated as the update evaluates
it (:func:`~lobbysim.skill.sph_elo.pair_adjustment`: from the higher-rated side); the rater's
:meth:`~lobbysim.raters.sph_elo.SPHEloRater.win_probability` is it. :func:`rate_duels` rates
a wave of *ordinary* 1v1 games (two registered players on different sides, finite scores >= 0,
minutes > 0; no player in two of them) in a few numpy operations, or one such game on floats,
and leaves the others to :func:`~lobbysim.skill.sph_elo.rating_changes` itself. The tests hold
these side by side with :func:`~lobbysim.skill.sph_elo.rating_changes`
(tests/raters/test_raters.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from lobbysim.raters.base import FloatArray, PlayerTable, compare_sph
from lobbysim.skill.sph_elo import SPHParams

__all__ = ["predicted_hi", "rate_duels"]


def predicted_hi(
    r_a: FloatArray, r_b: FloatArray, t: float
) -> tuple[NDArray[np.bool_], FloatArray]:
    """Return which side is rated higher (``a`` on equal ratings) and that side's predicted
    outcome ``1 / (1 + exp(-|R_a - R_b| / t))``, per pair.

    As :func:`lobbysim.skill.sph_elo.pair_adjustment` evaluates it: from the higher-rated side,
    a logistic of a non-negative argument; the other side's prediction is one minus it.
    """
    return r_a >= r_b, 1.0 / (1.0 + np.exp(-(np.abs(r_a - r_b) / t)))


def rate_duels(
    table: PlayerTable,
    params: SPHParams,
    ks: list[int],
    duel: Callable[[int], tuple[float, ...]],
    sums: list[float],
) -> list[int]:
    """Rate the ordinary 1v1 games ``ks`` (all players different), vectorised; ``duel(k)``
    gives game k's (player, score, minutes) of side a then side b.

    Returns the positions of games unfit for the fast path (a seat with 0 minutes or a
    score or stint that :func:`rating_changes` must judge); ``sums`` gets the others' sums.
    """
    if not ks:
        return []
    if len(ks) == 1:  # one game (a pass on every arrival): the same arithmetic on floats
        return _rate_duel(table, params, ks[0], duel(ks[0]), sums)
    cols = np.array([duel(k) for k in ks]).reshape(len(ks), 2, 3)
    score_a, score_b = cols[:, 0, 1], cols[:, 1, 1]
    min_a, min_b = cols[:, 0, 2], cols[:, 1, 2]
    ok = (
        np.isfinite(cols[:, :, 1:]).all(axis=(1, 2))
        & (score_a >= 0)
        & (score_b >= 0)
        & (min_a > 0)
        & (min_b > 0)
    )
    slow = [k for k, fit in zip(ks, ok, strict=True) if not fit]
    if slow:
        ks = [k for k, fit in zip(ks, ok, strict=True) if fit]
        cols = cols[ok]
        score_a, score_b = cols[:, 0, 1], cols[:, 1, 1]
        min_a, min_b = cols[:, 0, 2], cols[:, 1, 2]
        if not ks:
            return slow
    ia = cols[:, 0, 0].astype(np.intp)
    ib = cols[:, 1, 0].astype(np.intp)
    p = params
    ratings = table.columns[0]
    r_a, r_b = ratings[ia], ratings[ib]
    # As in lobbysim.skill.sph_elo.pair_adjustment: evaluate from the higher-rated side
    # (a on equal ratings), whose prediction is a logistic of a non-negative argument.
    a_hi, prediction_hi = predicted_hi(r_a, r_b, p.t)
    outcome_a = 0.5 * (compare_sph(score_a, min_a, score_b, min_b) + 1.0)
    outcome_hi = np.where(a_hi, outcome_a, 1.0 - outcome_a)
    time = np.minimum(np.minimum(p.max_game_length, min_a), min_b)
    indiv_hi = (outcome_hi - prediction_hi) * p.game_mult * time
    # No cap in a 1v1: both players share |offset| = |result| * game_mult * time with
    # |result| <= 1 and time <= min(minutes), so min(minutes) * game_mult / |offset| >= 1 (also
    # in floating point: the same two factors are rounded alike) and the scale is always 1.
    change_hi = indiv_hi
    change_a = np.where(a_hi, change_hi, -change_hi)
    change_b = -change_a
    table.write(np.concatenate([ia, ib]), [np.concatenate([r_a + change_a, r_b + change_b])])
    for k, total in zip(ks, (change_a + change_b).tolist(), strict=True):
        sums[k] = total
    return slow


def _rate_duel(
    table: PlayerTable, params: SPHParams, k: int, duel: tuple[float, ...], sums: list[float]
) -> list[int]:
    """:func:`rate_duels` for one game, operation for operation on floats.

    Each float operation is the one the vectorised path does element-wise (IEEE arithmetic,
    the same order), and the exponential is numpy's own, so the ratings are bit for bit
    those of the vectorised path (tests/raters/test_raters.py holds them side by side).
    """
    id_a, score_a, min_a, id_b, score_b, min_b = (float(x) for x in duel)
    if not (
        math.isfinite(score_a)
        and math.isfinite(score_b)
        and math.isfinite(min_a)
        and math.isfinite(min_b)
        and score_a >= 0
        and score_b >= 0
        and min_a > 0
        and min_b > 0
    ):
        return [k]
    ia, ib = int(id_a), int(id_b)
    p = params
    ratings = table.columns[0]
    r_a, r_b = float(ratings[ia]), float(ratings[ib])
    a_hi = r_a >= r_b
    prediction_hi = 1.0 / (1.0 + float(np.exp(-(abs(r_a - r_b) / p.t))))
    x, y = score_a * min_b, score_b * min_a
    if x == y and not (score_a == 0.0 and score_b == 0.0):  # decided exactly
        sign = float(
            compare_sph(
                np.array([score_a]), np.array([min_a]), np.array([score_b]), np.array([min_b])
            )[0]
        )
    else:
        sign = float((x > y) - (x < y))
    outcome_a = 0.5 * (sign + 1.0)
    outcome_hi = outcome_a if a_hi else 1.0 - outcome_a
    time = min(min(p.max_game_length, min_a), min_b)
    change_hi = (outcome_hi - prediction_hi) * p.game_mult * time
    change_a = change_hi if a_hi else -change_hi
    change_b = -change_a
    table.write(np.array([ia, ib], dtype=np.intp), [np.array([r_a + change_a, r_b + change_b])])
    sums[k] = change_a + change_b
    return []
