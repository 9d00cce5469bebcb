"""Print the paired differences of comparisons as one Markdown table, for docs/findings.md's tables.

Each FOLDER is the output of ``lobbysim compare`` (its ``replications.csv``) or of ``lobbysim
sweep`` with one cell (its ``runs/``); every row of the table is one folder and policy: for each
metric, the reference policy's mean and the paired difference
``policy - reference`` over the replications (common random numbers: replication r of both saw
the same seed) with its 95% Student-t interval, marked ``*`` when the interval excludes 0, and
the minimum detectable difference at 80% power
(:func:`lobbysim.stats.intervals.detectable_difference`)
where it does not. ``retained_deciles_1_9`` is derived from ``retained_decile_1..9`` where a run
predates the metric (their mean, the metric's definition). With ``--reference-from``, the
reference policy's replications come from another comparison of the same scenario and seeds
(lobbysim is deterministic: the same scenario, seed and policy give the same run), so that a
policy added later is not run again beside it. With ``--pool`` the median number of
players waiting at the passes after the metrics start is computed from the reference policy's
records of the first replication (``records/<policy>/waits.csv``; a player waiting at a pass is
one who queued at or before it and left the queue at or after it).

    python scripts/paired_table.py outputs/eng-pool3 outputs/eng-pool40 outputs/eng-pool200 \\
        --reference draw_chance --policy engagement --pool \\
        --metrics retained,retained_deciles_1_9,retained_decile_1,retained_decile_10
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from lobbysim.stats.intervals import detectable_difference, interval


def replications(folder: Path) -> pd.DataFrame:
    """Return one row per run: a comparison's ``replications.csv``, or a sweep's saved runs
    (``runs/*.json``: policy, seed and metrics of each)."""
    if (folder / "replications.csv").exists():
        return pd.read_csv(folder / "replications.csv")
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("runs/*.json"))]
    if not runs:
        raise SystemExit(f"{folder}: neither replications.csv nor runs/*.json")
    return pd.DataFrame([{"policy": r["policy"], "seed": r["seed"], **r["metrics"]} for r in runs])


def metric_column(frame: pd.DataFrame, metric: str) -> pd.Series:
    """Return a metric's column, deriving ``retained_deciles_1_9`` from the deciles if needed."""
    if metric in frame:
        return frame[metric]
    if metric == "retained_deciles_1_9":
        return frame[[f"retained_decile_{k}" for k in range(1, 10)]].mean(axis=1)
    raise SystemExit(f"{metric}: not a column of replications.csv")


def median_pool(folder: Path, policy: str) -> float:
    """Return the median number of players waiting at the passes after the metrics start."""
    scenario = yaml.safe_load((folder / "scenario.yaml").read_text(encoding="utf-8"))
    tick = float(scenario["matchmaker"]["tick"])
    start = float(scenario["matchmaker"].get("switch_at") or scenario["warmup"])
    waits = pd.read_csv(folder / "records" / policy / "waits.csv")
    passes = np.arange(math.ceil(start / tick), math.floor(scenario["horizon"] / tick)) * tick
    enter = np.sort(waits["enqueued"].to_numpy())
    leave = np.sort(waits["left_queue"].to_numpy())
    # in the pool at pass t: queued at or before t (a game ending on the tick queues its players
    # at t, in time for the pass) and not gone before t
    present = np.searchsorted(enter, passes, side="right") - np.searchsorted(
        leave, passes, side="left"
    )
    return float(np.median(present))


def same_scenario(a: Path, b: Path) -> bool:
    """Return whether two comparisons ran the same resolved scenario (their policies aside)."""

    def resolved(folder: Path) -> dict:
        path = folder / "scenario.yaml"
        if not path.exists():  # a sweep's folder
            path = folder / "sweep.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data.pop("compare", None)
        data.get("matchmaker", {}).pop("policy", None)  # the comparison's first policy
        return data

    return resolved(a) == resolved(b)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--reference", required=True, help="the policy differences are from")
    parser.add_argument(
        "--policy", required=True, help="policies compared with it (comma-separated, a row each)"
    )
    parser.add_argument("--metrics", required=True, help="comma-separated metric names")
    parser.add_argument("--pool", action="store_true", help="add the median pool at a pass")
    parser.add_argument(
        "--reference-from",
        type=Path,
        help="take the reference policy's replications from this comparison's folder (run on "
        "the same scenario and seeds; checked), when FOLDER ran only the other policy",
    )
    args = parser.parse_args()
    metrics = args.metrics.split(",")
    policies = args.policy.split(",")
    header = ["run", "policy", *(["median pool"] if args.pool else []), "replications"]
    for metric in metrics:
        header += [f"{metric} ({args.reference})", f"policy - {args.reference}"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for folder in args.folders:
        runs = replications(folder)
        source = folder if args.reference_from is None else args.reference_from
        if not same_scenario(folder, source):
            raise SystemExit(f"{folder} and {source} did not run the same scenario")
        ref_runs = replications(source)
        ref = ref_runs[ref_runs["policy"] == args.reference].set_index("seed").sort_index()
        for policy in policies:
            other = runs[runs["policy"] == policy].set_index("seed").sort_index()
            if not ref.index.equals(other.index):
                raise SystemExit(f"{folder}: {policy} was not run on the reference's seeds")
            cells = [folder.name, policy]
            if args.pool:
                records = source / "records" / args.reference
                pool = median_pool(source, args.reference) if records.exists() else math.nan
                cells.append(f"{pool:.0f}")
            cells.append(str(len(ref)))
            for metric in metrics:
                base = metric_column(ref, metric).to_numpy(dtype=float)
                diff = metric_column(other, metric).to_numpy(dtype=float) - base
                mean, sd, n, low, high = interval(diff)
                mark = "*" if low > 0 or high < 0 else ""
                text = f"{mean:+.4f} [{low:+.4f}, {high:+.4f}]{mark}"
                if not mark:
                    text += f" (detectable ±{detectable_difference(sd, n):.4f})"
                cells += [f"{np.mean(base):.4f}", text]
            print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
