"""Benchmark: simulated games per wall-second of a 1v1 lobby at several sizes.

The lobby: DrawChance on the Bayesian rater's beliefs, global (exact block) assignment, the SPH Elo
as a shadow rater, 10-minute games, sessions of ~10 games, a matchmaking pass every 0.25 minutes
(``--wake-on-arrival``: also whenever a player queues, i.e. passes over one or two players).
The number of concurrent players is set by the arrival rate (players in the lobby ~ rate x session
length); a warm-up fills the lobby and is not timed. Targets (issue 4): >= 10,000 games/s at
~10,000 concurrent players, and the cost per game at ~100,000 within 2x of that at ~10,000.

    python benchmarks/bench_lobby.py [--sizes 1000,10000,100000] [--minutes 60] [--wake-on-arrival]
"""

from __future__ import annotations

import argparse
import time

from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.streams import Streams

GAME_MINUTES = 10.0
SESSION_GAMES = 10.0


def scenario_for(concurrent: int, minutes: float, wake_on_arrival: bool = False) -> Scenario:
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
            "records": {"ratings_every": 1e9},
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--minutes", type=float, default=60.0, help="timed simulated minutes")
    parser.add_argument(
        "--wake-on-arrival", action="store_true", help="also run a pass whenever a player queues"
    )
    args = parser.parse_args()
    per_game: dict[int, float] = {}
    for concurrent in (int(s) for s in args.sizes.split(",")):
        scenario = scenario_for(concurrent, args.minutes, args.wake_on_arrival)
        sim = LobbySimulation(scenario, Streams(1))
        sim.start_service()
        sim.start_arrivals()
        sim.advance(scenario.warmup)
        games_before, players = sim.n_games, len(sim.players)
        in_lobby = sum(1 for p in sim.players if p.state in ("waiting", "playing"))
        start = time.perf_counter()
        sim.advance(scenario.horizon)
        elapsed = time.perf_counter() - start
        games = sim.n_games - games_before
        per_game[concurrent] = elapsed / games
        print(
            f"{concurrent:>7,} target concurrent ({in_lobby:,} in the lobby at the start, "
            f"{players:,} arrived): {games:,} games in {elapsed:.2f} s = "
            f"{games / elapsed:,.0f} games/s, {1e6 * elapsed / games:.1f} us/game"
        )
    if 10_000 in per_game and 100_000 in per_game:
        print(f"cost per game at 100,000 / at 10,000: {per_game[100_000] / per_game[10_000]:.2f}")


if __name__ == "__main__":
    main()
