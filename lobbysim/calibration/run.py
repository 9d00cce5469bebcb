"""Calibrate: fit a scenario to a log, refine it by simulation, compare it with the log.

:func:`calibrate` fits every quantity (:func:`lobbysim.calibration.fit.fit_log`) and writes them
into a template scenario (fields a match log cannot tell, such as the matchmaker, the raters,
the players' patience and a world's data centres and latencies, come from the template). A match
log holds only visits that reached a game, a visit's games are cut short when the player gives
up waiting, visits close together are read as one, and quits make results noisier than skill
alone would, so four quantities are then **refined by simulation** (indirect inference): the
calibrated scenario is simulated over the log's span, the same estimators are applied to the
simulated log, and the visit rate, the visit rates' Gamma shape and the games per visit are
scaled by fitted / re-estimated (at most x1.5 or /1.5 a step), ``refine``
times in turn, each simulation of the scenario as the last step left it, step k by the ratio to
the power 1 / k (a stochastic approximation of the fixed point: an estimator whose bias is not
one factor needs more than one step, and the later steps' gains average a simulation's noise
away), so that the scenario reproduces what the log shows rather than what was typed. The skill
spread is corrected by its estimator's own bias (:func:`lobbysim.calibration.skills.fit_skill`),
measured in each simulation against the skills the simulation actually drew for the players in
its log, not against the scenario's ``skill_sd`` (from which a few thousand players' skills
stray by a percent or two: measured that way, every step's factor carried that sampling noise):
the fitted spread is divided by the geometric mean of (re-estimated / drawn) over the
simulations so far (at most x1.5 or /1.5). An estimator strays from log to log by more than its
own error says (the rater replay's by some 3% on six logs of a skill sd of 3.0,
scripts/calibrate_roundtrip.py's ``large_wide`` from minute 0, seeds 11 to 16: 1.030, 0.965,
0.976, 0.959, 1.002 and 1.003 times the skills drawn, twice its curvature's 1.45%). So the
same simulations give the written spread's standard error (:func:`spread_errors`, a parametric
bootstrap), and the newcomers a day theirs (measured against the newcomers each simulation
drew; the newcomers are not refined: on the round trips the factor moved them away from the
truth).

**The written scenario** carries a warm-up (:func:`warmup_plan`): whole days before the log's
minute 0 in which the raters learn the members the log starts with (the game's age when the log
starts, where the user gives it; otherwise the days a member needs for :data:`WARMUP_GAMES`
games), the base sized so that it
holds the fitted ``N0`` members when the warm-up ends; the comparison simulation runs it and is
compared from the warm-up's end (:func:`after`). The refining simulations do the same, each
with the warm-up of the scenario as the last step left it: a real log starts mid-game, in a lobby
that has run for days (members online and in their visits, the raters knowing them), and the
estimators' bias is measured on the same kind of log, over the same span. How old the lobby
is matters to the skill spread: the fixed effects' inflation falls as the raters learn the
players and the matchmaker pairs them closer (``live_game``, four seeds a lead: 1.130 times the
skills drawn from a lobby 2 days old, 1.097 from 7 days, 1.084 from 14), so a log whose game's
age is known is refined from a lobby that old (``game_age``). (They used to run
from the scenario's minute 0, an empty lobby of unrated members: on short logs the base reads
low there, so the refinement measured the estimators on another kind of log than the user's.)
:func:`compare_logs` gives the side-by-side figures of the calibration report: per day the games
and the distinct players, the games per visit, the hour-of-day share of games, the game length
and the players online over time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.calibration.fit import BaseFit, Fit, fit_base, fit_log
from lobbysim.calibration.matchlog import MatchLog, from_records
from lobbysim.calibration.sessions import MINUTES_PER_DAY, Clock, find_sessions
from lobbysim.calibration.skills import fit_skill
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.validation import MAX_STUDY_SIMULATIONS, is_whole, study_size_problem


@dataclass
class Calibration:
    """A calibrated scenario and the evidence for it.

    Attributes:
        fit: the estimates from the log.
        scenario: the calibrated scenario (refined where ``refined``).
        refined: the factors the refinement applied, in all (``per_day``,
            ``session_games_mean``, ``shape``, ``skill_sd``), or empty without it.
        simulated: the written scenario's own log over the same span, after its warm-up
            (None without a refinement).
        warmup: the written scenario's warm-up in minutes (:func:`warmup_plan`).
        errors: the standard errors of written values that the refining simulations measured
            (``skill_sd``, ``newcomers_per_day``; :func:`spread_errors`), where there were at
            least two of them; otherwise the fit's own.
        degrees: the degrees of freedom each of ``errors`` rests on (:func:`error_degrees`;
            ``inf`` where it rests on no simulations' variance).
        game_age: the game's age in days when the log starts, as given (None: not given, the
            warm-up then lets a member play :data:`WARMUP_GAMES` games).
    """

    fit: Fit
    scenario: Scenario
    refined: dict[str, float]
    simulated: MatchLog | None
    warmup: float = 0.0
    errors: dict[str, float] = field(default_factory=dict)
    degrees: dict[str, float] = field(default_factory=dict)
    game_age: float | None = None


def simulated_log(
    scenario: Scenario, seed: int, progress: Callable[[float, float], None] | None = None
) -> MatchLog:
    """Simulate ``scenario`` once and return its match log (``progress(now, horizon)`` as
    :func:`lobbysim.experiments.simulation.simulate` calls it)."""
    return _simulated(scenario, seed, progress)[0]


def _simulated(
    scenario: Scenario,
    seed: int,
    progress: Callable[[float, float], None] | None = None,
    warmup: float = 0.0,
) -> tuple[MatchLog, float, float]:
    """Simulate ``scenario`` once and keep its log from minute ``warmup`` on (:func:`after`);
    return that log, the standard deviation of the true skills of the players in it and the
    newcomers who joined the base a day within it (NaN where the run does not record them)."""
    from lobbysim.experiments.simulation import simulate

    result = simulate(scenario, seed, progress=progress)
    full = from_records(result.games, result.participants, source=f"{scenario.name} (simulated)")
    log = after(full, warmup)
    drawn, joined = math.nan, math.nan
    players = result.players
    if players is not None and {"player_id", "skill"} <= set(players.columns):
        skills = players.set_index("player_id")["skill"].astype(float)
        seen = skills.reindex(pd.Index(log.player_ids)).to_numpy(dtype=float)
        seen = seen[np.isfinite(seen)]
        if len(seen) > 1:
            drawn = float(np.std(seen))
        span = scenario.horizon - warmup
        if scenario.base is not None and span > 0:
            joined = _joined(result.waits, scenario.base.size, warmup, len(players))
            joined = joined / (span / MINUTES_PER_DAY)
    return log, drawn, joined


def _joined(waits: pd.DataFrame | None, size: int, warmup: float, players: int) -> float:
    """Return the newcomers who joined a calibrated scenario's base from minute ``warmup`` on.

    A calibrated scenario has no guests: every player beyond the base's ``size`` starting
    members (ids from ``size`` on) joined it as a newcomer, and queued at once (a newcomer's
    first visit is at joining), so their first queueing spell is when they joined."""
    if warmup <= 0:
        return float(players - size)
    if waits is None or waits.empty:
        return math.nan
    first = waits.groupby("player_id")["enqueued"].min()
    newcomers = first[first.index.to_numpy() >= size]
    return float((newcomers.to_numpy(dtype=float) >= warmup).sum())


def _visit_stats(log: MatchLog, fit: Fit) -> tuple[float, float, float, float, float]:
    """Return (visits per member and day, games per visit, skill spread, newcomers per day,
    the visit rates' Gamma shape) of a log by the fit's estimators."""
    sessions = find_sessions(log)
    end = float(log.seats["end"].max())
    start = float(log.seats["start"].min())
    clock = Clock(fit.profile, fit.offset)
    base = fit_base(sessions, log.players, end, clock, start)
    skill_sd, _ = fit_skill(log, fit.beta2)
    return base.per_day, sessions.games_per_visit, skill_sd, base.newcomers_per_day, base.shape


def refine_problem(
    refine: object, limit: int = MAX_STUDY_SIMULATIONS, where: str = "--refine"
) -> str | None:
    """Return what is wrong with ``refine``, the number of refining simulations, or None: not
    a whole number >= 0, or with the comparison run more than ``limit`` simulations
    (:func:`lobbysim.validation.study_size_problem`; each simulates the log's whole span, so
    their time is not known before the log is read)."""
    if not is_whole(refine) or refine < 0:  # type: ignore[operator]
        return f"{where}: expected a whole number >= 0, got {refine!r}"
    count = int(refine)  # type: ignore[call-overload]
    return study_size_problem(
        where,
        count,
        count + 1,
        limit,
        detail=f"{count:,} of the log's whole span to refine the fit, and one to compare the "
        "result with the log",
    )


def calibrate(
    log: MatchLog,
    template: Mapping[str, Any] | Scenario | None = None,
    *,
    refine: int = 3,
    seed: int = 1,
    name: str = "calibrated",
    max_simulations: int = MAX_STUDY_SIMULATIONS,
    progress: Callable[..., None] | None = None,
    game_age: float | None = None,
) -> Calibration:
    """Fit a scenario to ``log`` (see the module docstring).

    Args:
        log: the match log.
        template: scenario data or a :class:`Scenario` whose other fields the calibrated
            scenario keeps (default: lobbysim's defaults).
        refine: the simulations that refine the visit rate, its Gamma shape, the games per
            visit and the skill spread, one after another (see the module docstring);
            0: none.
        seed: the first refinement simulation's seed (the next ones count up; the comparison
            simulation comes after them).
        name: the calibrated scenario's name.
        max_simulations: the most simulations it may run, ``refine`` and the comparison
            (:data:`lobbysim.validation.MAX_STUDY_SIMULATIONS` by default).
        progress: called as ``progress(done, total)`` in simulated minutes over every
            simulation (a :class:`~lobbysim.running.progress.Progress` stage's update).
        game_age: the days the game had run when the log starts: the refining simulations'
            and the written scenario's warm-up (:func:`warmup_plan`); None: unknown, a warm-up
            of :data:`WARMUP_GAMES` games a member.

    Raises:
        ScenarioError: ``refine`` not a whole number >= 0, or more simulations than
            ``max_simulations`` (:func:`refine_problem`), or ``game_age`` not a number >= 0
            (:func:`game_age_problem`), before anything is fitted or run.
    """
    problem = refine_problem(refine, max_simulations, "refine")
    if problem is None and game_age is not None:
        problem = game_age_problem(game_age, "game_age")
    if problem is not None:
        raise ScenarioError(problem)
    data = template.to_dict() if isinstance(template, Scenario) else dict(template or {})
    for key in ("sweep", "compare"):
        data.pop(key, None)  # the template's studies are not the calibrated scenario's
    matchmaker = dict(data.get("matchmaker") or {})
    for key in ("switch_at", "status_quo"):
        matchmaker.pop(key, None)
    if matchmaker:
        data["matchmaker"] = matchmaker
    game = data.get("game") or {}
    beta2 = float(game.get("beta2", 2.5))
    behind = float(game.get("quit_behind_multiplier", 1.0))
    fit = fit_log(log, beta2=beta2, behind_multiplier=behind)
    data["name"] = name
    data["description"] = (
        f"fitted by lobbysim calibrate to {log.source}: {log.matches:,} matches of "
        f"{log.players:,} players over {fit.days:.1f} days"
    )
    data["warmup"] = 0.0
    data = fit.scenario_data(data)
    scenario = Scenario.from_dict(data)
    refined: dict[str, float] = {}
    errors: dict[str, float] = {}
    degrees: dict[str, float] = {}
    simulated = None

    span = float(scenario.horizon)

    def step(k: int) -> Callable[[float, float], None] | None:
        """The progress of simulation ``k`` of ``refine + 1``, over them all (each counted as
        the log's span: the last, with its warm-up, in proportion)."""
        if progress is None:
            return None
        report = progress

        def update(now: float, horizon: float) -> None:
            report(k * span + now * span / horizon, (refine + 1) * span)

        return update

    if refine:
        fitted = data
        targets = {
            "per_day": fit.base.per_day,
            "session_games_mean": fit.sessions.games_per_visit,
            "shape": fit.base.shape,
        }
        refined = dict.fromkeys([*targets, "skill_sd"], 1.0)
        skill_bias: list[float] = []  # log(re-estimated / drawn) of each simulation
        newcomer_bias: list[float] = []  # log(re-estimated / joined) of each simulation
        for r in range(refine):
            # the refining simulation starts mid-game, as the log does: the scenario as the
            # last step left it, with its warm-up, cut at the warm-up's end
            lead, size = warmup_plan(fit.base, data, game_age)
            running = Scenario.from_dict(with_warmup(data, lead, size)) if lead > 0 else scenario
            sim_log, drawn, joined = _simulated(running, seed + r, step(r), lead)
            per_day, per_visit, skill_sd, newcomers, shape = _visit_stats(sim_log, fit)
            if joined > 0 and newcomers > 0:
                newcomer_bias.append(math.log(newcomers / joined))
            got = {"per_day": per_day, "session_games_mean": per_visit, "shape": shape}
            for key, target in targets.items():
                if got[key] > 1e-9 and target > 1e-9:
                    # a step of gain 1 / (r + 1) (stochastic approximation): the first moves
                    # the whole way, the later ones average a simulation's noise away
                    ratio = min(max(target / got[key], 1 / MAX_STEP), MAX_STEP)
                    refined[key] *= ratio ** (1.0 / (r + 1))
            if math.isfinite(drawn) and drawn > 0 and skill_sd > 0:
                # the skill spread's bias against the skills this simulation drew, averaged
                # over the simulations so far (see the module docstring)
                skill_bias.append(math.log(skill_sd / drawn))
                ratio = math.exp(-float(np.mean(skill_bias)))
                refined["skill_sd"] = min(max(ratio, 1 / MAX_STEP), MAX_STEP)
            data = _refined_data(fitted, refined)
            scenario = Scenario.from_dict(data)
        errors = spread_errors(
            fit,
            log.players,
            float(data["population"]["skill_sd"]),
            skill_bias,
            newcomer_bias,
        )
        degrees = error_degrees(fit, log.players, skill_bias, newcomer_bias)
    warmup, size = warmup_plan(fit.base, data, game_age)
    if warmup > 0:
        data = with_warmup(data, warmup, size)
        scenario = Scenario.from_dict(data)
    if refine:
        simulated = after(simulated_log(scenario, seed + refine, step(refine)), warmup)
    return Calibration(fit, scenario, refined, simulated, warmup, errors, degrees, game_age)


def spread_errors(
    fit: Fit,
    players: int,
    skill_sd: float,
    skill_bias: list[float],
    newcomer_bias: list[float],
) -> dict[str, float]:
    """Return the standard errors of the written skill spread and newcomers a day that the
    refining simulations measured (a parametric bootstrap: each simulation is a log drawn from
    the scenario as fitted, and the same estimators read it), where at least two did.

    * **Skill spread** (``skill_sd``, the written value given): ``skill_bias`` holds each
      simulation's log(re-estimated / drawn), the estimator against the skills that simulation
      drew for the players in its log. Their sample variance ``v`` is the estimator's own spread
      from log to log, which the likelihood's curvature does not show (on six logs of a skill sd
      of 3.0 the estimates strayed 2.7% around the skills drawn; the curvature said 1.45%, the
      drawn players' own spread about the population's included). The relative error is
      ``sqrt(max(c^2, 1 / (2 n) + v) + v / J)``: this log's estimate (its estimator's spread
      ``v`` and its ``n`` players' drawn skills about the population's, ``sd / sqrt(2 n)``, or
      the curvature's ``c`` where larger) and the bias the ``J`` simulations measured, which the
      written value is divided by (``v / J``).
    * **Newcomers a day**: ``newcomer_bias`` holds each simulation's log(re-estimated /
      joined), the estimator against the newcomers who actually joined it. With the joins'
      Poisson noise over the log's ``T`` days the error is ``nu sqrt(1 / (nu T) + v)``, or the
      likelihood's own (observed information) where that is larger.

    :func:`error_degrees` gives the degrees of freedom each rests on.
    """
    return {
        k: e for k, (e, _) in _spread(fit, players, skill_sd, skill_bias, newcomer_bias).items()
    }


def error_degrees(
    fit: Fit,
    players: int,
    skill_bias: list[float],
    newcomer_bias: list[float],
) -> dict[str, float]:
    """Return the degrees of freedom of each standard error :func:`spread_errors` gives (``inf``
    where it rests on no sample variance).

    Each error's square is a sum of known parts (the drawn players' ``1 / (2 n)``, the joins'
    Poisson ``1 / (nu T)``, the curvature's or the likelihood's own) and multiples of the
    simulations' sample variance ``v``, which rests on ``J - 1`` degrees of freedom; the error's
    are Welch and Satterthwaite's, ``(sum)^2 / (a v)^2 * (J - 1)`` for the part ``a v``. With
    calibrate's default three simulations an error dominated by ``v`` has about 2: its 95%
    interval takes the t quantile of those (4.3 standard errors for 2, 2.8 for 4), not 1.96.
    """
    return {k: d for k, (_, d) in _spread(fit, players, 1.0, skill_bias, newcomer_bias).items()}


def t_quantile(degrees: float, level: float = 0.95) -> float:
    """Return the two-sided ``level`` quantile of Student's t on ``degrees`` degrees of freedom
    (the normal's where they are infinite)."""
    from scipy import stats

    tail = (1 + level) / 2
    if not math.isfinite(degrees):
        return float(stats.norm.ppf(tail))
    return float(stats.t.ppf(tail, degrees))


def _spread(
    fit: Fit,
    players: int,
    skill_sd: float,
    skill_bias: list[float],
    newcomer_bias: list[float],
) -> dict[str, tuple[float, float]]:
    """Return (standard error, degrees of freedom) per quantity (see :func:`spread_errors`)."""
    out: dict[str, tuple[float, float]] = {}

    def satterthwaite(total: float, part: float, j: int) -> float:
        return total**2 / (part**2 / (j - 1)) if part > 0 else math.inf

    if len(skill_bias) >= 2 and players > 0:
        j = len(skill_bias)
        v = float(np.var(skill_bias, ddof=1))
        curvature = fit.skill_sd_error / fit.skill_sd if fit.skill_sd > 0 else math.nan
        floor = curvature**2 if math.isfinite(curvature) else 0.0
        if floor >= 1.0 / (2.0 * players) + v:
            square, part = floor + v / j, v / j
        else:
            square, part = 1.0 / (2.0 * players) + v * (1 + 1 / j), v * (1 + 1 / j)
        out["skill_sd"] = (skill_sd * math.sqrt(square), satterthwaite(square, part, j))
    nu = fit.base.newcomers_per_day
    if len(newcomer_bias) >= 2 and nu > 0 and fit.days > 0:
        j = len(newcomer_bias)
        v = float(np.var(newcomer_bias, ddof=1))
        own = fit.base.errors.get("newcomers_per_day", math.nan)
        square = 1.0 / (nu * fit.days) + v
        measured = nu * math.sqrt(square)
        if math.isfinite(own) and own >= measured:
            out["newcomers_per_day"] = (own, math.inf)
        else:
            out["newcomers_per_day"] = (measured, satterthwaite(square, v, j))
    return out


#: The games a member at the fitted visit rate has played by the warm-up's end (lobbysim's
#: ``base.newcomer_games`` default: the games a player counts as a newcomer's), where the game's
#: age is not given.
WARMUP_GAMES = 20
#: The longest warm-up, in days, where the game's age is not given.
MAX_WARMUP_DAYS = 7
#: The longest warm-up, in days, a given game age makes (an older game is simulated as this old:
#: every refining simulation runs the warm-up before the log's span).
MAX_GAME_AGE_DAYS = 28


def game_age_problem(age: object, where: str = "--game-age") -> str | None:
    """Return what is wrong with a game's age in days (a finite number >= 0), or None."""
    if isinstance(age, bool) or not isinstance(age, int | float) or not 0 <= age < math.inf:
        return f"{where}: expected the game's age in days, a number >= 0, got {age!r}"
    return None


def warmup_plan(
    base_fit: BaseFit, data: Mapping[str, Any], game_age: float | None = None
) -> tuple[float, int]:
    """Return the written scenario's warm-up (minutes) and its base's size at minute 0.

    With ``game_age``, the days the game had run when the log starts, the warm-up is that many
    whole days (rounded; at most :data:`MAX_GAME_AGE_DAYS`; 0: the log starts at the game's
    launch, in an empty lobby): how closely the matchmaker pairs the players, and so the skill
    estimator's bias the refining simulations measure, depends on how long its raters have
    known them (docs/calibrate.md, "The game's age"). Without it, the warm-up is the whole days
    (at least 1, at most :data:`MAX_WARMUP_DAYS`) a member at the
    mean visit rate ``m`` (as refined) needs to play :data:`WARMUP_GAMES` games at ``g`` games
    a visit, ``ceil(20 / (m g))``: by then the raters know the members the log starts with, as
    the game's raters knew them, and the members are spread over their visits. The base model's
    lifetimes are memoryless, so its size needs no settling; the size at minute 0 is the one
    that grows (or shrinks) to the fitted size ``N0`` by the warm-up's end under the fitted
    newcomers ``nu`` and leave rate ``lambda``: ``nu / lambda + (N0 - nu / lambda) exp(lambda
    W)`` (``N0 - nu W`` without leaving). Where that falls below one member (a base growing
    fast), the warm-up is shortened by whole days until it does not (to none at worst).
    """
    if game_age is not None:
        days = min(math.floor(float(game_age) + 0.5), MAX_GAME_AGE_DAYS)
        return lead_in(base_fit.size, base_fit.newcomers_per_day, base_fit.leave_per_day, days)
    population, base = data["population"], data["base"]
    per_day = float(base["visits"]["per_day"])
    games = float(population["session_games_mean"])
    if not (per_day > 0 and games > 0):
        return 0.0, int(base["size"])
    days = min(max(math.ceil(WARMUP_GAMES / (per_day * games)), 1), MAX_WARMUP_DAYS)
    return lead_in(base_fit.size, base_fit.newcomers_per_day, base_fit.leave_per_day, days)


def lead_in(size: float, newcomers: float, leave: float, days: int) -> tuple[float, int]:
    """Return a warm-up of at most ``days`` whole days (minutes) and the base's size at its
    start such that a base of newcomers joining at ``newcomers`` a day and members leaving at
    ``leave`` a day holds ``size`` members, on average, at the warm-up's end: ``nu / lambda +
    (N0 - nu / lambda) exp(lambda W)`` (``N0 - nu W`` without leaving); shortened by whole days
    while that is below one member (to none at worst)."""

    def size_at_start(w: float) -> float:
        if leave > 0:
            steady = newcomers / leave
            return steady + (size - steady) * math.exp(leave * w)
        return size - newcomers * w

    while days > 0 and size_at_start(days) < 1:
        days -= 1
    return days * MINUTES_PER_DAY, max(1, round(size_at_start(days)))


def with_warmup(data: Mapping[str, Any], warmup: float, size: int) -> dict[str, Any]:
    """Return scenario data whose horizon starts ``warmup`` minutes earlier, as its warm-up, with
    the base's size at minute 0 ``size``."""
    out = dict(data)
    out["warmup"] = float(warmup)
    out["horizon"] = float(out["horizon"]) + warmup
    out["base"] = {**out["base"], "size": size}
    return out


def after(log: MatchLog, minute: float) -> MatchLog:
    """Return the matches of ``log`` that start at or after ``minute``, the times moved back by
    it (the part of a simulation after its warm-up, on the log's clock)."""
    if minute <= 0:
        return log
    from lobbysim.calibration.trend import window

    cut, _ = window(log, f"{minute!r}..")
    seats = cut.seats.copy()
    seats["start"] = seats["start"] - minute
    seats["end"] = seats["end"] - minute
    return replace(cut, seats=seats)


#: The most a refinement moves a quantity in one simulation (times or over): a log too small
#: to tell cannot swing it.
MAX_STEP = 1.5


def _refined_data(data: Mapping[str, Any], refined: Mapping[str, float]) -> dict[str, Any]:
    """Return the fitted scenario data with the refinement's factors applied (4 significant
    digits, as a scenario file says them; at least one game a visit)."""
    out = dict(data)
    base = dict(out["base"])
    visits = dict(base["visits"])
    visits["per_day"] = float(f"{visits['per_day'] * refined['per_day']:.4g}")
    if "shape" in visits and "shape" in refined:
        visits["shape"] = float(f"{visits['shape'] * refined['shape']:.4g}")
    base["visits"] = visits
    out["base"] = base
    population = dict(out["population"])
    population["session_games_mean"] = max(
        1.0, float(f"{population['session_games_mean'] * refined['session_games_mean']:.4g}")
    )
    population["skill_sd"] = float(f"{population['skill_sd'] * refined['skill_sd']:.4g}")
    out["population"] = population
    return out


# --------------------------------------------------------------------------------------------
# The log against the calibrated scenario's


def period_minutes(log: MatchLog) -> float:
    """Return the period :func:`daily` counts in: a day, or 6 hours for a log under 3 days."""
    span = log.span_minutes
    return MINUTES_PER_DAY if span >= 3 * MINUTES_PER_DAY else MINUTES_PER_DAY / 4


def daily(log: MatchLog, period: float = MINUTES_PER_DAY) -> pd.DataFrame:
    """Return per whole period of the log (a day by default; a partial last one is dropped) the
    matches and the distinct players, indexed by the period's start in days."""
    seats = log.seats
    start = float(seats["start"].min())
    index = ((seats["start"].to_numpy() - start) // period).astype(int)
    whole = max(math.floor((float(seats["end"].max()) - start) / period), 1)
    frame = pd.DataFrame({"period": index, "match": seats["match"], "player": seats["player"]})
    frame = frame[frame["period"] < whole]
    out = frame.groupby("period").agg(games=("match", "nunique"), players=("player", "nunique"))
    out = out.reindex(range(whole), fill_value=0)
    out.index = out.index * period / MINUTES_PER_DAY
    out.index.name = "day"
    return out


def hour_shares(log: MatchLog, offset: float = 0.0) -> np.ndarray:
    """Return the share of matches starting in each hour of day (minute 0 at ``offset``
    minutes after midnight)."""
    first = log.seats.drop_duplicates("match")
    hours = ((first["start"].to_numpy() + offset) // 60 % 24).astype(int)
    counts = np.bincount(hours, minlength=24).astype(float)
    return counts / counts.sum()


def online(log: MatchLog, step: float = 60.0) -> pd.Series:
    """Return the players in a match at each ``step`` minutes."""
    seats = log.seats
    times = np.arange(float(seats["start"].min()), float(seats["end"].max()), step)
    starts = np.sort(seats["start"].to_numpy())
    ends = np.sort(seats["end"].to_numpy())
    count = np.searchsorted(starts, times, side="right") - np.searchsorted(ends, times, "right")
    return pd.Series(count, index=times / MINUTES_PER_DAY, name="online")


def compare_logs(observed: MatchLog, simulated: MatchLog, offset: float = 0.0) -> dict[str, Any]:
    """Return the side-by-side quantities of the calibration report (see the module docstring)
    and the headline numbers: mean games and distinct players per period (a day; 6 hours for a
    log under 3 days) in each, and their relative differences."""
    period = period_minutes(observed)
    obs, sim = daily(observed, period), daily(simulated, period)
    n = min(len(obs), len(sim))
    obs, sim = obs.iloc[:n], sim.iloc[:n]
    games_obs, games_sim = float(obs["games"].mean()), float(sim["games"].mean())
    players_obs, players_sim = float(obs["players"].mean()), float(sim["players"].mean())
    hours_obs, hours_sim = hour_shares(observed, offset), hour_shares(simulated, offset)
    return {
        "period": period,
        "daily_observed": obs,
        "daily_simulated": sim,
        "games_per_day": (games_obs, games_sim, games_sim / games_obs - 1),
        "players_per_day": (players_obs, players_sim, players_sim / players_obs - 1),
        "hours": (hours_obs, hours_sim, float(np.corrcoef(hours_obs, hours_sim)[0, 1])),
        "games_per_visit": (
            find_sessions(observed).games,
            find_sessions(simulated).games,
        ),
        "online": (online(observed), online(simulated)),
    }
