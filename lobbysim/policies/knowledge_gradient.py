"""The knowledge-gradient (KG) policy of the paper, Section 3, vectorised.

For candidate j let k^w (k^l) be the beliefs after the focal player beats (loses to) j, both players
updated. Then

    F_j = P(0 beats j) * max_k q_0k(k^w) + P(j beats 0) * max_k q_0k(k^l)

where the max runs over all candidates k: j with its updated belief, every other k unchanged. The
policy picks argmax_j q_0j + W * F_j with W = N - n (finite horizon, eq. 12) or gamma / (1 - gamma)
(discounted, eq. 13). q is the draw-probability density of eq. (5), as in the paper.

Computing F_j for all j is O(M^2) per decision. :func:`kg_lookahead` computes the 2M possible
post-game beliefs of the focal player (the "queries") in one pass over both outcomes, then the max
over candidates with numpy broadcasting, in blocks of the batch dimension sized to stay in the CPU
cache, with the candidate axis first so that the max is an elementwise reduction. Only each row's
few candidates nearest the focal player are scored for every query; a bound proves the rest cannot
win, and the queries where it does not are completed over all candidates. Every value compared is
computed by the same expression either way, so the result is bit-identical to the dense one. Each
(query, candidate) element costs a few ns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr

from lobbysim.policies.base import POLICIES, Decision, FloatArray, IntArray
from lobbysim.skill.gaussian import draw_density, one_minus_w_given_v, v_win

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Elements (candidates x batch rows x queries) per block of the look-ahead: 256 kB of float64, so
# that the block's two temporaries stay in the CPU's L2 cache.
_BLOCK_ELEMENTS = 1 << 15
# Candidates scored first, nearest the focal player's mean; the rest only where the bound requires.
_NEAREST = 8
# The bound is raised by this factor, far more than the rounding error of the values it is compared
# with (a few ulps times an exponent below 750), so that a candidate it rules out is never the max.
_BOUND_MARGIN = 1.0 + 1e-9
_EPS = float(np.finfo(np.float64).eps)


def kg_lookahead(decision: Decision) -> tuple[FloatArray, FloatArray]:
    """Return ``(q_0j, F_j)`` for every candidate j, each of shape ``S + (M,)``.

    ``q_0j`` is the draw density of eq. (5) now; ``F_j`` the expected best draw density after one
    game against j (see the module docstring).
    """
    g = game_outcomes(decision)
    m = g.mu.shape[1]
    best = _best_density(g.x, g.a, g.mu0, g.mu, g.var, g.self_q)
    best *= _INV_SQRT_2PI
    f = g.p_win * best[:, :m] + (1.0 - g.p_win) * best[:, m:]
    return g.q_now.reshape(decision.mu.shape), f.reshape(decision.mu.shape)


class GameOutcomes(NamedTuple):
    """What a look-ahead needs of the focal player's game with each candidate, on flat rows.

    The decision's batch dimensions ``S`` are flattened into R rows. ``mu0``/``v0`` (R, 1) are
    the focal player's belief now, ``mu``/``var`` (R, M) the candidates'; ``q_now`` (R, M) is
    q_0j and ``p_win`` P(0 beats j). ``x``, ``a`` and ``self_q`` have 2M columns, the game's two
    outcomes: column j the focal player beats j, column M + j j beats the focal player. ``x`` is
    the focal player's mean after the outcome and ``a - 2 beta2`` its variance (so that
    ``a + var_k`` is c^2 against a player k of variance ``var_k``); ``self_q`` is sqrt(2 pi)
    times q between the two updated players.
    """

    mu0: FloatArray
    v0: FloatArray
    mu: FloatArray
    var: FloatArray
    q_now: FloatArray
    p_win: FloatArray
    x: FloatArray
    a: FloatArray
    self_q: FloatArray


def game_outcomes(decision: Decision) -> GameOutcomes:
    """Return the decision's :class:`GameOutcomes`: its beliefs on flat rows and, for each
    candidate j, the game with j now and the focal player's belief after each outcome (the
    1v1 update of :mod:`lobbysim.skill.gaussian`, both players updated)."""
    d = decision
    beta2 = float(d.beta2)
    batch_shape = d.mu.shape[:-1]
    m = d.mu.shape[-1]
    mu0 = np.broadcast_to(np.asarray(d.focal_mu, dtype=np.float64), batch_shape).reshape(-1, 1)
    v0 = np.broadcast_to(np.asarray(d.focal_var, dtype=np.float64), batch_shape).reshape(-1, 1)
    mu = np.asarray(d.mu, dtype=np.float64).reshape(-1, m)
    var = np.broadcast_to(np.asarray(d.var, dtype=np.float64), d.mu.shape).reshape(-1, m)
    return GameOutcomes(mu0, v0, mu, var, *_outcomes(mu0, v0, mu, var, beta2))


def _outcomes(
    mu0: FloatArray, v0: FloatArray, mu: FloatArray, var: FloatArray, beta2: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Return ``(q_now, p_win, x, a, self_q)``: what the look-ahead needs of the game with each j.

    ``q_now`` is q_0j and ``p_win`` P(0 beats j), shape (R, M). The others have 2M columns, the
    game's two outcomes: column j the focal player beats j, column M + j j beats the focal player.
    ``x`` and ``a - 2 beta2`` are the focal player's belief after the outcome; ``self_q`` is
    sqrt(2 pi) times q between the two updated players (the max's term for k = j).

    This is the arithmetic of :func:`~lobbysim.skill.gaussian.draw_density`,
    :func:`~lobbysim.skill.gaussian.win_probability` and
    :func:`~lobbysim.skill.gaussian.update_1v1` (both orders of the pair), operation for operation,
    so the floats are the same; what the separate calls would repeat is computed once. The two
    outcomes share c2 (addition commutes), and the winner's argument of the second is -t, exactly.
    """
    two_beta2 = 2.0 * beta2
    c2 = v0 + var + two_beta2
    c = np.sqrt(c2)
    d = mu0 - mu
    q_now = np.exp(-0.5 * d * d / c2) * _INV_SQRT_2PI / c
    t = d / c
    p_win = ndtr(t)

    # Axis 1 is the outcome, 0: the focal player wins, 1: j wins; t_win the winner's argument.
    t_win = np.stack([t, -t], axis=1)
    v = v_win(t_win)
    one_minus_w = one_minus_w_given_v(t_win, v)
    # The winner's mean moves up by its var / c * v, the loser's down by its own: negating the
    # second outcome's v (exact) makes that one expression for the focal player and one for j.
    np.negative(v[:, 1], out=v[:, 1])
    x = mu0[:, :, None] + (v0 / c)[:, None, :] * v
    mu_j = mu[:, None, :] - (var / c)[:, None, :] * v
    c2 = c2[:, None, :]
    v0 = v0[:, :, None]
    var_j = var[:, None, :]
    v0_new = v0 * np.minimum(((var_j + two_beta2) + v0 * one_minus_w) / c2, 1.0)
    var_j = var_j * np.minimum(((v0 + two_beta2) + var_j * one_minus_w) / c2, 1.0)

    self_q = draw_density(x, v0_new, mu_j, var_j, beta2) / _INV_SQRT_2PI
    a = v0_new + two_beta2
    rows = mu.shape[0]
    return q_now, p_win, x.reshape(rows, -1), a.reshape(rows, -1), self_q.reshape(rows, -1)


