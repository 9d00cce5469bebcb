"""A match log as calibration reads it: one row per seat, normalised.

Every log a studio or a public dataset gives (:mod:`lobbysim.calibration.read` reads CSV and
Parquet, with column mappings) becomes a :class:`MatchLog`, whose ``seats`` frame has exactly
these columns, sorted by ``start``, then ``match``, ``side``, ``player``:

=============  ========  ===================================================================
column         dtype     meaning
=============  ========  ===================================================================
``match``      int64     the match, 0..M-1 in order of start (the log's id: ``match_ids``)
``player``     int64     the player, 0..P-1 in order of first appearance (``player_ids``)
``start``      float64   minutes since the log's origin when the seat's match started
``end``        float64   minutes since the origin when it ended (>= start)
``side``       int64     the seat's side within its match, 0..k-1 (a free-for-all: one each)
``rank``       int64     the side's place, 0 best; sides of equal rank drew
``region``     string    optional (``<NA>`` where unknown)
``party``      int64     optional: a party within the log, -1 for none
``queue_time`` float64   optional: minutes the player waited for the match (NaN unknown)
=============  ========  ===================================================================

The optional columns are present only when the log has them (:attr:`MatchLog.has`).
``origin`` is the wall-clock time of minute 0 when the log gave timestamps (UTC), so that hour
of day is ``(origin + start).hour``; with numeric times minute 0 is taken as midnight.
``skipped`` counts the rows left out and why (:data:`SKIP_REASONS`): a fit never rests on rows
it silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: The columns every normalised log has, with their dtypes.
REQUIRED = {
    "match": "int64",
    "player": "int64",
    "start": "float64",
    "end": "float64",
    "side": "int64",
    "rank": "int64",
}
#: The columns a log may add.
OPTIONAL = {"region": "string", "party": "int64", "queue_time": "float64"}

#: Why rows are left out, as :attr:`MatchLog.skipped` counts them.
SKIP_REASONS = {
    "missing_value": "a required value is empty",
    "end_before_start": "the match ends before it starts",
    "bad_time": "a time that cannot be read (or a timestamp outside 1677-2262)",
    "bad_result": "a result, score or rank that cannot be read",
    "player_on_both_sides": "a player sits on two sides of one match (the whole match)",
    "duplicate_seat": "the same player in the same match twice (the repeats)",
    "inconsistent_match": "one match id with different start or end times (the whole match)",
    "one_side": "a match with fewer than two sides (the whole match)",
    "excluded": "a row the column mapping excludes (its exclude key)",
    "inconsistent_result": (
        "seats of one side with different results, or results no match can have (the whole match)"
    ),
    "rounded_copy": "a copy of a match with its times rounded (the exact copy kept)",
}


@dataclass
class MatchLog:
    """A normalised match log (see the module docstring).

    Attributes:
        seats: one row per seat, the columns above.
        match_ids, player_ids: the log's own ids, by ``match`` and ``player`` code.
        origin: the UTC time of minute 0, or None for numeric times.
        skipped: rows left out, by reason (:data:`SKIP_REASONS`).
        source: where the log came from (a path, or a label).
        sorted_input: whether the input rows were already in time order (informational).
    """

    seats: pd.DataFrame
    match_ids: np.ndarray
    player_ids: np.ndarray
    origin: pd.Timestamp | None = None
    skipped: Mapping[str, int] = field(default_factory=dict)
    source: str = "log"
    sorted_input: bool = True

    def has(self, column: str) -> bool:
        """Whether the log has an optional column."""
        return column in self.seats.columns

    @property
    def matches(self) -> int:
        return len(self.match_ids)

    @property
    def players(self) -> int:
        return len(self.player_ids)

    @property
    def span_minutes(self) -> float:
        """Minutes from the first start to the last end."""
        if self.seats.empty:
            return 0.0
        return float(self.seats["end"].max() - self.seats["start"].min())

    def hours_of_day(self) -> np.ndarray:
        """Return each seat's start as an hour of day in [0, 24) (UTC, or minute 0 = midnight)."""
        offset = 0.0
        if self.origin is not None:
            midnight = self.origin.normalize()
            offset = (self.origin - midnight).total_seconds() / 60.0
        return ((self.seats["start"].to_numpy() + offset) / 60.0) % 24.0

    def skipped_text(self) -> str:
        """Return ``"12 rows skipped: 10 end before start, 2 duplicate seat"`` or ``""``."""
        counts = {k: v for k, v in self.skipped.items() if v}
        if not counts:
            return ""
        parts = ", ".join(f"{v} {SKIP_REASONS.get(k, k)}" for k, v in counts.items())
        return f"{sum(counts.values())} rows skipped: {parts}"


