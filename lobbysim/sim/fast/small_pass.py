"""Small 1v1 pools decided on Python floats: the kernel of a pass on every arrival.

Most passes of a lobby that wakes on every arrival see two to five waiting players. Building a
pool's arrays and asking the global assignment for its pairs costs more there than the decision
itself, so :func:`small_pool_pairs` (and :func:`pair_of_two` for a pool of two) decide such a
pool on floats: the same pairs, the same qualities and the same tie-break draws as
:meth:`GlobalMatching.pairs <lobbysim.policies.assignment.GlobalMatching.pairs>`, its general
path and the reference of these kernels (tests/policies/test_assignment.py compares them on
random pools, and tests/sim/test_fast_paths.py compares whole runs with the plan off).

When it applies (:class:`~lobbysim.sim.fast.plan.FastPlan`): a 1v1 pass under an assignment
that declares ``exact_small_pools`` (global matching), a driving rater that declares
``float_beliefs`` (Gaussian beliefs with TrueSkill's quality), a policy that declares
``scores_match_quality`` (DrawChance; for a pool of two, any policy that scores), no focal
players and no rematch rule.
"""

from __future__ import annotations

import math

import numpy as np

from lobbysim.policies.block_matching import (
    NO_PAIR,
    UniformDraws,
    best_matching,
    edge_lists,
)
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.raters.base import FloatBeliefs
from lobbysim.sim.entities import Waiting
from lobbysim.skill.gaussian import match_quality_of_pairs


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
    e0, e1 = edge_lists(n)
    a = list(map(order.__getitem__, e0))
    b = list(map(order.__getitem__, e1))
    values = match_quality_of_pairs(mu, var, a, b, beta2)
    if not all(map(math.isfinite, values)):
        return None
    waits = waited.__getitem__  # each side's waits as iterators, not lists
    chosen = best_matching(n, values, values, map(waits, a), map(waits, b), threshold, uniforms)
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
    :func:`match_quality_of_pairs` and :func:`best_matching` written out for the three edges
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
    v0 = v1 = v2 = NO_PAIR
    if ok0:
        scaled = (q0 - lo) / span if span > 0 else 0.0
        v0 = 1.0 + 0.5 * (1.0 if scaled > 1.0 else 0.0 if scaled < 0.0 else scaled)
    if ok1:
        scaled = (q1 - lo) / span if span > 0 else 0.0
        v1 = 1.0 + 0.5 * (1.0 if scaled > 1.0 else 0.0 if scaled < 0.0 else scaled)
    if ok2:
        scaled = (q2 - lo) / span if span > 0 else 0.0
        v2 = 1.0 + 0.5 * (1.0 if scaled > 1.0 else 0.0 if scaled < 0.0 else scaled)
    # pick of [0.0, v2, v0, v1]: the empty matching's 0.0 loses to any admissible edge
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
    swapped = mu_b < mu_a or (mu_a != mu_a and mu_b == mu_b)  # argsort_two(mu_a, mu_b)[0] == 1
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


def small_pass(
    waiting: list[Waiting],
    now: float,
    beliefs: FloatBeliefs,
    beta2: float,
    threshold: ThresholdSchedule,
    uniforms: UniformDraws,
) -> list[tuple[Waiting, Waiting, float]] | None:
    """Return the games of a small 1v1 pass, ``(side 0, side 1, quality)`` each, decided on
    floats from the driving rater's beliefs, as the pool's arrays and the global assignment
    decide them; None, having drawn nothing, where the arrays must decide.

    Args:
        waiting: the queue, in queue order (2 to the plan's ``small_pool`` players).
        now: the time of the pass.
        beliefs: the driving rater (it declares ``float_beliefs``).
        beta2: its performance variance.
        threshold: the quality threshold by waiting time.
        uniforms: the next ``k`` uniforms of the tie-break stream.
    """
    if len(waiting) == 2:  # small_pool_pairs of two, on the players themselves
        wa, wb = waiting
        mu_a, var_a, mu_b, var_b = beliefs.belief_pair(wa.pid, wb.pid)
        two = pair_of_two(
            mu_a, var_a, mu_b, var_b, now - wa.since, now - wb.since, beta2, threshold, uniforms
        )
        if two is None:
            return []
        swapped, q = two
        return [(wb, wa, q) if swapped else (wa, wb, q)]
    mu, var = beliefs.belief_lists([w.pid for w in waiting])
    pairs = small_pool_pairs(mu, var, [now - w.since for w in waiting], beta2, threshold, uniforms)
    if pairs is None:
        return None
    return [(waiting[a], waiting[b], q) for a, b, q in pairs]
