"""Visits found in a match log and the hours they start: sessions and the time of day.

:func:`find_sessions` splits each player's games into visits, :func:`fit_profile` fits the hourly
visit profile and :class:`Clock` is the clock it warps; :mod:`lobbysim.calibration.fit` fits the
rest of a scenario on them (the base, on the warped clock; each region's own profile). The
methods (docs/calibrate.md gives the same in prose):

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.precision import TimePrecision

FloatArray = NDArray[np.float64]
MINUTES_PER_DAY = 1440.0
#: The least standard deviation of a gap component (log(1 + minutes)): most within-visit gaps are
#: 0 (matched at once), which would otherwise collapse a component onto a point.
SD_FLOOR = 0.5


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


#: The fewest gaps between exact matches the threshold is fitted from (else every gap).
MIN_EXACT_GAPS = 30


def find_sessions(log: MatchLog, times: TimePrecision | None = None) -> Sessions:
    """Split every player's games into visits at the fitted gap threshold.

    With ``times`` (:func:`lobbysim.calibration.precision.time_precision`) the threshold is
    fitted from the gaps that rounded times cannot have bent: from one exact match to the
    player's next, where none of the player's other matches could lie between them (a rounded
    match's true times lie within its grain of those recorded), if there are at least
    :data:`MIN_EXACT_GAPS`; else from the gaps between two exact matches; else from every gap.
    """
    seats = log.seats
    order = np.lexsort((seats["start"].to_numpy(), seats["player"].to_numpy()))
    player = seats["player"].to_numpy()[order]
    start = seats["start"].to_numpy()[order]
    end = seats["end"].to_numpy()[order]
    same = player[1:] == player[:-1]
    gaps = (start[1:] - end[:-1])[same]
    threshold = gap_threshold(gaps if times is None else _exact_gaps(times, order, seats))
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


def _exact_gaps(times: TimePrecision, order: NDArray[np.int64], seats: pd.DataFrame) -> FloatArray:
    """Return the gaps :func:`find_sessions` fits its threshold from, given degenerate times."""
    player = seats["player"].to_numpy()[order]
    start = seats["start"].to_numpy()[order]
    end = seats["end"].to_numpy()[order]
    match = seats["match"].to_numpy()[order]
    same = player[1:] == player[:-1]
    gaps = start[1:] - end[:-1]
    every = gaps[same]
    ok = times.exact[match]
    pair = same & ok[1:] & ok[:-1]
    if int(pair.sum()) < MIN_EXACT_GAPS:
        return every
    # the player's other matches whose true times may lie within (end_a, start_b): a rounded
    # match's interval [start - g, end + g] against the gap's, on one axis per player
    width = times.uncertainty()[match]
    room = float(np.nanmax(end) - np.nanmin(start) + 2 * np.nanmax(width)) + 1.0
    base = player * room
    loose = ~ok
    lo = np.sort((base + start - width)[loose])
    hi = np.sort((base + end + width)[loose])
    a, b = (base[:-1] + end[:-1]), (base[1:] + start[1:])
    crossing = np.searchsorted(lo, b, side="left") - np.searchsorted(hi, a, side="right")
    clean = pair & (crossing == 0)
    if int(clean.sum()) >= MIN_EXACT_GAPS:
        return gaps[clean]
    return gaps[pair]


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
