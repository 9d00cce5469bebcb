"""Check that no headline measure is constant across policies on the bundled scenarios.

For each bundled scenario (or those named), runs the comparison ``lobbysim compare NAME`` runs
(the scenario's policy against ``uniform_random`` and ``oracle``, or its ``compare:`` section)
and prints, per headline measure (:func:`lobbysim.reporting.headline.headline_metrics`), the
policies' means and whether the measure takes one value in every run of every policy. Such a
measure is left out of the headline with a note (``constant_metrics``); the script says which,
and whether any queue-time percentile sits on the pass grid for every policy (``grid_notes``).
Exit status 1 if a headline shown to a user would hold a constant measure.

The bundled scenarios are large (the paper's study runs 400 replications): ``--replications``
caps each scenario's replications (default 5) to keep the whole check to minutes; a measure
that differs over 5 replications differs over more. Example::

    python scripts/check_headlines.py                      # every bundled scenario, <= 5 each
    python scripts/check_headlines.py quickstart live_game --replications 10
"""

from __future__ import annotations

import argparse
import sys
import time

import lobbysim
from lobbysim.paper import default_jobs
from lobbysim.reporting.answer import grid_notes
from lobbysim.reporting.headline import constant_metrics, experiment_headline, headline_metrics
from lobbysim.scenario.bundled import bundled_scenarios


def check(name: str, cap: int, jobs: int) -> bool:
    """Run one scenario's comparison; print its headline measures; return True if none of the
    measures the headline shows is constant."""
    scenario = lobbysim.load_scenario(name)
    replications = min(scenario.replications, cap)
    started = time.perf_counter()
    experiment = lobbysim.compare(name, replications=replications, jobs=jobs, progress=False)
    seconds = time.perf_counter() - started
    driver = scenario.raters.driver.name
    metrics = headline_metrics(list(experiment.summary["metric"].unique()), driver)
    runs = experiment.metrics
    same = constant_metrics(runs, metrics)
    shown = experiment_headline(experiment)
    print(
        f"{name}: {', '.join(experiment.policies)}; {replications} replications, {seconds:.0f} s"
    )
    means = runs.groupby("policy", sort=False)[metrics].mean()
    for metric in metrics:
        values = ", ".join(f"{means.loc[p, metric]:.4g}" for p in experiment.policies)
        state = "CONSTANT, left out" if metric in same else "differs"
        print(f"  {metric:<26} {state:<18} {values}")
    for note in grid_notes(experiment):
        print(f"  note: {note}")
    bad = [item.metric for item in shown.items if item.metric in same]
    if bad:
        print(f"  FAIL: the headline shows constant measures: {', '.join(bad)}")
    return not bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help="bundled scenario names (default: all)")
    parser.add_argument("--replications", type=int, default=5, help="cap per scenario")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    names = args.scenarios or list(bundled_scenarios())
    ok = [check(name, args.replications, args.jobs) for name in names]
    print(
        f"{sum(ok)} of {len(ok)} scenarios: no constant measure in the headline"
        + ("" if all(ok) else " (FAILED)")
    )
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
