"""A scenario fitted to a match log: the base, its visits, sessions, games and skills.

Each quantity has a stated method (docs/calibrate.md gives the same in prose):

* **Sessions** and **time of day** (the visits in each player's games, the hourly visit profile,
  the clock it warps): :mod:`lobbysim.calibration.sessions` states them.
* **The base.** A Poisson-process model of the whole log, fitted by maximum likelihood: N0
  members at the start and newcomers joining at nu per day (shaped by the profile; a newcomer's
  first visit is at joining); each member visits as a Poisson process at rate r w(t) per day
  while offline, r ~ Gamma(shape k, mean m), until leaving after an exponential lifetime (hazard
  lambda per day). The log is right-censored at its end. Each seen player is an initial member or
  a newcomer (a mixture; the Gamma integrates out in closed form and the lifetime by Gauss-
  Legendre quadrature), and initial members never seen count through their chance of no visit.
  The estimates are ``base.size`` = N0, ``newcomers_per_day`` = nu, ``visits.per_day`` = m,
  ``visits.shape`` = k and ``leave_per_day`` = lambda. A visit whose player gave up before any
  game is not in a match log, so m counts visits with at least one game.
* **Degenerate times.** Rounded or zero-length matches (:mod:`lobbysim.calibration.precision`)
  are found first; where there are any, the game length, the quit hazard and the sessions' gap
  threshold are fitted from the exact matches only, and a warning names the shares.
* **Games.** The mode from the sides and seats per match (1v1, team k v k, ffa of n); the
  scheduled length is the median match duration; in 1v1, the share of matches shorter than it
  gives the quit hazard (both players at risk, the one behind at the template's multiplier); the
  draw rate is reported (lobbysim's games have none).
* **Skill.** On 1v1 logs the players' skills as fixed effects of the results' likelihood, their
  spread deconvolved from the estimates' errors (a running game's pairings by skill do not bias
  it); otherwise the Bayesian rater replayed over the log in time order:
  :mod:`lobbysim.calibration.skills` states both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, optimize, special

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.precision import TimePrecision, time_precision
from lobbysim.calibration.sessions import (
    MINUTES_PER_DAY,
    Clock,
    FloatArray,
    Sessions,
    find_sessions,
    fit_profile,
)
from lobbysim.calibration.skills import skill_fit
from lobbysim.calibration.trend import activity_trend

__all__ = [
    "BASE_PARAMETERS",
    "NODES",
    "REGION_VISITS",
    "BaseFit",
    "Fit",
    "Games",
    "fit_base",
    "fit_games",
    "fit_groups",
    "fit_log",
    "fit_region_profiles",
]

#: Gauss-Legendre nodes for the integral over a member's unknown lifetime.
NODES = 16


@dataclass
class BaseFit:
    """The base's maximum-likelihood estimates (see the module docstring)."""

    size: float
    newcomers_per_day: float
    per_day: float
    shape: float
    leave_per_day: float
    log_likelihood: float
    seen: int
    newcomer_share: float  # posterior share of seen players who were newcomers
    errors: dict[str, float] = field(default_factory=dict)  # standard errors, by field


