"""A knowledge gradient made for a lobby: the look-ahead runs over the players online.

The paper's KG (:mod:`lobbysim.policies.knowledge_gradient`) values the game with candidate j by
the best draw density the focal player could get next *among the current candidates*. In a lobby
the next opponent comes from a later pool, drawn from the players online now. So here

    F_j = P(0 beats j) E[max_{k in K} q(0 after beating j, k)]
          + P(j beats 0) E[max_{k in K} q(0 after losing to j, k)]

where K is a uniformly random subset of m of the players online (:attr:`Decision.future_mu`,
``future_var``), the focal player and j left out: j because the rematch rule usually bars the
pair at the next pass, and it keeps the set the same for both outcomes. q is the draw density
of eq. (5) between the focal player's updated belief and k's current one, m the candidates the
player will have at the next pass (``next_pool``, by default the decision's ``future_pool``: the
lobby's pass's pool size less one). The expectation is exact, from order statistics: with the
N values sorted ascending, v_(1) <= ... <= v_(N),

    E[max of a random m-subset] = sum_r v_(r) C(r - 1, m - 1) / C(N, m)

(the max is v_(r) when the subset holds v_(r) and m - 1 of the r - 1 below it), and the max when
m >= N. The score is q_0j + W F_j with W as for the paper's KG (``rule``, ``gamma``,
``horizon``). The focal player's updated beliefs are :func:`game_outcomes`' (the KG's own
update arithmetic). Without the players online in the decision (the paper engine, or a lobby
that does not collect them) the policy is the paper's KG over the decision's candidates, score
for score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from lobbysim.policies.base import POLICIES, Decision, FloatArray, IntArray
from lobbysim.policies.knowledge_gradient import KnowledgeGradient, game_outcomes

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Elements (rows x queries x players online) per block of the look-ahead: 256 kB of float64,
# so that the block and its temporary stay in the CPU's L2 cache.
_BLOCK_ELEMENTS = 1 << 15
_LEFT_OUT = -1.0  # the value of a player left out: below every density, so sorted first


@lru_cache(maxsize=256)
def subset_max_weights(n: int, m: int) -> FloatArray:
    """Return w, length ``n``: E[max of a uniformly random m-subset] = sum_r w[r] v_(r+1) for
    ``n`` values sorted ascending (read-only; a cache holds it).

    w[r - 1] = C(r - 1, m - 1) / C(n, m) for r = m..n, 0 below; m is taken as ``min(m, n)``
    (m >= n: the max, w = (0, ..., 0, 1)). From the top down by the ratio of neighbours,
    C(r - 2, m - 1) / C(r - 1, m - 1) = (r - m) / (r - 1), each in [0, 1), from
    w[n - 1] = m / n: a product of at most n factors, so the relative error stays within about
    n ulps and no factorial overflows.
    """
    if n < 0 or m < 1:
        raise ValueError(f"need n >= 0 and m >= 1, got n={n}, m={m}")
    w = np.zeros(n)
    if n == 0:
        w.flags.writeable = False
        return w
    m = min(m, n)
    r = np.arange(n, m, -1, dtype=np.float64)  # r = n, n-1, ..., m+1
    steps = np.empty(n - m + 1)
    steps[0] = m / n
    steps[1:] = (r - m) / (r - 1.0)
    w[m - 1 :] = np.cumprod(steps)[::-1]
    w.flags.writeable = False
    return w


def expected_subset_max(values: FloatArray, m: int) -> FloatArray:
    """Return E[max of a uniformly random m-subset of ``values``] along the last axis (exact:
    :func:`subset_max_weights` of the sorted values; the max if m >= their number; 0 for none).
    """
    values = np.sort(np.asarray(values, dtype=np.float64), axis=-1)
    return values @ subset_max_weights(values.shape[-1], m)


def lobby_lookahead(decision: Decision, m: int) -> tuple[FloatArray, FloatArray]:
    """Return ``(q_0j, F_j)`` for every candidate j, shape ``S + (M,)``, F_j over the players
    online (the module docstring): the expected best of ``m`` of them, the focal player (at
    ``future_focal``) and j (at ``future_candidates``) left out.

    The decision must hold ``future_mu``; ``future_var`` None means zero variances, and a None
    index array leaves out nobody.
    """
    d = decision
    assert d.future_mu is not None
    f_mu = np.asarray(d.future_mu, dtype=np.float64).reshape(-1)
    n = f_mu.size
    f_var = (
        np.zeros(n)
        if d.future_var is None
        else np.broadcast_to(np.asarray(d.future_var, dtype=np.float64), (n,))
    )
    g = game_outcomes(d)
    rows, k = g.mu.shape
    focal = _places(d.future_focal, d.mu.shape[:-1], n).reshape(rows)
    cand = _places(d.future_candidates, d.mu.shape, n).reshape(rows, k)
    cand = np.where(cand == focal[:, None], -1, cand)  # a player is left out once
    # Left out per (row, query): the focal player and the query's candidate (both outcomes).
    left_out = (focal >= 0)[:, None].astype(np.intp) + np.tile(cand >= 0, 2)
    weights = np.stack(
        [
            np.concatenate([np.zeros(out), subset_max_weights(max(n - out, 0), m)])
            if n >= out
            else np.zeros(n)
            for out in range(3)
        ],
        axis=1,
    )  # (n, 3): the weights of the sorted values with 0, 1 or 2 players left out
    queries = 2 * k
    best = np.empty((rows, queries))
    step = max(1, _BLOCK_ELEMENTS // max(1, queries * n))
    query_cand = np.tile(np.arange(k), 2)
    buffers = np.empty((2, min(step, rows) * queries * n))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        # values (r, 2M, N): exp(-(x - mu_k)^2 / (2 c2)) / sqrt(c2), c2 = a + var_k, in place
        shape = (stop - start, queries, n)
        size = math.prod(shape)
        values = np.subtract(g.x[start:stop, :, None], f_mu, out=buffers[0, :size].reshape(shape))
        c2 = np.add(g.a[start:stop, :, None], f_var, out=buffers[1, :size].reshape(shape))
        values *= values
        values /= c2
        values *= -0.5
        np.exp(values, out=values)
        np.sqrt(c2, out=c2)
        values /= c2
        block = np.arange(stop - start)
        here = focal[start:stop]
        has = here >= 0
        values[block[has], :, here[has]] = _LEFT_OUT
        own = cand[start:stop][:, query_cand]  # (r, 2M): each query's candidate's place
        r_idx, q_idx = np.nonzero(own >= 0)
        values[r_idx, q_idx, own[r_idx, q_idx]] = _LEFT_OUT
        values.sort(axis=-1)
        by_count = values @ weights  # (r, 2M, 3): with 0, 1 or 2 left out
        chosen = np.take_along_axis(by_count, left_out[start:stop, :, None], axis=-1)
        best[start:stop] = chosen[..., 0]
    best *= _INV_SQRT_2PI
    f = g.p_win * best[:, :k] + (1.0 - g.p_win) * best[:, k:]
    return g.q_now.reshape(d.mu.shape), f.reshape(d.mu.shape)


def _places(index: IntArray | None, shape: tuple[int, ...], n: int) -> IntArray:
    """Return ``index`` broadcast to ``shape`` as places in the N online players, -1 where
    there is none (None: nobody; a place outside 0..N-1 is refused)."""
    if index is None:
        return np.full(shape, -1, dtype=np.intp)
    places = np.broadcast_to(np.asarray(index, dtype=np.intp), shape)
    if places.size and (places.max() >= n or places.min() < -1):
        raise ValueError(f"a place among the {n} players online is out of range (-1..{n - 1})")
    return places


@POLICIES.register
@dataclass(frozen=True)
class LobbyKnowledgeGradient(KnowledgeGradient):
    """Knowledge gradient whose look-ahead is over the players online, not the candidates.

    Attributes:
        rule, gamma, horizon: W, as for ``knowledge_gradient``.
        next_pool: m, the candidates the player will have at the next pass (>= 1); None
            (default): the decision's ``future_pool`` (the lobby: the pass's pool size less
            one), or, if it has none, its number of candidates.
    """

    name: ClassVar[str] = "lobby_knowledge_gradient"
    needs_variance: ClassVar[bool] = True
    #: The lobby's matchmaker gives every decision the beliefs of the players online.
    needs_online: ClassVar[bool] = True

    next_pool: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.next_pool is not None and (
            not isinstance(self.next_pool, int)
            or isinstance(self.next_pool, bool)
            or self.next_pool < 1
        ):
            raise ValueError(f"next_pool must be a whole number >= 1, got {self.next_pool!r}")

    def pool_size(self, decision: Decision) -> int:
        """Return m for ``decision``: ``next_pool``, else its ``future_pool``, else its M."""
        if self.next_pool is not None:
            return self.next_pool
        if decision.future_pool is not None:
            return max(int(decision.future_pool), 1)
        return max(decision.n_candidates, 1)

    def score(self, decision: Decision) -> FloatArray:
        """Return q_0j + W * F_j for every candidate j; the paper's KG without players online."""
        if decision.future_mu is None:
            return super().score(decision)
        q_now, f = lobby_lookahead(decision, self.pool_size(decision))
        weight = np.asarray(self.weight(decision.games_played))
        return q_now + weight[..., None] * f
