"""Check the headlines and answers of the bundled scenarios: no constant measure, no artefact.

For each bundled scenario (or those named), runs the comparison ``lobbysim compare NAME`` runs
(the scenario's policy against ``uniform_random`` and ``oracle``, or its ``compare:`` section)
and prints, per headline measure (:func:`lobbysim.reporting.headline.headline_metrics`), the
policies' means and whether the measure takes one value in every run of every policy (such a
measure is left out of the headline with a note, ``constant_metrics``), the queue-time measures
:func:`lobbysim.reporting.answer.measure_flags` flags (on the pass grid in every run, or of
zero-width interval) and the answer's sentences. It fails (exit status 1) when

* a headline shown to a user holds a constant measure;
* an answer sentence quotes a flagged measure, or any interval of zero width (``[x, x]``);
* a sentence says "captures -" (a negative share stated as a capture);
* a sentence states as a cost (its "at a cost of ..." clause) a difference whose interval
  holds 0.

The bundled scenarios are large (the paper's study runs 400 replications): ``--replications``
caps each scenario's replications (default 5) to keep the whole check to minutes; a measure
that differs over 5 replications differs over more. ``--short`` also shortens each scenario:
the metrics start at the warm-up's end or the policy switch, if earlier, at minute 120 (the
switch moves with it), and run at most 240 minutes from there; the check of every bundled
scenario then takes a few minutes (tests/reporting/test_check_headlines.py runs it so).
Example::

    python scripts/check_headlines.py                      # every bundled scenario, <= 5 each
    python scripts/check_headlines.py quickstart live_game --replications 10
    python scripts/check_headlines.py --short --replications 3
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import lobbysim
from lobbysim.paper import default_jobs
from lobbysim.reporting.answer import COSTS, grid_notes, measure_flags
from lobbysim.reporting.headline import constant_metrics, experiment_headline, headline_metrics
from lobbysim.scenario.bundled import bundled_scenarios
from lobbysim.stats.metrics import QUEUE_METRICS

SHORT_START = 120.0
"""With ``--short``: the latest minute the metrics start at."""
SHORT_WINDOW = 240.0
"""With ``--short``: the most minutes the metrics run for."""

WORDS = {
    **dict(COSTS),
    "queue_time_p50": "p50",
    "queue_time_p90": "p90",
    "queue_time_p99": "p99",
}
"""How a sentence would name each measure it could quote."""

_INTERVAL = re.compile(r"\[([^\[\],]+), ([^\[\],]+)\]")
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def _number(text: str) -> float | None:
    found = _NUMBER.search(text)
    return float(found.group().replace(",", "")) if found else None


def sentence_problems(sentence: str, flagged: Sequence[str]) -> list[str]:
    """Return what is wrong with one answer sentence (empty: nothing); ``flagged``: the
    measures no sentence may quote (:func:`~lobbysim.reporting.answer.measure_flags`)."""
    problems = []
    if "captures -" in sentence:
        problems.append('says "captures -": a negative share stated as a capture')
    for metric in flagged:
        words = WORDS.get(metric, metric)
        if re.search(rf"\b{re.escape(words)}\b", sentence):
            problems.append(f"quotes {metric} ({words}), a flagged measure")
    for low, high in _INTERVAL.findall(sentence):
        if low.strip() == high.strip():
            problems.append(f"quotes an interval of zero width [{low}, {high}]")
    cost = re.search(r"at a cost of (.*?)(?:;|\.$|$)", sentence)
    if cost:
        for low, high in _INTERVAL.findall(cost.group(1)):
            a, b = _number(low), _number(high)
            if a is None or b is None or not (a > 0 and b > 0):
                problems.append(
                    f"states as a cost a difference whose interval holds 0 [{low}, {high}]"
                )
    return problems


def short_overrides(scenario: Any) -> dict[str, Any]:
    """Return the overrides of ``--short`` for a scenario (see the module docstring)."""
    start = min(float(scenario.metrics_start), SHORT_START)
    window = min(float(scenario.horizon) - float(scenario.metrics_start), SHORT_WINDOW)
    out: dict[str, Any] = {"horizon": start + window, "warmup": min(float(scenario.warmup), start)}
    if getattr(scenario.matchmaker, "switch_at", None) is not None:
        out["matchmaker.switch_at"] = start
    return out


def check(name: str, cap: int, jobs: int, *, short: bool = False) -> bool:
    """Run one scenario's comparison; print its headline measures, flags and answers; return
    True if nothing is wrong (see the module docstring)."""
    scenario = lobbysim.load_scenario(name)
    replications = min(scenario.replications, cap)
    overrides: Mapping[str, Any] | None = short_overrides(scenario) if short else None
    started = time.perf_counter()
    experiment = lobbysim.compare(
        name,
        replications=replications,
        jobs=jobs,
        progress=False,
        report=False,
        overrides=overrides,
    )
    seconds = time.perf_counter() - started
    scenario = experiment.scenario
    driver = scenario.raters.driver.name
    metrics = headline_metrics(list(experiment.summary["metric"].unique()), driver)
    runs = experiment.metrics
    same = constant_metrics(runs, metrics)
    shown = experiment_headline(experiment)
    window = f", horizon {scenario.horizon:g} min" if short else ""
    print(
        f"{name}: {', '.join(experiment.policies)}; {replications} replications{window}, "
        f"{seconds:.0f} s"
    )
    means = runs.groupby("policy", sort=False)[metrics].mean()
    for metric in metrics:
        values = ", ".join(f"{means.loc[p, metric]:.4g}" for p in experiment.policies)
        state = "CONSTANT, left out" if metric in same else "differs"
        print(f"  {metric:<26} {state:<18} {values}")
    tick = float(scenario.matchmaker.tick)
    flags = measure_flags(runs, tick, [*QUEUE_METRICS, *(m for m, _ in COSTS)])
    for metric, flag in flags.items():
        print(f"  flagged: {metric} ({flag})")
    for note in grid_notes(experiment):
        print(f"  note: {note}")
    problems = [
        f"the headline shows a constant measure: {item.metric}"
        for item in shown.items
        if item.metric in same
    ]
    for sentence in shown.answers:
        print(f"  answer: {sentence}")
        problems += [f"{p}: {sentence!r}" for p in sentence_problems(sentence, list(flags))]
    for problem in problems:
        print(f"  FAIL: {problem}")
    return not problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help="bundled scenario names (default: all)")
    parser.add_argument("--replications", type=int, default=5, help="cap per scenario")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument(
        "--short",
        action="store_true",
        help=f"metrics from minute {SHORT_START:g} at the latest, for {SHORT_WINDOW:g} at most",
    )
    args = parser.parse_args(argv)
    names = args.scenarios or list(bundled_scenarios())
    unknown = [n for n in names if n not in bundled_scenarios()]
    if unknown:
        print(f"scenarios: not a bundled scenario: {', '.join(unknown)}", file=sys.stderr)
        return 2
    if args.replications < 2:
        print(f"--replications: at least 2 (an answer needs an interval), got {args.replications}",
              file=sys.stderr)  # fmt: skip
        return 2
    ok = [check(name, args.replications, args.jobs, short=args.short) for name in names]
    print(
        f"{sum(ok)} of {len(ok)} scenarios: no constant measure in the headline, no flagged or "
        "zero-width measure, negative capture or insignificant cost in an answer"
        + ("" if all(ok) else " (FAILED)")
    )
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