def _best_density(
    x: FloatArray,
    a: FloatArray,
    mu0: FloatArray,
    mu: FloatArray,
    var: FloatArray,
    self_q: FloatArray,
) -> FloatArray:
    """Return max(self_q, max_{k != j} g(x, a; mu_k, var_k)) per row and query, exactly.

    Query q belongs to candidate j = q mod M, whose own (stale) belief is left out: ``self_q``
    holds g against j's updated belief. g(x, a; mu_k, b_k) = exp(-(x - mu_k)^2 / (2 (a + b_k)))
    / sqrt(a + b_k).

    Pruning: each row first scores only its K candidates nearest to mu0 in mean. Every other
    candidate k has |mu_k - mu0| >= r (the distance of the nearest one left out), so
    |x - mu_k| >= gap = max(0, r - |x - mu0|) and g_k <= exp(-gap^2 / (2 (a + b_max)))
    / sqrt(a + b_min), b_max and b_min over those candidates. Where the maximum found is at least
    that bound (computed with margins for rounding, so that it bounds the computed g_k too), it is
    the exact maximum; the other queries are completed over all candidates. The values compared
    are computed by the same expression either way, so the result is bit-identical to the dense
    one.
    """
    m = mu.shape[1]
    if m <= _NEAREST:
        return _near_max(x, a, mu, var, np.broadcast_to(np.arange(m), mu.shape), self_q)
    dist = np.abs(mu - mu0)
    part = np.argpartition(dist, _NEAREST, axis=1)
    near = part[:, :_NEAREST]
    best = _near_max(
        x,
        a,
        np.take_along_axis(mu, near, axis=1),
        np.take_along_axis(var, near, axis=1),
        near,
        self_q,
    )
    r = np.take_along_axis(dist, part[:, _NEAREST : _NEAREST + 1], axis=1)
    far_var = np.take_along_axis(var, part[:, _NEAREST:], axis=1)
    # r shrunk and |x - mu0| grown by 4 ulps: below the exact gap whatever the rounding.
    gap = r * (1.0 - 4.0 * _EPS) - np.abs(x - mu0) * (1.0 + 4.0 * _EPS)
    np.maximum(gap, 0.0, out=gap)
    bound = np.exp(-0.5 * gap * gap / (a + far_var.max(axis=1, keepdims=True)))
    bound /= np.sqrt(a + far_var.min(axis=1, keepdims=True))
    bound *= _BOUND_MARGIN
    rows, queries = np.nonzero(best < bound)
    if rows.size:
        best[rows, queries] = _all_max(
            x[rows, queries], a[rows, queries], mu, var, rows, queries % m, best[rows, queries]
        )
    return best


