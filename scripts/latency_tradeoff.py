"""What a latency limit buys and costs: a scenario run under several limits on the same seeds.

Usage::

    python scripts/latency_tradeoff.py [SCENARIO] [--replications 10] [--jobs 2]
        [--limit "strict 60 ms=[[0, 60]]" --limit "loose 150 ms=[[0, 150]]" ...]

Each ``--limit`` is ``label=schedule``, the schedule a ``matchmaker.max_latency_ms`` value (YAML);
the first is the reference. Every variant runs the scenario (default: the bundled
``global_5v5``) on the same replication seeds, so the differences are paired, and the script
prints, per metric, each variant's mean and its paired difference from the reference with a 95%
interval (``lobbysim.experiments.replications.paired_differences``), and where a difference is
not significant, the smallest difference the run could have detected.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scenario_variants import print_differences, run_variants  # noqa: E402

from lobbysim.scenario.inputs import as_scenario  # noqa: E402
from lobbysim.yaml_input import load_yaml  # noqa: E402

DEFAULT_LIMITS = (
    "strict: 60 ms=[[0, 60]]",
    "relaxing: 60 to 150 ms=[[0, 60], [1.5, 100], [3, 150]]",
    "loose: 150 ms=[[0, 150]]",
)
METRICS = (
    "queue_time_mean",
    "queue_time_p90",
    "abandonment_rate",
    "latency_ms_mean",
    "latency_ms_p90",
    "cross_region_share",
    "skill_gap_true_mean",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", default="global_5v5")
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", action="append", default=None, help="label=schedule")
    parser.add_argument("--csv", type=Path, default=None, help="also write every metric here")
    args = parser.parse_args()
    base = as_scenario(args.scenario)
    if base.world is None:
        parser.error(f"{args.scenario}: the scenario has no world: section (no latencies)")
    variants = {}
    for item in args.limit or DEFAULT_LIMITS:
        label, _, raw = item.rpartition("=")
        steps = tuple(tuple(float(v) for v in step) for step in load_yaml(raw))
        mm = dataclasses.replace(base.matchmaker, max_latency_ms=steps)
        variants[label] = base.replace(matchmaker=mm)
    metrics = run_variants(variants, args.replications, args.jobs)
    if args.csv is not None:
        metrics.to_csv(args.csv, index=False)
    regional = [c for c in metrics.columns if "@" in c and c.startswith("queue_time_")]
    shown = [m for m in (*METRICS, *sorted(regional)) if m in metrics.columns]
    print_differences(metrics, shown, f"{base.name}, {args.replications} replications, same seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
