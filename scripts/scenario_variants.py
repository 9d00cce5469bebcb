"""Variants of a scenario on the same seeds: paired differences from the first, per metric.

Usage::

    python scripts/scenario_variants.py SCENARIO --variant "solo=" \
        --variant "parties=parties.sizes=[[1, 0.6], [2, 0.3], [4, 0.1]]" [--replications 10]
        [--jobs 2] [--metrics queue_time_mean,party_queue_time_mean] [--save runs.csv]

Each ``--variant`` is ``label=overrides``: ``key.path=value`` overrides (values read as YAML, as
``lobbysim run --set`` reads them) separated by ``;``, or nothing for the scenario as it is. The
first variant is the reference. Every variant runs on the same replication seeds, so the
differences are paired; the script prints each variant's mean and its paired difference from the
reference with a 95% interval, and where a difference is not significant, the smallest
difference the run could have detected.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from lobbysim.experiments.replications import paired_differences, run_experiment  # noqa: E402
from lobbysim.scenario import Scenario  # noqa: E402
from lobbysim.scenario.files import read_scenario_data  # noqa: E402
from lobbysim.scenario.parse import apply_overrides  # noqa: E402


def run_variants(variants: dict[str, Scenario], replications: int, jobs: int) -> pd.DataFrame:
    """Run each variant (by label) on the same replication seeds; return every run's metrics,
    the label in the ``policy`` column (as :func:`paired_differences` reads it)."""
    frames = []
    for label, variant in variants.items():
        result = run_experiment(variant, replications=replications, jobs=jobs)
        metrics = result.metrics.copy()
        metrics["policy"] = label
        frames.append(metrics)
        print(f"ran {label}: {replications} replications", flush=True)
    return pd.concat(frames, ignore_index=True)


def print_differences(metrics: pd.DataFrame, shown: list[str], title: str) -> None:
    """Print per metric each variant's mean and its paired difference from the first variant,
    with a 95% interval (and the detectable difference where it is not significant)."""
    labels = list(dict.fromkeys(metrics.policy))
    differences = paired_differences(metrics, labels[0]).set_index(["policy", "metric"])
    print(f"\n{title}; reference {labels[0]}")
    for metric in shown:
        means = metrics.groupby("policy", sort=False)[metric].mean()
        line = f"{metric:28} " + "  ".join(f"{means[label]:9.4g}" for label in labels)
        for label in labels[1:]:
            row = differences.loc[(label, metric)]
            line += f"  | {label}: {row['mean']:+.4g} [{row['ci_low']:+.4g}, {row['ci_high']:+.4g}]"
            if not bool(row["significant"]):
                line += f" (n.s.; detectable {row['detectable']:.3g})"
        print(line)
    print("columns: " + ", ".join(labels))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--variant", action="append", required=True, help="label=overrides")
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--metrics", default=None, help="comma-separated (default: every one)")
    parser.add_argument(
        "--save", type=Path, default=None, help="also write every replication's metrics (CSV)"
    )
    args = parser.parse_args()
    variants = {}
    for item in args.variant:
        label, _, overrides = item.partition("=")
        data = read_scenario_data(args.scenario)
        sets = [o.strip() for o in overrides.split(";") if o.strip()]
        apply_overrides(data, sets, "--variant")
        variants[label] = Scenario.from_dict(data)
    metrics = run_variants(variants, args.replications, args.jobs)
    wanted = args.metrics.split(",") if args.metrics else None
    ids = {"policy", "replication", "seed"}
    shown = [m for m in (wanted or [c for c in metrics.columns if c not in ids])]
    shown = [m for m in shown if m in metrics.columns]
    title = f"{args.scenario}, {args.replications} replications, same seeds"
    print_differences(metrics, shown, title)
    if args.save is not None:
        metrics.to_csv(args.save, index=False)  # the variant's label in the policy column
        print(f"wrote {args.save}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
