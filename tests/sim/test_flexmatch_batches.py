"""FlexMatch's batches (``matchmaker.batch_size``, ``batching``, ``batch_sort``): the pool cut
into batches of a stated size, sorted on attributes (``largest_population``, ``sorted``), dealt
at random (``none``) or oldest first (``fastest_region``), and read from and written to a
FlexMatch rule set's ``algorithm``.

The end-to-end check is against a closed form: with no rule that binds skill, FlexMatch's
builder pairs the oldest tickets whatever their skill, so the mean true skill gap of a 1v1 game
is that of two independent draws, E|X - Y| = 2 sd / sqrt(pi); pairing within batches of four
tickets sorted on true skill brings it far below that."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lobbysim.api import load_scenario
from lobbysim.experiments.simulation import simulate
from lobbysim.flexmatch.export import export_flexmatch
from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.flexmatch_builder import cut_batches, flexmatch_matches
from lobbysim.sim.rules import RuleSet, View
from lobbysim.validation import ScenarioError

WIDE = RuleConfig(name="any", kind="skill_distance", limit=1000.0)


def _view(prowess: list[float], waited: list[float]) -> View:
    x = np.array(prowess, dtype=float)
    return View(
        waited=np.array(waited, dtype=float),
        rating=np.zeros_like(x),
        quality=lambda i, j: np.ones(len(i)),
        numbers={"rating": np.zeros_like(x), "prowess": x},
        codes={"map": np.array([1, 0, 1, 0, 1, 0], dtype=np.int64)[: len(x)]},
        masks={},
        latency=None,
        best=None,
        premade=None,
    )


def _pairs(matches: Any) -> list[list[int]]:
    return sorted(sorted(p for t in m for p in t) for m, _ in matches)


def test_cut_batches_sorted_random_and_oldest() -> None:
    group = np.arange(6, dtype=np.intp)
    values = [np.array([5.0, 1.0, 4.0, 2.0, 6.0, 3.0])]
    sorted_ = cut_batches([group], 4, "sorted", values)
    assert [b.tolist() for b in sorted_] == [[1, 3, 5, 2], [0, 4]]
    # a tie on the first key falls to the second, then to queue order
    ties = [np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0]), np.array([3.0, 9.0, 1.0, 2.0, 1.0, 5.0])]
    assert [b.tolist() for b in cut_batches([group], 3, "sorted", ties)] == [[3, 5, 1], [2, 4, 0]]
    waits = np.array([1.0, 3.0, 2.0, 3.0, 0.5, 0.0])
    assert [b.tolist() for b in cut_batches([group], 2, "oldest", waits=waits)] == [
        [1, 3],
        [2, 0],
        [4, 5],
    ]
    dealt = cut_batches([group], 4, "random", rng=np.random.default_rng(7))
    again = cut_batches([group], 4, "random", rng=np.random.default_rng(7))
    assert [b.tolist() for b in dealt] == [b.tolist() for b in again]
    assert sorted(np.concatenate(dealt).tolist()) == list(range(6))
    assert [len(b) for b in dealt] == [4, 2]
    # groups (data centres) are cut one by one, never mixed
    two = cut_batches([np.array([0, 2, 4]), np.array([1, 3, 5])], 2, "sorted", values)
    assert [b.tolist() for b in two] == [[2, 0], [4], [1, 3], [5]]


def test_sorted_batches_pair_alike_players_where_one_batch_pairs_the_oldest() -> None:
    # the oldest (0, then 1, ...) are far apart in prowess; sorted, neighbours pair
    view = _view([0.0, 10.0, 1.0, 11.0], [4.0, 3.0, 2.0, 1.0])
    tickets = [[k] for k in range(4)]
    rules = RuleSet([WIDE], None)
    one = flexmatch_matches(view, rules, tickets, seats=2)
    assert _pairs(one) == [[0, 1], [2, 3]]
    by_prowess = flexmatch_matches(
        view,
        rules,
        tickets,
        seats=2,
        batching="largest_population",
        batch_size=2,
        batch_sort=("prowess",),
    )
    assert _pairs(by_prowess) == [[0, 2], [1, 3]]
    # without a batch size the sort changes nothing: one batch, the oldest first
    unsized = flexmatch_matches(
        view, rules, tickets, seats=2, batching="largest_population", batch_sort=("prowess",)
    )
    assert _pairs(unsized) == _pairs(one)
    # a string attribute sorts by its code: equal strings share a batch
    by_map = flexmatch_matches(
        view, rules, tickets, seats=2, batching="sorted", batch_size=2, batch_sort=("map",)
    )
    assert _pairs(by_map) == [[0, 2], [1, 3]]


def _lobby(**matchmaker: Any) -> dict[str, Any]:
    return {
        "name": "batches",
        "horizon": 240,
        "warmup": 30,
        "seed": 11,
        "arrivals": {"name": "poisson", "rate": 6.0},
        "population": {"skill_sd": 2.0, "patience_mean": 30.0, "session_games_mean": 1},
        "game": {"mode": "1v1", "length": 6.0},
        "attributes": {"prowess": {"type": "number", "source": "skill"}},
        "matchmaker": {
            "algorithm": "flexmatch",
            "tick": 2.0,
            "wake_on_arrival": False,
            "rules": [{"name": "any", "kind": "skill_distance", "limit": 1000.0}],
            **matchmaker,
        },
    }


@pytest.mark.slow
def test_batches_sorted_on_skill_beat_the_random_pairs_closed_form() -> None:
    expected = 2 * 2.0 / math.sqrt(math.pi)  # E|X - Y| for two N(0, 2^2) draws: 2.257
    oldest = [simulate(load_scenario(_lobby()), r) for r in range(3)]
    gaps = [run.metrics["skill_gap_true_mean"] for run in oldest]
    assert abs(float(np.mean(gaps)) - expected) < 0.12 * expected, gaps
    dealt = _lobby(batch_size=4)  # FlexMatch's random batches: still random pairs
    random_gaps = [
        simulate(load_scenario(dealt), r).metrics["skill_gap_true_mean"] for r in range(3)
    ]
    assert abs(float(np.mean(random_gaps)) - expected) < 0.12 * expected, random_gaps
    sorted_ = _lobby(batching="largest_population", batch_sort=["prowess"], batch_size=4)
    runs = [simulate(load_scenario(sorted_), r) for r in range(3)]
    sorted_gaps = [run.metrics["skill_gap_true_mean"] for run in runs]
    assert max(sorted_gaps) < 0.5 * expected, sorted_gaps
    # same seed, same bytes
    assert simulate(load_scenario(sorted_), 0).metrics == runs[0].metrics
    assert simulate(load_scenario(dealt), 0).metrics == simulate(load_scenario(dealt), 0).metrics


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"algorithm": "seed_greedy", "batch_size": 8},
            "matchmaker.batch_size: FlexMatch's builder cuts its pool into batches: set "
            "matchmaker.algorithm: flexmatch (got seed_greedy)",
        ),
        ({"batch_size": 1}, "matchmaker.batch_size: expected a whole number >= 2, got 1"),
        (
            {"batching": "sorted"},
            "matchmaker.batch_sort: sorted sorts the pool on the attributes of batch_sort: "
            "name at least one",
        ),
        (
            {"batch_sort": ["prowess"]},
            "matchmaker.batch_sort: only with matchmaker.batching largest_population or sorted "
            "(got batching none, batch_sort ['prowess'])",
        ),
        (
            {"batching": "sorted", "batch_sort": ["grit"], "batch_size": 4},
            "matchmaker.batch_sort: 'grit' is not a bound number or string attribute; bind it "
            "(attributes.grit, or matchmaker.rules.attributes.grit for a FlexMatch file) to "
            "sort the pool on it",
        ),
    ],
)
def test_bad_batches_are_one_line_naming_the_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(_lobby(**change))
    assert str(info.value).splitlines() == [f"scenario (a dict): {message}"]


def _rule_set(algorithm: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "sorted_duel",
        "ruleLanguageVersion": "1.0",
        "playerAttributes": [
            {"name": "skill", "type": "number", "default": 1000},
            {"name": "map", "type": "string", "default": "docks"},
        ],
        "algorithm": algorithm,
        "teams": [
            {"name": "red", "minPlayers": 1, "maxPlayers": 1},
            {"name": "blue", "minPlayers": 1, "maxPlayers": 1},
        ],
        "rules": [
            {
                "name": "close",
                "type": "batchDistance",
                "batchAttribute": "skill",
                "maxDistance": 300,
            }
        ],
    }


def test_a_sorted_batching_is_read_written_back_and_checked(tmp_path: Path) -> None:
    sorted_ = {
        "strategy": "exhaustiveSearch",
        "batchingPreference": "sorted",
        "sortByAttributes": ["map", "skill"],
    }
    path = tmp_path / "sorted.json"
    path.write_text(json.dumps(_rule_set(sorted_)), encoding="utf-8")
    binding = {"skill": {"source": "rating", "scale": 100, "offset": 1000}}
    imported = read_flexmatch(path, binding)
    assert (imported.batching, imported.batch_sort) == ("sorted", ("map", "skill"))
    scenario = load_scenario(
        {
            "name": "sorted",
            "horizon": 60,
            "warmup": 10,
            "arrivals": {"name": "poisson", "rate": 4.0},
            "matchmaker": {"rules": {"flexmatch": str(path), "attributes": binding}},
        }
    )
    assert scenario.matchmaker.batching == "sorted"
    assert scenario.matchmaker.batch_sort == ("map", "skill")
    algorithm = export_flexmatch(scenario)["algorithm"]
    assert algorithm["batchingPreference"] == "sorted"
    assert algorithm["sortByAttributes"] == ["map", "skill"]
    for bad, message in [
        (
            {**sorted_, "sortByAttributes": ["mood"]},
            "algorithm.sortByAttributes[0]: expected a declared number or string attribute, "
            "got 'mood'",
        ),
        (
            {"strategy": "exhaustiveSearch", "sortByAttributes": ["skill"]},
            "algorithm.sortByAttributes: only with batchingPreference 'sorted'",
        ),
        (
            {"strategy": "exhaustiveSearch", "batchingPreference": "largestPopulation"},
            "algorithm.batchingPreference: expected random, sorted or fastestRegion, got "
            "'largestPopulation' (largestPopulation is the balanced strategy's)",
        ),
    ]:
        path.write_text(json.dumps(_rule_set(bad)), encoding="utf-8")
        with pytest.raises(ScenarioError) as info:
            read_flexmatch(path, binding)
        assert f"{path}: {message}" in str(info.value).splitlines()


def test_a_balanced_set_sorts_its_pool_on_the_balanced_attribute(tmp_path: Path) -> None:
    balanced = {"strategy": "balanced", "balancedAttribute": "skill"}
    path = tmp_path / "balanced.json"
    path.write_text(json.dumps(_rule_set(balanced)), encoding="utf-8")
    imported = read_flexmatch(path, {"skill": {"source": "rating", "scale": 100}})
    assert (imported.batching, imported.batch_sort) == ("largest_population", ("skill",))
    scenario = load_scenario(
        {
            "name": "balanced",
            "horizon": 60,
            "warmup": 10,
            "arrivals": {"name": "poisson", "rate": 4.0},
            "matchmaker": {
                "batch_size": 6,
                "rules": {
                    "flexmatch": str(path),
                    "attributes": {"skill": {"source": "rating", "scale": 100}},
                },
            },
        }
    )
    assert scenario.matchmaker.batching == "largest_population"
    algorithm = export_flexmatch(scenario)["algorithm"]
    assert algorithm["strategy"] == "balanced"
    assert algorithm["balancedAttribute"] == "skill"
    assert algorithm["batchingPreference"] == "largestPopulation"
    assert simulate(scenario, 0).metrics["games_per_hour"] > 0


def test_a_batch_too_small_for_a_match_is_refused() -> None:
    data = _lobby(batch_size=5)
    data["game"] = {"mode": "ffa", "ffa_size": 6, "length": 6.0}
    with pytest.raises(ScenarioError) as info:
        load_scenario(data)
    assert str(info.value).splitlines() == [
        "scenario (a dict): matchmaker.batch_size: a batch of 5 tickets cannot hold a match of "
        "6 players; give at least 6"
    ]
    data["matchmaker"]["batch_size"] = 6
    assert load_scenario(data).matchmaker.batch_size == 6
