"""Benchmark: an engagement pass over about 200 waiting players, and what its shortcuts give up.

The ``engagement`` policy pairs a pass's pool for the least total predicted churn
(:mod:`lobbysim.sim.engagement`). This runs the bundled ``engagement_pools`` scenario (a base of
40,000, a pass every 2 minutes) with the engagement policy in force from the end of day 1, and at
up to ``--pools`` passes whose pool holds ``--size`` +- 10% players, taken as the run reaches them
(the players' visits, losing streaks and ratings are the run's own), it measures:

* the pass's pairing, ``engagement_pairs`` as the matchmaker calls it (its candidate pairs, every
  predicted churn the model gives for them and the exact compiled matching), median of
  ``--repeats`` calls;
* the same pairs and weights solved by networkx's pure-Python ``max_weight_matching`` (what the
  policy used before), timed once;
* the predicted churn of the whole pool (the policy's objective: the matched players after their
  game, the rest after another pass in the queue) under the policy's pairs, under pairs chosen
  among the nearest candidates only (``reach: false``), and under the exact optimum over every
  pair of the pool (all n (n - 1) / 2 pairs the rematch rule allows, solved exactly): the
  optimality gap of the candidate windows.

    python benchmarks/bench_engagement.py [--size 200] [--pools 9] [--repeats 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import networkx as nx
import numpy as np

import lobbysim
import lobbysim.sim.matchmaker as matchmaker_module
from lobbysim.sim.engagement import engagement_graph, engagement_pairs, max_weight_matching


def pool_churn(graph: Any, pairs: np.ndarray) -> float:
    """Return the pool's total predicted churn under ``pairs`` (stay.sum() less their weights)."""
    a, b, weight, stay = graph
    value = dict(zip(zip(a.tolist(), b.tolist(), strict=True), weight.tolist(), strict=True))
    return float(stay.sum()) - sum(value[(int(i), int(j))] for i, j in pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=200, help="waiting players in a pass")
    parser.add_argument("--pools", type=int, default=9, help="passes measured")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per pass")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    low, high = 0.9 * args.size, 1.1 * args.size
    rows: list[dict[str, float]] = []

    def measured(*call: Any) -> np.ndarray:
        pairs = engagement_pairs(*call)
        if low <= len(call[1]) <= high and len(rows) < args.pools:
            rows.append(measure(call, pairs))
        return pairs

    def measure(call: tuple[Any, ...], pairs: np.ndarray) -> dict[str, float]:
        waiting, next_pass = call[1], call[8]
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            again = engagement_pairs(*call)
            times.append(time.perf_counter() - start)
        assert again.tolist() == pairs.tolist()
        n = len(waiting)
        graph = engagement_graph(*call)
        a, b, weight, _ = graph
        nx_graph = nx.Graph()
        nx_graph.add_weighted_edges_from(
            zip(a.tolist(), b.tolist(), (weight + 2.0).tolist(), strict=True)
        )
        start = time.perf_counter()
        nx.max_weight_matching(nx_graph, maxcardinality=True)
        nx_time = time.perf_counter() - start
        near_call = (*call[:-1], False)
        near = pool_churn(engagement_graph(*near_call), engagement_pairs(*near_call))
        full = engagement_graph(*call[:7], 2 * n, next_pass, False)  # every pair of the pool
        fa, fb, fw, _ = full
        exact = pool_churn(full, max_weight_matching(n, fa, fb, fw))
        return {
            "n": n,
            "edges": a.size,
            "all_edges": fa.size,
            "time": statistics.median(times),
            "nx_time": nx_time,
            "policy": pool_churn(full, pairs),
            "near": near,
            "exact": exact,
        }

    matchmaker_module.engagement_pairs = measured  # type: ignore[assignment]
    day = 1440.0
    start = time.perf_counter()
    lobbysim.simulate(
        "engagement_pools",
        seed=args.seed,
        progress=False,
        horizon=2 * day,
        warmup=day,
        overrides={"matchmaker.policy": "engagement", "matchmaker.switch_at": day},
    )
    elapsed = time.perf_counter() - start
    if not rows:
        print(f"no pass of {low:.0f} to {high:.0f} waiting players in the run")
        return 1
    print(f"engagement_pools (40,000 members), 2 simulated days in {elapsed:.0f} s")
    print("  n  pairs considered (of all)  pass ms  networkx ms  pool's predicted churn:"
          " policy / nearest only / exact over all pairs")
    for r in rows:
        print(
            f"{r['n']:4.0f}  {r['edges']:6.0f} ({r['all_edges']:6.0f})  {1e3 * r['time']:7.1f}"
            f"  {1e3 * r['nx_time']:11.1f}  {r['policy']:.4f} / {r['near']:.4f} / {r['exact']:.4f}"
        )
    med = statistics.median(r["time"] for r in rows)
    nx_med = statistics.median(r["nx_time"] for r in rows)
    gap = [(r["policy"] - r["exact"]) / r["exact"] for r in rows]
    near_gap = [(r["near"] - r["exact"]) / r["exact"] for r in rows]
    print(
        f"an engagement pass over ~{args.size} waiting players: median {1e3 * med:.1f} ms over "
        f"{len(rows)} passes (networkx's matching alone: {1e3 * nx_med:.0f} ms, "
        f"{nx_med / med:.0f}x the whole pass)"
    )
    print(
        f"optimality gap in the pool's predicted churn against the exact matching over every "
        f"pair: policy (nearest {16} and reach) mean {100 * statistics.mean(gap):+.3f}% "
        f"(max {100 * max(gap):+.3f}%), nearest only mean {100 * statistics.mean(near_gap):+.3f}%"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