@dataclass
class Fit:
    """Everything fitted from a log, and the scenario fields it gives."""

    sessions: Sessions
    profile: FloatArray
    base: BaseFit
    mode: str
    team_size: int | None
    ffa_size: int | None
    length: float
    quit_rate: float | None
    draw_rate: float
    skill_sd: float
    beta2: float
    days: float
    notes: list[str] = field(default_factory=list)
    skill_method: str = ""
    offset: float = 0.0  # minutes after midnight (UTC) of the log's minute 0
    regions: dict[str, float] = field(default_factory=dict)  # share of players per region
    party_sizes: dict[int, float] = field(default_factory=dict)  # share of seats by party size
    region_profiles: dict[str, FloatArray] = field(default_factory=dict)  # UTC hours, mean 1
    warnings: list[str] = field(default_factory=list)  # what may mislead: degenerate times
    times: TimePrecision | None = None  # the log's degenerate times
    skill_sd_error: float = math.nan  # the skill spread's standard error (predictive likelihood)

    def scenario_data(self, template: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Return scenario data: ``template`` (plain scenario data) with the fitted fields set."""
        data: dict[str, Any] = {k: v for k, v in (template or {}).items()}
        data.setdefault("name", "calibrated")
        data["horizon"] = float(round(self.days) * MINUTES_PER_DAY) or data.get("horizon", 1440.0)
        data.setdefault("warmup", 0.0)
        data["arrivals"] = {"name": "none"}
        population = dict(data.get("population") or {})
        population["skill_mean"] = 0.0
        population["skill_sd"] = _r(self.skill_sd)
        population["prior"] = "population"
        population["session_games_mean"] = max(1.0, _r(self.sessions.games_per_visit))
        data["population"] = population
        game = dict(data.get("game") or {})
        game["mode"] = self.mode
        game.pop("team_size", None)
        game.pop("ffa_size", None)
        if self.mode == "team":
            game["team_size"] = self.team_size
        if self.mode == "ffa":
            game["ffa_size"] = self.ffa_size
        game["length"] = _r(self.length)
        game["beta2"] = self.beta2
        if self.quit_rate is not None:
            game["quit_rate"] = _r(self.quit_rate)
        data["game"] = game
        base = dict(data.get("base") or {})
        base["size"] = max(1, round(self.base.size))
        base["visits"] = {
            "name": "daily",
            "per_day": _r(self.base.per_day),
            "shape": _r(self.base.shape),
            "profile": [_r(w) for w in self.profile],
        }
        if self.offset:
            base["visits"]["start_hour"] = _r(self.offset / 60.0)
        base["newcomers_per_day"] = _r(self.base.newcomers_per_day)
        base["leave_per_day"] = _r(self.base.leave_per_day)
        data["base"] = base
        return data


def _r(value: float) -> float:
    """Round to 4 significant digits: what a scenario file says."""
    return float(f"{value:.4g}") if math.isfinite(value) else value


# --------------------------------------------------------------------------------------------
# The base


def fit_base(
    sessions: Sessions, players: int, end: float, clock: Clock, start: float = 0.0
) -> BaseFit:
    """Fit N0, nu, the Gamma rates and the leave hazard by maximum likelihood (see above)."""
    by_player = np.argsort(sessions.player, kind="stable")
    pl = sessions.player[by_player]
    first_index = np.searchsorted(pl, np.arange(players))
    n = np.bincount(sessions.player, minlength=players).astype(float)
    f = sessions.start[by_player][first_index]  # first visit
    last_index = first_index + n.astype(int) - 1
    t_last = sessions.start[by_player][last_index]
    online_days = np.bincount(
        sessions.player,
        weights=clock.warp(sessions.end) - clock.warp(sessions.start),
        minlength=players,
    )
    t_end_days = (end - start) / MINUTES_PER_DAY
    u0, u_end = float(clock.warp(np.array([start]))[0]), float(clock.warp(np.array([end]))[0])
    nodes, weights = np.polynomial.legendre.leggauss(NODES)

    # lifetime grids (real minutes) per player: from t_last (or first visit) to the end
    def grid(lower: FloatArray) -> tuple[FloatArray, FloatArray]:
        a = lower[:, None]
        half = (end - a) / 2
        points = a + half * (nodes[None, :] + 1)
        return points, half * weights[None, :]

    pts_init, wts_init = grid(t_last)
    u_pts_init = clock.warp(pts_init) - u0
    u_f = clock.warp(f) - u0
    pts_new, wts_new = pts_init, wts_init
    u_pts_new = clock.warp(pts_new) - u0 - u_f[:, None]
    # not at risk while online: an initial member's every visit; a newcomer's too, the joining
    # visit included (it lies within the exposure from joining on, and no visit starts in it).
    # It used to be left out of the newcomer's online time, which counted the joining visit as
    # exposure with no visit in it: newcomers looked slower to return than initial members, and
    # early ones were taken for initial members (on the base model's own draws, 6-hour visits:
    # newcomers 10% low, the base size 35% high; 1-hour visits: 2.8% and 9%).
    online_init = np.asarray(online_days, dtype=np.float64)
    online_new = online_init
    lgrid = np.linspace(0.0, 1.0, 33)

    def log_g(count: FloatArray, exposure: FloatArray, k: float, theta: float) -> FloatArray:
        # log of integral r^count e^{-r E} Gamma(r; k, theta) dr
        e = np.maximum(exposure, 0.0)
        return (
            special.gammaln(count + k)
            - special.gammaln(k)
            + count * np.log(theta)
            - (count + k) * np.log1p(theta * e)
        )

    def member(
        count: FloatArray,
        since: FloatArray,
        u_pts: FloatArray,
        wts: FloatArray,
        u_end_rel: FloatArray,
        online: FloatArray,
        joined: FloatArray,
        log_lam: float,
        k: float,
        theta: float,
    ) -> FloatArray:
        """Log of E_L[P(the visits | r, L)]: the lifetime L ~ Exp(lam) (per day) from joining,
        either ending at a quadrature node after the last visit or after the log's end (``lam``
        given by its log, which the optimiser may take below what exp can hold)."""
        lam = math.exp(log_lam)
        inner = log_g(count[:, None], u_pts - online[:, None], k, theta)
        left = log_lam - lam * since + inner + np.log(wts / MINUTES_PER_DAY)
        stay = -lam * (t_end_days - joined) + log_g(count, u_end_rel - online, k, theta)
        return np.asarray(np.logaddexp(special.logsumexp(left, axis=1), stay))

    since_init = (pts_init - start) / MINUTES_PER_DAY
    since_new = (pts_new - f[:, None]) / MINUTES_PER_DAY
    f_days = (f - start) / MINUTES_PER_DAY
    zeros = np.zeros(players)
    u_end_init = np.full(players, u_end - u0)
    u_end_new = u_end - u0 - u_f

    def parts(params: FloatArray) -> tuple[FloatArray, FloatArray, float]:
        n0, nu, k, mean, lam = np.exp(params)
        log_n0, log_nu, log_lam = float(params[0]), float(params[1]), float(params[4])
        theta = mean / k
        init = member(
            n, since_init, u_pts_init, wts_init, u_end_init, online_init, zeros, log_lam, k, theta
        )
        new = member(
            n - 1, since_new, u_pts_new, wts_new, u_end_new, online_new, f_days, log_lam, k, theta
        )
        # an initial member is unseen with chance E_L[(1 + theta U(min(L, T)))^-k]
        life = lgrid * t_end_days
        u_life = clock.warp(start + life * MINUTES_PER_DAY) - u0
        dens = lam * np.exp(-lam * life) * (1 + theta * u_life) ** (-k)
        unseen = float(integrate.trapezoid(dens, life)) + math.exp(-lam * t_end_days) * (
            1 + theta * (u_end - u0)
        ) ** (-k)
        a = log_n0 + init
        # the product of w over every visit, the newcomer's joining visit included, is common
        # to both and left out
        b = log_nu + new
        expected = n0 * (1 - unseen) + nu * (u_end - u0)
        return a, b, expected

    def negative(params: FloatArray) -> float:
        if not np.all(np.abs(params) < LOG_BOUND):
            return 1e300  # a log too small to tell can send the search where exp overflows
        a, b, expected = parts(params)
        value = -(float(np.logaddexp(a, b).sum()) - expected)
        return value if math.isfinite(value) else 1e300

    per_day0 = max(float(n.sum()) / max(players, 1) / max(t_end_days, 1e-9), 1e-3)
    x0 = np.log(
        [players * 0.9, max(players * 0.1 / max(t_end_days, 1e-9), 0.1), 2.0, per_day0, 0.01]
    )
    result = optimize.minimize(
        negative, x0, method="Nelder-Mead", options={"maxiter": 4000, "xatol": 1e-6, "fatol": 1e-6}
    )
    n0, nu, k, mean, lam = np.exp(result.x)
    a, b, _ = parts(result.x)
    share = float(np.mean(np.exp(b - np.logaddexp(a, b))))
    if nu * t_end_days < BOUNDARY_NEWCOMERS:
        # on the boundary: the others' errors with the rate held there (the flat direction
        # out of the information), the rate's the profile likelihood's bound
        x = result.x

        def held(rest: FloatArray) -> float:
            return float(negative(np.insert(rest, 1, x[1])))

        errors = _standard_errors(held, np.delete(x, 1))
        errors.insert(1, _profile_bound(negative, x, float(result.fun), 1, t_end_days))
    else:
        errors = _standard_errors(negative, result.x)
    return BaseFit(
        float(n0),
        float(nu),
        float(mean),
        float(k),
        float(lam),
        float(-result.fun),
        players,
        share,
        dict(zip(BASE_PARAMETERS, errors, strict=True)),
    )


#: Fewer newcomers than this over the log's span: the rate's estimate lies on its boundary
#: (none), where the observed information says nothing (it gave 0.000000046 a day on a
#: two-day log of 500 members); the error is then the profile likelihood's one-sided bound.
BOUNDARY_NEWCOMERS = 0.5


def _profile_bound(negative: Any, x: FloatArray, best: float, index: int, days: float) -> float:
    """Return the rate (per day) of parameter ``index`` (a log-rate estimated at about 0) up to
    which the profile log-likelihood stays within 1/2 of its maximum, the other parameters
    fitted again at each trial (a one-sided interval of one standard error's likelihood ratio;
    bisection on the log scale between one newcomer over the span and 10^4 a day)."""

    def drop(log_rate: float) -> float:
        others = np.delete(x, index)

        def fixed(rest: FloatArray) -> float:
            return float(negative(np.insert(rest, index, log_rate)))

        found = optimize.minimize(
            fixed,
            others,
            method="Nelder-Mead",
            options={"maxiter": 400, "xatol": 1e-3, "fatol": 1e-3},
        )
        return float(found.fun) - best

    lo, hi = math.log(0.01 / max(days, 1e-9)), math.log(1e4)
    if drop(lo) >= 0.5:
        return math.exp(lo)
    if drop(hi) < 0.5:
        return math.nan
    for _ in range(8):  # to 2^-8 of the range in log: within 5% of the bound
        mid = (lo + hi) / 2
        if drop(mid) < 0.5:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


#: The largest magnitude of a log-parameter the base's search may try (exp(40) ~ 2e17: beyond
#: any base size or rate, and well within what exp holds).
LOG_BOUND = 40.0

#: The base's parameters, in the order of the fit's vector (each fitted on a log scale).
BASE_PARAMETERS = ("size", "newcomers_per_day", "shape", "per_day", "leave_per_day")


def _standard_errors(negative: Any, x: FloatArray, step: float = 1e-3) -> list[float]:
    """Return each parameter's standard error from the observed information (the numerical
    Hessian of the negative log-likelihood on the log scale, by the delta method: se(p) =
    p se(log p)); NaN where the Hessian is not invertible."""
    d = len(x)
    h = np.zeros((d, d))
    f0 = negative(x)
    for i in range(d):
        for j in range(i, d):
            e_i, e_j = np.eye(d)[i] * step, np.eye(d)[j] * step
            value = (
                (
                    negative(x + e_i + e_j)
                    - negative(x + e_i - e_j)
                    - negative(x - e_i + e_j)
                    + negative(x - e_i - e_j)
                )
                / (4 * step * step)
                if i != j
                else (negative(x + e_i) - 2 * f0 + negative(x - e_i)) / (step * step)
            )
            h[i, j] = h[j, i] = value
    try:
        cov = np.linalg.inv(h)
    except np.linalg.LinAlgError:
        return [math.nan] * d
    diag = np.diag(cov)
    return [
        float(math.exp(v) * math.sqrt(c)) if c > 0 else math.nan
        for v, c in zip(x, diag, strict=True)
    ]


# --------------------------------------------------------------------------------------------
# Games


@dataclass
class Games:
    """The games' shape: mode, sizes, length, quits and draws."""

    mode: str
    team_size: int | None
    ffa_size: int | None
    length: float
    quit_rate: float | None
    draw_rate: float
    durations: FloatArray


