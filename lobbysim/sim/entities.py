"""The plain objects of the lobby model: players, queue entries, stints and games.

They hold state only; the classes that change them live in :mod:`lobbysim.sim.sessions` (the
lobby), :mod:`lobbysim.sim.matchmaker`, :mod:`lobbysim.sim.games` and :mod:`lobbysim.sim.recorder`.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.records.rows import RECORD_COLUMNS
from lobbysim.sim.fast.events import Moment

FloatArray = NDArray[np.float64]
T = TypeVar("T")
IdArray = NDArray[np.int64]

_BUFFER = 4096  # random numbers drawn per refill of a buffered stream

# Player states at the end of a run. A member of a player base is offline between visits and
# has left once they leave the base for good; guests end abandoned or gone.
WAITING, PLAYING, ABANDONED, GONE = "waiting", "playing", "abandoned", "gone"
OFFLINE, LEFT = "offline", "left"


class Buffered(Generic[T]):
    """Draws from one generator in blocks; yields the same sequence as one draw at a time.

    A block is drawn when a value is asked for and the last block is used up (never ahead);
    :attr:`take` walks the blocks in C (``itertools.chain``), a few times cheaper per value
    than a method indexing into a list.

    Args:
        draw: draws ``n`` values as an array, e.g. ``rng.standard_normal`` (``Buffered[float]``).
    """

    def __init__(self, draw: Callable[[int], np.ndarray]) -> None:
        self._draw = draw
        blocks = map(self._block, itertools.repeat(None))
        #: Return the next number of the stream (drawing the next block when one runs out).
        self.take: Callable[[], T] = itertools.chain.from_iterable(blocks).__next__

    def _block(self, _: None) -> list[T]:
        values: list[T] = self._draw(_BUFFER).tolist()
        return values


class GameDraws:
    """The random draws of a run's games: performances and quit times.

    One object, made by :class:`~lobbysim.sim.games.Games` and handed to the group games it
    owns (:class:`~lobbysim.sim.group_games.GroupGames`), so both kinds of game draw from one
    buffer of each stream.

    Args:
        normal: draws ``n`` standard normals (stream ``performance``): a performance is skill
            plus ``beta`` times the next.
        exponential: draws ``n`` standard exponentials (stream ``quits``): a quit comes after
            the next divided by the hazard.
    """

    __slots__ = ("normal", "quit")

    def __init__(
        self, normal: Callable[[int], np.ndarray], exponential: Callable[[int], np.ndarray]
    ) -> None:
        #: Return the next standard normal of the performances.
        self.normal: Callable[[], float] = Buffered(normal).take
        #: Return the next standard exponential of the quit times; replace it to script a trace.
        self.quit: Callable[[], float] = Buffered(exponential).take


@dataclass(slots=True)
class Player:
    """One player of the lobby: who they are, what is left of their session, their tallies."""

    pid: int
    skill: float
    mu0: float  # the prior belief N(mu0, var0) the raters started from, kept for the records
    var0: float
    registered: bool
    games_left: int
    leave_at: float
    state: str = WAITING
    games: int = 0
    wins: int = 0
    spell: int = 0  # queueing spell counter, to ignore stale patience timeouts
    unscored: int = 0  # games sat in whose records are not written yet
    member: bool = False  # of a persistent player base: comes back visit after visit
    visits: int = 0  # visits started (members)
    rate: float = 0.0  # visits per day (members)
    leaves_base_at: float = math.inf  # when a member leaves the base for good
    # with a skill drift: when ``skill`` was last brought up to date (NaN: the walk has not
    # started, the skill is the population's draw); see lobbysim.sim.skill_dynamics
    skill_time: float = math.nan
    party: int = -1  # the party the player queues with (-1: solo); see lobbysim.sim.parties


@dataclass(slots=True)
class Waiting:
    """A player's place in the queue: one queueing spell.

    ``leave`` is set when the player is handed a game: the event that ends their stint.
    """

    pid: int
    player: Player
    since: float
    spell: int
    leave: Any = None


@dataclass(slots=True)
class Stint:
    """One player's time in one game, before its score is drawn."""

    player: Player
    team: int | None
    joined: float
    left: float
    performance: float
    quit: bool
    party: int = -1  # the player's party when they sat down (-1: solo)


