"""FlexMatch's comparison (with a referenceValue), collection, compound, sort rules and
string_number_map attributes in and out (lobbysim/flexmatch/rule_types.py): each read against
its documented meaning, refused where lobbysim has no form with a line saying why, written back
(import -> export -> import equal), shown by ``lobbysim rules show``, and run: every game formed
under an imported set keeps its rules, checked here from the players' values, apart from the
engine."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lobbysim.commands.rules import show_lines
from lobbysim.experiments.simulation import simulate
from lobbysim.flexmatch.export import export_bindings, export_flexmatch
from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.sim.games import Games
from lobbysim.sim.group_games import GroupGames
from lobbysim.sim.rule_pass import RulePass

FLAT = "flatten(teams[*].players.attributes[{}])"
ATTRIBUTES = [
    {"name": "skill", "type": "number", "default": 1500},
    {"name": "platform", "type": "string", "default": "pc"},
    {"name": "roles", "type": "string_list", "default": ["dps"]},
    {"name": "prefs", "type": "string_number_map", "default": {"desert": 50}},
]
MAPPING = {
    "skill": {"source": "skill", "scale": 100, "offset": 1500},
    "platform": {"values": {"pc": 0.7, "console": 0.3}},
    "roles": {"values": {"medic": 0.3, "tank": 0.4, "dps": 0.5}},
    "prefs": {"values": {"desert": 40, "city": 20}, "sd": 20},
}
RULES: list[dict[str, Any]] = [
    {
        "name": "Veterans",
        "type": "comparison",
        "measurements": [FLAT.format("skill")],
        "referenceValue": 1300,
        "operation": ">=",
        "partyAggregation": "min",
    },
    {
        "name": "PcOnly",
        "type": "comparison",
        "measurements": [FLAT.format("platform")],
        "referenceValue": "pc",
        "operation": "=",
    },
    {
        "name": "Medics",
        "type": "collection",
        "operation": "contains",
        "measurements": [FLAT.format("roles")],
        "referenceValue": "medic",
        "minCount": 1,
        "maxCount": 2,
    },
    {
        "name": "Fighters",
        "type": "collection",
        "operation": "reference_intersection_count",
        "measurements": [FLAT.format("roles")],
        "referenceValue": ["tank", "dps"],
        "minCount": 1,
        "partyAggregation": "intersection",
    },
    {
        "name": "LikesDesert",
        "type": "comparison",
        "measurements": ["flatten(teams[*].players.attributes[prefs][desert])"],
        "referenceValue": 30,
        "operation": ">",
    },
    {"name": "Either", "type": "compound", "statement": "or(PcOnly, LikesDesert)"},
    {
        "name": "EqualTeamSizes",
        "type": "comparison",
        "measurements": ["count(teams[red].players)"],
        "referenceValue": "count(teams[blue].players)",
        "operation": "=",
    },
    {
        "name": "FavouriteMap",
        "type": "absoluteSort",
        "sortDirection": "descending",
        "sortAttribute": "prefs",
        "mapKey": "maxValue",
    },
    {"name": "NearSkill", "type": "distanceSort", "sortAttribute": "skill"},
]
EXPANSIONS = [
    {"target": "rules[Veterans].referenceValue", "steps": [{"waitTimeSeconds": 20, "value": 1000}]},
    {"target": "rules[Medics].maxCount", "steps": [{"waitTimeSeconds": 30, "value": 3}]},
]


def _ruleset(size: int = 2, rules: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "name": "kinds",
        "ruleLanguageVersion": "1.0",
        "playerAttributes": copy.deepcopy(ATTRIBUTES),
        "teams": [
            {"name": "red", "minPlayers": size, "maxPlayers": size},
            {"name": "blue", "minPlayers": size, "maxPlayers": size},
        ],
        "rules": copy.deepcopy(RULES if rules is None else rules),
        "expansions": copy.deepcopy(EXPANSIONS) if rules is None else [],
    }


def test_each_rule_type_reads_into_its_kind() -> None:
    rules = {r["name"]: r for r in read_flexmatch(_ruleset()).rules}
    assert rules["Veterans"] == {
        "name": "Veterans",
        "kind": "compare",
        "attribute": "skill",
        "op": ">=",
        "limit": 1300.0,
        "party": "min",
        "clock": "newest",
        "expansions": [[1 / 3, 1000.0]],  # 20 s
        "read_from": {"property": "referenceValue", "factor": 1.0},
    }
    assert rules["PcOnly"] == {
        "name": "PcOnly",
        "kind": "compare",
        "attribute": "platform",
        "op": "=",
        "value": "pc",
        "clock": "newest",
    }
    # minCount and maxCount: two rules, the maximum's expansion on the second
    assert rules["Medics"] == {
        "name": "Medics",
        "kind": "contains",
        "attribute": "roles",
        "party": "union",  # FlexMatch's default
        "value": "medic",
        "limit": 1.0,
        "clock": "newest",
        "read_from": {"property": "minCount", "factor": 1.0},
    }
    assert rules["Medics.max"]["op"] == "<=" and rules["Medics.max"]["limit"] == 2.0
    assert rules["Medics.max"]["read_from"] == {"property": "maxCount", "factor": 1.0}
    assert rules["Medics.max"]["expansions"] == [[0.5, 3.0]]
    assert rules["Fighters"]["kind"] == "reference_overlap"
    assert rules["Fighters"]["values"] == ["tank", "dps"] and "party" not in rules["Fighters"]
    assert rules["LikesDesert"]["attribute"] == "prefs" and rules["LikesDesert"]["key"] == "desert"
    assert rules["Either"]["statement"] == "or(PcOnly, LikesDesert)"
    assert rules["EqualTeamSizes"] == {
        "name": "EqualTeamSizes",
        "kind": "team_sizes",
        "limit": 0.0,
        "clock": "newest",
    }
    assert rules["FavouriteMap"]["kind"] == "absolute_sort"
    assert rules["FavouriteMap"]["direction"] == "descending"
    assert rules["FavouriteMap"]["map_key"] == "maxValue"
    assert rules["NearSkill"]["kind"] == "distance_sort"
    assert rules["NearSkill"]["direction"] == "ascending" and "map_key" not in rules["NearSkill"]


def test_a_compound_naming_a_rule_read_as_two_names_both() -> None:
    data = _ruleset(
        rules=[*RULES[:3], {"name": "C", "type": "compound", "statement": "not(Medics)"}]
    )
    (compound,) = [r for r in read_flexmatch(data).rules if r["kind"] == "compound"]
    assert compound["statement"] == "not(and(Medics, Medics.max))"


def test_the_values_common_to_every_players_list_are_a_reference() -> None:
    """The developer guide's preferred-opponents example: each player's character among the
    characters every player wants to meet."""
    rule = {
        "name": "OpponentMatch",
        "type": "collection",
        "operation": "reference_intersection_count",
        "measurements": [FLAT.format("roles")],
        "referenceValue": "set_intersection(flatten(teams[*].players.attributes[wants]))",
        "minCount": 1,
    }
    data = _ruleset(rules=[rule])
    data["playerAttributes"].append({"name": "wants", "type": "string_list"})
    imported = read_flexmatch(data)
    assert imported.rules[0]["reference"] == "wants" and "values" not in imported.rules[0]
    assert imported.unbound == {"roles": "string_list", "wants": "string_list"}
    mapping = {"roles": MAPPING["roles"], "wants": {"values": {"tank": 0.5, "dps": 0.5}}}
    scenario = _scenario(data=data, mapping=mapping)
    document = export_flexmatch(scenario)
    assert document["rules"][0]["referenceValue"] == rule["referenceValue"]
    assert (
        read_flexmatch(document, export_bindings(scenario)).rules
        == read_flexmatch(data, mapping).rules
    )


def test_a_distance_from_a_constant_is_compare_within_or_beyond() -> None:
    rule = {
        "name": "Near",
        "type": "distance",
        "measurements": [FLAT.format("skill")],
        "referenceValue": 1500,
        "maxDistance": 200,
        "minDistance": 10,
        "partyAggregation": "max",
    }
    steps = [{"waitTimeSeconds": 30, "value": 400}]
    data = _ruleset(rules=[rule])
    data["expansions"] = [
        {"target": "rules[Near].maxDistance", "steps": steps},
        {"target": "rules[Near].minDistance", "steps": [{"waitTimeSeconds": 30, "value": 0}]},
    ]
    near, far = read_flexmatch(data).rules
    assert near == {
        "name": "Near",
        "kind": "compare",
        "attribute": "skill",
        "op": "within",
        "center": 1500.0,
        "limit": 200.0,
        "party": "max",
        "clock": "newest",
        "expansions": [[0.5, 400.0]],
        "read_from": {"property": "maxDistance", "factor": 1.0},
    }
    assert far["name"] == "Near.min" and far["op"] == "beyond" and far["limit"] == 10.0
    assert far["read_from"] == {"property": "minDistance", "factor": 1.0}
    assert far["expansions"] == [[0.5, 0.0]]
    scenario = _scenario(data=data)
    document = export_flexmatch(scenario)
    assert document["rules"][0]["maxDistance"] == 200 and "minDistance" not in document["rules"][0]
    assert document["rules"][0]["referenceValue"] == 1500
    back = read_flexmatch(document, export_bindings(scenario))
    assert back.rules == read_flexmatch(data, MAPPING).rules
    # a minimum distance between team averages has no lobbysim form, and says so
    averages = rule | {
        "measurements": ["avg(teams[*].players.attributes[skill])"],
        "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
    }
    with pytest.raises(ScenarioError) as info:
        read_flexmatch(_ruleset(rules=[averages]))
    (line,) = info.value.problems
    assert line.startswith(
        "flexmatch: rules[0].minDistance: not supported by lobbysim (no lobbysim rule keeps team "
        "averages or players at least a distance apart"
    )


def test_team_sizes_within_a_distance_read_and_write_back() -> None:
    """The guide's close-team-sizes rule: the largest team's size within d of the smallest's."""
    rule = {
        "name": "CloseSizes",
        "type": "distance",
        "measurements": ["max(count(teams[*].players))"],
        "referenceValue": "min(count(teams[*].players))",
        "maxDistance": 1,
    }
    data = _ruleset(rules=[rule])
    (read,) = read_flexmatch(data).rules
    assert read == {"name": "CloseSizes", "kind": "team_sizes", "limit": 1.0, "clock": "newest"}
    scenario = _scenario(data=data)
    document = export_flexmatch(scenario)
    assert document["rules"] == [rule]
    assert read_flexmatch(document).rules == (read,)


