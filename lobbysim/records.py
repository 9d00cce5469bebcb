"""Plain records that flow from the simulated games to the raters and into the result frames.

A finished game is a :class:`GameResult`: who sat in it, on which side, for which minutes, with what
score, and who won. The SimPy side builds them; raters, metrics and the record frames read them.
Records are frozen slotted dataclasses (cheap to make on the hot path) that turn into pandas rows.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

MODES = ("1v1", "team", "ffa")

#: The formats of record files (``records.format``, ``--records-format``) and the default.
RECORD_FORMATS = ("csv", "parquet")
DEFAULT_RECORD_FORMAT = "csv"


@dataclass(frozen=True, slots=True)
class Seat:
    """One player's stint in one game.

    Attributes:
        player_id: the player.
        team: the side (0 or 1 in ``1v1`` and ``team`` games); ``None`` in a free-for-all.
        joined, left: simulation minutes at which the player entered and left the game.
        score: points scored during the stint.
        registered: rated player (True) or guest (False).
        quit: the player left before the game ended.
        performance: the player's performance draw for this game, N(s, beta^2) (hidden from
            policies and raters; kept for diagnostics).
    """

    player_id: int
    team: int | None
    joined: float
    left: float
    score: float
    registered: bool
    quit: bool
    performance: float

    @property
    def minutes(self) -> float:
        """Return the minutes the player spent in the game."""
        return self.left - self.joined


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game, as every rater sees it.

    Attributes:
        game_id: sequential id within the run.
        mode: ``"1v1"``, ``"team"`` or ``"ffa"``.
        start, end: simulation minutes.
        seats: every stint, in the order players entered.
        winner: the winning side (``1v1``/``team``); ``None`` in a free-for-all (players are
            compared by score per hour) or a drawn team game.
    """

    game_id: int
    mode: str
    start: float
    end: float
    seats: tuple[Seat, ...]
    winner: int | None

    @property
    def length(self) -> float:
        """Return the game's length in minutes."""
        return self.end - self.start


# The slots of the two records: setting them directly makes the same frozen objects as the
# dataclasses' __init__, which sets each field through object.__setattr__, in ~40% less time
# (the lobby makes three per 1v1 game).
_new = object.__new__
_SEAT_SLOTS = tuple(Seat.__dict__[f.name].__set__ for f in fields(Seat))
_RESULT_SLOTS = tuple(GameResult.__dict__[f.name].__set__ for f in fields(GameResult))


def make_seat(
    player_id: int,
    team: int | None,
    joined: float,
    left: float,
    score: float,
    registered: bool,
    quit: bool,
    performance: float,
) -> Seat:
    """Return ``Seat(...)`` of these fields, made faster (the same frozen object)."""
    seat: Seat = _new(Seat)
    s0, s1, s2, s3, s4, s5, s6, s7 = _SEAT_SLOTS
    s0(seat, player_id)
    s1(seat, team)
    s2(seat, joined)
    s3(seat, left)
    s4(seat, score)
    s5(seat, registered)
    s6(seat, quit)
    s7(seat, performance)
    return seat


def make_result(
    game_id: int,
    mode: str,
    start: float,
    end: float,
    seats: tuple[Seat, ...],
    winner: int | None,
) -> GameResult:
    """Return ``GameResult(...)`` of these fields, made faster (the same frozen object)."""
    result: GameResult = _new(GameResult)
    s0, s1, s2, s3, s4, s5 = _RESULT_SLOTS
    s0(result, game_id)
    s1(result, mode)
    s2(result, start)
    s3(result, end)
    s4(result, seats)
    s5(result, winner)
    return result


#: Every record kind of a run with its columns in order and their pandas dtypes: the one schema of
#: the record frames in memory and of their files (:mod:`lobbysim.record_files` reads and writes
#: them; a new kind is one more entry here). ``Int64`` and ``boolean`` are pandas' nullable dtypes
#: (a free-for-all has no teams and no winner, a game no stronger side when skills are equal);
#: ``str`` is pandas' default string dtype (``object`` before pandas 3).
RECORD_COLUMNS: dict[str, dict[str, str]] = {
    "games": {
        "game_id": "int64",
        "mode": "str",
        "start": "float64",
        "end": "float64",
        "draw_prob_true": "float64",
        "skill_gap_true": "float64",
        "quality_predicted": "float64",
        "stronger_side_won": "boolean",
        "winner": "Int64",
    },
    "participants": {
        "game_id": "int64",
        "player_id": "int64",
        "team": "Int64",
        "joined": "float64",
        "left": "float64",
        "minutes": "float64",
        "score": "float64",
        "registered": "bool",
        "quit": "bool",
    },
    "waits": {
        "player_id": "int64",
        "enqueued": "float64",
        "left_queue": "float64",
        "outcome": "str",
        "wait": "float64",
    },
    "ratings": {
        "time": "float64",
        "rater": "str",
        "player_id": "int64",
        "rating": "float64",
        "variance": "float64",
    },
    "players": {
        "player_id": "int64",
        "skill": "float64",
        "mu0": "float64",
        "var0": "float64",
        "registered": "bool",
        "games": "int64",
        "wins": "int64",
        "state": "str",
    },
}
