"""The exact matcher of a block of players: every matching of K_k, and the best one on floats.

The global assignment (:class:`~lobbysim.policies.assignment.GlobalMatching`) cuts the pool into
blocks of neighbours in rating and matches each block exactly: first as many admissible pairs as
possible, then the highest total score. :func:`matchings` enumerates every matching of ``k``
nodes once (764 for 8 nodes, 9,496 for 10) as an edge-incidence matrix, so a pass solves all
its blocks with one matrix product (tests/policies/test_assignment.py checks it against
``networkx.max_weight_matching``). :func:`best_matching` is the same decision for one block on
Python floats, step by step as the arrays take it, with the same tie-break draws; the lobby's
small passes (:mod:`lobbysim.sim.fast.small_pass`) and the one-block pools of the global
assignment use it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from functools import cache
from operator import add

import numpy as np

from lobbysim.policies.base import FloatArray, IntArray
from lobbysim.policies.thresholds import ThresholdSchedule

NO_PAIR = -1.0e300  # the value of an inadmissible pair


@cache
def matchings(k: int) -> tuple[IntArray, FloatArray]:
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


def decide_block(
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
    weights, on floats (:func:`best_matching`), as the array of the chosen pairs."""
    chosen = best_matching(
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


def best_matching(
    n: int,
    weight: list[float],
    quality: list[float],
    wait_a: Iterable[float],
    wait_b: Iterable[float],
    threshold: ThresholdSchedule,
    uniforms: UniformDraws,
) -> list[int]:
    """Return the edges (of ``matchings(n)``) of the matching the array code of
    :meth:`GlobalMatching._one_block` chooses without focal players, for finite weights.

    Each step is the array code's, element by element: IEEE arithmetic in the same order, and
    the uniforms of :func:`choose` drawn as there (``uniforms(k)`` gives what
    ``rng.random(k)`` would), so the same matching is chosen and the same uniforms are drawn.
    A matching's value is the product of the edge values by the incidence matrix: up to 5
    players, a matching has at most two edges, and a sum of two values and zeros is the same
    in any order, so it is summed here; from 6, by numpy as there. (Up to 5, a matching with
    an inadmissible edge is left at its sum, below -1e299, not set to the array code's
    ``NO_PAIR``: the empty matching's 0.0 beats both, so the choice is the same.)
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
            edge_value.append(NO_PAIR)
            continue
        scaled = (fit_w - lo) / span if span > 0 else 0.0
        scaled = 0.0 if scaled < 0.0 else scaled  # max(scaled, 0.0)
        edge_value.append(1.0 + 0.5 * (1.0 if scaled > 1.0 else scaled) / half_share)
    if n <= 5:
        edge_value.append(0.0)  # the missing second edge of a matching of fewer than two
        first, second = edge_pairs(n)
        value = list(
            map(add, map(edge_value.__getitem__, first), map(edge_value.__getitem__, second))
        )
    else:
        _, incidence = matchings(n)
        value = (np.array(edge_value)[None, :] @ incidence)[0].tolist()
        value = [NO_PAIR if v < -1e299 else v for v in value]
    return matching_edges(n)[pick(value, uniforms(len(value)))]


def pick(value: list[float], keys: list[float]) -> int:
    """Return the matching :func:`choose` picks: the best value, ties broken by the largest key
    (``np.argmax`` of the keys among the best: the first of the largest, as ``max()`` keeps)."""
    best = max(value)
    if value.count(best) == 1:  # no NaN: a value is itself, and == another only if equal
        return value.index(best)
    tied = [m for m, v in enumerate(value) if v == best]
    return max(tied, key=keys.__getitem__)


@cache
def edge_pairs(k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Return each matching of K_k (k <= 5: at most two edges) as two edge indices, the
    matchings' first edges and their second ones, in the order of ``matchings(k)``, a missing
    edge given as the index one past the last edge."""
    missing = k * (k - 1) // 2
    first, second = [], []
    for edges in matching_edges(k):
        padded = [*edges, missing, missing]
        first.append(padded[0])
        second.append(padded[1])
    return tuple(first), tuple(second)


def argsort_two(mu0: float, mu1: float) -> tuple[int, int]:
    """Return ``np.argsort([mu0, mu1], kind="stable")``: the second first only if smaller, or
    if the first is NaN (sorted last) and the second is not."""
    return (1, 0) if mu1 < mu0 or (mu0 != mu0 and mu1 == mu1) else (0, 1)


@cache
def edge_lists(k: int) -> tuple[list[int], list[int]]:
    """Return the edges of K_k (``matchings(k)``'s) as two lists of end points."""
    edges, _ = matchings(k)
    return edges[:, 0].tolist(), edges[:, 1].tolist()


@cache
def matching_edges(k: int) -> tuple[list[int], ...]:
    """Return the edges of each matching of K_k (the columns of ``matchings(k)``'s incidence)."""
    _, incidence = matchings(k)
    return tuple(np.flatnonzero(column).tolist() for column in incidence.T)
