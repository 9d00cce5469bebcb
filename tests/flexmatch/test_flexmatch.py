"""Amazon GameLift FlexMatch rule sets in and out (lobbysim.flexmatch, ``lobbysim rules``).

Each supported FlexMatch rule type is read against its documented meaning (kind, attribute,
limit, party aggregation, expansions from seconds to minutes, the clock from
expansionAgeSelection); the round trips import -> export -> import and export -> import ->
export are exact on every fixture; every unsupported construct is one line naming its JSON path,
and through the command line exit status 2 with nothing written.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from lobbysim.cli.main import main
from lobbysim.commands.rules import export_text, show_lines
from lobbysim.flexmatch.export import export_bindings, export_flexmatch
from lobbysim.flexmatch.json_text import MAX_BYTES
from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.scenario import Scenario, ScenarioError, load_scenario
from lobbysim.scenario.parse import build
from lobbysim.scenario.rules import RuleConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flexmatch"
NAMES = ["two_teams_skill", "latency_platform", "large_battle_royale", "forty_player_ffa"]


def ruleset(
    rules: list[dict[str, Any]],
    *,
    teams: list[dict[str, Any]] | None = None,
    attributes: list[dict[str, Any]] | None = None,
    expansions: list[dict[str, Any]] | None = None,
    algorithm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A small FlexMatch rule set: two teams of 4 and attributes skill, platform, maps."""
    data: dict[str, Any] = {
        "name": "test",
        "ruleLanguageVersion": "1.0",
        "playerAttributes": attributes
        if attributes is not None
        else [
            {"name": "skill", "type": "number", "default": 10},
            {"name": "platform", "type": "string", "default": "pc"},
            {"name": "maps", "type": "string_list", "default": ["a"]},
        ],
        "teams": teams
        if teams is not None
        else [
            {"name": "red", "minPlayers": 4, "maxPlayers": 4},
            {"name": "blue", "minPlayers": 4, "maxPlayers": 4},
        ],
        "rules": rules,
    }
    if expansions is not None:
        data["expansions"] = expansions
    if algorithm is not None:
        data["algorithm"] = algorithm
    return data


def only_rule(data: dict[str, Any]) -> dict[str, Any]:
    (rule,) = read_flexmatch(data).rules
    return rule


def problems(data: Any, mapping: dict[str, Any] | None = None) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        read_flexmatch(data, mapping)
    return info.value.problems


def one_problem(data: Any, mapping: dict[str, Any] | None = None) -> str:
    found = problems(data, mapping)
    assert len(found) == 1, found
    assert "\n" not in found[0]
    return found[0]


# --- each rule type against its documented meaning -------------------------------------------


@pytest.mark.parametrize(
    ("aggregation", "party"),
    [(None, "average"), ("avg", "average"), ("min", "min"), ("max", "max")],
)
def test_batch_distance_on_a_number_is_skill_distance_between_tickets(
    aggregation: str | None, party: str
) -> None:
    rule: dict[str, Any] = {
        "name": "Skill",
        "type": "batchDistance",
        "batchAttribute": "skill",
        "maxDistance": 500,
    }
    if aggregation is not None:
        rule["partyAggregation"] = aggregation
    got = only_rule(ruleset([rule]))
    assert got == {
        "name": "Skill",
        "kind": "skill_distance",
        "attribute": "skill",
        "limit": 500.0,
        "party": party,
        "clock": "newest",
        "read_from": {"property": "maxDistance", "factor": 1.0},
    }


def test_a_numeric_text_or_a_boolean_is_not_a_number() -> None:
    rule = {"name": "S", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": "500"}
    assert one_problem(ruleset([rule])) == (
        "flexmatch: rules[0].maxDistance: expected a number, got the text '500' (write a number "
        "without quotes)"
    )
    rule["maxDistance"] = True  # a bool is an int in Python, not a number in a rule set
    assert (
        one_problem(ruleset([rule]))
        == "flexmatch: rules[0].maxDistance: expected a number, got true"
    )


#: Every number of a rule set, by its JSON path in :func:`numbered`.
NUMBER_FIELDS = [
    "playerAttributes[0].default",
    "teams[0].minPlayers",
    "teams[0].maxPlayers",
    "teams[0].quantity",
    "rules[0].maxDistance",
    "rules[1].maxDistance",
    "rules[2].minCount",
    "rules[3].maxLatency",
    "expansions[0].steps[0].waitTimeSeconds",
    "expansions[0].steps[0].value",
]


def numbered() -> dict[str, Any]:
    """A rule set with a number at every path of :data:`NUMBER_FIELDS`."""
    rules = [
        dict(SKILL, maxDistance=50),
        {
            "name": "Spread",
            "type": "distance",
            "measurements": ["max(flatten(teams[*].players.attributes[skill]))"],
            "referenceValue": "min(flatten(teams[*].players.attributes[skill]))",
            "maxDistance": 100,
        },
        {
            "name": "Maps",
            "type": "collection",
            "operation": "intersection",
            "measurements": ["flatten(teams[*].players.attributes[maps])"],
            "partyAggregation": "intersection",
            "minCount": 1,
        },
        {"name": "Ping", "type": "latency", "maxLatency": 100},
    ]
    teams = [{"name": "all", "minPlayers": 8, "maxPlayers": 8, "quantity": 1}]
    expansions = [
        {"target": "rules[S].maxDistance", "steps": [{"waitTimeSeconds": 10, "value": 60}]}
    ]
    return ruleset(rules, teams=teams, expansions=expansions)


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.replace("]", "").replace("[", ".").split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value


@pytest.mark.parametrize("path", NUMBER_FIELDS)
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", "expected a number, got the text '7' (write a number without quotes)"),
        (True, "expected a number, got true"),
        (10**400, "the number of about 401 digits is too long to read as a number"),
    ],
)
def test_every_number_of_a_rule_set_refuses_text_booleans_and_huge_numbers(
    path: str, value: Any, expected: str
) -> None:
    assert read_flexmatch(numbered()).rules  # the rule set reads as it is
    data = numbered()
    _set(data, path, value)
    assert one_problem(data) == f"flexmatch: {path}: {expected}"


@pytest.mark.parametrize("path", ["rules[0].maxDistance", "teams[0].maxPlayers"])
def test_a_number_too_long_for_python_names_its_field(path: str, tmp_path: Path) -> None:
    data = numbered()
    _set(data, path, 123456789)
    text = json.dumps(data).replace("123456789", "9" * 5000)
    file = tmp_path / "long.json"
    file.write_text(text, encoding="utf-8")
    line = one_problem(file)
    assert line == (
        f"{file}: {path}: the number 999999999999... (5,000 digits) is too long to read as a number"
    )
    assert "set_int_max_str_digits" not in line
    file.write_text(json.dumps(data).replace("123456789", "1e400"), encoding="utf-8")
    assert one_problem(file) == (
        f"{file}: {path}: the number 1e400 is too large to read (the largest is about 1.8e308)"
    )


def test_a_long_number_in_a_field_read_as_text_is_named_shortly(tmp_path: Path) -> None:
    file = tmp_path / "long_name.json"
    data = ruleset([dict(SKILL, name=123456789)])
    file.write_text(json.dumps(data).replace("123456789", "8" * 5000), encoding="utf-8")
    assert one_problem(file) == (
        f"{file}: rules[0].name: lobbysim names a rule with a letter or _, then letters, digits, "
        "_, . and - (at most 60), got 888888888888... (5,000 digits)"
    )


