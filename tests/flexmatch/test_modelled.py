"""Our own FlexMatch rule sets modelled on published ones, as lobbysim reads each of them today.

The folder ``tests/fixtures/flexmatch/modelled/`` holds rule sets we wrote, each exercising the
FlexMatch constructs of one published set (the AWS GameLift guides' examples, AWS sample
repositories, infrastructure-as-code examples) with our own names, values and layout; its README
names every set each is modelled on. :data:`OUTCOMES` pins, file by file, what ``lobbysim rules
show FILE`` does with it: it loads (then the import -> export -> import round trip is exact, and
a short run under it forms games and repeats its bytes), or it is refused with these problem
lines. Whoever widens the import flips the entries it changes, so a change of outcome always
shows here first. Every refusal line starts with the file and names the JSON path it is about
(the house rule for bad input).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lobbysim.cli.main import main
from lobbysim.commands.rules import show_lines
from lobbysim.experiments.simulation import SimulationResult, simulate
from lobbysim.flexmatch.export import export_bindings, export_flexmatch
from lobbysim.flexmatch.json_text import parse_json_text
from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.scenario import Scenario, ScenarioError

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "flexmatch" / "modelled"
FILES = sorted(p.name for p in FOLDER.glob("*.json"))
MIN_FILES = 12  # issue 42: at least 12 rule sets modelled on published ones

LOADS = "loads"

#: Today's outcome for each file: :data:`LOADS`, or the problem lines ``lobbysim rules show``
#: prints for it, in order, each given by its start after ``FILE: ``.
OUTCOMES: dict[str, str | tuple[str, ...]] = {
    "cloudformation_one_ranged_team_no_rules.json": LOADS,
    "gamelift_sample_duel_equal_sides_mean_gap.json": LOADS,
    "gamelift_sample_duel_equal_value.json": LOADS,
    "gamelift_sample_duel_ping_unread_attribute.json": LOADS,
    "guide_cli_one_ranged_team_no_rules.json": LOADS,
    "guide_ex1_two_ranged_crews_even_rank.json": LOADS,
    "guide_ex2_five_raiders_one_dragon.json": (  # its uneven teams read; its roles do not
        "rules[0].measurements: 'teams[dragon].players.attributes[volunteersAsDragon]' is not a "
        "form lobbysim reads",
        "rules[1].measurements: 'teams[raiders].players.attributes[volunteersAsDragon]' is not a "
        "form lobbysim reads",
        "rules[2].referenceValue: 'max(teams[raiders].players.attributes[dragonPowerWanted])' is "
        "computed from the match",
    ),
    "guide_ex3_three_ranged_squads_engineers_ping.json": LOADS,
    "guide_ex4_sorted_arena_and_ruleset.json": LOADS,
    "guide_ex5_ffa_rival_factions.json": LOADS,
    "guide_ex6_duel_same_ruleset_and_arena_other_deck.json": LOADS,
    "guide_ex7_large_ffa_key_twice.json": LOADS,
    "guide_ex8_large_dragons_and_ten_ranged_bands.json": LOADS,
    "guide_ex9_large_batch_distance_unnamed.json": LOADS,
    "guide_ex10_ranged_teams_compound_or.json": LOADS,
    "guide_ex11_avoid_list_by_player_id.json": (
        "rules[0].referenceValue: 'flatten(teams[*].players[playerId])' lists the players' ids",
    ),
    "serverless_one_ranged_team_player_gap_ping.json": LOADS,
    "terraform_one_ranged_team_mean_gap.json": LOADS,
}

LOADING = sorted(name for name, outcome in OUTCOMES.items() if outcome == LOADS)
REFUSED = sorted(name for name, outcome in OUTCOMES.items() if outcome != LOADS)

#: The files carrying ``//`` comments (as the sets they are modelled on do), with how many lines.
COMMENTED = {
    "guide_ex1_two_ranged_crews_even_rank.json": 4,
    "guide_ex3_three_ranged_squads_engineers_ping.json": 5,
    "guide_ex4_sorted_arena_and_ruleset.json": 6,
    "serverless_one_ranged_team_player_gap_ping.json": 2,
    "terraform_one_ranged_team_mean_gap.json": 3,
}

# A JSON path at the start of a problem (teams[0].minPlayers, algorithm.strategy, rules[4].type,
# expansions[0].target, expansions[0], teams), or, for a file that is not JSON, the line and column.
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


def test_the_folder_holds_at_least_12_sets_each_with_an_outcome() -> None:
    assert len(FILES) >= MIN_FILES, f"{len(FILES)} rule sets in {FOLDER}, issue 42 asks {MIN_FILES}"
    assert sorted(OUTCOMES) == FILES  # a file without an entry, or an entry without its file
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    for name in FILES:  # each file has its row: what it is modelled on, its constructs
        assert f"| `{name}` |" in readme, name


@pytest.mark.parametrize("name", FILES)
def test_rules_show_reads_each_set_as_today(name: str, capsys: pytest.CaptureFixture[str]) -> None:
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
        assert out[1].startswith("game: ") and "rules:" in out
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


@pytest.mark.parametrize("name", REFUSED)
def test_every_refusal_line_names_the_file_and_a_json_path(name: str) -> None:
    path = FOLDER / name
    problems = _problems(path)
    assert problems, f"{name} loads"
    for line in problems:
        assert "\n" not in line
        assert line.startswith(f"{path}: "), line
        rest = line[len(f"{path}: ") :]
        assert _JSON_PATH.match(rest) or _NOT_JSON.match(rest), f"no JSON path: {line}"
        assert not _NOT_JSON.match(rest), f"a comment or other text stops the reading: {line}"


@pytest.mark.parametrize("name", sorted(COMMENTED))
def test_comments_are_skipped_and_counted(name: str) -> None:
    """The commented sets read past their comments: refused for their constructs, or loaded
    with the note of how many lines held a comment."""
    text = (FOLDER / name).read_text(encoding="utf-8")
    assert "//" in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # not plain JSON: the reader's comment skipping is what reads it
    if OUTCOMES[name] == LOADS:
        lines = show_lines(FOLDER / name)
        note = f"{COMMENTED[name]} comment lines skipped (FlexMatch's service takes plain JSON)"
        assert lines[-1] == note
    else:
        assert not any("not JSON" in p for p in _problems(FOLDER / name))


def test_a_set_without_comments_gets_no_note() -> None:
    for name in LOADING:
        if name not in COMMENTED:
            assert not any("comment lines" in line for line in show_lines(FOLDER / name)), name


# --- the sets that load: import -> export -> import, and a short run ------------------------------

_WORLD: dict[str, Any] = {
    "data_centres": ["us_east", "eu_west"],
    "regions": [
        {"name": "na", "share": 0.6, "utc_offset_hours": -5},
        {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
    ],
    "latency": {"name": "matrix", "base_ms": {"na": [35, 95], "eu": [95, 25]}, "spread": 0.3},
}

#: The bindings of the attributes each loading set's rules read: numbers to the rating (on the
#: set's own scale) or drawn, strings and lists by shares, a map by its keys' means.
BINDINGS: dict[str, dict[str, dict[str, Any]]] = {
    "gamelift_sample_duel_equal_sides_mean_gap.json": {
        "elo": {"source": "rating", "scale": 200, "offset": 1200},
    },
    # '=' on a number: every player of one tier, or no two players would ever be equal
    "gamelift_sample_duel_equal_value.json": {"tier": {"source": "drawn", "mean": 4, "sd": 0}},
    "gamelift_sample_duel_ping_unread_attribute.json": {},  # its rule reads no attribute
    "guide_ex4_sorted_arena_and_ruleset.json": {
        "veterancy": {"source": "rating", "scale": 10, "offset": 20},
        "rulesets": {"values": {"classic": 0.9, "hardcore": 0.5}},
        "arenaLove": {"values": {"quarry": 60, "docks": 40}, "sd": 15},
        "arenasOk": {"values": {"quarry": 0.85, "docks": 0.5}},
    },
    # '=' on the arena: every player in one; '!=' on the deck: drawn, so two decks differ
    "guide_ex6_duel_same_ruleset_and_arena_other_deck.json": {
        "pace": {"values": {"blitz": 0.6, "classic": 0.4}},
        "arena": {"source": "drawn", "mean": 3, "sd": 0},
        "deck": {"source": "drawn", "mean": 20, "sd": 6},
    },
    "guide_ex9_large_batch_distance_unnamed.json": {
        "division": {"source": "rating", "scale": 0.5, "offset": 5},
        "aim": {"source": "rating", "scale": 10, "offset": 50},
        "biome": {"values": {"ice": 0.9, "sand": 0.1}},
        "variant": {"values": {"classic": 0.95, "arcade": 0.05}},
    },
    "cloudformation_one_ranged_team_no_rules.json": {},  # no rules
    "guide_cli_one_ranged_team_no_rules.json": {},
    "guide_ex1_two_ranged_crews_even_rank.json": {
        "rank": {"source": "rating", "scale": 10, "offset": 50},
    },
    "guide_ex3_three_ranged_squads_engineers_ping.json": {
        "mastery": {"source": "rating", "scale": 10, "offset": 50},
        "roles": {"values": {"engineer": 0.3, "medic": 0.5, "scout": 0.6}},
    },
    "guide_ex7_large_ffa_key_twice.json": {},  # its latency rule reads no attribute
    "guide_ex8_large_dragons_and_ten_ranged_bands.json": {},
    "guide_ex10_ranged_teams_compound_or.json": {
        "division": {"source": "rating", "scale": 0.5, "offset": 5},
        "aim": {"source": "rating", "scale": 10, "offset": 50},
        "biome": {"values": {"ice": 0.9, "sand": 0.1}},
        "variant": {"values": {"classic": 0.95, "arcade": 0.05}},
    },
    "terraform_one_ranged_team_mean_gap.json": {
        "craft": {"source": "rating", "scale": 10, "offset": 50},
    },
    "serverless_one_ranged_team_player_gap_ping.json": {
        "craft": {"source": "rating", "scale": 10, "offset": 50},
    },
    "guide_ex5_ffa_rival_factions.json": {
        "factions": {"values": {"reds": 0.5, "blues": 0.5}},
        "rivalsWanted": {"values": {"reds": 0.7, "blues": 0.7}},
    },
}


def _scenario_data(rules: Path, mapping: dict[str, Any], horizon: float = 30) -> dict[str, Any]:
    return {
        "name": "modelled_rule_set",
        "horizon": horizon,
        "warmup": 5,
        "arrivals": {"name": "poisson", "rate": 5.0},
        "world": _WORLD,
        "matchmaker": {"rules": {"flexmatch": str(rules), "attributes": mapping}},
    }


def test_each_loading_set_has_its_bindings() -> None:
    assert sorted(BINDINGS) == LOADING
    for name in LOADING:  # every attribute the rules read is bound, and no other
        assert sorted(read_flexmatch(FOLDER / name).unbound) == sorted(BINDINGS[name]), name


def _shown_less(rules: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "read_from"} for r in rules]


@pytest.mark.parametrize("name", LOADING)
def test_a_set_that_loads_round_trips_exactly(name: str, tmp_path: Path) -> None:
    path = FOLDER / name
    mapping = BINDINGS[name]
    first = read_flexmatch(path, mapping)
    scenario = Scenario.from_dict(_scenario_data(path, mapping))
    document = export_flexmatch(scenario)
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(document, indent=2), encoding="utf-8")
    second = read_flexmatch(exported, export_bindings(scenario))
    # the rules, less where a limit is shown from (an '=' on a number, read as a distance of 0,
    # is written back as a maxDistance of 0)
    assert _shown_less(second.rules) == _shown_less(first.rules)
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
    """What the sets that load exercise, so that the round trip above checks something: a
    latency rule relaxed by expansions (seconds to minutes), an '=' comparison on a number, the
    equal-team-sizes idiom and a 1v1 distance between team averages (twice maxDistance), the two
    sorts and two intersections, and a reference of the values common to every player's list."""
    (latency,) = read_flexmatch(FOLDER / "gamelift_sample_duel_ping_unread_attribute.json").rules
    assert latency["kind"] == "latency" and latency["limit"] == 120
    assert latency["expansions"] == [[15 / 60, 250], [30 / 60, 500]]
    same = read_flexmatch(FOLDER / "gamelift_sample_duel_equal_value.json")
    assert same.game == {"mode": "1v1"}
    (rule,) = same.rules
    assert (rule["kind"], rule["attribute"], rule["limit"]) == ("skill_distance", "tier", 0)
    sizes, fair = read_flexmatch(FOLDER / "gamelift_sample_duel_equal_sides_mean_gap.json").rules
    assert sizes["kind"] == "team_sizes"
    assert (fair["kind"], fair["attribute"], fair["limit"]) == ("skill_distance", "elo", 300)
    assert fair["expansions"] == [[12 / 60, 500], [24 / 60, 800], [40 / 60, 1200]]
    arena = read_flexmatch(FOLDER / "guide_ex4_sorted_arena_and_ruleset.json")
    assert arena.game == {"mode": "team", "team_size": 3}
    kinds = [(r["kind"], r.get("attribute")) for r in arena.rules]
    assert kinds == [
        ("absolute_sort", "arenaLove"),
        ("distance_sort", "veterancy"),
        ("overlap", "rulesets"),
        ("overlap", "arenasOk"),
    ]
    (rivals,) = read_flexmatch(FOLDER / "guide_ex5_ffa_rival_factions.json").rules
    assert (rivals["kind"], rivals["attribute"], rivals["reference"]) == (
        "reference_overlap",
        "factions",
        "rivalsWanted",
    )
    assert rivals["expansions"] == [[20 / 60, 0]]