def fit_games(
    log: MatchLog, behind_multiplier: float = 1.0, exact: NDArray[np.bool_] | None = None
) -> Games:
    """Return the mode (the most common shape of sides x seats), the scheduled length (the
    median duration), the 1v1 quit hazard and the draw rate (see the module docstring); with
    ``exact`` (per match) the length and the quit hazard are of those matches only."""
    seats = log.seats
    match = seats["match"].to_numpy()
    starts = np.full(log.matches, np.nan)
    ends = np.full(log.matches, np.nan)
    starts[match] = seats["start"].to_numpy()
    ends[match] = seats["end"].to_numpy()
    durations = ends - starts
    per_match = seats.groupby("match").agg(
        sides=("side", "nunique"), seats=("player", "size"), ranks=("rank", "nunique")
    )
    shape = (per_match["sides"].astype(str) + "x" + per_match["seats"].astype(str)).mode()[0]
    sides, count = (int(v) for v in shape.split("x"))
    if sides == 2 and count == 2:
        mode, team, ffa = "1v1", None, None
    elif sides == 2:
        mode, team, ffa = "team", count // 2, None
    else:
        mode, team, ffa = "ffa", None, sides
    timed = durations if exact is None else durations[exact]
    length = float(np.median(timed))
    quit_rate = None
    if mode == "1v1" and length > 0:
        early = float(np.mean(timed < length * (1 - 1e-6)))
        # both players at risk; the one behind at the multiplier: exp(-q (1 + m) L) = 1 - early
        quit_rate = max(0.0, -math.log(max(1 - early, 1e-9)) / ((1 + behind_multiplier) * length))
    draw_rate = float(np.mean(per_match["ranks"] == 1))
    return Games(mode, team, ffa, length, quit_rate, draw_rate, durations)


