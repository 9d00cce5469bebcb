"""FlexMatch's builder (``matchmaker.algorithm: flexmatch``): the oldest ticket anchors, its
batch-mates are taken oldest first or by the sort keys, batches by the fastest region."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lobbysim.api import load_scenario
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario.attributes import AttributeConfig
from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.flexmatch_builder import (
    SortKey,
    fastest_region_batches,
    flexmatch_matches,
    sort_keys,
)
from lobbysim.sim.rules import RuleSet, View
from lobbysim.sim.seed_greedy import RunningCheck, seed_greedy
from lobbysim.validation import ScenarioError

SKILL = RuleConfig(name="skill", kind="skill_distance", limit=3.0)
MODE = AttributeConfig(type="string", values={"solo": 0.5, "duo": 0.5})


def _view(rating: list[float], waited: list[float], latency: Any = None) -> View:
    r = np.array(rating, dtype=float)
    lat = None if latency is None else np.array(latency, dtype=float)
    return View(
        waited=np.array(waited, dtype=float),
        rating=r,
        quality=lambda i, j: np.exp(-((r[i] - r[j]) ** 2) / 4.0),
        numbers={"rating": r},
        codes={},
        masks={},
        latency=lat,
        best=None if lat is None else lat.min(axis=1),
        premade=None,
    )


def _pairs(matches: Any) -> list[list[int]]:
    return [sorted(p for t in m for p in t) for m, _ in matches]


def test_the_oldest_ticket_anchors_and_takes_the_oldest_candidate_that_keeps_the_rules() -> None:
    # player 0 waited longest; 2 waited next longest but is 2.5 away, 1 is 0.1 away
    view = _view([0.0, 0.1, 2.5, 9.0], [5.0, 0.1, 3.0, 4.0])
    tickets = [[k] for k in range(4)]
    flex = flexmatch_matches(view, RuleSet([SKILL], None), tickets, seats=2)
    greedy = seed_greedy(view, RuleSet([SKILL], None), tickets, seats=2)
    assert _pairs(flex) == [[0, 2]]  # the oldest that fits; 3 is 9 away from everyone
    assert _pairs(greedy) == [[0, 1]]  # seed_greedy: the nearest
    # a candidate that breaks a rule is passed over, whatever its age
    view = _view([0.0, 0.1, 3.5, 9.0], [5.0, 0.1, 3.0, 4.0])
    assert _pairs(flexmatch_matches(view, RuleSet([SKILL], None), tickets, seats=2)) == [[0, 1]]


def test_sort_keys_order_the_candidates_before_age() -> None:
    view = _view([5.0, 4.0, 6.5, 7.9, 3.0], [9.0, 1.0, 2.0, 3.0, 4.0])
    tickets = [[k] for k in range(5)]
    rules = RuleSet([SKILL], None)
    assert _pairs(flexmatch_matches(view, rules, tickets, seats=2)) == [[0, 4], [2, 3]]
    near = [SortKey("rating", distance=True)]  # closest to the anchor's 5.0 first: 4.0
    assert _pairs(flexmatch_matches(view, rules, tickets, seats=2, sorts=near)) == [[0, 1], [2, 3]]
    high = [SortKey("rating", descending=True)]  # the highest first: 7.9
    assert _pairs(flexmatch_matches(view, rules, tickets, seats=2, sorts=high))[0] == [0, 3]
    low = [SortKey("rating")]  # the lowest first: 3.0
    assert _pairs(flexmatch_matches(view, rules, tickets, seats=2, sorts=low))[0] == [0, 4]


def test_fastest_region_batches_by_each_tickets_lowest_latency() -> None:
    latency = [[20, 90], [30, 80], [95, 10], [85, 15], [50, 40]]
    view = _view([0.0, 0.5, 0.2, 0.3, 0.4], [5.0, 1.0, 4.0, 3.0, 2.0], latency)
    tickets = [[k] for k in range(5)]
    batches = fastest_region_batches(view, tickets)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3, 4]]
    # a party's latency to a data centre is its worst member's: [0, 2] is best at centre 1
    assert [b.tolist() for b in fastest_region_batches(view, [[0, 2], [1]])] == [[1], [0]]
    rules = RuleSet([SKILL], None)
    assert _pairs(flexmatch_matches(view, rules, tickets, seats=2)) == [[0, 2], [3, 4]]
    batched = flexmatch_matches(view, rules, tickets, seats=2, batching="fastest_region")
    assert _pairs(batched) == [[0, 1], [2, 3]]  # never across the batches
    with pytest.raises(ValueError, match="batching"):
        flexmatch_matches(view, rules, tickets, seats=2, batching="by_mood")


def _scenario(algorithm: str, batching: str = "none", world: bool = True) -> Any:
    """A short 2v2 run in two regions under a skill rule and a latency rule."""
    data = {
        "name": "builder",
        "horizon": 60,
        "warmup": 10,
        "arrivals": {"name": "poisson", "rate": 8.0},
        "game": {"mode": "team", "team_size": 2, "length": 8.0},
        "world": {
            "data_centres": ["us_east", "eu_west"],
            "regions": [
                {"name": "na", "share": 0.6, "utc_offset_hours": -5},
                {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
            ],
            "latency": {"name": "matrix", "base_ms": {"na": [35, 95], "eu": [95, 25]}},
        },
        "matchmaker": {
            "algorithm": algorithm,
            "batching": batching,
            "rules": [
                {
                    "name": "skill",
                    "kind": "skill_distance",
                    "limit": 1.0,
                    "expansions": [[0.5, 2.0]],
                },
                {"name": "ping", "kind": "latency", "limit": 120.0},
            ],
        },
    }
    if not world:
        del data["world"]
        data["matchmaker"]["rules"].pop()  # type: ignore[index]
    return load_scenario(data)


def test_a_run_under_the_builder_is_its_own_and_repeats_its_bytes() -> None:
    runs = {
        (a, b): simulate(_scenario(a, b), 3)
        for a, b in (
            ("flexmatch", "none"),
            ("seed_greedy", "none"),
            ("flexmatch", "fastest_region"),
        )
    }
    flex = runs["flexmatch", "none"]
    assert simulate(_scenario("flexmatch"), 3).metrics == flex.metrics
    for run in runs.values():
        assert run.metrics["games_per_hour"] > 20
    assert flex.metrics != runs["seed_greedy", "none"].metrics
    assert flex.metrics != runs["flexmatch", "fastest_region"].metrics


def test_batching_is_checked_against_the_algorithm_and_the_world() -> None:
    with pytest.raises(ScenarioError, match=r"set matchmaker.algorithm: flexmatch"):
        _scenario("exact", "fastest_region")
    with pytest.raises(ScenarioError, match=r"did you mean 'fastest_region'"):
        _scenario("flexmatch", "fastest_regoin")
    with pytest.raises(ScenarioError, match=r"fastest_region batches .* give a world"):
        _scenario("flexmatch", "fastest_region", world=False)


@pytest.mark.parametrize("clock", ["oldest", "newest"])
def test_the_running_check_forms_what_the_whole_match_check_forms(
    clock: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large matches keep their rules as they grow (RunningCheck); on 40 random pools of
    parties and solos, with a number, a string and a latency rule relaxing on the clock (one
    optional after a wait), both builders form exactly the matches and tally exactly the
    rejections the whole-match check does."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(20, 60))
        view = _view(
            rng.normal(0, 1.0, n).tolist(),
            rng.exponential(1.0, n).tolist(),
            rng.uniform(10, 150, (n, 3)),
        )
        view.codes["mode"] = rng.integers(0, 2, n)
        configs = [
            RuleConfig(
                name="skill",
                kind="skill_distance",
                limit=1.0,
                expansions=((0.5, 2.0),),
                clock=clock,
                party="max",
            ),
            RuleConfig(
                name="mode", kind="equal", attribute="mode", optional_after=1.5, clock=clock
            ),
            RuleConfig(
                name="ping", kind="latency", limit=60.0, expansions=((1.0, 120.0),), clock=clock
            ),
        ]
        ids = rng.permutation(n).tolist()
        tickets = [ids[k : k + 2] if k % 5 == 0 else [ids[k]] for k in range(0, n, 1)]
        seen: set[int] = set()
        tickets = [t for t in tickets if not (set(t) & seen) and not seen.update(t)]
        seats = int(rng.choice([4, 6, 10]))
        out = {}
        for fast in (True, False):
            monkeypatch.setattr(RunningCheck, "applies", staticmethod(lambda rules, f=fast: f))
            rules = RuleSet(configs, None, {"mode": MODE})
            flex = flexmatch_matches(view, rules, tickets, seats)
            greedy = seed_greedy(view, rules, tickets, seats)
            out[fast] = (flex, greedy, list(rules.rejections))
        assert out[True] == out[False], trial
        assert out[True][0] or out[True][1] or trial  # most pools form something


def test_a_rule_sets_sort_rules_are_the_builders_sort_keys() -> None:
    configs = [
        SKILL,
        RuleConfig(name="high", kind="absolute_sort", direction="descending"),
        RuleConfig(name="near", kind="distance_sort"),
    ]
    rules = RuleSet(configs, None)
    keys = sort_keys(rules)
    assert keys == [
        SortKey("rating", distance=False, descending=True),
        SortKey("rating", distance=True, descending=False),
    ]
    view = _view([5.0, 4.0, 6.5, 7.9, 3.0], [9.0, 1.0, 2.0, 3.0, 4.0])
    matches = flexmatch_matches(view, rules, [[k] for k in range(5)], seats=2, sorts=keys)
    assert _pairs(matches)[0] == [0, 3]  # the highest first