def test_the_cli_names_a_numeric_text_and_a_long_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (FIXTURES / "two_teams_skill.json").read_text(encoding="utf-8")
    assert '"maxDistance": 200,' in source
    for replacement, expected in [
        ('"maxDistance": "200",', "expected a number, got the text '200'"),
        (f'"maxDistance": {"7" * 5000},', "(5,000 digits) is too long to read as a number"),
    ]:
        file = tmp_path / "rules.json"
        file.write_text(source.replace('"maxDistance": 200,', replacement), encoding="utf-8")
        assert main(["rules", "show", str(file)]) == 2
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
        assert lines[0].startswith(f"lobbysim: error: {file}: rules[0].maxDistance: ")
        assert expected in lines[0]


def test_batch_distance_on_a_string_is_equal() -> None:
    rule = {"name": "SameMode", "type": "batchDistance", "batchAttribute": "platform"}
    assert only_rule(ruleset([rule])) == {
        "name": "SameMode",
        "kind": "equal",
        "attribute": "platform",
        "clock": "newest",
    }


def test_distance_between_team_averages_is_team_balance_at_twice_the_distance() -> None:
    rule = {
        "name": "Fair",
        "type": "distance",
        "measurements": ["avg(teams[*].players.attributes[skill])"],
        "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
        "maxDistance": 10,
    }
    steps = [{"waitTimeSeconds": 5, "value": 50}, {"waitTimeSeconds": 15, "value": 100}]
    data = ruleset([rule], expansions=[{"target": "rules[Fair].maxDistance", "steps": steps}])
    got = only_rule(data)
    assert got["kind"] == "team_balance" and got["team"] == "average"
    assert got["limit"] == 20.0  # each team within 10 of the mean <=> the two within 20
    assert got["expansions"] == [[5 / 60, 100.0], [0.25, 200.0]]


def test_distance_between_the_largest_and_smallest_is_skill_distance() -> None:
    rule = {
        "name": "Spread",
        "type": "distance",
        "measurements": "max(flatten(teams[*].players.attributes[skill]))",
        "referenceValue": "min( flatten( teams[*].players.attributes[skill] ) )",
        "maxDistance": 3,
        "partyAggregation": "max",
    }
    got = only_rule(ruleset([rule]))
    assert (got["kind"], got["limit"], got["party"]) == ("skill_distance", 3.0, "max")


@pytest.mark.parametrize(("operation", "kind"), [("=", "equal"), ("!=", "distinct")])
def test_comparison_between_players_is_equal_or_distinct(operation: str, kind: str) -> None:
    rule = {
        "name": "Platform",
        "type": "comparison",
        "measurements": ["flatten(teams[*].players.attributes[platform])"],
        "operation": operation,
    }
    assert only_rule(ruleset([rule])) == {
        "name": "Platform",
        "kind": kind,
        "attribute": "platform",
        "clock": "newest",
    }


def test_collection_intersection_is_overlap_with_min_count() -> None:
    rule = {
        "name": "Maps",
        "type": "collection",
        "operation": "intersection",
        "measurements": ["flatten(teams[*].players.attributes[maps])"],
        "minCount": 2,
        "partyAggregation": "intersection",
    }
    steps = [{"waitTimeSeconds": 90, "value": 1}]
    data = ruleset([rule], expansions=[{"target": "rules[Maps].minCount", "steps": steps}])
    got = only_rule(data)
    assert (got["kind"], got["attribute"], got["limit"]) == ("overlap", "maps", 2.0)
    assert got["expansions"] == [[1.5, 1.0]]


def test_latency_is_a_limit_in_ms_relaxing_by_expansions() -> None:
    rule = {"name": "Ping", "type": "latency", "maxLatency": 50, "partyAggregation": "max"}
    steps = [{"waitTimeSeconds": 10, "value": 100}, {"waitTimeSeconds": 30, "value": 150}]
    data = ruleset([rule], expansions=[{"target": "rules[Ping].maxLatency", "steps": steps}])
    got = only_rule(data)
    assert (got["kind"], got["limit"], got["party"]) == ("latency", 50.0, "max")
    assert got["expansions"] == [[10 / 60, 100.0], [0.5, 150.0]]
    assert "attribute" not in got


@pytest.mark.parametrize(
    ("age", "clock"), [(None, "newest"), ("newest", "newest"), ("oldest", "oldest")]
)
def test_expansion_age_selection_is_every_rules_clock(age: str | None, clock: str) -> None:
    rules = [
        {"name": "A", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 1},
        {"name": "B", "type": "batchDistance", "batchAttribute": "platform"},
    ]
    algorithm = {} if age is None else {"expansionAgeSelection": age}
    imported = read_flexmatch(ruleset(rules, algorithm=algorithm))
    assert imported.clock == clock
    assert [r["clock"] for r in imported.rules] == [clock, clock]
    assert imported.algorithm == "flexmatch"  # FlexMatch's builder
    assert imported.batching == "none"


@pytest.mark.parametrize(
    ("teams", "game"),
    [
        ([{"name": "a", "minPlayers": 1, "maxPlayers": 1}] * 2, {"mode": "1v1"}),
        ([{"name": "a", "minPlayers": 5, "maxPlayers": 5}] * 2, {"mode": "team", "team_size": 5}),
        (
            [{"name": "a", "minPlayers": 3, "maxPlayers": 3, "quantity": 2}],
            {"mode": "team", "team_size": 3},
        ),
        ([{"name": "all", "minPlayers": 8, "maxPlayers": 8}], {"mode": "ffa", "ffa_size": 8}),
        (
            [{"name": "solo", "minPlayers": 1, "maxPlayers": 1, "quantity": 6}],
            {"mode": "ffa", "ffa_size": 6},
        ),
    ],
)
def test_teams_give_the_game_mode(teams: list[dict[str, Any]], game: dict[str, Any]) -> None:
    assert read_flexmatch(ruleset([], teams=teams)).game == game


def test_bindings_become_the_scenarios_attributes() -> None:
    rules = [
        {"name": "S", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 5},
        {"name": "P", "type": "batchDistance", "batchAttribute": "platform"},
    ]
    mapping = {
        "skill": {"source": "rating", "scale": 100, "offset": 1500},
        "platform": {"values": {"pc": 0.6, "console": 0.4}},
    }
    imported = read_flexmatch(ruleset(rules), mapping)
    assert imported.attributes == {
        "skill": {"source": "rating", "scale": 100, "offset": 1500, "type": "number"},
        "platform": {"values": {"pc": 0.6, "console": 0.4}, "type": "string"},
    }
    assert imported.unbound == {}
    alone = read_flexmatch(ruleset(rules))
    assert alone.unbound == {"skill": "number", "platform": "string"}


# --- the fixtures: scenarios, round trips -----------------------------------------------------


