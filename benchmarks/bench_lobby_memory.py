"""Benchmark: peak memory of a lobby run as the run gets longer, records streamed or in memory.

Each configuration runs in a fresh process (peak RSS from ``getrusage``): a 1v1 lobby of about
2,000 concurrent players for 16 and 64 simulated hours. Target (issue 4): with ``records.stream``
memory stays flat in run length. The peak is read twice: after the simulation loop, and after the
final metrics, which read a few columns of the record files back.

    python benchmarks/bench_lobby_memory.py [--concurrent 2000] [--hours 16,64]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time

from lobbysim.scenario import Scenario


def scenario_for(concurrent: int, hours: float, stream: bool) -> Scenario:
    """A 1v1 lobby of about ``concurrent`` players (10-minute games, ~10 per session)."""
    return Scenario.from_dict(
        {
            "horizon": hours * 60,
            "warmup": 60,
            "population": {"session_games_mean": 10, "patience_mean": 5.0},
            "arrivals": {"name": "poisson", "rate": concurrent / 100.0},
            "game": {"length": 10.0},
            "matchmaker": {
                "tick": 0.25,
                "wake_on_arrival": False,
                "threshold": [[0, 0.5], [1, 0.0]],
            },
            "records": {"ratings_every": 60, "stream": stream},
        }
    )


def child(concurrent: int, hours: float, stream: bool) -> None:
    """Run one configuration and print its figures as JSON."""
    from lobbysim.experiments.simulation import collect, collect_streamed
    from lobbysim.records.files import CsvSink
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    scenario = scenario_for(concurrent, hours, stream)
    with tempfile.TemporaryDirectory() as folder:
        sink = CsvSink(__import__("pathlib").Path(folder)) if stream else None
        sim = LobbySimulation(scenario, Streams(1), sink=sink)
        start = time.perf_counter()
        sim.run()
        elapsed = time.perf_counter() - start
        after_run = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result = collect_streamed(sim, 1, sink) if sink is not None else collect(sim, 1)
        after_metrics = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "games": sim.n_games,
                "players": len(sim.players),
                "seconds": elapsed,
                "after_run_mb": after_run,
                "after_metrics_mb": after_metrics,
                "queue_p90": result.metrics["queue_time_p90"],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=2000)
    parser.add_argument("--hours", default="16,64")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), float(args.child[1]), args.child[2] == "stream")
        return
    for mode in ("stream", "memory"):
        for hours in args.hours.split(","):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(args.concurrent), hours, mode],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            r = json.loads(out)
            print(
                f"{mode:>6}, {float(hours):>4g} h: {r['games']:>9,} games, {r['players']:>8,} "
                f"players, {r['seconds']:6.1f} s; peak RSS {r['after_run_mb']:7.1f} MB after the "
                f"run, {r['after_metrics_mb']:7.1f} MB after the metrics"
            )


if __name__ == "__main__":
    main()
