"""Benchmark: how the game's age when its log starts moves the skill fit's raw reading.

``calibrate`` reads the skills' spread from a 1v1 log by fixed effects, deconvolved
(:func:`lobbysim.calibration.skills.fit_skill`), and divides out the inflation the refining
simulations measure on logs of their own (:mod:`lobbysim.calibration.run`). That inflation
depends on how old the lobby is when the log starts: young raters move ratings fast and pair
players loosely, and the estimates of a lobby whose pairings follow its results spread wider.
So the refining simulations must start from a lobby as old as the user's (``--game-age``).

For each lead (days the bundled ``live_game`` runs before its 10-day log; the base at minute 0
sized to hold its 1,500 members when the log starts: ``running`` of
scripts/calibrate_roundtrip.py) and seed, this simulates the lobby, cuts the log at the lead's
end and prints the raw fixed-effects spread over the standard deviation of the skills its
players drew; then per lead the mean over the seeds with a 95% t interval, and the difference
from the youngest lead's (Welch).

    python benchmarks/bench_calibrate_age.py [--leads 2,3,5,7,14] [--seeds 11-14] [--jobs 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from lobbysim.calibration.matchlog import from_records
from lobbysim.calibration.run import after
from lobbysim.calibration.skills import fit_skill
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import load_scenario

# the round trip's lobby started days before its log (scripts/ is not a package)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from calibrate_roundtrip import running


def ratio(days: int, seed: int) -> float:
    """Return the raw fixed-effects spread of the log cut after ``days`` over its players'
    drawn skills' standard deviation."""
    scenario, lead = running(load_scenario("live_game"), days)
    result = simulate(scenario, seed)
    log = after(from_records(result.games, result.participants, f"seed {seed}"), lead)
    skills = result.players.set_index("player_id")["skill"].astype(float)
    drawn = float(np.std(skills.reindex(pd.Index(log.player_ids)).to_numpy(dtype=float)))
    sd, method = fit_skill(log, scenario.game.beta2)
    assert method == "fixed effects", method
    return sd / drawn


def interval(values: list[float]) -> tuple[float, float, float]:
    """Return the mean and its 95% t interval."""
    mean = statistics.fmean(values)
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return mean, mean - half, mean + half


def difference(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Return mean(a) - mean(b) and its 95% Welch interval (the leads' logs are independent
    runs: a seed shares nothing between two leads)."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    degrees = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    diff = statistics.fmean(a) - statistics.fmean(b)
    half = stats.t.ppf(0.975, degrees) * (va + vb) ** 0.5
    return diff, diff - half, diff + half


def numbers(text: str) -> list[int]:
    """``"11-14"`` or ``"2,3,7"``: the whole numbers."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leads", default="2,3,5,7,14", help="days before the log")
    parser.add_argument("--seeds", default="11-14", help="the simulations' seeds")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    args = parser.parse_args()
    leads, seeds = numbers(args.leads), numbers(args.seeds)
    started = time.perf_counter()
    jobs = [(d, s) for d in leads for s in seeds]
    with ProcessPoolExecutor(args.jobs) as pool:
        values = dict(zip(jobs, pool.map(ratio, *zip(*jobs, strict=True)), strict=True))
    print("raw fixed-effects spread / drawn skill sd, live_game's 10-day log")
    first = [values[(leads[0], s)] for s in seeds]
    for d in leads:
        row = [values[(d, s)] for s in seeds]
        mean, lo, hi = interval(row)
        each = " ".join(f"{v:.4f}" for v in row)
        diff = difference(row, first) if d != leads[0] else None
        versus = (
            f"; minus {leads[0]} days {diff[0]:+.4f} [{diff[1]:+.4f}, {diff[2]:+.4f}]"
            if diff is not None
            else ""
        )
        print(f"  lead {d:>2} days: {mean:.4f} [{lo:.4f}, {hi:.4f}] (seeds: {each}){versus}")
    print(f"{len(jobs)} simulations in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
