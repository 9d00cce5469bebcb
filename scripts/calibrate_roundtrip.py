"""Round trips: simulate a scenario from known settings, read its records as a match log,
calibrate, and check what comes back against what generated it, for several true settings.

For each setting (:data:`SETTINGS`: the bundled live game and variants with other base sizes,
visit rates, skill spreads and newcomer rates, one a base growing ~3-fold), prints per
parameter the generating value, the fitted one (with its standard error where the fit gives
one) and whether it is within its stated tolerance:

* the mean visit rate and the games per visit: within 5%;
* the skill spread: within 5%, or within 2 standard errors where a log is too small for 5%: the
  error the refining simulations measured (:func:`lobbysim.calibration.run.spread_errors`: the
  estimator's spread from log to log around the skills each simulation drew, which the
  likelihood's curvature understates by about half, the drawn players' own spread and the
  measured bias's), with the curvature's only where they could not (stated in the row); the
  script refines by 5 simulations (``--refine``, default 5; calibrate's default is 3), so that
  error rests on 4 degrees of freedom;
* the newcomers a day: within 2 standard errors, the larger of the likelihood's and the one the
  refining simulations measured (the joins' Poisson noise and the estimator's spread around the
  newcomers each simulation drew);
* the hour-of-day profile: correlation with the generating profile at least 0.95;
* the base's size, leave rate and rate shape (as written: refined by simulation): within 2
  standard errors (their sampling error: a 10-day log of ~1,650 players says only so much about
  them);

then simulates the calibrated scenario and compares its games per day and distinct players per
day with the log's: within 5% each, or within 2 standard errors of one log against one
simulation of a base whose fitted size has an error of its own (sqrt 2 times the log's own
error, :func:`log_scatter`, and the base size's relative error, in quadrature: a two-day log of
500 members scatters by 4-5% from one draw of its game to the next, so 5% alone would miss about
one time in two by chance). Last, one table of every setting side by side. Example::

    python scripts/calibrate_roundtrip.py                      # every setting, seed 11
    python scripts/calibrate_roundtrip.py --settings live_game --seed 12 --refine 5
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lobbysim.calibration.matchlog import MatchLog, from_records
from lobbysim.calibration.run import (
    after,
    calibrate,
    compare_logs,
    lead_in,
    period_minutes,
    with_warmup,
)
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario
from lobbysim.scenario.inputs import as_scenario

#: The true settings: a bundled scenario and the overrides (``--set`` syntax) that make it.
SETTINGS: dict[str, tuple[str, list[str]]] = {
    "live_game": ("live_game", []),
    "small_tight": (
        "live_game",
        [
            "base.size=800",
            "base.visits.per_day=2.0",
            "population.skill_sd=1.5",
            "base.newcomers_per_day=40",
        ],
    ),
    "large_wide": (
        "live_game",
        [
            "base.size=2500",
            "base.visits.per_day=0.8",
            "population.skill_sd=3.0",
            "base.newcomers_per_day=10",
        ],
    ),
    "growing": (  # 300 members and 100 newcomers a day: the base grows ~3-fold in 10 days
        "live_game",
        [
            "base.size=300",
            "base.visits.per_day=1.5",
            "population.skill_sd=2.5",
            "base.newcomers_per_day=100",
        ],
    ),
}


@dataclass
class Row:
    """One parameter of one round trip."""

    name: str
    truth: float | str
    value: str
    tolerance: str
    ok: bool
    relative: float = math.nan  # fitted / true - 1
    z: float = math.nan  # (fitted - true) / standard error, for the rows judged by one
    degrees: float = math.inf  # the degrees of freedom that standard error rests on


#: The days the true setting's lobby has run before its log starts (fewer where a growing base
#: would be empty that long before: :func:`lobbysim.calibration.run.lead_in`).
LEAD_DAYS = 7


def running(source: Scenario, days: int = LEAD_DAYS) -> tuple[Scenario, float]:
    """Return ``source`` started ``days`` before its log, as a real game's log starts mid-game
    (members online and in their visits, the raters knowing them), and that lead in minutes.

    The base at minute 0 is sized so that it holds the setting's ``base.size`` members, on
    average, when the log starts (:func:`lobbysim.calibration.run.lead_in`): every generating
    value is the setting's at the log's start. The source's own warm-up and matchmaker switch go
    (the round trip compares the status quo's lobby with itself)."""
    assert source.base is not None
    base = source.base
    lead, size = lead_in(float(base.size), base.newcomers_per_day, base.leave_per_day, days)
    data = source.to_dict()
    matchmaker = dict(data.get("matchmaker") or {})
    for key in ("switch_at", "status_quo"):
        matchmaker.pop(key, None)
    data["matchmaker"] = matchmaker
    data["warmup"] = 0.0
    return Scenario.from_dict(with_warmup(data, lead, size)), lead


def round_trip(source: Scenario, label: str, seed: int, refine: int) -> list[Row]:
    """Simulate ``source`` once from :data:`LEAD_DAYS` before its log, calibrate on the log
    (from the lead's end, on the log's clock), and return the rows (printed as it goes)."""
    started = time.perf_counter()
    lobby, lead = running(source)
    result = simulate(lobby, seed)
    log = after(from_records(result.games, result.participants, f"{label} seed {seed}"), lead)
    print(
        f"{log.source}: {log.matches:,} matches, {len(log.seats):,} seats, {log.players:,} "
        f"players, from day {lead / 1440:.0f} of a running lobby "
        f"({time.perf_counter() - started:.0f} s)"
    )
    started = time.perf_counter()
    # the game's age when the log starts, as a studio knows it: the refining simulations run
    # from as old a lobby (docs/calibrate.md, "The game's age")
    cal = calibrate(log, source, refine=refine, seed=seed + 100, game_age=lead / 1440)
    print(f"calibrated in {time.perf_counter() - started:.0f} s (refined by {refine} runs)")
    fit, scenario = cal.fit, cal.scenario
    assert source.base is not None and scenario.base is not None
    visits = dict(source.base.visits.params)
    fitted_visits = dict(scenario.base.visits.params)
    rows: list[Row] = []

    def relative(name: str, truth: float, value: float, tolerance: float) -> None:
        ok = abs(value / truth - 1) <= tolerance
        rows.append(
            Row(name, truth, f"{value:.4g}", f"within {tolerance:.0%}", ok, value / truth - 1)
        )

    def errors(
        name: str, truth: float, value: float, error: float, degrees: float = math.inf
    ) -> None:
        ok = abs(value - truth) <= 2 * error
        shown = f"{value:.4g} ± {error:.2g}"
        z = (value - truth) / error if error > 0 else math.nan
        rows.append(Row(name, truth, shown, "within 2 s.e.", ok, value / truth - 1, z, degrees))

    relative("visits per member and day", visits["per_day"], fitted_visits["per_day"], 0.05)
    true_sd = float(source.population.get("skill_sd", 2.0))
    fitted_sd = float(scenario.population["skill_sd"])
    # the standard error the refining simulations measured (spread_errors), else the curvature's
    sd_error = cal.errors.get("skill_sd", fit.skill_sd_error * cal.refined.get("skill_sd", 1.0))
    how = "simulations'" if "skill_sd" in cal.errors else "curvature's"
    near = abs(fitted_sd / true_sd - 1) <= 0.05
    within = math.isfinite(sd_error) and abs(fitted_sd - true_sd) <= 2 * sd_error
    rows.append(
        Row(
            "skill sd",
            true_sd,
            f"{fitted_sd:.4g} ± {sd_error:.2g}",
            f"within 5% or 2 s.e. ({how})",
            near or within,
            fitted_sd / true_sd - 1,
            (fitted_sd - true_sd) / sd_error if sd_error > 0 else math.nan,
            cal.degrees.get("skill_sd", math.inf),
        )
    )
    drawn: list[float] | np.ndarray = []
    if result.players is not None:  # the skills of the players in the log
        skills = result.players.set_index("player_id")["skill"].astype(float)
        drawn = skills.reindex(log.player_ids).dropna().to_numpy(dtype=float)
    if len(drawn):
        rows.append(
            Row(
                "  (skill sd of the players drawn)",
                f"{float(np.std(drawn)):.4g}",
                f"{scenario.population['skill_sd']:.4g}",
                "-",
                True,
                scenario.population["skill_sd"] / float(np.std(drawn)) - 1,
            )
        )
    if "profile" in visits:
        truth_profile = np.asarray(visits["profile"], dtype=float)
        corr = float(np.corrcoef(truth_profile, fit.profile)[0, 1])
        rows.append(Row("hour-of-day profile", "-", f"r = {corr:.4f}", "r >= 0.95", corr >= 0.95))
    else:  # a flat profile: no correlation to take; its weights' spread instead
        spread = float(np.std(fit.profile))
        rows.append(
            Row("hour-of-day profile", "flat", f"sd {spread:.3f}", "sd <= 0.2", spread <= 0.2)
        )
    base_errors = fit.base.errors
    errors("base size", source.base.size, fit.base.size, base_errors["size"])
    errors(
        "newcomers per day",
        source.base.newcomers_per_day,
        scenario.base.newcomers_per_day,
        cal.errors.get("newcomers_per_day", base_errors["newcomers_per_day"]),
        cal.degrees.get("newcomers_per_day", math.inf),
    )
    errors(
        "leave per day",
        source.base.leave_per_day,
        fit.base.leave_per_day,
        base_errors["leave_per_day"],
    )
    errors(  # as written: refined by simulation, its error by the same factor
        "visit-rate shape",
        visits.get("shape", 2.0),
        float(fitted_visits.get("shape", fit.base.shape)),
        base_errors["shape"] * cal.refined.get("shape", 1.0),
    )
    relative(
        "games per visit (session mean)",
        source.population["session_games_mean"],
        scenario.population["session_games_mean"],
        0.05,
    )
    assert cal.simulated is not None
    compared = compare_logs(log, cal.simulated)
    scatter = log_scatter(log)
    size_error = base_errors["size"] / fit.base.size if fit.base.size > 0 else math.nan
    for name, key in (
        ("games per day (log vs calibrated)", "games_per_day"),
        ("distinct players per day", "players_per_day"),
    ):
        observed, simulated, change = compared[key]
        # one log against one simulation, each scattering by the log's own error, of a base
        # whose fitted size is off by its own (the calibrated scenario's counts follow it)
        error = math.sqrt(2.0 * scatter[key] ** 2 + size_error**2)
        rows.append(
            Row(
                name,
                f"{observed:.0f}",
                f"{simulated:.0f}",
                "within 5% or 2 s.e. (log's x sqrt 2, base size's)",
                abs(change) <= 0.05 or abs(change) <= 2 * error,
                change,
                change / error if error > 0 else math.nan,
            )
        )
    width = max(len(r.name) for r in rows)
    print(f"{'':<{width}}  {'generating':>11}  {'fitted':>18}  {'s.e. off':>15}  tolerance")
    for row in rows:
        shown = f"{row.truth:.4g}" if isinstance(row.truth, float | int) else str(row.truth)
        mark = "ok" if row.ok else "MISSED"
        print(
            f"{row.name:<{width}}  {shown:>11}  {row.value:>18}  {off(row):>15}  "
            f"{row.tolerance}: {mark}"
        )
    factors = ", ".join(f"{k} x{v:.4f}" for k, v in cal.refined.items())
    print(
        f"refinement factors: {factors}; fitted before: visits {fit.base.per_day:.4g}, games "
        f"per visit {fit.sessions.games_per_visit:.4g}, skill sd {fit.skill_sd:.4g}, newcomers "
        f"{fit.base.newcomers_per_day:.4g} a day"
    )
    return rows


def log_scatter(log: MatchLog) -> dict[str, float]:
    """Return the relative standard error of a log's games and distinct players per period
    (:func:`lobbysim.calibration.run.compare_logs`' periods) from the players it holds: the
    members' visit rates differ (Gamma) and each visits at random, so another log of the same
    game holds other counts; resampling the players, the sum of their seats (or periods present)
    has the standard error ``sd * sqrt(n)`` (a slight understatement: a player's games need
    opponents). On ``quickstart``'s two-day log (seed 11) it reads 3.9% for the games, where six
    other logs of the true game scattered by 5.2% (95% interval 3.2% to 12.7% on six); one log
    against one simulation of the calibrated scenario differs by sqrt 2 times that."""
    period = period_minutes(log)
    seats = log.seats
    start = float(seats["start"].min())
    index = ((seats["start"].to_numpy() - start) // period).astype(int)
    whole = max(math.floor((float(seats["end"].max()) - start) / period), 1)
    frame = pd.DataFrame({"period": index, "player": seats["player"].to_numpy()})
    frame = frame[frame["period"] < whole]
    seats_of = frame.groupby("player").size().to_numpy(dtype=float)
    present = frame.groupby("player")["period"].nunique().to_numpy(dtype=float)

    def relative(values: np.ndarray) -> float:
        if len(values) < 2 or values.sum() <= 0:
            return math.nan
        return float(np.std(values, ddof=1) * math.sqrt(len(values)) / values.sum())

    return {"games_per_day": relative(seats_of), "players_per_day": relative(present)}


def off(row: Row) -> str:
    """Return how many standard errors off a row judged by one is (``+2.28``), with the
    degrees of freedom its error rests on where they are 100 or fewer (``+2.28 (4.1 df)``)."""
    if not math.isfinite(row.z):
        return ""
    if not math.isfinite(row.degrees) or row.degrees > 100:  # as good as the normal's
        return f"{row.z:+.2f}"
    return f"{row.z:+.2f} ({row.degrees:.2g} df)"


def chance(degrees: float) -> float:
    """Return the chance that an honest estimate lies more than 2 of its standard errors off
    the truth (Student's t on ``degrees``; the normal's 4.6% on infinitely many)."""
    from scipy import stats

    if not math.isfinite(degrees):
        return float(2 * stats.norm.sf(2.0))
    return float(2 * stats.t.sf(2.0, degrees))


def coverage(runs: dict[int, dict[str, list[Row]]]) -> None:
    """Print, per setting and row judged by a standard error, how many standard errors off it
    was on each seed, how many seeds were within 2 and how many an honest error would leave
    out by chance (Student's t on each row's degrees of freedom), so that a miss by chance
    can be told from a bias: a bias shows as z of one sign on most seeds."""
    seeds = list(runs)
    print(f"\nstandard errors off (fitted - true) / s.e., seeds {', '.join(map(str, seeds))}")
    first = runs[seeds[0]]
    width = max(len(f"{n}: {r.name}") for n, rows in first.items() for r in rows)
    expected_total, missed_total, judged_total = 0.0, 0, 0
    for name, rows in first.items():
        for k, row in enumerate(rows):
            if not math.isfinite(row.z):
                continue
            cells = [runs[seed][name][k] for seed in seeds]
            zs = [c.z for c in cells]
            within = sum(abs(z) <= 2 for z in zs)
            expected = sum(chance(c.degrees) for c in cells)
            expected_total += expected
            missed_total += len(zs) - within
            judged_total += len(zs)
            print(
                f"{name + ': ' + row.name:<{width}}  "
                + " ".join(f"{z:+6.2f}" for z in zs)
                + f"  within 2: {within}/{len(zs)} (by chance ~{expected:.1f} out), "
                f"mean {np.mean(zs):+.2f}"
            )
    print(
        f"rows judged by a standard error: {judged_total - missed_total}/{judged_total} within "
        f"2; by chance ~{expected_total:.1f} would miss"
    )


def seeds_of(text: str) -> list[int]:
    """Return the seeds of ``11``, ``11,12`` or ``11-16``."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--settings", default=",".join(SETTINGS), help="comma-separated names of SETTINGS"
    )
    parser.add_argument(
        "--seed",
        default="11",
        help="the seed, or seeds (11,12 or 11-16: every setting on each, then the standard "
        "errors off per seed)",
    )
    parser.add_argument("--refine", type=int, default=5)
    args = parser.parse_args()
    names = [n.strip() for n in args.settings.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        parser.error(f"unknown setting {unknown[0]!r}; known: {', '.join(SETTINGS)}")
    try:
        seeds = seeds_of(args.seed)
    except ValueError:
        parser.error(f"--seed: expected 11, 11,12 or 11-16, got {args.seed!r}")
    if not seeds:
        parser.error(f"--seed: no seed in {args.seed!r}")
    runs: dict[int, dict[str, list[Row]]] = {}
    missed_any = False
    for seed in seeds:
        runs[seed] = table(names, seed, args.refine)
        missed_any = missed_any or any(not r.ok for rows in runs[seed].values() for r in rows)
    if len(seeds) > 1:
        coverage(runs)
    return 1 if missed_any else 0


def table(names: list[str], seed: int, refine: int) -> dict[str, list[Row]]:
    """Run the round trip of each setting at ``seed`` and print their table side by side."""
    results: dict[str, list[Row]] = {}
    for name in names:
        scenario_name, overrides = SETTINGS[name]
        print(f"\n== {name}: {scenario_name} {' '.join(overrides)} (seed {seed})".rstrip())
        source = as_scenario(scenario_name, overrides)
        results[name] = round_trip(source, name, seed, refine)
    print("\nfitted / true - 1 (games and players per day: calibrated / log - 1); * = missed")
    params = [row.name for row in next(iter(results.values()))]
    width = max(len(p) for p in params)
    print(f"{'':<{width}}" + "".join(f"  {name:>12}" for name in results))
    for k, param in enumerate(params):
        cells = []
        for rows in results.values():
            row = rows[k]
            text = f"{row.relative:+.1%}" if math.isfinite(row.relative) else row.value
            cells.append(f"{text + ('' if row.ok else '*'):>12}")
        print(f"{param:<{width}}" + "".join(f"  {c}" for c in cells))
    missed = [f"{n}: {r.name}" for n, rows in results.items() for r in rows if not r.ok]
    print("all within tolerance" if not missed else f"missed: {'; '.join(missed)}")
    judged = [(n, r) for n, rows in results.items() for r in rows if math.isfinite(r.z)]
    if judged:
        outside = sum(abs(r.z) > 2 for _, r in judged)
        expected = sum(chance(r.degrees) for _, r in judged)
        print(
            f"rows judged by a standard error: {len(judged) - outside}/{len(judged)} within 2 "
            f"(an honest error leaves ~{expected:.1f} of {len(judged)} out by chance); s.e. "
            "off: "
            + ", ".join(f"{n} {r.name.strip()} {r.z:+.2f}" for n, r in judged if abs(r.z) > 1.5)
        )
    return results


if __name__ == "__main__":
    sys.exit(main())
