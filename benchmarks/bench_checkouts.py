"""Benchmark: this checkout against an earlier one on the lobby benchmarks, interleaved.

A refactoring of the engine must leave its speed as it was. This runs the child process of each
lobby benchmark (:mod:`bench_lobby` with passes on the tick and on every arrival,
:mod:`bench_lobby_ffa`, :mod:`bench_player_base`) on both checkouts (``PYTHONPATH`` set to each,
so the same scenario runs on the two versions of lobbysim), alternating which goes first, and
prints the medians of ``--repeats`` runs and their ratio (this / baseline, in games per second):

    python benchmarks/bench_checkouts.py --baseline ../before [--repeats 5] [--only lobby,ffa]

The target of the engine issue: every ratio within 5% of 1 (>= 0.95).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

TARGET = 0.95  # this checkout's games per second at least 95% of the baseline's

#: Each benchmark's child command (from the checkout's benchmarks folder), by name.
BENCHMARKS = {
    "lobby": ("bench_lobby.py", ["--child", "--sizes", "10000", "--minutes", "{minutes}"]),
    "wake_on_arrival": (
        "bench_lobby.py",
        ["--child", "--sizes", "10000", "--minutes", "{minutes}", "--wake-on-arrival"],
    ),
    "ffa": ("bench_lobby_ffa.py", ["--child", "--sizes", "20000", "--minutes", "{minutes}"]),
    "player_base": ("bench_player_base.py", ["--size", "100000", "--child", "{days}"]),
}


def run(root: Path, name: str, minutes: float, days: float) -> float:
    """Run one benchmark's child on the checkout ``root``; return its games per second."""
    script, args = BENCHMARKS[name]
    command = [sys.executable, str(root / "benchmarks" / script)]
    command += [a.format(minutes=minutes, days=days) for a in args]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        command, check=True, capture_output=True, text=True, env=env, cwd=root
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return float(figures["games"]) / float(figures["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the earlier checkout")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each (medians)")
    parser.add_argument("--minutes", type=float, default=30.0, help="timed simulated minutes")
    parser.add_argument("--days", type=float, default=2.0, help="days of the player base")
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="benchmarks, by name")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    roots = {"baseline": args.baseline.resolve(), "this": here}
    names = args.only.split(",")
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"--only: unknown benchmarks {unknown}; choose from {list(BENCHMARKS)}")
    rates: dict[str, dict[str, list[float]]] = {n: {"baseline": [], "this": []} for n in names}
    for repeat in range(args.repeats):
        for name in names:
            order = ("baseline", "this") if repeat % 2 == 0 else ("this", "baseline")
            for which in order:
                rate = run(roots[which], name, args.minutes, args.days)
                rates[name][which].append(rate)
                print(f"repeat {repeat + 1} {name:>15} {which:>8}: {rate:,.0f} games/s", flush=True)
    print(f"medians of {args.repeats} interleaved runs (games/s); target this/baseline >= {TARGET}")
    for name in names:
        old, new = (statistics.median(rates[name][w]) for w in ("baseline", "this"))
        verdict = "MET" if new / old >= TARGET else "MISSED"
        print(f"{name:>15}: baseline {old:,.0f}, this {new:,.0f}; ratio {new / old:.3f}: {verdict}")


if __name__ == "__main__":
    main()
