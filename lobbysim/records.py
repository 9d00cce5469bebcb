"""Plain records that flow from the simulated games to the raters and into the result frames.

A finished game is a :class:`GameResult`: who sat in it, on which side, for which minutes, with what
score, and who won. The SimPy side builds them; raters, metrics and the record frames read them.
Records are frozen slotted dataclasses (cheap to make on the hot path) that turn into pandas rows.
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("1v1", "team", "ffa")


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
