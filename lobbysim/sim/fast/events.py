"""The only code that poses as SimPy events or touches SimPy's private state.

SimPy's ``Environment.step`` takes the first entry ``(time, priority, event id, event)`` of its
queue, a heap, and calls each of the event's ``callbacks`` with it. The lobby saves an event
object (and its triggering) where nothing but that call is needed, by queueing entries that are
processed as events without being ones: the matchmaker's rings (:class:`Doorbell`), the moments
a tick fires (:class:`Moment`), and the ends of 1v1 games (:mod:`lobbysim.sim.fast.duels`). For
that it reads three private names of a ``simpy.Environment``: ``_queue`` (the heap), ``_eid``
(the counter of event ids) and ``_now``; this module is the only one that does
(tests/test_layers.py checks), and :func:`check_simpy` fails loudly, naming what changed, if a
SimPy release changes them (a run checks it when it starts; tests/sim/test_clock.py too).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import simpy

NORMAL = simpy.events.NORMAL  # the priority of a triggered event in SimPy's queue
_PRIVATE = ("_queue", "_eid", "_now")  # the private names of an Environment read here


def check_simpy(env: simpy.Environment) -> None:
    """Check that ``env`` has the private state this module reads, as SimPy 4 keeps it.

    Raises:
        RuntimeError: a name is missing or of another kind (a SimPy release changed it), naming
            it and the SimPy version.
    """
    missing = [name for name in _PRIVATE if not hasattr(env, name)]
    queue = getattr(env, "_queue", None)
    if not missing and not isinstance(queue, list):
        missing.append("_queue (a list)")
    if not missing and not callable(getattr(env._eid, "__next__", None)):
        missing.append("_eid (an iterator)")
    if missing:
        raise RuntimeError(
            f"SimPy {simpy.__version__} has changed the environment's private state that "
            f"lobbysim.sim.fast.events reads ({', '.join(missing)}): lobbysim supports SimPy "
            "4.x; install a 4.x release"
        )


def enqueue(env: simpy.Environment, at: float, entry: Any, eid: int | None = None) -> None:
    """Put ``entry`` into ``env``'s event queue at time ``at``, with normal priority and the
    next event id (or ``eid``, one taken earlier with :func:`take_id`), as ``env.schedule``
    puts a triggered event.

    The entry stands for an event: SimPy's ``step`` calls each of its ``callbacks`` (a list
    or tuple) with it, then reads ``_ok`` (True: it never fails).
    """
    heapq.heappush(env._queue, (at, NORMAL, next(env._eid) if eid is None else eid, entry))


def take_id(env: simpy.Environment) -> int:
    """Take the next event id, as scheduling an event now would."""
    return next(env._eid)


def due_before(env: simpy.Environment, eid: int) -> bool:
    """Return whether the queue holds an entry processed before one at ``(now, normal
    priority, eid)``."""
    queue: list[Any] = env._queue
    if not queue:
        return False
    at, priority, first, _ = queue[0]
    return bool(at == env._now and (priority < NORMAL or first < eid))


def fire_moments(env: simpy.Environment, moments: list[Moment]) -> None:
    """Schedule one event now that fires ``moments`` in order (see :class:`Moment`)."""
    event = env.event()
    event.callbacks.append(_Fire(moments))
    event.succeed()


class Moment:
    """A point in simulated time that callbacks wait on, fired by the ticker with others.

    It stands for a SimPy event where only ``callbacks`` are used: each is called with the SimPy
    event that fires the moment (so ``event.env.now`` is the time).
    """

    __slots__ = ("callbacks",)

    def __init__(self) -> None:
        self.callbacks: list[Callable[[Any], None]] = []


class _Fire:
    """The callback of a tick's event: fires its moments in order."""

    __slots__ = ("_moments",)

    def __init__(self, moments: list[Moment]) -> None:
        self._moments = moments

    def __call__(self, event: simpy.Event) -> None:
        for moment in self._moments:
            for callback in moment.callbacks:
                callback(event)


class Doorbell:
    """The matchmaker's wake-up: rings are coalesced until the matchmaker answers them.

    The first ring after an answer puts one entry in the event queue, as triggering a SimPy
    event would (now, normal priority, the next event id), so everyone who rings at the same
    instant (both players of a finished game queueing again) is in before the pass runs; when
    the entry is processed, the answer (:meth:`answer_with`) is called. The entry is a
    :class:`_Ring`, which the queue processes as an event without being one: a ring costs a
    queue entry, not an event object and its triggering (a pass on every arrival is one per
    queueing).

    **Rings held to the end of an event.** Between :meth:`hold` and :meth:`release`, called by
    an event's last callback around what it does (a game's end, whose players queue again), the
    first ring takes its event id but no queue entry. At the release, if the entry would be the
    next one processed (the queue holds nothing before ``(now, normal priority, that id)``), it
    is answered there and then, as processing it next would have done; otherwise it goes into
    the queue with that id, where it would have been. Either way the pass runs where it would
    have, after the same events, and every other entry keeps its place; it saves the queue
    entry's round trip on most game ends of a lobby on every arrival (tested against rings that
    always take the queue in tests/sim/test_clock.py).
    """

    def __init__(self, env: simpy.Environment) -> None:
        self._env = env
        self._ring = _Ring(self._answer)
        self._rung = False
        self._answer_with: Callable[[], None] | None = None
        self._held = False
        self._held_id = -1  # the event id of a ring held back (-1: none)

    def answer_with(self, answer: Callable[[], None]) -> None:
        """Call ``answer`` (a pass) for every ring from now on, once per coalesced ring."""
        self._answer_with = answer

    def ring(self) -> None:
        """Ask for a pass (coalesced with any already asked for)."""
        if not self._rung:
            self._rung = True
            if self._held:
                self._held_id = take_id(self._env)
                return
            self._ring.callbacks = self._ring.armed
            self._env.schedule(self._ring)  # type: ignore[arg-type]  # an event to the queue

    def hold(self) -> None:
        """Hold a ring back until :meth:`release` (see the class docstring); call both from
        the last callback of the event being processed, nothing after the release."""
        self._held = True

    def release(self) -> None:
        """Answer a ring held back since :meth:`hold` if it is due next, else queue it."""
        self._held = False
        eid = self._held_id
        if eid < 0:
            return
        self._held_id = -1
        if due_before(self._env, eid):
            self._ring.callbacks = self._ring.armed
            enqueue(self._env, self._env.now, self._ring, eid)
            return
        self._rung = False  # _answer(), without the call
        if self._answer_with is not None:
            self._answer_with()

    def _answer(self, _ring: _Ring) -> None:
        """Process a ring: rings from now on ask for the next pass; then call the answer."""
        self._rung = False
        if self._answer_with is not None:
            self._answer_with()


class _Ring:
    """The event-queue entry of a ring: SimPy's ``step`` processes an entry by calling each of
    its ``callbacks`` with it and then checking ``_ok``; this entry has one callback and never
    fails. One per doorbell, queued at most once at a time (a ring is coalesced until then)."""

    __slots__ = ("armed", "callbacks")
    _ok = True

    def __init__(self, answer: Callable[[_Ring], None]) -> None:
        #: The callbacks of a queued ring (SimPy sets ``callbacks`` to None as it processes it).
        self.armed: tuple[Callable[[_Ring], None], ...] = (answer,)
        self.callbacks: tuple[Callable[[_Ring], None], ...] | None = None
