"""Benchmark: a 64-run sweep on the local executor (1 and 2 workers) and on a 2-worker LocalCluster.

The sweep: ``scenarios/one_visit.yaml`` shortened to ``--horizon`` minutes, 2 ticks x 2 arrival
rates (4 cells) x 2 policies x 8 replications = 64 runs. Every setting runs ``--repeats`` times
into a fresh folder (nothing to resume), interleaved so that drifts in the machine's speed hit
every setting alike; the medians and their ratios are reported. The LocalCluster's start-up and
shut-down are inside its time, as a user would see them.

Targets (issue 6): the Dask run within 1.25x of the local one with the same 2 workers, and the
serial-to-parallel speed-up (local, 1 worker / 2 workers) near 2x on this 2-core machine.

    python benchmarks/bench_sweep.py [--repeats 3] [--horizon 480]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from lobbysim.commands.sweep import build_sweep, run_sweep

SETTINGS = (("local", 1), ("local", 2), ("dask-local", 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/one_visit.yaml")
    parser.add_argument("--horizon", type=float, default=480.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sweep = build_sweep(
        args.scenario,
        grid=["matchmaker.tick=0.25,1", "arrivals.rate=2,4"],
        policies=["point_estimate", "draw_chance"],
        replications=8,
        sets=[f"horizon={args.horizon}", "warmup=30"],
    )
    print(
        f"sweep: {len(sweep.cells)} cells x {len(sweep.policies)} policies x "
        f"{sweep.replications} replications = {len(sweep.runs)} runs of {args.horizon:g} minutes"
    )
    times: dict[tuple[str, int], list[float]] = {s: [] for s in SETTINGS}
    with tempfile.TemporaryDirectory() as folder:
        for k in range(args.repeats):
            for executor, jobs in SETTINGS:
                out = Path(folder) / f"{executor}-{jobs}-{k}"
                start = time.perf_counter()
                outcome = run_sweep(sweep, out, executor=executor, jobs=jobs, write_report=False)
                times[(executor, jobs)].append(time.perf_counter() - start)
                assert outcome.ran == len(sweep.runs) and outcome.failed == 0
        results = {
            s: (Path(folder) / f"{s[0]}-{s[1]}-0" / "results.csv").read_bytes() for s in SETTINGS
        }
    assert len(set(results.values())) == 1, "the executors gave different results"
    medians = {s: statistics.median(t) for s, t in times.items()}
    for (executor, jobs), median in medians.items():
        runs = ", ".join(f"{t:.1f}" for t in times[(executor, jobs)])
        print(f"{executor:>10}, {jobs} worker(s): median {median:.1f} s ({runs})")
    speedup = medians[("local", 1)] / medians[("local", 2)]
    overhead = medians[("dask-local", 2)] / medians[("local", 2)]
    print("results.csv identical on all three: yes")
    print(f"serial-to-parallel speed-up (local 1 / local 2): {speedup:.2f}x (target near 2x)")
    print(
        f"dask-local 2 / local 2: {overhead:.2f}x (target <= 1.25: "
        f"{'MET' if overhead <= 1.25 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