def test_a_flexmatch_scenario_loads_into_the_hand_written_rule_set() -> None:
    from_flexmatch = load_scenario(FIXTURES / "two_teams_skill.yaml")
    by_hand = load_scenario(FIXTURES / "two_teams_skill_rules.yaml")
    assert from_flexmatch == by_hand  # equal rules, whether or not shown in a file's units
    read_from = [r.pop("read_from") for r in from_flexmatch.to_dict()["matchmaker"]["rules"]]
    assert read_from == [
        {"property": "maxDistance", "factor": 1.0},
        {"property": "maxDistance", "factor": 2.0},
    ]
    mine = from_flexmatch.to_dict()
    for rule in mine["matchmaker"]["rules"]:
        del rule["read_from"]
    assert mine == by_hand.to_dict()
    assert from_flexmatch.game.mode == "team" and from_flexmatch.game.team_size == 5


def test_the_rule_file_is_found_from_the_scenarios_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scenario = load_scenario(FIXTURES / "latency_platform.yaml")
    assert [r.kind for r in scenario.matchmaker.rules or ()] == [
        "latency",
        "equal",
        "distinct",
        "skill_distance",
    ]
    assert all(r.clock == "oldest" for r in scenario.matchmaker.rules or ())


@pytest.mark.parametrize("name", NAMES)
def test_import_export_import_is_exact(name: str, tmp_path: Path) -> None:
    scenario = load_scenario(FIXTURES / f"{name}.yaml")
    mapping = export_bindings(scenario)
    first = read_flexmatch(FIXTURES / f"{name}.json", mapping)
    document = export_flexmatch(scenario)
    second = read_flexmatch(document, mapping)
    assert second.rules == first.rules
    assert second.attributes == first.attributes
    assert second.game == first.game
    assert second.clock == first.clock
    # and through a scenario file: the exported rule set reads back into an equal scenario
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(document), encoding="utf-8")
    data = scenario.to_dict()
    data.pop("attributes", None)
    data["matchmaker"]["rules"] = {"flexmatch": str(exported), "attributes": mapping}
    assert Scenario.from_dict(data) == scenario


@pytest.mark.parametrize("name", NAMES)
def test_export_import_export_gives_the_same_json(name: str) -> None:
    scenario = load_scenario(FIXTURES / f"{name}.yaml")
    document = export_flexmatch(scenario)
    imported = read_flexmatch(copy.deepcopy(document), export_bindings(scenario))
    data = scenario.to_dict()
    data.pop("attributes", None)
    data["matchmaker"]["rules"] = list(imported.rules)
    data["attributes"] = imported.attributes
    again = export_flexmatch(Scenario.from_dict(data))
    assert json.dumps(again, indent=2) == json.dumps(document, indent=2)


def test_the_large_match_exports_as_a_balanced_free_for_all() -> None:
    document = export_flexmatch(load_scenario(FIXTURES / "large_battle_royale.yaml"))
    assert document["algorithm"] == {
        "strategy": "balanced",
        "balancedAttribute": "skill",
        "batchingPreference": "largestPopulation",
        "expansionAgeSelection": "newest",
    }
    assert document["teams"] == [{"name": "players", "minPlayers": 60, "maxPlayers": 60}]
    assert {r["type"] for r in document["rules"]} == {"batchDistance", "latency"}


def test_waits_go_back_to_whole_seconds() -> None:
    document = export_flexmatch(load_scenario(FIXTURES / "two_teams_skill.yaml"))
    waits = [[s["waitTimeSeconds"] for s in e["steps"]] for e in document["expansions"]]
    assert waits == [[15, 45], [10, 30]]
    fair = document["rules"][1]
    assert fair["maxDistance"] == 25 and fair["type"] == "distance"


def test_the_bundled_copy_ships_with_the_package() -> None:
    bundled = Path(str(files("lobbysim").joinpath("scenarios/flexmatch/two_teams_skill.json")))
    assert bundled.read_bytes() == (FIXTURES / "two_teams_skill.json").read_bytes()


# --- unsupported constructs: one line naming the JSON path -------------------------------------

