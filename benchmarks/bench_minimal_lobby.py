"""Benchmark: lobbysim's 1v1 lobby against a minimal SimPy lobby, interleaved, in one run.

The lobby speed issue sets lobbysim's games per wall-second against the floor of what SimPy can
do: a minimal lobby with the same arrivals, sessions, game length, patience and tick, a process
per player that waits for a match or its patience (``matched | timeout``) and leaves if the
patience runs out first, no raters, no records and first-come pairing. Its only costs are SimPy's
events and a Python loop per pass, so the ratio says how much lobbysim spends beyond SimPy.

Both run as :mod:`bench_lobby` sets them up (``scenario_for``: ~``--size`` concurrent players,
10-minute games, ~10 games a session, a pass every 0.25 minutes, a warm-up of two sessions that
is not timed); lobbysim with DrawChance, global assignment, the Bayesian rater and the SPH Elo
as a shadow, its records streamed to CSV (``--no-stream``: in memory). Each repeat runs the two
in fresh processes, alternating which goes first; the figures are medians, and the ratio is that
of the medians.

    python benchmarks/bench_minimal_lobby.py [--size 10000] [--minutes 60] [--repeats 3]
        [--no-stream] [--no-writer]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Generator
from pathlib import Path

import numpy as np
import simpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lobby import GAME_MINUTES, SESSION_GAMES

TICK = 0.25
PATIENCE = 5.0  # mean minutes a player waits for a match (bench_lobby's patience_mean)
TARGET_RATIO = 1.3  # the lobby speed issue: lobbysim at least 1.3x the minimal lobby


def minimal(concurrent: int, minutes: float, seed: int = 1) -> dict[str, float]:
    """Run the minimal lobby (a process per player) and return its timed figures."""
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    queue: list[simpy.Event] = []
    games = [0]
    session_minutes = SESSION_GAMES * GAME_MINUTES
    rate = concurrent / session_minutes
    warmup = 2 * session_minutes
    horizon = warmup + minutes

    gone: set[int] = set()  # the queue entries of players who gave up

    def player(n_games: int) -> Generator[simpy.Event, None, None]:
        for _ in range(n_games):
            matched = env.event()
            queue.append(matched)
            yield matched | env.timeout(float(rng.exponential(PATIENCE)))
            if not matched.triggered:  # gave up waiting: leaves the lobby
                gone.add(id(matched))
                return
            yield env.timeout(GAME_MINUTES)

    def arrivals() -> Generator[simpy.Event, None, None]:
        while True:
            yield env.timeout(float(rng.exponential(1.0 / rate)))
            env.process(player(int(rng.geometric(1.0 / SESSION_GAMES))))

    def matchmaker() -> Generator[simpy.Event, None, None]:
        while True:
            yield env.timeout(TICK)
            if gone:
                queue[:] = [e for e in queue if id(e) not in gone]
                gone.clear()
            pairs = len(queue) // 2
            for k in range(pairs):
                queue[2 * k].succeed()
                queue[2 * k + 1].succeed()
            games[0] += pairs
            del queue[: 2 * pairs]

    env.process(arrivals())
    env.process(matchmaker())
    env.run(until=warmup)
    before = games[0]
    start = time.perf_counter()
    env.run(until=horizon)
    elapsed = time.perf_counter() - start
    return {"games": games[0] - before, "seconds": elapsed}


def lobbysim(concurrent: int, minutes: float, stream: bool, writer: bool) -> dict[str, float]:
    """Run lobbysim's lobby as :mod:`bench_lobby` does and return its timed figures."""
    out = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve().parent / "bench_lobby.py"),
            "--child",
            "--sizes",
            str(concurrent),
            "--minutes",
            str(minutes),
            "--stream" if stream else "--no-stream",
            "--writer" if writer else "--no-writer",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    run = json.loads(out)
    return {"games": run["games"], "seconds": run["seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="concurrent players")
    parser.add_argument("--minutes", type=float, default=60.0, help="timed simulated minutes")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (medians)")
    parser.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lobbysim streams its records to CSV files (default) or keeps them in memory",
    )
    parser.add_argument(
        "--writer",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lobbysim's streamed records written by a writer process where available "
        "(default, as simulate() does) or in the simulation's process",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(minimal(args.size, args.minutes)))
        return
    minimal_command = [sys.executable, __file__, "--child", "--size", str(args.size)]
    minimal_command += ["--minutes", str(args.minutes)]
    rates: dict[str, list[float]] = {"minimal": [], "lobbysim": []}
    for repeat in range(args.repeats):
        order = ["minimal", "lobbysim"] if repeat % 2 == 0 else ["lobbysim", "minimal"]
        for which in order:
            if which == "minimal":
                out = subprocess.run(minimal_command, check=True, capture_output=True, text=True)
                run = json.loads(out.stdout)
            else:
                run = lobbysim(args.size, args.minutes, args.stream, args.writer)
            rates[which].append(run["games"] / run["seconds"])
            print(
                f"repeat {repeat + 1} {which:>8}: {run['games']:,} games in "
                f"{run['seconds']:.2f} s = {run['games'] / run['seconds']:,.0f} games/s",
                flush=True,
            )
    medians = {name: statistics.median(values) for name, values in rates.items()}
    records = "streamed" if args.stream else "in memory"
    records += " by a writer process" if args.stream and args.writer else ""
    ratio = medians["lobbysim"] / medians["minimal"]
    verdict = "MET" if ratio >= TARGET_RATIO else "MISSED"
    print(
        f"~{args.size:,} concurrent, {args.minutes:g} timed minutes, records "
        f"{records}: minimal SimPy lobby "
        f"{medians['minimal']:,.0f} games/s, lobbysim {medians['lobbysim']:,.0f} games/s; "
        f"lobbysim / minimal = {ratio:.2f} (target >= {TARGET_RATIO}): {verdict}"
    )


if __name__ == "__main__":
    main()
