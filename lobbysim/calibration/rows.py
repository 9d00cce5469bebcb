"""A match log's rows checked chunk by chunk and kept as compact arrays.

:class:`ChunkReader` takes one chunk of a log's file at a time (:mod:`lobbysim.calibration.chunks`
reads them), skips and counts by reason the rows that cannot be read alone (excluded, an empty
required value, a bad time or queue time, a bad result, score or rank, an end before its start),
reads the times on the log's axis and codes the ids of the rows kept as log-wide integers.
:mod:`lobbysim.calibration.read` checks the arrays across chunks and assembles the
:class:`~lobbysim.calibration.matchlog.MatchLog`; its module docstring is the exact statement of
the log format, the times and the rows skipped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from lobbysim.calibration.mapping import (
    DRAW,
    LOSS,
    RESULT_WORDS,
    WIN,
    ColumnMapping,
    LogError,
)
from lobbysim.calibration.matchlog import SKIP_REASONS

#: Relative times beyond this (in minutes, 19 years) are refused by ``times: auto``.
MAX_AUTO_MINUTES = 1e7
#: Each skip reason's code in a chunk's array of reasons (0: the row is kept).
SKIP_CODES = {reason: code for code, reason in enumerate(SKIP_REASONS, start=1)}
#: The first and last timestamps a log may hold, in seconds since 1970: pandas' nanosecond range
#: (1677-09-21 to 2262-04-11), on which the log's times of day and dates are computed. A
#: timestamp outside it (ISO text, a Parquet timestamp or an epoch number) cannot be read: its
#: row is skipped as ``bad_time``.
FIRST_SECOND = pd.Timestamp.min.value / 1e9
LAST_SECOND = pd.Timestamp.max.value / 1e9
_TICKS_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


def _to_minutes(values: np.ndarray, unit: str) -> np.ndarray:
    if unit == "minutes":
        return values
    return values / (60.0 if unit == "seconds" else 60_000.0)


def _to_seconds(values: np.ndarray, unit: str) -> np.ndarray:
    if unit == "seconds":
        return values
    return values * 60.0 if unit == "minutes" else values / 1000.0


def _in_range(seconds: np.ndarray) -> np.ndarray:
    """Return timestamps in seconds since 1970 with NaN for those outside
    [:data:`FIRST_SECOND`, :data:`LAST_SECOND`] (in place)."""
    with np.errstate(invalid="ignore"):
        seconds[(seconds < FIRST_SECOND) | (seconds > LAST_SECOND)] = np.nan
    return seconds


def _stamp_seconds(stamps: pd.Series) -> np.ndarray:
    """Return a column of timestamps (of any resolution; naive ones are UTC) as seconds since
    1970, NaN where missing or outside the nanosecond range (:data:`LAST_SECOND`).

    Computed on the stamps' own unit: a subtraction of a nanosecond epoch would convert them to
    nanoseconds first, which overflows past 2262 (pandas reads ISO text to microseconds).
    """
    if isinstance(stamps.dtype, pd.DatetimeTZDtype):
        stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
    values = stamps.to_numpy()
    unit, count = np.datetime_data(values.dtype)
    per_second = _TICKS_PER_SECOND[unit] / count  # pandas' units: s, ms, us, ns
    seconds = values.view(np.int64).astype(np.float64) / per_second
    seconds[np.isnat(values)] = np.nan
    return _in_range(seconds)


def _numbers(column: pd.Series) -> np.ndarray:
    """Return a column as float64, NaN where empty or not a number (infinities too)."""
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    else:
        numbers = pd.to_numeric(column, errors="coerce")
        values = numbers.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    values[~np.isfinite(values)] = np.nan
    return values


class ChunkReader:
    """Checks a log's chunks row by row, counting the rows skipped by reason, and keeps the
    other rows as compact arrays (:mod:`lobbysim.calibration.read` assembles the log)."""

    def __init__(self, mapping: ColumnMapping, plan: dict[str, str], source: str) -> None:
        self.mapping = mapping
        self.plan = plan
        self.source = source
        self.layout = mapping.layout
        self.kind: str | None = None if mapping.times == "auto" else mapping.times
        self.auto = mapping.times == "auto"
        self.ids: dict[str, dict[Any, int]] = {
            name: {} for name in ("match", "player", "side", "region", "party")
        }
        self.parts: dict[str, list[np.ndarray]] = {}
        self.skipped = np.zeros(len(SKIP_REASONS) + 1, dtype=np.int64)
        self.rows = 0
        self.sorted_input = True
        self.last_start = -np.inf
        words = dict(RESULT_WORDS)
        words.update(mapping.results)
        self.words = words
        if self.layout == "seats":
            self.value = next(role for role in ("result", "score", "rank") if role in plan)
        else:
            self.value = "result"

    # -- ids, times and values ------------------------------------------------------------

    def codes(self, column: pd.Series, name: str) -> np.ndarray:
        """Return the codes of a column's values in the log-wide table ``name``; -1 if empty."""
        local, uniques = pd.factorize(column)
        table = self.ids[name]
        if not len(uniques):
            return local.astype(np.int64)
        keys = uniques.tolist()
        get = table.get
        known = np.array([get(key, -1) for key in keys], dtype=np.int64)
        fresh = np.flatnonzero(known < 0)
        if len(fresh):
            first = len(table)
            known[fresh] = np.arange(first, first + len(fresh))
            new = np.array(keys, dtype=object)[fresh].tolist()
            table.update(zip(new, known[fresh].tolist(), strict=True))
        return np.where(local >= 0, known[local], -1)

    def times(self, column: pd.Series, role: str) -> np.ndarray:
        """Return a time column on the log's axis (relative: minutes; timestamps: seconds
        since 1970), NaN where empty or unreadable (a timestamp outside 1677-2262 too)."""
        unit = self.mapping.time_unit
        if isinstance(column.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(
            column.dtype
        ):
            if self.kind == "relative":
                raise LogError(
                    f"{self.source}: column {self.plan[role]!r} holds timestamps, but the "
                    "mapping says times: relative"
                )
            self.kind = self.kind or "native"
            return _stamp_seconds(column)
        if self.kind is None:
            sample = column.dropna().iloc[:1000]  # decided on the first values given
            if not len(sample):
                return np.full(len(column), np.nan)
            numbers = _numbers(sample)
            self.kind = "relative" if 2 * int(np.isfinite(numbers).sum()) >= len(sample) else "iso"
        if self.kind == "iso" or self.kind == "native":
            # each distinct text parsed once: a match's start repeats on each of its seats
            local, uniques = pd.factorize(column)
            stamps = pd.to_datetime(
                pd.Series(uniques), utc=True, format="ISO8601", errors="coerce", cache=False
            )
            return np.append(_stamp_seconds(stamps), np.nan)[local]
        numbers = _numbers(column)
        if self.kind == "epoch":
            return _in_range(_to_seconds(numbers, unit))
        minutes = _to_minutes(numbers, unit)
        if self.auto:
            big = np.abs(minutes) > MAX_AUTO_MINUTES
            if big.any():
                value = column.to_numpy()[int(np.argmax(big))]
                raise LogError(
                    f"{self.source}: column {self.plan[role]!r}: {value} is "
                    f"{minutes[big][0]:.3g} minutes from minute 0 (over 19 years), an epoch "
                    "time? Say times: epoch (with time_unit) or times: relative in the mapping"
                )
        return minutes

    def durations(self, column: pd.Series, unit: str) -> np.ndarray:
        numbers = _numbers(column)
        if self.kind in ("relative", None):
            return _to_minutes(numbers, unit)
        return _to_seconds(numbers, unit)

    def results(self, column: pd.Series) -> np.ndarray:
        """Return result codes (0 win, 1 draw, 2 loss), NaN where unreadable or empty."""
        local, uniques = pd.factorize(column)
        table = np.array(
            [self.words.get(str(u).strip().lower(), np.nan) for u in uniques] + [np.nan],
            dtype=np.float64,
        )
        return table[local]

    def winners(self, chunk: pd.DataFrame) -> np.ndarray:
        """Return side 0's result code in each row of a games_1v1 chunk, NaN if unreadable."""
        column = chunk[self.plan["winner"]]
        text = column.fillna("").astype(str).str.strip()
        lower = text.str.lower()
        codes = np.full(len(chunk), np.nan)
        codes[lower.isin(self.mapping.draws).to_numpy()] = DRAW
        sides = self.mapping.sides
        if sides == "players":
            first = (text == chunk[self.plan["player_0"]].fillna("").astype(str)).to_numpy()
            second = (text == chunk[self.plan["player_1"]].fillna("").astype(str)).to_numpy()
        else:
            first = (lower == sides[0].lower()).to_numpy()
            second = (lower == sides[1].lower()).to_numpy()
        codes[first & ~second] = WIN
        codes[second & ~first] = LOSS
        return codes

    # -- a chunk ------------------------------------------------------------------------------

    def add(self, chunk: pd.DataFrame) -> None:
        """Check one chunk's rows, count those skipped and keep the others' compact arrays."""
        plan, n = self.plan, len(chunk)
        self.rows += n
        reason = np.zeros(n, dtype=np.int8)

        def flag(name: str, mask: np.ndarray) -> None:
            reason[(reason == 0) & mask] = SKIP_CODES[name]

        for column, words in self.mapping.exclude.items():
            flag("excluded", chunk[column].isin(words).to_numpy())
        required = ["match_id", "start", "end" if "end" in plan else "duration"]
        if self.layout == "seats":
            required += ["player_id", self.value] + (["side"] if "side" in plan else [])
        else:
            required += ["player_0", "player_1"]
            if "" not in self.mapping.draws:
                required.append("winner")
        empty = np.zeros(n, dtype=bool)
        for role in required:
            empty |= chunk[plan[role]].isna().to_numpy()
        flag("missing_value", empty)

        start = self.times(chunk[plan["start"]], "start")
        if "end" in plan:
            end = self.times(chunk[plan["end"]], "end")
        else:
            unit = self.mapping.duration_unit or self.mapping.time_unit
            end = start + self.durations(chunk[plan["duration"]], unit)
            if self.kind not in ("relative", None):  # a timestamp's end, in seconds
                end = _in_range(end)
        bad_time = np.isnan(start) | np.isnan(end)
        columns: dict[str, np.ndarray] = {"start": start, "end": end}
        if "queue_time" in plan:
            column = chunk[plan["queue_time"]]
            unit = self.mapping.queue_time_unit or self.mapping.time_unit
            queue = _to_minutes(_numbers(column), unit)
            bad_time |= (column.notna().to_numpy() & np.isnan(queue)) | (queue < 0)
            columns["queue_time"] = queue
        flag("bad_time", bad_time)

        if self.layout == "games_1v1":
            value = self.winners(chunk)
        elif self.value == "result":
            value = self.results(chunk[plan["result"]])
        else:
            value = _numbers(chunk[plan[self.value]])
            if self.value == "rank":
                value[value != np.round(value)] = np.nan
        flag("bad_result", np.isnan(value))
        flag("end_before_start", end < start)

        readable = start[~np.isnan(start)]
        if len(readable):
            if readable[0] < self.last_start or (np.diff(readable) < 0).any():
                self.sorted_input = False
            self.last_start = float(readable[-1])
        self.skipped += np.bincount(reason, minlength=len(self.skipped))

        keep = reason == 0
        kept = chunk[keep]
        columns = {name: values[keep] for name, values in columns.items()}
        columns["value"] = value[keep]
        columns["match"] = self.codes(kept[plan["match_id"]], "match")
        if self.layout == "games_1v1":
            columns["player_0"] = self.codes(kept[plan["player_0"]], "player")
            columns["player_1"] = self.codes(kept[plan["player_1"]], "player")
        else:
            columns["player"] = self.codes(kept[plan["player_id"]], "player")
            if "side" in plan:
                columns["side"] = self.codes(kept[plan["side"]], "side")
            else:  # a free-for-all: each seat its own side
                columns["side"] = columns["player"]
            for role, name in (("region", "region"), ("party_id", "party")):
                if role in plan:
                    columns[name] = self.codes(kept[plan[role]], name)
        for name, values in columns.items():
            self.parts.setdefault(name, []).append(values)