# --------------------------------------------------------------------------------------------
# Regions and parties


def fit_groups(log: MatchLog) -> tuple[dict[str, float], dict[int, float]]:
    """Return the share of players per region (each player's commonest region) and the share
    of seats by party size (a seat without a party is of size 1), where the log has them."""
    seats = log.seats
    regions: dict[str, float] = {}
    if log.has("region"):
        known = seats.dropna(subset=["region"])
        if not known.empty:
            each = known.groupby("player")["region"].agg(lambda r: r.mode().iloc[0])
            regions = {str(k): float(v) for k, v in each.value_counts(normalize=True).items()}
    parties: dict[int, float] = {}
    if log.has("party"):
        party = seats["party"].to_numpy()
        size = np.ones(len(seats), dtype=np.int64)
        grouped = party >= 0
        if grouped.any():
            keys = seats.loc[grouped, ["match", "party"]]
            size[grouped] = keys.groupby(["match", "party"])["match"].transform("size").to_numpy()
        values, counts = np.unique(size, return_counts=True)
        parties = {int(v): float(c / counts.sum()) for v, c in zip(values, counts, strict=True)}
    return regions, parties


#: The fewest visits a region needs for its own profile.
REGION_VISITS = 200


def fit_region_profiles(
    log: MatchLog, sessions: Sessions, first: FloatArray, end: float, offset: float
) -> dict[str, FloatArray]:
    """Return each region's hourly visit profile (UTC hours, mean 1; :func:`fit_profile` on its
    own players' visits), for regions with at least :data:`REGION_VISITS` visits: where regions
    play at different hours, their profiles are shifted copies of one local profile."""
    if not log.has("region"):
        return {}
    known = log.seats.dropna(subset=["region"])
    if known.empty:
        return {}
    home = known.groupby("player")["region"].agg(lambda r: r.mode().iloc[0])
    region_of = np.full(log.players, "", dtype=object)
    region_of[home.index.to_numpy()] = home.to_numpy(dtype=object)
    out: dict[str, FloatArray] = {}
    for region in sorted(set(home.to_numpy(dtype=object).tolist())):
        players = np.flatnonzero(region_of == region)
        chosen = np.isin(sessions.player, players)
        if chosen.sum() < REGION_VISITS:
            continue
        code = np.full(log.players, -1, dtype=np.int64)
        code[players] = np.arange(len(players))
        own = Sessions(
            sessions.threshold,
            code[sessions.player[chosen]],
            sessions.start[chosen],
            sessions.end[chosen],
            sessions.games[chosen],
            0,
            0,
        )
        out[str(region)] = fit_profile(own, first[players], end, offset)
    return out


