"""The matchmaker: passes over the queue, their wake-ups and ticks, and who plays whom.

:class:`Matchmaker` runs a process that waits on the doorbell, rung by a tick process at every
``k * tick`` minutes (tick k at exactly that float, not at a running sum) and, with
``wake_on_arrival``, whenever a player queues; everyone who queues at the same instant is in the
pool before the pass runs. With timed passes only, the events due at a tick (games ending on the
grid) are fired just before its pass, so their players make it.

A pass first brings the ratings up to date (the ``before_pass`` hook: finished games are applied
to the raters), then builds the :class:`~lobbysim.policies.assignment.Pool` of waiting players
from the driving rater's beliefs, with the rater's own match quality and ``beta2``, and the focal
players (a ``focal_rank`` is resolved at the first pass). 1v1: the assignment strategy, with the
policy and the quality threshold, returns pairs of pool indices, checked here
(:func:`check_pairs`), and the games start. Team and free-for-all: open seats of running games
are back-filled first, then groups of players adjacent in rating are formed
(:func:`~lobbysim.policies.groups.form_groups`). A game's predicted quality goes into its record
and must lie in [0, 1]. A plug-in that fails or returns something else stops the run with a
:class:`~lobbysim.registry.PluginError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.policies import OpponentPolicy
from lobbysim.policies.assignment import Assignment, Pool, QualityFn, ThresholdSchedule
from lobbysim.policies.groups import form_groups
from lobbysim.raters import Rater
from lobbysim.registry import PluginError
from lobbysim.scenario import GameRules, MatchmakerConfig
from lobbysim.sim.clock import Clock, Doorbell
from lobbysim.sim.entities import FloatArray, IdArray, Waiting
from lobbysim.sim.games import Games
from lobbysim.sim.sessions import Lobby

IntArray = NDArray[np.intp]


class Matchmaker:
    """Matchmaking passes over the lobby's queue (see the module docstring).

    Args:
        settings: the scenario's matchmaker section (tick, wake-up, focal players, names).
        rules: the game's rules (the mode and the seats of a group game).
        clock: exact-time events and the tick grid.
        doorbell: the matchmaker's wake-up.
        lobby: the queue and the players present.
        games: starts the chosen games and back-fills open seats.
        driver: the driving rater: beliefs, match quality and ``beta2``.
        policy: scores candidate opponents (inside the assignment).
        assignment: pairs waiting players (1v1).
        threshold: the minimum match quality by time waited.
        tie_rng: the tie-break stream of the policy and the assignment.
        before_pass: run first in every pass (applies finished games to the raters).
        driver_name: the driving rater's name, for messages.
    """

    def __init__(
        self,
        settings: MatchmakerConfig,
        rules: GameRules,
        clock: Clock,
        doorbell: Doorbell,
        lobby: Lobby,
        games: Games,
        driver: Rater,
        policy: OpponentPolicy,
        assignment: Assignment,
        threshold: ThresholdSchedule,
        tie_rng: np.random.Generator,
        before_pass: Callable[[], None],
        driver_name: str,
    ) -> None:
        self.env = clock.env
        self._settings = settings
        self._rules = rules
        self._clock = clock
        self._doorbell = doorbell
        self._lobby = lobby
        self._games = games
        self._driver = driver
        self._policy = policy
        self._assignment = assignment
        self._threshold = threshold
        self._tie_rng = tie_rng
        self._driver_name = driver_name
        #: Run first in every pass; replace it to watch the ratings pass by pass.
        self.before_pass = before_pass
        #: The performance variance the policies are given: the driving rater's own.
        self.beta2 = float(driver.beta2)
        #: The focal players (None: everybody chooses); a ``focal_rank`` is resolved at the
        #: first pass.
        self.focal = None if settings.focal_players is None else frozenset(settings.focal_players)
        self._focal_rank = settings.focal_rank
        self.n_passes = 0

    # ------------------------------------------------------------------------ processes
    def start(self) -> None:
        """Start the matchmaker's process and its tick process."""
        self.env.process(self._wake_ups())
        self.env.process(self._ticker())

    def _wake_ups(self) -> Generator[simpy.Event, Any, None]:
        doorbell = self._doorbell
        while True:
            yield doorbell.rung()
            doorbell.answer()
            self.run_pass()

    def _ticker(self) -> Generator[simpy.Event, Any, None]:
        """Ring at tick k = 1, 2, ... at exactly the float time ``k * tick``.

        The events due at the tick (:meth:`Clock.event_at`) are fired first: they are processed
        before the wake-up, which is triggered after them through the same event queue.
        """
        clock, tick = self._clock, self._settings.tick
        k = 0
        while True:
            k += 1
            yield clock.timeout_at(k * tick)
            clock.fire_tick(k)
            self._doorbell.ring()

    # ------------------------------------------------------------------------ a pass
    def run_pass(self) -> None:
        """Bring the ratings up to date, then pair waiting players and start their games."""
        self.before_pass()
        lobby, games = self._lobby, self._games
        # two players make a game; one is enough to fill an open seat of a running game
        if len(lobby.pool) < (1 if games.has_open_seats else 2):
            return
        self.n_passes += 1
        if self._focal_rank is not None:
            self.focal = frozenset([self._player_of_rank(self._focal_rank)])
            self._focal_rank = None
        waiting = list(lobby.pool.values())
        ids = np.fromiter((w.pid for w in waiting), dtype=np.int64, count=len(waiting))
        mu = self._driver.means(ids)
        variances = self._driver.variances(ids)
        var = np.zeros_like(mu) if variances is None else variances
        now = self.env.now
        waited = now - np.fromiter((w.since for w in waiting), dtype=np.float64, count=len(ids))
        focal = None
        if self.focal is not None:
            focal = np.fromiter((pid in self.focal for pid in ids.tolist()), dtype=bool)
        games_played = np.fromiter(
            (w.player.games for w in waiting), dtype=np.int64, count=len(ids)
        )
        pool = Pool(
            mu=mu,
            var=var,
            waited=waited,
            beta2=self.beta2,
            quality_fn=self._quality_fn(ids),
            focal=focal,
            games_played=games_played,
        )
        if self._rules.mode != "1v1":
            self._group_pass(waiting, pool)
            return
        pairs = self._pairs(pool)
        if len(pairs) == 0:
            return
        quality = pool.quality_fn(pairs[:, 0], pairs[:, 1]).tolist()
        self._check_quality(quality)
        for (a, b), q in zip(pairs.tolist(), quality, strict=True):
            games.start_1v1(waiting[a], waiting[b], q)

    def _quality_fn(self, ids: IdArray) -> QualityFn:
        """Return the match quality of pool indices: the driving rater's, of their players."""
        quality = self._driver.quality

        def pool_quality(i: IntArray, j: IntArray) -> FloatArray:
            return quality(ids[i], ids[j])

        return pool_quality

    def _pairs(self, pool: Pool) -> IntArray:
        """Ask the assignment for this pass's pairs; check them (a problem names the plug-in)."""
        name = self._settings.assignment.name
        try:
            pairs = self._assignment.pairs(
                pool, self._policy, self._threshold, self._tie_rng, self.n_passes
            )
        except PluginError:
            raise
        except Exception as exc:  # a plug-in's own bug: name it, no traceback
            raise PluginError(
                f"matchmaker.assignment: '{name}' failed in pairs() with the policy "
                f"'{self._settings.policy.name}': {type(exc).__name__}: {_one_line(exc)}"
            ) from None
        return check_pairs(name, pairs, pool.size)

    def _group_pass(self, waiting: list[Waiting], pool: Pool) -> None:
        """Back-fill open seats of running games, then form new games from the rest."""
        games = self._games
        free = np.ones(len(waiting), dtype=bool)
        if games.has_open_seats:
            games.backfill(waiting, pool.mu, free)
        size = self._rules.seats
        left = np.flatnonzero(free)
        if left.size < size:
            return
        quality_fn = pool.quality_fn

        def sub_quality(i: IntArray, j: IntArray) -> FloatArray:
            return quality_fn(left[i], left[j])

        groups = form_groups(pool.mu[left], pool.waited[left], size, sub_quality, self._threshold)
        for group in groups:
            members = left[group]
            q = float(sub_quality(*_all_pairs(group)).mean())
            self._check_quality([q])
            games.start_group([waiting[i] for i in members.tolist()], pool.mu[members], q)

    def _check_quality(self, values: list[float]) -> None:
        """Check the match qualities of the games about to start (they go into the records)."""
        if not all(0.0 <= q <= 1.0 for q in values):
            bad = next(q for q in values if not 0.0 <= q <= 1.0)
            raise PluginError(
                f"raters.driver: '{self._driver_name}' returned the match quality {bad!r}, "
                "outside [0, 1]"
            )

    def _player_of_rank(self, rank: int) -> int:
        """Return the present player whose driving-rater mean has this rank (1 = highest)."""
        ids = self._lobby.present_ids()
        if not 1 <= abs(rank) <= ids.size:
            raise PluginError(
                f"matchmaker.focal_rank: {rank} is out of range: {ids.size} players were present "
                "at the first matchmaking pass"
            )
        order = ids[np.argsort(-self._driver.means(ids), kind="stable")]
        return int(order[rank - 1] if rank > 0 else order[rank])


