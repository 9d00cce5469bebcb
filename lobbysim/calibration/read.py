"""Match logs read from CSV or Parquet into a :class:`~lobbysim.calibration.matchlog.MatchLog`.

:func:`read_log` reads a game's match log, a CSV file (``.csv``, or gzipped ``.csv.gz``) or a
Parquet file (``.parquet``; needs pyarrow: ``pip install 'lobbysim[parquet]'``), in one of two
layouts, with a column mapping (:func:`read_mapping`) that renames columns and states units. The
log format and the mappings are documented in docs/calibrate.md ("Match logs").
:mod:`lobbysim.calibration.mapping` holds the column mapping, :mod:`lobbysim.calibration.chunks`
the file's chunks, :mod:`lobbysim.calibration.rows` each chunk's rows checked and kept as arrays;
this module checks those across chunks and turns them into the log.

**seats** (the default): one row per seat. Columns ``match_id``, ``player_id``, ``start``, ``end``
or ``duration``, ``team`` or ``side``, and one of ``result`` (win/loss/draw, or 1/0/0.5, any
case), ``score`` (higher is better; a side's score is the sum of its seats') or ``rank`` (1 = best,
equal ranks tied); optional ``region``, ``party_id``, ``queue_time``. A side's place (the log's
``rank``, 0 best) is: with results, 0 for the sides that won or drew and 1 for those that lost;
with scores, the side's place by descending score (equal scores share the better place); with
ranks, the rank given less the match's best. ``free_for_all: true`` reads a log without a side
column, each seat its own side.

**games_1v1**: one row per 1v1 game: ``match_id``, ``start``, ``end`` or ``duration``,
``player_0``, ``player_1`` and ``winner``, whose values name the winning side (``sides``, e.g.
``[white, black]``) or are the winner's player id (``sides: players``); an empty value or a
``draws`` word is a draw. The bundled mapping ``lichess``
(lobbysim/calibration/mappings/lichess.yaml) reads the column names of Lichess's game export
(``id``, ``created_at``, ``last_move_at``, ``white_id``, ``black_id``, ``winner``).

**Times.** Numbers are minutes unless ``time_unit`` says ``seconds`` or ``milliseconds``
(``duration_unit`` and ``queue_time_unit`` default to it), counted from a minute 0 taken as
midnight (``times: relative``), or since 1970-01-01 UTC (``times: epoch``); text is ISO 8601
(``times: iso``; without an offset, UTC). With timestamps, minute 0 is the earliest start
(``MatchLog.origin``). ``times: auto`` (the default) takes a Parquet timestamp column as
timestamps, and decides on the first 1,000 starts given: mostly numbers, relative times, else
ISO 8601 text; later values that do not fit are unreadable. It refuses relative times beyond 10
million minutes (19 years: epoch times read as minutes) rather than misread them.

**Hostile logs.** A missing column, a file that is not UTF-8 (with its line and byte), a file
that is not CSV or Parquet and a log with no match left are errors (:class:`LogError`, one
line). Rows are skipped, and counted by reason in ``MatchLog.skipped``
(:data:`~lobbysim.calibration.matchlog.SKIP_REASONS`), in this order: rows the mapping excludes,
an empty required value, a time or a queue time that cannot be read (or is negative; a
timestamp before 1677-09-21 or after 2262-04-11, pandas' nanosecond range), a result,
score or rank that cannot be read, an end before its start; then whole matches whose start or
end differ between rows (in games_1v1, any repeated game id whose rows differ) and those with a
player on two sides, the repeats of a seat, the matches left with fewer than two sides, and
whole matches whose seats of one side give different results or whose results no match can
have (two winners and no loser, say). A row left out alone leaves the rest of its match. Rows out of
time order are sorted (``MatchLog.sorted_input`` is False). The counts are of the log's rows:
seats, or games in games_1v1.

**Memory.** The file is streamed in chunks of ``chunk_rows`` rows (200,000 by default; pandas'
chunked CSV reader, pyarrow's Parquet batches): one chunk's text and parsed columns are held at a
time, several hundred bytes per row of the chunk (every column of a CSV row is parsed: pandas
reading only some would drop a row's extra fields unnoticed). Each chunk becomes compact arrays,
one value per seat kept: integer codes for the match, player and side (and region and party),
float64 times and the result, about 48 bytes per seat, 68 with the optional columns; each
distinct match, player, side, region and party id is held once, as a dictionary entry (about
100-150 bytes each). The checks across chunks (duplicates, inconsistent matches), the ranks and
the sort run on these arrays at the end, in place where they can, at a peak of about three
times the arrays; the ``seats`` frame takes the final arrays over without copying them. Reading
the 1,000,000 seats of benchmarks/bench_read_log.py (500,000 matches, 50,000 players, with
region and queue time) peaks at about 460 MiB for the whole process, of which about 100 MiB are
Python, pandas and numpy themselves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.calibration.chunks import (
    csv_chunks,
    csv_header,
    file_kind,
    parquet_chunks,
    parquet_file,
)
from lobbysim.calibration.mapping import (
    DRAW,
    LOSS,
    WIN,
    ColumnMapping,
    LogError,
    read_mapping,
    resolve_columns,
)
from lobbysim.calibration.matchlog import SKIP_REASONS, MatchLog
from lobbysim.calibration.precision import exact_copy
from lobbysim.calibration.rows import SKIP_CODES, ChunkReader
from lobbysim.validation import input_file_problem

__all__ = ["DEFAULT_CHUNK_ROWS", "read_log"]

#: Rows read at a time.
DEFAULT_CHUNK_ROWS = 200_000


class _Reader(ChunkReader):
    """Turns the compact arrays of a log's chunks (:class:`ChunkReader`) into a
    :class:`MatchLog`: the checks across chunks, the ranks, the codes, the frame."""

    # -- the whole log --------------------------------------------------------------------------

    def count(self, reason: str, seats: int) -> None:
        """Count ``seats`` seats left out for ``reason``, as the log's rows."""
        self.skipped[SKIP_CODES[reason]] += seats // (2 if self.layout == "games_1v1" else 1)

    def counts(self) -> dict[str, int]:
        return {reason: int(self.skipped[SKIP_CODES[reason]]) for reason in SKIP_REASONS}

    def nothing_left(self) -> LogError:
        empty = np.array([], dtype=np.int64)
        text = MatchLog(pd.DataFrame(), empty, empty, skipped=self.counts()).skipped_text()
        return LogError(f"{self.source}: no match left to read: {text or 'no seats'}")

    def finish(self) -> MatchLog:
        """Return the log: the checks across chunks, the ranks, the codes, the frame."""
        if not self.rows:
            raise LogError(f"{self.source}: the log has no rows")
        if "match" not in self.parts or not sum(len(p) for p in self.parts["match"]):
            raise self.nothing_left()
        a = {}
        for name in list(self.parts):
            a[name] = np.concatenate(self.parts.pop(name))
        if self.layout == "games_1v1":
            a = self.expand_games(a)
        a = self.seat_checks(a)
        a["side"] = self.side_ranks()[a["side"]]
        _take(a, _order(a["match"], a["side"], a["player"]))
        a = self.side_checks(a)
        if self.value != "score":
            a = self.result_checks(a)
        if not len(a["match"]):
            raise self.nothing_left()
        return self.build(self.ranked(a))

    @property
    def seconds_per_unit(self) -> float:
        """Seconds per unit of the times read: minutes for relative times, else seconds."""
        return 60.0 if self.kind in ("relative", None) else 1.0

    def drop(
        self, a: dict[str, np.ndarray], mask: np.ndarray, reason: str
    ) -> dict[str, np.ndarray]:
        """Return the seats not in ``mask``, counting those in it for ``reason``."""
        if not mask.any():
            return a
        self.count(reason, int(mask.sum()))
        _take(a, ~mask)
        return a

    def expand_games(self, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Return the seats of games_1v1 rows, leaving out every row of a game id whose rows
        differ (a row given twice stays, for the duplicate check), except that of a game given
        twice whose copies differ only in their times' precision the exact copy stays
        (:func:`lobbysim.calibration.precision.exact_copy`)."""
        rows = a
        _take(rows, _order(rows["match"]))
        first = _run_starts(rows["match"])
        head = np.maximum.accumulate(np.where(first, np.arange(len(first)), 0))
        differs = np.zeros(len(first), dtype=bool)
        for name in ("value", "player_0", "player_1"):
            differs |= rows[name] != rows[name][head]
        times = np.zeros(len(first), dtype=bool)
        for name in ("start", "end"):
            times |= rows[name] != rows[name][head]
        group = np.cumsum(first) - 1
        bad = np.zeros(len(first), dtype=bool)
        bad[group[differs | times]] = True
        copies = np.zeros(len(first), dtype=bool)  # rounded copies of a game kept exact
        other = np.zeros(len(first), dtype=bool)
        other[group[differs]] = True
        bounds = np.append(np.flatnonzero(first), len(first))
        for g in np.flatnonzero(bad & ~other).tolist():  # only the times differ
            rows_of = np.arange(bounds[g], bounds[g + 1])
            keep = exact_copy(rows["start"][rows_of], rows["end"][rows_of], self.seconds_per_unit)
            if keep is not None:
                bad[g] = False
                copies[rows_of[~keep]] = True
        drop = bad[group]
        self.skipped[SKIP_CODES["inconsistent_match"]] += int(drop.sum())
        self.skipped[SKIP_CODES["rounded_copy"]] += int(copies.sum())
        _take(rows, ~(drop | copies))
        value = rows["value"]
        return {
            "match": np.repeat(rows["match"], 2),
            "player": np.column_stack((rows["player_0"], rows["player_1"])).ravel(),
            "side": np.tile(np.array([0, 1], dtype=np.int64), len(value)),
            "start": np.repeat(rows["start"], 2),
            "end": np.repeat(rows["end"], 2),
            "value": np.column_stack((value, 2.0 - value)).ravel(),
        }

    def seat_checks(self, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Leave out the matches whose rows give different times (but of a match given twice,
        the same seats once with exact times and once rounded, keep the exact copy:
        :func:`lobbysim.calibration.precision.exact_copy`), those with a player on two sides,
        then the repeats of a seat (the first in the log stays)."""
        _take(a, _order(a["match"], a["player"], a["side"]))  # stable: log order kept
        group, starts = _groups(a["match"])
        if len(starts):
            bad = np.zeros(len(starts), dtype=bool)
            for name in ("start", "end"):
                values = a[name]
                bad |= np.minimum.reduceat(values, starts) != np.maximum.reduceat(values, starts)
            copies = np.zeros(len(group), dtype=bool)  # rounded copies of a match kept exact
            ends = np.append(starts[1:], len(group))
            for g in np.flatnonzero(bad).tolist():
                lo, hi = int(starts[g]), int(ends[g])
                keep = exact_copy(a["start"][lo:hi], a["end"][lo:hi], self.seconds_per_unit)
                seats = a["player"][lo:hi] * 2 + a["side"][lo:hi]  # the rounded copy's seats
                if keep is not None and set(seats[keep]) == set(seats[~keep]):
                    bad[g] = False
                    copies[lo:hi] = ~keep
            a = self.drop(a, copies, "rounded_copy")
            group, _ = _groups(a["match"])
            a = self.drop(a, bad[group], "inconsistent_match")
        m, p, s = a["match"], a["player"], a["side"]
        group, starts = _groups(m)
        both = (m[1:] == m[:-1]) & (p[1:] == p[:-1]) & (s[1:] != s[:-1])
        bad = np.zeros(len(starts), dtype=bool)
        bad[group[1:][both]] = True
        a = self.drop(a, bad[group], "player_on_both_sides")
        return self.drop(a, ~_run_starts(a["match"], a["player"], a["side"]), "duplicate_seat")

    def result_checks(self, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Leave out the matches whose seats of one side give different results (or ranks), or
        whose results no match can have (a draw with a win or a loss; no winner or loser)."""
        group, starts = _groups(a["match"])
        side_first = _run_starts(a["match"], a["side"])
        side_starts = np.flatnonzero(side_first)
        if not len(side_starts):
            return a
        v = a["value"]
        split = np.minimum.reduceat(v, side_starts) != np.maximum.reduceat(v, side_starts)
        bad = np.zeros(len(starts), dtype=bool)
        bad[group[side_starts][split]] = True
        if self.value == "result":
            sides = v[side_starts]
            of_match = group[side_starts]
            first = np.flatnonzero(_run_starts(of_match))
            won = np.maximum.reduceat(sides == WIN, first)
            drew = np.maximum.reduceat(sides == DRAW, first)
            lost = np.maximum.reduceat(sides == LOSS, first)
            bad |= ~((drew & ~won & ~lost) | (won & lost & ~drew))
        return self.drop(a, bad[group], "inconsistent_result")

    def side_checks(self, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Leave out the matches with fewer than two sides."""
        group, starts = _groups(a["match"])
        if not len(starts):
            return a
        sides = np.add.reduceat(_run_starts(a["match"], a["side"]).astype(np.int64), starts)
        return self.drop(a, (sides < 2)[group], "one_side")

    def ranked(self, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Add each seat's side place (``rank``, 0 best) and number its sides 0..k-1."""
        side_first = _run_starts(a["match"], a["side"])
        side_of = np.cumsum(side_first) - 1
        side_starts = np.flatnonzero(side_first)
        side_match = a["match"][side_starts]
        v = a["value"]
        # the higher score the better place; result codes (win/draw 0 < loss 2); ranks
        value = -np.add.reduceat(v, side_starts) if self.value == "score" else v[side_starts]
        match_first = _run_starts(side_match)
        match_of = np.cumsum(match_first) - 1
        first_side = np.flatnonzero(match_first)[match_of]
        if self.value == "result":
            rank = (value == LOSS).astype(np.int64)
        elif self.value == "rank":
            rank = value - np.minimum.reduceat(value, np.flatnonzero(match_first))[match_of]
            rank = rank.astype(np.int64)
        else:  # competition ranking: equal scores share the better place
            order = np.lexsort((value, side_match))
            sorted_value, sorted_match = value[order], side_match[order]
            new = _run_starts(sorted_match, sorted_value)
            at = np.maximum.accumulate(np.where(new, np.arange(len(new)), 0))
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = at - first_side[order]
        a["rank"] = rank[side_of]
        a["side"] = (np.arange(len(side_starts)) - first_side)[side_of]
        return a

    def side_ranks(self) -> np.ndarray:
        """Return, per side code, its place among the log's side values (numbers in numeric
        order, else text order): a match's sides are numbered in the order of their values."""
        if self.layout == "games_1v1" or self.mapping.free_for_all:
            return np.arange(max(len(self.ids["player"]), 2), dtype=np.int64)
        values = list(self.ids["side"])
        try:
            keys: list[Any] = [float(v) for v in values]
        except ValueError:
            keys = [str(v) for v in values]
        order = sorted(range(len(values)), key=keys.__getitem__)
        ranks = np.empty(len(values), dtype=np.int64)
        ranks[order] = np.arange(len(values))
        return ranks

    def build(self, a: dict[str, np.ndarray]) -> MatchLog:
        """Return the :class:`MatchLog`: matches numbered by start, players by first
        appearance, sorted by start, match, side, player."""
        group, starts = _groups(a["match"])
        by_start = np.lexsort((a["match"][starts], a["start"][starts]))
        match_code = np.empty(len(starts), dtype=np.int64)
        match_code[by_start] = np.arange(len(starts))
        match = match_code[group]
        first = _order(match, a["side"], a["player"])
        player, player_ids = _first_appearance(a["player"][first], self.ids["player"])
        # then within a match's side by the new codes (which keep their first appearances)
        second = _order(match[first], a["side"][first], player)
        player = player[second]
        order = first[second]
        match = match[order]
        _take(a, order)
        match_ids = np.array(list(self.ids["match"]), dtype=object)
        match_ids = _id_array(match_ids[a["match"][np.flatnonzero(_run_starts(match))]])
        start, end = a["start"], a["end"]
        origin = None
        if self.kind != "relative":
            zero = float(start.min())
            origin = pd.Timestamp(zero, unit="s", tz="UTC")
            start, end = (start - zero) / 60.0, (end - zero) / 60.0
        seats = pd.DataFrame(  # the arrays are this frame's own: not copied
            {
                "match": match,
                "player": player,
                "start": start.astype(np.float64, copy=False),
                "end": end.astype(np.float64, copy=False),
                "side": a.pop("side").astype(np.int64, copy=False),
                "rank": a.pop("rank").astype(np.int64, copy=False),
            },
            copy=False,
        )
        if "region" in a:
            names = [str(v) for v in self.ids["region"]]
            seats["region"] = pd.Series(
                pd.Categorical.from_codes(a["region"], categories=names)
            ).astype("string")
        if "party" in a:
            party = a["party"]
            known = party >= 0
            numbered = np.full(len(party), -1, dtype=np.int64)
            if known.any():
                numbered[known], _ = _first_appearance(party[known], {})
            seats["party"] = numbered
        if "queue_time" in a:
            seats["queue_time"] = a["queue_time"].astype(np.float64)
        return MatchLog(
            seats=seats,
            match_ids=match_ids,
            player_ids=player_ids,
            origin=origin,
            skipped=self.counts(),
            source=self.source,
            sorted_input=self.sorted_input,
        )


def _run_starts(*keys: np.ndarray) -> np.ndarray:
    """Return where a run of equal keys starts, in arrays sorted by the keys."""
    first = np.ones(len(keys[0]), dtype=bool)
    if len(first):
        first[1:] = False
        for key in keys:
            first[1:] |= key[1:] != key[:-1]
    return first


def _order(*keys: np.ndarray) -> np.ndarray:
    """Return the stable order of codes (whole numbers >= 0) sorted by ``keys``, the first
    the most significant: one combined key where it fits in 63 bits (fast on sorted input),
    else :func:`numpy.lexsort`."""
    sizes = [int(key.max()) + 1 if len(key) else 1 for key in keys]
    if np.prod(np.array(sizes, dtype=np.float64)) < 2.0**62:
        combined = np.zeros(len(keys[0]), dtype=np.int64)
        for key, size in zip(keys, sizes, strict=True):
            combined = combined * size + key
        return np.argsort(combined, kind="stable")
    return np.lexsort(keys[::-1])


def _take(a: dict[str, np.ndarray], index: np.ndarray) -> None:
    """Index every array of ``a`` in place (each old array freed as it is replaced)."""
    for name in list(a):
        a[name] = a[name][index]


def _groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return each element's run number and the runs' starts, in an array sorted by key."""
    first = _run_starts(key)
    return np.cumsum(first) - 1, np.flatnonzero(first)


def _first_appearance(codes: np.ndarray, table: Mapping[Any, int]) -> tuple[np.ndarray, Any]:
    """Return codes renumbered 0..n-1 in order of first appearance, and the ids of ``table``
    (id -> old code) in the new order."""
    unique, first = np.unique(codes, return_index=True)
    new = np.empty(len(unique), dtype=np.int64)
    new[np.argsort(first, kind="stable")] = np.arange(len(unique))
    renumbered = new[np.searchsorted(unique, codes)]
    ids = None
    if table:
        old = unique[np.argsort(first, kind="stable")]
        ids = _id_array(np.array(list(table), dtype=object)[old])
    return renumbered, ids


def _id_array(ids: np.ndarray) -> np.ndarray:
    """Return the log's ids as int64 when every one is an integer written plainly, else as
    they are (text)."""
    try:
        numbers = ids.astype(np.int64)
    except (ValueError, TypeError, OverflowError):
        return ids
    if (numbers.astype(str) == ids.astype(str)).all():
        return numbers
    return ids


# --- the entry point ------------------------------------------------------------------------


def read_log(
    path: str | os.PathLike[str],
    mapping: Mapping[str, Any] | str | os.PathLike[str] | ColumnMapping | None = None,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> MatchLog:
    """Read a match log (CSV, gzipped CSV or Parquet) into a :class:`MatchLog`.

    Args:
        path: the log: ``.csv``, ``.csv.gz`` or ``.parquet``.
        mapping: its column mapping (:func:`read_mapping`: a dict, a YAML file, a bundled
            mapping's name), or None for the default columns (see the module docstring).
        chunk_rows: rows read at a time (the memory the file's text takes while it is read).

    Raises:
        LogError: one line: the file cannot be read (missing, not CSV or Parquet, not UTF-8
            with the line and byte, pyarrow missing for Parquet), a column is missing (named,
            with the file's columns), the mapping is wrong, or no match is left.

    Example:
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     log = pathlib.Path(tmp) / "log.csv"
        ...     _ = log.write_text(
        ...         "match_id,player_id,start,end,team,result\\n"
        ...         "g1,ann,0,10,blue,win\\ng1,bob,0,10,red,loss\\n"
        ...         "g2,bob,12,20,blue,draw\\ng2,cy,12,20,red,draw\\n"
        ...     )
        ...     matches = read_log(log)
        >>> print(matches.seats[["match", "player", "start", "side", "rank"]].to_string())
           match  player  start  side  rank
        0      0       0    0.0     0     0
        1      0       1    0.0     1     1
        2      1       1   12.0     0     0
        3      1       2   12.0     1     0
        >>> list(matches.player_ids), matches.origin, matches.skipped_text()
        (['ann', 'bob', 'cy'], None, '')
    """
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise LogError(f"chunk_rows: expected a whole number >= 1, got {chunk_rows!r}")
    if not isinstance(path, str | os.PathLike):
        raise LogError(f"path: expected a file's path, got {type(path).__name__}")
    where = Path(path)
    columns = read_mapping(mapping)
    kind = file_kind(where)
    problem = input_file_problem(where, 1 << 62)
    if problem is not None:
        raise LogError(f"{where}: {problem}")
    parquet = None
    if kind == "csv":
        header = csv_header(where, columns.encoding)
    else:
        parquet = parquet_file(where)
        header = list(parquet.schema_arrow.names)
    plan = resolve_columns(columns, header, str(where))
    needed = list(dict.fromkeys([*plan.values(), *columns.exclude]))
    numeric = {"start", "end", "duration", "score", "rank", "queue_time"}
    text = {name for role, name in plan.items() if role not in numeric} | set(columns.exclude)
    reader = _Reader(columns, plan, str(where))
    if parquet is None:
        chunks = csv_chunks(where, needed, text, columns.encoding, chunk_rows)
    else:
        chunks = parquet_chunks(parquet, where, needed, text, chunk_rows)
    for chunk in chunks:
        reader.add(chunk)
    return reader.finish()
