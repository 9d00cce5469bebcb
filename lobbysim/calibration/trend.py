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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lobbysim.calibration.mapping import LogError
from lobbysim.calibration.matchlog import MatchLog

__all__ = ["GROWTH", "MIN_DAYS", "STRETCH_GROWTH", "Trend", "activity_trend", "window"]

MINUTES_PER_DAY = 1440.0
#: The fewest whole days a log needs for its trend to be judged (and a stretch to be kept).
MIN_DAYS = 7
#: Growth over the span beyond which a log is non-stationary (either way).
GROWTH = 3.0
#: Growth within which a stretch counts as stationary (either way).
STRETCH_GROWTH = 1.5


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

    def warning(self, log: MatchLog) -> str | None:
        """Return the warning for a non-stationary log, naming the window to fit, or None."""
        if self.stationary:
            return None
        tenth = max(1, len(self.games) // 10)
        first, last = float(self.games[:tenth].mean()), float(self.games[-tenth:].mean())
        how = "grows" if self.growth > 1 else "shrinks"
        factor = self.growth if self.growth > 1 else 1 / self.growth
        return (
            f"the log's activity {how} {factor:.3g}-fold over its {len(self.games)} days "
            f"({first:.3g} games a day in its first tenth, {last:.3g} in its last); the fitted "
            "base changes only by newcomers joining and members leaving at constant rates: "
            "where the change is a launch, a wave or a decline, fit a stretch with --window "
            f"FROM..TO (the last stationary one: --window {self.stretch_text(log)}, or "
            "--window auto)"
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
    ``auto``: the last stationary stretch) and a line saying what was left out.

    Raises:
        LogError: a window that cannot be read, or one that holds no match.
    """
    if spec.strip() == "auto":
        trend = activity_trend(log)
        if trend.stretch == 0:
            return log, "--window auto: the whole log is one stationary stretch"
        spec = trend.stretch_text(log)
    if ".." not in spec:
        raise LogError(f"--window: expected FROM..TO (or auto), got {spec!r}")
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
