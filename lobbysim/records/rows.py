"""Plain records that flow from the simulated games to the raters and into the result frames.

A finished game is a :class:`GameResult`: who sat in it, on which side, for which minutes, with what
score, and who won. The SimPy side builds them; raters, metrics and the record frames read them.
Records are frozen slotted dataclasses (cheap to make on the hot path) that turn into pandas rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, overload

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


class DuelBatch(Sequence[GameResult]):
    """Finished 1v1 games held as columns: a sequence of :class:`GameResult` that is made only
    for whoever reads it as one.

    The lobby hands the 1v1 games it scores to the raters as a batch: a rater that knows the
    columns (the built-in ones) reads them directly, any other iterates over the games as
    :class:`GameResult` objects, made on first use, the same as the lobby would have made. Each
    column holds one value per game, in the order the games finished; side 0 is player ``a``,
    side 1 player ``b``, both stints last from ``start`` to ``end``, ``quit_side`` is the side
    that quit (-1: none) and ``winner`` the winning side. The lobby makes it well-formed: two
    different players, a winner of 0 or 1.
    """

    __slots__ = (
        "_results",
        "end",
        "game_id",
        "performance_a",
        "performance_b",
        "player_a",
        "player_b",
        "quit_side",
        "registered_a",
        "registered_b",
        "score_a",
        "score_b",
        "start",
        "winner",
    )

    def __init__(
        self,
        game_id: Sequence[int],
        start: Sequence[float],
        end: Sequence[float],
        player_a: Sequence[int],
        player_b: Sequence[int],
        registered_a: Sequence[bool],
        registered_b: Sequence[bool],
        score_a: Sequence[float],
        score_b: Sequence[float],
        performance_a: Sequence[float],
        performance_b: Sequence[float],
        quit_side: Sequence[int],
        winner: Sequence[int],
    ) -> None:
        self.game_id, self.start, self.end = game_id, start, end
        self.player_a, self.player_b = player_a, player_b
        self.registered_a, self.registered_b = registered_a, registered_b
        self.score_a, self.score_b = score_a, score_b
        self.performance_a, self.performance_b = performance_a, performance_b
        self.quit_side, self.winner = quit_side, winner
        self._results: list[GameResult] | None = None

    def __len__(self) -> int:
        return len(self.game_id)

    @overload
    def __getitem__(self, index: int) -> GameResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[GameResult]: ...

    def __getitem__(self, index: int | slice) -> GameResult | list[GameResult]:
        return self.results()[index]

    def __iter__(self) -> Iterator[GameResult]:
        return iter(self.results())

    def __repr__(self) -> str:
        return f"DuelBatch({len(self)} games)"

    def results(self) -> list[GameResult]:
        """Return the games as :class:`GameResult` objects (made once, on the first call)."""
        if self._results is None:
            self._results = [_duel_result(*game) for game in zip(*self.columns(), strict=True)]
        return self._results

    def result(self, k: int) -> GameResult:
        """Return game ``k`` as a :class:`GameResult` (the one :meth:`results` holds, if made)."""
        if self._results is not None:
            return self._results[k]
        return _duel_result(*(column[k] for column in self.columns()))

    def columns(self) -> tuple[Sequence[Any], ...]:
        """Return the columns in the order of the constructor's arguments."""
        return (
            self.game_id,
            self.start,
            self.end,
            self.player_a,
            self.player_b,
            self.registered_a,
            self.registered_b,
            self.score_a,
            self.score_b,
            self.performance_a,
            self.performance_b,
            self.quit_side,
            self.winner,
        )

    @classmethod
    def concat(cls, batches: Sequence[DuelBatch]) -> DuelBatch:
        """Return the games of ``batches``, one after the other, as one batch."""
        if len(batches) == 1:
            return batches[0]
        parts = [batch.columns() for batch in batches]
        return cls(
            *(tuple(itertools.chain.from_iterable(column)) for column in zip(*parts, strict=True))
        )


def _duel_result(
    game_id: int,
    start: float,
    end: float,
    player_a: int,
    player_b: int,
    registered_a: bool,
    registered_b: bool,
    score_a: float,
    score_b: float,
    performance_a: float,
    performance_b: float,
    quit_side: int,
    winner: int,
) -> GameResult:
    """Return one game of a :class:`DuelBatch` (its columns' values) as a :class:`GameResult`."""
    seats = (
        make_seat(player_a, 0, start, end, score_a, registered_a, quit_side == 0, performance_a),
        make_seat(player_b, 1, start, end, score_b, registered_b, quit_side == 1, performance_b),
    )
    return make_result(game_id, "1v1", start, end, seats, winner)


#: Every record kind of a run with its columns in order and their pandas dtypes: the one schema of
#: the record frames in memory and of their files (:mod:`lobbysim.records.files` reads and writes
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

