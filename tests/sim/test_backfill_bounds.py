"""The bounds back-fill as they match: the oracle seats the waiting player nearest in true skill
to the one who quit, ``uniform_random`` any eligible player at random, every other policy the
nearest in rating (lobbysim/sim/open_seats.py, ``OpenSeats.backfill``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import GroupGame, Player, Waiting
from lobbysim.sim.games import Games
from lobbysim.sim.open_seats import OpenSeats
from lobbysim.streams import Streams

TEAM = {
    "horizon": 120,
    "warmup": 0,
    "seed": 3,
    "arrivals": {"name": "poisson", "rate": 3.0},
    "population": {"patience_mean": 3.0, "session_games_mean": 6},
    "game": {"mode": "team", "team_size": 2, "length": 8, "quit_rate": 0.08},
}


def _queue(skills: list[float]) -> list[Waiting]:
    return [
        Waiting(pid, Player(pid, skill, 0.0, 1.0, True, 5, 1e9), 0.0, 1)
        for pid, skill in enumerate(skills)
    ]


def _games() -> OpenSeats:
    scenario = Scenario.from_dict({**TEAM, "horizon": 1e6})
    groups = LobbySimulation(scenario, Streams(1)).games.groups
    assert groups is not None
    return groups.open_seats


def _one_open_seat(games: OpenSeats, rating: float, truth: float) -> GroupGame:
    game = GroupGame(0, "team", 0.0, 50.0, 0.5, None)  # type: ignore[arg-type]
    game.open_seats.append((1, rating, truth))
    games._games = {0: game}
    return game


def test_the_target_is_the_leavers_rating_or_for_the_oracle_true_skill() -> None:
    games = _games()
    seated: list[int] = []
    waiting = _queue([0.0, 1.0, 2.0])
    values = np.array([0.0, 1.0, 2.0])
    for truth, nearest in ((False, 0), (True, 2)):
        seated.clear()
        _one_open_seat(games, rating=0.2, truth=1.9)
        free = np.ones(3, dtype=bool)
        games.backfill(waiting, values, free, lambda g, w, t: seated.append(w.pid), truth=truth)
        assert seated == [nearest]


def test_a_random_back_fill_picks_any_eligible_player() -> None:
    games = _games()
    waiting = _queue([0.0] * 6)
    picks = []
    rng = np.random.default_rng(7)
    for _ in range(300):
        game = _one_open_seat(games, rating=0.0, truth=0.0)
        game.been = {0}  # player 0 was in the game: never back
        free = np.ones(6, dtype=bool)
        values = np.zeros(6)
        games.backfill(waiting, values, free, lambda g, w, t: picks.append(w.pid), rng=rng)
    counts = np.bincount(picks, minlength=6)
    assert counts[0] == 0 and (counts[1:] > 30).all()  # the nearest (player 1) would take all


@pytest.mark.parametrize(
    ("policy", "truth", "uniform"),
    [("oracle", True, False), ("uniform_random", False, True), ("draw_chance", False, False)],
)
def test_every_back_fill_of_a_run_follows_its_policy(
    policy: str, truth: bool, uniform: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a team game with quits, the full passes' back-fill and the back-fill passes alike:
    the oracle's on true skills (the waiting players' effective skills), uniform_random's at
    random, draw_chance's on the driving rater's means."""
    calls: list[tuple[str, bool, bool, bool]] = []
    backfill, queue = OpenSeats.backfill, OpenSeats.backfill_queue
    games: list[Games] = []  # the run's, for the true skills

    def spy(self: OpenSeats, waiting: list[Waiting], mu: Any, *args: Any, **kw: Any) -> Any:
        skills = games[0].true_skills(waiting)
        on_truth = bool(np.array_equal(np.asarray(mu, dtype=float), skills))
        calls.append(("pass", kw.get("truth", False), kw.get("rng") is not None, on_truth))
        return backfill(self, waiting, mu, *args, **kw)

    def spy_queue(self: OpenSeats, waiting: list[Waiting], mu: Any, **kw: Any) -> Any:
        skills = games[0].true_skills(waiting)
        on_truth = bool(np.array_equal(np.asarray(mu, dtype=float), skills))
        calls.append(("queue", kw.get("truth", False), kw.get("rng") is not None, on_truth))
        return queue(self, waiting, mu, **kw)

    monkeypatch.setattr(OpenSeats, "backfill", spy)
    monkeypatch.setattr(OpenSeats, "backfill_queue", spy_queue)
    scenario = Scenario.from_dict({**TEAM, "matchmaker": {"policy": policy}})
    sim = LobbySimulation(scenario, Streams(scenario.seed))
    games.append(sim.games)
    sim.run()
    assert {kind for kind, *_ in calls} == {"pass", "queue"}, "both paths back-filled"
    assert all(c[1] == truth and c[2] == uniform for c in calls)
    if truth:
        assert all(on_truth for *_, on_truth in calls)
    elif not uniform:  # a rater's means are not the true skills
        assert not any(on_truth for *_, on_truth in calls)
