"""1v1 games' ends and scores without a SimPy event or an array per game: the duel kernels.

A 1v1 game is kept, from its start to its record, as a tuple :data:`Duel` (id, start, player
a, player b, their performances, the side that quit or -1, the winning side, the predicted
quality, their effective skills). Its general path is
:meth:`Games.score_finished <lobbysim.sim.games.Games.score_finished>`' arrays; these kernels
give the same values:

* :class:`FinishDuels` ends the games that end together, game after game, as their own
  callbacks would; made ``queued``, it is itself the entry of SimPy's event queue
  (:func:`lobbysim.sim.fast.events.enqueue`), which saves a timeout object per game.
  :class:`FinishRatedDuels` also gives each outcome to a rater that rates outcomes alone, as the
  game ends (the plan's ``held_scores``), and holds the game for scoring later.
* :func:`score_one` and :func:`scores_on_floats` draw the scores of one or two finished games on
  floats: the array path's steps one by one, numpy's own exp and Poisson draws (the plan's
  ``float_scoring``; a pass on every arrival scores one game).

tests/sim/test_fast_paths.py checks whole runs against the plan off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from lobbysim.records.rows import DuelBatch
from lobbysim.sim.entities import Player
from lobbysim.sim.fast.events import Doorbell
from lobbysim.skill.truth import truth_1v1

#: A 1v1 game: (id, start, player a, player b, performance a, performance b, side that quit or
#: -1, winning side, predicted quality, effective skill a, effective skill b).
Duel = tuple[Any, ...]


class DuelKit(NamedTuple):
    """What the ends of a run's 1v1 games need: where they go and who is told."""

    env: Any  # the run's environment (its ``now``)
    finished: list[tuple[float, Duel]]  # games finished, not scored yet: (end, game)
    stint_over: Callable[[Player], None]  # the lobby's end of a player's stint
    bell: Doorbell | None  # the doorbell a game's end holds (the plan's ring_hold)
    rate_duel: Callable[[int, int], None] | None  # rate_duel(winner, loser) (held_scores)
    held: list[tuple[float, Duel]]  # games rated as they ended, not scored yet


class FinishDuels:
    """The end of 1v1 games that end together: notes each game as finished, with its end, then
    ends both players' stints (in seat order), game after game, as their own callbacks would.

    It is a callback of the games' end event (a :class:`~lobbysim.sim.fast.events.Moment` of a
    tick), or, made with ``queued``, the end event itself: an entry of the event queue,
    processed as SimPy processes an event (its ``callbacks`` called with it, the first one
    :meth:`end`). Others may add callbacks to it, as to an event (the rematch rule's), which
    run after :meth:`end`.
    """

    __slots__ = ("_games", "_kit", "callbacks")
    _ok = True  # as an event, it never fails, and its value is None
    _value = None

    def __init__(self, kit: DuelKit, games: list[Duel], queued: bool = False) -> None:
        self._kit = kit
        self._games = games
        #: As a queue entry, the callbacks SimPy calls with it (the class's end first, so that
        #: the entry is not in a cycle with itself); None otherwise.
        self.callbacks: list[Callable[[Any], None]] | None = [type(self).end] if queued else None

    @property
    def env(self) -> Any:
        """The run's environment (as an event's ``env``, for the other callbacks)."""
        return self._kit.env

    def __call__(self, _event: Any) -> None:
        """As a callback of the games' end event: :meth:`end`."""
        self.end()

    def end(self) -> None:
        """End the games now."""
        env, finished, stint_over, bell, _, _ = self._kit
        now = env.now
        if bell is not None:
            bell.hold()
        for game in self._games:
            finished.append((now, game))
            stint_over(game[2])
            stint_over(game[3])
        if bell is not None:
            bell.release()


class FinishRatedDuels(FinishDuels):
    """:class:`FinishDuels` where the games' outcomes are rated as they end: each game is held
    back for scoring later and its outcome goes to ``rate_duel(winner, loser)`` (both players
    registered), then both stints end."""

    __slots__ = ()

    def end(self) -> None:
        """End the games now, rating their outcomes."""
        env, _, stint_over, bell, rate_duel, held = self._kit
        now = env.now
        assert rate_duel is not None
        if bell is not None:
            bell.hold()
        for game in self._games:
            held.append((now, game))
            pa, pb = game[2], game[3]
            if pa.registered and pb.registered:
                if game[7] == 0:
                    rate_duel(pa.pid, pb.pid)
                else:
                    rate_duel(pb.pid, pa.pid)
            stint_over(pa)
            stint_over(pb)
        if bell is not None:
            bell.release()


class ScoreModel(NamedTuple):
    """The scores' model: Poisson counts over a stint's minutes with rate ``rate * exp(gain *
    z)``, z the performance in population standard deviations (``mean``, ``sd``)."""

    mean: float
    sd: float
    gain: float
    rate: float
    beta2: float  # the game's performance variance (for the truth)


def scores_on_floats(
    model: ScoreModel, performances: Sequence[float], minutes: Sequence[float], poisson: Any
) -> list[float]:
    """Return the scores of stints with these performances and minutes, drawn one at a time
    with ``poisson`` (a generator's): what one vectorised draw over their arrays gives."""
    mean, sd, gain, rate = model.mean, model.sd, model.gain, model.rate
    growth = np.exp([gain * ((p - mean) / sd) for p in performances]).tolist()
    lam = [rate * g * m for g, m in zip(growth, minutes, strict=True)]
    return [float(poisson(x)) for x in lam]


def score_one(
    model: ScoreModel, end: float, game: Duel, poisson: Any
) -> tuple[DuelBatch, float, tuple[float, float, bool | None]]:
    """Score one finished game step by step: its batch, minutes and truth (the same draws and
    values as the arrays, without the columns' set-up)."""
    game_id, start, pa, pb, perf_a, perf_b, quit_side, winner, _, ta, tb = game
    minutes = end - start
    mean, sd, gain, rate = model.mean, model.sd, model.gain, model.rate
    exp = np.exp  # on one float: the kernel of the array call (tested equal)
    growth_a = float(exp(gain * ((perf_a - mean) / sd)))
    growth_b = float(exp(gain * ((perf_b - mean) / sd)))
    score_a = float(poisson(rate * growth_a * minutes))
    score_b = float(poisson(rate * growth_b * minutes))
    truth = truth_1v1(minutes, ta, tb, winner, model.beta2)
    batch = DuelBatch(
        (game_id,),
        (start,),
        (end,),
        (pa.pid,),
        (pb.pid,),
        (pa.registered,),
        (pb.registered,),
        (score_a,),
        (score_b,),
        (perf_a,),
        (perf_b,),
        (quit_side,),
        (winner,),
    )
    return batch, minutes, truth
