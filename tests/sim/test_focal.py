"""Focal players (the paper's "player 0" view) in the lobby, under both assignment strategies."""

from __future__ import annotations

from typing import Any

import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario

FOCAL = [3, 7]


def cohort(assignment: str, **matchmaker: Any) -> Scenario:
    """A cohort of 16 who never leave, playing one-minute games for 30 minutes."""
    return Scenario.from_dict(
        {
            "horizon": 30.5,
            "warmup": 0,
            "arrivals": {"name": "cohort", "size": 16},
            "population": {"session_games_mean": None, "patience_mean": None},
            "game": {"length": 1.0},
            "matchmaker": {
                "policy": "knowledge_gradient",
                "assignment": assignment,
                "tick": 1000.0,
                "wake_on_arrival": True,
                **matchmaker,
            },
            "raters": {"driver": "bayesian", "shadows": []},
        }
    )


@pytest.mark.parametrize("assignment", ["sequential", "global"])
def test_every_game_includes_a_focal_player(assignment: str) -> None:
    focal = simulate(cohort(assignment, focal_players=FOCAL), seed=2)
    everyone = simulate(cohort(assignment), seed=2)
    players = focal.participants.groupby("game_id").player_id
    assert len(focal.games) >= 30  # every focal player plays every minute (with one another)
    assert players.apply(lambda ids: bool(set(ids) & set(FOCAL))).all()
    assert set(focal.participants.player_id) - set(FOCAL)  # ... against others
    others = everyone.participants.groupby("game_id").player_id
    assert not others.apply(lambda ids: bool(set(ids) & set(FOCAL))).all()
    assert len(everyone.games) > len(focal.games)
