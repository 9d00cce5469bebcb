"""Lobby-wide assignment: turning a policy's scores into pairs of waiting players (1v1).

Many players wait at once, so a policy must also assign. Two strategies (docs/model.md, 3.2):

* ``sequential``: waiting players are taken longest-waiting first; each picks its best partner by
  the policy's score among its candidates still unmatched (the paper's "player 0" view in turn).
* ``global``: players are sorted by rating mean and cut into blocks of ``block_size`` neighbours;
  within each block every pair gets a symmetric score (the mean of the two players' scores for each
  other, e.g. for KG ``q_ij + W (F_ij + F_ji) / 2``) and the block is matched exactly: first as many
  admissible pairs as possible, then the highest total score. Matching is exact within a block and
  the cost of a pass is linear in the number of waiting players. The blocks' offset alternates
  between passes so that players on a block's edge are not always cut off from their neighbours.

With **focal players** (``Pool.focal``), only they choose; everybody else is only a candidate.
``sequential`` then skips the non-focal players' turns; ``global`` admits only pairs with at least
one focal player, weighed by that player's score for the other (the mean of both scores when both
are focal).

The exact block solver (:mod:`lobbysim.policies.block_matching`) enumerates every matching of
``block_size`` nodes once as an edge-incidence matrix; a pass then solves all its blocks with one
matrix product. The quality threshold is :mod:`lobbysim.policies.thresholds`' schedule.

A pair is **admissible** when its match quality clears the threshold for the longer wait of the
two (the relaxation schedule of :class:`ThresholdSchedule`) and, with focal players, one of the two
is focal.

Candidates: a player's candidates are the ``candidates`` waiting players nearest to it in rating
mean (all of them if fewer wait), so a pass costs O(n * candidates) score evaluations
(O(n * candidates^2) for KG) rather than O(n^2).

Everything here is SimPy-free and deterministic given the injected tie-break generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from lobbysim.policies.base import Decision, FloatArray, IntArray, OpponentPolicy, choose
from lobbysim.policies.block_matching import (
    NO_PAIR,
    argsort_two,
    decide_block,
    matchings,
)
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.registry import Registry

__all__ = [
    "ASSIGNMENTS",
    "Assignment",
    "GlobalMatching",
    "Pool",
    "QualityFn",
    "Sequential",
    "small_pool_limit",
]


def _read_only(array: IntArray) -> IntArray:
    array.flags.writeable = False
    return array


# a pool of two as a pair, by which of the two is lower rated (GlobalMatching._two)
_PAIRS_OF_TWO = (
    _read_only(np.array([[0, 1]], dtype=np.intp)),
    _read_only(np.array([[1, 0]], dtype=np.intp)),
)
_FAR = 1.0e9  # rating mean given to the padding slots of a partial block


@dataclass
class Pool:
    """The waiting players one pass sees (all arrays of length n, in a fixed order).

    Attributes:
        mu, var: the driving rater's beliefs (``var`` may be zeros for a rater without variances).
        waited: minutes each player has waited.
        beta2: the performance variance the policies are given (the driving rater's; the
            game's own for a policy that sees the truth).
        quality_fn: ``quality_fn(i, j)`` -> match quality in [0, 1] for index arrays i, j
            (``-inf`` for a pair that may not meet: the rematch rule, latency limits, a rule
            set).
        focal: which players may choose (default all); others are only candidates.
        games_played: games each player has played (for finite-horizon KG).
        future_mu, future_var: the beliefs of the players online now, the pool's own players
            first, in pool order (entry i is pool player i), then the others (in running
            games); None: not collected (see :func:`~lobbysim.policies.base.needs_online`).
            An assignment passes them on in every decision, with the pool indices of its
            focal player and candidates as ``future_focal`` and ``future_candidates``.
        future_pool: the candidates a player will have at the next pass, about (the pool's
            size less one, at least 1), passed on as ``Decision.future_pool``.
    """

    mu: FloatArray
    var: FloatArray
    waited: FloatArray
    beta2: float
    quality_fn: QualityFn
    focal: NDArray[np.bool_] | None = None
    games_played: NDArray[np.int64] | None = None
    future_mu: FloatArray | None = None
    future_var: FloatArray | None = None
    future_pool: int | None = None

    @property
    def size(self) -> int:
        """Return the number of waiting players."""
        return int(self.mu.shape[0])


class QualityFn(Protocol):
    """Match quality in [0, 1] of the pairs (i[k], j[k]) of pool indices."""

    def __call__(self, i: IntArray, j: IntArray) -> FloatArray: ...


class Assignment(Protocol):
    """Pairs waiting players; returns an (n_pairs, 2) array of pool indices."""

    name: ClassVar[str]

    def pairs(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
        pass_index: int,
    ) -> IntArray: ...


ASSIGNMENTS: Registry[Assignment] = Registry("assignment", required=("pairs",))


def small_pool_limit(assignment: object) -> int:
    """Return the largest 1v1 pool ``assignment`` declares it decides as the small-pass kernel
    does (0: none).

    An assignment declares it with ``exact_small_pools = True`` and a ``block_size``: a pool of
    2 to ``block_size`` players, without focal players, gets the pairs (and draws the tie-break
    uniforms) that :func:`lobbysim.sim.fast.small_pass.small_pool_pairs` gives for a policy
    that scores by match quality, and the pair of a pool of two whenever it is admissible,
    whatever the policy. :class:`GlobalMatching` declares it.

    Raises:
        ValueError: the flag is not True or False, or ``block_size`` is not a whole number.
    """
    flag = getattr(assignment, "exact_small_pools", False)
    if not isinstance(flag, bool):
        raise ValueError(f"exact_small_pools must be True or False, got {flag!r}")
    if not flag:
        return 0
    size = getattr(assignment, "block_size", None)
    if not isinstance(size, int) or isinstance(size, bool):
        raise ValueError(f"exact_small_pools needs a whole-number block_size, got {size!r}")
    return size


def _neighbour_windows(mu: FloatArray, width: int) -> IntArray:
    """Return, for each player, the indices of the ``width`` others nearest in mean (n, width).

    Uses the sorted order: each player's window is a run of ``width + 1`` consecutive players in
    rating order containing it, centred where possible, minus the player itself.
    """
    n = mu.shape[0]
    width = min(width, n - 1)
    order = np.argsort(mu, kind="stable")
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n)
    start = np.clip(rank - width // 2, 0, n - width - 1)
    run = start[:, None] + np.arange(width + 1)[None, :]  # (n, width + 1) ranks
    members = order[run]
    keep = members != np.arange(n)[:, None]
    return members[keep].reshape(n, width)


@ASSIGNMENTS.register
@dataclass(frozen=True)
class Sequential:
    """Longest-waiting first; each takes its best admissible partner among its candidates."""

    name: ClassVar[str] = "sequential"
    candidates: int = 32

    def __post_init__(self) -> None:
        if not (isinstance(self.candidates, int) and self.candidates >= 1):
            raise ValueError(f"candidates must be a whole number >= 1, got {self.candidates!r}")

    def pairs(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
        pass_index: int,
    ) -> IntArray:
        """Return the pairs chosen in this pass, focal player first."""
        n = pool.size
        if n < 2:
            return np.empty((0, 2), dtype=np.intp)
        windows = _neighbour_windows(pool.mu, self.candidates)
        free = np.ones(n, dtype=bool)
        focal = np.ones(n, dtype=bool) if pool.focal is None else pool.focal
        order = np.argsort(-pool.waited, kind="stable")
        out: list[tuple[int, int]] = []
        for i in order:
            if not (free[i] and focal[i]):
                continue
            cand = windows[i][free[windows[i]]]
            if cand.size == 0:
                continue
            wait = np.maximum(pool.waited[i], pool.waited[cand])
            ok = pool.quality_fn(np.full(cand.size, i), cand) >= threshold.at(wait)
            cand = cand[ok]
            if cand.size == 0:
                continue
            decision = Decision(
                focal_mu=pool.mu[i],
                focal_var=pool.var[i],
                mu=pool.mu[cand],
                var=pool.var[cand],
                beta2=pool.beta2,
                waited=pool.waited[cand],
                games_played=0 if pool.games_played is None else int(pool.games_played[i]),
                **_future(pool, np.intp(i), cand),
            )
            j = int(cand[int(choose(policy.score(decision), rng))])
            free[i] = free[j] = False
            out.append((int(i), j))
        return np.array(out, dtype=np.intp).reshape(-1, 2)


@ASSIGNMENTS.register
@dataclass(frozen=True)
class GlobalMatching:
    """Exact maximum-weight matching within blocks of neighbours in rating order."""

    name: ClassVar[str] = "global"
    #: Pools of 2 to ``block_size`` are decided exactly as :mod:`lobbysim.sim.fast.small_pass`
    #: decides them on floats (:func:`small_pool_limit`); a subclass with its own ``pairs``
    #: loses the declaration unless it sets it again.
    exact_small_pools: ClassVar[bool] = True
    block_size: int = 8

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "pairs" in vars(cls) and "exact_small_pools" not in vars(cls):
            cls.exact_small_pools = False

    def __post_init__(self) -> None:
        if not (isinstance(self.block_size, int) and 2 <= self.block_size <= 10):
            raise ValueError(f"block_size must be a whole number in 2..10, got {self.block_size!r}")

    def pairs(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
        pass_index: int,
    ) -> IntArray:
        """Return the pairs of this pass, solved exactly block by block."""
        n = pool.size
        if n < 2:
            return np.empty((0, 2), dtype=np.intp)
        if n == 2:
            return self._two(pool, policy, threshold, rng)
        if n <= self.block_size:
            return self._one_block(pool, policy, threshold, rng)
        return self._blocks(pool, policy, threshold, rng, pass_index)

    def _blocks(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
        pass_index: int,
    ) -> IntArray:
        """:meth:`pairs` for a pool of two or more: every block solved exactly."""
        n = pool.size
        k = min(self.block_size, n)
        order = np.argsort(pool.mu, kind="stable")
        offset = (k // 2) * (pass_index % 2) if n > k else 0
        # Blocks of k consecutive players in rating order; padding slots hold -1.
        padded = np.full(offset + n + (-(offset + n)) % k, -1, dtype=np.intp)
        padded[offset : offset + n] = order
        blocks = padded.reshape(-1, k)
        blocks = blocks[(blocks >= 0).sum(axis=1) >= 2]
        if blocks.size == 0:
            return np.empty((0, 2), dtype=np.intp)
        scores = self._block_scores(pool, policy, blocks)  # (B, k, k)
        edges, incidence = matchings(k)
        a, b = blocks[:, edges[:, 0]], blocks[:, edges[:, 1]]
        valid = (a >= 0) & (b >= 0)
        ia, ib = np.where(valid, a, 0), np.where(valid, b, 0)
        # Only a focal player chooses: a pair is weighed by its focal player's score for the
        # other, by the mean of both scores when both are focal (always, without focal players).
        focal = np.ones(n, dtype=bool) if pool.focal is None else pool.focal
        focal_a, focal_b = focal[ia], focal[ib]
        score_ab = scores[:, edges[:, 0], edges[:, 1]]
        score_ba = scores[:, edges[:, 1], edges[:, 0]]
        weight = np.where(
            focal_a & focal_b, (score_ab + score_ba) / 2, np.where(focal_a, score_ab, score_ba)
        )
        quality = pool.quality_fn(ia.ravel(), ib.ravel()).reshape(ia.shape)
        wait = np.maximum(pool.waited[ia], pool.waited[ib])
        admissible = valid & (focal_a | focal_b) & (quality >= threshold.at(wait))
        # Lexicographic objective: most admissible pairs first, then the highest total score.
        # Scores are squashed into (0, 1) per block so that one more pair always wins.
        lo = np.where(admissible, weight, np.inf).min(axis=1)
        hi = np.where(admissible, weight, -np.inf).max(axis=1)
        span = hi - lo  # -inf for a block without admissible pairs
        scaled = np.zeros_like(weight)
        np.divide(
            weight - lo[:, None], span[:, None], out=scaled, where=admissible & (span > 0)[:, None]
        )
        scaled = 0.5 * np.clip(scaled, 0.0, 1.0) / (k // 2)
        edge_value = np.where(admissible, 1.0 + scaled, NO_PAIR)
        value = edge_value @ incidence  # (B, matchings)
        value = np.where(value < -1e299, NO_PAIR, value)
        best = choose(value, rng)
        chosen = incidence[:, best].T.astype(bool)  # (B, E)
        block_idx, edge_idx = np.nonzero(chosen)
        return np.stack([a[block_idx, edge_idx], b[block_idx, edge_idx]], axis=1).astype(np.intp)

    def _two(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
    ) -> IntArray:
        """:meth:`pairs` for a pool of two (most passes on every arrival), decision for decision.

        One block holds both, and its two matchings are none and the pair: the pair is chosen
        whenever it is admissible (worth at least 1, against 0), whatever the scores, so only
        admissibility is computed, on floats, and the policy is not asked for scores that
        cannot change the decision (a policy's scores are first asked for at a pass over three
        or more). The uniforms :func:`choose` would draw are drawn.
        """
        rng.random((1, 2))  # choose() over the block's two matchings
        a, b = argsort_two(*pool.mu.tolist())
        if pool.focal is not None and not (pool.focal[a] or pool.focal[b]):
            return np.empty((0, 2), dtype=np.intp)
        pair = _PAIRS_OF_TWO[a]
        (quality,) = pool.quality_fn(pair[:, 0], pair[:, 1]).tolist()
        wait_a, wait_b = pool.waited.tolist()
        if a == 1:
            wait_a, wait_b = wait_b, wait_a
        wait = wait_b if wait_b > wait_a else wait_a  # np.maximum of two non-NaN waits
        if not quality >= threshold.at_one(wait):
            return np.empty((0, 2), dtype=np.intp)
        return pair.copy()

    def _one_block(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
    ) -> IntArray:
        """:meth:`pairs` for a pool of 3 to ``block_size`` players: :meth:`_blocks` for its one
        block (of the whole pool, without padding), the same operations on the same values
        without the bookkeeping of several blocks and padding slots (most passes on every
        arrival that are not of two players)."""
        n = pool.size
        order = np.argsort(pool.mu, kind="stable")
        scores = self._block_scores(pool, policy, order.reshape(1, n))[0]  # (k, k)
        edges, incidence = matchings(n)
        e0, e1 = edges[:, 0], edges[:, 1]
        a, b = order[e0], order[e1]
        quality = pool.quality_fn(a, b)
        if pool.focal is None:
            weight = ((scores[e0, e1] + scores[e1, e0]) / 2).tolist()
            if all(math.isfinite(w) for w in weight):
                waits = (pool.waited[a], pool.waited[b])
                return decide_block(n, weight, quality.tolist(), waits, threshold, rng, a, b)
        score_ab, score_ba = scores[e0, e1], scores[e1, e0]
        admissible = quality >= threshold.at(np.maximum(pool.waited[a], pool.waited[b]))
        if pool.focal is None:
            weight = (score_ab + score_ba) / 2
        else:
            focal_a, focal_b = pool.focal[a], pool.focal[b]
            weight = np.where(
                focal_a & focal_b,
                (score_ab + score_ba) / 2,
                np.where(focal_a, score_ab, score_ba),
            )
            admissible &= focal_a | focal_b
        lo = np.where(admissible, weight, np.inf).min()
        span = np.where(admissible, weight, -np.inf).max() - lo
        scaled = np.zeros_like(weight)
        np.divide(weight - lo, span, out=scaled, where=admissible & (span > 0))
        scaled = 0.5 * np.clip(scaled, 0.0, 1.0) / (n // 2)
        edge_value = np.where(admissible, 1.0 + scaled, NO_PAIR)
        value = edge_value[None, :] @ incidence  # (1, matchings), as _blocks' product
        value = np.where(value < -1e299, NO_PAIR, value)
        chosen = np.flatnonzero(incidence[:, choose(value, rng)[0]])
        return np.stack([a[chosen], b[chosen]], axis=1).astype(np.intp)

    @staticmethod
    def _block_scores(pool: Pool, policy: OpponentPolicy, blocks: IntArray) -> FloatArray:
        """Return score[b, i, j]: block member i's policy score for member j (diagonal unused)."""
        n_blocks, k = blocks.shape
        others, rows = _others(k)
        if blocks.min() >= 0:  # no padding
            safe = blocks
            cand = safe[:, others]  # (B, k, k-1)
            cand_mu = pool.mu[cand]
        else:
            safe = np.where(blocks >= 0, blocks, 0)
            cand = safe[:, others]
            # Padding slots of a partial block sit far away, so no policy (nor KG's look-ahead
            # over the block's candidates) ever counts them.
            cand_mu = np.where(blocks[:, others] >= 0, pool.mu[cand], _FAR)
        decision = Decision(
            focal_mu=pool.mu[safe],
            focal_var=pool.var[safe],
            mu=cand_mu,
            var=pool.var[cand],
            beta2=pool.beta2,
            waited=pool.waited[cand],
            games_played=0 if pool.games_played is None else pool.games_played[safe],
            **_future(pool, blocks, blocks[:, others]),
        )
        raw = policy.score(decision)  # (B, k, k-1)
        scores = np.zeros((n_blocks, k, k))
        scores[:, rows, others.ravel()] = raw.reshape(n_blocks, -1)
        return scores


def _future(pool: Pool, focal: IntArray | np.intp, candidates: IntArray) -> dict[str, Any]:
    """Return the fields of a decision about the players online (none if the pool has none):
    the pool's arrays, and the pool indices of the focal players and candidates (their places
    in the arrays; -1 for padding)."""
    if pool.future_mu is None:
        return {}
    return {
        "future_mu": pool.future_mu,
        "future_var": pool.future_var,
        "future_pool": pool.future_pool,
        "future_focal": focal,
        "future_candidates": candidates,
    }


@cache
def _others(k: int) -> tuple[IntArray, IntArray]:
    """Return, for a block of ``k``, each member's others (k, k-1) and their rows (read-only)."""
    others = np.array([[j for j in range(k) if j != i] for i in range(k)], dtype=np.intp)
    rows = np.repeat(np.arange(k), k - 1)
    others.flags.writeable = rows.flags.writeable = False
    return others, rows
