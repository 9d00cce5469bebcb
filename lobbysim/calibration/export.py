"""A lobbysim run's records as a match log, and a match log written to a file.

:func:`records_to_log` turns a run's record frames (:mod:`lobbysim.records.rows`: ``games`` and
``participants``; ``waits`` for the queue times) into the default layout that
:func:`lobbysim.calibration.read.read_log` reads without a column mapping, one row per seat:

==============  ===========================================================================
``match_id``    the game's ``game_id``
``player_id``   the seat's player
``start``       the game's start, simulated minutes (the reader's default unit)
``end``         the game's end
``team``        the seat's team (0 or 1); in a free-for-all each seat is its own side,
                numbered 0..n-1 in the order the players entered
``result``      1v1 and team games: ``win``, ``loss``, or ``draw`` (a team game without a
                winner)
``score``       free-for-all games instead of ``result``: the seat's score (higher is better)
``region``      with a world: the seat's region (else the player's, from ``players``)
``party_id``    with parties: the party the player sat down with (empty: solo)
``queue_time``  with ``waits``: the minutes the player waited for this seat, from the
                matched queueing spell that ended as the seat began (same player, ``left_queue``
                equal to ``joined``); left out unless every seat has exactly one
==============  ===========================================================================

A back-filled seat is a seat of its team like the others; the seat's own minutes (``joined``,
``left``) are not in the log, whose times are the match's. Rows are in order of start (then
game, then the order the players entered). :func:`write_log` writes a frame as CSV (``.csv``,
``.csv.gz``) or Parquet (``.parquet``, needs pyarrow: ``pip install 'lobbysim[parquet]'``)
as every output file is (:func:`lobbysim.records.outputs.write_output_file`): whole or not at all,
and
never over an existing file unless asked to.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from lobbysim.calibration.chunks import PARQUET_INSTALL
from lobbysim.calibration.mapping import LogError
from lobbysim.records.outputs import write_output_file

#: The columns :func:`records_to_log` writes, in order (those a run has).
LOG_COLUMNS = (
    "match_id",
    "player_id",
    "start",
    "end",
    "team",
    "result",
    "score",
    "region",
    "party_id",
    "queue_time",
)


def _require(frame: pd.DataFrame, name: str, columns: tuple[str, ...]) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name}: expected a DataFrame, got {type(frame).__name__}")
    absent = [column for column in columns if column not in frame.columns]
    if absent:
        raise ValueError(
            f"{name}: no column {absent[0]!r}; the frame has: {', '.join(map(str, frame.columns))}"
        )


def records_to_log(
    games: pd.DataFrame,
    participants: pd.DataFrame,
    players: pd.DataFrame | None = None,
    *,
    waits: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return a run's games as a match log, one row per seat (see the module docstring).

    Args:
        games, participants: the run's record frames.
        players: the players' records, for the region of a seat when ``participants`` has
            none (optional).
        waits: the queueing spells, for ``queue_time`` (optional).

    Raises:
        TypeError, ValueError: a frame without the record columns, games of more than one
            mode, or a seat whose game is not in ``games``.
    """
    _require(games, "games", ("game_id", "mode", "start", "end", "winner"))
    _require(participants, "participants", ("game_id", "player_id", "team", "joined", "score"))
    seats = participants.merge(
        games[["game_id", "mode", "start", "end", "winner"]],
        on="game_id",
        how="left",
        validate="many_to_one",
        sort=False,
    )
    orphan = seats["start"].isna().to_numpy()
    if orphan.any():
        game = seats["game_id"].to_numpy()[int(np.argmax(orphan))]
        raise ValueError(f"participants: game_id {game} is not in games")
    modes = list(dict.fromkeys(seats["mode"].astype(str)))
    if len(modes) > 1:
        raise ValueError(f"games: one mode expected, got {', '.join(modes)}")
    seats = seats.sort_values(["start", "game_id"], kind="stable").reset_index(drop=True)
    log = pd.DataFrame(
        {
            "match_id": seats["game_id"].to_numpy(dtype=np.int64),
            "player_id": seats["player_id"].to_numpy(dtype=np.int64),
            "start": seats["start"].to_numpy(dtype=np.float64),
            "end": seats["end"].to_numpy(dtype=np.float64),
        }
    )
    if modes == ["ffa"]:
        log["team"] = seats.groupby("game_id", sort=False).cumcount().to_numpy(dtype=np.int64)
        log["score"] = seats["score"].to_numpy(dtype=np.float64)
    else:
        team = seats["team"].to_numpy(dtype=np.float64, na_value=np.nan)
        winner = seats["winner"].to_numpy(dtype=np.float64, na_value=np.nan)
        if np.isnan(team).any():
            game = seats["game_id"].to_numpy()[int(np.argmax(np.isnan(team)))]
            raise ValueError(f"participants: a seat of game {game} has no team")
        log["team"] = team.astype(np.int64)
        log["result"] = np.where(
            np.isnan(winner), "draw", np.where(team == winner, "win", "loss")
        ).astype(object)
    if "region" in seats.columns:
        log["region"] = seats["region"].astype("string").to_numpy()
    elif players is not None and {"player_id", "region"} <= set(players.columns):
        region = players.drop_duplicates("player_id").set_index("player_id")["region"]
        log["region"] = log["player_id"].map(region).astype("string").to_numpy()
    if "party_id" in seats.columns:
        log["party_id"] = seats["party_id"].astype("Int64").to_numpy()
    if waits is not None:
        queue = queue_times(seats, waits)
        if queue is not None:
            log["queue_time"] = queue
    return log


