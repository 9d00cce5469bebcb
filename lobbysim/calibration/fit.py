"""A scenario fitted to a match log: the base, its visits, sessions, games and skills.

Each quantity has a stated method (docs/calibrate.md gives the same in prose):

* **Sessions.** Each player's games in time order; the gap from one game's end to the next
  game's start is short within a visit (a queue) and long between visits (hours). A
  two-component Gaussian mixture on the log gaps (EM) splits them: the threshold is where the
  two weighted components' densities cross between their means (on log(1 + minutes), so that
  a gap of 0, a player matched at once, is no outlier; each component's standard deviation is
  at least 0.5 there, as most within-visit gaps are exactly 0). Consecutive games closer than
  the threshold form one visit. ``session_games_mean`` is the mean games per visit.
* **Time of day.** The 24 hourly weights w(h) of the visit profile are the Poisson maximum
  likelihood estimate given each player's rate: visits starting in hour h over the offline
  player-time in hour h weighted by the players' rates, alternated with the rates a few times,
  scaled to mean 1. Hours are UTC for timestamped logs (minute 0 = midnight for numeric ones).
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
* **Games.** The mode from the sides and seats per match (1v1, team k v k, ffa of n); the
  scheduled length is the median match duration; in 1v1, the share of matches shorter than it
  gives the quit hazard (both players at risk, the one behind at the template's multiplier); the
  draw rate is reported (lobbysim's games have none).
* **Skill.** The Bayesian rater replayed over the log in time order, the skills' spread from
  the beliefs and the predictive likelihood: :mod:`lobbysim.calibration.skills` states it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, optimize, special, stats

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.skills import fit_skill, replay_beliefs

# with the skill fit's public names (lobbysim.calibration.skills), importable from here too
__all__ = [
    "BASE_PARAMETERS",
    "MINUTES_PER_DAY",
    "NODES",
    "REGION_VISITS",
    "SD_FLOOR",
    "BaseFit",
    "Clock",
    "Fit",
    "Games",
    "Sessions",
    "find_sessions",
    "fit_base",
    "fit_games",
    "fit_groups",
    "fit_log",
    "fit_profile",
    "fit_region_profiles",
    "fit_skill",
    "gap_threshold",
    "hour_minutes",
    "replay_beliefs",
]

FloatArray = NDArray[np.float64]
MINUTES_PER_DAY = 1440.0
#: The least standard deviation of a gap component (log(1 + minutes)): most within-visit gaps are
#: 0 (matched at once), which would otherwise collapse a component onto a point.
SD_FLOOR = 0.5
#: Gauss-Legendre nodes for the integral over a member's unknown lifetime.
NODES = 16


@dataclass
class Sessions:
    """Visits found in the log: the gap threshold and each visit's player, start, end, games."""

    threshold: float
    player: NDArray[np.int64]
    start: FloatArray
    end: FloatArray
    games: NDArray[np.int64]
    gaps_within: int
    gaps_between: int

    @property
    def games_per_visit(self) -> float:
        return float(self.games.mean()) if len(self.games) else math.nan


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
# Sessions


def gap_threshold(gaps: FloatArray, iterations: int = 200) -> float:
    """Return the gap (minutes) splitting within-visit from between-visit gaps (see above)."""
    x = np.log1p(np.maximum(gaps, 0.0))  # log(1 + minutes): a gap of 0 (matched at once) is 0
    if len(x) < 10 or np.ptp(x) < 1e-6:
        return 60.0
    lo, hi = np.quantile(x, [0.25, 0.9])
    mu = np.array([lo, hi])
    sd = np.full(2, max(x.std() / 2, SD_FLOOR))
    pi = np.array([0.5, 0.5])
    for _ in range(iterations):
        dens = pi * stats.norm.pdf(x[:, None], mu, sd)
        total = dens.sum(axis=1, keepdims=True)
        resp = dens / np.where(total > 0, total, 1.0)
        weight = resp.sum(axis=0)
        if np.any(weight < 1e-9):
            break
        new_mu = (resp * x[:, None]).sum(axis=0) / weight
        sd = np.sqrt((resp * (x[:, None] - new_mu) ** 2).sum(axis=0) / weight).clip(SD_FLOOR)
        pi = weight / len(x)
        if np.allclose(new_mu, mu, atol=1e-7):
            mu = new_mu
            break
        mu = new_mu
    order = np.argsort(mu)
    mu, sd, pi = mu[order], sd[order], pi[order]
    grid = np.linspace(mu[0], mu[1], 2001)
    diff = pi[0] * stats.norm.pdf(grid, mu[0], sd[0]) - pi[1] * stats.norm.pdf(grid, mu[1], sd[1])
    crossing = np.nonzero(np.diff(np.sign(diff)))[0]
    point = grid[crossing[0]] if len(crossing) else (mu[0] + mu[1]) / 2
    return float(np.expm1(point))


