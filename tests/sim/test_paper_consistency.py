"""The lobby set up as the paper's single-player study reproduces the paper engine exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lobbysim.paper.study import PaperStudy, _block_streams, draw_priors, simulate_block
from lobbysim.players.population import PlayerBatch
from lobbysim.policies import POLICIES
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.streams import Streams

N_GAMES = 40


class InjectedStreams(Streams):
    """Streams where some names are given generators (the paper engine's)."""

    def __init__(self, seed: int, given: dict[str, np.random.Generator]) -> None:
        super().__init__(seed)
        self.given = given

    def get(self, name: str) -> np.random.Generator:
        return self.given[name] if name in self.given else super().get(name)


@pytest.mark.parametrize("policy", ["point_estimate", "draw_chance", "knowledge_gradient"])
@pytest.mark.parametrize("case", ["top", "middle"])
def test_lobby_makes_the_paper_engines_choices_and_updates(policy: str, case: str) -> None:
    seed = 17
    study = PaperStudy(case=case, n_games=N_GAMES, windows=((1, N_GAMES),), block_paths=1)
    trace: list[dict] = []
    simulate_block(study, POLICIES.create(policy), seed, block=0, n_paths=1, trace=trace)

    # The same draws the paper engine made for its block 0, path 0.
    policy_means, truth_means, variances = draw_priors(study, seed)
    truth_rng, noise_rng, tie_rng = _block_streams(seed, 0)
    skills = truth_means + np.sqrt(variances) * truth_rng.standard_normal((1, 50))[0]

    scenario = Scenario.from_dict(
        {
            "horizon": N_GAMES + 0.5,  # games of 1 minute end at 1, 2, ..., N
            "warmup": 0,
            "population": {"patience_mean": None},
            "game": {"length": 1.0, "beta2": study.beta2},
            "matchmaker": {
                "policy": policy,
                "assignment": {"name": "sequential", "candidates": 49},
                "tick": 1000.0,
                "wake_on_arrival": True,
                "focal_players": [0],
            },
            "raters": {"driver": {"name": "bayesian", "beta2": study.beta2}, "shadows": []},
        }
    )
    streams = InjectedStreams(0, {"performance": noise_rng, "ties": tie_rng})
    sim = LobbySimulation(scenario, streams)
    games = np.full(50, 10**6, dtype=np.int64)
    games[0] = N_GAMES
    sim.add_players(
        PlayerBatch(
            skill=skills,
            mu0=policy_means,
            var0=variances,
            registered=np.ones(50, dtype=bool),
            session_games=games,
            session_minutes=np.full(50, math.inf),
        )
    )
    beliefs: list[tuple[np.ndarray, np.ndarray]] = []
    ids = np.arange(50, dtype=np.int64)
    apply = sim.matchmaker.before_pass  # brings the driving rater up to date

    def apply_and_record() -> None:
        apply()
        now = (sim.driver.means(ids).copy(), sim.driver.variances(ids).copy())
        if not beliefs or not np.array_equal(now[1], beliefs[-1][1]):  # a game was rated
            beliefs.append(now)

    beliefs.append((sim.driver.means(ids).copy(), sim.driver.variances(ids).copy()))
    sim.matchmaker.before_pass = apply_and_record
    sim.start_service()
    sim.env.run(until=scenario.horizon)
    apply_and_record()
    beliefs.pop(0)  # the priors

    parts = sorted(sim.records.participants)  # (game_id, player_id, team, ...)
    opponents = [pid for (_, pid, team, *_rest) in parts if team == 1]
    assert opponents == [step["opponent"] for step in trace]
    assert len(beliefs) == N_GAMES
    for n, (mu, var) in enumerate(beliefs):
        np.testing.assert_array_equal(mu, trace[n]["mu"])
        np.testing.assert_array_equal(var, trace[n]["var"])