def queue_times(seats: pd.DataFrame, waits: pd.DataFrame) -> np.ndarray | None:
    """Return each seat's minutes in the queue, from the matched queueing spell of the same
    player that ended as the seat began; None unless every seat has exactly one."""
    _require(waits, "waits", ("player_id", "left_queue", "outcome", "wait"))
    matched = waits.loc[waits["outcome"] == "matched", ["player_id", "left_queue", "wait"]]
    if matched.duplicated(["player_id", "left_queue"]).any():
        return None
    joined = seats[["player_id", "joined"]].merge(
        matched,
        left_on=["player_id", "joined"],
        right_on=["player_id", "left_queue"],
        how="left",
        sort=False,
    )
    wait = joined["wait"].to_numpy(dtype=np.float64, na_value=np.nan)
    if len(wait) != len(seats) or np.isnan(wait).any():
        return None
    return wait


def log_format(path: Path) -> str:
    """Return ``csv``, ``csv.gz`` or ``parquet`` by the file's name, or raise :class:`LogError`."""
    name = path.name.lower()
    for suffix in ("csv.gz", "csv", "parquet"):
        if name.endswith(f".{suffix}"):
            return suffix
    raise LogError(f"{path}: expected a .csv, .csv.gz or .parquet file name")


def write_log(frame: pd.DataFrame, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write a log frame to ``path`` as CSV (``.csv``, ``.csv.gz``) or Parquet (``.parquet``),
    as every output file is (:func:`lobbysim.records.outputs.write_output_file`: whole or not at
    all,
    new unless ``force``). Returns the path.

    Raises:
        LogError: an unknown suffix, pyarrow missing for Parquet.
        OutputTargetError: the target cannot take the file (it exists, is a link, a folder, a
            device; its folder does not exist).
        OSError: the file cannot be written (a full disk); the temporary file is removed.
    """
    out = Path(path)
    fmt = log_format(out)
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise LogError(
                f"{out}: writing Parquet needs pyarrow, which is not installed: {PARQUET_INSTALL}"
            ) from None

    def write(tmp: Path) -> None:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, compression="gzip" if fmt == "csv.gz" else None)

    return write_output_file(out, write, force=force)