def _scenario(
    mode: str = "team",
    algorithm: str = "exact",
    data: Any = None,
    horizon: float = 100,
    mapping: dict[str, Any] | None = None,
) -> Scenario:
    imported = read_flexmatch(data if data is not None else _ruleset(), mapping or MAPPING)
    fragment = imported.fragment()
    game = fragment["game"] | {"length": 6, "quit_rate": 0.0}
    if mode == "team":
        game["backfill"] = False
    fragment["matchmaker"]["algorithm"] = algorithm
    return Scenario.from_dict(
        {
            "horizon": horizon,
            "warmup": 10,
            "arrivals": {"name": "poisson", "rate": 8.0},
            "population": {"session_games_mean": 4, "patience_mean": 6},
            **fragment,
            "game": game,
        }
    )


def test_import_export_import_is_exact_and_export_again_the_same_json() -> None:
    scenario = _scenario()
    first = read_flexmatch(_ruleset(), MAPPING)
    document = export_flexmatch(scenario)
    mapping = export_bindings(scenario)
    assert mapping["prefs"] == {"values": {"desert": 40.0, "city": 20.0}, "sd": 20.0}
    second = read_flexmatch(copy.deepcopy(document), mapping)
    assert second.rules == first.rules
    assert second.attributes == first.attributes
    data = scenario.to_dict()
    data["matchmaker"]["rules"] = list(second.rules)
    again = export_flexmatch(Scenario.from_dict(data))
    assert json.dumps(again, indent=2) == json.dumps(document, indent=2)
    written = {r["name"]: r for r in document["rules"]}
    assert written["EqualTeamSizes"]["measurements"] == ["count(teams[red].players)"]
    assert written["Medics.max"]["maxCount"] == 2 and "minCount" not in written["Medics.max"]
    assert written["Fighters"]["partyAggregation"] == "intersection"
    assert {
        "target": "rules[Veterans].referenceValue",
        "steps": [{"waitTimeSeconds": 20, "value": 1000}],
    } in document["expansions"]


