"""How long does calibrating a one-million-seat match log take on one core?

Writes a synthetic 1v1 log of about 1,000,000 seats (10,000 members visiting at Gamma-distributed
rates over 25 days with an evening profile, ~5 games a visit of 10 minutes, opponents adjacent
in time, results drawn from true skills with performance noise), then times, in this process
with one BLAS thread: reading it (``read_log``) and fitting the scenario (``fit_log``: sessions,
profile, the base's likelihood, games, the skill spread by fixed effects), the median of
``--repeats`` runs each. The target is under a minute for the two together. Scoring the raters
and the refinement by simulation are timed apart (``--scores``): the first replays every rater
once per tuning setting, the second simulates the whole base, so neither is part of the
one-minute target.
Example::

    python benchmarks/bench_calibrate.py --repeats 3
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lobbysim.calibration.fit import fit_log
from lobbysim.calibration.read import read_log

PROFILE = np.array(
    [
        0.3,
        0.2,
        0.1,
        0.1,
        0.1,
        0.1,
        0.2,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        0.9,
        0.9,
        1.0,
        1.1,
        1.3,
        1.6,
        2.0,
        2.2,
        2.0,
        1.4,
        0.8,
    ]
)


def synthetic_log(seats: int, seed: int = 1) -> pd.DataFrame:
    """Return a synthetic 1v1 log in lobbysim's default layout, about ``seats`` rows."""
    rng = np.random.default_rng(seed)
    members, days, per_visit = 10_000, 25, 5
    visits_wanted = seats / per_visit
    per_day = visits_wanted / members / days
    rates = rng.gamma(2.0, per_day / 2.0, members)
    counts = rng.poisson(rates * days)
    player = np.repeat(np.arange(members), counts)
    # visit starts shaped by the profile: hours drawn by the weights, minutes uniform
    hours = rng.choice(24, size=len(player), p=PROFILE / PROFILE.sum())
    day = rng.integers(0, days, len(player))
    start = day * 1440.0 + hours * 60.0 + rng.uniform(0, 60, len(player))
    games = rng.geometric(1 / per_visit, len(player))
    seat_player = np.repeat(player, games)
    offsets = np.concatenate([np.arange(g) for g in games]) * 10.5
    seat_start = np.repeat(start, games) + offsets
    order = np.argsort(seat_start, kind="stable")
    seat_player, seat_start = seat_player[order], seat_start[order]
    n = len(seat_player) // 2 * 2
    a, b = seat_player[:n:2], seat_player[1:n:2]
    keep = a != b
    a, b, t0 = a[keep], b[keep], seat_start[:n:2][keep]
    skill = rng.normal(0, 2.0, members)
    noise = math.sqrt(2.5)
    a_wins = rng.normal(skill[a], noise) > rng.normal(skill[b], noise)
    matches = np.arange(len(a))
    return pd.DataFrame(
        {
            "match_id": np.repeat(matches, 2),
            "player_id": np.column_stack([a, b]).ravel(),
            "start": np.repeat(t0, 2),
            "end": np.repeat(t0 + 10.0, 2),
            "team": np.tile([0, 1], len(a)),
            "result": np.where(np.column_stack([a_wins, ~a_wins]).ravel(), "win", "loss"),
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scores", action="store_true", help="also time scoring the raters")
    args = parser.parse_args()
    frame = synthetic_log(args.seats)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.csv"
        frame.to_csv(path, index=False)
        print(
            f"log: {len(frame):,} seats, {frame['match_id'].nunique():,} matches, "
            f"{frame['player_id'].nunique():,} players over 25 days"
        )
        reads, fits = [], []
        with threadpool_limits(1):
            for _ in range(args.repeats):
                started = time.perf_counter()
                log = read_log(path)
                reads.append(time.perf_counter() - started)
                started = time.perf_counter()
                fit = fit_log(log)
                fits.append(time.perf_counter() - started)
        read, fitted = statistics.median(reads), statistics.median(fits)
        total = read + fitted
        print(f"read_log: {', '.join(f'{s:.1f}' for s in reads)} s; median {read:.1f} s")
        print(f"fit_log: {', '.join(f'{s:.1f}' for s in fits)} s; median {fitted:.1f} s")
        print(
            f"fitted: size {fit.base.size:,.0f}, per_day {fit.base.per_day:.3f}, shape "
            f"{fit.base.shape:.2f}, games/visit {fit.sessions.games_per_visit:.2f}, skill sd "
            f"{fit.skill_sd:.3f} (generated: 10,000, {args.seats / 5 / 10_000 / 25:.3f}, 2, ~5, 2)"
        )
        met = total < 60
        print(
            f"read + fit of {len(frame):,} seats: {total:.1f} s on one core (target < 60 s): "
            f"{'MET' if met else 'NOT MET'}"
        )
        if args.scores:
            from lobbysim.calibration.scores import score_log

            started = time.perf_counter()
            score_log(log, ["bayesian", "sph_elo"])
            print(
                f"scoring bayesian and sph_elo with tuning: {time.perf_counter() - started:.1f} s"
            )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
