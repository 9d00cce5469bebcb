"""Hash the records and metrics of every bundled scenario at its seed, to show what a change moves.

Usage::

    python scripts/hash_results.py                      # one line per scenario: two hashes
    python scripts/hash_results.py --save before.json   # also keep every metric
    python scripts/hash_results.py --compare before.json  # and show the metrics that moved
    python scripts/hash_results.py --streamed           # hash the streamed CSV files instead

Each scenario in ``scenarios/`` runs one replication with its own seed and policy (the paper's
scenarios: one path; the others: the full horizon unless ``--horizon`` caps it), in memory. The
records hash covers every record frame written as CSV (games, participants, waits, ratings,
players); the metrics hash covers the metrics as JSON. A refactoring must leave both unchanged; a
change that alters results on purpose shows here which scenarios moved, and with ``--compare``,
by how much. With ``--streamed`` each scenario streams its records to CSV files (as ``lobbysim
run`` writes them, a writer process included where one can run) and the records hash covers
those files' bytes, in the order their rows were written; compare it only with a file saved
with ``--streamed``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from lobbysim.experiments.simulation import simulate  # noqa: E402
from lobbysim.scenario import load_scenario  # noqa: E402

KINDS = ("games", "participants", "waits", "ratings", "players")


def legacy_text_form(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with each nullable integer column holding a missing value as floats.

    Before the records had one schema (``lobbysim.records.rows.RECORD_COLUMNS``), such a column
    (a team game's ``winner`` with a drawn game) was float64 and written ``1.0``; now it is
    ``Int64``, written ``1``. Hashing the old text form keeps hashes saved before comparable: the
    values are the same.
    """
    legacy = {
        c: "float64"
        for c in frame.columns
        if isinstance(frame[c].dtype, pd.Int64Dtype) and frame[c].hasnans
    }
    return frame.astype(legacy) if legacy else frame


def run_one(
    path: Path, horizon: float | None, streamed: bool = False
) -> tuple[str, str, dict[str, float]]:
    """Return the records hash, the metrics hash and the metrics of one scenario (with
    ``streamed``, the records hash is of the streamed CSV files)."""
    scenario = load_scenario(path)
    scenario = scenario.replace(
        records=dataclasses.replace(scenario.records, stream=streamed, format="csv")
    )
    if horizon is not None and scenario.horizon > horizon:
        warmup = min(scenario.warmup, horizon / 4)
        mm = scenario.matchmaker
        switch = None if mm.switch_at is None else min(mm.switch_at, warmup)  # an A/B switch
        scenario = scenario.replace(
            horizon=horizon,
            warmup=warmup,
            matchmaker=dataclasses.replace(mm, switch_at=switch),
        )
    records = hashlib.sha256()
    if streamed:
        with tempfile.TemporaryDirectory() as folder:
            result = simulate(scenario, scenario.seed, records_dir=folder)
            for kind in KINDS:
                records.update(kind.encode())
                records.update((Path(folder) / f"{kind}.csv").read_bytes())
    else:
        result = simulate(scenario, scenario.seed)
        for kind in KINDS:
            frame = legacy_text_form(getattr(result, kind))
            records.update(kind.encode())
            records.update(frame.to_csv(index=False).encode())
    metrics = {k: float(v) for k, v in result.metrics.items()}
    text = json.dumps(metrics, sort_keys=True, default=repr)
    return records.hexdigest()[:16], hashlib.sha256(text.encode()).hexdigest()[:16], metrics


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=float, default=None, help="cap every horizon (minutes)")
    parser.add_argument("--save", type=Path, default=None, help="write every metric to this JSON")
    parser.add_argument("--compare", type=Path, default=None, help="a --save file to compare to")
    parser.add_argument(
        "--streamed", action="store_true", help="hash the streamed CSV files' bytes instead"
    )
    parser.add_argument("scenarios", nargs="*", type=Path, help="default: scenarios/*.yaml")
    args = parser.parse_args()
    paths = args.scenarios or sorted((ROOT / "scenarios").glob("*.yaml"))
    before = json.loads(args.compare.read_text()) if args.compare else {}
    saved = {}
    for path in paths:
        records, metrics_hash, metrics = run_one(path, args.horizon, args.streamed)
        saved[path.stem] = {"records": records, "metrics_hash": metrics_hash, "metrics": metrics}
        line = f"{path.stem:18} records {records}  metrics {metrics_hash}"
        old = before.get(path.stem)
        if old is not None:
            same = old["records"] == records and old["metrics_hash"] == metrics_hash
            line += "  unchanged" if same else "  CHANGED"
        print(line, flush=True)
        if old is not None and old["metrics_hash"] != metrics_hash:
            for name in sorted(set(old["metrics"]) | set(metrics)):
                a, b = old["metrics"].get(name, math.nan), metrics.get(name, math.nan)
                if not (a == b or (math.isnan(a) and math.isnan(b))):
                    print(f"    {name:36} {a:12.6g} -> {b:12.6g}  ({b - a:+.4g})")
    if args.save is not None:
        args.save.write_text(json.dumps(saved, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
