"""Any run's ratings can be replayed from its records alone (priors included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.raters import BayesianRater
from lobbysim.records.rows import GameResult, Seat
from lobbysim.scenario import Scenario

BETA2 = 2.0


def scenario(mode: str, stream: bool) -> Scenario:
    """Informative priors (every player's own mu0, var0), guests, quits; 1v1 or ffa."""
    game = {"mode": mode, "length": 6.0, "beta2": BETA2, "quit_rate": 0.03}
    if mode == "ffa":
        game["ffa_size"] = 4
    return Scenario.from_dict(
        {
            "horizon": 150,
            "warmup": 0,
            "arrivals": {"name": "poisson", "rate": 2.0},
            "population": {
                "prior": "informative",
                "registered_fraction": 0.8,
                "session_games_mean": 4,
                "patience_mean": 3.0,
            },
            "game": game,
            "raters": {"driver": "bayesian", "shadows": []},
            "records": {"ratings_every": 40, "stream": stream, "flush_rows": 50},
        }
    )


def replay(games: pd.DataFrame, participants: pd.DataFrame, players: pd.DataFrame) -> Any:
    """Return a fresh Bayesian rater after every recorded game, in record order."""
    rater = BayesianRater(beta2=BETA2)
    players = players.sort_values("player_id")
    rater.add_players(players.player_id.to_numpy(), players.mu0.to_numpy(), players.var0.to_numpy())
    seats = {
        game_id: tuple(
            Seat(
                int(s.player_id),
                None if pd.isna(s.team) else int(s.team),
                float(s.joined),
                float(s.left),
                float(s.score),
                bool(s.registered),
                bool(s.quit),
                0.0,
            )
            for s in rows.itertuples()
        )
        for game_id, rows in participants.groupby("game_id", sort=False)
    }
    results = [
        GameResult(
            int(g.game_id),
            str(g.mode),
            float(g.start),
            float(g.end),
            seats[g.game_id],
            None if pd.isna(g.winner) else int(g.winner),
        )
        for g in games.itertuples()
    ]
    rater.update(results)
    return rater


def check_replay(
    games: pd.DataFrame,
    participants: pd.DataFrame,
    players: pd.DataFrame,
    ratings: pd.DataFrame,
    horizon: float,
) -> None:
    final = ratings[(ratings.rater == "bayesian") & (ratings.time == horizon)]
    final = final.sort_values("player_id")
    assert len(final) == len(players) > 100
    rater = replay(games, participants, players)
    ids = final.player_id.to_numpy()
    np.testing.assert_allclose(rater.means(ids), final.rating.to_numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rater.variances(ids), final.variance.to_numpy(), rtol=1e-12)
    # the priors differ from player to player: without them nothing could be replayed
    assert players.mu0.nunique() == len(players) and players.var0.nunique() == len(players)


@pytest.mark.parametrize("mode", ["1v1", "ffa"])
def test_a_run_replays_from_its_records_in_memory(mode: str) -> None:
    result = simulate(scenario(mode, stream=False), seed=3)
    assert result.games is not None and result.participants is not None
    assert result.players is not None and result.ratings is not None
    check_replay(result.games, result.participants, result.players, result.ratings, 150.0)


@pytest.mark.parametrize("mode", ["1v1", "ffa"])
def test_a_run_replays_from_its_streamed_records(mode: str, tmp_path: Path) -> None:
    simulate(scenario(mode, stream=True), seed=3, records_dir=tmp_path)
    frames = {
        kind: pd.read_csv(tmp_path / f"{kind}.csv")
        for kind in ("games", "participants", "players", "ratings")
    }
    check_replay(
        frames["games"], frames["participants"], frames["players"], frames["ratings"], 150.0
    )
