"""The lobby: arrivals, player sessions, the queue (the pool) and reneging.

:class:`Lobby` owns the players of a run and where each one is. A process asks the arrival model
for the arrivals of each window of ``ARRIVAL_WINDOW`` minutes, samples those players from the
population model in one call, tells the raters about them, and starts each player's session at
its arrival time. A session queues the player (an entry of :attr:`Lobby.pool`), until the games
hand it a game (:meth:`Lobby.hand_over`) or its patience runs out (it then reneges, counted
as abandoned), plays, and queues again until the session's games or minutes are used up.

A session costs no SimPy event of its own: it is a chain of callbacks, run where the plain model
(a process per session waiting on an event for its match and then on its game) would have
resumed, in the same order, so the records are the same bit for bit (the plain model is kept in
``tests/sim/test_event_batching.py``). Each queueing spell's patience deadline goes to the
lobby's :class:`~lobbysim.sim.reneging.Reneging` (:attr:`Lobby.reneging`): one heap of deadlines
for the whole lobby with one wake-up pending. With ``wake_on_arrival``, queueing rings the
matchmaker's doorbell. A player base, built after the lobby, is served once it is built
(:meth:`Lobby.serve_base`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import simpy

from lobbysim.players.arrivals import ArrivalModel, sample_window
from lobbysim.players.population import PlayerBatch, Population
from lobbysim.raters import Rater
from lobbysim.raters.base import rater_plugin
from lobbysim.sim.clock import Clock
from lobbysim.sim.entities import (
    ABANDONED,
    GONE,
    LEFT,
    OFFLINE,
    PLAYING,
    WAITING,
    Buffered,
    IdArray,
    Player,
    Waiting,
)
from lobbysim.sim.fast.events import Doorbell
from lobbysim.sim.parties import Parties, as_parties
from lobbysim.sim.recorder import Recorder
from lobbysim.sim.reneging import Reneging
from lobbysim.sim.world import World
from lobbysim.streams import Streams

ARRIVAL_WINDOW = 60.0  # minutes of arrivals sampled at a time


class Lobby:
    """The players of a run, their sessions, the queue, and reneging.

    Args:
        clock: the run's clock (its environment runs the sessions).
        doorbell: rung when a player queues, with ``wake_on_arrival``.
        recorder: gets each queueing spell and each departure.
        population: samples arriving players and their patience.
        arrival_model: when players arrive.
        raters: every rater, told about players before they arrive (the driving rater first).
        streams: the run's random streams (``arrivals``, ``population``, ``patience``).
        horizon: the end of the run (no arrivals after it).
        wake_on_arrival: ring the doorbell whenever a player queues.
        rater_names: the raters' names, for messages (default: their classes' ``name``).
        world: gives each player registered a region and latencies (None: no world).
        parties: cuts the guests of each arrival window into parties (None: all solo).
    """

    def __init__(
        self,
        clock: Clock,
        doorbell: Doorbell,
        recorder: Recorder,
        population: Population,
        arrival_model: ArrivalModel,
        raters: Sequence[Rater],
        streams: Streams,
        horizon: float,
        wake_on_arrival: bool,
        rater_names: Sequence[str] | None = None,
        world: World | None = None,
        parties: Parties | None = None,
    ) -> None:
        self.env = clock.env
        self._world = world
        self._parties = parties
        self._clock = clock
        self._doorbell = doorbell
        self._recorder = recorder
        self._population = population
        self._arrival_model = arrival_model
        self._raters = tuple(raters)
        self._rater_names = (
            tuple(rater_names)
            if rater_names is not None
            else tuple(getattr(r, "name", type(r).__qualname__) for r in raters)
        )
        self._streams = streams
        self._horizon = horizon
        self._wake_on_arrival = wake_on_arrival
        #: Every player so far by id; None once written out and forgotten (streaming).
        self.players: list[Player | None] = []
        #: The queue: players waiting for a game, by id.
        self.pool: dict[int, Waiting] = {}
        #: Players waiting or playing, in arrival order.
        self.present: dict[int, None] = {}
        self._state_counts = {ABANDONED: 0, GONE: 0}  # of players already forgotten
        self._reserved: deque[int] = deque()  # ids registered ahead, not yet arrived
        #: Called when a member of a player base ends a visit (:meth:`serve_base`; None: no base).
        self.on_visit_end: Callable[[Player], None] | None = None
        #: Called with (player, minutes waited, gave up) after each queueing spell
        #: (:meth:`serve_base`, with a retention model; None: nobody).
        self.on_wait: Callable[[Player, float, bool], None] | None = None
        #: The patience deadlines of the queueing spells (its ``at_tick`` runs at every tick).
        self.reneging = Reneging(clock, self.pool, self._renege)
        self._add_deadline = self.reneging.add  # bound once: called at every queueing spell
        patience_rng = streams.get("patience")
        #: Source of one patience (minutes) per queueing spell; replace it to script a trace.
        self.draw_patience: Callable[[], float] = Buffered(
            lambda n: population.sample_patience(patience_rng, n)
        ).take

    def serve_base(
        self,
        visit_ended: Callable[[Player], None],
        waited: Callable[[Player, float, bool], None] | None = None,
    ) -> None:
        """Tell a player base (:class:`~lobbysim.sim.player_base.PlayerBase`) of each member's
        visit end, and with ``waited`` (its retention model's) of each queueing spell.

        Done once, by the builder (:meth:`Components.player_base
        <lobbysim.sim.components.Components.player_base>`) right after it builds the base and
        before the run: the base joins members and starts and ends their visits through this
        lobby, so it is built after the lobby, which cannot take these as constructor arguments.
        """
        if self.on_visit_end is not None:
            raise RuntimeError("the lobby already serves a player base")
        self.on_visit_end = visit_ended
        self.on_wait = waited

    # ------------------------------------------------------------------------ arrivals
    def start_arrivals(self) -> None:
        """Start the arrival process (players from the arrival model, until the horizon)."""
        self.env.process(self._arrivals())

    def register(self, batch: PlayerBatch, parties: Sequence[int] | None = None) -> IdArray:
        """Give ids to players who will arrive next and tell the raters; return the ids.

        ``parties``: the sizes of the parties they arrive in (with a world, a party's members
        come from one region).

        The arrival process registers a whole window's players in one call, which is much cheaper
        than one call per arrival. Ids are given in registration order; the players arrive in
        that order too (:meth:`add_players` takes the reserved ids first in, first out), while
        members of a player base may join in between (:meth:`join`).
        """
        first = len(self.players)
        ids = np.arange(first, first + len(batch), dtype=np.int64)
        for k, r in enumerate(self._raters):
            try:
                r.add_players(ids, batch.mu0, batch.var0)
            except (Exception, SystemExit) as exc:  # a rater's own bug or exit: one line
                name = self._rater_names[k]
                raise rater_plugin(k, name).failure("add_players(ids, mu0, var0)", exc) from None
        if self._world is not None:
            self._world.register(ids, parties)
        self.players.extend([None] * len(batch))
        self._reserved.extend(ids.tolist())
        return ids

    def add_players(self, batch: PlayerBatch, *, registered: bool = False) -> list[int]:
        """Add players who arrive now and start their sessions; return their ids.

        Args:
            batch: the players.
            registered: True if :meth:`register` was already called for them.
        """
        if not registered:
            if self._reserved:
                raise RuntimeError("players registered ahead must arrive before others are added")
            self.register(batch)
        return self._arrive(_rows(batch))

    def _arrive(self, rows: Sequence[tuple[float, float, float, bool, int, float]]) -> list[int]:
        """:meth:`add_players` of registered players given as rows of :func:`_rows`."""
        reserved, players, present, queue = (
            self._reserved,
            self.players,
            self.present,
            self._join_queue,
        )
        now = self.env.now
        ids = []
        for skill, mu0, var0, registered, games, minutes in rows:
            pid = reserved.popleft()
            player = Player(
                pid=pid,
                skill=skill,
                mu0=mu0,
                var0=var0,
                registered=registered,
                games_left=games,
                leave_at=now + minutes,
            )
            players[pid] = player
            present[pid] = None
            queue(player)
            ids.append(pid)
        return ids

    def join(self, batch: PlayerBatch) -> list[Player]:
        """Register members of a player base, offline until their first visit; return them."""
        ids = self.register(batch).tolist()
        for _ in ids:
            self._reserved.pop()  # members are registered and present in the lobby at once
        members = []
        for k, pid in enumerate(ids):
            player = Player(
                pid=pid,
                skill=float(batch.skill[k]),
                mu0=float(batch.mu0[k]),
                var0=float(batch.var0[k]),
                registered=True,
                games_left=0,
                leave_at=self.env.now,
                state=OFFLINE,
                member=True,
            )
            self.players[pid] = player
            members.append(player)
        return members

    def visit(self, player: Player, games: int, minutes: float) -> None:
        """Start a visit of an offline member: a session of ``games`` games or ``minutes``."""
        player.games_left = games
        player.leave_at = self.env.now + minutes
        player.visits += 1
        self.present[player.pid] = None
        self._join_queue(player)

    def _arrivals(self) -> Generator[simpy.Event, Any, None]:
        env, horizon = self.env, self._horizon
        arrival_rng = self._streams.get("arrivals")
        population_rng = self._streams.get("population")
        start = 0.0
        while start < horizon:
            end = min(start + ARRIVAL_WINDOW, horizon)
            arrivals = sample_window(self._arrival_model, arrival_rng, start, end)
            batch = self._population.sample(population_rng, arrivals.n_players)
            rows = _rows(batch)
            times, sizes = arrivals.times.tolist(), arrivals.sizes.tolist()
            if self._parties is not None:
                times, sizes, rows = as_parties(self._parties, times, sizes, rows)
            self.register(batch, sizes if self._parties is not None else None)
            offset = 0
            for t, size in zip(times, sizes, strict=True):
                if t > env.now:
                    yield env.timeout(t - env.now)
                ids = self._arrive(rows[offset : offset + size])
                if self._parties is not None:
                    self._parties.form([self.players[pid] for pid in ids])  # type: ignore[misc]
                offset += size
            if end > env.now:
                yield env.timeout(end - env.now)
            start = end

    # ------------------------------------------------------------------------ sessions
    def _join_queue(self, player: Player) -> None:
        """Put a player into the queue now, with a patience deadline (a new queueing spell)."""
        spell = player.spell = player.spell + 1
        player.state = WAITING
        since = self.env.now
        pid = player.pid
        self.pool[pid] = Waiting(pid, player, since, spell)
        patience = self.draw_patience()
        if self._parties is not None and player.party >= 0:  # one patience per ticket
            patience = self._parties.patience(player.party, since, patience)
        remaining = player.leave_at - since
        if remaining < patience:  # the session's time runs out first (min(), step by step)
            patience = remaining
        if patience < math.inf:  # finite (neither inf nor NaN), as math.isfinite says
            self._add_deadline(since + patience if patience > 0.0 else since, pid, spell)
        if self._wake_on_arrival:
            self._doorbell.ring()

    def hand_over(self, waiting: Waiting, leave: Any) -> None:
        """Take a waiting player out of the queue into a game whose stint ends when ``leave``
        fires (the SimPy event or :class:`~lobbysim.sim.fast.events.Moment`, kept as
        ``waiting.leave``); whoever fires it calls :meth:`stint_over` for the player (a game's
        end for those who stay to the end, a quit for the quitter)."""
        del self.pool[waiting.pid]
        waiting.leave = leave
        player, now = waiting.player, self.env.now
        self._recorder.wait(player.pid, waiting.since, now, "matched", player.party)
        if self.on_wait is not None:
            self.on_wait(player, now - waiting.since, False)
        player.state = PLAYING

    def stint_over(self, player: Player) -> None:
        """A player's stint has ended: they queue again, or their session ends."""
        player.games_left -= 1
        if player.games_left <= 0 or self.env.now >= player.leave_at:
            player.state = GONE
            self._end_session(player)
        else:
            self._join_queue(player)

    def _renege(self, waiting: Waiting, party: int | None = None) -> None:
        """Take a waiting player out of the queue: patience (or the session's time) ran out
        (``party``: the party they queued with, if it has been dissolved since)."""
        del self.pool[waiting.pid]
        player, now = waiting.player, self.env.now
        party = player.party if party is None else party
        self._recorder.wait(player.pid, waiting.since, now, "abandoned", party)
        if self.on_wait is not None:
            self.on_wait(player, now - waiting.since, True)
        player.state = ABANDONED
        if self._parties is not None and player.party >= 0:  # the party gives up together
            for mate in self._parties.dissolve(player):
                other = self.pool.get(mate.pid)
                if other is not None:
                    self._renege(other, party)
        self._end_session(player)

    def _end_session(self, player: Player) -> None:
        """End a session: a guest departs for good, a member goes offline until the next visit."""
        if player.party >= 0 and self._parties is not None:
            self._parties.dissolve(player)
        if not player.member:
            self._depart(player)
            return
        del self.present[player.pid]
        player.state = OFFLINE
        if self.on_visit_end is not None:
            self.on_visit_end(player)

    def _depart(self, player: Player) -> None:
        """Note a player who has left the lobby (the recorder may write them out later)."""
        del self.present[player.pid]
        self._recorder.depart(player)

    def leave_base(self, player: Player) -> None:
        """Note an offline member who has left the player base for good."""
        player.state = LEFT
        self._recorder.depart(player)

    def forget(self, players: Sequence[Player]) -> None:
        """Drop departed players that the recorder has written out (streaming)."""
        counts = self._state_counts
        for p in players:
            counts[p.state] = counts.get(p.state, 0) + 1
            self.players[p.pid] = None

    def has_left(self, pid: int) -> bool:
        """Return whether player ``pid`` has left for good (written out, or a finished guest)."""
        player = self.players[pid]
        return player is None or player.state in (GONE, ABANDONED)

    def present_ids(self) -> IdArray:
        """Return the ids of the players waiting or playing, in arrival order."""
        return np.fromiter(self.present, dtype=np.int64, count=len(self.present))

    def states(self) -> dict[str, int]:
        """Return how many players are in each state (waiting, playing, abandoned, gone)."""
        counts = {WAITING: 0, PLAYING: 0, **self._state_counts}
        for p in self.players:
            if p is not None:
                counts[p.state] = counts.get(p.state, 0) + 1
        return counts


def _rows(batch: PlayerBatch) -> list[tuple[float, float, float, bool, int, float]]:
    """Return each player of ``batch`` as a row of Python values (skill, mu0, var0, registered,
    session games, session minutes): the values ``float()``, ``bool()`` and ``int()`` give."""
    floats = [
        np.asarray(column, dtype=np.float64).tolist()
        for column in (batch.skill, batch.mu0, batch.var0, batch.session_minutes)
    ]
    registered = np.asarray(batch.registered).astype(bool, copy=False).tolist()
    games = np.asarray(batch.session_games).astype(np.int64, copy=False).tolist()
    skill, mu0, var0, minutes = floats
    return list(zip(skill, mu0, var0, registered, games, minutes, strict=True))
