"""The doorbell's held rings run the pass where a ring through the event queue would."""

from __future__ import annotations

import itertools

import pytest
import simpy

from lobbysim.sim.fast.events import Doorbell


def order_of_events(hold: bool, queued: int, during: int, urgent: bool) -> list[str]:
    """Return what ran, in order: an event at t = 1 whose callback rings the doorbell (held,
    or straight into the queue) and then schedules ``during`` more events at that time (the
    first one urgent, if asked: it goes before the pass); ``queued`` events at t = 1 were
    scheduled just after it (as two games that end together: before the pass)."""
    env = simpy.Environment()
    bell = Doorbell(env)
    log: list[str] = []
    bell.answer_with(lambda: log.append(f"pass at {env.now}"))

    def at_once(label: str, priority: int = simpy.events.NORMAL) -> None:
        event = simpy.Event(env)
        event._ok, event._value = True, None
        event.callbacks.append(lambda _e: log.append(label))
        env.schedule(event, priority)

    def game_end(_event: simpy.Event) -> None:
        log.append("game end")
        if hold:
            bell.hold()
        bell.ring()
        bell.ring()  # coalesced
        for k in range(during):
            first_urgent = urgent and k == 0
            at_once(f"during {k}", simpy.events.URGENT if first_urgent else simpy.events.NORMAL)
        if hold:
            bell.release()

    def setup(_event: simpy.Event) -> None:
        end = simpy.Event(env)
        end._ok, end._value = True, None
        end.callbacks.append(game_end)
        env.schedule(end)
        for k in range(queued):
            at_once(f"queued {k}")

    env.timeout(1.0).callbacks.append(setup)
    env.timeout(2.0).callbacks.append(lambda _e: bell.ring())  # a plain ring later on
    env.run()
    return log


@pytest.mark.parametrize(
    ("queued", "during", "urgent", "expected"),
    [
        (0, 0, False, ["game end", "pass"]),
        (0, 2, False, ["game end", "pass", "during 0", "during 1"]),
        (2, 0, False, ["game end", "queued 0", "queued 1", "pass"]),
        (0, 2, True, ["game end", "during 0", "pass", "during 1"]),
        (1, 2, False, ["game end", "queued 0", "pass", "during 0", "during 1"]),
    ],
)
def test_a_held_ring_runs_the_pass_where_the_queue_would(
    queued: int, during: int, urgent: bool, expected: list[str]
) -> None:
    held = order_of_events(True, queued, during, urgent)
    assert held == order_of_events(False, queued, during, urgent)
    assert [e.replace(" at 1.0", "") for e in held[:-1]] == expected
    assert held[-1] == "pass at 2.0"


def test_a_held_ring_due_next_is_answered_at_the_release() -> None:
    env = simpy.Environment()
    bell = Doorbell(env)
    answered: list[int] = []
    bell.answer_with(lambda: answered.append(len(env._queue)))
    env.timeout(5.0)  # a later entry stays in the queue
    bell.hold()
    bell.ring()
    assert not answered and len(env._queue) == 1  # held: no entry of its own
    bell.release()
    assert answered == [1]  # answered there and then, nothing queued for it
    bell.ring()  # rings after the answer ask for the next pass, through the queue
    assert len(env._queue) == 2


class _Entry:
    """A queue entry as the games make them (callbacks, ``_ok``, ``_value``)."""

    _ok = True
    _value = None

    def __init__(self, log: list[str], label: str, env: simpy.Environment) -> None:
        self.env = env
        self.callbacks = [lambda _e: log.append(f"{label} at {env.now}")]


def order_of_game_ends(lined: bool, seed: int) -> list[str]:
    """Return the order in which game ends and other events run: games of length 10 (some
    cut short, as by a quit) started at random times, several at once, among timeouts of
    other lengths; the ends as entries of the queue (Clock.enqueue_at), or as timeouts at
    their times."""
    import random

    from lobbysim.sim.clock import Clock

    env = simpy.Environment()
    clock = Clock(env, tick=0.25, timed_only=False)
    log: list[str] = []
    rng = random.Random(seed)
    count = itertools.count()

    def start_games(_event: object) -> None:
        for _ in range(rng.choice([1, 1, 2, 3])):
            k = next(count)
            length = 10.0 if rng.random() < 0.8 else rng.uniform(0.0, 10.0)
            if rng.random() < 0.1:
                length = 0.0  # ends at once, after what is queued now
            end = env.now + length
            if lined:
                clock.enqueue_at(end, _Entry(log, f"game {k}", env))
            else:
                clock.timeout_at(end).callbacks.append(
                    lambda _e, k=k: log.append(f"game {k} at {env.now}")
                )
        other = next(count)
        env.timeout(rng.choice([0.0, 0.5, 10.0])).callbacks.append(
            lambda _e: log.append(f"other {other} at {env.now}")
        )

    for _ in range(300):
        at = rng.choice([rng.uniform(0, 50), float(rng.randrange(0, 50))])  # ties too
        env.timeout(at).callbacks.append(start_games)
    env.run()
    return log


@pytest.mark.parametrize("seed", range(5))
def test_game_ends_as_queue_entries_run_where_their_timeouts_would(seed: int) -> None:
    lined = order_of_game_ends(True, seed)
    assert len(lined) > 600
    assert lined == order_of_game_ends(False, seed)


def test_an_entry_fires_where_a_timeout_at_its_time_would() -> None:
    """Clock.enqueue_at puts an entry at the time timeout_at's timeout fires, also where
    ``now + (t - now)`` rounds below ``t`` (the delay is then stepped up) or above it."""
    import random

    from lobbysim.sim.clock import Clock

    rng = random.Random(3)
    stepped = above = 0
    for _ in range(2000):
        now = rng.uniform(0.0, 10.0)
        t = now * rng.choice([1.5, 3.0, 1e3]) + rng.uniform(0.0, 1.0)
        stepped += now + (t - now) < t
        above += now + (t - now) > t
        env = simpy.Environment(initial_time=now)
        clock = Clock(env, tick=0.25, timed_only=False)
        clock.enqueue_at(t, _Entry([], "entry", env))
        timeout = clock.timeout_at(t)
        (at_entry, _, _, entry), (at_timeout, _, _, event) = sorted(env._queue)
        assert isinstance(entry, _Entry) and event is timeout
        assert at_entry == at_timeout >= t
    assert stepped > 10 and above > 10  # both roundings were met
