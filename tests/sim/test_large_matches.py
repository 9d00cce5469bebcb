"""Large matches: a pass that cannot start any match of a ranged shape by its tickets' count
and waits alone examines no seed (lobbysim/sim/seed_greedy.py, ``may_start``)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import lobbysim.sim.seed_greedy as seed_greedy
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario
from lobbysim.scenario.teams import TeamConfig, TeamShape, team_shape
from lobbysim.sim.seed_greedy import may_start


def _shape(
    lows: list[int], highs: list[int], expansions: list[list[list[float]]], clock: str
) -> TeamShape:
    teams = [
        TeamConfig(
            name=f"t{i}",
            min_players=lo,
            max_players=hi,
            expansions=tuple(map(tuple, e)),
            clock=clock,
        )
        for i, (lo, hi, e) in enumerate(zip(lows, highs, expansions, strict=True))
    ]
    return team_shape("team" if len(teams) > 1 else "ffa", None, None, teams)


@pytest.mark.parametrize("clock", ["newest", "oldest"])
def test_may_start_is_false_only_where_no_set_of_tickets_holds_the_minimums(clock: str) -> None:
    """Against every subset of a few tickets: where some subset holds the teams' minimums at
    its own waits (newest and oldest of its tickets) within the most players, may_start is
    True; and it is False in some draws (so it prunes)."""
    rng = np.random.default_rng(7)
    shape = _shape([4, 3], [6, 5], [[[0.5, 3], [1.5, 2]], [[1.0, 2]]], clock)
    pruned = 0
    for _ in range(300):
        n = int(rng.integers(1, 8))
        sizes = rng.choice([1, 1, 1, 2, 3], size=n)
        waits = rng.uniform(0, 2.5, size=n).round(2)
        possible = any(
            shape.least(float(waits[list(c)].min()), float(waits[list(c)].max()))
            <= int(sizes[list(c)].sum())
            <= shape.seats
            for j in range(1, n + 1)
            for c in itertools.combinations(range(n), j)
        )
        got = may_start(shape, sizes, waits)
        if possible:
            assert got, (sizes, waits)
        pruned += not got
    assert pruned >= 30


def test_pruning_a_pass_changes_no_game() -> None:
    """A free-for-all of 30-40 players whose minimum falls with the wait, under a latency rule
    on the newest clock: the games are the same, seat for seat, whether or not a pass that
    cannot start a match is skipped."""
    data = {
        "horizon": 30,
        "warmup": 0,
        "seed": 9,
        "game": {
            "mode": "ffa",
            "length": 8.0,
            "teams": [{"min_players": 40, "max_players": 40, "expansions": [[0.3, 35], [0.6, 30]]}],
        },
        "world": {
            "data_centres": ["east", "west"],
            "regions": [
                {"name": "e", "share": 0.6, "utc_offset_hours": 0},
                {"name": "w", "share": 0.4, "utc_offset_hours": 0},
            ],
            "latency": {"name": "matrix", "base_ms": {"e": [30, 90], "w": [90, 30]}, "spread": 0.3},
        },
        "matchmaker": {
            "algorithm": "flexmatch",
            "rules": [
                {
                    "name": "ping",
                    "kind": "latency",
                    "limit": 80,
                    "clock": "newest",
                    "expansions": [[0.2, 150]],
                }
            ],
        },
        "arrivals": {"name": "poisson", "rate": 12.0},
    }
    scenario = Scenario.from_dict(data)
    answers: list[bool] = []

    def counted(*args: Any) -> bool:
        answers.append(may_start(*args))
        return answers[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(seed_greedy, "may_start", counted)
        pruned = simulate(scenario, 3)
    assert pruned.games is not None and len(pruned.games) >= 3
    assert answers.count(False) >= len(answers) // 2  # most passes are skipped
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(seed_greedy, "may_start", lambda *args: True)
        every = simulate(scenario, 3)
    assert pruned.games.to_csv() == every.games.to_csv()
    assert pruned.participants.to_csv() == every.participants.to_csv()
