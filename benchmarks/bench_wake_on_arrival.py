"""Benchmark: the cost of matchmaking on every arrival against passes on the tick only.

The lobby speed issue asks that ``wake_on_arrival: true`` (a pass whenever a player queues, so
most passes see one to five players) cost at most 1.5x the tick-only lobby per game. Both run as
:mod:`bench_lobby` sets them up (~``--size`` concurrent 1v1 players, DrawChance, global
assignment, both raters, a pass every 0.25 minutes, records streamed as ``simulate()`` streams
them), each in a fresh process, alternating which goes first; the figures are medians of
``--repeats`` runs and the ratio is that of the medians' costs per game.

    python benchmarks/bench_wake_on_arrival.py [--size 10000] [--minutes 60] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

TARGET_RATIO = 1.5  # the lobby speed issue: at most 1.5x the tick-only lobby's cost per game


def run(size: int, minutes: float, wake_on_arrival: bool) -> dict[str, float]:
    """Run bench_lobby's child once and return its figures."""
    command = [sys.executable, str(Path(__file__).resolve().parent / "bench_lobby.py")]
    command += ["--child", "--sizes", str(size), "--minutes", str(minutes)]
    command += ["--wake-on-arrival"] if wake_on_arrival else []
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    figures: dict[str, float] = json.loads(out)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="concurrent players")
    parser.add_argument("--minutes", type=float, default=60.0, help="timed simulated minutes")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (medians)")
    args = parser.parse_args()
    cost: dict[bool, list[float]] = {False: [], True: []}
    for repeat in range(args.repeats):
        for wake in (False, True) if repeat % 2 == 0 else (True, False):
            figures = run(args.size, args.minutes, wake)
            per_game = figures["seconds"] / figures["games"]
            cost[wake].append(per_game)
            label = "every arrival" if wake else "tick only"
            print(
                f"repeat {repeat + 1} {label:>13}: {figures['games']:,.0f} games in "
                f"{figures['seconds']:.2f} s = {1e6 * per_game:.1f} us/game",
                flush=True,
            )
    tick, wake = (statistics.median(cost[w]) for w in (False, True))
    ratio = wake / tick
    verdict = "MET" if ratio <= TARGET_RATIO else "MISSED"
    print(
        f"~{args.size:,} concurrent, {args.minutes:g} timed minutes: tick only "
        f"{1e6 * tick:.1f} us/game, every arrival {1e6 * wake:.1f} us/game; every arrival / "
        f"tick only = {ratio:.2f} (target <= {TARGET_RATIO}): {verdict}"
    )


if __name__ == "__main__":
    main()