def check_seats(seats: pd.DataFrame) -> list[str]:
    """Return what is wrong with a normalised seats frame (empty if it is one).

    Checks the columns and dtypes, the sort order, codes 0..n-1, ``end >= start``, at least two
    sides per match and no player on two sides of a match.
    """
    problems = []
    for column, dtype in REQUIRED.items():
        if column not in seats.columns:
            problems.append(f"missing column {column}")
        elif str(seats[column].dtype) != dtype:
            problems.append(f"column {column} is {seats[column].dtype}, expected {dtype}")
    extra = set(seats.columns) - set(REQUIRED) - set(OPTIONAL)
    if extra:
        problems.append(f"unknown columns {sorted(extra)}")
    if problems or seats.empty:
        return problems
    keys = seats[["start", "match", "side", "player"]]
    if not keys.equals(keys.sort_values(["start", "match", "side", "player"])):
        problems.append("not sorted by start, match, side, player")
    if (seats["end"] < seats["start"]).any():
        problems.append("a seat ends before it starts")
    for column in ("match", "player"):
        codes = np.unique(seats[column].to_numpy())
        if codes[0] != 0 or codes[-1] != len(codes) - 1:
            problems.append(f"{column} codes are not 0..n-1")
    sides = seats.groupby("match")["side"].nunique()
    if (sides < 2).any():
        problems.append("a match with fewer than two sides")
    both = seats.groupby(["match", "player"])["side"].nunique()
    if (both > 1).any():
        problems.append("a player on two sides of a match")
    return problems


def from_records(games: pd.DataFrame, participants: pd.DataFrame, source: str = "run") -> MatchLog:
    """Return the match log of a lobbysim run's record frames (``games``, ``participants``):
    one seat per stint, the game's start and end, the side its team (a free-for-all: one side
    per player, ranked by score per hour), ranks from the winner (none in a team game: a draw).
    """
    g = games.set_index("game_id")
    p = participants
    if p.empty:
        raise ValueError("the run has no games")
    game = p["game_id"].to_numpy()
    start = g["start"].reindex(game).to_numpy(dtype=float)
    end = g["end"].reindex(game).to_numpy(dtype=float)
    mode = g["mode"].reindex(game).to_numpy()
    team = p["team"].to_numpy(dtype=float, na_value=np.nan)
    ffa = mode == "ffa"
    winner = g["winner"].reindex(game).to_numpy(dtype=float, na_value=np.nan)
    rank = np.where(np.isnan(winner), 0, (team != winner).astype(np.int64))
    side = np.where(ffa, -1, np.nan_to_num(team, nan=0.0)).astype(np.int64)
    frame = pd.DataFrame(
        {
            "game": game,
            "player_id": p["player_id"].to_numpy(),
            "start": start,
            "end": end,
            "side": side,
            "rank": rank.astype(np.int64),
        }
    )
    if ffa.any():
        minutes = np.maximum(p["minutes"].to_numpy(dtype=float), 1e-9)
        sph = p["score"].to_numpy(dtype=float) / minutes
        sub = frame.loc[ffa].assign(sph=sph[ffa])
        sub["side"] = sub.groupby("game").cumcount()
        sub["rank"] = sub.groupby("game")["sph"].rank(method="min", ascending=False) - 1
        frame.loc[ffa, "side"] = sub["side"].to_numpy()
        frame.loc[ffa, "rank"] = sub["rank"].to_numpy().astype(np.int64)
    frame = frame.sort_values(["start", "game", "side", "player_id"], kind="stable")
    # codes in order of start: the first seat of each game, in the sorted frame
    first_seen = pd.unique(frame["game"].to_numpy())
    match_code = {m: i for i, m in enumerate(first_seen.tolist())}
    player_seen = pd.unique(frame["player_id"].to_numpy())
    player_code = {m: i for i, m in enumerate(player_seen.tolist())}
    seats = pd.DataFrame(
        {
            "match": frame["game"].map(match_code).to_numpy(dtype=np.int64),
            "player": frame["player_id"].map(player_code).to_numpy(dtype=np.int64),
            "start": frame["start"].to_numpy(dtype=np.float64),
            "end": frame["end"].to_numpy(dtype=np.float64),
            "side": frame["side"].to_numpy(dtype=np.int64),
            "rank": frame["rank"].to_numpy(dtype=np.int64),
        }
    )
    seats = seats.sort_values(["start", "match", "side", "player"], kind="stable")
    seats = seats.reset_index(drop=True)
    return MatchLog(seats, np.asarray(first_seen), np.asarray(player_seen), source=source)