def check_pairs(name: str, pairs: object, n: int) -> IntArray:
    """Check what an assignment returned for a pool of ``n`` players.

    Args:
        name: the assignment's name, used in the error message.
        pairs: its return value.
        n: the number of waiting players in the pool.

    Returns:
        The pairs as an ``(n_pairs, 2)`` array of ``intp`` pool indices.

    Raises:
        PluginError: naming the assignment and the problem: not a numpy array, not of shape
            ``(n_pairs, 2)``, not integers, an index outside the pool, a player paired with
            themself, or a player in two pairs.
    """
    said = f"matchmaker.assignment: '{name}' returned"
    if not isinstance(pairs, np.ndarray):
        raise PluginError(f"{said} {type(pairs).__name__}, not an (n, 2) array of pool indices")
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise PluginError(f"{said} an array of shape {pairs.shape}, not (n, 2)")
    if not np.issubdtype(pairs.dtype, np.integer):
        raise PluginError(f"{said} an array of {pairs.dtype}, not of integer pool indices")
    flat = pairs.ravel().tolist()
    if not flat or (min(flat) >= 0 and max(flat) < n and len(set(flat)) == len(flat)):
        return pairs.astype(np.intp, copy=False)
    # something is wrong: say what, for the first pair where it shows
    for row, (a, b) in enumerate(pairs.tolist()):
        if not (0 <= a < n and 0 <= b < n):
            raise PluginError(
                f"{said} the pair {[a, b]} (row {row}) with an index outside the pool of {n} "
                f"waiting players (0..{n - 1})"
            )
    seen: dict[int, int] = {}
    for row, (a, b) in enumerate(pairs.tolist()):
        if a == b:
            raise PluginError(
                f"{said} the pair {[a, b]} (row {row}): a player paired with themself"
            )
        for index in (a, b):
            if index in seen:
                raise PluginError(
                    f"{said} the pool index {index} in two pairs (rows {seen[index]} and {row})"
                )
            seen[index] = row
    raise AssertionError("unreachable: the pairs passed every check")  # pragma: no cover


def _one_line(exc: BaseException) -> str:
    """Return an exception's message on one line."""
    return " ".join(str(exc).split())


def _all_pairs(group: IntArray) -> tuple[IntArray, IntArray]:
    i, j = np.triu_indices(len(group), k=1)
    return group[i], group[j]
