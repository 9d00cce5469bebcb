"""Reneging: the patience deadlines of every queueing spell in the lobby, on one heap.

A player who queues gets a deadline: their patience (or what is left of their session's time, if
less). :class:`Reneging` keeps one heap of ``(deadline, player, spell)`` for the whole lobby with
one wake-up pending, for the earliest deadline that was live when it was set, rather than a
timeout per queueing spell; at the wake-up every player whose deadline has come and who is still
in that queueing spell reneges. Most players are matched long before their patience runs out:
their entries are stale and cost no wake-up. While a ticker runs passes on the tick, a deadline
more than two ticks away is kept out of the heap until the next tick (:meth:`Reneging.at_tick`,
which the ticker runs).

The :class:`~lobbysim.sim.sessions.Lobby` owns it (``Lobby.reneging``), sets each spell's
deadline and takes out whoever reneges.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import simpy

from lobbysim.sim.clock import Clock
from lobbysim.sim.entities import Waiting


class Reneging:
    """The lobby's patience deadlines (see the module docstring).

    Args:
        clock: the run's clock (wake-ups at exact times; whether a ticker runs, its tick).
        pool: the lobby's queue, by player id (a deadline is live while its player waits in the
            queueing spell it was set for).
        renege: takes a waiting player whose deadline has come out of the queue.
    """

    def __init__(
        self, clock: Clock, pool: dict[int, Waiting], renege: Callable[[Waiting], None]
    ) -> None:
        self.env = clock.env
        self._clock = clock
        self._pool = pool
        self._renege = renege
        self._deadlines: list[tuple[float, int, int]] = []  # (renege time, player, spell)
        self._next_renege_check = math.inf
        # deadlines at least two ticks away, kept out of the heap until the next tick (by then
        # most of their players are matched): see add
        self._later: list[tuple[float, int, int]] = []

    def add(self, deadline: float, pid: int, spell: int) -> None:
        """Make player ``pid`` renege at ``deadline`` if still in queueing spell ``spell``.

        While a ticker runs passes on the tick, a deadline more than two ticks away waits for
        the next tick to enter the heap (:meth:`at_tick`), long before it is due: a
        player matched at the first pass, as most are, then costs the heap nothing. Only one at
        most twice the time now: from any time after now, ``deadline - now`` is then exact
        (Sterbenz), so its wake-up fires at exactly ``deadline`` whenever it is set (see
        :meth:`Clock.timeout_at`), as it would have.
        """
        clock, now = self._clock, self.env.now
        if clock.ticking and now + 2.0 * clock.tick < deadline <= 2.0 * now:
            self._later.append((deadline, pid, spell))
            return
        heapq.heappush(self._deadlines, (deadline, pid, spell))
        if deadline < self._next_renege_check:
            self._next_renege_check = deadline
            self._check_at(deadline)

    def at_tick(self) -> None:
        """Put the deadlines kept back since the last tick into the heap, for the players
        still in the queueing spell they were set for (at most a tick after they were set, and
        more than a tick before they are due). The ticker runs this at every tick, before the
        tick's events (the matchmaker's ``at_tick``)."""
        later, self._later = self._later, []
        pool = self._pool
        for deadline, pid, spell in later:
            waiting = pool.get(pid)
            if waiting is not None and waiting.spell == spell:
                heapq.heappush(self._deadlines, (deadline, pid, spell))
                if deadline < self._next_renege_check:
                    self._next_renege_check = deadline
                    self._check_at(deadline)

    def _check_at(self, deadline: float) -> None:
        """Call :meth:`_due` at ``deadline`` (see :meth:`Clock.timeout_at`).

        Firing even one float before it would find nobody due and leave no wake-up.
        """
        self._clock.timeout_at(deadline).callbacks.append(self._due)

    def _due(self, _event: simpy.Event) -> None:
        """Remove every player whose patience has run out; wake again at the next live deadline.

        One heap of (deadline, player, spell) replaces a timeout per queueing spell. Entries of
        players matched meanwhile are stale: they are dropped from the top of the heap here, so
        the one wake-up pending is for a deadline that was live when it was set (plus, rarely,
        an earlier one pushed meanwhile); most players are matched long before their patience
        runs out, and their deadlines then cost no wake-up.
        """
        now = self.env.now
        heap, pool = self._deadlines, self._pool
        while heap and heap[0][0] <= now:
            _, pid, spell = heapq.heappop(heap)
            waiting = pool.get(pid)
            if waiting is not None and waiting.spell == spell:
                self._renege(waiting)
        self._drop_stale()
        if heap:
            if heap[0][0] != self._next_renege_check or self._next_renege_check <= now:
                self._next_renege_check = heap[0][0]
                self._check_at(heap[0][0])
        else:
            self._next_renege_check = math.inf

    def _drop_stale(self) -> None:
        """Pop deadlines of queueing spells that are over from the top of the heap."""
        heap, pool = self._deadlines, self._pool
        while heap:
            _, pid, spell = heap[0]
            waiting = pool.get(pid)
            if waiting is not None and waiting.spell == spell:
                return
            heapq.heappop(heap)
