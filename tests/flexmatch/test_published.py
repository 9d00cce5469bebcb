"""Published FlexMatch rule sets, as lobbysim reads each of them today.

The folder ``tests/fixtures/flexmatch/published/`` holds FlexMatch rule sets published by others
(the AWS GameLift guides, AWS sample repositories, infrastructure-as-code examples), each as
published; its README names every source. :data:`OUTCOMES` pins, file by file, what ``lobbysim
rules show FILE`` does with it today: it loads (then the import -> export -> import round trip is
exact), or it is refused with these problem lines. Whoever widens the import flips the entries it
changes, so a change of outcome always shows here first. Every refusal line starts with the file
and names the JSON path it is about (the house rule for bad input).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lobbysim.cli.main import main
from lobbysim.commands.rules import show_lines
from lobbysim.flexmatch.export import export_bindings, export_flexmatch
from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.scenario import Scenario, ScenarioError

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "flexmatch" / "published"
FILES = sorted(p.name for p in FOLDER.glob("*.json"))
MIN_FILES = 12  # issue 42: at least 12 published rule sets

LOADS = "loads"

#: Today's outcome for each file: :data:`LOADS`, or the problem lines ``lobbysim rules show``
#: prints for it, in order, each given by its start after ``FILE: ``.
OUTCOMES: dict[str, str | tuple[str, ...]] = {
    "aws_guide_cli_one_team_4_to_8.json": (
        "teams[0].minPlayers: 4 differs from maxPlayers 8; lobbysim's games have fixed sizes",
    ),
    "aws_guide_ex1_two_teams_4_to_8_fair_skill.json": (
        "not JSON: Expecting property name enclosed in double quotes at line 22, column 9",
    ),
    "aws_guide_ex2_hunters_vs_monster.json": (
        "teams: uneven teams of 5 and 1 players",
        "rules[0].measurements: 'teams[monster].players.attributes[wantsToBeMonster]' is not a",
        "rules[1].measurements: 'teams[players].players.attributes[wantsToBeMonster]' is not a",
        "rules[2].referenceValue: 'max(teams[players].players.attributes[desiredSkillOfMonster])'"
        " is computed from the match",
        "expansions[0].target: 'teams[players].minPlayers': expanding a team's size is not",
    ),
    "aws_guide_ex3_three_teams_medics_latency.json": (
        "not JSON: Expecting property name enclosed in double quotes at line 23, column 9",
    ),
    "aws_guide_ex4_sorted_map_and_mode.json": (
        "not JSON: Expecting property name enclosed in double quotes at line 31, column 9",
    ),
    "aws_guide_ex5_preferred_opponents_ffa.json": (
        "rules[0].referenceValue: lobbysim reads a constant list of strings here, got "
        "'set_intersection(flatten(teams[*].players.attributes[preferredOpponents]))'",
    ),
    "aws_guide_ex6_1v1_same_mode_map_other_character.json": (
        "rules[2].operation: '!=' on a number attribute",
    ),
    "aws_guide_ex7_large_free_for_all.json": (
        "the key 'target' is given twice in one object; remove one",
    ),
    "aws_guide_ex8_large_monster_hunters.json": (
        "teams[1].minPlayers: 12 differs from maxPlayers 15",
        "algorithm.batchingPreference: 'fastestRegion' is not supported by lobbysim",
        "expansions[0].target: 'teams[Hunters].minPlayers': expanding a team's size is not",
    ),
    "aws_guide_ex9_large_batch_distance.json": (
        "algorithm.strategy: 'balanced' with two teams is not supported by lobbysim",
        "algorithm.batchingPreference: 'fastestRegion' is not supported by lobbysim",
    ),
    "aws_guide_ex10_compound_or.json": (
        "teams[0].minPlayers: 10 differs from maxPlayers 20",
        "algorithm.batchingPreference: 'fastestRegion' is not supported by lobbysim",
    ),
    "aws_guide_ex11_block_list.json": (
        "rules[0].referenceValue: lobbysim reads a constant list of strings here, got "
        "'flatten(teams[*].players[playerId])'",
    ),
    "cloudformation_guide_one_team_1_to_20.json": (
        "teams[0].minPlayers: 1 differs from maxPlayers 20",
    ),
    "gomoku_1v1_fair_score_equal_sizes.json": LOADS,
    "gomoku_1v1_fast_connection.json": LOADS,
    "gomoku_1v1_same_score.json": LOADS,
    "serverless_sample_one_team_skill_latency.json": (
        "not JSON: Expecting property name enclosed in double quotes at line 18, column 9",
    ),
    "terraform_awscc_one_team_3_to_5_fair_skill.json": (
        "not JSON: Expecting property name enclosed in double quotes at line 18, column 9",
    ),
}

LOADING = sorted(name for name, outcome in OUTCOMES.items() if outcome == LOADS)
REFUSED = sorted(name for name, outcome in OUTCOMES.items() if outcome != LOADS)

#: Refusal lines that name no place in the file today, against the house rule (strict xfail:
#: when lobbysim names the place, the test passes unexpectedly and the entry goes).
UNPLACED = {
    "aws_guide_ex7_large_free_for_all.json": "a key given twice is not located (no JSON path, "
    "no line)",
}

# A JSON path at the start of a problem (teams[0].minPlayers, algorithm.strategy, rules[4].type,
# expansions[0].target, teams), or, for a file that is not JSON, the line and column.
_JSON_PATH = re.compile(
    r"^(?:name|ruleLanguageVersion|playerAttributes|teams|rules|expansions|algorithm)"
    r"(?:\[\d+\])?(?:\.\w+(?:\[\d+\])?)*: "
)
_NOT_JSON = re.compile(r"^not JSON: .+ at line \d+, column \d+$")


def _problems(path: Path) -> list[str]:
    """Return the problem lines ``lobbysim rules show`` gives the file (none if it loads)."""
    try:
        show_lines(path)
    except ScenarioError as exc:
        return list(exc.problems)
    return []


def test_the_folder_holds_at_least_12_published_sets_each_with_an_outcome() -> None:
    assert len(FILES) >= MIN_FILES, f"{len(FILES)} rule sets in {FOLDER}, issue 42 asks {MIN_FILES}"
    assert sorted(OUTCOMES) == FILES  # a file without an entry, or an entry without its file
    assert (FOLDER / "README.md").is_file()


@pytest.mark.parametrize("name", FILES)
def test_rules_show_reads_each_published_set_as_today(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = FOLDER / name
    expected = OUTCOMES[name]
    status = main(["rules", "show", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    if expected == LOADS:
        assert status == 0, f"{name} no longer loads: {captured.err}"
        assert captured.err == ""
        out = captured.out.splitlines()
        assert out[0].startswith("FlexMatch rule set ")
        assert out[0].endswith(", as lobbysim reads it:")
        assert out[1].startswith("game: ") and out[3] == "rules:"
        return
    assert status == 2, f"{name} now loads: set its entry in OUTCOMES to LOADS\n{captured.out}"
    assert captured.out == ""
    lines = captured.err.splitlines()
    prefix = f"lobbysim: error: {path}: "
    assert all(line.startswith(prefix) for line in lines), lines
    got = [line[len(prefix) :] for line in lines]
    assert len(got) == len(expected), f"{name}: today's lines differ from OUTCOMES:\n" + "\n".join(
        got
    )
    for line, start in zip(got, expected, strict=True):
        assert line.startswith(start), f"{name}: {line!r} does not start with {start!r}"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=UNPLACED[n]))
        if n in UNPLACED
        else n
        for n in REFUSED
    ],
)
def test_every_refusal_line_names_the_file_and_a_json_path(name: str) -> None:
    path = FOLDER / name
    problems = _problems(path)
    assert problems, f"{name} loads"
    for line in problems:
        assert "\n" not in line
        assert line.startswith(f"{path}: "), line
        rest = line[len(f"{path}: ") :]
        assert _JSON_PATH.match(rest) or _NOT_JSON.match(rest), f"no JSON path: {line}"


# --- the sets that load: import -> export -> import ---------------------------------------------

_WORLD: dict[str, Any] = {
    "data_centres": ["us_east", "eu_west"],
    "regions": [
        {"name": "na", "share": 0.6, "utc_offset_hours": -5},
        {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
    ],
    "latency": {"name": "matrix", "base_ms": {"na": [35, 95], "eu": [95, 25]}, "spread": 0.3},
}


def _mapping(path: Path) -> dict[str, dict[str, Any]]:
    """Bind every attribute the rules read: a number drawn, a string or list from two values."""
    unbound = read_flexmatch(path).unbound
    return {
        name: {"source": "drawn", "mean": 0.0, "sd": 1.0}
        if kind == "number"
        else {"values": {"a": 0.5, "b": 0.5}}
        for name, kind in unbound.items()
    }


def _scenario_data(rules: Path, mapping: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "published_round_trip",
        "horizon": 30,
        "warmup": 5,
        "arrivals": {"name": "poisson", "rate": 5.0},
        "world": _WORLD,
        "matchmaker": {"rules": {"flexmatch": str(rules), "attributes": mapping}},
    }


@pytest.mark.parametrize("name", LOADING)
def test_a_published_set_that_loads_round_trips_exactly(name: str, tmp_path: Path) -> None:
    path = FOLDER / name
    mapping = _mapping(path)
    first = read_flexmatch(path, mapping)
    scenario = Scenario.from_dict(_scenario_data(path, mapping))
    document = export_flexmatch(scenario)
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(document, indent=2), encoding="utf-8")
    second = read_flexmatch(exported, export_bindings(scenario))
    assert second.rules == first.rules
    assert second.attributes == first.attributes
    assert second.game == first.game
    assert second.clock == first.clock
    assert second.algorithm == first.algorithm
    # and the exported file, named by a scenario, gives the same scenario; exporting it again
    # gives the same JSON
    again = Scenario.from_dict(_scenario_data(exported, export_bindings(scenario)))
    assert again == scenario
    assert export_flexmatch(again) == document


def test_the_sets_that_load_read_as_their_rules_say() -> None:
    """What the sets that load today exercise, so that the round trip above checks something: a
    latency rule relaxed by expansions (seconds to minutes), an '=' comparison on a number, the
    EqualTeamSizes idiom and a 1v1 distance between team averages (twice maxDistance)."""
    (latency,) = read_flexmatch(FOLDER / "gomoku_1v1_fast_connection.json").rules
    assert latency["kind"] == "latency" and latency["limit"] == 150
    assert latency["expansions"] == [[10 / 60, 300], [20 / 60, 600]]
    same = read_flexmatch(FOLDER / "gomoku_1v1_same_score.json")
    assert same.game == {"mode": "1v1"}
    (rule,) = same.rules
    assert (rule["kind"], rule["attribute"], rule["limit"]) == ("skill_distance", "score", 0)
    sizes, fair = read_flexmatch(FOLDER / "gomoku_1v1_fair_score_equal_sizes.json").rules
    assert sizes["kind"] == "team_sizes"
    assert (fair["kind"], fair["attribute"], fair["limit"]) == ("skill_distance", "score", 600)
    assert fair["expansions"] == [[10 / 60, 1000], [20 / 60, 1600], [30 / 60, 2000]]
