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

The exact block solver enumerates every matching of ``block_size`` nodes once (764 for 8 nodes,
9,496 for 10) as an edge-incidence matrix; a pass then solves all its blocks with one matrix
product. The tests check it against ``networkx.max_weight_matching``.

A pair is **admissible** when its match quality clears the threshold for the longer wait of the
two (the relaxation schedule of :class:`ThresholdSchedule`) and, with focal players, one of the two
is focal.

Candidates: a player's candidates are the ``candidates`` waiting players nearest to it in rating
mean (all of them if fewer wait), so a pass costs O(n * candidates) score evaluations
(O(n * candidates^2) for KG) rather than O(n^2).

Everything here is SimPy-free and deterministic given the injected tie-break generator.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from operator import add
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from lobbysim.policies.base import Decision, FloatArray, IntArray, OpponentPolicy, choose
from lobbysim.registry import Registry
from lobbysim.skill.gaussian import match_quality_of_pairs

_NO = -1.0e300  # score of an inadmissible pair


def _read_only(array: IntArray) -> IntArray:
    array.flags.writeable = False
    return array


# a pool of two as a pair, by which of the two is lower rated (GlobalMatching._two)
_PAIRS_OF_TWO = (
    _read_only(np.array([[0, 1]], dtype=np.intp)),
    _read_only(np.array([[1, 0]], dtype=np.intp)),
)
_FAR = 1.0e9  # rating mean given to the padding slots of a partial block