def test_rules_show_prints_each_kind_readably(tmp_path: Path) -> None:
    path = tmp_path / "kinds.json"
    path.write_text(json.dumps(_ruleset()), encoding="utf-8")
    lines = {line.split(":")[0].strip(): line for line in show_lines(path)}
    assert "Veterans: compare; attribute skill; each ticket >= 1300; party min" in lines["Veterans"]
    assert "holds only through" not in lines["Veterans"]
    assert "PcOnly: compare; attribute platform; each player = pc" in lines["PcOnly"]
    assert "holds only through compound rule Either" in lines["PcOnly"]
    assert (
        "Medics.max: contains; attribute roles; value medic; limit <= 2; party union"
        in lines["Medics.max"]
    )
    assert "reference [tank, dps]; limit >= 1; party intersection" in lines["Fighters"]
    assert "attribute prefs[desert]; each ticket > 30" in lines["LikesDesert"]
    assert "statement or(PcOnly, LikesDesert)" in lines["Either"]
    assert "always holds: lobbysim's teams have one fixed size" in lines["EqualTeamSizes"]
    assert "direction descending; map_key maxValue" in lines["FavouriteMap"]
    assert "the exact and seed_greedy searches ignore it" in lines["NearSkill"]
    assert "prefs: string_number_map, UNBOUND" in lines["prefs"]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            {
                "name": "Sizes",
                "type": "comparison",
                "operation": "=",
                "measurements": ["count(teams[red].players)"],
                "referenceValue": "count(teams[green].players)",
            },
            "rules[0].measurements: 'green' names no team of the rule set (red, blue)",
        ),
        (
            {"name": "S", "type": "absoluteSort", "sortAttribute": "prefs"},
            "rules[0].mapKey: a sort on the string_number_map 'prefs' takes minValue or maxValue",
        ),
        (
            {
                "name": "K",
                "type": "comparison",
                "operation": ">",
                "referenceValue": 3,
                "measurements": ["flatten(teams[*].players.attributes[skill][x])"],
            },
            "rules[0].measurements: 'skill' is a number attribute; this rule reads a "
            "string_number_map attribute",
        ),
        (
            {
                "name": "N",
                "type": "comparison",
                "operation": ">",
                "referenceValue": "high",
                "measurements": [FLAT.format("skill")],
            },
            "rules[0].referenceValue: expected a number, got the text 'high'",
        ),
        (
            {"name": "C", "type": "compound", "statement": "or(Later, Later)"},
            "rules[0].statement: 'Later' names no rule listed before it",
        ),
        (
            {
                "name": "C",
                "type": "collection",
                "operation": "contains",
                "referenceValue": "medic",
                "measurements": [FLAT.format("roles")],
                "minCount": 1.5,
            },
            "rules[0].minCount: expected a whole number, got 1.5",
        ),
    ],
)
def test_a_construct_lobbysim_cannot_read_is_one_line_naming_its_path(
    rule: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        read_flexmatch(_ruleset(rules=[rule]))
    (line,) = info.value.problems
    assert line == f"flexmatch: {expected}" or line.startswith(f"flexmatch: {expected}"), line


def test_the_team_sizes_idiom_needs_two_teams() -> None:
    data = _ruleset(rules=[RULES[6]])
    data["teams"] = [{"name": "red", "minPlayers": 6, "maxPlayers": 6}]
    with pytest.raises(ScenarioError) as info:
        read_flexmatch(data)
    (line,) = info.value.problems
    assert "names no team of the rule set (red)" in line


def test_a_bad_binding_or_value_is_one_line_naming_its_field() -> None:
    bad = copy.deepcopy(MAPPING)
    bad["prefs"] = {"values": {"city": 20}, "sd": -1}
    with pytest.raises(ScenarioError) as info:
        read_flexmatch(_ruleset(), bad)
    assert "matchmaker.rules.attributes.prefs.sd: expected a number >= 0, got -1" in " ".join(
        info.value.problems
    )
    data = _ruleset()
    data["rules"][1]["referenceValue"] = "mac"  # not a value the mapping draws
    with pytest.raises(ScenarioError) as info:
        _scenario(data=data)
    assert any(
        p.startswith("matchmaker.rules[1].value: expected one of 'platform''s values (pc, console)")
        for p in info.value.problems
    ), info.value.problems


def _started(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[float, list[Any]]], list[Any]]:
    started: list[tuple[float, list[Any]]] = []
    passes: list[Any] = []
    duels, group, init = Games.start_duels, GroupGames.start_group, RulePass.__init__

    def keep_pass(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        passes.append(self)

    def note_duels(self: Any, pairs: Any, *args: Any, **kwargs: Any) -> None:
        started.extend((self.env.now, [a, b]) for a, b, _ in pairs)
        duels(self, pairs, *args, **kwargs)

    def note_group(self: Any, members: Any, *args: Any, **kwargs: Any) -> None:
        started.append((self.env.now, list(members)))
        group(self, members, *args, **kwargs)

    monkeypatch.setattr(RulePass, "__init__", keep_pass)
    monkeypatch.setattr(Games, "start_duels", note_duels)
    monkeypatch.setattr(GroupGames, "start_group", note_group)
    return started, passes


@pytest.mark.parametrize(
    ("size", "algorithm"),
    [(1, "exact"), (2, "exact"), pytest.param(2, "seed_greedy", marks=pytest.mark.slow)],
)
def test_every_game_keeps_the_imported_rules(
    size: int, algorithm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the players' own values, on FlexMatch's newest clock (the match's shortest wait):
    each skill >= 1300 (1000 from 20 s), between one and two medics (three from 30 s), a tank or
    a dps each, every player on pc or every player's desert above 30."""
    started, passes = _started(monkeypatch)
    mode = "1v1" if size == 1 else "team"
    # seed_greedy tries every candidate (no pairwise prefilter of these kinds): a shorter run
    horizon = 60 if algorithm == "seed_greedy" else 100
    result = simulate(_scenario(mode, algorithm, _ruleset(size), horizon), 5)
    attributes = passes[0].rule_set.attributes
    assert len(started) > 20, len(started)
    relaxed = either = 0
    for now, members in started:
        pids = np.array([w.pid for w in members])
        newest = min(now - w.since for w in members) * 60.0  # seconds
        skill = 1500 + 100 * np.array([w.player.skill for w in members])
        assert (skill >= (1000 if newest >= 20 else 1300) - 1e-9).all()
        relaxed += bool(newest >= 20 and skill.min() < 1300)
        roles = attributes.column("roles", pids)
        medics = int(((roles & 1) > 0).sum())
        assert 1 <= medics <= (3 if newest >= 30 else 2)
        assert ((roles & 6) > 0).all()
        pc = (attributes.column("platform", pids) == 0).all()
        desert = (attributes.column("prefs[desert]", pids) > 30).all()
        assert pc or desert
        either += bool(desert and not pc)
        assert len(members) == 2 * size
    assert relaxed > 0 and either > 0  # the expansion and the compound's other branch were used
    assert result.metrics["rule_games_share@Veterans@step1"] > 0


def test_a_bad_rule_of_each_new_kind_is_one_line_naming_its_field() -> None:
    rules = [
        {"name": "a", "kind": "compare", "limit": 3},
        {"name": "b", "kind": "contains", "attribute": "roles", "value": "mage", "limit": 1},
        {"name": "c", "kind": "compound", "statement": "or(a, zz"},
        {"name": "d", "kind": "compare", "attribute": "prefs", "op": ">", "limit": 3},
        {"name": "e", "kind": "overlap", "attribute": "roles", "limit": 1, "party": "max"},
        {"name": "f", "kind": "distance_sort", "direction": "sideways"},
        {"name": "g", "kind": "reference_overlap", "attribute": "roles", "limit": 1},
        {"name": "h", "kind": "compare", "op": "=", "limit": 1, "expansions": [[1, 2]]},
        {"name": "i", "kind": "compare", "op": "within", "limit": 1},
        {"name": "j", "kind": "compound", "statement": "and(f, a)"},
    ]
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(
            {
                "horizon": 60,
                "warmup": 10,
                "game": {"mode": "team", "team_size": 2},
                "attributes": {
                    "roles": {"type": "string_list", "values": {"medic": 0.5, "tank": 0.5}},
                    "prefs": {"type": "string_number_map", "values": {"desert": 40}, "sd": 5},
                },
                "matchmaker": {"rules": rules},
            }
        )
    assert info.value.problems == [
        "matchmaker.rules[0].op: a compare rule needs one of =, !=, <, <=, >, >=, within, beyond",
        "matchmaker.rules[1].value: expected one of 'roles''s values (medic, tank), got 'mage'",
        "matchmaker.rules[2].statement: 'or(a, zz': or( is not closed",
        "matchmaker.rules[3].key: 'prefs' is a string_number_map; expected one of its keys "
        "(desert), got None",
        "matchmaker.rules[4].party: 'max' is for numbers; a list kind pools a party's lists by "
        "union or intersection",
        "matchmaker.rules[5].direction: expected one of ascending, descending, got 'sideways'",
        "matchmaker.rules[6].values: a reference_overlap rule needs a reference list (values) or "
        "a reference attribute, one of the two",
        "matchmaker.rules[7].expansions: a compare rule with = has no direction to relax (only <, "
        "<=, >, >= take expansions)",
        "matchmaker.rules[8].center: a compare rule with op within or beyond needs a number "
        "center (and no value), and only it has one, got None",
        "matchmaker.rules[9].statement: 'f' is a sort rule, which has no truth value",
    ]


MORE_RULES: list[dict[str, Any]] = [
    {
        "name": "SharedRole",
        "type": "collection",
        "operation": "intersection",
        "measurements": [FLAT.format("roles")],
        "minCount": 1,
    },
    {
        "name": "WantedRole",
        "type": "collection",
        "operation": "reference_intersection_count",
        "measurements": [FLAT.format("roles")],
        "referenceValue": "set_intersection(flatten(teams[*].players.attributes[wants]))",
        "minCount": 1,
    },
    {
        "name": "NearTarget",
        "type": "distance",
        "measurements": [FLAT.format("skill")],
        "referenceValue": 1500,
        "maxDistance": 150,
    },
]


@pytest.mark.parametrize("size", [1, 2])
def test_every_game_keeps_overlap_a_reference_attribute_and_a_distance_from_a_constant(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the players' own values: a role in common, each player's roles among the roles
    every player wants, each skill within 150 of 1500 (300 from 20 s, on the newest clock)."""
    started, passes = _started(monkeypatch)
    data = _ruleset(size, MORE_RULES)
    data["playerAttributes"].append({"name": "wants", "type": "string_list"})
    data["expansions"] = [
        {
            "target": "rules[NearTarget].maxDistance",
            "steps": [{"waitTimeSeconds": 20, "value": 300}],
        }
    ]
    mapping = {
        "skill": MAPPING["skill"],
        "roles": MAPPING["roles"],
        "wants": {"values": {"dps": 0.8, "tank": 0.8, "medic": 0.8}},
    }
    simulate(_scenario("1v1" if size == 1 else "team", "exact", data, 100, mapping), 6)
    attributes = passes[0].rule_set.attributes
    assert len(started) > 20, len(started)
    relaxed = 0
    for now, members in started:
        pids = np.array([w.pid for w in members])
        newest = min(now - w.since for w in members) * 60.0
        roles = attributes.column("roles", pids)  # bits: medic, tank, dps
        assert int(np.bitwise_and.reduce(roles)) > 0
        wants = int(np.bitwise_and.reduce(attributes.column("wants", pids)))  # dps, tank, medic
        common = (wants >> 2 & 1) | (wants >> 1 & 1) << 1 | (wants & 1) << 2
        assert all(int(r) & common for r in roles)
        skill = 1500 + 100 * np.array([w.player.skill for w in members])
        limit = 300 if newest >= 20 else 150
        assert (np.abs(skill - 1500) <= limit + 1e-9).all()
        relaxed += bool((np.abs(skill - 1500) > 150).any())
    assert relaxed > 0  # the expansion was used


# --- '!=' between players on a number: distinct -------------------------------------------------

DECKS = {
    "name": "OtherDeck",
    "type": "comparison",
    "operation": "!=",
    "measurements": [FLAT.format("deck")],
}


def _duel(rule: dict[str, Any], expansions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A 1v1 rule set (a team of one, twice) of one rule, on a number ``deck`` and ATTRIBUTES."""
    return {
        "name": "decks",
        "ruleLanguageVersion": "1.0",
        "playerAttributes": [*copy.deepcopy(ATTRIBUTES), {"name": "deck", "type": "number"}],
        "teams": [{"name": "duellist", "minPlayers": 1, "maxPlayers": 1, "quantity": 2}],
        "rules": [copy.deepcopy(rule)],
        "expansions": expansions or [],
    }


def test_not_equal_between_players_on_a_number_reads_as_distinct() -> None:
    """Every player's value different (FlexMatch's '!=' without a referenceValue): distinct on
    the number, or on a string_number_map's key; partyAggregation only its default, avg, as on
    a string (each member's own value counts); nothing expands it."""
    read = {"name": "OtherDeck", "kind": "distinct", "attribute": "deck", "clock": "newest"}
    assert read_flexmatch(_duel(DECKS)).rules == (read,)
    assert read_flexmatch(_duel(DECKS | {"partyAggregation": "avg"})).rules == (read,)
    keyed = DECKS | {"measurements": ["flatten(teams[*].players.attributes[prefs][desert])"]}
    assert read_flexmatch(_duel(keyed)).rules == (read | {"attribute": "prefs", "key": "desert"},)
    with pytest.raises(ScenarioError) as info:
        read_flexmatch(_duel(DECKS | {"partyAggregation": "max"}))
    assert info.value.problems == [
        "flexmatch: rules[0].partyAggregation: lobbysim's distinct compares every player's own "
        "value (a party's members' too), aggregating none; expected avg (the default) or none, "
        "got 'max'"
    ]
    steps = [{"waitTimeSeconds": 10, "value": 1}]
    for prop in ("referenceValue", "maxDistance"):
        target = [{"target": f"rules[OtherDeck].{prop}", "steps": steps}]
        with pytest.raises(ScenarioError) as info:
            read_flexmatch(_duel(DECKS, target))
        (line,) = info.value.problems
        assert "lobbysim expands none of its properties" in line
        assert "read as a distinct rule" in line


@pytest.mark.parametrize("key", [None, "desert"])
def test_distinct_on_a_number_round_trips_exactly(key: str | None) -> None:
    rule = DECKS
    if key is not None:
        rule = DECKS | {"measurements": [f"flatten(teams[*].players.attributes[prefs][{key}])"]}
    mapping = {"deck": {"source": "drawn", "mean": 5, "sd": 2}, "prefs": MAPPING["prefs"]}
    first = read_flexmatch(_duel(rule), mapping)
    scenario = _scenario("1v1", "exact", _duel(rule), 30, mapping)
    document = export_flexmatch(scenario)
    (written,) = document["rules"]
    assert written == {"name": "OtherDeck", "type": "comparison", **rule}
    second = read_flexmatch(copy.deepcopy(document), export_bindings(scenario))
    assert second.rules == first.rules
    assert export_flexmatch(_scenario("1v1", "exact", document, 30, mapping)) == document


def _number_rule_data(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "horizon": 30,
        "warmup": 5,
        "game": {"mode": "1v1"},
        "attributes": {
            "deck": {"type": "number", "mean": 5, "sd": 2},
            "roles": {"type": "string_list", "values": {"tank": 0.5, "dps": 0.5}},
        },
        "matchmaker": {"rules": [rule]},
    }


def test_equal_and_distinct_take_a_number_but_no_list_and_no_party() -> None:
    for kind in ("equal", "distinct"):
        for attribute in ("deck", "rating"):  # a number attribute, or the rating itself
            rule = {"name": "r", "kind": kind, "attribute": attribute}
            assert Scenario.from_dict(_number_rule_data(rule)).matchmaker.rules
        cases = {
            "roles": "matchmaker.rules[0].attribute: a rule of kind "
            f"{kind} reads a string or number attribute (or a string_number_map's key); 'roles' "
            "is a string_list",
            None: f"matchmaker.rules[0].attribute: a rule of kind {kind} needs a string or number "
            "attribute (or a string_number_map's key)",
        }
        for attribute, line in cases.items():
            rule = {"name": "r", "kind": kind}
            if attribute is not None:
                rule["attribute"] = attribute
            with pytest.raises(ScenarioError) as info:
                Scenario.from_dict(_number_rule_data(rule))
            assert line in info.value.problems, info.value.problems
        rule = {"name": "r", "kind": kind, "attribute": "deck", "party": "max"}
        with pytest.raises(ScenarioError) as info:
            Scenario.from_dict(_number_rule_data(rule))
        assert (
            f"matchmaker.rules[0].party: a rule of kind {kind} compares every player's own value "
            "(a party's members' with the whole match) and combines none; remove party, got "
            "'max'"
        ) in info.value.problems


def test_equal_on_a_number_is_not_exported() -> None:
    """FlexMatch's '=' between players on a number reads as skill_distance of limit 0, so an
    equal rule on a number has no form of its own: the export says so."""
    scenario = Scenario.from_dict(
        _number_rule_data({"name": "SameDeck", "kind": "equal", "attribute": "deck"})
    )
    with pytest.raises(ScenarioError) as info:
        export_flexmatch(scenario)
    (line,) = info.value.problems
    assert line.startswith("matchmaker.rules[0].kind: an equal rule on a number has no FlexMatch")


def _values_seen(monkeypatch: pytest.MonkeyPatch, column: str) -> dict[int, float]:
    """Record each player's value of ``column`` as the last view of the rules gave it (the
    value a pass checked the player's game against), by player id."""
    from lobbysim.sim.rules import RuleSet

    seen: dict[int, float] = {}
    view = RuleSet.view

    def noting(self: Any, pids: Any, *args: Any, **kwargs: Any) -> Any:
        out = view(self, pids, *args, **kwargs)
        seen.update(zip(np.asarray(pids).tolist(), out.numbers[column].tolist(), strict=True))
        return out

    monkeypatch.setattr(RuleSet, "view", noting)
    return seen


@pytest.mark.parametrize("algorithm", ["exact", "flexmatch"])
def test_every_duel_under_distinct_on_a_number_has_two_values(
    algorithm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drawn number: every game's two values differ (as they almost surely do)."""
    started, _ = _started(monkeypatch)
    seen = _values_seen(monkeypatch, "deck")
    mapping = {"deck": {"source": "drawn", "mean": 5, "sd": 2}}
    result = simulate(_scenario("1v1", algorithm, _duel(DECKS), 20, mapping), 3)
    assert result.games is not None and len(result.games) >= 1
    assert len(started) >= 1
    for _, members in started:
        a, b = (seen[w.pid] for w in members)
        assert a != b


@pytest.mark.parametrize("algorithm", ["exact", "flexmatch"])
def test_distinct_on_a_number_of_few_values_bites(
    algorithm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The number bound to the rating: every newcomer has the prior mean, so two newcomers'
    values are equal and distinct turns their pair down until the rule turns optional (half a
    minute on FlexMatch's newest clock, the pair's shorter wait); then they play, and the
    ratings part. Every game formed before that has two values; without the rule (optional at
    once) such games pair equal values, so the check can fail."""
    mapping = {"deck": {"source": "rating", "scale": 1, "offset": 0}}

    def run(optional_after: float) -> tuple[int, float, int]:
        started, _ = _started(monkeypatch)
        seen = _values_seen(monkeypatch, "deck")
        scenario = _scenario("1v1", algorithm, _duel(DECKS), 30, mapping)
        data = scenario.to_dict()
        data["matchmaker"]["rules"][0]["optional_after"] = optional_after
        result = simulate(Scenario.from_dict(data), 4)
        assert result.games is not None
        held = same = 0  # games the rule held (the shorter wait under half a minute)
        for now, members in started:
            newest = min(now - w.since for w in members)
            a, b = (seen[w.pid] for w in members)
            if newest < 0.5 - 1e-9:
                held += 1
                same += a == b
        return held, result.metrics["rule_rejected_share@OtherDeck"], same

    held, rejected, same = run(0.5)
    assert held >= 1 and same == 0
    assert rejected == 1.0  # pairs turned down, all by this rule (the only one)
    monkeypatch.undo()
    held, rejected, same = run(0.0)  # the rule holds nothing back: equal values pair at once
    assert held >= 1 and same >= 1
