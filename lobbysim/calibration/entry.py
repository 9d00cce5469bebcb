"""Players entering a replay of a match log, and Glicko-2's clock as a server runs it.

:class:`Entry` is the rule of the module docstring of :mod:`lobbysim.calibration.replay`
("Entry"), which :func:`~lobbysim.calibration.replay.replay` and
:func:`~lobbysim.calibration.replay.replay_by_event` follow: each player is added to the rater at
the start of their first match; for the ``glicko2`` replay family the rating periods are closed
on the clock (:func:`tick_game`) and a player with no rated period yet is held at the rater's
initial rating, deviation and volatility each time the clock moves.

The Glicko-2 rater counts a player's idle rating periods from when they were added, so adding a
newcomer late is not enough: (i) at each match's start the rater is passed a result-free game of
two guests ending then (:func:`tick_game`), which closes every period that ended by then and
rates no one; (ii) each time the clock moves, every entered player with no rated period yet is
set back to ``(initial_rating, initial_deviation, initial_volatility)`` as of the new clock
(:meth:`~lobbysim.raters.glicko2.Glicko2Rater.set_ratings`), until the period holding their
first match's end closes; the replay never passes such a player's first match and a match of a
later period in one update. Their first period is then rated from the initial values, exactly
Glickman's unrated player. A user's glicko2-family rater without ``set_ratings`` (or
``closed_periods`` and the ``initial_*`` attributes) gets (i) only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lobbysim.raters import Rater
from lobbysim.raters.base import replay_family
from lobbysim.records.rows import GameResult, make_result, make_seat

__all__ = ["PRIOR", "Entry", "tick_game"]

#: The prior every player enters the replay at, ``(mu0, var0)`` (see the module docstring).
PRIOR = (0.0, 4.0)


def tick_game(time: float) -> GameResult:
    """Return a game that rates no one and ends at ``time``: two guests (unregistered seats),
    which a Glicko-2 rater takes as no result but whose end closes the periods before it."""
    seats = (
        make_seat(-1, 0, time, time, 0.0, False, False, math.nan),
        make_seat(-2, 1, time, time, 0.0, False, False, math.nan),
    )
    return make_result(-1, "1v1", time, time, seats, 0)


class Entry:
    """Who has entered the replay, and the Glicko-2 clock (see the module docstring, "Entry").

    :meth:`gather` notes the new players of a match at its start; :meth:`add` adds them to the
    rater at the prior; :meth:`moved`, called whenever the rater's clock has moved, lets go of
    the waiting players (entered, no rated period) whose first match had been passed to the
    rater before the move (that move rated it) and holds the others at the initial values as of
    the new clock; :meth:`tick` closes the periods before a time. The replay never passes, in
    one update, a waiting player's first match and a match of a later period.
    """

    def __init__(
        self, rater: Rater, players: int, matches: int, prior: tuple[float, float] = PRIOR
    ) -> None:
        self.rater = rater
        self.prior = prior
        self.entered = np.zeros(players, dtype=bool)
        self.new: list[int] = []
        self.glicko = replay_family(rater) == "glicko2"
        self.period = float(getattr(rater, "period", math.inf)) if self.glicko else math.inf
        self.holds = self.glicko and all(
            hasattr(rater, name)
            for name in (
                "set_ratings",
                "closed_periods",
                "initial_rating",
                "initial_deviation",
                "initial_volatility",
            )
        )
        self.clock = int(getattr(rater, "closed_periods", 0)) if self.holds else 0
        self.waiting: dict[int, int] = {}  # entered, no rated period yet: player -> first match
        self.passed = np.zeros(matches, dtype=bool)  # matches passed to the rater

    def gather(self, players: Sequence[int], match: int) -> None:
        """Note the players of ``match`` (at its start) who have not entered yet."""
        for pid in players:
            if not self.entered[pid]:
                self.entered[pid] = True
                self.new.append(pid)
                if self.holds:
                    self.waiting[pid] = match

    def add(self) -> None:
        """Add the gathered players to the rater at the prior."""
        if self.new:
            ids = np.array(self.new, dtype=np.int64)
            self.rater.add_players(
                ids, np.full(ids.size, self.prior[0]), np.full(ids.size, self.prior[1])
            )
            self.new.clear()

    def update(self, games: list[GameResult]) -> None:
        """Pass ``games`` to the rater, then :meth:`moved` if its clock moved."""
        before = self.closed()
        rated = [p for p, m in self.waiting.items() if self.passed[m]]
        self.rater.update(games)
        for game in games:
            if game.game_id >= 0:
                self.passed[game.game_id] = True
        if self.closed() != before:
            self.moved(rated)

    def closed(self) -> int:
        """The rater's closed periods (0 for a rater that does not say)."""
        return int(getattr(self.rater, "closed_periods", 0)) if self.holds else 0

    def moved(self, rated: list[int]) -> None:
        """After the clock moved: let go of the waiting players whose first match the move
        rated (``rated``: passed to the rater before it); hold the others at the initial values
        as of the new clock."""
        for pid in rated:
            del self.waiting[pid]
        if not self.waiting:
            return
        rater: Any = self.rater
        ids = np.fromiter(self.waiting, dtype=np.int64, count=len(self.waiting))
        n = ids.size
        rater.set_ratings(
            ids,
            np.full(n, float(rater.initial_rating)),
            np.full(n, float(rater.initial_deviation)),
            np.full(n, float(rater.initial_volatility)),
        )

    def period_of(self, time: float) -> int:
        """Return the rating period holding ``time``."""
        return math.floor(time / self.period)

    def tick(self, time: float) -> None:
        """Close the rating periods that ended by ``time``."""
        self.update([tick_game(time)])
        self.clock = self.period_of(time)