@dataclass(frozen=True)
class ThresholdSchedule:
    """Minimum match quality as a step function of the time waited.

    ``steps`` are ``(wait_minutes, min_quality)`` pairs with increasing waits starting at 0; the
    threshold after waiting w minutes is the ``min_quality`` of the last step with
    ``wait_minutes <= w``. Example: ``((0, 0.8), (1, 0.5), (3, 0.0))``: at first only good matches,
    after a minute fair ones, after three anything.
    """

    steps: tuple[tuple[float, float], ...] = ((0.0, 0.0),)
    _waits: FloatArray = field(init=False, repr=False, compare=False)
    _qualities: FloatArray = field(init=False, repr=False, compare=False)
    _wait_steps: tuple[float, ...] = field(init=False, repr=False, compare=False)
    #: ``(until, quality)``: the first step's quality holds for waits in ``[0, until)`` (the
    #: second step's wait, or inf), where :meth:`at_one` needs no search.
    first_step: tuple[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        steps = tuple((float(w), float(q)) for w, q in self.steps)
        object.__setattr__(self, "steps", steps)
        if not steps:
            raise ValueError("threshold steps must not be empty")
        if steps[0][0] != 0.0:
            raise ValueError(f"the first threshold step must start at wait 0, got {steps[0][0]}")
        waits = [w for w, _ in steps]
        if any(b <= a for a, b in itertools.pairwise(waits)):
            raise ValueError(f"threshold step waits must increase, got {waits}")
        for w, q in steps:
            if not 0.0 <= q <= 1.0:
                raise ValueError(f"threshold min_quality must be in [0, 1], got {q} at wait {w}")
        # the steps as arrays, made once (read-only)
        waits_array = np.array(waits)
        qualities = np.array([q for _, q in steps])
        waits_array.flags.writeable = qualities.flags.writeable = False
        object.__setattr__(self, "_waits", waits_array)
        object.__setattr__(self, "_qualities", qualities)
        object.__setattr__(self, "_wait_steps", tuple(waits))
        until = waits[1] if len(waits) > 1 else math.inf
        object.__setattr__(self, "first_step", (until, steps[0][1]))

    def at(self, waited: FloatArray) -> FloatArray:
        """Return the minimum quality for players who have waited ``waited`` minutes."""
        return self._qualities[np.searchsorted(self._waits, np.asarray(waited), side="right") - 1]

    def at_one(self, waited: float) -> float:
        """:meth:`at` for one wait, on floats (``bisect_right`` is ``searchsorted``'s
        ``side="right"``, NaN included: it sorts after every step)."""
        return self.steps[bisect.bisect_right(self._wait_steps, waited) - 1][1]


@dataclass
class Pool:
    """The waiting players one pass sees (all arrays of length n, in a fixed order).

    Attributes:
        mu, var: the driving rater's beliefs (``var`` may be zeros for a rater without variances).
        waited: minutes each player has waited.
        quality: ``quality(i, j)`` -> match quality in [0, 1] for index arrays i, j.
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


@cache
def _matchings(k: int) -> tuple[IntArray, FloatArray]:
    """Return the edges (E, 2) of K_k and the edge incidence (E, n_matchings) of its matchings."""
    edges = np.array(list(itertools.combinations(range(k), 2)), dtype=np.intp).reshape(-1, 2)
    edge_index = {(int(a), int(b)): e for e, (a, b) in enumerate(edges)}
    found: list[list[int]] = []

    def extend(remaining: tuple[int, ...], chosen: list[int]) -> None:
        if len(remaining) < 2:
            found.append(chosen)
            return
        first, rest = remaining[0], remaining[1:]
        extend(rest, chosen)  # first stays unmatched
        for idx, other in enumerate(rest):
            extend(rest[:idx] + rest[idx + 1 :], [*chosen, edge_index[(first, other)]])

    extend(tuple(range(k)), [])
    incidence = np.zeros((len(edges), len(found)))
    for m, chosen in enumerate(found):
        incidence[chosen, m] = 1.0
    return edges, incidence


@ASSIGNMENTS.register
@dataclass(frozen=True)
class GlobalMatching:
    """Exact maximum-weight matching within blocks of neighbours in rating order."""

    name: ClassVar[str] = "global"
    block_size: int = 8

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
        edges, incidence = _matchings(k)
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
        edge_value = np.where(admissible, 1.0 + scaled, _NO)
        value = edge_value @ incidence  # (B, matchings)
        value = np.where(value < -1e299, _NO, value)
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
        a, b = _argsort_two(*pool.mu.tolist())
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
        edges, incidence = _matchings(n)
        e0, e1 = edges[:, 0], edges[:, 1]
        a, b = order[e0], order[e1]
        quality = pool.quality_fn(a, b)
        if pool.focal is None:
            weight = ((scores[e0, e1] + scores[e1, e0]) / 2).tolist()
            if all(math.isfinite(w) for w in weight):
                waits = (pool.waited[a], pool.waited[b])
                return _decide_block(n, weight, quality.tolist(), waits, threshold, rng, a, b)
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
        edge_value = np.where(admissible, 1.0 + scaled, _NO)
        value = edge_value[None, :] @ incidence  # (1, matchings), as _blocks' product
        value = np.where(value < -1e299, _NO, value)
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


def _decide_block(
    n: int,
    weight: list[float],
    quality: list[float],
    waits: tuple[FloatArray, FloatArray],
    threshold: ThresholdSchedule,
    rng: np.random.Generator,
    a: IntArray,
    b: IntArray,
) -> IntArray:
    """The end of :meth:`GlobalMatching._one_block` without focal players, for finite
    weights, on floats (:func:`_best_matching`), as the array of the chosen pairs."""
    chosen = _best_matching(
        n,
        weight,
        quality,
        waits[0].tolist(),
        waits[1].tolist(),
        threshold,
        lambda k: rng.random(k).tolist(),
    )
    a_list, b_list = a.tolist(), b.tolist()
    pairs = [(a_list[e], b_list[e]) for e in chosen]
    return np.array(pairs, dtype=np.intp).reshape(-1, 2)


UniformDraws = Callable[[int], list[float]]  # the next k uniforms of the tie-break stream


def _best_matching(
    n: int,
    weight: list[float],
    quality: list[float],
    wait_a: Iterable[float],
    wait_b: Iterable[float],
    threshold: ThresholdSchedule,
    uniforms: UniformDraws,
) -> list[int]:
    """Return the edges (of ``_matchings(n)``) of the matching the array code of
    :meth:`GlobalMatching._one_block` chooses without focal players, for finite weights.

    Each step is the array code's, element by element: IEEE arithmetic in the same order, and
    the uniforms of :func:`choose` drawn as there (``uniforms(k)`` gives what
    ``rng.random(k)`` would), so the same matching is chosen and the same uniforms are drawn.
    A matching's value is the product of the edge values by the incidence matrix: up to 5
    players, a matching has at most two edges, and a sum of two values and zeros is the same
    in any order, so it is summed here; from 6, by numpy as there. (Up to 5, a matching with
    an inadmissible edge is left at its sum, below -1e299, not set to the array code's
    ``_NO``: the empty matching's 0.0 beats both, so the choice is the same.)
    """
    at_one = threshold.at_one
    until, first_quality = threshold.first_step  # at_one() there, without the call
    lo, hi = math.inf, -math.inf
    fit: list[float | None] = []  # the weight of each admissible edge, None for the others
    for w, q, wa, wb in zip(weight, quality, wait_a, wait_b, strict=True):
        wait = wb if wb > wa else wa  # np.maximum of two non-NaN waits
        if q >= (first_quality if 0.0 <= wait < until else at_one(wait)):
            fit.append(w)
            lo = w if w < lo else lo  # min() and max() of the admissible weights
            hi = w if w > hi else hi
        else:
            fit.append(None)
    span = hi - lo
    half_share = n // 2
    edge_value = []
    for fit_w in fit:
        if fit_w is None:
            edge_value.append(_NO)
            continue
        scaled = (fit_w - lo) / span if span > 0 else 0.0
        scaled = 0.0 if scaled < 0.0 else scaled  # max(scaled, 0.0)
        edge_value.append(1.0 + 0.5 * (1.0 if scaled > 1.0 else scaled) / half_share)
    if n <= 5:
        edge_value.append(0.0)  # the missing second edge of a matching of fewer than two
        first, second = _edge_pairs(n)
        value = list(
            map(add, map(edge_value.__getitem__, first), map(edge_value.__getitem__, second))
        )
    else:
        _, incidence = _matchings(n)
        value = (np.array(edge_value)[None, :] @ incidence)[0].tolist()
        value = [_NO if v < -1e299 else v for v in value]
    return _matching_edges(n)[_pick(value, uniforms(len(value)))]


def _pick(value: list[float], keys: list[float]) -> int:
    """Return the matching :func:`choose` picks: the best value, ties broken by the largest key
    (``np.argmax`` of the keys among the best: the first of the largest, as ``max()`` keeps)."""
    best = max(value)
    if value.count(best) == 1:  # no NaN: a value is itself, and == another only if equal
        return value.index(best)
    tied = [m for m, v in enumerate(value) if v == best]
    return max(tied, key=keys.__getitem__)


@cache
def _edge_pairs(k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Return each matching of K_k (k <= 5: at most two edges) as two edge indices, the
    matchings' first edges and their second ones, in the order of ``_matchings(k)``, a missing
    edge given as the index one past the last edge."""
    missing = k * (k - 1) // 2
    first, second = [], []
    for edges in _matching_edges(k):
        padded = [*edges, missing, missing]
        first.append(padded[0])
        second.append(padded[1])
    return tuple(first), tuple(second)


def small_pool_pairs(
    mu: list[float],
    var: list[float],
    waited: list[float],
    beta2: float,
    threshold: ThresholdSchedule,
    uniforms: UniformDraws,
) -> list[tuple[int, int, float]] | None:
    """:meth:`GlobalMatching.pairs` of a pool of 2 to ``block_size`` players on floats, without
    focal players, for DrawChance under TrueSkill's match quality; and each pair's quality.

    A pair's quality is :func:`~lobbysim.skill.gaussian.match_quality` of the beliefs
    ``N(mu, var)`` with ``beta2``, as :func:`~lobbysim.skill.gaussian.match_quality_of_pairs`
    computes it (lower-rated side first). It is also the pair's weight: DrawChance scores with
    the same function of the same beliefs, bit for bit symmetric, so the mean of a pair's two
    scores is its quality. (A pool of two needs no weight: its pair is chosen whenever it is
    admissible.) The same decisions as the arrays of :meth:`GlobalMatching._two` and
    :meth:`GlobalMatching._one_block`, the same uniforms drawn (tested in
    tests/policies/test_assignment.py); a pass on every arrival, of a few players, is mostly
    these, and a pool of three is worked out without lists.

    Args:
        mu: the pool's rating means.
        var: the pool's rating variances.
        waited: the pool's waiting times.
        beta2: the performance variance of the quality.
        threshold: the quality threshold by waiting time.
        uniforms: the next ``k`` uniforms of the tie-break stream, as ``rng.random(k)`` would
            draw them (e.g. :meth:`lobbysim.streams.Uniforms.take`).

    Returns:
        ``(a, b, quality)`` per pair, in :meth:`GlobalMatching.pairs`' order; None, having drawn
        nothing, when the arrays must decide (in a pool of three or more: a NaN mean, means of
        both infinities, or a quality that is not finite).
    """
    n = len(mu)
    if n == 2:
        two = pair_of_two(
            mu[0], var[0], mu[1], var[1], waited[0], waited[1], beta2, threshold, uniforms
        )
        if two is None:
            return []
        swapped, q = two
        return [(1, 0, q) if swapped else (0, 1, q)]
    total = sum(mu)  # NaN if a mean is (np.argsort sorts NaN last), or if inf - inf
    if total != total:
        return None
    if n == 3:  # sorted() of three by comparisons: no NaN, so one order is stable
        m0, m1, m2 = mu
        if m1 < m0:
            order = [2, 1, 0] if m2 < m1 else [1, 2, 0] if m2 < m0 else [1, 0, 2]
        else:
            order = [2, 0, 1] if m2 < m0 else [0, 2, 1] if m2 < m1 else [0, 1, 2]
        return _three(mu, var, waited, 2.0 * beta2, order, threshold, uniforms)
    order = sorted(range(n), key=mu.__getitem__)  # np.argsort(kind="stable") without NaN
    e0, e1 = _edge_lists(n)
    a = list(map(order.__getitem__, e0))
    b = list(map(order.__getitem__, e1))
    values = match_quality_of_pairs(mu, var, a, b, beta2)
    if not all(map(math.isfinite, values)):
        return None
    waits = waited.__getitem__  # each side's waits as iterators, not lists
    chosen = _best_matching(n, values, values, map(waits, a), map(waits, b), threshold, uniforms)
    return [(a[e], b[e], values[e]) for e in chosen]


def _three(
    mu: list[float],
    var: list[float],
    waited: list[float],
    two_beta2: float,
    order: list[int],
    threshold: ThresholdSchedule,
    uniforms: UniformDraws,
) -> list[tuple[int, int, float]] | None:
    """:func:`small_pool_pairs` of three players, given their order by mean: the steps of
    :func:`match_quality_of_pairs` and :func:`_best_matching` written out for the three edges
    (i, j), (i, k), (j, k) of K_3 and its four matchings (none, (j, k), (i, j), (i, k)); the
    same IEEE operations, so the same choice and the same draws (tested against the blocks)."""
    exp, sqrt = np.exp, math.sqrt
    i, j, k = order
    mu_i, mu_j, mu_k = mu[i], mu[j], mu[k]
    var_i, var_j, var_k = var[i], var[j], var[k]
    c2 = var_i + var_j + two_beta2
    d = mu_i - mu_j
    q0 = sqrt(two_beta2 / c2) * float(exp(-0.5 * d * d / c2))
    c2 = var_i + var_k + two_beta2
    d = mu_i - mu_k
    q1 = sqrt(two_beta2 / c2) * float(exp(-0.5 * d * d / c2))
    c2 = var_j + var_k + two_beta2
    d = mu_j - mu_k
    q2 = sqrt(two_beta2 / c2) * float(exp(-0.5 * d * d / c2))
    isfinite = math.isfinite
    if not (isfinite(q0) and isfinite(q1) and isfinite(q2)):
        return None
    # each edge's threshold, at_one() of its longer wait (the first step's without the call)
    at_one = threshold.at_one
    until, first = threshold.first_step
    w_i, w_j, w_k = waited[i], waited[j], waited[k]
    w = w_j if w_j > w_i else w_i
    ok0 = q0 >= (first if 0.0 <= w < until else at_one(w))
    w = w_k if w_k > w_i else w_i
    ok1 = q1 >= (first if 0.0 <= w < until else at_one(w))
    w = w_k if w_k > w_j else w_j
    ok2 = q2 >= (first if 0.0 <= w < until else at_one(w))
    keys = uniforms(4)
    if not (ok0 or ok1 or ok2):
        return []  # only the empty matching is admissible
    # min() and max() of the admissible qualities
    lo = hi = q0 if ok0 else q1 if ok1 else q2
    if ok1:
        lo = q1 if q1 < lo else lo
        hi = q1 if q1 > hi else hi
    if ok2:
        lo = q2 if q2 < lo else lo
        hi = q2 if q2 > hi else hi
    span = hi - lo
    v0 = v1 = v2 = _NO
    if ok0:
        scaled = (q0 - lo) / span if span > 0 else 0.0
        v0 = 1.0 + 0.5 * (1.0 if scaled > 1.0 else 0.0 if scaled < 0.0 else scaled)
    if ok1:
        scaled = (q1 - lo) / span if span > 0 else 0.0
        v1 = 1.0 + 0.5 * (1.0 if scaled > 1.0 else 0.0 if scaled < 0.0 else scaled)
    if ok2:
        scaled = (q2 - lo) / span if span > 0 else 0.0
        v2 = 1.0 + 0.5 * (1.0 if scaled > 1.0 else 0.0 if scaled < 0.0 else scaled)
    # _pick of [0.0, v2, v0, v1]: the empty matching's 0.0 loses to any admissible edge
    # (>= 1.0); the best of the three, ties broken by the largest key (the first of equal ones)
    best = v2 if v2 >= v0 else v0
    best = best if best >= v1 else v1
    tie2, tie0, tie1 = v2 == best, v0 == best, v1 == best
    if tie2 + tie0 + tie1 == 1:
        pick = 1 if tie2 else 2 if tie0 else 3
    else:
        tied = [m for m, tie in ((1, tie2), (2, tie0), (3, tie1)) if tie]
        pick = max(tied, key=keys.__getitem__)
    return [((j, k, q2), (i, j, q0), (i, k, q1))[pick - 1]]


def pair_of_two(
    mu_a: float,
    var_a: float,
    mu_b: float,
    var_b: float,
    wait_a: float,
    wait_b: float,
    beta2: float,
    threshold: ThresholdSchedule,
    uniforms: UniformDraws,
) -> tuple[bool, float] | None:
    """:func:`small_pool_pairs` of a pool of two, a and b, given as floats: None when their pair
    is not admissible, else whether it is b, not a, that goes first (``np.argsort`` of the two
    means, stable: b only if lower, or if a's mean is NaN and b's is not) and its quality.

    As :meth:`GlobalMatching._two`: two uniforms drawn (``choose()`` over the block's two
    matchings), and the pair taken whenever its quality clears the threshold for the longer
    wait (a pass on every arrival is most often of two players).
    """
    uniforms(2)
    swapped = mu_b < mu_a or (mu_a != mu_a and mu_b == mu_b)  # _argsort_two(mu_a, mu_b)[0] == 1
    if swapped:
        mu_a, var_a, mu_b, var_b, wait_a, wait_b = mu_b, var_b, mu_a, var_a, wait_b, wait_a
    two_beta2 = 2.0 * beta2
    c2 = var_a + var_b + two_beta2  # match_quality_of_pairs of the pair, on these floats
    d = mu_a - mu_b
    q = math.sqrt(two_beta2 / c2) * float(np.exp(-0.5 * d * d / c2))
    wait = wait_b if wait_b > wait_a else wait_a  # np.maximum: no NaN
    until, first = threshold.first_step  # at_one(wait), without the call where it is the first
    if q >= (first if 0.0 <= wait < until else threshold.at_one(wait)):
        return swapped, q
    return None


def _argsort_two(mu0: float, mu1: float) -> tuple[int, int]:
    """Return ``np.argsort([mu0, mu1], kind="stable")``: the second first only if smaller, or
    if the first is NaN (sorted last) and the second is not."""
    return (1, 0) if mu1 < mu0 or (mu0 != mu0 and mu1 == mu1) else (0, 1)


@cache
def _edge_lists(k: int) -> tuple[list[int], list[int]]:
    """Return the edges of K_k (``_matchings(k)``'s) as two lists of end points."""
    edges, _ = _matchings(k)
    return edges[:, 0].tolist(), edges[:, 1].tolist()


@cache
def _matching_edges(k: int) -> tuple[list[int], ...]:
    """Return the edges of each matching of K_k (the columns of ``_matchings(k)``'s incidence)."""
    _, incidence = _matchings(k)
    return tuple(np.flatnonzero(column).tolist() for column in incidence.T)
