"""Skill dynamics: true skills that drift, newcomers still learning.

The dynamics are population parameters (:class:`lobbysim.players.population.Population`), both off
by
default; docs/model.md, "Skill dynamics", gives the model. :class:`SkillDynamics` holds them
and is the one place that changes a player's true skill or says what a player's truth in a game
is:

* **Drift.** A player's true skill follows a Gaussian random walk with variance
  ``skill_drift_per_day`` per day. It is applied lazily: whenever the skill is needed at time t
  (a game start, the oracle's pool, the end of the run), N(0, drift * (t - t_last) / 1440) is
  added, t_last being when it was last brought up to date (``Player.skill_time``). The sum of
  independent normal increments over any partition of an interval is one N(0, drift * length)
  increment over the whole interval, so evaluating the walk at more or fewer times, or at
  different ones, gives the same distribution at every time it is read: lazy evaluation is
  exact, and only the values drawn (from the stream ``drift``, drawn by nothing else) depend on
  when the skill was needed.
* **Learning curve.** A player's effective skill in a game, the truth the game uses
  (performances, hence quits and scores, and the true draw probability and skill gap recorded),
  is ``skill - learning_deficit * exp(-n / learning_games)`` with n the games the player had
  started before it: a newcomer plays below their skill, and plateaus at it.

With both off, no :class:`SkillDynamics` is built and every truth is ``Player.skill``, as
before.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from lobbysim.players.population import Population
from lobbysim.players.visits import MINUTES_PER_DAY
from lobbysim.sim.entities import ABANDONED, GONE, LEFT, Buffered, Player
from lobbysim.streams import Streams

#: Player states of those who have left for good: their skill stays as they left it.
DEPARTED = frozenset({GONE, ABANDONED, LEFT})


def learning_gap(games: int | float, deficit: float, learning_games: float) -> float:
    """Return how far below their skill a player plays in a game after ``games`` others.

    ``deficit * exp(-games / learning_games)``: ``deficit`` in a player's first game, shrinking
    by a factor ``e`` every ``learning_games`` games.
    """
    return deficit * math.exp(-games / learning_games)


class SkillDynamics:
    """The drift of true skills and the learning curve of one run (see the module docstring).

    Args:
        drift_per_day: variance added to a true skill per day (>= 0).
        learning_deficit: how far below their skill a player plays in their first game (>= 0).
        learning_games: games over which the deficit shrinks by a factor e (> 0).
        streams: the run's random streams; the drift draws from ``drift`` alone (only asked
            for when the drift is on).
    """

    def __init__(
        self,
        drift_per_day: float,
        learning_deficit: float,
        learning_games: float,
        streams: Streams,
    ) -> None:
        self.drift_per_day = drift_per_day
        self.learning_deficit = learning_deficit
        self.learning_games = learning_games
        self.drifts = drift_per_day > 0
        self._per_minute = drift_per_day / MINUTES_PER_DAY
        self._normal: Buffered[float] | None = (
            Buffered(streams.get("drift").standard_normal) if self.drifts else None
        )

    @classmethod
    def of(cls, population: Population, streams: Streams) -> SkillDynamics | None:
        """Return the dynamics of ``population``, or None if it has neither drift nor deficit."""
        if population.skill_drift_per_day == 0 and population.learning_deficit == 0:
            return None
        return cls(
            population.skill_drift_per_day,
            population.learning_deficit,
            population.learning_games,
            streams,
        )

    def bring_up_to_date(self, player: Player, now: float, since: float = math.nan) -> None:
        """Add the drift of ``player``'s skill since it was last brought up to date, to ``now``.

        A player's walk starts the first time the lobby needs their skill while they wait:
        from ``since``, the start of that queueing spell (their first but for a player who gave
        up before any matchmaking pass). Before that the skill is the population's draw, and a
        player whose walk has not started and who is not waiting (``since`` NaN) is left so.
        """
        if self._normal is None:
            return
        last = player.skill_time
        if math.isnan(last):
            if math.isnan(since):
                return
            last = since
        elapsed = now - last
        if elapsed > 0:
            player.skill += math.sqrt(self._per_minute * elapsed) * self._normal.take()
        player.skill_time = now

    def skill_now(self, player: Player, now: float, since: float) -> float:
        """Return the effective skill of ``player``, waiting since ``since``, in a game they start
        ``now``: their skill brought up to date, less the learning deficit (the game's truth)."""
        self.bring_up_to_date(player, now, since)
        return self.effective(player)

    def effective(self, player: Player) -> float:
        """Return ``player``'s effective skill in a game they start now (drift applied first).

        n counts every game the player has started, scored or not (``games + unscored``), so
        the caller asks before counting the new game as unscored.
        """
        if self.learning_deficit == 0:
            return player.skill
        n = player.games + player.unscored
        return player.skill - learning_gap(n, self.learning_deficit, self.learning_games)

    def finish(self, players: Iterable[Player | None], now: float) -> None:
        """Bring the skill of everyone still in the lobby or the player base up to ``now``.

        Done at the end of the run, so that the players records hold the final skills; a
        player who has left for good keeps the skill of the last time it was needed (their last
        game or the last pass they waited through).
        """
        if self._normal is None:
            return
        for player in players:
            if player is not None and player.state not in DEPARTED:
                self.bring_up_to_date(player, now)
