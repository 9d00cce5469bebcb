"""The engine checks what an assignment returns, and names the plug-in when it is wrong.

A user assignment (:class:`BadPairs`, given to a real lobby as ``"module:Class"``) returns one
kind of bad pairs, or raises; every case must stop the run with a one-line
:class:`~lobbysim.registry.PluginError` naming the assignment, never a ``KeyError`` from deep in
the engine or, worse, a game quietly started with the wrong players.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from lobbysim.experiments.simulation import collect, simulate
from lobbysim.policies import POLICIES, OpponentPolicy
from lobbysim.policies.assignment import ASSIGNMENTS, Pool
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.raters import BayesianRater
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim.pairing import check_pairs
from tests.sim.lobby_helpers import players, scripted

NAME = "tests.sim.test_plugin_checks:BadPairs"


@dataclass(frozen=True)
class BadPairs:
    """An assignment that returns what ``kind`` says for a pool of n >= 3 players (no pairs
    for fewer)."""

    name: ClassVar[str] = "bad_pairs"
    kind: str = "good"

    def pairs(
        self,
        pool: Pool,
        policy: OpponentPolicy,
        threshold: ThresholdSchedule,
        rng: np.random.Generator,
        pass_index: int,
    ) -> Any:
        n = pool.size
        returns: dict[str, Any] = {
            "good": np.array([[0, 1]]),
            "good_int32": np.array([[2, 0]], dtype=np.int32),
            "none": np.empty((0, 2), dtype=np.intp),
            "twice": np.array([[0, 1], [2, 1]]),
            "self": np.array([[0, 1], [2, 2]]),
            "outside": np.array([[0, n]]),
            "negative": np.array([[-1, 0]]),
            "flat": np.array([0, 1]),
            "three": np.array([[0, 1, 2]]),
            "float": np.array([[0.0, 1.0]]),
            "bool": np.array([[False, True]]),
            "list": [[0, 1]],
        }
        if self.kind == "raise":
            raise ValueError("no pairs today,\nsorry")
        if n < 3:  # the examples need three players
            return returns["none"]
        return returns[self.kind]


def lobby_with(kind: str) -> Any:
    """A real lobby whose assignment is ``BadPairs(kind)``: four players queue at once."""
    scenario = Scenario.from_dict(
        {
            "horizon": 30,
            "warmup": 0,
            "game": {"length": 10},
            "matchmaker": {"tick": 1.0, "assignment": {"name": NAME, "kind": kind}},
        }
    )
    return scripted(scenario, [(0.0, players([0.0, 0.1, 0.2, 0.3]))], iter([math.inf] * 20))


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ("twice", "the pool index 1 in two pairs (rows 0 and 1)"),
        ("self", "the pair [2, 2] (row 1): a player paired with themself"),
        ("outside", "the pair [0, 4] (row 0) with an index outside the pool of 4 waiting players"),
        ("negative", "the pair [-1, 0] (row 0) with an index outside the pool of 4 waiting"),
        ("flat", "an array of shape (2,), not (n, 2)"),
        ("three", "an array of shape (1, 3), not (n, 2)"),
        ("float", "an array of float64, not of integer pool indices"),
        ("bool", "an array of bool, not of integer pool indices"),
        ("list", "list, not an (n, 2) array of pool indices"),
    ],
)
def test_bad_pairs_stop_the_run_with_one_line_naming_the_assignment(
    kind: str, problem: str
) -> None:
    sim = lobby_with(kind)
    with pytest.raises(PluginError) as info:
        sim.env.run(until=5)
    message = str(info.value)
    assert message == f"matchmaker.assignment: '{NAME}' returned {problem}" or (
        message.startswith(f"matchmaker.assignment: '{NAME}' returned {problem}")
    )
    assert "\n" not in message
    assert sim.n_games == 0  # no game was started with the bad pairs


def test_an_assignment_that_raises_is_named_with_its_error_on_one_line() -> None:
    sim = lobby_with("raise")
    with pytest.raises(PluginError) as info:
        sim.env.run(until=5)
    assert str(info.value) == (
        f"matchmaker.assignment: the assignment '{NAME}' failed in pairs() with the policy "
        "'draw_chance': "
        "ValueError: no pairs today, sorry"
    )


def test_the_error_reaches_simulate_as_the_same_plugin_error() -> None:
    scenario = Scenario.from_dict(
        {
            "horizon": 30,
            "warmup": 0,
            "arrivals": {"name": "poisson", "rate": 3.0},
            "matchmaker": {"assignment": {"name": NAME, "kind": "twice"}},
        }
    )
    with pytest.raises(PluginError, match=r"^matchmaker\.assignment: .* in two pairs"):
        simulate(scenario, seed=1)


@pytest.mark.parametrize("kind", ["good", "good_int32", "none"])
def test_good_pairs_pass_and_start_their_games(kind: str) -> None:
    sim = lobby_with(kind)
    sim.env.run(until=12)  # the first games end at 11
    games = collect(sim, 0).participants
    expected = {"good": [0, 1], "good_int32": [2, 0], "none": []}[kind]
    assert games.sort_values(["game_id", "team"]).player_id.tolist()[:2] == expected


def test_check_pairs_accepts_exactly_the_valid_pairs() -> None:
    """The quick path (min, max and a set) decides as the plain rules do, and only the
    explanation walks the pairs."""
    rng = np.random.default_rng(2)
    for _ in range(3000):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(0, 5))
        pairs = rng.integers(-1, n + 1, size=(k, 2))
        flat = pairs.ravel().tolist()
        valid = all(0 <= i < n for i in flat) and len(set(flat)) == len(flat)
        try:
            np.testing.assert_array_equal(check_pairs("x", pairs, n), pairs)
            assert valid, (n, pairs)
        except PluginError as exc:
            assert not valid, (n, pairs, exc)


def test_the_built_in_assignments_pass_the_check() -> None:
    rng = np.random.default_rng(1)
    for name in ASSIGNMENTS.names():
        for n in (2, 3, 9, 40):
            mu = rng.normal(0, 2, n)

            def quality(i: Any, j: Any, mu: Any = mu) -> Any:
                return np.exp(-((mu[i] - mu[j]) ** 2) / 10.0)

            pool = Pool(mu, np.ones(n), rng.uniform(0, 3, n), 2.5, quality)
            pairs = ASSIGNMENTS.create(name).pairs(
                pool, POLICIES.create("draw_chance"), ThresholdSchedule(), rng, 1
            )
            assert check_pairs(name, pairs, n).shape == (n // 2, 2)


@dataclass(frozen=True, eq=False)
class TooGood(BayesianRater):
    """A driving rater whose match quality is out of range."""

    name: ClassVar[str] = "too_good"

    def quality(self, ids_a: Any, ids_b: Any) -> Any:
        return np.full(np.shape(ids_a), 1.5)


@pytest.mark.parametrize("mode", ["1v1", "ffa"])
def test_a_driving_rater_with_a_quality_outside_0_1_is_named(mode: str) -> None:
    scenario = Scenario.from_dict(
        {
            "horizon": 30,
            "warmup": 0,
            "game": {"length": 10, "mode": mode, **({"ffa_size": 4} if mode == "ffa" else {})},
            "matchmaker": {"tick": 1.0},
            "raters": {"driver": "tests.sim.test_plugin_checks:TooGood"},
        }
    )
    sim = scripted(scenario, [(0.0, players([0.0, 0.1, 0.2, 0.3]))], iter([math.inf] * 20))
    with pytest.raises(PluginError) as info:
        sim.env.run(until=5)
    assert str(info.value) == (
        "raters.driver: 'tests.sim.test_plugin_checks:TooGood' returned the match quality 1.5, "
        "outside [0, 1]"
    )