#: The columns the records of a run with a world (:mod:`lobbysim.sim.world`) add to their kinds,
#: after the schema's: where a game was hosted; each seat's region and latency to it (ms); each
#: queueing spell's and each player's region. A run without a world has none of them.
WORLD_COLUMNS: dict[str, dict[str, str]] = {
    "games": {"data_centre": "str"},
    "participants": {"region": "str", "latency_ms": "float64"},
    "waits": {"region": "str"},
    "players": {"region": "str"},
}

#: The columns the records of a run with parties (:mod:`lobbysim.sim.parties`) add, after the
#: world's: the party a seat's player sat down with and the party a queueing spell was queued
#: with (empty: solo). A party's id is that of one ticket: a crew of a player base is a new
#: party at each visit.
PARTY_COLUMNS: dict[str, dict[str, str]] = {
    "participants": {"party_id": "Int64"},
    "waits": {"party_id": "Int64"},
}


#: The columns the games records of a team game run add, after the world's: the driving rater's
#: predicted chance that the team with the higher rating sum wins (0.5 for two equal teams), and
#: the true skill gap between the teams' mean effective skills, both at the game's start
#: (``skill_gap_true`` weighs each stint by its minutes, back-fills included).
TEAM_COLUMNS: dict[str, dict[str, str]] = {
    "games": {"win_chance_predicted": "float64", "team_gap_true": "float64"},
}


#: The prefix of a participants column holding a seat's value of an attribute the rules read
#: (``attr_<name>``; :func:`rule_columns`): no other column starts with it.
ATTRIBUTE_PREFIX = "attr_"

#: The participants columns a run under a rule set (``matchmaker.rules``, games of every mode)
#: adds after its attribute columns (:func:`rule_columns`): with a world, the player's best
#: latency over the data centres (ms, the delta-ping rules' reference); and the minute the seat
#: a back-fill filled was opened by a quit (empty: a seat taken when the game formed, and every
#: seat of a 1v1 game, which has no back-fill). A
#: seat's wait needs no column: it is the waits record of its player whose ``left_queue`` is
#: the seat's ``joined`` (every seat has one; tests/flexmatch/rule_checker.py reads it so).
RULE_COLUMNS: dict[str, dict[str, str]] = {
    "participants": {"best_latency_ms": "float64", "seat_opened": "float64"},
}


def rule_columns(attributes: Mapping[str, str], world: bool) -> dict[str, str]:
    """Return the participants columns of a run under a rule set, after the parties' columns.

    One column per attribute the rules read, ``attr_<name>`` (``attributes``: each name with
    its dtype, ``float64`` or ``str``), holding the seat's value when the rules were checked
    (the game's formation, or its back-fill): a number as a float (an attribute bound to the
    rating or true skill: the value the rules used then); a ``string`` as its text; a
    ``string_list`` as the JSON text of its values in declared order (``["a","b"]``), as a
    value may be any non-empty text and no separator character is safe; then
    :data:`RULE_COLUMNS`' (``best_latency_ms`` only with a world).
    """
    columns = {f"{ATTRIBUTE_PREFIX}{name}": dtype for name, dtype in attributes.items()}
    for column, dtype in RULE_COLUMNS["participants"].items():
        if world or column != "best_latency_ms":
            columns[column] = dtype
    return columns


def record_schema(
    world: bool = False,
    parties: bool = False,
    teams: bool = False,
    rules: Mapping[str, str] | None = None,
) -> dict[str, dict[str, str]]:
    """Return the columns (and dtypes) of every record kind of a run: :data:`RECORD_COLUMNS`,
    then :data:`WORLD_COLUMNS` with a world, :data:`PARTY_COLUMNS` with parties,
    :data:`TEAM_COLUMNS` in team games and, under a rule set (``rules``: the attributes its
    rules read, each with its dtype), :func:`rule_columns`."""
    schema = {kind: dict(columns) for kind, columns in RECORD_COLUMNS.items()}
    for extra, on in ((WORLD_COLUMNS, world), (PARTY_COLUMNS, parties), (TEAM_COLUMNS, teams)):
        if on:
            for kind, columns in extra.items():
                schema[kind].update(columns)
    if rules is not None:
        schema["participants"].update(rule_columns(rules, world))
    return schema


def column_dtype(kind: str, column: str, numeric: bool) -> str:
    """Return the dtype of a column of record kind ``kind``: the schema's, or for an attribute
    column (``attr_<name>``, which no fixed schema lists) ``float64`` if its values are
    ``numeric``, else ``str``."""
    dtype = ALL_RECORD_COLUMNS[kind].get(column)
    if dtype is not None:
        return dtype
    if not column.startswith(ATTRIBUTE_PREFIX):
        raise KeyError(f"{kind} records have no column {column!r}")
    return "float64" if numeric else "str"


#: Every column a record kind may have (a run's files hold those of :func:`record_schema`), but
#: the attribute columns of a run under a rule set (``attr_<name>``, :data:`ATTRIBUTE_PREFIX`).
ALL_RECORD_COLUMNS: dict[str, dict[str, str]] = record_schema(
    world=True, parties=True, teams=True, rules={}
)
