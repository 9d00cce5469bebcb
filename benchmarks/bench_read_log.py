"""Benchmark: reading a match log of 1,000,000 seats from CSV (lobbysim/calibration/read.py).

The calibration issue asks for 1,000,000 seats calibrated in under a minute on one core, so that
reading them takes a few seconds. This writes a synthetic log in the default layout to a
temporary folder: ``--seats`` seats of 1v1 games (two seats a game) between ``--players``
players, with ``match_id``, ``player_id``, ``start``, ``end``,
``team``, ``result`` (wins, losses and a few draws), ``region`` and ``queue_time``; times as
minutes (``--times minutes``, the default) or ISO 8601 timestamps (``--times iso``, parsed to
UTC). Then it times :func:`lobbysim.calibration.read.read_log` on it, ``--repeats`` times, each
in a fresh process (imports not timed), and prints the median with seats per second, the file's
size and the peak memory of a reading process (Python, pandas and numpy included):

    python benchmarks/bench_read_log.py [--seats 1000000] [--times minutes|iso] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lobbysim.calibration.read import read_log

TARGET_SECONDS = 5.0  # a few seconds for 1M seats, of the minute the whole calibration has


def synthetic_log(seats: int, players: int, times: str, seed: int = 1) -> pd.DataFrame:
    """Return a log of ``seats`` seats of 1v1 games (two seats a game) in the default layout."""
    rng = np.random.default_rng(seed)
    games = seats // 2
    start = np.cumsum(rng.exponential(0.05, games))  # minutes; ~20 games start a minute
    end = start + rng.uniform(5.0, 30.0, games)
    a = rng.integers(0, players, games)
    b = (a + rng.integers(1, players, games)) % players  # never a itself
    outcome = rng.choice(np.array(["win", "loss", "draw"]), games, p=[0.48, 0.48, 0.04])
    other = np.where(outcome == "win", "loss", np.where(outcome == "loss", "win", "draw"))
    regions = np.array(["eu", "na", "asia", "sa", "oce"])
    frame = pd.DataFrame(
        {
            "match_id": np.repeat(np.arange(games) + 10_000_000, 2),
            "player_id": np.column_stack((a, b)).ravel(),
            "start": np.repeat(start, 2),
            "end": np.repeat(end, 2),
            "team": np.tile([0, 1], games),
            "result": np.column_stack((outcome, other)).ravel(),
            "region": regions[np.column_stack((a, b)).ravel() % len(regions)],
            "queue_time": rng.exponential(1.5, 2 * games).round(3),
        }
    )
    frame["player_id"] = "p" + frame["player_id"].astype(str)
    if times == "iso":
        origin = pd.Timestamp("2024-01-01T00:00:00Z")
        for column in ("start", "end"):
            stamps = origin + pd.to_timedelta(frame[column], unit="min")
            frame[column] = stamps.dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return frame


def child(path: Path) -> None:
    """Read the log once in this fresh process; print the seconds, sizes and peak memory."""
    began = time.perf_counter()
    log = read_log(path)
    seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    figures = {"seconds": seconds, "seats": len(log.seats), "matches": log.matches}
    print(json.dumps({**figures, "players": log.players, "peak_mib": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=1_000_000, help="seats in the log")
    parser.add_argument("--players", type=int, default=50_000, help="distinct players")
    parser.add_argument("--times", choices=("minutes", "iso"), default="minutes")
    parser.add_argument("--repeats", type=int, default=3, help="reads timed (the median)")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.csv"
        began = time.perf_counter()
        synthetic_log(args.seats, args.players, args.times).to_csv(path, index=False)
        wrote = time.perf_counter() - began
        size = path.stat().st_size
        runs = []
        for _ in range(args.repeats):  # each read in a fresh process: its own peak memory
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(path)],
                check=True,
                capture_output=True,
                text=True,
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    seconds = [run["seconds"] for run in runs]
    median = statistics.median(seconds)
    last = runs[-1]
    print(
        f"log: {last['seats']:,} seats, {last['matches']:,} matches, {last['players']:,} "
        f"players, times as {args.times}; CSV {size / 1e6:.0f} MB written in {wrote:.1f} s"
    )
    print(f"read_log: {', '.join(f'{s:.2f}' for s in seconds)} s; median {median:.2f} s")
    peak = max(run["peak_mib"] for run in runs)
    rate = last["seats"] / median
    print(f"{rate:,.0f} seats/s; peak memory of a reading process {peak:,.0f} MiB")
    verdict = "meets" if median * 1e6 / last["seats"] <= TARGET_SECONDS else "MISSES"
    print(f"{verdict} the target of {TARGET_SECONDS:g} s per 1,000,000 seats")


if __name__ == "__main__":
    main()
