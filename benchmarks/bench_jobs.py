"""Benchmark: wall time of ``lobbysim run`` with 8 replications on 1 and on 2 worker processes.

Target (issue 5): ``--jobs 2`` at least 1.6x faster than ``--jobs 1`` on this 2-core machine.
Each setting runs ``--repeats`` times; the medians and their ratio are reported.

    python benchmarks/bench_jobs.py [--scenario scenarios/one_visit.yaml] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from lobbysim.commands.run import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/one_visit.yaml")
    parser.add_argument("--replications", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    medians = {}
    with tempfile.TemporaryDirectory() as folder:
        for jobs in (1, 2):
            times = []
            for k in range(args.repeats):
                start = time.perf_counter()
                run(
                    args.scenario,
                    replications=args.replications,
                    jobs=jobs,
                    out=Path(folder) / f"jobs{jobs}-{k}",
                )
                times.append(time.perf_counter() - start)
            medians[jobs] = statistics.median(times)
            print(
                f"--jobs {jobs}: median {medians[jobs]:.1f} s over {args.repeats} runs "
                f"({', '.join(f'{t:.1f}' for t in times)})"
            )
    speedup = medians[1] / medians[2]
    print(
        f"speed-up of --jobs 2 over --jobs 1: {speedup:.2f}x (target >= 1.6: "
        f"{'MET' if speedup >= 1.6 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
