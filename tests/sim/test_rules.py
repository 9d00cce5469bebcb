"""Each rule kind on hand-set pools, against its documented semantics (lobbysim/scenario/rules.py,
docs/model.md section 10): the limit and its expansions on each clock, party and team
aggregations, optional rules, and seed-and-greedy matching."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lobbysim.policies.teams import best_split
from lobbysim.scenario.attributes import AttributeConfig
from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.attributes import Attributes
from lobbysim.sim.rule_kinds import popcount
from lobbysim.sim.rules import RuleSet, View
from lobbysim.sim.seed_greedy import seed_greedy
from lobbysim.streams import Streams


def _view(
    rating: list[float],
    waited: list[float],
    *,
    codes: dict[str, list[int]] | None = None,
    masks: dict[str, list[int]] | None = None,
    latency: list[list[float]] | None = None,
    premade: list[bool] | None = None,
) -> View:
    r = np.array(rating, dtype=float)

    def quality(i: Any, j: Any) -> Any:
        return np.exp(-((r[i] - r[j]) ** 2) / 4.0)

    lat = None if latency is None else np.array(latency, dtype=float)
    return View(
        waited=np.array(waited, dtype=float),
        rating=r,
        quality=quality,
        numbers={"rating": r},
        codes={k: np.array(v, dtype=np.int64) for k, v in (codes or {}).items()},
        masks={k: np.array(v, dtype=np.int64) for k, v in (masks or {}).items()},
        latency=lat,
        best=None if lat is None else lat.min(axis=1),
        premade=None if premade is None else np.array(premade),
    )


def _rules(*rules: dict[str, Any], attributes: dict[str, AttributeConfig] | None = None) -> RuleSet:
    drawn = None
    if attributes:
        drawn = Attributes(attributes, lambda name: np.random.default_rng(len(name)))
    return RuleSet([RuleConfig(**r) for r in rules], drawn, attributes)


SKILL = {"name": "skill", "kind": "skill_distance", "limit": 3.0, "expansions": ((1.0, 4.0),)}


def test_skill_distance_is_the_range_of_the_tickets_values_under_the_clocks_limit() -> None:
    view = _view([0.0, 2.0, 3.5], [2.0, 0.5, 0.5])
    for clock, broken in (("oldest", -1), ("newest", 0), ("average", 0)):  # average wait 1.0: 4
        rules = _rules(SKILL | {"clock": clock})
        expected = -1 if clock == "average" else broken
        assert rules.first_broken(view, [[0], [1], [2]]) == expected, clock
    # own: 0 (waited 2, limit 4) and 2 (waited 0.5, limit 3) are 3.5 apart: the stricter holds
    own = _rules(SKILL | {"clock": "own"})
    assert own.first_broken(view, [[0], [2]]) == 0
    assert own.first_broken(view, [[0], [1]]) == -1
    # the steps each rule is at
    assert _rules(SKILL | {"clock": "oldest"}).steps(view.waited, [[0], [2]]) == [1]
    assert _rules(SKILL | {"clock": "newest"}).steps(view.waited, [[0], [2]]) == [0]


def test_a_partys_value_combines_its_members_by_the_party_aggregation() -> None:
    view = _view([0.0, 2.0, 3.5], [0.0, 0.0, 0.0])
    for party, broken in (("average", -1), ("min", 0), ("max", -1)):  # 1, 0 or 2 against 3.5
        rules = _rules(SKILL | {"party": party})
        assert rules.first_broken(view, [[0, 1], [2]]) == broken, party


def test_match_quality_is_the_mean_quality_of_every_pair() -> None:
    view = _view([0.0, 1.0, 2.0], [0.0, 0.0, 0.0])
    mean = np.mean([math.exp(-1 / 4), math.exp(-4 / 4), math.exp(-1 / 4)])
    at = _rules({"name": "q", "kind": "match_quality", "limit": float(mean)})
    above = _rules({"name": "q", "kind": "match_quality", "limit": float(mean) + 1e-9})
    assert at.first_broken(view, [[0], [1], [2]]) == -1
    assert above.first_broken(view, [[0], [1], [2]]) == 0


def test_team_balance_compares_the_teams_aggregates_once_they_are_split() -> None:
    view = _view([1.0, 3.0, 2.0, 2.5], [0.0] * 4)
    tickets = [[0], [1], [2], [3]]
    average = _rules({"name": "b", "kind": "team_balance", "limit": 0.25})
    assert average.first_broken(view, tickets, [0, 0, 1, 1]) == -1  # 2.0 against 2.25
    assert average.first_broken(view, tickets, [0, 1, 0, 1]) == 0  # 1.5 against 2.75
    assert average.first_broken(view, tickets, partial=True) == -1  # not split yet: waits
    largest = _rules({"name": "b", "kind": "team_balance", "limit": 0.4, "team": "max"})
    assert largest.first_broken(view, tickets, [0, 0, 1, 1]) == 0  # 3.0 against 2.5


def test_latency_needs_one_data_centre_within_every_players_limit() -> None:
    latency = [[30, 90], [80, 40], [50, 50]]
    view = _view([0.0, 0.0, 0.0], [0.0, 3.0, 0.0], latency=latency)
    rule = {"name": "ping", "kind": "latency", "limit": 60.0, "expansions": ((2.0, 85.0),)}
    assert _rules(rule | {"clock": "newest"}).first_broken(view, [[0], [1]]) == 0
    assert _rules(rule | {"clock": "oldest"}).first_broken(view, [[0], [1]]) == -1  # dc 0: 30, 80
    # own: player 1 (waited 3) may take 85 ms, player 0 only 60: data centre 0 serves both
    assert _rules(rule | {"clock": "own"}).first_broken(view, [[0], [1]]) == -1
    assert _rules(rule | {"clock": "own"}).first_broken(view, [[0], [2]]) == -1  # dc 0: 30, 50
    # a party's latency combines its members' by the party aggregation
    party = {"name": "ping", "kind": "latency", "limit": 60.0}
    assert _rules(party | {"party": "max"}).first_broken(view, [[0, 2], [1]]) == 0
    assert _rules(party | {"party": "average"}).first_broken(view, [[0, 1]]) == -1  # 55, 65
    assert _rules(party | {"party": "max"}).first_broken(view, [[0, 1]]) == 0
    delta = {"name": "delta", "kind": "delta_ping", "limit": 15.0}
    assert _rules(delta).first_broken(view, [[0], [2]]) == -1  # dc 0: 0 and 0 above best
    assert _rules(delta).first_broken(view, [[0], [1]]) == 0  # 40 above best at dc 0 or 60


def test_party_parity_counts_players_in_parties_per_team() -> None:
    view = _view([0.0] * 4, [0.0] * 4, premade=[True, True, False, False])
    rule = _rules({"name": "parity", "kind": "party_parity", "limit": 1.0})
    assert rule.first_broken(view, [[0, 1], [2], [3]], [0, 1, 1]) == 0  # 2 against 0
    loose = _rules({"name": "parity", "kind": "party_parity", "limit": 2.0})
    assert loose.first_broken(view, [[0, 1], [2], [3]], [0, 1, 1]) == -1


PLATFORM = {"platform": AttributeConfig(type="string", values={"pc": 0.5, "console": 0.5})}
MAPS = {"maps": AttributeConfig(type="string_list", values={"a": 0.5, "b": 0.5, "c": 0.5})}


def test_equal_distinct_overlap_and_count_on_string_attributes() -> None:
    view = _view(
        [0.0] * 4, [0.0] * 4, codes={"platform": [0, 0, 1, 0]}, masks={"maps": [3, 7, 6, 1]}
    )
    equal = _rules({"name": "same", "kind": "equal", "attribute": "platform"}, attributes=PLATFORM)
    assert equal.first_broken(view, [[0], [1], [3]]) == -1
    assert equal.first_broken(view, [[0], [2]]) == 0
    distinct = _rules(
        {"name": "d", "kind": "distinct", "attribute": "platform"}, attributes=PLATFORM
    )
    assert distinct.first_broken(view, [[0], [2]]) == -1
    assert distinct.first_broken(view, [[0], [1]]) == 0
    overlap = _rules(
        {"name": "maps", "kind": "overlap", "attribute": "maps", "limit": 2.0}, attributes=MAPS
    )
    assert overlap.first_broken(view, [[0], [1]]) == -1  # {a, b} and {a, b, c}
    assert overlap.first_broken(view, [[1], [2]]) == -1  # {b, c} in common
    assert overlap.first_broken(view, [[0], [1], [2]]) == 0  # only b in common
    count = _rules(
        {"name": "pc", "kind": "count", "attribute": "platform", "value": "console", "limit": 1.0},
        attributes=PLATFORM,
    )
    assert count.first_broken(view, [[0], [1], [2], [3]], [0, 0, 1, 1]) == 0  # team 0 has none
    assert count.first_broken(view, [[0], [1], [2], [3]], partial=True) == -1
    assert popcount(np.array([0, 1, 7, 2**62 + 5])).tolist() == [0, 1, 3, 3]


def test_an_optional_rule_holds_nothing_back_after_its_time() -> None:
    view = _view([0.0, 5.0], [3.0, 0.0])
    rule = SKILL | {"optional_after": 2.0}
    assert _rules(rule).first_broken(view, [[0], [1]]) == -1  # the oldest waited 3 minutes
    assert _rules(rule | {"clock": "newest"}).first_broken(view, [[0], [1]]) == 0
    tally = _rules(rule | {"clock": "newest"}, {"name": "q", "kind": "match_quality", "limit": 0.9})
    tally.first_broken(view, [[0], [1]])
    tally.first_broken(view, [[0], [1]], count=False)
    assert tally.rejections == [1, 0]  # the first broken rule only, counted once


def test_seed_greedy_seeds_with_the_longest_wait_and_adds_the_nearest_that_fit() -> None:
    # 1v1: the seed (player 3, waited longest) takes the nearest rating within its rules
    view = _view([0.0, 1.0, 5.0, 4.2, 0.5], [0.1, 0.2, 0.3, 2.0, 0.4])
    rules = _rules({"name": "skill", "kind": "skill_distance", "limit": 1.0})
    matches = seed_greedy(view, rules, [[k] for k in range(5)], seats=2)
    # then player 4 seeds: 0 and 1 are as near; the longer wait (1's) goes first
    assert [sorted(p for t in m for p in t) for m, _ in matches] == [[2, 3], [1, 4]]
    # an equality rule keeps platforms apart, whatever the distance
    view = _view([0.0, 0.1, 0.2, 0.3], [1.0, 0.5, 0.4, 0.3], codes={"platform": [0, 1, 1, 0]})
    rules = _rules(
        {"name": "skill", "kind": "skill_distance", "limit": 1.0},
        {"name": "same", "kind": "equal", "attribute": "platform"},
        attributes=PLATFORM,
    )
    matches = seed_greedy(view, rules, [[k] for k in range(4)], seats=2)
    assert [sorted(p for t in m for p in t) for m, _ in matches] == [[0, 3], [1, 2]]
    assert rules.rejections[1] > 0


def test_seed_greedy_team_games_split_whole_tickets_and_hold_team_rules() -> None:
    view = _view([3.0, 3.0, 1.0, 1.0, 2.0, 2.0], [5.0, 5.0, 1.0, 1.0, 1.0, 1.0])
    tickets = [[0, 1], [2], [3], [4], [5]]  # a party of two first
    rating = view.rating

    def split(match: Any) -> Any:
        ratings = [float(rating[t].mean()) for t in match]
        return best_split([len(t) for t in match], ratings, 2)

    for limit, formed in ((1.0, [[[0, 1], [4], [5]]]), (0.6, [[[2], [3], [4], [5]]])):
        rules = _rules(
            {"name": "skill", "kind": "skill_distance", "limit": 2.5},
            {"name": "balance", "kind": "team_balance", "limit": limit},
        )
        matches = seed_greedy(view, rules, tickets, seats=4, team_size=2, split=split)
        assert [m for m, _ in matches] == formed, limit
        match, teams = matches[0]
        assert teams is not None
        side = np.repeat(teams, [len(t) for t in match])
        players = np.array([p for t in match for p in t])
        gap = abs(rating[players[side == 0]].mean() - rating[players[side == 1]].mean())
        assert gap <= limit
    # with 0.6 the party's match broke the balance rule: 3.0 against 2.0
    assert rules.rejections[1] >= 1


def test_attributes_are_drawn_by_their_shares() -> None:
    config = {
        "platform": AttributeConfig(type="string", values={"pc": 0.7, "console": 0.3}),
        "maps": AttributeConfig(type="string_list", values={"a": 0.2, "b": 0.1}),
        "hours": AttributeConfig(type="number", mean=100.0, sd=10.0),
    }
    streams = Streams(1)
    attributes = Attributes(config, lambda name: streams.get(f"attributes:{name}"))
    ids = np.arange(20_000)
    first = attributes.column("maps", ids[:5000])  # drawn as asked: the same values
    at_once = Attributes(config, lambda name: Streams(1).get(f"attributes:{name}"))
    for name in config:
        assert np.array_equal(attributes.column(name, ids), at_once.column(name, ids)), name
    assert np.array_equal(first, at_once.column("maps", ids[:5000]))
    pc = attributes.column("platform", ids) == 0
    assert abs(pc.mean() - 0.7) < 4 * math.sqrt(0.21 / 20_000)
    maps = attributes.column("maps", ids)
    assert (maps > 0).all()  # nobody without a map: the likeliest then
    b = (maps & 2) > 0
    assert abs(b.mean() - 0.1) < 0.01
    hours = attributes.column("hours", ids)
    assert abs(hours.mean() - 100) < 0.5 and abs(hours.std() - 10) < 0.3