def _bytes(result: SimulationResult) -> tuple[str, ...]:
    """Return the run's record frames as CSV text and its metrics as JSON."""
    frames = (result.games, result.participants, result.waits)
    return (
        *(frame.to_csv(index=False) for frame in frames if frame is not None),
        json.dumps(result.metrics, sort_keys=True, default=str),
    )


#: The sets that load whose matches are large (120-200 players): an hour of them at 5 arrivals
#: a minute forms no game, so the short run below leaves them out and the slow test after it
#: runs them busier. Example 9 (two teams of 100 from one fastest-region batch, within one
#: division, aim, biome and variant) formed no game in an hour at 30 or at 60 arrivals a minute:
#: its pool never holds 200 players within its rules, so only its reading and round trip are
#: tested.
LARGE = [
    "guide_ex7_large_ffa_key_twice.json",
    "guide_ex8_large_dragons_and_ten_ranged_bands.json",
    "guide_ex9_large_batch_distance_unnamed.json",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGE[:2])
def test_a_run_under_a_large_set_forms_games_of_its_size(name: str) -> None:
    """An hour at 30 arrivals a minute under the large free-for-all (175-200 players, the
    minimum falling to 120) and the dragons against ten ranged bands: games of the set's sizes
    form, and the same seed gives the same bytes."""
    data = _scenario_data(FOLDER / name, BINDINGS[name], horizon=60)
    data["arrivals"]["rate"] = 30.0
    scenario = Scenario.from_dict(data)
    first = simulate(scenario, 11)
    assert first.games is not None and first.participants is not None
    assert len(first.games) >= 5, f"{name}: {len(first.games)} games in an hour"
    p, g = first.participants, first.games.set_index("game_id")
    per_game = p[p.joined == g.start.reindex(p.game_id).to_numpy()].groupby("game_id").size()
    shape = scenario.game.shape
    assert shape is not None and per_game.between(shape.least_ever, shape.seats).all()
    assert per_game.min() > 40  # large matches
    assert _bytes(simulate(scenario, 11)) == _bytes(first)


