"""Benchmark: peak memory of ``compare`` as the replications grow, records streamed.

The comparison: ``engagement_pools`` (a persistent base of 40,000 members visiting daily, the
experience retention model, a pass every 2 minutes) cut to ``--hours`` simulated hours, the
policy switch halfway, three policies (draw_chance, engagement, uniform_random), its records
streamed (``records.stream``) into the run folder, the report written, ``--jobs`` workers. It
runs through :func:`lobbysim.commands.run.run`, as ``lobbysim compare`` does, at each count of
``--replications`` (2 and 10), each in a fresh process.

Target (the compare memory issue): the 10-replication peak within 1.5x of the 2-replication
peak: a comparison keeps per replication only what its summary and report need once the
replication's records are written, so its peak does not grow with the replications.

The figures of each count: the peak of the whole process tree's memory (the command, its
worker processes and their record writers), the sum of their proportional set sizes (``Pss`` of
``/proc/<pid>/smaps_rollup``, so that pages shared by a forked worker and its parent count
once), sampled every ``--every`` seconds; and, exactly (``getrusage``), the peak resident set
of the command's own process, where the replications' results are gathered, and of the
largest worker.

    python benchmarks/bench_compare_memory.py [--size 40000] [--hours 12]
        [--replications 2,10] [--jobs 2]

An earlier checkout runs it with ``PYTHONPATH=<checkout>`` (its processes inherit it). Measured
figures, before and after the change that keeps per replication only the metrics and the
figures' parts (:mod:`lobbysim.experiments.figure_data`): ``benchmarks/results/compare_memory.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POLICIES = ("draw_chance", "engagement", "uniform_random")
TARGET_RATIO = 1.5


def overrides(size: int, hours: float) -> list[str]:
    """The ``--set`` overrides of the benchmark's scenario (``engagement_pools``)."""
    horizon = hours * 60.0
    switch = horizon / 2
    return [
        f"base.size={size}",
        f"base.newcomers_per_day={round(size * 533 / 40000)}",  # the scenario's share
        f"horizon={horizon:g}",
        f"warmup={switch:g}",
        f"matchmaker.switch_at={switch:g}",
        "records.stream=true",
    ]


def child(size: int, hours: float, replications: int, jobs: int) -> None:
    """Run one comparison and print its figures as JSON."""
    from lobbysim.commands.run import run

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "compare"
        start = time.perf_counter()
        run(
            "engagement_pools",
            replications=replications,
            policies=list(POLICIES),
            out=out,
            sets=overrides(size, hours),
            jobs=jobs,
            progress=False,
            report=True,
        )
        elapsed = time.perf_counter() - start
        records = sum(f.stat().st_size for f in (out / "records").rglob("*") if f.is_file())
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "seconds": elapsed,
                "own_mb": own,
                "worker_mb": workers,
                "records_mb": records / 2**20,
            }
        )
    )


def _tree(root: int) -> list[int]:
    """Return ``root`` and every process descending from it."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found


def _memory_kb(pid: int) -> int:
    """Return a process's proportional set size in kB (its resident set if not known)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):  # ended meanwhile
        return 0
    return 0


def measure(
    size: int, hours: float, replications: int, jobs: int, every: float
) -> dict[str, float]:
    """Run one comparison in a fresh process; return its figures with the tree's peak."""
    command = [sys.executable, __file__, "--child", str(size), str(hours), str(replications)]
    process = subprocess.Popen(
        [*command, str(jobs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    while process.poll() is None:
        peak = max(peak, sum(_memory_kb(pid) for pid in _tree(process.pid)))
        time.sleep(every)
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"the comparison of {replications} replications failed:\n{err}")
    figures: dict[str, float] = json.loads(out)
    figures["tree_mb"] = peak / 1024
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40000)
    parser.add_argument("--hours", type=float, default=12.0)
    parser.add_argument("--replications", default="2,10")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--every", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        size, hours, replications, jobs = args.child
        child(int(size), float(hours), int(replications), int(jobs))
        return
    counts = [int(r) for r in args.replications.split(",")]
    print(
        f"compare engagement_pools: base of {args.size:,} members, {args.hours:g} simulated "
        f"hours (switch at {args.hours / 2:g} h), {len(POLICIES)} policies "
        f"({', '.join(POLICIES)}), records streamed, report written, --jobs {args.jobs}"
    )
    peaks: dict[int, float] = {}
    for count in counts:
        r = measure(args.size, args.hours, count, args.jobs, args.every)
        peaks[count] = r["tree_mb"]
        print(
            f"{count:>3} replications: peak {r['tree_mb']:7.1f} MB (process tree, PSS); "
            f"command's process {r['own_mb']:7.1f} MB, largest worker {r['worker_mb']:7.1f} MB "
            f"(peak RSS); {r['records_mb']:6.1f} MB of records streamed; {r['seconds']:6.1f} s"
        )
    low, high = min(counts), max(counts)
    ratio = peaks[high] / peaks[low]
    verdict = "within" if ratio <= TARGET_RATIO else "ABOVE"
    print(
        f"peak at {high} replications / peak at {low}: {ratio:.2f}x ({verdict} the target "
        f"of {TARGET_RATIO:g}x)"
    )


if __name__ == "__main__":
    main()