def find_sessions(log: MatchLog) -> Sessions:
    """Split every player's games into visits at the fitted gap threshold."""
    seats = log.seats
    order = np.lexsort((seats["start"].to_numpy(), seats["player"].to_numpy()))
    player = seats["player"].to_numpy()[order]
    start = seats["start"].to_numpy()[order]
    end = seats["end"].to_numpy()[order]
    same = player[1:] == player[:-1]
    gaps = (start[1:] - end[:-1])[same]
    threshold = gap_threshold(gaps)
    new_visit = np.ones(len(player), dtype=bool)
    new_visit[1:] = ~same | ((start[1:] - end[:-1]) >= threshold)
    visit = np.cumsum(new_visit) - 1
    firsts = np.nonzero(new_visit)[0]
    lasts = np.append(firsts[1:] - 1, len(player) - 1)
    games = np.bincount(visit).astype(np.int64)
    return Sessions(
        threshold,
        player[firsts].astype(np.int64),
        start[firsts],
        np.maximum.reduceat(end, firsts) if len(firsts) else end[lasts],
        games,
        int((gaps < threshold).sum()),
        int((gaps >= threshold).sum()),
    )


# --------------------------------------------------------------------------------------------
# Time of day and the warped clock


def hour_minutes(a: FloatArray, b: FloatArray, offset: float) -> FloatArray:
    """Return, per interval [a, b) (minutes), the minutes it spends in each clock hour (n x 24)."""
    a = np.asarray(a, dtype=float) + offset
    b = np.asarray(b, dtype=float) + offset
    out = np.empty((len(a), 24))
    for h in range(24):
        out[:, h] = _cumulative_hour(b, h) - _cumulative_hour(a, h)
    return out


def _cumulative_hour(t: FloatArray, h: int) -> FloatArray:
    """Minutes spent in clock hour h from minute 0 to t."""
    days = np.floor(t / MINUTES_PER_DAY)
    within = t - days * MINUTES_PER_DAY
    return days * 60.0 + np.clip(within - 60.0 * h, 0.0, 60.0)


