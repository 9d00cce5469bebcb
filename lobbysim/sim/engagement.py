"""Engagement pairing: the pairs of a pass that minimise the pool's predicted churn.

A policy with ``pairing = "engagement"`` (:class:`lobbysim.policies.engagement.Engagement`) pairs
waiting players by the retention model's predictions (:class:`lobbysim.sim.retention.Retention`):
:func:`engagement_pairs` weighs each candidate pair by the fall in predicted churn that playing
brings and takes a maximum-cardinality, maximum-weight matching over the candidates
(:func:`candidate_edges`: the nearest in rating plus a few far ones), solved exactly by
rustworkx (:func:`max_weight_matching`; networkx's matching is its reference in the tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lobbysim.sim.entities import Waiting
from lobbysim.sim.retention import Retention


def candidate_edges(mu: np.ndarray, nearest: int, reach: bool) -> tuple[np.ndarray, np.ndarray]:
    """Return the candidate pairs ``(a, b)`` (pool indices, ``a < b``) of an engagement pass.

    With the pool in rating-mean order, each player is paired with the ``nearest // 2`` (at least
    one) players on either side, and with ``reach`` also with players further away on either
    side, at rank distances growing by a quarter each (h, then ``d = floor(1.25 d) + 1``: 11, 14,
    18, 23, 29, 37, ... for h = 8), about three per doubling of the distance. In a large pool the
    least total churn often pairs a player on a losing streak with one far below them (over a
    pool of 200 a quarter of the best pairs are 40 or more ranks apart), which the nearest
    players alone cannot offer; the far pairs cost O(n log n) pairs rather than O(n^2)
    (``benchmarks/bench_engagement.py`` measures what they leave out). The pairs come sorted,
    each once.
    """
    n = mu.size
    order = np.argsort(mu, kind="stable")
    half = max(1, nearest // 2)
    offsets = list(range(1, min(half, n - 1) + 1))
    if reach:
        far = int(half * 1.25) + 1
        while far < n:
            offsets.append(far)
            far = int(far * 1.25) + 1
    if not offsets:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    first = np.concatenate([order[: n - d] for d in offsets])
    second = np.concatenate([order[d:] for d in offsets])
    a, b = np.minimum(first, second), np.maximum(first, second)
    keys = np.lexsort((b, a))
    return a[keys].astype(np.intp), b[keys].astype(np.intp)


_WEIGHT_SCALE = float(2**40)  # a weight in [0, 4] as an integer, resolved to ~1e-12


def max_weight_matching(n: int, a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Return a maximum-cardinality matching of greatest total weight, as sorted pairs.

    The graph has nodes ``0..n-1`` and the edges ``(a[k], b[k])`` of weight ``weight[k]`` in
    [-2, 2]. Solved exactly by Edmonds' blossom algorithm, compiled (rustworkx's
    ``max_weight_matching``, which takes integer weights: each is ``weight + 2`` times 2^40,
    rounded, so weights closer than about 1e-12 tie); with maximum cardinality a constant added
    to every weight does not change the choice. ``tests/sim/test_retention.py`` checks it
    against networkx's pure-Python solver and against brute force.
    """
    import rustworkx as rx  # only engagement pairing needs it

    graph = rx.PyGraph(multigraph=False)
    graph.add_nodes_from(range(n))
    scaled = np.rint((np.asarray(weight, dtype=np.float64) + 2.0) * _WEIGHT_SCALE)
    weights = scaled.astype(np.int64).tolist()
    graph.add_edges_from(list(zip(a.tolist(), b.tolist(), weights, strict=True)))
    matching = rx.max_weight_matching(graph, max_cardinality=True, weight_fn=int)
    out = sorted((min(i, j), max(i, j)) for i, j in matching)
    return np.array(out, dtype=np.intp).reshape(-1, 2)


def engagement_pairs(
    retention: Retention,
    waiting: Sequence[Waiting],
    ids: np.ndarray,
    mu: np.ndarray,
    waited: np.ndarray,
    win_probability: Callable[[np.ndarray, np.ndarray], np.ndarray],
    allowed: Callable[[np.ndarray, np.ndarray], np.ndarray],
    candidates: int,
    next_pass: float,
    reach: bool = True,
) -> np.ndarray:
    """Return the pairs (pool indices) of least total predicted churn over the whole pool.

    Every waiting player counts: a player in a pair with their predicted churn after that game
    (:meth:`Retention.churn_risk`), a player left waiting with their predicted churn after
    another ``next_pass`` minutes in the queue (:meth:`Retention.waiting_risk`). The pool's
    total is the sum over both, so a pair's weight is the fall in predicted churn that playing
    brings (:func:`engagement_graph`), and a maximum-weight matching among those pairing as many
    players as possible minimises the total. Maximum cardinality keeps the policy from holding
    players in the queue: it never leaves two compatible players waiting to lower the risk.
    The matching is exact on the graph of candidate pairs (:func:`max_weight_matching`).
    """
    graph = engagement_graph(
        retention, waiting, ids, mu, waited, win_probability, allowed, candidates, next_pass, reach
    )
    if graph is None:
        return np.empty((0, 2), dtype=np.intp)
    a, b, weight, _ = graph
    return max_weight_matching(len(waiting), a, b, weight)


def engagement_graph(
    retention: Retention,
    waiting: Sequence[Waiting],
    ids: np.ndarray,
    mu: np.ndarray,
    waited: np.ndarray,
    win_probability: Callable[[np.ndarray, np.ndarray], np.ndarray],
    allowed: Callable[[np.ndarray, np.ndarray], np.ndarray],
    candidates: int,
    next_pass: float,
    reach: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Return the candidate pairs of an engagement pass and what playing each is worth.

    ``(a, b, weight, stay)``: the pairs are :func:`candidate_edges` (``candidates`` nearest in
    rating mean, and with ``reach`` a few far ones) less those the rematch rule bars
    (``allowed`` is -inf for them); ``stay[i]`` is player i's predicted churn after another
    pass in the queue, and ``weight`` is ``stay[a] + stay[b] - risk_a - risk_b``, the fall in
    predicted churn if the two play each other. The predicted churn of the pool under a matching
    is ``stay.sum()`` less the weights of its pairs. None: no pair to consider.
    """
    n = len(waiting)
    if n < 2:
        return None
    a, b = candidate_edges(mu, candidates, reach)
    if a.size:
        keep = np.isfinite(allowed(a, b))
        a, b = a[keep], b[keep]
    if a.size == 0:
        return None
    p = np.asarray(win_probability(ids[a], ids[b]), dtype=np.float64)
    gap = np.abs(mu[a] - mu[b])
    # seat k of 2E plays edge k mod E, as a (k < E) or as b
    stay, risk = retention.pool_risks(
        [w.player for w in waiting],
        mu.tolist(),
        waited.tolist(),
        next_pass,
        np.concatenate([a, b]),
        np.concatenate([p, 1.0 - p]),
        np.concatenate([gap, gap]),
    )
    weight = stay[a] + stay[b] - risk[: a.size] - risk[a.size :]
    return a, b, weight, stay
