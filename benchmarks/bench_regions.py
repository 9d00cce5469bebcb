"""Benchmark: seats filled per wall-second of a 5v5 lobby in three regions, with parties.

The regions issue asks that a 5v5 lobby at ~10,000 concurrent players, with three regions and
parties on, fill at least 20,000 seats per second. The lobby: 5v5 team games of 20 minutes with
quits and back-fill, three regions (half, 30% and 20% of the players) and three data centres with
a lognormal spread of ping, a maximum latency relaxing from 60 to 150 ms and a delta ping limit,
guests in parties of 1 to 5 (tickets formed data centre by data centre, teams split by whole
tickets within a premade-parity limit), the Bayesian rater, records streamed to CSV as
``simulate()`` streams them (``--no-parties``: everybody solo). Each run is a fresh
process; the warm-up fills the lobby to its steady state and is not timed; each run prints how
many players the lobby held at the start and at the end of the timed part; the figures are
medians of ``--repeats``.

    python benchmarks/bench_regions.py [--concurrent 10000] [--minutes 60] [--repeats 3]
        [--no-parties]
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
# A player's minutes in the lobby per game of their session (stints, waits, give-ups), measured:
# the arrival rate is concurrent / (SESSION_GAMES * this), so that the steady state holds about
# the number of players asked (Little's law). Measured at --concurrent 10000 with seed 1 over
# 480 simulated minutes: the lobby then holds ~9,900-10,300 players from minute 300 on, both
# ways. Sessions end sooner with parties (a party gives up together, a dissolved party's
# members with it; measured with a guest party's members from one region).
MINUTES_PER_GAME = 17.0
MINUTES_PER_GAME_PARTIES = 14.0
# The untimed warm-up: sessions have a long tail (games of 20 minutes), so the lobby approaches
# its steady state slowly (at 80 minutes it held only ~7,600 of its ~10,000 with parties).
WARMUP_MINUTES = 360.0
TARGET_SEATS_PER_S = 20_000.0
WORLD = {
    "data_centres": ["us_east", "eu_west", "ap_southeast"],
    "regions": [
        {"name": "na", "share": 0.5, "utc_offset_hours": -5},
        {"name": "eu", "share": 0.3, "utc_offset_hours": 1},
        {"name": "apac", "share": 0.2, "utc_offset_hours": 8},
    ],
    "latency": {
        "name": "matrix",
        "base_ms": {"na": [35, 95, 190], "eu": [95, 25, 165], "apac": [190, 165, 45]},
        "spread": 0.3,
    },
}


PARTIES = {
    "sizes": [[1, 0.6], [2, 0.2], [3, 0.1], [4, 0.05], [5, 0.05]],
    "skill": "average_plus",
    "premade_bonus": 0.2,
    "parity": [[0, 2], [2, 5]],
}


def scenario_for(concurrent: int, minutes: float, parties: bool = True) -> Scenario:
    """A 5v5 lobby in three regions whose steady state holds about ``concurrent`` players."""
    session_minutes = SESSION_GAMES * (MINUTES_PER_GAME_PARTIES if parties else MINUTES_PER_GAME)
    return Scenario.from_dict(
        {
            **({"parties": PARTIES} if parties else {}),
            "name": f"bench-regions-{concurrent}",
            "horizon": WARMUP_MINUTES + minutes,
            "warmup": WARMUP_MINUTES,
            "population": {"session_games_mean": SESSION_GAMES, "patience_mean": 8.0},
            "arrivals": {"name": "poisson", "rate": concurrent / session_minutes},
            "game": {
                "mode": "team",
                "team_size": 5,
                "length": GAME_MINUTES,
                "quit_rate": 0.005,
                "backfill": True,
            },
            "matchmaker": {
                "tick": 0.5,
                "wake_on_arrival": False,
                "threshold": [[0, 0.3], [1, 0.1], [2, 0.0]],
                "max_latency_ms": [[0, 60], [1.5, 100], [3, 150]],
                "max_delta_ping_ms": [[0, 40], [2, 200]],
            },
            "raters": {"driver": "bayesian"},
            "records": {"ratings_every": 1e9, "stream": True},
            "world": WORLD,
        }
    )


def child(concurrent: int, minutes: float, parties: bool = True) -> dict[str, Any]:
    """Run once (warm-up untimed); return its figures."""
    from lobbysim.experiments.simulation import schema_of
    from lobbysim.records.writer import open_sink
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    written = {"games": 0, "participants": 0}
    scenario = scenario_for(concurrent, minutes, parties)
    with tempfile.TemporaryDirectory() as folder:
        sink = open_sink(Path(folder), "csv", schema=schema_of(scenario))  # as simulate() does

        def counting(kind: str, rows: list[tuple[Any, ...]]) -> None:
            written[kind] = written.get(kind, 0) + len(rows)
            sink(kind, rows)

        sim = LobbySimulation(scenario, Streams(1), sink=counting)
        sim.start_service()
        sim.start_arrivals()
        sim.advance(scenario.warmup)
        sim.apply_pending()
        games_before = written["games"] + len(sim.records.games)
        seats_before = written["participants"] + len(sim.records.participants)
        in_lobby = len(sim.present)
        start = time.perf_counter()
        with sim.tuned():
            sim.advance(scenario.horizon)
            sim.apply_pending()
            sim.records.flush(force=True)
            sink.close()
        elapsed = time.perf_counter() - start
        at_end = len(sim.present)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "games": written["games"] - games_before,
        "seats": written["participants"] - seats_before,
        "seconds": elapsed,
        "in_lobby": in_lobby,
        "in_lobby_end": at_end,
        "peak_mb": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=10_000)
    parser.add_argument("--minutes", type=float, default=60.0, help="timed simulated minutes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--parties", action=argparse.BooleanOptionalAction, default=True, help="guests in parties"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.concurrent, args.minutes, args.parties)))
        return
    command = [sys.executable, __file__, "--child", "--concurrent", str(args.concurrent)]
    command += ["--minutes", str(args.minutes), "--parties" if args.parties else "--no-parties"]
    runs = [
        json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        for _ in range(args.repeats)
    ]
    for r in runs:
        print(
            f"{r['in_lobby']:,} in the lobby at the start ({r['in_lobby_end']:,} at the end): "
            f"{r['games']:,} games, {r['seats']:,} "
            f"seats in {r['seconds']:.2f} s = {r['seats'] / r['seconds']:,.0f} seats/s; "
            f"peak RSS {r['peak_mb']:,.0f} MB",
            flush=True,
        )
    rate = statistics.median(r["seats"] / r["seconds"] for r in runs)
    held = statistics.median(r["in_lobby"] for r in runs)
    verdict = "MET" if rate >= TARGET_SEATS_PER_S else "MISSED"
    print(
        f"5v5, three regions, latency limits, {'parties' if args.parties else 'no parties'}, "
        f"~{args.concurrent:,} concurrent ({held:,.0f} held at the start): median "
        f"{rate:,.0f} seats/s over {args.repeats} runs (target >= {TARGET_SEATS_PER_S:,.0f}): "
        f"{verdict}"
    )


if __name__ == "__main__":
    main()