SKILL = {"name": "S", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 5}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda d: d["rules"].append({"name": "X", "type": "xyz"}),
            "rules[1].type: 'xyz' is not a FlexMatch rule type",
        ),
        (
            lambda d: d["rules"].append({"name": "C", "type": "compound", "statement": "or(S, S)"}),
            "rules[1].statement: 'S' is a batchDistance rule, which FlexMatch does not allow",
        ),
        (
            lambda d: d["rules"].append({"name": "C", "type": "compound", "statement": "and(S)"}),
            "rules[1].statement: 'and(S)': and(...) takes two or more arguments, got 1",
        ),
        (
            lambda d: d["rules"].append(
                {"name": "D", "type": "distanceSort", "sortAttribute": "platform"}
            ),
            "rules[1].sortAttribute: 'platform' is a string attribute; this rule reads a number",
        ),
        (
            lambda d: d["rules"].append(
                {"name": "A", "type": "absoluteSort", "sortAttribute": "skill", "mapKey": "x"}
            ),
            "rules[1].mapKey: only for a string_number_map attribute ('skill' is a number)",
        ),
        (
            lambda d: d["rules"].append(
                {"name": "A", "type": "absoluteSort", "sortAttribute": "skill", "sortDirection": 1}
            ),
            "rules[1].sortDirection: expected ascending or descending, got 1",
        ),
        (
            lambda d: d["teams"][0].update(minPlayers=5),
            "teams[0].minPlayers: 5 is more than maxPlayers 4",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {
                        "target": "teams[red].maxPlayers",
                        "steps": [{"waitTimeSeconds": 5, "value": 3}],
                    }
                ]
            ),
            "expansions[0].target: 'teams[red].maxPlayers': lobbysim expands a team's minPlayers "
            "only",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {
                        "target": "teams[red].minPlayers",
                        "steps": [{"waitTimeSeconds": 5, "value": 4}],
                    }
                ]
            ),
            "expansions[0].steps[0]: the waits increase from step to step (above 0) and the "
            "minimum falls (below 4), got 5 s: 4",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {
                        "target": "rules[Nope].maxDistance",
                        "steps": [{"waitTimeSeconds": 5, "value": 9}],
                    }
                ]
            ),
            "expansions[0].target: 'rules[Nope].maxDistance' names no rule",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {"target": "rules[S].minCount", "steps": [{"waitTimeSeconds": 5, "value": 9}]}
                ]
            ),
            "expansions[0].target: 'rules[S].minCount': lobbysim expands only its maxDistance",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {
                        "target": "teams[green].minPlayers",
                        "steps": [{"waitTimeSeconds": 5, "value": 3}],
                    }
                ]
            ),
            "expansions[0].target: 'teams[green].minPlayers' names no team of the rule set",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {
                        "target": "rules[S].maxDistance",
                        "steps": [{"waitTimeSeconds": 5, "value": 1}],
                    }
                ]
            ),
            "expansions[0].steps[0].value: 1 tightens rule 'S'",
        ),
        (
            lambda d: d.update(
                expansions=[
                    {
                        "target": "rules[S].maxDistance",
                        "steps": [{"waitTimeSeconds": 0, "value": 9}],
                    }
                ]
            ),
            "expansions[0].steps[0].waitTimeSeconds: the waits increase",
        ),
        (
            lambda d: d.update(algorithm={"strategy": "balanced", "balancedAttribute": "maps"}),
            "algorithm.balancedAttribute: the balanced strategy needs a declared number",
        ),
        (
            lambda d: d.update(algorithm={"strategy": "fastest"}),
            "algorithm.strategy: expected exhaustiveSearch or balanced, got 'fastest'",
        ),
        (
            lambda d: d.update(algorithm={"batchingPreference": "sorted"}),
            "algorithm.sortByAttributes: batchingPreference 'sorted' needs a non-empty list of "
            "declared attributes, got null",
        ),
        (
            lambda d: d.update(algorithm={"backfillPriority": "high"}),
            "algorithm.backfillPriority: 'high' is not supported by lobbysim",
        ),
        (
            lambda d: d.update(algorithm={"expansionAgeSelection": "average"}),
            "algorithm.expansionAgeSelection: expected newest or oldest",
        ),
        (
            lambda d: d["playerAttributes"].append({"name": "m", "type": "float"}),
            "playerAttributes[3].type: expected one of number, string, string_list",
        ),
        (lambda d: d.update(ruleLanguageVersion="2.0"), "ruleLanguageVersion: lobbysim reads"),
        (lambda d: d.update(extra=1), "extra: not a property of a FlexMatch rule set"),
        (
            lambda d: d["rules"][0].update(batchAttribute="speed"),
            "rules[0].batchAttribute: 'speed' is not a declared playerAttribute",
        ),
        (
            lambda d: d["rules"][0].update(batchAttribute="maps"),
            "rules[0].batchAttribute: 'maps' is a string_list attribute",
        ),
        (
            lambda d: d["rules"][0].update(partyAggregation="median"),
            "rules[0].partyAggregation: expected avg, min or max",
        ),
        (
            lambda d: d["rules"][0].update(name="has space"),
            "rules[0].name: lobbysim names a rule",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Min",
                    "type": "comparison",
                    "measurements": ["flatten(teams[*].players.attributes[skill])"],
                    "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
                    "operation": ">=",
                }
            ),
            "rules[1].referenceValue: 'avg(flatten(teams[*].players.attributes[skill]))' is "
            "computed from the match; lobbysim's compare rule holds each ticket's value against "
            "a constant",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Min",
                    "type": "comparison",
                    "measurements": ["avg(flatten(teams[*].players.attributes[skill]))"],
                    "referenceValue": 10,
                    "operation": ">=",
                }
            ),
            "rules[1].measurements: 'avg(flatten(teams[*].players.attributes[skill]))' against a "
            "constant bounds a figure of the whole match, which no lobbysim rule does",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Red",
                    "type": "comparison",
                    "measurements": ["teams[red].players.attributes[skill]"],
                    "referenceValue": 10,
                    "operation": ">=",
                }
            ),
            "rules[1].measurements: 'teams[red].players.attributes[skill]' is not a form lobbysim "
            "reads: flatten(teams[*].players.attributes[X]) (it names the team 'red'",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Pc",
                    "type": "comparison",
                    "measurements": ["flatten(teams[*].players.attributes[platform])"],
                    "referenceValue": "pc",
                    "operation": ">",
                }
            ),
            "rules[1].operation: a string attribute compares with '=' or '!=', got '>'",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Near",
                    "type": "distance",
                    "measurements": ["avg(flatten(teams[*].players.attributes[skill]))"],
                    "referenceValue": 30,
                    "maxDistance": 5,
                }
            ),
            "rules[1].measurements: 'avg(flatten(teams[*].players.attributes[skill]))' from a "
            "constant bounds a figure of the whole match, which no lobbysim rule does",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Near",
                    "type": "distance",
                    "measurements": ["avg(teams[*].players.attributes[skill])"],
                    "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
                    "minDistance": 1,
                    "maxDistance": 5,
                }
            ),
            "rules[1].minDistance: not supported by lobbysim",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Maps",
                    "type": "collection",
                    "operation": "intersection",
                    "measurements": ["flatten(teams[*].players.attributes[maps])"],
                    "minCount": 1,
                    "partyAggregation": "avg",
                }
            ),
            "rules[1].partyAggregation: a collection pools a party's lists by union (the default) "
            "or intersection, got 'avg'",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Maps",
                    "type": "collection",
                    "operation": "reference_intersection_count",
                    "measurements": ["flatten(teams[*].players.attributes[maps])"],
                    "referenceValue": "flatten(teams[*].players[playerId])",
                    "minCount": 1,
                }
            ),
            "rules[1].referenceValue: 'flatten(teams[*].players[playerId])' lists the players' "
            "ids; lobbysim's players have no ids a rule set names",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Maps",
                    "type": "collection",
                    "operation": "intersection",
                    "measurements": ["flatten(teams[*].players.attributes[maps])"],
                }
            ),
            "rules[1].minCount: a collection rule needs a minCount or a maxCount",
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Maps",
                    "type": "collection",
                    "operation": "contains",
                    "measurements": ["flatten(teams[*].players.attributes[maps])"],
                    "referenceValue": ["a"],
                    "minCount": 1,
                }
            ),
            'rules[1].referenceValue: contains looks for one constant value, got ["a"]',
        ),
        (
            lambda d: d["rules"].append(
                {
                    "name": "Ping",
                    "type": "latency",
                    "maxLatency": 100,
                    "maxDistance": 20,
                    "distanceReference": "min",
                }
            ),
            "rules[1].maxDistance: not supported by lobbysim",
        ),
    ],
)
def test_each_unsupported_construct_is_one_line_naming_its_path(change: Any, expected: str) -> None:
    data = ruleset([copy.deepcopy(SKILL)])
    change(data)
    found = problems(data)
    assert any(expected in p for p in found), found
    assert all(p.startswith("flexmatch: ") and "\n" not in p for p in found)


def test_a_large_match_allows_only_batch_distance_and_latency() -> None:
    rules = [
        {
            "name": "P",
            "type": "comparison",
            "measurements": ["flatten(teams[*].players.attributes[platform])"],
            "operation": "=",
        }
    ]
    teams = [{"name": "all", "minPlayers": 50, "maxPlayers": 50}]
    algorithm = {"strategy": "balanced", "balancedAttribute": "skill"}
    found = one_problem(ruleset(rules, teams=teams, algorithm=algorithm))
    assert "rules[0].type: a FlexMatch large match" in found
    small = one_problem(ruleset([], teams=teams))
    assert "algorithm.strategy: a FlexMatch match of more than 40 players (50)" in small


def test_a_missing_binding_names_the_attribute(tmp_path: Path) -> None:
    found = one_problem(ruleset([SKILL]), {})
    assert found.startswith("flexmatch: matchmaker.rules.attributes.skill: the rules read")
    assert "playerAttributes[0] 'skill'" in found
    wrong = one_problem(ruleset([SKILL]), {"skill": {"values": {"a": 1.0}}})
    assert "matchmaker.rules.attributes.skill.values: a number attribute has no values" in wrong
    stray = one_problem(ruleset([SKILL]), {"skill": {}, "speed": {}})
    assert stray.startswith("flexmatch: matchmaker.rules.attributes.speed: not a playerAttribute")


