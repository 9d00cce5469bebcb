"""The lobby's batched events give bit for bit what the plain SimPy model gives.

The lobby spends no SimPy event on a player: a session is a chain of callbacks (queue, play,
queue again or leave), reneging is one wake-up for the earliest live deadline, and the games that
end at one tick end in one event. The reference here is the plain model it replaced, kept as the
specification: a process per session that waits on an event for its match (or its renege) and
then on its game, an event per game end on the tick grid, and a wake-up for every deadline that
comes up, live or not. Both run the same scenarios (1v1 with quits and reneging on ticks only and
on every arrival, team and free-for-all with back-fill, a player base with retention, engagement
pairing and the rematch rule); every record must be the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from typing import Any

import pandas as pd
import pytest
import simpy

from lobbysim.experiments.simulation import collect
from lobbysim.scenario import Scenario, load_scenario
from lobbysim.scenario.bundled import find_scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import ABANDONED, GONE, PLAYING, WAITING, Player, Waiting
from lobbysim.sim.sessions import Lobby
from lobbysim.streams import Streams
from tests.sim.lobby_helpers import push_deadlines_at_once

KINDS = ("games", "participants", "waits", "ratings", "players")


def plain_model(sim: LobbySimulation) -> None:
    """Turn ``sim`` into the plain model: processes per session, an event per game end."""
    lobby, clock = sim.lobby, sim.clock
    env = sim.env
    matched: dict[int, simpy.Event] = {}  # player -> the event of their current queueing spell

    def session(player: Player) -> Generator[simpy.Event, Any, None]:
        self: Lobby = lobby
        recorder = self._recorder
        while True:
            player.spell += 1
            player.state = WAITING
            since = env.now
            event = matched[player.pid] = env.event()
            self.pool[player.pid] = Waiting(player.pid, player, since, player.spell)
            patience = min(self.draw_patience(), player.leave_at - since)
            if patience < float("inf"):
                self._add_deadline(since + max(patience, 0.0), player.pid, player.spell)
            if self._wake_on_arrival:
                self._doorbell.ring()
            game = yield event
            if game is None:
                recorder.wait(player.pid, since, env.now, "abandoned")
                if self.on_wait is not None:
                    self.on_wait(player, env.now - since, True)
                player.state = ABANDONED
                self._end_session(player)
                return
            recorder.wait(player.pid, since, env.now, "matched")
            if self.on_wait is not None:
                self.on_wait(player, env.now - since, False)
            player.state = PLAYING
            yield game
            player.games_left -= 1
            if player.games_left <= 0 or env.now >= player.leave_at:
                player.state = GONE
                self._end_session(player)
                return

    def queue(player: Player) -> None:
        env.process(session(player))

    def start_playing(waiting: Waiting, leave: simpy.Event) -> None:
        del lobby.pool[waiting.pid]
        waiting.leave = leave
        matched[waiting.pid].succeed(leave)

    def renege(waiting: Waiting) -> None:
        del lobby.pool[waiting.pid]
        matched[waiting.pid].succeed(None)

    tick_events: dict[int, list[simpy.Event]] = {}

    def event_at(t: float) -> simpy.Event:
        if clock.timed_only and t > env.now:
            k = round(t / clock.tick)
            if k * clock.tick == t:
                event = env.event()
                tick_events.setdefault(k, []).append(event)
                return event
        return clock.timeout_at(t)

    def fire_tick(k: int) -> None:
        for event in tick_events.pop(k, ()):
            event.succeed()

    lobby._join_queue = queue  # type: ignore[method-assign]
    push_deadlines_at_once(lobby)
    # the games hand players over and end their stints by callbacks: here the sessions' own
    # processes take the game's event and end the stint when it fires
    lobby.hand_over = start_playing  # type: ignore[method-assign]
    lobby.stint_over = lambda player: None  # type: ignore[method-assign]
    lobby.reneging._renege = renege
    lobby.reneging._drop_stale = lambda: None  # type: ignore[method-assign]
    clock.event_at = event_at  # type: ignore[method-assign,assignment]
    clock.fire_tick = fire_tick  # type: ignore[method-assign]


def records(scenario: Scenario, plain: bool) -> dict[str, str]:
    sim = LobbySimulation(scenario, Streams(scenario.seed))
    if plain:
        plain_model(sim)
    sim.run()
    result = collect(sim, scenario.seed)
    return {kind: getattr(result, kind).to_csv(index=False) for kind in KINDS}


def shortened(name: str, horizon: float) -> Scenario:
    scenario = load_scenario(find_scenario(name))
    scenario = scenario.replace(records=dataclasses.replace(scenario.records, stream=False))
    warmup = min(scenario.warmup, horizon / 4)
    mm = scenario.matchmaker
    switch = None if mm.switch_at is None else min(mm.switch_at, warmup)
    return scenario.replace(
        horizon=horizon, warmup=warmup, matchmaker=dataclasses.replace(mm, switch_at=switch)
    )


ONE_V_ONE = {
    "horizon": 240,
    "warmup": 0,
    "arrivals": {"name": "poisson", "rate": 3.0},
    "population": {"patience_mean": 1.5, "session_minutes_mean": 40},
    "game": {"length": 8, "quit_rate": 0.02},
    "matchmaker": {"threshold": [[0, 0.9], [2, 0.6]], "tick": 0.5},
}


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(lambda: Scenario.from_dict(ONE_V_ONE), id="1v1-ticks"),
        pytest.param(
            lambda: Scenario.from_dict(
                {**ONE_V_ONE, "matchmaker": {**ONE_V_ONE["matchmaker"], "wake_on_arrival": True}}
            ),
            id="1v1-every-arrival",
        ),
        pytest.param(lambda: shortened("one_visit", 240), id="one_visit"),
        pytest.param(lambda: shortened("mechwarrior_ffa", 300), id="ffa"),
        pytest.param(lambda: shortened("team_4v4", 300), id="team"),
        pytest.param(
            lambda: shortened("live_game_retention", 2880),
            id="base-retention",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_batched_events_give_the_plain_models_records(scenario: Any) -> None:
    chosen = scenario()
    batched, plain = records(chosen, plain=False), records(chosen, plain=True)
    assert pd.read_csv(pd.io.common.StringIO(batched["waits"])).shape[0] > 100
    for kind in KINDS:
        assert batched[kind] == plain[kind], kind


@pytest.mark.slow
def test_engagement_pairing_gives_the_plain_models_records() -> None:
    base = shortened("live_game_retention", 2880)
    spec = dataclasses.replace(base.matchmaker.policy, name="engagement", params={})
    chosen = base.replace(matchmaker=dataclasses.replace(base.matchmaker, policy=spec))
    batched, plain = records(chosen, plain=False), records(chosen, plain=True)
    for kind in KINDS:
        assert batched[kind] == plain[kind], kind
