"""Helpers for the trace-style lobby tests under ``tests/sim``: scripted players and lobbies.

Not a test module (pytest collects only ``test_*.py``): the test modules import these plain
functions from here instead of from one another. They take arguments and are called several
times in a test, and some from a module's own helpers, hence functions rather than fixtures.

* :func:`players`: a batch of players with the given prior means (and true skills).
* :func:`scripted`: a :class:`~lobbysim.sim.LobbySimulation` whose players arrive as scripted.
* :func:`base`: a small 1v1 scenario with a 1-minute tick, ``matchmaker`` settings overridden.
* :func:`push_deadlines_at_once`: a lobby whose reneging deadlines all go into its heap at once.
* :data:`WORLD`, :data:`LIMITS`: three regions and data centres, and latency limits that relax.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Generator, Iterator
from typing import Any

import numpy as np

from lobbysim.players.population import PlayerBatch
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.sessions import Lobby
from lobbysim.streams import Streams


def players(
    mu: list[float], var: float = 1.0, skill: list[float] | None = None, games: int = 1
) -> PlayerBatch:
    """Return registered players with prior means ``mu`` and variance ``var``.

    Their true skills are ``skill`` (default: ``mu``); each stays ``games`` games, with no
    limit on minutes.
    """
    n = len(mu)
    return PlayerBatch(
        skill=np.array(skill if skill is not None else mu, dtype=float),
        mu0=np.array(mu, dtype=float),
        var0=np.full(n, var),
        registered=np.ones(n, dtype=bool),
        session_games=np.full(n, games, dtype=np.int64),
        session_minutes=np.full(n, math.inf),
    )


def scripted(
    scenario: Scenario,
    arrivals: list[tuple[float, PlayerBatch]],
    patience: Iterator[float] | None = None,
) -> LobbySimulation:
    """A simulation whose players arrive as scripted (no arrival model).

    Args:
        scenario: the lobby's scenario (its arrival model is not used).
        arrivals: ``(time, batch)`` pairs, in time order: ``batch`` queues at ``time``.
        patience: the players' patience draws, in the order they queue (None: the scenario's).
    """
    sim = LobbySimulation(scenario, Streams(0))
    if patience is not None:
        sim.draw_patience = lambda: next(patience)

    def script() -> Generator[Any, Any, None]:
        for t, batch in arrivals:
            yield sim.env.timeout(t - sim.env.now)
            sim.add_players(batch)

    sim.env.process(script())
    sim.start_service()
    return sim


def base(**matchmaker: Any) -> Scenario:
    """A 100-minute 1v1 lobby without warm-up: 10-minute games, a pass every minute.

    ``matchmaker`` overrides or adds settings of the matchmaker section.
    """
    return Scenario.from_dict(
        {
            "horizon": 100,
            "warmup": 0,
            "game": {"length": 10},
            "matchmaker": {"tick": 1.0, **matchmaker},
        }
    )


def push_deadlines_at_once(lobby: Lobby) -> None:
    """Make ``lobby`` push every deadline into its heap as it is set (none kept back to the
    next tick), as :meth:`Reneging.add <lobbysim.sim.reneging.Reneging.add>` did before it kept
    far ones back."""
    reneging = lobby.reneging

    def add_deadline(deadline: float, pid: int, spell: int) -> None:
        heapq.heappush(reneging._deadlines, (deadline, pid, spell))
        if deadline < reneging._next_renege_check:
            reneging._next_renege_check = deadline
            reneging._check_at(deadline)

    lobby._add_deadline = add_deadline  # type: ignore[method-assign]


WORLD: dict[str, Any] = {
    "data_centres": ["us", "eu", "asia"],
    "regions": [
        {"name": "na", "share": 0.5, "utc_offset_hours": -5},
        {"name": "eu", "share": 0.3, "utc_offset_hours": 1},
        {"name": "apac", "share": 0.2, "utc_offset_hours": 8},
    ],
    "latency": {
        "name": "matrix",
        "base_ms": {"na": [30, 95, 190], "eu": [95, 25, 160], "apac": [190, 160, 45]},
        "spread": 0.3,
    },
}
LIMITS = {"max_latency_ms": [[0, 60], [1, 120], [3, 250]], "max_delta_ping_ms": [[0, 30], [2, 200]]}