def test_a_bad_file_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"ruleLanguageVersion": "1.0",\n  "teams": [}', encoding="utf-8")
    assert one_problem(bad).startswith(f"{bad}: not JSON: ")
    assert "at line 2, column" in one_problem(bad)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"name": "caf\xe9"}')
    assert one_problem(latin) == (
        f"{latin}: not UTF-8 text: the byte 0xe9 at line 1 (byte 14); save the file as UTF-8"
    )
    big = tmp_path / "big.json"
    big.write_text(" " * (MAX_BYTES + 1), encoding="utf-8")
    assert "longer than 1,000,000 bytes" in one_problem(big)
    twice = tmp_path / "twice.json"
    twice.write_text('{"name": "a", "name": "b"}', encoding="utf-8")
    assert "the key 'name' is given twice" in one_problem(twice)
    nan = tmp_path / "nan.json"
    nan.write_text('{"x": NaN}', encoding="utf-8")
    assert "NaN is not a JSON number" in one_problem(nan)
    array = tmp_path / "array.json"
    array.write_text("[]", encoding="utf-8")
    assert one_problem(array) == f"{array}: expected a FlexMatch rule set (a JSON object)"
    assert "cannot read the file" in one_problem(tmp_path / "missing.json")


def test_the_scenarios_game_must_agree_with_the_teams(tmp_path: Path) -> None:
    data = load_scenario(FIXTURES / "two_teams_skill.yaml").to_dict()
    data["matchmaker"]["rules"] = {
        "flexmatch": str(FIXTURES / "two_teams_skill.json"),
        "attributes": {"skill": {"source": "rating"}},
    }
    data.pop("attributes")
    data["game"]["team_size"] = 4
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(data)
    (line,) = info.value.problems
    assert line.startswith("game.team_size: 4 disagrees with the FlexMatch rule set ")
    assert line.endswith("'s teams (mode team, team_size 5)")
    data["game"]["team_size"] = 5
    data["attributes"] = {"skill": {"type": "number"}}
    with pytest.raises(ScenarioError, match=r"attributes.skill: also bound by matchmaker"):
        Scenario.from_dict(data)


# --- exports FlexMatch cannot say ----------------------------------------------------------------


def _scenario_with(rule: dict[str, Any], **game: Any) -> Scenario:
    data = load_scenario(FIXTURES / "two_teams_skill_rules.yaml").to_dict()
    data["matchmaker"]["rules"].append(rule)
    data["game"].update(game)
    return Scenario.from_dict(data)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            {"name": "Q", "kind": "match_quality", "limit": 0.5, "clock": "newest"},
            "matchmaker.rules[2].kind: a match_quality rule has no FlexMatch form",
        ),
        (
            {"name": "P", "kind": "party_parity", "limit": 1, "clock": "newest"},
            "matchmaker.rules[2].kind: a party_parity rule has no FlexMatch form",
        ),
        (
            {"name": "S", "kind": "skill_distance", "limit": 1, "clock": "own"},
            "matchmaker.rules[2].clock: FlexMatch's expansions run on the newest or the oldest",
        ),
        (
            {"name": "S", "kind": "skill_distance", "limit": 1, "clock": "oldest"},
            "matchmaker.rules[2].clock: FlexMatch has one clock for every rule",
        ),
        (
            {
                "name": "S",
                "kind": "skill_distance",
                "limit": 1,
                "clock": "newest",
                "optional_after": 2,
            },
            "matchmaker.rules[2].optional_after: FlexMatch's rules never",
        ),
        (
            {"name": "S", "kind": "skill_distance", "limit": 1, "clock": "newest", "weight": 2},
            "matchmaker.rules[2].weight: FlexMatch has no rule weights",
        ),
        (
            {"name": "T", "kind": "team_balance", "limit": 1, "team": "sum", "clock": "newest"},
            "matchmaker.rules[2].team: FlexMatch's distance rule compares team averages",
        ),
        (
            {"name": "S", "kind": "skill_distance", "limit": ".inf", "clock": "newest"},
            "matchmaker.rules[2].limit: FlexMatch has no infinite limits",
        ),
    ],
)
def test_an_export_refuses_what_flexmatch_cannot_say(rule: dict[str, Any], expected: str) -> None:
    if rule.get("limit") == ".inf":
        rule = {**rule, "limit": float("inf")}
    with pytest.raises(ScenarioError) as info:
        export_flexmatch(_scenario_with(rule))
    assert [p for p in info.value.problems if p.startswith(expected)], info.value.problems


def test_an_export_refuses_a_team_of_one_and_a_scenario_without_rules() -> None:
    with pytest.raises(ScenarioError, match=r"matchmaker\.rules: the scenario has no rule set"):
        export_flexmatch(load_scenario("quickstart"))
    data = load_scenario(FIXTURES / "two_teams_skill_rules.yaml").to_dict()
    data["game"]["team_size"] = 1
    with pytest.raises(ScenarioError, match=r"^game.team_size: two teams of one player are a 1v1"):
        export_flexmatch(Scenario.from_dict(data))


def test_the_built_in_rating_exports_as_an_attribute_named_rating() -> None:
    scenario = _scenario_with(
        {"name": "R", "kind": "skill_distance", "limit": 0.5, "clock": "newest"}
    )
    document = export_flexmatch(scenario)
    assert {"name": "rating", "type": "number", "default": 0} in document["playerAttributes"]
    assert export_bindings(scenario)["rating"] == {"source": "rating"}
    back = read_flexmatch(document, export_bindings(scenario))
    assert build(RuleConfig, back.rules[2], "r").attribute == "rating"
    assert "rating" not in back.attributes
    bad = one_problem(document, {**export_bindings(scenario), "rating": {"source": "skill"}})
    assert "matchmaker.rules.attributes.rating: 'rating' is lobbysim's own attribute" in bad


# --- the command line ----------------------------------------------------------------------------


