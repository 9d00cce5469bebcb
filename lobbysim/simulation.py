"""The Python API of a lobby run: ``simulate(scenario, seed) -> SimulationResult``.

It builds one :class:`lobbysim.sim.LobbySimulation` on the scenario's random streams, runs it to the
horizon and turns its records into pandas frames (``games``, ``participants``, ``waits``,
``ratings``) and a metrics dict (:mod:`lobbysim.metrics`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from lobbysim.metrics import compute_metrics
from lobbysim.scenario import Scenario, load_scenario
from lobbysim.sim.lobby import LobbySimulation
from lobbysim.streams import Streams

GAME_COLUMNS = [
    "game_id",
    "mode",
    "start",
    "end",
    "draw_prob_true",
    "skill_gap_true",
    "quality_predicted",
    "stronger_side_won",
    "winner",
]
PARTICIPANT_COLUMNS = [
    "game_id",
    "player_id",
    "team",
    "joined",
    "left",
    "minutes",
    "score",
    "registered",
    "quit",
]
WAIT_COLUMNS = ["player_id", "enqueued", "left_queue", "outcome", "wait"]
RATING_COLUMNS = ["time", "rater", "player_id", "rating", "variance"]


@dataclass
class SimulationResult:
    """The frames and metrics of one run.

    Attributes:
        scenario, seed: what was run.
        games: one row per finished game.
        participants: one row per player stint in a game.
        waits: one row per queueing spell; ``outcome`` is ``matched``, ``abandoned`` or
            ``still_waiting`` (then ``left_queue`` is NaN and ``wait`` runs to the horizon).
        ratings: every rater's rating (and variance, NaN without one) of every player seen so
            far, sampled every ``records.ratings_every`` minutes and at the horizon.
        players: one row per player: true skill, registered, games, wins, final state.
        metrics: see :mod:`lobbysim.metrics`.
    """

    scenario: Scenario
    seed: int
    games: pd.DataFrame
    participants: pd.DataFrame
    waits: pd.DataFrame
    ratings: pd.DataFrame
    players: pd.DataFrame
    metrics: dict[str, float]


def simulate(scenario: Scenario | str | Path, seed: int | None = None) -> SimulationResult:
    """Run one replication of ``scenario`` (an object or a YAML path) with ``seed``.

    ``seed`` defaults to the scenario's own. The same scenario and seed give identical frames.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    seed = scenario.seed if seed is None else seed
    sim = LobbySimulation(scenario, Streams(seed))
    sim.run()
    return collect(sim, seed)


def collect(sim: LobbySimulation, seed: int) -> SimulationResult:
    """Turn a finished simulation's records into a :class:`SimulationResult`."""
    scenario = sim.scenario
    horizon = float(sim.env.now)
    sim.sample_ratings()
    records = sim.records
    games = pd.DataFrame.from_records(records.games, columns=GAME_COLUMNS)
    games = games.astype({"stronger_side_won": "boolean"})
    participants = pd.DataFrame.from_records(records.participants, columns=PARTICIPANT_COLUMNS)
    waits_rows = [
        (pid, since, left, outcome, left - since) for pid, since, left, outcome in records.waits
    ]
    waits_rows += [
        (w.pid, w.since, math.nan, "still_waiting", horizon - w.since) for w in sim.pool.values()
    ]
    waits = pd.DataFrame.from_records(waits_rows, columns=WAIT_COLUMNS)
    ratings = pd.DataFrame.from_records(records.ratings, columns=RATING_COLUMNS)
    players = pd.DataFrame(
        {
            "player_id": np.arange(len(sim.players)),
            "skill": [p.skill for p in sim.players],
            "registered": [p.registered for p in sim.players],
            "games": [p.games for p in sim.players],
            "wins": [p.wins for p in sim.players],
            "state": [p.state for p in sim.players],
        }
    )
    ids = np.arange(len(sim.players), dtype=np.int64)
    final = {name: rater.means(ids) for name, rater in sim.raters}
    metrics = compute_metrics(
        games,
        participants,
        waits,
        final_ratings=final,
        skill_scale={name: bool(rater.skill_scale) for name, rater in sim.raters},
        skills=players.skill.to_numpy(),
        registered=players.registered.to_numpy(),
        warmup=scenario.warmup,
        horizon=horizon,
    )
    return SimulationResult(scenario, seed, games, participants, waits, ratings, players, metrics)
