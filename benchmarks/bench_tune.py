"""Does ``lobbysim tune`` find what a grid finds, with a quarter of the simulations?

The study is ``scenarios/spaces/quickstart.yaml`` on the bundled ``quickstart``: the fairest
threshold schedule (start, step, every; down to 0) whose mean wait and abandonment keep their
bounds at the upper end of their 95% intervals. The reference is a grid over the same three
numbers (5 x 4 x 4 = 80 schedules) with 10 replications each on the same seeds as the study's
(800 simulations), judged by the same rule: the feasible schedule with the lowest mean true
skill gap. Its cells are committed in ``benchmarks/results/tune_grid_reference.csv``; ``--regrid``
runs the grid again (a few minutes on 2 cores) and rewrites it.

Then the study runs with ``--seeds`` optimiser seeds (default 1, 2, 3), each in a fresh folder:
a seed MEETS the target when its best trial's objective (its mean over the same 10 seeds) is
within 2% of the grid's best feasible value or better, and the study ran at most a quarter of
the grid's simulations (the search; the fresh-seed re-evaluation is counted apart). Example::

    python benchmarks/bench_tune.py                  # the committed grid, 3 tuning seeds
    python benchmarks/bench_tune.py --regrid --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from lobbysim.commands.sweep import build_sweep, run_sweep
from lobbysim.commands.tune import load_study
from lobbysim.commands.tune import tune as run_tune
from lobbysim.paper import default_jobs
from lobbysim.tuning.space import expansion
from lobbysim.tuning.trials import Interval

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "lobbysim" / "scenarios" / "spaces" / "quickstart.yaml"
REFERENCE = ROOT / "benchmarks" / "results" / "tune_grid_reference.csv"
STARTS = (0.2, 0.35, 0.5, 0.65, 0.8)
STEPS = (0.05, 0.1, 0.2, 0.4)
EVERY = (0.5, 1.0, 2.0, 3.0)
TOLERANCE = 0.02


def run_grid(jobs: int) -> pd.DataFrame:
    """Run the grid and return one row per schedule: the metrics the study judges by."""
    scenario, space = load_study("quickstart", SPACE)
    schedules = {
        (s, st, e): expansion(s, st, e, 0.0) for s, st, e in itertools.product(STARTS, STEPS, EVERY)
    }
    unique = list({str(v): v for v in schedules.values()}.values())
    sweep = build_sweep(
        scenario,
        grid={"matchmaker.threshold": unique},
        policies=[scenario.matchmaker.policy],  # the scenario's own, as the study tunes
        replications=space.most,
        progress=False,
    )
    with tempfile.TemporaryDirectory() as folder:
        outcome = run_sweep(sweep, Path(folder), jobs=jobs, write_report=False, progress=False)
    results = outcome.results
    assert len(results) == len(unique) * space.most, "one policy, every schedule, each seed"
    rows = []
    for (start, step, every), schedule in schedules.items():
        cell = results[results["matchmaker.threshold"] == _text(schedule)]
        row = {"start": start, "step": step, "every": every, "runs": len(cell)}
        for metric in [space.objective, *(c.metric for c in space.constraints)]:
            e = Interval.of(cell[metric].tolist())
            row[metric] = e.mean
            row[f"{metric}_high"] = e.high
        rows.append(row)
    return pd.DataFrame(rows)


def _text(schedule: list[list[float]]) -> str:
    from lobbysim.experiments.sweeps import table_value

    return str(table_value(schedule))


def simulations_of(grid: pd.DataFrame) -> int:
    """Return the grid's simulations: its distinct schedules x their replications (two triples
    that write the same schedule, such as a step past the limit, ran once)."""
    schedules = {
        str(expansion(r.start, r.step, r.every, 0.0)): r.runs for r in grid.itertuples()
    }
    return int(sum(schedules.values()))


def best_feasible(grid: pd.DataFrame) -> pd.Series:
    _, space = load_study("quickstart", SPACE)
    ok = pd.Series(True, index=grid.index)
    for c in space.constraints:
        ok &= grid[f"{c.metric}_high"] <= c.bound
    feasible = grid[ok]
    return feasible.loc[feasible[space.objective].idxmin()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regrid", action="store_true", help="run the grid again")
    parser.add_argument("--seeds", default="1,2,3", help="the optimiser's seeds")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    if args.regrid or not REFERENCE.exists():
        started = time.perf_counter()
        grid = run_grid(args.jobs)
        REFERENCE.parent.mkdir(parents=True, exist_ok=True)
        grid.to_csv(REFERENCE, index=False)
        print(
            f"grid: {len(grid)} schedules, {int(grid['runs'].sum())} simulations, "
            f"{time.perf_counter() - started:.0f} s; wrote {REFERENCE.relative_to(ROOT)}"
        )
    grid = pd.read_csv(REFERENCE)
    simulations = simulations_of(grid)
    best = best_feasible(grid)
    scenario, space = load_study("quickstart", SPACE)
    target = best[space.objective]
    ends = grid[[f"{c.metric}_high" for c in space.constraints]]
    feasible = int(ends.le([c.bound for c in space.constraints]).all(axis=1).sum())
    print(
        f"grid's best feasible: start {best['start']:g}, step {best['step']:g}, every "
        f"{best['every']:g}: {space.objective} {target:.4f} ({simulations} simulations; "
        f"{feasible} of {len(grid)} schedules feasible)"
    )
    met_all = True
    for seed in [int(s) for s in args.seeds.split(",")]:
        seeded = space.__class__(**{**space.__dict__, "seed": seed})
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            result = run_tune(
                scenario, seeded, Path(folder), jobs=args.jobs, progress=False, report=False
            )
        seconds = time.perf_counter() - started
        if result.best is None:
            print(
                f"tuning seed {seed}: no feasible trial ({result.simulations} simulations): NOT MET"
            )
            met_all = False
            continue
        value = result.best.estimate(space.objective).mean
        gap = (value - target) / abs(target)
        budget = result.simulations <= simulations / 4
        met = gap <= TOLERANCE and budget
        met_all &= met
        drawn = ", ".join(f"{k.rsplit('.', 1)[1]} {v:g}" for k, v in result.best.drawn.items())
        print(
            f"tuning seed {seed}: best trial {result.best.number} ({drawn}): {space.objective} "
            f"{value:.4f}, {100 * gap:+.1f}% against the grid's best; {result.simulations} "
            f"simulations ({result.simulations / simulations:.0%} of the grid's) + "
            f"{result.evaluations} to re-evaluate; {seconds:.0f} s: "
            f"{'MET' if met else 'NOT MET'}"
        )
        d = result.differences.set_index("metric").loc[space.objective]
        tuned = result.evaluation[result.evaluation["policy"] == "tuned"]
        held = []
        for c in space.constraints:
            end = Interval.of(tuned[c.metric].tolist()).high
            held.append(f"{c.metric} {end:.4g} {'<=' if end <= c.bound else '>'} {c.bound:g}")
            met_all &= end <= c.bound
        print(
            f"  on {result.evaluations // 2} fresh seeds, tuned minus the scenario's own "
            f"threshold: {d['mean']:+.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]; "
            f"constraints at the upper end of their 95% intervals: {'; '.join(held)}"
        )
    print(
        f"target (within {TOLERANCE:.0%} of the grid's best with <= 1/4 of its simulations, "
        f"every seed): {'MET' if met_all else 'NOT MET'}"
    )
    return 0 if met_all else 1


if __name__ == "__main__":
    sys.exit(main())