#: Arrivals a minute for the sets whose matches need more players than 5 a minute bring in an
#: hour (two teams of at least 10, its compound rule keeping a match to one biome and variant or
#: close aim and division).
BUSIER = {"guide_ex10_ranged_teams_compound_or.json": 10.0}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in BUSIER else n
        for n in LOADING
        if n not in LARGE
    ],
)
def test_a_run_under_each_set_that_loads_forms_games_and_repeats_its_bytes(name: str) -> None:
    """A short run (an hour of simulated time) under the set, its attributes bound as
    :data:`BINDINGS` says: it forms games of the set's size, and the same seed gives the same
    records and metrics. (That each game keeps the rules is the rule checker's to say.)"""
    path = FOLDER / name
    data = _scenario_data(path, BINDINGS[name], horizon=60)
    data["arrivals"]["rate"] = BUSIER.get(name, data["arrivals"]["rate"])
    scenario = Scenario.from_dict(data)
    first = simulate(scenario, 11)
    assert first.games is not None and first.participants is not None
    assert len(first.games) >= 20, f"{name}: {len(first.games)} games in an hour"
    p, g = first.participants, first.games.set_index("game_id")
    at_start = p[p.joined == g.start.reindex(p.game_id).to_numpy()]  # back-fills left out
    per_game = at_start.groupby("game_id").size()
    shape = scenario.game.shape
    least, most = (2, 2) if shape is None else (shape.least_ever, shape.seats)
    assert per_game.between(least, most).all(), (name, per_game.value_counts())
    assert _bytes(simulate(scenario, 11)) == _bytes(first)


