"""Round trip: simulate the bundled live game, read its records as a match log, calibrate, and
check what comes back against what generated it.

Prints, per parameter, the generating value, the fitted one (with its standard error where the
fit gives one) and whether it is within its stated tolerance:

* the mean visit rate and the skill spread: within 5%;
* the hour-of-day profile: correlation with the generating profile at least 0.95;
* the base's size, newcomers per day and leave rate: within 2 standard errors (their sampling
  error: a 10-day log of ~1,650 players says only so much about them);
* the games per visit (the scenario's ``session_games_mean``): within 5%;

then simulates the calibrated scenario and compares its games per day and distinct players per
day with the log's (within 5% each). Example::

    python scripts/calibrate_roundtrip.py               # live_game, seed 11
    python scripts/calibrate_roundtrip.py --seed 12 --refine 3
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from lobbysim.calibration.matchlog import from_records
from lobbysim.calibration.run import calibrate, compare_logs
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import load_scenario


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="live_game")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--refine", type=int, default=3)
    args = parser.parse_args()
    source = load_scenario(args.scenario)
    started = time.perf_counter()
    result = simulate(source, args.seed)
    log = from_records(result.games, result.participants, f"{args.scenario} seed {args.seed}")
    print(
        f"{log.source}: {log.matches:,} matches, {len(log.seats):,} seats, {log.players:,} "
        f"players ({time.perf_counter() - started:.0f} s)"
    )
    started = time.perf_counter()
    cal = calibrate(log, source, refine=args.refine, seed=args.seed + 100)
    print(f"calibrated in {time.perf_counter() - started:.0f} s (refined by {args.refine} runs)")
    fit, scenario = cal.fit, cal.scenario
    assert source.base is not None and scenario.base is not None
    visits = dict(source.base.visits.params)
    fitted_visits = dict(scenario.base.visits.params)
    rows = []

    def relative(name: str, truth: float, value: float, tolerance: float) -> None:
        ok = abs(value / truth - 1) <= tolerance
        rows.append((name, truth, f"{value:.4g}", f"within {tolerance:.0%}", ok))

    def errors(name: str, truth: float, value: float, error: float) -> None:
        ok = abs(value - truth) <= 2 * error
        rows.append((name, truth, f"{value:.4g} ± {error:.2g}", "within 2 s.e.", ok))

    relative("visits per member and day", visits["per_day"], fitted_visits["per_day"], 0.05)
    relative(
        "skill sd", source.population.get("skill_sd", 2.0), scenario.population["skill_sd"], 0.05
    )
    truth_profile = np.asarray(visits["profile"], dtype=float)
    corr = float(np.corrcoef(truth_profile, fit.profile)[0, 1])
    rows.append(("hour-of-day profile", "-", f"r = {corr:.4f}", "r >= 0.95", corr >= 0.95))
    errors("base size", source.base.size, fit.base.size, fit.base.errors["size"])
    errors(
        "newcomers per day",
        source.base.newcomers_per_day,
        fit.base.newcomers_per_day,
        fit.base.errors["newcomers_per_day"],
    )
    errors(
        "leave per day",
        source.base.leave_per_day,
        fit.base.leave_per_day,
        fit.base.errors["leave_per_day"],
    )
    errors("visit-rate shape", visits.get("shape", 2.0), fit.base.shape, fit.base.errors["shape"])
    relative(
        "games per visit (session mean)",
        source.population["session_games_mean"],
        scenario.population["session_games_mean"],
        0.05,
    )
    assert cal.simulated is not None
    compared = compare_logs(log, cal.simulated)
    games = compared["games_per_day"]
    players = compared["players_per_day"]
    rows.append(
        (
            "games per day (log vs calibrated)",
            f"{games[0]:.0f}",
            f"{games[1]:.0f}",
            "within 5%",
            abs(games[2]) <= 0.05,
        )
    )
    rows.append(
        (
            "distinct players per day",
            f"{players[0]:.0f}",
            f"{players[1]:.0f}",
            "within 5%",
            abs(players[2]) <= 0.05,
        )
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'':<{width}}  {'generating':>11}  {'fitted':>16}  tolerance")
    for name, truth, value, tolerance, ok in rows:
        shown = (
            f"{truth:.4g}"
            if isinstance(truth, float | int) and not isinstance(truth, bool)
            else str(truth)
        )
        print(f"{name:<{width}}  {shown:>11}  {value:>16}  {tolerance}: {'ok' if ok else 'MISSED'}")
    print(
        f"refinement factors: per_day x{cal.refined.get('per_day', math.nan):.4f}, "
        f"session_games_mean x{cal.refined.get('session_games_mean', math.nan):.4f}, "
        f"skill_sd x{cal.refined.get('skill_sd', math.nan):.4f}; fitted before: visits "
        f"{fit.base.per_day:.4g}, games per visit {fit.sessions.games_per_visit:.4g}, skill sd "
        f"{fit.skill_sd:.4g}"
    )
    missed = [r[0] for r in rows if not r[4]]
    print("all within tolerance" if not missed else f"missed: {', '.join(missed)}")
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
