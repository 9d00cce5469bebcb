"""The doorbell's held rings run the pass where a ring through the event queue would."""

from __future__ import annotations

import pytest
import simpy

from lobbysim.sim.clock import Doorbell


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