# --------------------------------------------------------------------------------------------
# Everything


def _offset(log: MatchLog) -> float:
    if log.origin is None:
        return 0.0
    return float((log.origin - log.origin.normalize()).total_seconds() / 60.0)


def _base_of(
    log: MatchLog, offset: float
) -> tuple[TimePrecision, NDArray[np.bool_] | None, Sessions, FloatArray, FloatArray, BaseFit]:
    """Return the log's time precision, its exact matches (None: all), sessions, each player's
    start of exposure, the hourly profile and the base fitted to them."""
    times = time_precision(log)
    exact = times.exact if times.degenerate and times.usable else None
    sessions = find_sessions(log, times if exact is not None else None)
    end = float(log.seats["end"].max())
    start = float(log.seats["start"].min())
    first = np.full(log.players, np.inf)
    np.minimum.at(first, sessions.player, sessions.start)
    early = first <= start + MINUTES_PER_DAY  # exposure from the start for the first day's
    exposure_from = np.where(early, start, first)
    profile = fit_profile(sessions, exposure_from, end, offset)
    base = fit_base(sessions, log.players, end, Clock(profile, offset), start)
    return times, exact, sessions, exposure_from, profile, base


def fit_log(
    log: MatchLog, *, beta2: float = 2.5, behind_multiplier: float = 1.0, min_games: int = 20
) -> Fit:
    """Fit every quantity of the module docstring to a log."""
    if log.seats.empty:
        raise ValueError("the log has no seats left to fit")
    offset = _offset(log)
    times, exact, sessions, exposure_from, profile, base = _base_of(log, offset)
    end = float(log.seats["end"].max())
    start = float(log.seats["start"].min())
    games = fit_games(log, behind_multiplier, exact)
    skill_sd, skill_method, skill_sd_error = skill_fit(log, beta2, min_games)
    notes = []
    trend = activity_trend(log)
    warnings = [w for w in (times.warning(), trend.warning(log)) if w]
    if trend.note():
        notes.append(str(trend.note()))
    if games.draw_rate > 0:
        notes.append(
            f"{games.draw_rate:.1%} of the matches were drawn; lobbysim's games have no draws, "
            "so the scenario cannot reproduce them (they are left out of the skill replay)"
        )
    if log.skipped_text():
        notes.append(log.skipped_text())
    regions, parties = fit_groups(log)
    region_profiles = fit_region_profiles(log, sessions, exposure_from, end, offset)
    if regions:
        notes.append(
            "regions (share of players): "
            + ", ".join(f"{k} {v:.1%}" for k, v in regions.items())
            + "; a world's data centres and latencies are not in a match log: the scenario "
            "keeps the template's world, if it has one"
        )
    if parties:
        notes.append(
            "seats by party size: "
            + ", ".join(f"{k}: {v:.1%}" for k, v in parties.items())
            + "; lobbysim's parties are of guests, so the scenario's base plays solo"
        )
    return Fit(
        sessions,
        profile,
        base,
        games.mode,
        games.team_size,
        games.ffa_size,
        games.length,
        games.quit_rate,
        games.draw_rate,
        skill_sd,
        beta2,
        (end - start) / MINUTES_PER_DAY,
        notes,
        skill_method,
        offset,
        regions,
        parties,
        region_profiles,
        warnings,
        times,
        skill_sd_error,
    )
