"""Benchmark: an 8-player free-for-all lobby (ZoneStats-like) at ~2,000 and ~20,000 players.

The lobby: games of 8 (mode ``ffa``) formed from players adjacent in the Bayesian rater's means,
20-minute games, quits at 0.02 per minute (a third of the players leave a game early), seats left
open back-filled from the queue, 20% guests, sessions of ~5 games, the SPH Elo as a shadow rater,
a matchmaking pass every 0.25 minutes (and whenever a seat opens), records streamed to CSV files
in a temporary folder. The number of concurrent players is set by the arrival rate; a warm-up
fills the lobby and is not timed; the timed part includes writing the records.

Targets:

* scaling (the first lobby issue's): the cost per game at ~20,000 concurrent players within 2x of
  that at ~2,000;
* throughput in *seats filled*, i.e. player-games (one per stint: every player who sat in a
  game, back-fills included; a game of 8 fills 8 seats, or more with back-fills), per second at
  ~20,000 players: at least 30,000 (the lobby speed issue's; the first lobby issue asked 20,000,
  its 1v1 target of 10,000 games/s x 2 players). Games per second would be unfair to compare
  with 1v1: an ffa game has 4x the players of a 1v1 game.

Memory: ``--double`` also runs each size twice as long and prints both peak RSS figures (a fresh
process each; ``ru_maxrss`` from ``resource.getrusage``): with streamed records memory should
stay flat in run length. Figures are medians of ``--repeats`` runs.

    python benchmarks/bench_lobby_ffa.py [--sizes 2000,20000] [--minutes 60] [--repeats 3]
        [--double] [--wake-on-arrival]
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
from typing import Any

from lobbysim.scenario import Scenario

GAME_MINUTES = 20.0
SESSION_GAMES = 5.0
QUIT_RATE = 0.02
# mean minutes a player spends per game: a stint (the game, or less after a quit or a
# back-fill) and the wait before it; measured, so that the lobby holds about the size asked
MINUTES_PER_GAME = 13.0
TARGET_RATIO = 2.0
TARGET_SEATS_PER_S = 30_000.0  # the lobby speed issue


def scenario_for(concurrent: int, minutes: float, wake_on_arrival: bool = False) -> Scenario:
    """A free-for-all lobby whose steady state holds about ``concurrent`` players."""
    session_minutes = SESSION_GAMES * MINUTES_PER_GAME
    return Scenario.from_dict(
        {
            "name": f"bench-ffa-{concurrent}",
            "horizon": 3 * session_minutes + minutes,
            "warmup": 3 * session_minutes,
            "population": {
                "session_games_mean": SESSION_GAMES,
                "patience_mean": 5.0,
                "registered_fraction": 0.8,
            },
            "arrivals": {"name": "poisson", "rate": concurrent / session_minutes},
            "game": {
                "mode": "ffa",
                "ffa_size": 8,
                "length": GAME_MINUTES,
                "quit_rate": QUIT_RATE,
                "backfill": True,
            },
            "matchmaker": {
                "tick": 0.25,
                "wake_on_arrival": wake_on_arrival,
                "threshold": [[0, 0.5], [1, 0.0]],
            },
            "raters": {"driver": "bayesian", "shadows": ["sph_elo"]},
            "records": {"ratings_every": 1e9, "stream": True},
        }
    )


def child(concurrent: int, minutes: float, wake_on_arrival: bool) -> dict[str, Any]:
    """Run one size once (warm-up untimed); return its figures."""
    from lobbysim.records.writer import open_sink
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    written = {"games": 0, "participants": 0}
    scenario = scenario_for(concurrent, minutes, wake_on_arrival)
    with tempfile.TemporaryDirectory() as folder:
        sink = open_sink(Path(folder), "csv")  # as simulate() opens it

        def counting(kind: str, rows: list[tuple[Any, ...]]) -> None:
            """The sink, counting the game and participant rows it writes."""
            written[kind] = written.get(kind, 0) + len(rows)
            sink(kind, rows)

        sim = LobbySimulation(scenario, Streams(1), sink=counting)
        sim.start_service()
        sim.start_arrivals()
        sim.advance(scenario.warmup)
        sim.apply_pending()
        games_before = written["games"] + len(sim.records.games)
        seats_before = written["participants"] + len(sim.records.participants)
        in_lobby, arrived = len(sim.present), len(sim.players)
        start = time.perf_counter()
        with sim.tuned():  # as in LobbySimulation.run: the final records too
            sim.advance(scenario.horizon)
            sim.apply_pending()
            sim.records.flush(force=True)
            sink.close()  # every row written
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "games": written["games"] - games_before,
        "seats": written["participants"] - seats_before,
        "seconds": elapsed,
        "in_lobby": in_lobby,
        "arrived": arrived,
        "passes": sim.n_passes,
        "peak_mb": peak,
    }


def run_children(
    concurrent: int, minutes: float, wake_on_arrival: bool, repeats: int
) -> list[dict[str, Any]]:
    """Run one size ``repeats`` times, each in a fresh process."""
    command = [sys.executable, __file__, "--child", "--sizes", str(concurrent)]
    command += ["--minutes", str(minutes)] + (["--wake-on-arrival"] if wake_on_arrival else [])
    return [
        json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        for _ in range(repeats)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--minutes", type=float, default=60.0, help="timed simulated minutes")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (medians)")
    parser.add_argument(
        "--double", action="store_true", help="also run twice as long: is memory flat?"
    )
    parser.add_argument(
        "--wake-on-arrival", action="store_true", help="also run a pass whenever a player queues"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.sizes), args.minutes, args.wake_on_arrival)))
        return
    print(
        f"8-player ffa, records streamed to CSV, {args.minutes:g} timed minutes, median of "
        f"{args.repeats} run(s) per size; peak RSS = ru_maxrss of the run's process"
    )
    per_game: dict[int, float] = {}
    seats_per_s: dict[int, float] = {}
    for concurrent in (int(s) for s in args.sizes.split(",")):
        runs = run_children(concurrent, args.minutes, args.wake_on_arrival, args.repeats)
        r = runs[0]  # counts are the same in every repeat (same seed)
        elapsed = statistics.median(run["seconds"] for run in runs)
        peak = max(run["peak_mb"] for run in runs)
        per_game[concurrent] = elapsed / r["games"]
        seats_per_s[concurrent] = r["seats"] / elapsed
        print(
            f"{concurrent:>7,} target concurrent ({r['in_lobby']:,} in the lobby at the start, "
            f"{r['arrived']:,} arrived): {r['games']:,} games, {r['seats']:,} seats in "
            f"{elapsed:.2f} s = {r['games'] / elapsed:,.0f} games/s, "
            f"{seats_per_s[concurrent]:,.0f} player-games/s, "
            f"{1e6 * elapsed / r['games']:.1f} us/game; peak RSS {peak:,.0f} MB"
        )
        if args.double:
            longer = run_children(concurrent, 2 * args.minutes, args.wake_on_arrival, 1)[0]
            print(
                f"{'':>7} twice as long ({2 * args.minutes:g} timed minutes): "
                f"{longer['games']:,} games, peak RSS {longer['peak_mb']:,.0f} MB "
                f"(x{longer['peak_mb'] / peak:.2f})"
            )
    sizes = sorted(per_game)
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        ratio = per_game[large] / per_game[small]
        verdict = "MET" if ratio <= TARGET_RATIO else "MISSED"
        limit = f"target <= {TARGET_RATIO:g}"
        print(f"cost per game at {large:,} / at {small:,}: {ratio:.2f} ({limit}): {verdict}")
    if sizes:
        large = sizes[-1]
        rate = seats_per_s[large]
        verdict = "MET" if rate >= TARGET_SEATS_PER_S else "MISSED"
        print(
            f"player-games/s at {large:,}: {rate:,.0f} "
            f"(target >= {TARGET_SEATS_PER_S:,.0f}): {verdict}"
        )


if __name__ == "__main__":
    main()
