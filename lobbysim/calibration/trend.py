"""Logs that change over time: an activity trend found, and a window of the log to fit.

The base model of :mod:`lobbysim.calibration.fit` is stationary (members visit at constant
rates, newcomers join at a constant rate); a log whose activity grows or shrinks many times over
its span (a game's launch, its decline) does not fit it, and a base fitted to the whole log plays
neither its start nor its end; one that grows by newcomers at a steady rate does (the round trip
of a base growing ~4-fold in scripts/calibrate_roundtrip.py is named too, and fits: the warning
says what the base can and cannot follow). :func:`activity_trend` measures the trend and names
the last stretch that is stationary; :func:`window` cuts a log to a stretch the user chooses
(``lobbysim calibrate --window 2017-06-01..2017-08-31``, or ``--window auto`` for that stretch).

* **Trend.** The matches started per whole day (day 0 at the log's first start); the least
  squares line of ``log(1 + games)`` on the day gives the growth over the span,
  ``exp(slope * days)``. A log of at least :data:`MIN_DAYS` days whose growth is beyond
  :data:`GROWTH` (3 times, or a third) either way is *non-stationary*.
* **The last stationary stretch.** The earliest whole day from which the rest of the log, at
  least :data:`MIN_DAYS` days of it, grows by less than :data:`STRETCH_GROWTH` (1.5 times) either
  way.
* **A trend the base follows.** The base model changes only by newcomers joining at nu a day
  and members leaving at lambda a day, so its members ``N(t) = nu / lambda + (N0 - nu / lambda)
  exp(-lambda t)`` and its visits a day ``m N(t) + nu`` are ``a + b exp(-lambda t)`` with
  ``a >= 0`` and ``a + b >= 0`` (``a + c t`` without leaving): steady growth that levels off, or
  a decline by leaving. :meth:`Trend.strays` splits the log into tenths (whole days, at least a
  day each) and, for lambda on a grid of :data:`RATES` (and the straight line), fits ``a`` and
  ``b`` to the tenths' matches by least squares in relative terms; it returns, over the best
  curve, the largest ratio of the log's matches to the curve's over the smallest. Within
  :data:`FOLLOW` (1.5) the base follows the trend (the whole log is fitted and a note says so);
  beyond it (a launch, a wave, a decline that is not a steady leaving) ``lobbysim calibrate``
  fits the last stationary stretch by default, saying what it left out and why (``--window
  all`` fits everything).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lobbysim.calibration.mapping import LogError
from lobbysim.calibration.matchlog import MatchLog

__all__ = ["FOLLOW", "GROWTH", "MIN_DAYS", "STRETCH_GROWTH", "Trend", "activity_trend", "window"]

MINUTES_PER_DAY = 1440.0
#: The fewest whole days a log needs for its trend to be judged (and a stretch to be kept).
MIN_DAYS = 7
#: Growth over the span beyond which a log is non-stationary (either way).
GROWTH = 3.0
#: Growth within which a stretch counts as stationary (either way).
STRETCH_GROWTH = 1.5
#: The most the log's matches may stray from the fitted base's expected visits, the largest
#: ratio of the two over the smallest between tenths of the log, for the base to follow a trend.
FOLLOW = 1.5
#: The tenths :meth:`Trend.strays` compares.
PARTS = 10
#: The leave rates (per day) :meth:`Trend.strays` tries for the base's curve.
RATES = tuple(float(r) for r in np.geomspace(1e-3, 3.0, 36))


def _growth(days: np.ndarray, games: np.ndarray) -> float:
    """Return ``exp(slope * span)`` of the least squares line of log(1 + games) on the day."""
    if len(days) < 2:
        return 1.0
    slope = float(np.polyfit(days, np.log1p(games), 1)[0])
    return math.exp(slope * (len(days) - 1))


@dataclass
class Trend:
    """The log's activity over time (see the module docstring).

    Attributes:
        games: matches started per whole day, by day.
        growth: the fitted growth over the span (``exp(slope * days)``).
        stationary: whether the log is stationary enough for one base (always True for a log
            under :data:`MIN_DAYS` days).
        stretch: the first day of the last stationary stretch (0: the whole log).
    """

    games: np.ndarray
    growth: float
    stationary: bool
    stretch: int

    def stretch_text(self, log: MatchLog) -> str:
        """Return the last stationary stretch as ``--window`` takes it."""
        start = float(log.seats["start"].min()) + self.stretch * MINUTES_PER_DAY
        end = float(log.seats["end"].max())
        return f"{_when(log, start)}..{_when(log, end)}"

    def strays(self) -> float:
        """Return how far the log's matches stray from the closest curve the base model draws
        (see the module docstring): over its tenths, the largest ratio of the log's matches to
        the curve's over the smallest (inf where no curve stays positive; NaN for a log under
        a day)."""
        days = len(self.games)
        if days == 0:
            return math.nan
        parts = np.array_split(np.arange(days), min(PARTS, days))
        games = np.array([self.games[p].sum() for p in parts], dtype=np.float64)
        if not (games > 0).all():
            return math.inf
        middle = np.array([p.mean() + 0.5 for p in parts])
        weight = 1.0 / games  # relative errors
        shapes = [middle] + [np.exp(-rate * middle) for rate in RATES]
        best = math.inf
        for shape in shapes:
            design = np.column_stack([np.ones_like(middle), shape]) * weight[:, None]
            (a, b), *_ = np.linalg.lstsq(design, games * weight, rcond=None)
            start = a + b * (0.0 if shape is middle else 1.0)  # the curve at day 0
            curve = a + b * shape
            if a < 0 or start < 0 or not (curve > 0).all():
                continue
            ratio = games / curve
            best = min(best, float(ratio.max() / ratio.min()))
        return best

    def change_text(self) -> str:
        """Return how the activity changes: ``grows 4.1-fold over its 10 days (30 games a day in
        its first tenth, 120 in its last)``."""
        tenth = max(1, len(self.games) // 10)
        first, last = float(self.games[:tenth].mean()), float(self.games[-tenth:].mean())
        how = "grows" if self.growth > 1 else "shrinks"
        factor = self.growth if self.growth > 1 else 1 / self.growth
        return (
            f"{how} {factor:.3g}-fold over its {len(self.games)} days ({first:.3g} games a day "
            f"in its first tenth, {last:.3g} in its last)"
        )

    def warning(self, log: MatchLog) -> str | None:
        """Return the warning for a non-stationary log whose trend the base model does not
        follow (:meth:`strays` beyond :data:`FOLLOW`), naming the window to fit, or None."""
        if self.stationary:
            return None
        stray = self.strays()
        if stray <= FOLLOW:
            return None
        follow = (
            "the base model, which changes only by newcomers joining and members leaving at "
            "constant rates, does not follow it (its closest curve and the log's matches "
            f"differ up to {stray:.3g}-fold between tenths of the log)"
        )
        return (
            f"the log's activity {self.change_text()}; {follow}: where the change is a launch, "
            "a wave or a decline, fit a stretch with --window FROM..TO (the last stationary "
            f"one: --window {self.stretch_text(log)}, or --window auto)"
        )

    def note(self) -> str | None:
        """Return the note for a trend the base model follows (:meth:`strays` within
        :data:`FOLLOW`), or None."""
        if self.stationary:
            return None
        stray = self.strays()
        if not stray <= FOLLOW:
            return None
        return (
            f"the log's activity {self.change_text()}; the base model follows it (newcomers "
            "joining and members leaving at constant rates: its closest curve and the log's "
            f"matches are within {stray:.3g}-fold of each other over the log's tenths), so the "
            "whole log is fitted"
        )


def activity_trend(log: MatchLog) -> Trend:
    """Return the log's activity trend and its last stationary stretch."""
    first = log.seats.drop_duplicates("match")["start"].to_numpy()
    origin = float(log.seats["start"].min())
    whole = math.floor((float(log.seats["end"].max()) - origin) / MINUTES_PER_DAY)
    if whole < 1:
        return Trend(np.zeros(0), 1.0, True, 0)
    day = ((first - origin) // MINUTES_PER_DAY).astype(np.int64)
    games = np.bincount(day[day < whole], minlength=whole).astype(np.float64)
    days = np.arange(whole, dtype=np.float64)
    growth = _growth(days, games)
    stationary = whole < MIN_DAYS or 1 / GROWTH <= growth <= GROWTH
    stretch = 0
    if not stationary:
        stretch = max(0, whole - MIN_DAYS)
        for start in range(whole - MIN_DAYS, -1, -1):
            g = _growth(days[start:] - start, games[start:])
            if not 1 / STRETCH_GROWTH <= g <= STRETCH_GROWTH:
                break
            stretch = start
    return Trend(games, growth, stationary, stretch)


def _when(log: MatchLog, minute: float) -> str:
    """Return a minute of the log as a ``--window`` end: a UTC date-time, or the minute."""
    if log.origin is None:
        return f"{minute:g}"
    stamp = log.origin + pd.Timedelta(minutes=minute)
    return stamp.strftime("%Y-%m-%dT%H:%M")


def _minute(log: MatchLog, text: str, where: str) -> float:
    """Return a ``--window`` end as a minute of the log."""
    text = text.strip()
    if log.origin is None:
        try:
            value = float(text)
        except ValueError:
            raise LogError(f"{where}: expected a minute of the log, got {text!r}") from None
        if not math.isfinite(value):
            raise LogError(f"{where}: expected a minute of the log, got {text!r}")
        return value
    try:
        stamp = pd.Timestamp(text)
    except (ValueError, OverflowError):
        raise LogError(f"{where}: expected a date or date-time, got {text!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize("UTC")
    return float((stamp - log.origin).total_seconds() / 60.0)


def window(log: MatchLog, spec: str) -> tuple[MatchLog, str]:
    """Return the matches of ``log`` that start within ``spec`` (``FROM..TO``, dates or UTC
    date-times for a timestamped log, minutes for a numeric one, either end may be empty; or
    ``auto``: the last stationary stretch; ``all``: the whole log) and a line saying what was
    left out.

    Raises:
        LogError: a window that cannot be read, or one that holds no match.
    """
    if spec.strip() == "all":
        return log, f"--window all: the whole log fitted, {log.matches:,} matches"
    if spec.strip() == "auto":
        trend = activity_trend(log)
        if trend.stretch == 0:
            return log, "--window auto: the whole log is one stationary stretch"
        spec = trend.stretch_text(log)
    if ".." not in spec:
        raise LogError(f"--window: expected FROM..TO, auto or all, got {spec!r}")
    low_text, high_text = spec.split("..", 1)
    low = _minute(log, low_text, "--window") if low_text.strip() else -math.inf
    high = _minute(log, high_text, "--window") if high_text.strip() else math.inf
    if not low < high:
        raise LogError(f"--window: {spec!r} ends before it starts")
    seats = log.seats
    starts = seats.groupby("match")["start"].first()
    keep = starts.index[(starts >= low) & (starts < high)].to_numpy()
    if not len(keep):
        raise LogError(f"--window: no match of the log starts within {spec!r}")
    chosen = seats[seats["match"].isin(keep)]
    match_codes, match_index = np.unique(chosen["match"].to_numpy(), return_inverse=True)
    player_codes, player_index = np.unique(chosen["player"].to_numpy(), return_inverse=True)
    frame = chosen.copy()
    frame["match"] = match_index.astype(np.int64)
    frame["player"] = player_index.astype(np.int64)
    frame = frame.reset_index(drop=True)
    cut = MatchLog(
        frame,
        log.match_ids[match_codes],
        log.player_ids[player_codes],
        log.origin,
        log.skipped,
        log.source,
        log.sorted_input,
    )
    left = log.matches - cut.matches
    return cut, (
        f"--window {spec}: {cut.matches:,} of the log's {log.matches:,} matches fitted; "
        f"{left:,} outside it left out"
    )
