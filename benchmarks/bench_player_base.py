"""Benchmark: a persistent player base of 100,000 members over 30 days, records streamed.

The lobby: a base of ``--size`` members (no guests) who visit ``--per-day`` times a day on
average (Gamma-distributed rates, an evening-heavy time-of-day profile), ~5 games a visit of 10
minutes, newcomers joining at 0.5% of the base a day and members leaving at 0.2% a day;
DrawChance on the Bayesian rater's beliefs with the SPH Elo as a shadow, global assignment,
timed passes every 0.5 minutes, the rematch rule's default. With the defaults a few thousand
members are online at once (more in the evening). Records are streamed to CSV files in a
temporary folder, as :func:`lobbysim.experiments.simulate` does with ``records.stream``.

Each length of run (``--days``, e.g. ``15,30``) runs in a fresh process; the figures are the
games simulated per wall-second (everything from time 0, the final flush included) and the peak
RSS of the process (``ru_maxrss``). Memory must stay flat in the number of days: the peak at the
longest run is compared with that at the shortest.

    python benchmarks/bench_player_base.py [--size 100000] [--per-day 0.5] [--days 15,30]
        [--baseline CHECKOUT [--repeats 2]]

With ``--baseline``, the first length runs on this checkout and on an earlier one, interleaved,
and the speed-up is printed (the lobby speed issue asks 2x over the commit that landed the
player base, 3910552: ``git worktree add /tmp/landed 3910552``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lobbysim.scenario import Scenario

DAY = 1440.0
TARGET_SPEEDUP = 2.0  # the lobby speed issue: 2x the speed when the player-base issue landed
EVENING = [0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8,
           0.9, 0.9, 0.9, 1.0, 1.1, 1.3, 1.6, 2.0, 2.2, 2.0, 1.4, 0.8]  # fmt: skip


def scenario_for(size: int, per_day: float, days: float) -> Scenario:
    """The benchmark's lobby for a base of ``size`` members over ``days`` days."""
    return Scenario.from_dict(
        {
            "name": f"bench-base-{size}",
            "horizon": days * DAY,
            "warmup": 0,
            "arrivals": {"name": "none"},
            "population": {"session_games_mean": 5, "patience_mean": 8},
            "game": {"length": 10},
            "matchmaker": {
                "policy": "draw_chance",
                "tick": 0.5,
                "wake_on_arrival": False,
                "threshold": [[0, 0.55], [1, 0.3], [3, 0.0]],
            },
            "raters": {"driver": "bayesian", "shadows": ["sph_elo"]},
            "records": {"ratings_every": DAY, "stream": True},
            "base": {
                "size": size,
                "visits": {"name": "daily", "per_day": per_day, "profile": EVENING},
                "newcomers_per_day": 0.005 * size,
                "leave_per_day": 0.002,
            },
        }
    )


def child(size: int, per_day: float, days: float) -> None:
    """Run one length once and print its figures as JSON."""
    from lobbysim.records.writer import open_sink
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    scenario = scenario_for(size, per_day, days)
    online: list[int] = []
    with tempfile.TemporaryDirectory() as folder:
        sink = open_sink(Path(folder), "csv")  # as simulate() opens it
        sim = LobbySimulation(scenario, Streams(1), sink=sink)
        start = time.perf_counter()
        sim.start_service()
        sim.start_arrivals()
        with sim.tuned():
            for hour in range(1, int(days * 24) + 1):
                sim.advance(min(hour * 60.0, scenario.horizon))
                online.append(len(sim.present))
            sim.apply_pending()
            sim.records.flush(force=True)
            sink.close()  # every row written
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    base = sim.base
    assert base is not None
    print(
        json.dumps(
            {
                "games": sim.n_games,
                "seconds": elapsed,
                "members": base.members,
                "left": base.left,
                "online_mean": sum(online) / len(online),
                "online_max": max(online),
                "peak_mb": peak,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="members at the start")
    parser.add_argument("--per-day", type=float, default=0.5, help="mean visits per member a day")
    parser.add_argument("--days", default="15,30", help="run lengths in days, comma-separated")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of an earlier lobbysim (e.g. a git worktree): run its own copy of this "
        "benchmark on the first length too, interleaved with this one, and print the speed-up",
    )
    parser.add_argument("--repeats", type=int, default=2, help="runs of each with --baseline")
    parser.add_argument("--child", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.size, args.per_day, args.child)
        return
    if args.baseline is not None:
        compare(
            args.baseline, args.size, args.per_day, float(args.days.split(",")[0]), args.repeats
        )
        return
    print(
        f"base of {args.size:,} members, {args.per_day:g} visits a day each on average, records "
        "streamed to CSV; peak RSS = ru_maxrss of the run's process"
    )
    peaks = {}
    for days in (float(d) for d in args.days.split(",")):
        command = [sys.executable, __file__, "--size", str(args.size)]
        command += ["--per-day", str(args.per_day), "--child", str(days)]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        r = json.loads(done.stdout)
        peaks[days] = r["peak_mb"]
        print(
            f"{days:g} days: {r['games']:,} games in {r['seconds']:.1f} s = "
            f"{r['games'] / r['seconds']:,.0f} games/s; online {r['online_mean']:,.0f} on average "
            f"(max {r['online_max']:,}); {r['members']:,} members ever, {r['left']:,} left; "
            f"peak RSS {r['peak_mb']:.0f} MB"
        )
    shortest, longest = min(peaks), max(peaks)
    if longest > shortest:
        print(
            f"peak RSS at {longest:g} days / at {shortest:g} days: "
            f"{peaks[longest] / peaks[shortest]:.2f} (flat: close to 1)"
        )


def compare(baseline: Path, size: int, per_day: float, days: float, repeats: int) -> None:
    """Run this checkout and ``baseline`` on one length, interleaved; print the speed-up.

    Each run is the benchmark's child process of its own checkout (``PYTHONPATH`` set to it),
    so the same scenario runs on the two versions of lobbysim; the figures are medians of
    ``repeats`` runs each, alternating which goes first.
    """
    rates: dict[str, list[float]] = {"baseline": [], "this": []}
    here = Path(__file__).resolve().parent.parent
    for repeat in range(repeats):
        for which in ("baseline", "this") if repeat % 2 == 0 else ("this", "baseline"):
            root = baseline.resolve() if which == "baseline" else here
            command = [sys.executable, str(root / "benchmarks" / "bench_player_base.py")]
            command += ["--size", str(size), "--per-day", str(per_day), "--child", str(days)]
            env = {**os.environ, "PYTHONPATH": str(root)}
            done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
            r = json.loads(done.stdout)
            rates[which].append(r["games"] / r["seconds"])
            print(
                f"repeat {repeat + 1} {which:>8}: {r['games']:,} games in {r['seconds']:.1f} s = "
                f"{r['games'] / r['seconds']:,.0f} games/s; peak RSS {r['peak_mb']:.0f} MB",
                flush=True,
            )
    old, new = (statistics.median(rates[w]) for w in ("baseline", "this"))
    verdict = "MET" if new / old >= TARGET_SPEEDUP else "MISSED"
    print(
        f"{days:g} days: baseline {old:,.0f} games/s, this checkout {new:,.0f} games/s; "
        f"speed-up {new / old:.2f} (target >= {TARGET_SPEEDUP:g}): {verdict}"
    )


if __name__ == "__main__":
    main()
