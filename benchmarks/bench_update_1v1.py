"""Benchmark: 1v1 belief updates per second of ``update_1v1`` on arrays of 10^6 matches.

Target (issue 2): at least 5e6 updates/s on one core, i.e. the update is vectorised, not looped.
numpy's elementwise kernels run on one thread, so this measures one core.

    python benchmarks/bench_update_1v1.py [--matches 1000000] [--repeats 9]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from lobbysim.skill.gaussian import update_1v1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    rng = np.random.default_rng(2)
    n = args.matches
    mu_w, mu_l = rng.normal(0.0, 2.0, n), rng.normal(0.0, 2.0, n)
    var_w, var_l = rng.uniform(0.1, 3.0, n), rng.uniform(0.1, 3.0, n)
    mu_l[: n // 100] += 60.0  # 1% heavy upsets exercise the asymptotic branch too

    update_1v1(mu_w, var_w, mu_l, var_l, 2.5)  # warm-up
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        update_1v1(mu_w, var_w, mu_l, var_l, 2.5)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    rate = n / median
    print(f"update_1v1: {n:,} matches, median of {args.repeats}: {median * 1e3:.1f} ms")
    print(
        f"update_1v1: {rate / 1e6:.1f} million updates/s (target >= 5.0): "
        f"{'MET' if rate >= 5e6 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
