"""The calibration report: what was fitted, and the log beside the calibrated scenario's own.

Opens with the fitted parameters (each with its standard error where the fit gives one, a 95%
interval on the t quantile of its degrees of freedom where the refining simulations measured
it, and the method), the warnings (degenerate times, an activity trend), the notes (rows
skipped, draws the scenario cannot make) and the scenario file written;
then, side by side, the log and one simulation of the calibrated scenario over the same span
(from the end of its warm-up): one figure of the games and distinct players per day, the
hour-of-day share of matches and the games per visit, one of the players in a match over time
and the match lengths; then, where the raters were scored on the log, their scores and
calibration curves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.run import (
    MAX_GAME_AGE_DAYS,
    MAX_WARMUP_DAYS,
    WARMUP_GAMES,
    Calibration,
    compare_logs,
    t_quantile,
)
from lobbysim.reporting.document import (
    Block,
    FigureOutcome,
    md_code,
    md_figure,
    md_heading,
    md_items,
    md_table,
    md_text,
    write_documents,
)
from lobbysim.reporting.figures import new_panels, save_figure

FIGURE = "calibration.png"
SCORES_FIGURE = "rater_calibration.png"


def parameter_rows(calibration: Calibration) -> list[tuple[str, str, str]]:
    """Return (field, value, how) per fitted scenario field."""
    fit, scenario = calibration.fit, calibration.scenario
    assert scenario.base is not None
    errors = fit.base.errors
    visits = dict(scenario.base.visits.params)
    refined = calibration.refined

    def se(name: str) -> str:
        e = errors.get(name, math.nan)
        return f" ± {e:.2g}" if math.isfinite(e) else ""

    def measured(name: str) -> str:
        e = calibration.errors.get(name, math.nan)
        if not math.isfinite(e):
            return ""
        return f"; standard error {e:.2g} as the refining simulations measured it" + (
            f", {_interval(calibration, name, _written(calibration, name))}"
            if name in calibration.degrees
            else ""
        )

    rows = [
        (
            "base.size",
            f"{scenario.base.size}",
            f"maximum likelihood (base model): {fit.base.size:,.0f}{se('size')} at the log's "
            "start"
            + (
                f"; {scenario.base.size:,} at minute 0, growing to it by the warm-up's end"
                if calibration.warmup > 0 and scenario.base.size != round(fit.base.size)
                else ""
            ),
        ),
        (
            "warmup",
            f"{calibration.warmup:g} min",
            f"{calibration.warmup / 1440:g} days before the log's span (horizon "
            f"{scenario.horizon:g} min): " + warmup_reason(calibration),
        ),
        (
            "base.newcomers_per_day",
            f"{scenario.base.newcomers_per_day:g}",
            f"maximum likelihood {fit.base.newcomers_per_day:.4g}{se('newcomers_per_day')}"
            + (
                f", refined x{refined['newcomers_per_day']:.4f} by simulation"
                if "newcomers_per_day" in refined
                else ""
            )
            + measured("newcomers_per_day"),
        ),
        (
            "base.leave_per_day",
            f"{scenario.base.leave_per_day:g}{se('leave_per_day')}",
            "maximum likelihood, right-censored",
        ),
        (
            "base.visits.per_day",
            f"{visits['per_day']:g}",
            f"maximum likelihood {fit.base.per_day:.4g}{se('per_day')}"
            + (f", refined x{refined['per_day']:.4f} by simulation" if refined else ""),
        ),
        (
            "base.visits.shape",
            f"{visits['shape']:g}{se('shape')}",
            f"maximum likelihood (Gamma): {fit.base.shape:.4g}"
            + (f", refined x{refined['shape']:.4f}" if "shape" in refined else ""),
        ),
        ("base.visits.profile", "24 weights", "Poisson estimate per hour (figure)"),
        (
            "population.session_games_mean",
            f"{scenario.population['session_games_mean']:g}",
            f"mean games per visit {fit.sessions.games_per_visit:.4g} (gap threshold "
            f"{fit.sessions.threshold:.3g} min)"
            + (f", refined x{refined['session_games_mean']:.4f}" if refined else ""),
        ),
        (
            "population.skill_sd",
            f"{scenario.population['skill_sd']:g}",
            (
                f"{fit.skill_method} (probit, beta^2 {fit.beta2:g}, deconvolved)"
                if fit.skill_method == "fixed effects"
                else f"Gaussian replay, {fit.skill_method} (beta^2 {fit.beta2:g})"
            )
            + f": {fit.skill_sd:.4g}"
            + (f", refined x{refined['skill_sd']:.4f}" if "skill_sd" in refined else "")
            + measured("skill_sd"),
        ),
        (
            "game.mode",
            scenario.game.mode
            + (
                f" ({scenario.game.team_size} v {scenario.game.team_size})"
                if scenario.game.mode == "team"
                else f" ({scenario.game.ffa_size} players)"
                if scenario.game.mode == "ffa"
                else ""
            ),
            "the commonest sides x seats",
        ),
        ("game.length", f"{scenario.game.length:g} min", "median match duration"),
    ]
    if fit.quit_rate is not None:
        rows.append(
            (
                "game.quit_rate",
                f"{scenario.game.quit_rate:g} per min",
                "share of 1v1 matches shorter than the length",
            )
        )
    rows.append(("draw rate", f"{fit.draw_rate:.2%}", "matches with every side ranked equal"))
    return rows


def warmup_reason(calibration: Calibration) -> str:
    """Return why the warm-up is as long as it is: the game's age as given, or the games a member
    plays in it (:func:`lobbysim.calibration.run.warmup_plan`)."""
    age = calibration.game_age
    if age is None:
        return (
            f"a member at the mean visit rate plays {WARMUP_GAMES} games by its end (at most "
            f"{MAX_WARMUP_DAYS} days; --game-age sets it)"
        )
    capped = f", at most {MAX_GAME_AGE_DAYS}" if age > MAX_GAME_AGE_DAYS + 0.5 else ""
    return f"the game's age when the log starts, {age:g} days as given (whole days{capped})"


def _pm(value: float, error: float) -> str:
    """Return ``"464 ± 38"``: the value to the error's precision (3 significant digits
    without an error)."""
    if not math.isfinite(error) or error <= 0:
        return f"{value:.3g}"
    digits = max(0, 1 - math.floor(math.log10(error)))
    return f"{value:,.{digits}f} ± {error:,.{digits}f}"


def _written(calibration: Calibration, name: str) -> float:
    """Return the written value of ``skill_sd`` or ``newcomers_per_day``."""
    scenario = calibration.scenario
    if name == "skill_sd":
        return float(scenario.population["skill_sd"])
    assert scenario.base is not None
    return float(scenario.base.newcomers_per_day)


def _interval(calibration: Calibration, name: str, value: float) -> str:
    """Return ``"95% interval 1.7 to 2.4 (t on 2.5 degrees of freedom)"`` for an error the
    refining simulations measured: the t quantile of the degrees of freedom it rests on
    (:func:`lobbysim.calibration.run.error_degrees`; the normal's where they are infinite)."""
    error, degrees = calibration.errors[name], calibration.degrees[name]
    q = t_quantile(degrees)
    lo, hi = value - q * error, value + q * error
    if name == "newcomers_per_day":
        lo = max(lo, 0.0)
    digits = max(0, 1 - math.floor(math.log10(error))) if error > 0 else 3
    places = f"{degrees:.2g}" if degrees < 100 else f"{degrees:,.0f}"  # 2.5, 14, 860
    on = f"t on {places} degrees of freedom" if math.isfinite(degrees) else "normal"
    return f"95% interval {lo:,.{digits}f} to {hi:,.{digits}f} ({on})"


def fitted_lines(calibration: Calibration) -> list[str]:
    """Return the fitted values as the terminal shows them, each with its standard error where
    the fit gives one (a refined value's error scaled by the refinement's factor; the skill
    spread's and the newcomers' as the refining simulations measured them, where they did:
    :func:`lobbysim.calibration.run.spread_errors`)."""
    fit, scenario = calibration.fit, calibration.scenario
    assert scenario.base is not None
    base, errors, refined = scenario.base, fit.base.errors, calibration.refined
    nan = math.nan
    visits = dict(base.visits.params)
    per_day_factor = refined.get("per_day", 1.0)
    size = _pm(float(fit.base.size), errors.get("size", nan))
    newcomers = _pm(
        base.newcomers_per_day,
        calibration.errors.get("newcomers_per_day", errors.get("newcomers_per_day", nan)),
    )
    leave = _pm(base.leave_per_day, errors.get("leave_per_day", nan))
    per_day = _pm(float(visits["per_day"]), errors.get("per_day", nan) * per_day_factor)
    shape = _pm(float(visits["shape"]), errors.get("shape", nan) * refined.get("shape", 1.0))
    how = ", refined by simulation" if refined else ""
    skill = _pm(
        float(scenario.population["skill_sd"]),
        calibration.errors.get("skill_sd", fit.skill_sd_error * refined.get("skill_sd", 1.0)),
    )
    game = scenario.game
    quits = f", quit rate {game.quit_rate:.3g} a minute" if fit.quit_rate is not None else ""
    intervals = [
        f"  {label}: {_interval(calibration, name, _written(calibration, name))}"
        for name, label in (("skill_sd", "skill sd"), ("newcomers_per_day", "newcomers a day"))
        if name in calibration.degrees and name in calibration.errors
    ]
    return [
        f"Fitted over {fit.days:.3g} days (± one standard error): base size {size}, "
        f"newcomers {newcomers} a day, leaving {leave} a day",
        f"  visits {per_day} a member a day{how} (Gamma shape {shape}), "
        f"{scenario.population['session_games_mean']:.3g} games a visit",
        f"  games {game.mode}, {game.length:.3g} min{quits}; skill sd {skill} (beta^2 "
        f"{fit.beta2:g})",
        *intervals,
    ] + (
        [
            f"  warm-up {calibration.warmup / 1440:g} days before the log's span (base of "
            f"{base.size:,} at minute 0"
            + (
                f"; the game's age as given, {calibration.game_age:g} days)"
                if calibration.game_age is not None
                else ")"
            )
        ]
        if calibration.warmup > 0
        else []
    )


def calibration_figure(
    calibration: Calibration, comparison: Mapping[str, Any] | None, out: Path
) -> FigureOutcome:
    """Draw the log beside the calibrated scenario's simulation (see the module docstring);
    ``comparison`` is :func:`~lobbysim.calibration.run.compare_logs` of the two (None: no
    simulation)."""
    title = "The log beside the calibrated scenario (one simulation over the same span)"
    period = float(comparison["period"]) if comparison is not None else 1440.0
    per = "per day" if period >= 1440 else f"per {period / 60:g} hours"
    caption = (
        "Black: the log; orange: one simulation of the calibrated scenario (from the end of its "
        f"warm-up). Left: games (solid) and distinct players (dashed) {per}; middle: the "
        "hour-of-day share of matches (grey: the fitted visit profile, as shares); right: games "
        "per visit. The players in a match and the match lengths are in the next figure."
    )
    if comparison is None:
        return FigureOutcome(FIGURE, title, caption, skipped="no simulation (refine 0)")
    c = comparison
    fig, axes = new_panels(3, 13.0, 3.6)
    obs, simd = c["daily_observed"], c["daily_simulated"]
    ax = axes[0]
    ax.plot(obs.index, obs["games"], "k-o", ms=3, label="games (log)")
    ax.plot(simd.index, simd["games"], "-o", color="tab:orange", ms=3, label="games (calibrated)")
    ax.plot(obs.index, obs["players"], "k--", label="players (log)")
    ax.plot(simd.index, simd["players"], "--", color="tab:orange", label="players (calibrated)")
    ax.set_xlabel("day")
    ax.set_ylabel("per day" if c["period"] >= 1440 else f"per {c['period'] / 60:g} hours")
    # four lines that can span the whole width: the legend goes in head-room above them
    top = max(float(np.nanmax(f[k])) for f in (obs, simd) for k in ("games", "players"))
    ax.set_ylim(0.0, 1.45 * top if top > 0 else 1.0)
    ax.legend(fontsize=7, loc="upper center", ncols=2)
    hours_obs, hours_sim, corr = c["hours"]
    ax = axes[1]
    ax.plot(range(24), hours_obs, "k-o", ms=3, label="log")
    ax.plot(range(24), hours_sim, "-o", color="tab:orange", ms=3, label="calibrated")
    profile = calibration.fit.profile / calibration.fit.profile.sum()
    ax.plot(range(24), profile, color="grey", lw=1, label="fitted profile")
    ax.set_xlabel(f"hour of day (r = {corr:.3f})")
    ax.set_ylabel("share of matches")
    ax.legend(fontsize=7)
    per_visit_obs, per_visit_sim = c["games_per_visit"]
    ax = axes[2]
    top = int(max(np.quantile(per_visit_obs, 0.99), 2))
    bins = np.arange(1, top + 2) - 0.5
    _step_histograms(ax, per_visit_obs, per_visit_sim, bins)
    ax.set_xlabel("games per visit")
    ax.legend(fontsize=7)
    path = save_figure(fig, out / FIGURE)
    return FigureOutcome(FIGURE, title, caption, path=path)


def online_figure(
    calibration: Calibration, observed: MatchLog, comparison: Mapping[str, Any] | None, out: Path
) -> FigureOutcome:
    """Draw players in a match over time and the match lengths, log beside calibrated."""
    file = "calibration_online.png"
    title = "Players in a match over time, and match lengths"
    caption = (
        "Black: the log; orange: one simulation of the calibrated scenario (from the end of its "
        "warm-up). Left: the players in a match, hour by hour; right: the match lengths."
    )
    sim = calibration.simulated
    if sim is None or comparison is None:
        return FigureOutcome(file, title, caption, skipped="no simulation (refine 0)")
    c = comparison
    fig, (left, right) = new_panels(2, 13.0, 3.4)
    on_obs, on_sim = c["online"]
    left.plot(on_obs.index, on_obs.to_numpy(), "k-", lw=1, label="log")
    left.plot(on_sim.index, on_sim.to_numpy(), "-", color="tab:orange", lw=1, label="calibrated")
    left.set_xlabel("day")
    left.set_ylabel("players in a match")
    left.legend(fontsize=7)
    d_obs = _durations(observed)
    d_sim = _durations(sim)
    hi = float(np.quantile(np.concatenate([d_obs, d_sim]), 0.995)) or 1.0
    bins = np.linspace(0, hi * 1.05, 40)
    _step_histograms(right, d_obs, d_sim, bins)
    right.set_xlabel("match length (minutes)")
    right.legend(fontsize=7)
    path = save_figure(fig, out / file)
    return FigureOutcome(file, title, caption, path=path)


def region_profiles_figure(calibration: Calibration, out: Path) -> FigureOutcome | None:
    """Draw each region's hourly visit profile (UTC hours), where the log has regions."""
    profiles = calibration.fit.region_profiles
    if not profiles:
        return None
    file = "region_profiles.png"
    title = "Visits by hour of day, region by region (UTC)"
    caption = (
        "Each region's fitted visit profile (mean 1) by UTC hour: regions that play at the same "
        "local hours peak apart by their time zones. The scenario has one profile; a world "
        "(its regions' time zones) comes from the template."
    )
    fig, (ax,) = new_panels(1, 7.0, 3.6)
    for region, weights in profiles.items():
        peak = int(np.argmax(weights))
        ax.plot(range(24), weights, "-o", ms=3, label=f"{region} (peak {peak:02d}:00 UTC)")
    ax.set_xlabel("hour of day (UTC)")
    ax.set_ylabel("visit weight")
    ax.legend(fontsize=7)
    path = save_figure(fig, out / file)
    return FigureOutcome(file, title, caption, path=path)


def rater_calibration_figure(curves: pd.DataFrame, out: Path) -> FigureOutcome:
    """Draw each rater's win-probability calibration on the scored part of the log: the mean
    predicted probability against the observed share of wins, per bin (the diagonal is a
    perfectly calibrated rater; a point's size grows with its matches)."""
    title = "Win-probability calibration of the raters on the log"
    caption = (
        "Per bin of predicted probability (the part of the log each rater was scored on; each "
        "pair counted from both sides): the mean prediction against the share of those wins "
        "that happened. On the diagonal, a rater's probabilities mean what they say."
    )
    if curves.empty:
        return FigureOutcome(SCORES_FIGURE, title, caption, skipped="no rater was scored")
    part = "second" if "part" in curves and (curves["part"] == "second").any() else None
    data = curves[curves["part"] == part] if part is not None else curves
    fig, (ax,) = new_panels(1, 6.0, 4.6)
    ax.plot([0, 1], [0, 1], color="grey", lw=1)
    for rater, rows in data.groupby("rater", sort=False):
        rows = rows[rows["n"] > 0]
        ax.scatter(
            rows["predicted"],
            rows["observed"],
            s=8 + 40 * rows["n"] / rows["n"].max(),
            label=str(rater),
        )
        ax.plot(rows["predicted"], rows["observed"], lw=0.8)
    ax.set_xlabel("predicted probability that a side wins")
    ax.set_ylabel("observed share")
    ax.legend(fontsize=7)
    path = save_figure(fig, out / SCORES_FIGURE)
    return FigureOutcome(SCORES_FIGURE, title, caption, path=path)


def _step_histograms(
    ax: Any, observed: np.ndarray, simulated: np.ndarray, bins: np.ndarray
) -> None:
    """Draw the log's and the calibrated scenario's densities as outlines on one axes."""
    for values, colour, label in ((observed, "k", "log"), (simulated, "tab:orange", "calibrated")):
        ax.hist(
            values, bins=bins.tolist(), density=True, histtype="step", color=colour, label=label
        )


def _durations(log: MatchLog) -> np.ndarray:
    first = log.seats.drop_duplicates("match")
    return np.asarray(first["end"].to_numpy() - first["start"].to_numpy())


def write_calibration_report(
    calibration: Calibration,
    observed: MatchLog,
    out: Path,
    scenario_file: str,
    *,
    scores: Sequence[str] = (),
    curves: pd.DataFrame | None = None,
    comparison: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` of a calibration into ``out`` (``comparison``:
    :func:`~lobbysim.calibration.run.compare_logs` of the log and the simulation, if the caller
    has it already)."""
    fit = calibration.fit
    if comparison is None and calibration.simulated is not None:
        comparison = compare_logs(observed, calibration.simulated, fit.offset)
    blocks: list[Block] = [md_heading(f"Calibration: {observed.source}", 1)]
    lead = (
        f"**{observed.matches:,} matches of {observed.players:,} players over "
        f"{fit.days:.1f} days, fitted into {scenario_file}.**"
    )
    blocks.append(md_text(lead))
    if comparison is not None:
        c = comparison
        g, p = c["games_per_day"], c["players_per_day"]
        per = "a day" if c["period"] >= 1440 else f"per {c['period'] / 60:g} hours"
        blocks.append(
            md_text(
                "The calibrated scenario, simulated over the same span, plays "
                f"{g[1]:,.0f} games {per} against the log's {g[0]:,.0f} ({g[2]:+.1%}) with "
                f"{p[1]:,.0f} distinct players {per} against {p[0]:,.0f} ({p[2]:+.1%}); "
                f"the hour-of-day shares correlate at r = {c['hours'][2]:.3f}."
            )
        )
    blocks.append(md_table(["field", "value", "how"], parameter_rows(calibration)))
    if fit.warnings:
        blocks.append(md_items([("Warning", w) for w in fit.warnings]))
    if fit.notes:
        blocks.append(md_items([("Note", n) for n in fit.notes]))
    blocks.append(md_figure(calibration_figure(calibration, comparison, out)))
    blocks.append(md_figure(online_figure(calibration, observed, comparison, out)))
    regional = region_profiles_figure(calibration, out)
    if regional is not None:
        blocks.append(md_figure(regional))
    if scores:
        blocks.append(md_heading("Raters scored on the log"))
        blocks.append(md_code("\n".join(scores)))
        if curves is not None:
            blocks.append(md_figure(rater_calibration_figure(curves, out)))
    blocks.append(md_heading("Visits"))
    visits = len(fit.sessions.games)
    blocks.append(
        md_text(
            f"{visits:,} visits found, {visits / max(fit.days, 1e-9):,.0f} a day: games closer "
            f"than {fit.sessions.threshold:.3g} minutes belong to one visit "
            f"({fit.sessions.gaps_within:,} gaps within visits, {fit.sessions.gaps_between:,} "
            f"between); {fit.sessions.games_per_visit:.3g} games per visit. Of the players "
            f"seen, {fit.base.newcomer_share:.0%} are newcomers by the base model's posterior."
        )
    )
    return write_documents(blocks, out, f"Calibration: {observed.source}")