@dataclass(slots=True)
class FinishedGame:
    """A finished game waiting for its scores."""

    game_id: int
    mode: str
    start: float
    end: float
    stints: list[Stint]
    winner: int | None
    quality: float
    data_centre: int = -1  # where the game was hosted (-1: no world)


@dataclass(slots=True)
class GroupGame:
    """A running team or free-for-all game."""

    game_id: int
    mode: str
    start: float
    end: float
    quality: float
    end_event: simpy.Event | Moment
    stints: list[Stint] = field(default_factory=list)
    seated: dict[int, Stint] = field(default_factory=dict)
    # (team, the leaver's rating mean, the leaver's effective true skill) of each seat left open
    # by a quitter: a back-fill seats the nearest by rating, or by true skill for the oracle
    open_seats: list[tuple[int | None, float, float]] = field(default_factory=list)
    been: set[int] = field(default_factory=set)  # everyone who has sat in the game
    # the performances of the stints seated now, sorted (the ffa behind-rule's median)
    performances: list[float] = field(default_factory=list)
    # the players whose stints end with the game, in the order they sat down
    finishing: list[Player] = field(default_factory=list)
    data_centre: int = -1  # where the game is hosted (-1: no world)

    def sit(self, stint: Stint) -> None:
        """Seat a stint (its sorted performances kept in step)."""
        self.seated[stint.player.pid] = stint
        bisect.insort(self.performances, stint.performance)

    def stand(self, stint: Stint) -> None:
        """Take a quitting stint out (its sorted performances kept in step)."""
        del self.seated[stint.player.pid]
        performances = self.performances
        del performances[bisect.bisect_left(performances, stint.performance)]

    def behind_ffa(self, performance: float) -> bool:
        """Return whether a stint of ``performance`` about to sit down in this free-for-all is
        behind: below the median of the others seated, read off their sorted performances
        (:meth:`Games._behind <lobbysim.sim.games.Games._behind>`'s rule; tested against it
        in tests/sim/test_fast_paths.py)."""
        others = self.performances
        return bool(others) and performance < median_of_sorted(others)


def median(values: list[float]) -> float:
    """Return the median of a non-empty list, as ``np.median`` computes it (bit for bit).

    ``np.median`` takes the middle value, or ``mean`` of the two middle ones, which for two
    float64 values is ``(a + b) / 2``; in pure Python this is much cheaper for a few values.
    """
    return median_of_sorted(sorted(values))


def median_of_sorted(ordered: list[float]) -> float:
    """Return :func:`median` of values already sorted."""
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


RecordSink = Callable[[str, list[tuple[Any, ...]]], None]


@dataclass
class Records:
    """Rows collected during a run (tuples, cheap to append on the hot path).

    With a ``sink`` (streaming), :meth:`flush` hands every kind's rows to it once there are
    ``flush_rows`` of them (and all of them with ``force``); the sink writes them somewhere.
    """

    games: list[tuple[Any, ...]] = field(default_factory=list)
    participants: list[tuple[Any, ...]] = field(default_factory=list)
    waits: list[tuple[Any, ...]] = field(default_factory=list)
    ratings: list[tuple[Any, ...]] = field(default_factory=list)
    players: list[tuple[Any, ...]] = field(default_factory=list)  # departed players (streaming)
    sink: RecordSink | None = None
    flush_rows: int = 50_000

    KINDS = tuple(RECORD_COLUMNS)  # every kind of the schema, lobbysim.records.rows.RECORD_COLUMNS
    _buffers = operator.attrgetter(*KINDS)  # every kind's rows, as a tuple

    def flush(self, force: bool = False) -> None:
        """Hand full buffers (all non-empty ones with ``force``) to the sink."""
        if self.sink is None:
            return
        if not force and max(map(len, self._buffers(self))) < self.flush_rows:
            return  # no buffer is full (asked at every pass: answered cheaply)
        for kind in self.KINDS:
            rows: list[tuple[Any, ...]] = getattr(self, kind)
            if rows and (force or len(rows) >= self.flush_rows):
                self.sink(kind, rows)
                setattr(self, kind, [])