def test_rules_show_a_flexmatch_file_marks_unbound_attributes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rules", "show", str(FIXTURES / "two_teams_skill.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FlexMatch rule set 'five_a_side_fair_teams' (")
    assert out[1:4] == ["game: team (5 vs 5)", "matchmaker.algorithm: flexmatch", "rules:"]
    assert out[4] == (
        "  SimilarSkill: skill_distance; attribute skill; limit <= 200; party average; "
        "expansions [0.25 min: 300, 0.75 min: 500]; clock newest; optional_after none; "
        "in the file: maxDistance 200, expansions [15 s: 300, 45 s: 500]"
    )
    # lobbysim's team balance is twice FlexMatch's maxDistance; the file's own numbers follow
    assert out[5] == (
        "  FairTeams: team_balance; attribute skill; limit <= 50; team average; "
        "expansions [0.166667 min: 100, 0.5 min: 200]; clock newest; optional_after none; "
        "in the file: maxDistance 25, expansions [10 s: 50, 30 s: 100]"
    )
    assert out[6:] == [
        "attributes:",
        "  skill: number, UNBOUND (bind it in the scenario's matchmaker.rules.attributes.skill)",
    ]


def test_rules_show_a_scenario_gives_the_bindings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "show", str(FIXTURES / "latency_platform.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        "  LowLatency: latency; limit <= 60 ms; party average; expansions [0.333333 min: "
        "100, 1 min: 150]; clock oldest; optional_after none; in the file: maxLatency 60, "
        "expansions [20 s: 100, 60 s: 150]" in out
    )
    assert "  skill: number, 25 + 4 * true skill" in out
    assert "  platform: string, drawn: pc 0.5, playstation 0.3, xbox 0.2" in out
    assert show_lines("quickstart")[-1].startswith("no rule set: the matchmaker's threshold")


def test_rules_export_writes_the_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = FIXTURES / "forty_player_ffa.yaml"
    assert main(["rules", "export", str(scenario), "--flexmatch"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed) == export_flexmatch(load_scenario(scenario))
    assert printed == export_text(scenario)
    out = tmp_path / "rules.json"
    assert main(["rules", "export", str(scenario), "--flexmatch", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == printed
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rules.json"]


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    assert lines[0].startswith("lobbysim: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda d: d["rules"].append({"name": "X", "type": "xyz"}),
            "rules[2].type: 'xyz' is not a FlexMatch rule type",
        ),
        (
            lambda d: d["rules"].append({"name": "C", "type": "compound", "statement": "x"}),
            "rules[2].statement: 'x' names no rule listed before it",
        ),
        (lambda d: d["teams"][0].update(minPlayers=6), "teams[0].minPlayers: 6 is more than"),
        (
            lambda d: d["expansions"][0].update(target="rules[Gone].maxDistance"),
            "expansions[0].target: 'rules[Gone].maxDistance' names no rule",
        ),
    ],
)
def test_the_cli_gives_one_line_and_exit_2_writing_nothing(
    change: Any, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((FIXTURES / "two_teams_skill.json").read_text(encoding="utf-8"))
    change(data)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(data), encoding="utf-8")
    assert main(["rules", "show", str(rules)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"lobbysim: error: {rules}: {expected}")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(
        (FIXTURES / "two_teams_skill.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "two_teams_skill.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["rules", "export", str(scenario), "--flexmatch", "--out", str(out)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(
        f"lobbysim: error: {scenario}: {tmp_path}/two_teams_skill.json: {expected}"
    )
    assert not out.exists()
    assert main(["validate", str(scenario)]) == 2
    capsys.readouterr()


def test_the_cli_names_a_bad_file_and_a_missing_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{}")
    assert main(["rules", "show", str(bad)]) == 2
    assert _one_error_line(capsys).startswith(f"lobbysim: error: {bad}: not UTF-8 text")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(
        (FIXTURES / "two_teams_skill.yaml")
        .read_text(encoding="utf-8")
        .replace("      skill: {source: rating, scale: 100, offset: 1500}\n", ""),
        encoding="utf-8",
    )
    (tmp_path / "two_teams_skill.json").write_bytes(
        (FIXTURES / "two_teams_skill.json").read_bytes()
    )
    out = tmp_path / "out.json"
    assert main(["rules", "export", str(scenario), "--flexmatch", "--out", str(out)]) == 2
    assert "matchmaker.rules.attributes.skill: the rules read playerAttributes[0] 'skill'" in (
        _one_error_line(capsys)
    )
    assert not out.exists()


def test_the_cli_refuses_an_export_flexmatch_cannot_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = load_scenario(FIXTURES / "two_teams_skill_rules.yaml").to_dict()
    data["matchmaker"]["rules"][0]["clock"] = "own"
    scenario = tmp_path / "own.yaml"
    scenario.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    out = tmp_path / "out.json"
    assert main(["rules", "export", str(scenario), "--flexmatch", "--out", str(out)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"lobbysim: error: {scenario}: matchmaker.rules[0].clock: ")
    assert not out.exists()


def test_rules_show_marks_an_attribute_no_rule_reads(tmp_path: Path) -> None:
    data = ruleset([SKILL], teams=[{"name": "a", "minPlayers": 1, "maxPlayers": 1, "quantity": 2}])
    file = tmp_path / "rules.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    lines = show_lines(file)
    assert lines[1] == "game: 1v1"
    assert lines[-3:] == [
        "  skill: number, UNBOUND (bind it in the scenario's matchmaker.rules.attributes.skill)",
        "  platform: string, read by no rule (left out unless bound)",
        "  maps: string_list, read by no rule (left out unless bound)",
    ]
    imported = read_flexmatch(data, {"skill": {"source": "skill"}})
    assert list(imported.attributes) == ["skill"]  # an unbound attribute no rule reads: left out


def test_export_into_a_missing_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lobbysim.cli.main import main

    out = tmp_path / "missing" / "rules.json"
    assert main(["rules", "export", "flexmatch_5v5", "--flexmatch", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist (make it first)" in err
    assert "Traceback" not in err and not out.parent.exists()


ONE_V_ONE = [
    {"name": "red", "minPlayers": 1, "maxPlayers": 1},
    {"name": "blue", "minPlayers": 1, "maxPlayers": 1},
]
TEAM_AVERAGES = {
    "name": "Fair",
    "type": "distance",
    "measurements": ["avg(teams[*].players.attributes[skill])"],
    "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
    "maxDistance": 50,
}


def test_team_averages_in_1v1_bound_the_pairs_gap_by_twice_the_distance() -> None:
    """Two teams of one: each player's value within d of the pair's mean is |a - b| <= 2d, on
    the rule's limit and on every expansion step (it was refused as needing teams of several)."""
    data = ruleset(
        [TEAM_AVERAGES],
        teams=ONE_V_ONE,
        expansions=[
            {
                "target": "rules[Fair].maxDistance",
                "steps": [{"waitTimeSeconds": 30, "value": 80}],
            }
        ],
    )
    imported = read_flexmatch(data)
    assert imported.game == {"mode": "1v1"}
    (rule,) = imported.rules
    assert rule["kind"] == "skill_distance" and rule["attribute"] == "skill"
    assert rule["limit"] == 100.0 and rule["expansions"] == [[0.5, 160.0]]
    # FlexMatch's own reading of the rule, by its definition, on pairs around the limit
    rng = random.Random(5)
    pairs = [(rng.uniform(1000, 2000), rng.uniform(1000, 2000)) for _ in range(2000)]
    for a, b in [*pairs, (1500, 1600), (1500, 1600.5)]:
        mean = (a + b) / 2
        flexmatch_keeps = max(abs(a - mean), abs(b - mean)) <= 50
        assert flexmatch_keeps == (abs(a - b) <= rule["limit"])


def test_team_averages_in_a_free_for_all_are_still_one_line_naming_the_teams() -> None:
    """With one team the rule always holds: it reads (as team_balance, noted, so that it
    writes back); with teams of one player it bounds each player from the mean: refused."""
    teams = [{"name": "all", "minPlayers": 8, "maxPlayers": 8}]
    one = read_flexmatch(ruleset([TEAM_AVERAGES], teams=teams))
    assert [r["kind"] for r in one.rules] == ["team_balance"]
    assert one.notes == (
        "rules[0]: with one team, the team's average is the match's: the rule always holds "
        "(kept, as team_balance, so that the rule set writes back whole)",
    )
    singles = [{"name": "p", "minPlayers": 1, "maxPlayers": 1, "quantity": 6}]
    (line,) = problems(ruleset([TEAM_AVERAGES], teams=singles))
    assert line.endswith(
        "make a ffa game: with teams of one player it holds each player within maxDistance of "
        "the match's average, which no lobbysim rule bounds"
    )


@pytest.mark.parametrize(
    ("measurements", "reference"),
    [
        (["count(teams[*].players)"], 4),
        (["avg(teams[*].players.attributes[skill])"], "count( teams[blue].players )"),
        (["count(teams[red].players)"], "count(teams[red].players)"),
    ],
)
def test_a_comparison_of_team_sizes_other_than_the_idiom_is_refused_for_what_it_is(
    measurements: list[str], reference: object
) -> None:
    """Only count(teams[a].players) = count(teams[b].players) reads; others say so (they were
    refused as 'bounds each player's value by a constant')."""
    rule = {
        "name": "EqualTeamSizes",
        "type": "comparison",
        "measurements": measurements,
        "referenceValue": reference,
        "operation": "=",
    }
    (line,) = problems(ruleset([rule]))
    assert line.startswith(
        "flexmatch: rules[0].measurements: a comparison of team sizes reads only as "
        "count(teams[a].players) = count(teams[b].players), two teams' sizes equal; got "
    )


def test_equal_on_a_number_attribute_is_a_skill_distance_of_limit_zero() -> None:
    """Every ticket's value the same (aggregated over a party) is max - min <= 0; no expansion
    relaxes it; '!=' on a number is distinct, whose every player's own value is compared, so
    a party aggregation other than avg is refused saying why."""
    rule = {
        "name": "SameLevel",
        "type": "comparison",
        "measurements": ["flatten(teams[*].players.attributes[skill])"],
        "operation": "=",
        "partyAggregation": "max",
    }
    assert only_rule(ruleset([rule])) == {
        "name": "SameLevel",
        "kind": "skill_distance",
        "attribute": "skill",
        "limit": 0.0,
        "party": "max",
        "clock": "newest",
    }
    expanded = ruleset(
        [rule],
        expansions=[
            {
                "target": "rules[SameLevel].maxDistance",
                "steps": [{"waitTimeSeconds": 30, "value": 5}],
            }
        ],
    )
    (line,) = problems(expanded)
    assert "lobbysim expands none of its properties" in line
    (line,) = problems(ruleset([{**rule, "operation": "!="}]))
    assert line == (
        "flexmatch: rules[0].partyAggregation: lobbysim's distinct compares every player's own "
        "value (a party's members' too), aggregating none; expected avg (the default) or none, "
        "got 'max'"
    )
    distinct = {k: v for k, v in rule.items() if k != "partyAggregation"}
    assert only_rule(ruleset([{**distinct, "operation": "!="}]))["kind"] == "distinct"


def test_fastest_region_batching_reads_into_the_builders_batching_and_writes_back(
    tmp_path: Path,
) -> None:
    rules = [{"name": "S", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 2}]
    data = ruleset(rules, algorithm={"batchingPreference": "fastestRegion"})
    imported = read_flexmatch(data)
    assert (imported.algorithm, imported.batching) == ("flexmatch", "fastest_region")
    assert imported.fragment()["matchmaker"]["batching"] == "fastest_region"
    path = tmp_path / "fastest.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    world = {
        "data_centres": ["us_east", "eu_west"],
        "regions": [{"name": "na", "share": 1.0, "utc_offset_hours": -5}],
        "latency": {"name": "matrix", "base_ms": {"na": [35, 95]}},
    }
    scenario_data = {
        "name": "fastest",
        "world": world,
        "matchmaker": {
            "rules": {"flexmatch": str(path), "attributes": {"skill": {"source": "rating"}}}
        },
    }
    scenario = Scenario.from_dict(scenario_data)
    assert (scenario.matchmaker.algorithm, scenario.matchmaker.batching) == (
        "flexmatch",
        "fastest_region",
    )
    assert export_flexmatch(scenario)["algorithm"]["batchingPreference"] == "fastestRegion"
    # a scenario that chooses another search leaves the builder's batching out
    exact = Scenario.from_dict(
        {**scenario_data, "matchmaker": {**scenario_data["matchmaker"], "algorithm": "exact"}}
    )
    assert (exact.matchmaker.algorithm, exact.matchmaker.batching) == ("exact", "none")
    # without a world there is no region to batch by: one line says so
    with pytest.raises(ScenarioError, match=r"fastest_region batches .* give a world"):
        Scenario.from_dict({k: v for k, v in scenario_data.items() if k != "world"})


def test_teams_of_ranges_uneven_and_many_read_into_game_teams_and_write_back() -> None:
    """Teams with minPlayers below maxPlayers, uneven teams, more than two (quantity) and the
    expansions of a team's minimum read into game.teams; fixed shapes keep team_size/ffa_size;
    'balanced' on a match of at most 40 is a note, not a refusal."""
    ranged = read_flexmatch(
        ruleset(
            [],
            teams=[{"name": "crew", "minPlayers": 3, "maxPlayers": 5, "quantity": 3}],
            expansions=[
                {
                    "target": "teams[crew].minPlayers",
                    "steps": [{"waitTimeSeconds": 12, "value": 2}],
                }
            ],
            algorithm={"strategy": "balanced", "balancedAttribute": "skill"},
        )
    )
    assert ranged.game == {
        "mode": "team",
        "teams": [
            {
                "name": "crew",
                "min_players": 3,
                "max_players": 5,
                "quantity": 3,
                "expansions": [[0.2, 2]],
            }
        ],
    }
    assert ranged.notes and ranged.notes[0].startswith("algorithm.strategy: FlexMatch documents")
    uneven = read_flexmatch(
        ruleset(
            [],
            teams=[
                {"name": "raiders", "minPlayers": 5, "maxPlayers": 5},
                {"name": "dragon", "minPlayers": 1, "maxPlayers": 1},
            ],
        )
    )
    assert uneven.game == {
        "mode": "team",
        "teams": [{"name": "raiders", "max_players": 5}, {"name": "dragon", "max_players": 1}],
    }
    one = read_flexmatch(ruleset([], teams=[{"name": "all", "minPlayers": 1, "maxPlayers": 20}]))
    assert one.game == {
        "mode": "ffa",
        "teams": [{"name": "all", "min_players": 1, "max_players": 20}],
    }
    fixed = read_flexmatch(
        ruleset([], teams=[{"name": "duo", "minPlayers": 4, "maxPlayers": 4, "quantity": 2}])
    )
    assert fixed.game == {"mode": "team", "team_size": 4}
    # a fixed shape whose minimum falls is written as teams
    falling = read_flexmatch(
        ruleset(
            [],
            expansions=[
                {"target": "teams[red].minPlayers", "steps": [{"waitTimeSeconds": 30, "value": 3}]}
            ],
        )
    )
    assert falling.game["teams"][0] == {
        "name": "red",
        "min_players": 4,
        "max_players": 4,
        "expansions": [[0.5, 3]],
    }
    for imported in (ranged, uneven, one, falling):
        scenario = Scenario.from_dict({"name": "t", **imported.fragment()})
        back = read_flexmatch(export_flexmatch(scenario), export_bindings(scenario))
        assert back.game == imported.game


def test_each_players_distance_from_the_average_reads_as_mean_distance() -> None:
    """flatten(X) against avg(flatten(X)), or, with one team T, teams[T]...[X] against
    avg(teams[T]...[X]): each ticket's value within maxDistance of the players' mean. A named
    team among two is still refused (a rule on one team); the export writes the flatten form,
    which reads back the same."""
    flat = {
        "name": "Near",
        "type": "distance",
        "measurements": ["flatten(teams[*].players.attributes[skill])"],
        "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
        "maxDistance": 3,
    }
    expected = {
        "name": "Near",
        "kind": "mean_distance",
        "attribute": "skill",
        "limit": 3,
        "party": "average",
        "clock": "newest",
        "read_from": {"property": "maxDistance", "factor": 1.0},
    }
    assert only_rule(ruleset([flat])) == expected
    one = [{"name": "crew", "minPlayers": 2, "maxPlayers": 5}]
    named = {
        **flat,
        "measurements": ["teams[crew].players.attributes[skill]"],
        "referenceValue": "avg(teams[crew].players.attributes[skill])",
    }
    imported = read_flexmatch(ruleset([named], teams=one))
    assert imported.rules == (expected,)
    two = [
        {"name": "crew", "minPlayers": 2, "maxPlayers": 2},
        {"name": "b", "minPlayers": 2, "maxPlayers": 2},
    ]
    (line,) = problems(ruleset([named], teams=two))
    assert "is not a form lobbysim reads" in line
    mapping = {"skill": {"source": "rating", "scale": 10, "offset": 50}}
    scenario = Scenario.from_dict(
        {"name": "t", **read_flexmatch(ruleset([named], teams=one), mapping).fragment()}
    )
    back = read_flexmatch(export_flexmatch(scenario), export_bindings(scenario))
    assert back.rules == read_flexmatch(ruleset([named], teams=one), mapping).rules


def test_mean_distance_in_1v1_keeps_every_pair_within_twice_the_limit() -> None:
    """The exact 1v1 search bars the pairs whose values are more than twice the limit apart
    (each within the limit of their mean), read back from the records' rule columns."""
    from lobbysim.experiments.simulation import simulate

    rules = [
        {"name": "near", "kind": "mean_distance", "attribute": "craft", "limit": 5.0},
    ]
    data = {
        "horizon": 120,
        "warmup": 0,
        "attributes": {"craft": {"type": "number", "source": "skill", "scale": 10, "offset": 50}},
        "matchmaker": {"rules": rules},
        "arrivals": {"name": "poisson", "rate": 4.0},
    }
    result = simulate(Scenario.from_dict(data), 2)
    p = result.participants
    assert len(result.games) >= 50
    gaps = p.groupby("game_id").attr_craft.agg(lambda v: v.max() - v.min())
    assert (gaps <= 10.0 + 1e-9).all()
    loose = {**data, "matchmaker": {"rules": [{**rules[0], "limit": 1000.0}]}}
    free = simulate(Scenario.from_dict(loose), 2).participants
    assert (free.groupby("game_id").attr_craft.agg(lambda v: v.max() - v.min()) > 10.0).any()


# --- the file's own units: shown and overridden ---------------------------------------------------


BUNDLED_5V5 = Path(str(files("lobbysim") / "scenarios" / "flexmatch_5v5.yaml"))


def test_an_imported_rule_is_overridden_in_the_files_units() -> None:
    """``--set``/``--grid`` of a rule's FlexMatch property set its limit in the file's units:
    a team balance's maxDistance 30 is lobbysim's limit 60; the line shows the file's numbers."""
    from lobbysim.reporting.run_sections import rule_text
    from lobbysim.scenario.loading import load_run_scenario

    plain = load_run_scenario(BUNDLED_5V5)
    by_name = {r.name: r for r in plain.matchmaker.rules or ()}
    assert by_name["FairTeams"].limit == 50
    assert by_name["FairTeams"].in_file() == "maxDistance 25, expansions [60 s: 50, 180 s: 100]"
    assert by_name["LowPing"].in_file() == "maxLatency 80, expansions [60 s: 120, 120 s: 200]"
    assert rule_text(by_name["FairTeams"]).endswith(
        "; in its FlexMatch file: maxDistance 25, expansions [60 s: 50, 180 s: 100]"
    )
    changed = load_run_scenario(
        BUNDLED_5V5,
        ["matchmaker.rules.FairTeams.maxDistance=30"],
        values={"matchmaker.rules.LowPing.maxLatency": 95},
    )
    rules = {r.name: r for r in changed.matchmaker.rules or ()}
    assert rules["FairTeams"].limit == 60
    assert rules["FairTeams"].in_file() == "maxDistance 30, expansions [60 s: 50, 180 s: 100]"
    assert rules["LowPing"].limit == 95
    assert rules["SimilarSkill"] == by_name["SimilarSkill"]
    # lobbysim's own units stay open: limit is the rule's own field
    same = load_run_scenario(BUNDLED_5V5, ["matchmaker.rules.FairTeams.limit=60"])
    assert same == changed.replace(
        matchmaker=dataclasses.replace(
            changed.matchmaker,
            rules=tuple(r if r.name != "LowPing" else by_name["LowPing"] for r in rules.values()),
        )
    )


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "matchmaker.rules.FairTeams.maxDistance=-3",
            "--set matchmaker.rules.FairTeams.maxDistance: expected a number >= 0 (FlexMatch's "
            "maxDistance), got -3",
        ),
        (
            "matchmaker.rules.FairTeams.maxDistance=wide",
            "--set matchmaker.rules.FairTeams.maxDistance: expected a number >= 0 (FlexMatch's "
            "maxDistance), got 'wide'",
        ),
        (
            "matchmaker.rules.LowPing.maxDistance=30",
            "--set matchmaker.rules.LowPing.maxDistance: rule LowPing's limit comes from its "
            "FlexMatch file's maxLatency: set matchmaker.rules.LowPing.maxLatency",
        ),
    ],
)
def test_an_override_in_the_files_units_names_the_property(override: str, message: str) -> None:
    from lobbysim.scenario.loading import load_run_scenario

    with pytest.raises(ScenarioError) as info:
        load_run_scenario(BUNDLED_5V5, [override])
    assert info.value.problems == [message]


def test_a_rule_of_lobbysims_own_language_has_no_file_units(tmp_path: Path) -> None:
    from lobbysim.scenario.loading import load_run_scenario

    path = tmp_path / "own.yaml"
    path.write_text(
        "name: own\nhorizon: 30\nwarmup: 0\narrivals: {name: poisson, rate: 2}\nmatchmaker:\n"
        "  algorithm: seed_greedy\n  rules:\n  - {name: near, kind: skill_distance, limit: 2}\n",
        encoding="utf-8",
    )
    scenario = load_run_scenario(path)
    assert scenario.matchmaker.rules is not None
    assert scenario.matchmaker.rules[0].in_file() is None
    assert "read_from" not in scenario.to_dict()["matchmaker"]["rules"][0]
    with pytest.raises(ScenarioError) as info:
        load_run_scenario(path, ["matchmaker.rules.near.maxDistance=3"])
    assert info.value.problems == [
        "--set matchmaker.rules.near.maxDistance: rule near is written in lobbysim's own rule "
        "language, not read from a FlexMatch file: set its limit, matchmaker.rules.near.limit"
    ]
    bad = path.read_text(encoding="utf-8").replace(
        "limit: 2}", "limit: 2, read_from: {property: maxDistanse, factor: 0}}"
    )
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_run_scenario(path)
    text = "\n".join(info.value.problems)
    assert "matchmaker.rules[0].read_from.property: expected one of maxDistance" in text
    assert "did you mean 'maxDistance'" in text
    assert "matchmaker.rules[0].read_from.factor: expected a number > 0, got 0" in text