def _near_max(
    x: FloatArray,
    a: FloatArray,
    mu: FloatArray,
    var: FloatArray,
    ids: NDArray[np.intp],
    self_q: FloatArray,
) -> FloatArray:
    """Return max(self_q, max over each row's given candidates other than j of g), in row blocks.

    ``x``/``a``/``self_q`` are (R, 2M), query q belonging to candidate q mod M (both outcomes of
    the game with each candidate); ``mu``/``var`` are (R, K) candidate beliefs and ``ids`` their
    candidate numbers, which leave out each query's own candidate (g set to 0 there: every g and
    ``self_q`` is positive).
    """
    rows, k = mu.shape
    q_count = x.shape[1]
    m = q_count // 2
    best = np.empty_like(x)
    step = max(1, _BLOCK_ELEMENTS // (q_count * k))
    buffers = np.empty((2, k * min(step, rows) * q_count))
    mu_t = np.ascontiguousarray(mu.T)
    var_t = np.ascontiguousarray(var.T)
    slot = np.arange(k)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        dense = _dense_block(
            x[start:stop], a[start:stop], mu_t[:, start:stop], var_t[:, start:stop], buffers
        )
        own = ids[start:stop]
        block_rows = np.arange(stop - start)[:, None]
        dense[slot, block_rows, own] = 0.0  # the queries of slot's candidate, each outcome
        dense[slot, block_rows, own + m] = 0.0
        out = best[start:stop]
        np.maximum.reduce(dense, axis=0, out=out)
        np.maximum(out, self_q[start:stop], out=out)
    return best


def _all_max(
    x: FloatArray,
    a: FloatArray,
    mu: FloatArray,
    var: FloatArray,
    rows: NDArray[np.intp],
    own: NDArray[np.intp],
    best: FloatArray,
) -> FloatArray:
    """Return max(best, max over all candidates k != own of g) for single queries, in blocks.

    ``x``/``a``/``best``/``rows``/``own`` are (P,): query p is of row ``rows[p]`` and belongs to
    candidate ``own[p]``; ``mu``/``var`` are the (R, M) candidate beliefs.
    """
    m = mu.shape[1]
    count = x.shape[0]
    out = np.empty_like(x)
    step = max(1, _BLOCK_ELEMENTS // m)
    buffers = np.empty((2, m * min(step, count)))
    mu_t = np.ascontiguousarray(mu.T)
    var_t = np.ascontiguousarray(var.T)
    for start in range(0, count, step):
        stop = min(count, start + step)
        block = rows[start:stop]
        dense = _dense_block(
            x[start:stop, None], a[start:stop, None], mu_t[:, block], var_t[:, block], buffers
        )
        dense[own[start:stop], np.arange(stop - start), 0] = 0.0
        np.maximum.reduce(dense[:, :, 0], axis=0, out=out[start:stop])
    return np.maximum(out, best, out=out)


def _dense_block(
    x: FloatArray, a: FloatArray, mu: FloatArray, b: FloatArray, buffers: FloatArray
) -> FloatArray:
    """Return the (K, R, Q) array exp(-(x - mu_k)^2 / (2 c2)) / sqrt(c2) of one block.

    ``x``/``a`` are (R, Q), ``mu``/``b`` (K, R); ``buffers`` holds at least two arrays of that many
    elements, which the result and its temporary are made in.
    """
    shape = (mu.shape[0], *x.shape)
    size = math.prod(shape)
    d = buffers[0, :size].reshape(shape)
    r = buffers[1, :size].reshape(shape)
    np.subtract(x[None, :, :], mu[:, :, None], out=d)
    np.add(a[None, :, :], b[:, :, None], out=r)
    np.divide(1.0, r, out=r)
    d *= d
    d *= r
    d *= -0.5
    np.exp(d, out=d)
    np.sqrt(r, out=r)
    d *= r
    return d


@POLICIES.register
@dataclass(frozen=True)
class KnowledgeGradient:
    """Knowledge gradient: the draw chance plus the value of what the game teaches the rater.

    Attributes:
        rule: ``"discounted"`` (eq. 13, W = gamma / (1 - gamma)) or ``"finite_horizon"``
            (eq. 12, W = N - n with N = ``horizon`` games in total and n already played).
        gamma: the discount factor of the discounted rule, in (0, 1); the paper uses 0.99.
        horizon: N, the total number of games, for the finite-horizon rule (>= 0).
    """

    name: ClassVar[str] = "knowledge_gradient"
    needs_variance: ClassVar[bool] = True

    rule: Literal["discounted", "finite_horizon"] = "discounted"
    gamma: float = 0.99
    horizon: int | None = None

    def __post_init__(self) -> None:
        if self.rule not in ("discounted", "finite_horizon"):
            raise ValueError(f"rule must be 'discounted' or 'finite_horizon', got {self.rule!r}")
        if not (isinstance(self.gamma, int | float) and 0.0 < self.gamma < 1.0):
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma!r}")
        if self.rule == "finite_horizon":
            if self.horizon is None:
                raise ValueError("the finite_horizon rule needs horizon (N, the games in total)")
            if not isinstance(self.horizon, int) or isinstance(self.horizon, bool):
                raise ValueError(f"horizon must be a whole number, got {self.horizon!r}")
        if self.horizon is not None and self.horizon < 0:
            raise ValueError(f"horizon must be >= 0, got {self.horizon!r}")

    def weight(self, games_played: int | IntArray) -> float | FloatArray:
        """Return W, the weight of the look-ahead term after ``games_played`` games.

        Elementwise for an array of counts (finite horizon: W = max(N - n, 0) per count).
        """
        if self.rule == "discounted":
            return self.gamma / (1.0 - self.gamma)
        assert self.horizon is not None
        return np.maximum(self.horizon - np.asarray(games_played, dtype=np.float64), 0.0)

    def score(self, decision: Decision) -> FloatArray:
        """Return q_0j + W * F_j for every candidate j (W per focal player, shape ``S``)."""
        q_now, f = kg_lookahead(decision)
        weight = np.asarray(self.weight(decision.games_played))
        return q_now + weight[..., None] * f
