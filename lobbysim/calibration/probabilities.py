"""The probability that one side beats another, per rater replay family, from its ratings.

For two sides ``a`` and ``b``, ``m`` a side's mean rating, ``s`` the sum of its players' rating
variances and ``n`` its players (each is the rater's own
:meth:`~lobbysim.raters.Rater.win_probability` when both sides have one player;
:mod:`lobbysim.calibration.replay` reads them by the family a rater declares):

* ``gaussian`` (``bayesian``, ``openskill``: :class:`~lobbysim.raters.base.GaussianBeliefs`)
  and the oracle: ``Phi((m_a - m_b) / c)`` with
  ``c^2 = beta2 / n_a + beta2 / n_b + s_a / n_a^2 + s_b / n_b^2``, the probability that the side
  with the higher mean performance wins when each performance is ``N(skill, beta2)``
  (1v1: ``c^2 = 2 beta2 + var_a + var_b``, TrueSkill's).
* ``elo`` (``sph_elo``): the Elo's logistic ``1 / (1 + exp(-(m_a - m_b) / t))``.
* ``glicko2`` (``glicko2``): Glickman's predictive ``1 / (1 + exp(-g(phi) (mu_a - mu_b)))`` on
  the Glicko-2 scale, a side's ``mu`` its mean rating and
  ``phi^2 = (s_a / n_a^2 + s_b / n_b^2) / 173.7178^2``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, ndtr

from lobbysim.raters.glicko2 import SCALE

__all__ = ["elo_probability", "gaussian_probability", "glicko2_probability"]

FloatArray = NDArray[np.float64]


def gaussian_probability(
    m_a: FloatArray,
    s_a: FloatArray,
    n_a: FloatArray,
    m_b: FloatArray,
    s_b: FloatArray,
    n_b: FloatArray,
    beta2: float,
) -> FloatArray:
    """Return ``Phi((m_a - m_b) / c)``, ``c^2 = beta2/n_a + beta2/n_b + s_a/n_a^2 + s_b/n_b^2``.

    ``m`` a side's mean rating, ``s`` the sum of its rating variances, ``n`` its players.
    """
    c2 = beta2 / n_a + beta2 / n_b + s_a / (n_a * n_a) + s_b / (n_b * n_b)
    return ndtr((m_a - m_b) / np.sqrt(c2))


def elo_probability(m_a: FloatArray, m_b: FloatArray, t: float) -> FloatArray:
    """Return the Elo's ``1 / (1 + exp(-(m_a - m_b) / t))`` (no overflow for any gap)."""
    return expit((m_a - m_b) / t)


def glicko2_probability(
    m_a: FloatArray,
    s_a: FloatArray,
    n_a: FloatArray,
    m_b: FloatArray,
    s_b: FloatArray,
    n_b: FloatArray,
) -> FloatArray:
    """Return Glickman's ``1 / (1 + exp(-g(phi) (mu_a - mu_b)))`` from Glicko ratings ``m`` and
    deviations (``s`` the sum of RD^2 of a side, ``n`` its players), on the Glicko-2 scale."""
    phi2 = (s_a / (n_a * n_a) + s_b / (n_b * n_b)) / (SCALE * SCALE)
    g = 1.0 / np.sqrt(1.0 + 3.0 * phi2 / math.pi**2)
    return expit(g * (m_a - m_b) / SCALE)