class Clock:
    """The profile-warped clock: U(t) = integral of w(hour) over [0, t], in days (mean w = 1)."""

    def __init__(self, profile: FloatArray, offset: float) -> None:
        self.w = np.asarray(profile, dtype=float) / np.mean(profile)
        self.offset = offset
        self.per_day = float(self.w.sum() * 60.0)  # weighted minutes per day (= 1440)

    def warp(self, t: FloatArray) -> FloatArray:
        t = np.asarray(t, dtype=float) + self.offset
        days = np.floor(t / MINUTES_PER_DAY)
        within = t - days * MINUTES_PER_DAY
        cum = np.concatenate([[0.0], np.cumsum(self.w) * 60.0])
        hour = np.minimum((within // 60).astype(int), 23)
        part = cum[hour] + self.w[hour] * (within - 60.0 * hour)
        base = cum[-1] * days
        zero = self._at_zero()
        return (base + part - zero) / MINUTES_PER_DAY

    def _at_zero(self) -> float:
        within = self.offset % MINUTES_PER_DAY
        cum = np.concatenate([[0.0], np.cumsum(self.w) * 60.0])
        hour = min(int(within // 60), 23)
        return float(
            cum[-1] * math.floor(self.offset / MINUTES_PER_DAY)
            + cum[hour]
            + self.w[hour] * (within - 60.0 * hour)
        )


def _offset(log: MatchLog) -> float:
    if log.origin is None:
        return 0.0
    return float((log.origin - log.origin.normalize()).total_seconds() / 60.0)


def fit_profile(
    sessions: Sessions, first: FloatArray, end: float, offset: float, rounds: int = 3
) -> FloatArray:
    """Return the 24 hourly visit weights (mean 1) by alternating Poisson estimates."""
    players = len(first)
    counts = np.bincount(sessions.player, minlength=players).astype(float)
    starts = np.bincount(((sessions.start + offset) // 60 % 24).astype(int), minlength=24).astype(
        float
    )
    exposure = hour_minutes(first, np.full(players, end), offset)  # players x 24
    online = hour_minutes(sessions.start, sessions.end, offset)
    np.add.at(exposure, sessions.player, -online)
    exposure = np.clip(exposure, 0.0, None)
    w = np.ones(24)
    for _ in range(rounds):
        rate = counts / np.maximum(exposure @ w, 1e-9)
        w = starts / np.maximum(rate @ exposure, 1e-12)
        w = w / w.mean() if w.mean() > 0 else np.ones(24)
    return np.asarray(w)


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
    online_init = np.asarray(online_days, dtype=np.float64)
    online_new = online_days - (
        clock.warp(sessions.end[by_player][first_index]) - clock.warp(f)
    )  # the joining visit is not at risk
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
        lam: float,
        k: float,
        theta: float,
    ) -> FloatArray:
        """Log of E_L[P(the visits | r, L)]: the lifetime L ~ Exp(lam) (per day) from joining,
        either ending at a quadrature node after the last visit or after the log's end."""
        inner = log_g(count[:, None], u_pts - online[:, None], k, theta)
        left = math.log(lam) - lam * since + inner + np.log(wts / MINUTES_PER_DAY)
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
        theta = mean / k
        init = member(
            n, since_init, u_pts_init, wts_init, u_end_init, online_init, zeros, lam, k, theta
        )
        new = member(
            n - 1, since_new, u_pts_new, wts_new, u_end_new, online_new, f_days, lam, k, theta
        )
        # an initial member is unseen with chance E_L[(1 + theta U(min(L, T)))^-k]
        life = lgrid * t_end_days
        u_life = clock.warp(start + life * MINUTES_PER_DAY) - u0
        dens = lam * np.exp(-lam * life) * (1 + theta * u_life) ** (-k)
        unseen = float(integrate.trapezoid(dens, life)) + math.exp(-lam * t_end_days) * (
            1 + theta * (u_end - u0)
        ) ** (-k)
        a = math.log(n0) + init
        # the product of w over every visit, the newcomer's joining visit included, is common
        # to both and left out
        b = math.log(nu) + new
        expected = n0 * (1 - unseen) + nu * (u_end - u0)
        return a, b, expected

    def negative(params: FloatArray) -> float:
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


def fit_games(log: MatchLog, behind_multiplier: float = 1.0) -> Games:
    """Return the mode (the most common shape of sides x seats), the scheduled length (the
    median duration), the 1v1 quit hazard and the draw rate (see the module docstring)."""
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
    length = float(np.median(durations))
    quit_rate = None
    if mode == "1v1" and length > 0:
        early = float(np.mean(durations < length * (1 - 1e-6)))
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


def fit_log(
    log: MatchLog, *, beta2: float = 2.5, behind_multiplier: float = 1.0, min_games: int = 20
) -> Fit:
    """Fit every quantity of the module docstring to a log."""
    if log.seats.empty:
        raise ValueError("the log has no seats left to fit")
    offset = _offset(log)
    sessions = find_sessions(log)
    end = float(log.seats["end"].max())
    start = float(log.seats["start"].min())
    first = np.full(log.players, np.inf)
    np.minimum.at(first, sessions.player, sessions.start)
    early = first <= start + MINUTES_PER_DAY  # exposure from the start for the first day's
    exposure_from = np.where(early, start, first)
    profile = fit_profile(sessions, exposure_from, end, offset)
    clock = Clock(profile, offset)
    base = fit_base(sessions, log.players, end, clock, start)
    games = fit_games(log, behind_multiplier)
    skill_sd, skill_method = fit_skill(log, beta2, min_games)
    notes = []
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
    )
