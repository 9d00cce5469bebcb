"""Gaussian skill beliefs: the Bayesian model of Ryzhov, Tariq & Powell (2011), corrected.

Each player has a belief s ~ N(mu, var) about their skill; a game draws performances
p ~ N(s, beta2) and the higher performance wins. For a match a vs b let

    c2 = var_a + var_b + 2 * beta2,   c = sqrt(c2),   t = (mu_a - mu_b) / c.

* win probability (Proposition 1):      P(a beats b) = Phi(t)
* draw-probability density (eq. 5):     q  = phi(t) / c
* match quality (eq. 6, TrueSkill's):   q~ = sqrt(2 beta2 / c2) * exp(-t^2 / 2)
* after a beats b (no draw margin):     mu_a += var_a / c * v(t),  var_a *= 1 - var_a / c2 * w(t)
                                        mu_b -= var_b / c * v(t),  var_b *= 1 - var_b / c2 * w(t)
  with v(t) = phi(t) / Phi(t) and w(t) = v(t) * (v(t) + t).

**Why these and not the printed ones.** The paper's eqs. (1), (2) and (10) print the argument as
(mu_a - mu_b) / c2 and the mean step as var_a / c2 * v(.). Its own proof of Proposition 1 reduces
the probability to P(X - Y <= 0) with X - Y ~ N(-(mu_a - mu_b), c2), which is
Phi((mu_a - mu_b) / c): the square root was lost in print. The forms above are TrueSkill's (Herbrich
et al. 2006) and agree with the ``trueskill`` package. The printed forms are available with
``literal=True`` for study; never the default, as they are not the posterior of the paper's model.

**Numerics.** v(t) is computed as sqrt(2/pi) / erfcx(-t / sqrt(2)), which neither overflows nor
cancels for heavy upsets (t << 0, where v(t) ~ -t); 1 - w(t) uses an asymptotic series for t < -150,
so w stays in [0, 1). A variance is multiplied by ((c2 - var) + var * (1 - w)) / c2, a factor in
(0, 1], so it never grows and stays positive. Every function broadcasts over numpy arrays and
accepts scalars.

This module is pure numpy/scipy: no SimPy, no I/O.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erfcx, ndtr

__all__ = [
    "draw_density",
    "match_quality",
    "match_quality_of_pairs",
    "true_draw_density",
    "update_1v1",
    "update_1v1_one",
    "v_win",
    "w_win",
    "win_probability",
]

FloatArray = NDArray[np.float64]

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Below this t, 1 - w(t) comes from its asymptotic series (error ~2e-15 here, falling as t^-8);
# above it, from v * (v + t) directly, whose cancellation error (~1e-12 here) grows as t^2.
# Both measured against 50-digit mpmath.
_ASYMPTOTIC_T = -150.0


def _as_float(x: ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def _c2(var_a: ArrayLike, var_b: ArrayLike, beta2: ArrayLike) -> FloatArray:
    return _as_float(var_a) + _as_float(var_b) + 2.0 * _as_float(beta2)


def v_win(t: ArrayLike) -> FloatArray:
    """Return v(t) = phi(t) / Phi(t), the mean-update factor of a win, stable for any finite t."""
    t = _as_float(t)
    return _SQRT_2_OVER_PI / erfcx(-t / _SQRT2)


def one_minus_w_given_v(t: FloatArray, v: FloatArray) -> FloatArray:
    """Return 1 - w(t) with w(t) = v(t) * (v(t) + t), in (0, 1], accurate for heavy upsets.

    ``v`` is ``v_win(t)``, already computed by the caller (the update and the knowledge
    gradient's look-ahead need both); ``t`` and ``v`` are float arrays.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        direct = 1.0 - v * (v + t)  # overflows only where the series below is used instead
        inv_t2 = 1.0 / (t * t)
        # For x = -t -> infinity: w = 1 - 1/x^2 + 6/x^4 - 50/x^6 + O(x^-8).
        series = inv_t2 * (1.0 - inv_t2 * (6.0 - 50.0 * inv_t2))
    out = np.where(t < _ASYMPTOTIC_T, series, direct)
    return np.clip(out, 0.0, 1.0)


def w_win(t: ArrayLike) -> FloatArray:
    """Return w(t) = v(t) * (v(t) + t), the variance-update factor of a win, in [0, 1)."""
    t = _as_float(t)
    return 1.0 - one_minus_w_given_v(t, v_win(t))


def update_1v1_one(
    mu_w: float, var_w: float, mu_l: float, var_l: float, beta2: float, tau2: float = 0.0
) -> tuple[float, float, float, float]:
    """:func:`update_1v1` of one game on Python floats, bit for bit (a rater applying one game,
    as a pass on every arrival does, spends most of the array version's time on overheads).

    The arithmetic is the array version's, step by step: the same IEEE operations, ``sqrt``
    correctly rounded in both, and scipy's ``erfcx`` itself; the series branch of
    :func:`one_minus_w_given_v` only where it is taken, and its clip and cap as ``max``/``min``
    (which pass NaN on as numpy does).
    """
    var_w = var_w + tau2
    var_l = var_l + tau2
    two_beta2 = 2.0 * beta2
    c2 = var_w + var_l + two_beta2
    scale = math.sqrt(c2)
    t = (mu_w - mu_l) / scale
    v = _SQRT_2_OVER_PI / float(erfcx(-t / _SQRT2))
    if t < _ASYMPTOTIC_T:
        inv_t2 = 1.0 / (t * t)
        one_minus_w = inv_t2 * (1.0 - inv_t2 * (6.0 - 50.0 * inv_t2))
    else:
        one_minus_w = 1.0 - v * (v + t)
    # min(max(x, 0.0), 1.0) and min(x, 1.0) as comparisons: the same value, NaN and -0.0
    # included (max(x, 0.0) is 0.0 only if 0.0 > x), without the calls
    if one_minus_w < 0.0:
        one_minus_w = 0.0
    elif one_minus_w > 1.0:
        one_minus_w = 1.0
    shrink_w = ((var_l + two_beta2) + var_w * one_minus_w) / c2
    shrink_l = ((var_w + two_beta2) + var_l * one_minus_w) / c2
    return (
        mu_w + var_w / scale * v,
        var_w * (1.0 if shrink_w > 1.0 else shrink_w),
        mu_l - var_l / scale * v,
        var_l * (1.0 if shrink_l > 1.0 else shrink_l),
    )


def win_probability(
    mu_a: ArrayLike,
    var_a: ArrayLike,
    mu_b: ArrayLike,
    var_b: ArrayLike,
    beta2: ArrayLike,
    *,
    literal: bool = False,
) -> FloatArray:
    """Return P(a beats b) = Phi((mu_a - mu_b) / c) under the beliefs (Proposition 1).

    Args:
        mu_a, var_a: belief mean and variance of player a.
        mu_b, var_b: belief mean and variance of player b.
        beta2: performance-noise variance sigma_eps^2.
        literal: use the paper's printed argument (mu_a - mu_b) / c^2 instead of / c. For study
            only: it is not the probability of the model (see the module docstring).
    """
    c2 = _c2(var_a, var_b, beta2)
    scale = c2 if literal else np.sqrt(c2)
    return ndtr((_as_float(mu_a) - _as_float(mu_b)) / scale)


def draw_density(
    mu_a: ArrayLike, var_a: ArrayLike, mu_b: ArrayLike, var_b: ArrayLike, beta2: ArrayLike
) -> FloatArray:
    """Return q, the draw-probability density of the paper's eq. (5): phi(t) / c."""
    c2 = _c2(var_a, var_b, beta2)
    d = _as_float(mu_a) - _as_float(mu_b)
    return np.exp(-0.5 * d * d / c2) * _INV_SQRT_2PI / np.sqrt(c2)


def match_quality(
    mu_a: ArrayLike, var_a: ArrayLike, mu_b: ArrayLike, var_b: ArrayLike, beta2: ArrayLike
) -> FloatArray:
    """Return q~, TrueSkill's match quality (the paper's eq. 6): sqrt(2 beta2 / c2) exp(-t^2/2)."""
    # a float beta2 (a rater's) stays a Python float: the same IEEE products as a 0-d array
    two_beta2 = 2.0 * (beta2 if isinstance(beta2, float) else _as_float(beta2))
    c2 = _as_float(var_a) + _as_float(var_b) + two_beta2
    d = _as_float(mu_a) - _as_float(mu_b)
    return np.sqrt(two_beta2 / c2) * np.exp(-0.5 * d * d / c2)


def match_quality_of_pairs(
    mu: list[float], var: list[float], a: list[int], b: list[int], beta2: float
) -> list[float]:
    """:func:`match_quality` of the pairs ``(a[k], b[k])`` of indices into the lists ``mu`` and
    ``var`` (side a first), on Python floats, bit for bit (a pass on every arrival asks for one
    to a few dozen pairs, where the array version is mostly overhead).

    The same IEEE operations in the same order, ``sqrt`` correctly rounded in both; the
    exponentials come from numpy's ``exp``, called on each float (the kernel of its array call,
    tested equal), as numpy's vectorised ``exp`` need not agree with ``math.exp`` to the last bit.
    """
    two_beta2 = 2.0 * beta2
    exp, sqrt = np.exp, math.sqrt
    values = []
    for i, j in zip(a, b, strict=True):
        c2 = var[i] + var[j] + two_beta2
        d = mu[i] - mu[j]
        values.append(sqrt(two_beta2 / c2) * float(exp(-0.5 * d * d / c2)))
    return values


def true_draw_density(s_a: ArrayLike, s_b: ArrayLike, beta2: ArrayLike) -> FloatArray:
    """Return the true draw-probability density of eq. (14) from true skills s_a, s_b.

    It is eq. (5) with zero belief variance: exp(-(s_a - s_b)^2 / (4 beta2)) / sqrt(4 pi beta2).
    """
    return draw_density(s_a, 0.0, s_b, 0.0, beta2)


def update_1v1(
    mu_w: ArrayLike,
    var_w: ArrayLike,
    mu_l: ArrayLike,
    var_l: ArrayLike,
    beta2: ArrayLike,
    tau2: ArrayLike = 0.0,
    *,
    literal: bool = False,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Return the beliefs ``(mu_w', var_w', mu_l', var_l')`` after w beats l.

    Args:
        mu_w, var_w: belief of the winner before the game.
        mu_l, var_l: belief of the loser before the game.
        beta2: performance-noise variance sigma_eps^2 (> 0).
        tau2: dynamics variance added to both players' variances before the game (TrueSkill's
            tau^2), so that skills may drift; 0 keeps the paper's static model.
        literal: use the paper's printed eqs. (1)-(2) (argument and mean step divided by c^2
            instead of c). For study only; see the module docstring.

    Returns:
        The four updated arrays, broadcast against each other. Variances never grow (with
        ``tau2 == 0``) and stay positive; nothing is NaN for finite input.
    """
    tau2 = _as_float(tau2)
    var_w = _as_float(var_w) + tau2
    var_l = _as_float(var_l) + tau2
    mu_w = _as_float(mu_w)
    mu_l = _as_float(mu_l)
    two_beta2 = 2.0 * _as_float(beta2)
    c2 = var_w + var_l + two_beta2
    scale = c2 if literal else np.sqrt(c2)
    t = (mu_w - mu_l) / scale
    v = v_win(t)
    one_minus_w = one_minus_w_given_v(t, v)
    mu_w_new = mu_w + var_w / scale * v
    mu_l_new = mu_l - var_l / scale * v
    # var * (1 - var/c2 * w) written as var * ((c2 - var) + var * (1 - w)) / c2, where c2 - var is
    # the other player's variance + 2 beta2, exactly: both terms are non-negative, so the factor is
    # in (0, 1] without cancellation (capped at 1 against a last-bit rounding up).
    var_w_new = var_w * np.minimum(((var_l + two_beta2) + var_w * one_minus_w) / c2, 1.0)
    var_l_new = var_l * np.minimum(((var_w + two_beta2) + var_l * one_minus_w) / c2, 1.0)
    # a tuple with every numpy (before 2.0, broadcast_arrays returns a list)
    arrays = np.broadcast_arrays(mu_w_new, var_w_new, mu_l_new, var_l_new)
    return tuple(arrays)  # type: ignore[return-value]
