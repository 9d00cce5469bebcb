"""Benchmark: raters replayed over a match log (lobbysim.calibration.scores), matches per second.

The log is synthetic, ``--matches`` 1v1 matches (default 100,000) of ``--players`` players
(true skills N(0, 2^2)) in a first-come queue: the two players free earliest meet as soon as the
later of them is free, play 8 to 12 minutes (the higher performance N(skill, 2.5) wins) and are
free again an exponential 2 minutes after it ends, so starts and ends interleave as in a live
lobby. For each rater (its default parameters) the figure is the median of ``--repeats`` replays
over the whole log, as :func:`~lobbysim.calibration.scores.score_log` replays it once per setting;
building the log's arrays, done once per log, is timed apart.

The target (the calibrate issue): 1,000,000 seats in well under a minute per rater per setting;
a 1v1 log of 1,000,000 seats is 500,000 matches, and its time at the measured speed is printed.

    python benchmarks/bench_rater_scores.py [--matches 100000] [--players 5000] [--repeats 3]
        [--full]

``--full`` also times one whole :func:`~lobbysim.calibration.scores.score_log` (every rater's
grid on the first half, the chosen setting over the whole log, the oracle).
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import time

import numpy as np
import pandas as pd

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.replay import LogArrays, Truth, replay
from lobbysim.calibration.scores import score_log
from lobbysim.raters import RATERS

TARGET_SEATS = 1_000_000
TARGET_SECONDS = 60.0


def synthetic_log(matches: int, players: int, seed: int = 7) -> tuple[MatchLog, np.ndarray]:
    """Return a first-come-queue 1v1 log (see the module docstring) and the true skills."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 2.0, players)
    length = rng.uniform(8.0, 12.0, matches)
    rest = rng.exponential(2.0, (matches, 2))
    noise = rng.normal(0.0, np.sqrt(2.5), (matches, 2))
    free = [(float(t), p) for p, t in enumerate(rng.exponential(2.0, players))]
    heapq.heapify(free)
    a = np.empty(matches, np.int64)
    b = np.empty(matches, np.int64)
    start = np.empty(matches)
    for m in range(matches):
        _, pa = heapq.heappop(free)
        t, pb = heapq.heappop(free)
        end = t + length[m]
        a[m], b[m], start[m] = pa, pb, t
        heapq.heappush(free, (end + rest[m, 0], pa))
        heapq.heappush(free, (end + rest[m, 1], pb))
    a_won = skill[a] + noise[:, 0] > skill[b] + noise[:, 1]
    # the heap pops are in time order, so the matches are already in order of start
    codes = np.arange(matches)
    seats = pd.DataFrame(
        {
            "match": np.repeat(codes, 2),
            "player": np.column_stack([a, b]).reshape(-1),
            "start": np.repeat(start, 2),
            "end": np.repeat(start + length, 2),
            "side": np.tile([0, 1], matches),
            "rank": np.column_stack([~a_won, a_won]).astype(np.int64).reshape(-1),
        }
    )
    # player codes in order of first appearance
    first = pd.unique(seats["player"].to_numpy())
    code = np.empty(players, np.int64)
    code[first] = np.arange(first.size)
    seats["player"] = code[seats["player"].to_numpy()]
    log = MatchLog(seats, codes, first, source="synthetic")
    return log, skill[first]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args()

    log, skill = synthetic_log(args.matches, args.players)
    started = time.perf_counter()
    arrays = LogArrays.from_log(log)
    prepared = time.perf_counter() - started
    print(
        f"log: {args.matches:,} 1v1 matches, {len(log.seats):,} seats, "
        f"{args.players:,} players; arrays built in {prepared:.2f} s "
        f"({len(log.seats) / prepared:,.0f} seats/s)"
    )
    target_matches = TARGET_SEATS // 2
    for name in ("bayesian", "sph_elo", "glicko2", "openskill"):
        times = []
        for _ in range(args.repeats):
            try:
                rater = RATERS.create(name)
            except ValueError as exc:
                print(f"{name}: skipped ({exc})")
                break
            started = time.perf_counter()
            replay(rater, arrays)
            times.append(time.perf_counter() - started)
        if not times:
            continue
        median = statistics.median(times)
        rate = args.matches / median
        at_target = target_matches / rate
        verdict = "MET" if at_target < TARGET_SECONDS else "MISSED"
        print(
            f"{name}: median of {len(times)}: {median:.2f} s, {rate:,.0f} matches/s; "
            f"{TARGET_SEATS:,} seats in {at_target:.1f} s (target < {TARGET_SECONDS:.0f} s): "
            f"{verdict}"
        )
    if args.full:
        started = time.perf_counter()
        result = score_log(log, truth=Truth(skill, 2.5))
        seconds = time.perf_counter() - started
        replays = len(result.speed)
        print(f"score_log: {replays} replays (grids and chosen settings) in {seconds:.1f} s")


if __name__ == "__main__":
    main()
