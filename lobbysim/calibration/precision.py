"""Degenerate times in a match log: rounded or constant timestamps, found and set aside.

Real logs mix precisions: some rows carry exact times and others times rounded to a coarse grid
(a spreadsheet that wrote ``1504210000000`` as ``1.50421E+12``, an export that kept only the
minute or the date), so that a game's recorded length is 0 or a multiple of the grid and the
gap between two games is the grid's, not the player's. :func:`time_precision` finds them:

* **Grain.** A time's grain is the coarsest step of :data:`LADDER` (a millisecond to ten
  million seconds) that it is a whole multiple of (within 10 microseconds), on the log's own clock
  (seconds since 1970 for timestamps, the log's numbers for relative times); 0 where none is.
  A match's grain is the finer of its start's and its end's.
* **Rounded.** The log's own precision is the 10th percentile of the matches' grains (what its
  exact rows carry); a match is *rounded* when its grain is at least a minute and at least 60
  times that precision, and such matches are at least :data:`MIN_SHARE` (5%) of the log. A
  match of exact times lands on a one-minute grid at both ends by chance once in 3,600 at a
  one-second precision (rarer at a millisecond), a log kept to the minute is rounded only where
  both ends fall on whole hours, and a few matches that start on the minute for a reason of the
  game's own (lobbysim's sample log has 1.0%: a fixed length from a whole minute) are not a
  rounded log.
* **Zero length.** A match that ends when it starts, counted where such matches are at least
  :data:`MIN_ZERO_SHARE` (1%) of the log (a few aborted games are lengths, not lost times).

A match is *exact* when it is neither. :mod:`lobbysim.calibration.fit` fits the game length and
the quit rate from the exact matches' lengths, and :mod:`lobbysim.calibration.sessions` the gap
threshold from the gaps between two exact matches, when the log has at least
:data:`MIN_EXACT` exact matches (else from every match, as before, with a warning saying so).
:meth:`TimePrecision.warning` names the shares. The reader
(:mod:`lobbysim.calibration.read`) uses :func:`exact_copy` to keep the exact copy of a match
given twice, once with rounded times.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from lobbysim.calibration.matchlog import MatchLog

__all__ = ["LADDER", "MIN_EXACT", "TimePrecision", "exact_copy", "grain", "time_precision"]

FloatArray = NDArray[np.float64]

#: The grid steps a time is tested against, in seconds (decimal steps for epoch numbers written
#: in scientific notation, and the clock's minute, hour and day).
LADDER = np.array(
    [1e-3, 1e-2, 1e-1, 1.0, 10.0, 60.0, 100.0, 600.0, 1e3, 3600.0, 1e4, 86400.0, 1e5, 1e6, 1e7]
)
#: How close to a multiple of a step a time must be, in seconds (a timestamp's seconds since
#: 1970, through the log's minutes and back, keep some 1e-7 s).
TOLERANCE = 1e-5
#: The least grain of a rounded match, in seconds.
ROUNDED_GRAIN = 60.0
#: A rounded match's grain is at least this many times the log's own precision.
ROUNDED_RATIO = 60.0
#: The least share of the matches that rounded ones must be to count as rounded.
MIN_SHARE = 0.05
#: The least share of the matches that zero-length ones must be to count.
MIN_ZERO_SHARE = 0.01
#: The fewest exact matches the lengths and gaps are fitted from.
MIN_EXACT = 20


def grain(seconds: FloatArray) -> FloatArray:
    """Return each time's grain: the coarsest step of :data:`LADDER` it is a whole multiple of
    (within :data:`TOLERANCE`), 0 where none is."""
    values = np.asarray(seconds, dtype=np.float64)
    out = np.zeros(values.shape)
    for step in LADDER:  # ascending, so a coarser step that divides overwrites a finer one
        with np.errstate(invalid="ignore"):
            near = np.abs(values - np.round(values / step) * step) <= TOLERANCE
        out = np.where(near, step, out)
    return out


@dataclass
class TimePrecision:
    """The log's degenerate times (see the module docstring).

    Attributes:
        exact: per match (the log's codes), whether its times are exact: not rounded, length > 0.
        rounded: per match, whether its times lie on a coarse grid.
        zero: per match, whether it ends when it starts.
        precision: the log's own precision in seconds (the 10th percentile of the grains).
        coarse: the commonest grain of the rounded matches, in seconds (0 if none).
    """

    exact: NDArray[np.bool_]
    rounded: NDArray[np.bool_]
    zero: NDArray[np.bool_]
    precision: float
    coarse: float
    grains: FloatArray | None = None  #: per match, its grain in minutes

    def uncertainty(self) -> FloatArray:
        """Return per match how far, in minutes, its true times may lie from those recorded:
        the grain of a match that is not exact (rounded or of zero length), 0 for an exact one."""
        grains = self.grains if self.grains is not None else np.zeros(self.matches)
        return np.where(self.exact, 0.0, grains)

    @property
    def matches(self) -> int:
        return int(self.exact.size)

    @property
    def degenerate(self) -> bool:
        """Whether any match is rounded or of zero length."""
        return bool(self.matches) and not bool(self.exact.all())

    @property
    def usable(self) -> bool:
        """Whether there are enough exact matches to fit lengths and gaps from."""
        return int(self.exact.sum()) >= MIN_EXACT

    def warning(self) -> str | None:
        """Return the warning naming the shares, or None where every match is exact."""
        if not self.degenerate:
            return None
        n = self.matches
        parts = []
        if self.zero.any():
            parts.append(f"{self.zero.sum() / n:.1%} of the matches last 0 minutes")
        if self.rounded.any():
            parts.append(
                f"{self.rounded.sum() / n:.1%} have times rounded to a grid of "
                f"{_duration(self.coarse)}"
            )
        text = " and ".join(parts) + " (rounded or missing times)"
        if self.usable:
            return (
                f"{text}: the game length, quit rate and visit gaps are fitted from the "
                f"{int(self.exact.sum()):,} matches with exact times"
            )
        return (
            f"{text}, and only {int(self.exact.sum()):,} matches have exact times (fewer than "
            f"{MIN_EXACT}): the game length, quit rate and visit gaps are fitted from every "
            "match and are not to be trusted"
        )


def _duration(seconds: float) -> str:
    """Return ``"1 minute"``, ``"2.8 hours"`` and the like."""
    for unit, size in (("day", 86400.0), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size:
            value = seconds / size
            return f"{value:.3g} {unit}{'' if value == 1 else 's'}"
    return f"{seconds:.3g} seconds"


def _seconds(log: MatchLog, minutes: FloatArray) -> FloatArray:
    """Return times on the log's own clock, in seconds: since 1970 for a timestamped log."""
    if log.origin is None:
        return minutes * 60.0
    zero = (log.origin - pd.Timestamp(0, tz="UTC")).total_seconds()
    return zero + minutes * 60.0


def time_precision(log: MatchLog) -> TimePrecision:
    """Return the log's degenerate times (see the module docstring)."""
    seats = log.seats
    n = log.matches
    start = np.full(n, np.nan)
    end = np.full(n, np.nan)
    match = seats["match"].to_numpy()
    start[match] = seats["start"].to_numpy()
    end[match] = seats["end"].to_numpy()
    zero = ~(end > start)
    if n and zero.mean() < MIN_ZERO_SHARE:
        zero[:] = False
    both = np.minimum(grain(_seconds(log, start)), grain(_seconds(log, end)))
    precision = float(np.quantile(both, 0.1)) if n else 0.0
    threshold = max(ROUNDED_GRAIN, ROUNDED_RATIO * precision)
    rounded = both >= threshold
    if n and rounded.mean() < MIN_SHARE:
        rounded[:] = False
    coarse = 0.0
    if rounded.any():
        values, counts = np.unique(both[rounded], return_counts=True)
        coarse = float(values[np.argmax(counts)])
    return TimePrecision(~(rounded | zero), rounded, zero, precision, coarse, both / 60.0)


def exact_copy(start: FloatArray, end: FloatArray, scale: float) -> NDArray[np.bool_] | None:
    """Return which rows of one match given several times are its exact copy, or None.

    ``start`` and ``end`` are the rows' times, ``scale`` the seconds per unit of them. The
    exact copy is the rows of the finest grain (:func:`grain`, the finer of start and end);
    every other row must be a rounding of it: of a coarser grain, and within that grain of it
    at both ends. Anything else (two exact copies that differ, a row that is not a rounding)
    is None: the match's times disagree.
    """
    s, e = np.asarray(start) * scale, np.asarray(end) * scale
    pairs, index = np.unique(np.column_stack((s, e)), axis=0, return_inverse=True)
    index = np.asarray(index).reshape(-1)
    if len(pairs) < 2:
        return None
    grains = np.minimum(grain(pairs[:, 0]), grain(pairs[:, 1]))
    best = int(np.argmin(grains))
    if int((grains == grains[best]).sum()) > 1:
        return None
    for k in range(len(pairs)):
        if k == best:
            continue
        step = grains[k]
        off = np.abs(pairs[k] - pairs[best])
        if not (step > grains[best] and (off <= step + TOLERANCE).all()):
            return None
    return np.asarray(index == best)
