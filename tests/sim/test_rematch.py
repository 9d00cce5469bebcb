"""No accidental rematches (``matchmaker.rematch_games``, ``rematch_minutes``) in real lobbies.

Two players who played each other are not matched again until each has played ``rematch_games``
other games since, nor within ``rematch_minutes`` of the end of their game. The participants
records are scanned for every time two players met again.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any

import pandas as pd
import pytest

from lobbysim.experiments.simulation import collect, simulate
from lobbysim.scenario import MatchmakerConfig, Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.pairing import rematch_games
from lobbysim.sim.rematch import SWEEP_MIN
from lobbysim.streams import Streams
from lobbysim.validation import ScenarioError
from tests.sim.lobby_helpers import players, scripted


def games_between_meetings(participants: pd.DataFrame) -> list[int]:
    """Return, for every time two players met again, the fewer games either played in between.

    Games are ordered by id (ids are given as games start); a group game counts every two of
    its players as having met.
    """
    seated = participants.groupby("game_id").player_id.apply(sorted).sort_index()
    played: dict[int, list[int]] = defaultdict(list)  # player -> their games, in order
    for game_id, ids in seated.items():
        for pid in ids:
            played[pid].append(int(game_id))
    position = {pid: {g: k for k, g in enumerate(games)} for pid, games in played.items()}
    last_met: dict[tuple[int, int], int] = {}
    between = []
    for game_id, ids in seated.items():
        for a, b in itertools.combinations(ids, 2):
            before = last_met.get((a, b))
            if before is not None:
                between.append(
                    min(
                        position[a][game_id] - position[a][before] - 1,
                        position[b][game_id] - position[b][before] - 1,
                    )
                )
            last_met[(a, b)] = int(game_id)
    return between


def four_friends(**matchmaker: Any) -> pd.DataFrame:
    """Four players who stay all along, two pairs close in mean: the participants records."""
    scenario = Scenario.from_dict(
        {
            "horizon": 300,
            "warmup": 0,
            "game": {"length": 10},
            "matchmaker": {"tick": 1.0, "policy": "point_estimate", **matchmaker},
        }
    )
    sim = scripted(
        scenario,
        [(0.0, players([0.0, 0.1, 5.0, 5.1], var=0.5, games=1000))],
        iter([math.inf] * 200),
    )
    sim.env.run(until=scenario.horizon)
    return collect(sim, 0).participants


@pytest.mark.parametrize("games", [1, 2])
def test_players_do_not_meet_again_until_each_has_played_other_games(games: int) -> None:
    between = games_between_meetings(four_friends(rematch_games=games))
    assert len(between) > 20
    assert min(between) == games  # the rule holds, and binds


def test_without_the_rule_the_same_two_meet_game_after_game() -> None:
    between = games_between_meetings(four_friends(rematch_games=0))
    assert len(between) > 50 and set(between) == {0}  # always the nearest mean: a rematch


def small_lobby(mode: dict[str, Any], **matchmaker: Any) -> pd.DataFrame:
    """A small Poisson lobby of long sessions, where the same players wait together often."""
    scenario = Scenario.from_dict(
        {
            "horizon": 600,
            "warmup": 0,
            "arrivals": {"name": "poisson", "rate": mode.pop("rate", 0.3)},
            "population": {"session_games_mean": 30, "patience_mean": 20.0},
            "game": {"length": 10, "backfill": False, **mode},
            "matchmaker": {"tick": 1.0, **matchmaker},
        }
    )
    return simulate(scenario, 7).participants


@pytest.mark.parametrize(
    "mode", [{"mode": "1v1"}, {"mode": "ffa", "ffa_size": 3, "rate": 0.6}], ids=["1v1", "ffa"]
)
def test_a_small_lobby_rematches_only_without_the_rule(mode: dict[str, Any]) -> None:
    free = small_lobby(dict(mode), rematch_games=0)
    # back-to-back rematches are common in a small lobby (1v1: 1187 of 1598 games)
    assert games_between_meetings(free).count(0) > 0.5 * free.game_id.nunique()
    ruled = small_lobby(dict(mode), rematch_games=1)
    between = games_between_meetings(ruled)
    assert len(between) > 500 and min(between) == 1  # players still meet again, never at once
    # and games still happen (1v1: 1540 against 1598; ffa: 1390 against 1857)
    assert ruled.game_id.nunique() > 0.7 * free.game_id.nunique()


@pytest.mark.parametrize("minutes, starts", [(15.0, [0.0, 25.0, 50.0, 75.0]), (0.0, None)])
def test_two_players_wait_rematch_minutes_after_their_game(
    minutes: float, starts: list[float] | None
) -> None:
    # Only two players: the game rule is off, the time rule alone keeps them apart. Their game
    # ends at 10; the pass at 10 and the ticks up to 24 may not pair them, the tick at 25 may.
    scenario = Scenario.from_dict(
        {
            "horizon": 100,
            "warmup": 0,
            "game": {"length": 10},
            "matchmaker": {"tick": 1.0, "rematch_games": 0, "rematch_minutes": minutes},
        }
    )
    sim = scripted(scenario, [(0.0, players([0.0, 0.0], games=100))], iter([math.inf] * 100))
    sim.env.run(until=100)
    games = collect(sim, 0).games
    assert games.start.tolist() == (starts or [10.0 * k for k in range(9)])


def test_the_default_is_one_game_with_a_player_base_and_off_without() -> None:
    assert rematch_games(MatchmakerConfig(), has_base=True) == 1
    assert rematch_games(MatchmakerConfig(), has_base=False) == 0
    assert rematch_games(MatchmakerConfig(rematch_games=0), has_base=True) == 0
    assert rematch_games(MatchmakerConfig(rematch_games=3), has_base=False) == 3
    plain = LobbySimulation(Scenario.from_dict({"horizon": 60, "warmup": 0}), Streams(0))
    assert plain.matchmaker.rematch is None  # nothing to keep: results as before
    with_base = LobbySimulation(
        Scenario.from_dict({"horizon": 60, "warmup": 0, "base": {"size": 50}}), Streams(0)
    )
    rule = with_base.matchmaker.rematch
    assert rule is not None and (rule.games, rule.minutes) == (1, 0.0)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("rematch_games", -1, "matchmaker.rematch_games: expected a whole number >= 0, got -1"),
        ("rematch_games", 1.5, "matchmaker.rematch_games: expected a whole number, got 1.5"),
        ("rematch_minutes", -2, "matchmaker.rematch_minutes: expected a number >= 0, got -2.0"),
        (
            "rematch_minutes",
            math.inf,
            "matchmaker.rematch_minutes: expected a number >= 0, got inf",
        ),
    ],
)
def test_bad_rematch_settings_are_named(field: str, value: object, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict({"matchmaker": {field: value}})
    assert info.value.problems == [message]


def test_guests_gone_for_good_are_swept_out_of_the_record() -> None:
    # ~11,600 guests of one game each: without the sweep every one would stay on record
    scenario = Scenario.from_dict(
        {
            "horizon": 600,
            "warmup": 0,
            "arrivals": {"name": "poisson", "rate": 20.0},
            "population": {"session_games_mean": 1, "patience_mean": None},
            "game": {"length": 10},
            "matchmaker": {"rematch_games": 1, "tick": 5.0, "wake_on_arrival": False},
            "raters": {"shadows": []},
        }
    )
    sim = LobbySimulation(scenario, Streams(3))
    sim.run()
    played = 2 * sim.n_games
    rule = sim.matchmaker.rematch
    assert rule is not None and played > 10_000
    assert len(rule) <= SWEEP_MIN + len(sim.present)


def test_met_pair_and_the_mask_agree_with_met_and_a_set_lookup() -> None:
    """The 1v1 shortcut (:meth:`RematchRule.met_pair`) keeps what :meth:`met` keeps, and the
    mask bars exactly the pairs :meth:`barred` lists, on random games and pools."""
    import numpy as np
    import simpy

    from lobbysim.sim.entities import Player, Waiting
    from lobbysim.sim.rematch import RematchRule

    rng = np.random.default_rng(3)
    env = simpy.Environment()
    rules = [RematchRule(env, 2, 3.0), RematchRule(env, 2, 3.0)]
    people = [
        Player(k, 0.0, 0.0, 1.0, registered=True, games_left=9, leave_at=math.inf)
        for k in range(40)
    ]

    def state(rule: RematchRule) -> dict[int, tuple[int, dict[int, tuple[int, float]]]]:
        return {
            pid: (e.games, {o: (at, left.at) for o, (at, left) in e.opponents.items()})
            for pid, e in rule._recent.items()
        }

    def run() -> simpy.events.Generator:
        for _ in range(300):
            a, b = (int(k) for k in rng.choice(40, 2, replace=False))
            end = env.timeout(float(rng.uniform(0.5, 4.0)))
            wa, wb = (Waiting(p, people[p], env.now, 0, end) for p in (a, b))
            rules[0].met((wa, wb))
            rules[1].met_pair(wa, wb)
            assert state(rules[0]) == state(rules[1])
            ids = [int(k) for k in rng.permutation(40)[: int(rng.integers(2, 40))]]
            keys = set(rules[0].barred(ids).tolist())
            n = len(ids)
            i, j = np.triu_indices(n, 1)
            masked = rules[1].mask(lambda i, j: np.ones(i.size), ids)(i, j)
            expected = [(x * n + y) in keys for x, y in zip(i.tolist(), j.tolist(), strict=True)]
            assert (masked == -np.inf).tolist() == expected
            yield env.timeout(float(rng.uniform(0.0, 1.0)))

    env.process(run())
    env.run()
    assert sum(len(e.opponents) for e in rules[1]._recent.values()) > 0
