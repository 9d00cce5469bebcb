"""Benchmark: the paper's full simulation study (Section 4) on this machine.

10^4 sample paths, N = 500 games, three policies (point estimate, DrawChance, KG with gamma = 0.99)
and the three positions of player 0 (top, bottom, middle), on a process pool.
Targets (issue 3): the whole study in under 5 minutes on 2 cores, with memory under 4 GB.

    python benchmarks/bench_paper_study.py [--paths 10000] [--jobs 2] [--report-dir DIR]

Memory is the peak resident set size of this process plus the largest of its worker processes
(``getrusage``; a worker's peak is reported once it has ended), a conservative sum. With
``--report-dir`` each case's report (CSV, figures, summary.md) is written to DIR/<case>.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from lobbysim.paper import CASES, DEFAULT_POLICIES, PaperStudy, default_jobs, run_study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--seed", type=int, default=2011)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--equal-priors", action="store_true")
    parser.add_argument("--report-dir", type=Path)
    args = parser.parse_args()

    total_start = time.perf_counter()
    for case in args.cases.split(","):
        study = PaperStudy(case=case, equal_priors=args.equal_priors)
        start = time.perf_counter()
        result = run_study(
            study, DEFAULT_POLICIES, paths=args.paths, seed=args.seed, jobs=args.jobs
        )
        elapsed = time.perf_counter() - start
        late = result.windows.query("kind == 'mean' and window == '201-500'")
        draws = ", ".join(f"{r.policy} {r.draw_prob_true:.4f}" for r in late.itertuples())
        print(f"case {case}: {elapsed:.1f} s; true draw probability, games 201-500: {draws}")
        if args.report_dir is not None:
            from lobbysim.reporting.paper import write_report

            name = f"{case}-equal" if args.equal_priors else case
            command = (
                f"lobbysim paper --case {case}{' --equal-priors' if args.equal_priors else ''} "
                f"--paths {args.paths} --seed {args.seed}"
            )
            write_report(result, args.report_dir / name, command=command)
    total = time.perf_counter() - total_start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    memory = own + workers
    print(
        f"study: {args.paths:,} paths x 500 games x {len(DEFAULT_POLICIES)} policies x "
        f"{len(args.cases.split(','))} cases, {args.jobs} workers: {total:.1f} s "
        f"(target < 300 s: {'MET' if total < 300 else 'MISSED'})"
    )
    print(
        f"peak memory: {memory:.2f} GB (this process {own:.2f} GB + largest worker "
        f"{workers:.2f} GB; target < 4 GB: {'MET' if memory < 4 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
