"""Benchmark: simulated games per wall-second of a 1v1 lobby at several sizes.

The lobby: DrawChance on the Bayesian rater's beliefs, global (exact block) assignment, the SPH Elo
as a shadow rater, 10-minute games, sessions of ~10 games, a matchmaking pass every 0.25 minutes
(``--wake-on-arrival``: also whenever a player queues, i.e. passes over one or two players).
The number of concurrent players is set by the arrival rate (players in the lobby ~ rate x session
length); a warm-up fills the lobby and is not timed.

Records are streamed to CSV files in a temporary folder (``records.stream``,
the sink :func:`lobbysim.experiments.simulation.simulate` uses: a writer process where one can
run, :func:`lobbysim.records.writer.open_sink`), as the issue asks; the timed part includes
writing them (the final flush too, and waiting for the writer to finish). ``--no-writer`` writes
them in the simulation's process; ``--no-stream`` keeps them in memory instead.

Targets (the lobby speed issue): >= 40,000 games/s at ~10,000 concurrent players, and the cost
per game at ~100,000 within 1.5x of that at ~10,000 (the first lobby issue asked 10,000 games/s
and 2x). Each size runs in a fresh process, ``--repeats`` times;
the figures are medians, and the peak RSS is the child process's ``ru_maxrss`` from
``resource.getrusage`` (the largest of the repeats; it includes the warm-up and the interpreter).

    python benchmarks/bench_lobby.py [--sizes 1000,10000,100000] [--minutes 60] [--repeats 3]
        [--wake-on-arrival] [--no-stream] [--no-writer]
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

from lobbysim.scenario import Scenario

GAME_MINUTES = 10.0
SESSION_GAMES = 10.0
TARGET_GAMES_PER_S = 40_000.0
TARGET_RATIO = 1.5


def scenario_for(
    concurrent: int, minutes: float, wake_on_arrival: bool = False, stream: bool = True
) -> Scenario:
    """A lobby whose steady state holds about ``concurrent`` players."""
    session_minutes = SESSION_GAMES * GAME_MINUTES  # waits are short next to games
    rate = concurrent / session_minutes
    return Scenario.from_dict(
        {
            "name": f"bench-{concurrent}",
            "horizon": 2 * session_minutes + minutes,
            "warmup": 2 * session_minutes,
            "population": {"session_games_mean": SESSION_GAMES, "patience_mean": 5.0},
            "arrivals": {"name": "poisson", "rate": rate},
            "game": {"length": GAME_MINUTES},
            "matchmaker": {
                "policy": "draw_chance",
                "assignment": {"name": "global", "block_size": 8},
                "tick": 0.25,
                "wake_on_arrival": wake_on_arrival,
                "threshold": [[0, 0.5], [1, 0.0]],
            },
            "raters": {"driver": "bayesian", "shadows": ["sph_elo"]},
            "records": {"ratings_every": 1e9, "stream": stream},
        }
    )


def child(
    concurrent: int, minutes: float, wake_on_arrival: bool, stream: bool, writer: bool = True
) -> None:
    """Run one size once (warm-up untimed) and print its figures as JSON."""
    from lobbysim.records.writer import open_sink
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    scenario = scenario_for(concurrent, minutes, wake_on_arrival, stream)
    with tempfile.TemporaryDirectory() as folder:
        sink = open_sink(Path(folder), "csv", background=None if writer else False)
        sim = LobbySimulation(scenario, Streams(1), sink=sink if stream else None)
        sim.start_service()
        sim.start_arrivals()
        sim.advance(scenario.warmup)
        games_before, players = sim.n_games, len(sim.players)
        in_lobby = len(sim.present)
        start = time.perf_counter()
        with sim.tuned():  # as in LobbySimulation.run: the final records too
            sim.advance(scenario.horizon)
            sim.apply_pending()
            sim.records.flush(force=True)
            sink.close()  # every row written
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "games": sim.n_games - games_before,
                "seconds": elapsed,
                "in_lobby": in_lobby,
                "arrived": players,
                "peak_mb": peak,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--minutes", type=float, default=60.0, help="timed simulated minutes")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (medians)")
    parser.add_argument(
        "--wake-on-arrival", action="store_true", help="also run a pass whenever a player queues"
    )
    parser.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="stream the records to CSV files (default) or keep them in memory",
    )
    parser.add_argument(
        "--writer",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="streamed records written by a writer process where available (default), as "
        "simulate() does, or in the simulation's process (--no-writer)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.sizes), args.minutes, args.wake_on_arrival, args.stream, args.writer)
        return
    print(
        f"records {'streamed to CSV' if args.stream else 'kept in memory'}"
        f"{' by a writer process' if args.stream and args.writer else ''}, "
        f"wake on arrival {'on' if args.wake_on_arrival else 'off'}, "
        f"{args.minutes:g} timed minutes, median of {args.repeats} run(s) per size; "
        "peak RSS = ru_maxrss of the run's process"
    )
    per_game: dict[int, float] = {}
    for concurrent in (int(s) for s in args.sizes.split(",")):
        command = [sys.executable, __file__, "--child", "--sizes", str(concurrent)]
        command += ["--minutes", str(args.minutes)]
        command += ["--wake-on-arrival"] if args.wake_on_arrival else []
        command += ["--stream" if args.stream else "--no-stream"]
        command += ["--writer" if args.writer else "--no-writer"]
        runs = [
            json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            for _ in range(args.repeats)
        ]
        games = runs[0]["games"]  # the same in every repeat (same seed)
        elapsed = statistics.median(r["seconds"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        per_game[concurrent] = elapsed / games
        print(
            f"{concurrent:>7,} target concurrent ({runs[0]['in_lobby']:,} in the lobby at the "
            f"start, {runs[0]['arrived']:,} arrived): {games:,} games in {elapsed:.2f} s = "
            f"{games / elapsed:,.0f} games/s, {1e6 * elapsed / games:.1f} us/game; "
            f"peak RSS {peak:,.0f} MB"
        )
    if 10_000 in per_game:
        rate = 1.0 / per_game[10_000]
        verdict = "MET" if rate >= TARGET_GAMES_PER_S else "MISSED"
        print(f"games/s at 10,000: {rate:,.0f} (target >= {TARGET_GAMES_PER_S:,.0f}): {verdict}")
    if 10_000 in per_game and 100_000 in per_game:
        ratio = per_game[100_000] / per_game[10_000]
        verdict = "MET" if ratio <= TARGET_RATIO else "MISSED"
        limit = f"target <= {TARGET_RATIO:g}"
        print(f"cost per game at 100,000 / at 10,000: {ratio:.2f} ({limit}): {verdict}")


if __name__ == "__main__":
    main()