_IN_FILE = re.compile(
    r"^  (?P<name>[^:]+): .*; in the file: (?P<prop>\w+) (?P<value>[-\d.e+]+)"
    r"(?:, expansions \[(?P<steps>[^\]]*)\])?$"
)


@pytest.mark.parametrize("name", LOADING)
def test_rules_show_gives_each_limit_in_the_files_own_units(name: str) -> None:
    """Beside lobbysim's limit (a team balance twice maxDistance, a 1v1 distance twice too,
    waits in minutes), each rule's line gives the file's own numbers: the property and its
    value, the expansions in seconds; each equals what the JSON says."""
    data = parse_json_text((FOLDER / name).read_text(encoding="utf-8"))
    raw = {r["name"]: r for r in data.get("rules", [])}
    steps_of = {e["target"]: e["steps"] for e in data.get("expansions", [])}
    shown = 0
    for line in show_lines(FOLDER / name):
        match = _IN_FILE.match(line)
        if match is None:
            continue
        shown += 1
        rule = match["name"].removesuffix(".max").removesuffix(".min")
        prop = match["prop"]
        assert float(match["value"]) == pytest.approx(float(raw[rule][prop])), line
        target = f"rules[{rule}].{prop}"
        if match["steps"] is None:
            assert target not in steps_of, line
            continue
        got = [float(x) for step in match["steps"].split(", ") for x in step.split(" s: ")]
        want = [float(s[k]) for s in steps_of[target] for k in ("waitTimeSeconds", "value")]
        assert got == pytest.approx(want), line
    imported = read_flexmatch(FOLDER / name)
    with_units = [r for r in imported.rules if r.get("read_from") is not None]
    assert shown == len(with_units), name  # every rule a property limits, and no other
