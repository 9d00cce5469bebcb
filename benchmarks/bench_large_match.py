"""Benchmark: a free-for-all of 175-200 players (FlexMatch's large matches) for a simulated day.

The rule set is ``tests/fixtures/flexmatch/modelled/guide_ex7_large_ffa_key_twice.json``: one
team of 175-200 players whose minimum falls to 160 after 9 s and 120 after 18 s of its newest
ticket's wait, every player within 120 ms of the match's data centre (180 after 14 s), the
``balanced`` strategy read as FlexMatch's builder. Players arrive at ``--rate`` a minute
(Poisson, two regions and two data centres), play 15-minute games, and leave or queue again.

Target (the FlexMatch rule-set issue): a simulated day in minutes, not hours. Before passes that
cannot start a match by their tickets' count were skipped (``lobbysim.sim.seed_greedy.may_start``)
and a ticket of one player took its values without a Python loop, 120 simulated minutes had not
finished after 19 minutes. Prints the wall time per run (median of ``--repeats``), the games and
seats they filled, and the wall time per simulated hour::

    python benchmarks/bench_large_match.py [--minutes 1440] [--rate 30] [--repeats 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario

RULES = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "fixtures"
    / "flexmatch"
    / "modelled"
    / "guide_ex7_large_ffa_key_twice.json"
)


def scenario(minutes: float, rate: float) -> Scenario:
    """The large free-for-all run for ``minutes`` at ``rate`` arrivals a minute."""
    return Scenario.from_dict(
        {
            "name": "large_ffa",
            "horizon": minutes,
            "warmup": 0,
            "seed": 1,
            "arrivals": {"name": "poisson", "rate": rate},
            "world": {
                "data_centres": ["us_east", "eu_west"],
                "regions": [
                    {"name": "na", "share": 0.6, "utc_offset_hours": -5},
                    {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
                ],
                "latency": {
                    "name": "matrix",
                    "base_ms": {"na": [35, 95], "eu": [95, 25]},
                    "spread": 0.3,
                },
            },
            "game": {"length": 15},
            "matchmaker": {"rules": {"flexmatch": str(RULES)}},
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1440.0, help="simulated minutes")
    parser.add_argument("--rate", type=float, default=30.0, help="arrivals a minute")
    parser.add_argument("--repeats", type=int, default=1, help="runs (the median is printed)")
    args = parser.parse_args()
    s = scenario(args.minutes, args.rate)
    walls = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        result = simulate(s, 1)
        walls.append(time.perf_counter() - start)
    assert result.games is not None and result.participants is not None
    wall = statistics.median(walls)
    print(
        f"large ffa (175-200 players), {args.minutes:g} simulated min at {args.rate:g} "
        f"arrivals/min: {wall:.1f} s wall (median of {args.repeats}), "
        f"{wall / (args.minutes / 60):.2f} s per simulated hour; {len(result.games)} games, "
        f"{len(result.participants)} seats filled"
    )


if __name__ == "__main__":
    main()
