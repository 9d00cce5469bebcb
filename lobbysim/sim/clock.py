"""Scheduling on exact float times: the tick grid, timeouts at a time, the matchmaker's wake-up.

:class:`Clock` turns "at time t" into SimPy events that fire at exactly ``t`` where a float can
(SimPy itself only knows "after a delay", and ``now + (t - now)`` may round to either side of
``t``), keeps the grid of matchmaking ticks ``k * tick`` on which, with timed passes only, games
end, and holds the moments (:class:`Moment`) the ticker fires at a tick just before its pass, all
of a tick's in one SimPy event. :class:`Doorbell` is
the matchmaker's coalesced wake-up: anyone may ring it, and a pass answers every ring made before
it started. Neither decides anything: the lobby, the games and the matchmaker use them.
"""

from __future__ import annotations

import math
from typing import Any

import simpy

from lobbysim.sim.fast.events import Moment, enqueue, fire_moments

__all__ = ["Clock"]

TICK_SNAP = 1e-9  # a game's end this close to a tick's time (relative) is that time


class Clock:
    """Exact-time events and the tick grid of one run.

    Args:
        env: the run's environment.
        tick: minutes between timed matchmaking passes.
        timed_only: passes run only on the tick (no ``wake_on_arrival``): only then do games
            end on the grid and the ticker fire events due at a tick.
    """

    def __init__(self, env: simpy.Environment, tick: float, timed_only: bool) -> None:
        self.env = env
        self.tick = tick
        self.timed_only = timed_only
        # timed passes only: the moments the ticker fires at tick k, before waking the matchmaker
        self._tick_moments: dict[int, list[Moment]] = {}
        #: Whether a ticker calls :meth:`fire_tick` at every tick (set by the one that does).
        self.ticking = False
        self._shared: tuple[float, Moment] | None = None  # the last moment of shared_event_at
        self._snapped = (math.nan, math.nan)  # the last (end, snapped end) of snap_to_tick

    def timeout_at(self, t: float) -> simpy.Timeout:
        """Return a timeout that fires at time ``t`` (>= now), or just after if it cannot.

        SimPy fires at ``now + delay``, and ``now + (t - now)`` can round to either side of
        ``t`` while now < t / 2 (from now >= t / 2 on, t - now is exact: Sterbenz). The delay
        is stepped up until ``now + delay >= t``: the timeout fires at ``t`` whenever a delay
        reaches it (always from now >= t / 2, and when ``t`` was computed as ``now + d``), and
        otherwise at the first float time after ``t`` that ``now + delay`` can take.
        """
        return self.env.timeout(self._delay_to(t))

    def enqueue_at(self, t: float, entry: Any) -> None:
        """Put ``entry`` into the event queue at time ``t``, where :meth:`timeout_at` would put
        a timeout (normal priority, the next event id).

        The entry stands for an event: SimPy's ``step`` calls each of its ``callbacks`` (a
        list) with it, then reads ``_ok`` (True: it never fails).
        """
        now = self.env.now
        at = now + (t - now)  # SimPy's now + delay, with the delay of _delay_to ...
        if at < t:  # ... which steps it up only here
            at = now + self._delay_to(t)
        enqueue(self.env, at, entry)

    def _delay_to(self, t: float) -> float:
        """Return the delay after which SimPy fires at ``t`` (see :meth:`timeout_at`)."""
        now = self.env.now
        delay = t - now
        while now + delay < t:
            delay = math.nextafter(delay, math.inf)
        return delay

    def snap_to_tick(self, end: float) -> float:
        """Return a game's scheduled end, on the tick grid if it is within rounding of it.

        With timed passes only (``wake_on_arrival: false``) a game that lasts a whole number
        of ticks ends at the time of a tick, ``k * tick`` as the ticker computes it, rather
        than at ``start + length``, which rounds differently: its players then queue again in
        time for that tick's pass. (With ``wake_on_arrival``, queueing wakes the matchmaker
        anyway.)
        """
        if not self.timed_only:
            return end
        last, snapped = self._snapped
        if end == last:  # the games of a pass end alike
            return snapped
        on_grid = round(end / self.tick) * self.tick
        snapped = on_grid if abs(on_grid - end) <= TICK_SNAP * on_grid else end
        self._snapped = (end, snapped)
        return snapped

    def event_at(self, t: float) -> simpy.Event | Moment:
        """Return an event that fires at time ``t`` (> now), e.g. a game's end.

        With timed passes only, at the time of a future tick the ticker fires it, just before
        that tick's pass, so whoever it releases is in the pool for the pass: the event is then
        a :class:`Moment`, and all the moments of a tick are fired by one SimPy event, in the
        order they were made (as their own events would have been processed). A timeout could
        not promise that: from now < t / 2, ``now + delay`` can miss ``t`` (see
        :meth:`timeout_at`). Elsewhere the event is a timeout at ``t``.
        """
        if self.timed_only and t > self.env.now:
            k = round(t / self.tick)
            if k * self.tick == t:
                moment = Moment()
                self._tick_moments.setdefault(k, []).append(moment)
                return moment
        return self.timeout_at(t)

    def shared_event_at(self, t: float) -> simpy.Event | Moment:
        """:meth:`event_at`, but the moment of the last call is returned again for the same
        time while it is to come (all the 1v1 games a pass starts that end at one tick share it).

        Its callbacks then run in the order they were added, as those of one moment per caller
        would, so long as each caller adds its callbacks before the next one asks for the
        event: a 1v1 game's are added as it starts, and nothing is added to them later.
        """
        shared = self._shared
        if shared is not None and shared[0] == t and t > self.env.now:
            return shared[1]
        event = self.event_at(t)
        if isinstance(event, Moment):
            self._shared = (t, event)
        return event

    def fire_tick(self, k: int) -> None:
        """Fire the moments due at tick ``k`` (the ticker calls this at ``k * tick``).

        One event is scheduled for them all; processing it runs each moment's callbacks, moment
        by moment in the order they were made. (The ticker,
        :class:`~lobbysim.sim.matchmaker.Matchmaker`, runs its ``at_tick`` just before.)
        """
        moments = self._tick_moments.pop(k, None)
        if moments:
            fire_moments(self.env, moments)
