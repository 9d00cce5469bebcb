"""Benchmark: what the raters' tuning loss counts, every pair of a log's first part or its
experienced ones.

``calibrate`` tunes each rater on the first half of a match log and scores it on the second
(:mod:`lobbysim.calibration.grid`). The tuning loss now counts the first part's pairs of players
who each had at least 5 earlier matches in the log
(:data:`~lobbysim.calibration.scores.TUNE_EXPERIENCED`), not every pair. A log cut from a running
game pairs players the matchmaker knows to be close and the replay has not met yet, so early on
every pair is near even and the settings that learn least (narrow priors, long rating periods)
score best: on the bundled sample log every pair chose Glicko-2's initial deviation 87.5 and the
Bayesian rater's beta^2 15.6, which score 0.654 and 0.649 on the second part, where the
experienced pairs choose 175 and 6.25 (0.639 and 0.640).

The logs are cut as the bundled sample log is (days 3 and 4 of a running ``quickstart``, from
the scenario's seeds ``--seeds``). Variants: ``before`` (every pair of the first part,
``tune_experienced=0``) and ``now``. The rule was chosen on seeds 1-7 and 14-21 (replays of fine
grids, read offline, which also ruled out two other changes: priors set from the first part's
skill spread, and a finer search between the grid's values); ``--seeds 22-33``, the default,
were not looked at before this benchmark ran on them. For each log and variant it prints each
rater's log loss on the second part and Glicko-2 against the Bayesian rater, paired per match of
the second part (issue 44's bar: the 95% interval of glicko2 - bayesian holds 0 or lies below
it); over the logs, each rater's mean and its change from ``before`` (95% t interval over the
logs), the mean of glicko2 - bayesian with its interval over the logs, and on how many logs the
bar holds.

    python benchmarks/bench_calibrate_tuning.py [--seeds 22-33]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from scipy import stats

from lobbysim.calibration.matchlog import MatchLog, from_records
from lobbysim.calibration.run import after
from lobbysim.calibration.scores import TUNE_EXPERIENCED, score_log
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import load_scenario

#: The days the game runs before its log starts, and the log's own days (the sample log's).
LEAD_DAYS, LOG_DAYS = 2, 2


def running_log(seed: int) -> MatchLog:
    """Return days 3 and 4 of ``quickstart`` run on ``seed``, on the log's own clock."""
    scenario = load_scenario("quickstart")
    scenario = scenario.replace(horizon=(LEAD_DAYS + LOG_DAYS) * 1440.0)
    result = simulate(scenario, seed)
    log = from_records(result.games, result.participants, f"quickstart seed {seed}")
    return after(log, LEAD_DAYS * 1440.0)


#: The tuning losses compared: (name, score_log's ``tune_experienced``).
VARIANTS = [("before", 0), ("now", TUNE_EXPERIENCED)]


def losses(log: MatchLog, experienced: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Return each rater's per-pair log loss on the second part, tuned on the first part's
    pairs of players with ``experienced`` earlier matches, and the second part's outcomes."""
    result = score_log(log, tune_experienced=experienced)
    second = result.pairs[result.pairs["part"] == "second"]
    y = second["outcome"].to_numpy()
    out = {}
    for name in result.chosen:
        p = np.clip(second[name].to_numpy(), 1e-15, 1 - 1e-15)
        out[name] = -(y * np.log(p) + (1.0 - y) * np.log1p(-p))
    return out, y


def bar(loss: dict[str, np.ndarray]) -> tuple[float, float, bool]:
    """Return glicko2 - bayesian (mean per pair), its standard error, and whether the bar holds
    (the 95% interval's lower end at or below 0)."""
    diff = loss["glicko2"] - loss["bayesian"]
    se = float(diff.std(ddof=1) / math.sqrt(diff.size))
    return float(diff.mean()), se, float(diff.mean()) - 1.96 * se <= 0.0


def seeds_of(text: str) -> list[int]:
    """Return the seeds of ``"22-33"`` or ``"2,5,7"``."""
    if "-" in text:
        lo, hi = (int(x) for x in text.split("-", 1))
        return list(range(lo, hi + 1))
    return [int(x) for x in text.split(",")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="22-33", help="quickstart seeds of the logs (22-33)")
    args = parser.parse_args()
    started = time.perf_counter()
    seeds = seeds_of(args.seeds)
    mean_loss: dict[tuple[str, str], list[float]] = {}
    held = dict.fromkeys([v[0] for v in VARIANTS], 0)
    diffs: dict[str, list[float]] = {v[0]: [] for v in VARIANTS}
    for seed in seeds:
        log = running_log(seed)
        print(f"seed {seed}: {log.matches:,} matches")
        for name, experienced in VARIANTS:
            loss, _ = losses(log, experienced)
            for rater, values in loss.items():
                mean_loss.setdefault((name, rater), []).append(float(values.mean()))
            mean, se, ok = bar(loss)
            held[name] += ok
            diffs[name].append(mean)
            cells = ", ".join(f"{r} {v.mean():.4f}" for r, v in loss.items())
            print(
                f"  {name}: {cells}; glicko2 - bayesian {mean:+.4f} +/- {se:.4f} "
                f"(bar {'holds' if ok else 'missed'})"
            )
    n = len(seeds)
    base = VARIANTS[0][0]
    print(f"over {n} logs (seeds {args.seeds}), second-part log loss, minus {base}'s (95% t):")
    for name, _ in VARIANTS:
        cells = []
        for (variant, rater), values in mean_loss.items():
            if variant != name:
                continue
            change = [a - b for a, b in zip(values, mean_loss[(base, rater)], strict=True)]
            mean = statistics.fmean(change)
            sd = statistics.stdev(change) if n > 1 else math.nan
            half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) if n > 1 else math.nan
            cells.append(
                f"{rater} {statistics.fmean(values):.4f} ({mean:+.4f} [{mean - half:+.4f}, "
                f"{mean + half:+.4f}])"
            )
        print(f"  {name} over the logs: " + ", ".join(cells))
        mean = statistics.fmean(diffs[name])
        half = (
            stats.t.ppf(0.975, n - 1) * statistics.stdev(diffs[name]) / math.sqrt(n)
            if n > 1
            else math.nan
        )
        print(
            f"    {name}, glicko2 against bayesian: bar holds on {held[name]} of {n} logs; "
            f"glicko2 - bayesian over the logs {mean:+.4f} [{mean - half:+.4f}, "
            f"{mean + half:+.4f}]"
        )
    print(f"time: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
