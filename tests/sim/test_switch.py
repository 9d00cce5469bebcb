"""The A/B switch (``matchmaker.status_quo``, ``switch_at``): one policy before, another after.

Every random stream is named and none depends on the policy, so runs on the same seed that
differ only in the policy after the switch are identical up to it: the same players present,
the same queue, the same beliefs and the same records; from the switch on they differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import SimulationResult, collect, simulate
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import Records
from lobbysim.streams import Streams
from lobbysim.validation import ScenarioError

SWITCH = 150.0
SEED = 5
POLICIES_AFTER = ("draw_chance", "knowledge_gradient", "uniform_random")


def ab_scenario(policy: str, **matchmaker: Any) -> Scenario:
    """A lobby with quits, reneging and a relaxing threshold; point_estimate until SWITCH."""
    return Scenario.from_dict(
        {
            "horizon": 360,
            "warmup": 30,
            "arrivals": {"name": "poisson", "rate": 3.0},
            "population": {"patience_mean": 3.0, "session_games_mean": 6},
            "game": {"length": 8, "quit_rate": 0.02},
            "matchmaker": {
                "policy": policy,
                "threshold": [[0, 0.6], [1, 0.3], [3, 0]],
                "status_quo": "point_estimate",
                "switch_at": SWITCH,
                **matchmaker,
            },
        }
    )


def state_at_switch(policy: str) -> tuple[LobbySimulation, dict[str, Any]]:
    """Run to the switch and return the simulation and its state there."""
    sim = LobbySimulation(ab_scenario(policy), Streams(SEED))
    sim.start_arrivals()
    sim.start_service()
    sim.advance(SWITCH)
    assert sim.env.now == SWITCH
    assert sim.matchmaker.policy_in_force().name == policy  # what a pass now would use
    ids = np.arange(len(sim.players), dtype=np.int64)
    state = {
        "present": list(sim.present),
        "queue": [(w.pid, w.since, w.spell) for w in sim.pool.values()],
        "beliefs": [
            (name, rater.means(ids).tolist(), _listed(rater.variances(ids)))
            for name, rater in sim.raters
        ],
        "records": {kind: list(getattr(sim.records, kind)) for kind in Records.KINDS},
        "games_started": sim.n_games,
    }
    return sim, state


def _listed(values: np.ndarray | None) -> list[float] | None:
    return None if values is None else values.tolist()


def finish(sim: LobbySimulation) -> SimulationResult:
    """Run the rest of the way to the horizon and return the records."""
    sim.advance(sim.scenario.horizon)
    sim.apply_pending()
    return collect(sim, SEED)


def before(result: SimulationResult) -> dict[str, pd.DataFrame]:
    """Return the records of everything that ended before the switch."""
    games = result.games[result.games.end < SWITCH]
    return {
        "games": games,
        "participants": result.participants[result.participants.game_id.isin(games.game_id)],
        "waits": result.waits[result.waits.left_queue < SWITCH],
        "ratings": result.ratings[result.ratings.time < SWITCH],
    }


def test_runs_that_differ_only_after_the_switch_are_identical_up_to_it() -> None:
    runs = {policy: state_at_switch(policy) for policy in POLICIES_AFTER}
    (_, reference), *others = runs.values()
    assert reference["games_started"] > 100 and reference["queue"]
    assert len(reference["records"]["ratings"]) > 0
    for _, state in others:
        assert state == reference  # present, queue, every belief, every record
    results = {policy: finish(sim) for policy, (sim, _) in runs.items()}
    first, *rest = results.values()
    for result in rest:
        for kind, frame in before(first).items():
            pd.testing.assert_frame_equal(frame, before(result)[kind])
    after = {
        policy: r.games[r.games.start >= SWITCH][["start", "skill_gap_true"]].reset_index(drop=True)
        for policy, r in results.items()
    }
    for a, b in [("draw_chance", "knowledge_gradient"), ("draw_chance", "uniform_random")]:
        assert not after[a].equals(after[b]), (a, b)


def test_a_switch_to_the_status_quo_changes_nothing() -> None:
    # point_estimate before and after the switch is point_estimate all along
    switched = simulate(ab_scenario("point_estimate"), SEED)
    scenario = ab_scenario("point_estimate", status_quo=None, switch_at=None)
    plain = simulate(scenario, SEED)
    for kind in Records.KINDS:
        pd.testing.assert_frame_equal(getattr(switched, kind), getattr(plain, kind))


def test_the_switch_defaults_to_the_warmup_and_the_metrics_start_at_it() -> None:
    scenario = ab_scenario("draw_chance", switch_at=None)
    assert LobbySimulation(scenario, Streams(0)).matchmaker.switch_at == scenario.warmup == 30
    assert scenario.metrics_start == 30
    assert ab_scenario("draw_chance").metrics_start == SWITCH
    assert ab_scenario("draw_chance", switch_at=10).metrics_start == 30  # the warm-up is later
    plain = ab_scenario("draw_chance", status_quo=None, switch_at=None)
    assert LobbySimulation(plain, Streams(0)).matchmaker.switch_at == math.inf


@pytest.mark.parametrize(
    "matchmaker, horizon, problem",
    [
        (
            {"switch_at": 360},
            360,
            "matchmaker.switch_at: 360.0 must be before the horizon (360.0): the policy would "
            "never switch",
        ),
        (
            {"switch_at": 500},
            360,
            "matchmaker.switch_at: 500.0 must be before the horizon (360.0): the policy would "
            "never switch",
        ),
        ({"switch_at": -5}, 360, "matchmaker.switch_at: expected a number >= 0, got -5.0"),
        (
            {"status_quo": None, "switch_at": 100},
            360,
            "matchmaker.switch_at: a switch needs matchmaker.status_quo, the policy in force "
            "before it (got switch_at 100.0 without one)",
        ),
    ],
)
def test_bad_switches_are_one_line_scenario_errors(
    matchmaker: dict[str, Any], horizon: float, problem: str
) -> None:
    data = {
        "horizon": horizon,
        "warmup": 30,
        "matchmaker": {"status_quo": "point_estimate", **matchmaker},
    }
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(data)
    assert info.value.problems == [problem]


@pytest.mark.parametrize(
    "status_quo, message",
    [
        (
            "draw_chanse",
            "matchmaker.status_quo: unknown policy 'draw_chanse' (did you mean 'draw_chance'?)",
        ),
        (
            {"name": "knowledge_gradient", "gama": 0.9},
            "matchmaker.status_quo: policy 'knowledge_gradient' has no parameter 'gama' "
            "(did you mean 'gamma'?)",
        ),
    ],
)
def test_a_bad_status_quo_policy_is_a_one_line_plugin_error(status_quo: Any, message: str) -> None:
    scenario = Scenario.from_dict(
        {"horizon": 100, "warmup": 10, "matchmaker": {"status_quo": status_quo}}
    )
    with pytest.raises(PluginError) as info:
        LobbySimulation(scenario, Streams(0))
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text
