"""Every game of runs under FlexMatch rule sets keeps every rule when it forms and at each
back-fill, as the independent checker (tests/flexmatch/rule_checker.py, written from the
FlexMatch guide) reads them from the records; and the checker can fail: it catches planted
violations, a tightened limit, a seat opened by no quit, and refuses what it does not read.

The runs are short (minutes of simulated time) with quits likely, so that back-fills happen
(but in 1v1 games, which have none); their attributes are bound so that matches can form in
that time (a set's rules are its own). Besides our own fixture sets, the cases run under twelve of
the rule sets modelled on published ones (tests/fixtures/flexmatch/modelled/, its README names
their sources): the four 1v1 sets (guide_ex6 and three from the GameLift sample), guide_ex1
(two crews of 4-8), guide_ex3 (three squads of 3-5), guide_ex4, guide_ex5, and the three sets of
one team of a range of sizes (guide_cli, cloudformation, terraform), guide_ex10 (two teams of
10-20 under a compound rule); of those that load, the large ones (guide_ex7, ex8, ex9: a hundred
players or more a match) are left out, too slow for a test.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import SimulationResult, collect, simulate
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS, record_schema
from lobbysim.scenario import Scenario
from lobbysim.scenario.files import read_scenario_data
from lobbysim.sim.lobby import LobbySimulation
from lobbysim.sim.seat_rules import SeatRules
from lobbysim.streams import Streams
from tests.flexmatch.rule_checker import NotUnderstood, Report, check_run

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "flexmatch"
BUNDLED = ROOT / "lobbysim" / "scenarios"

Edit = Callable[[dict[str, Any]], None]


def _two_teams(d: dict[str, Any]) -> None:
    # skill bound to true skill: players differ from the start, so the rules bite
    d["matchmaker"]["rules"]["attributes"]["skill"] = {
        "source": "skill",
        "scale": 60,
        "offset": 1500,
    }
    d["game"] = {"length": 5.0, "quit_rate": 0.1}


def _latency_platform(d: dict[str, Any]) -> None:
    # enough heroes that six players can all differ
    d["matchmaker"]["rules"]["attributes"]["hero"] = {"values": {f"h{i}": 0.05 for i in range(20)}}
    d["matchmaker"]["rules"]["attributes"]["platform"] = {"values": {"pc": 0.9, "xbox": 0.1}}
    d["arrivals"]["rate"] = 20.0
    d["game"] = {"length": 5.0, "quit_rate": 0.1}


def _forty(d: dict[str, Any]) -> None:
    d["matchmaker"]["rules"]["attributes"]["skill"] = {"source": "drawn", "mean": 0, "sd": 0.4}
    d["matchmaker"]["rules"]["attributes"]["maps"] = {
        "values": {"harbour": 1.0, "desert": 0.995, "tundra": 0.5}
    }
    d["arrivals"]["rate"] = 60.0
    d["game"] = {"length": 5.0, "quit_rate": 0.1}


def _two_teams_at_random(d: dict[str, Any]) -> None:
    # a policy that pairs at random back-fills a seat with a random ticket that keeps the rules
    _two_teams(d)
    d["matchmaker"]["policy"] = "uniform_random"


def _five_v_five(d: dict[str, Any]) -> None:
    d["base"]["size"] = 1500
    d["base"]["visits"]["per_day"] = 6.0
    d["game"].update(length=8, quit_rate=0.08)


def _five_v_five_oldest_rating(d: dict[str, Any]) -> None:
    # the bundled set's expansions by the oldest ticket, its skill on true skill, no parties
    _five_v_five(d)
    d["matchmaker"]["rules"]["attributes"]["skill"] = {
        "source": "skill",
        "scale": 100,
        "offset": 1500,
    }
    del d["parties"]


MODELLED = FIXTURES / "modelled" / "guide_ex4_sorted_arena_and_ruleset.json"


def _arena_world() -> dict[str, Any]:
    return {
        "data_centres": ["us_east", "eu_west"],
        "regions": [
            {"name": "na", "share": 0.6, "utc_offset_hours": -5},
            {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
        ],
        "latency": {"name": "matrix", "base_ms": {"na": [35, 95], "eu": [95, 25]}, "spread": 0.3},
    }


def _arena(d: dict[str, Any]) -> None:
    # a set modelled on a published one (its README names it), with comments in its JSON
    d["name"] = "arena_rotation"
    d["arrivals"] = {"name": "poisson", "rate": 20.0}
    d["world"] = _arena_world()
    attributes = {
        "veterancy": {"source": "rating", "scale": 10, "offset": 20},
        "rulesets": {"values": {"classic": 0.6, "hardcore": 0.5}},
        "arenaLove": {"values": {"quarry": 60, "docks": 40}, "sd": 15},
        "arenasOk": {"values": {"quarry": 0.7, "docks": 0.5}},
    }
    d["matchmaker"] = {"rules": {"flexmatch": str(MODELLED), "attributes": attributes}}
    d["game"] = {"length": 5.0, "quit_rate": 0.1}


def _short_games(d: dict[str, Any]) -> None:
    # short games with quits likely: many games in a few minutes, back-fills where there are
    d["game"].update(length=2.0, quit_rate=0.1)


def _close_elo(d: dict[str, Any]) -> None:
    # a wide Elo scale, so that the mean gap's limit and its expansions bite within minutes
    _short_games(d)
    d["matchmaker"]["rules"]["attributes"]["elo"]["scale"] = 2000


def _close_elo_exact(d: dict[str, Any]) -> None:
    # the matchmaker's exact 1v1 search (the 1v1 pass hands the games its own ratings)
    _close_elo(d)
    d["matchmaker"]["algorithm"] = "exact"


def _rival_factions(d: dict[str, Any]) -> None:
    d["game"].update(length=4.0, quit_rate=0.1)
    d["arrivals"]["rate"] = 12.0


def _ranged_games(d: dict[str, Any]) -> None:
    # games of teams of a range of sizes: short, with quits likely, so that back-fills happen
    d["game"].update(length=3.0, quit_rate=0.1)


def _ranged_crews(d: dict[str, Any]) -> None:
    # a wide rank scale, so that the crews' mean gap and its expansions bite within minutes
    _ranged_games(d)
    d["matchmaker"]["rules"]["attributes"]["rank"]["scale"] = 100


def _open_lobby(d: dict[str, Any]) -> None:
    # the CloudFormation set: one team of 1 to 20, no rules
    _ranged_games(d)
    d["matchmaker"]["rules"]["flexmatch"] = str(
        _modelled("cloudformation_one_ranged_team_no_rules.json")
    )


def _modelled(name: str) -> Path:
    return FIXTURES / "modelled" / name


#: The cases of 1v1 games: a quit ends a 1v1 game (lobbysim/sim/games.py), so no seat of one is
#: ever back-filled and no back-fill can be checked.
ONE_V_ONE = {
    "duel_close_elo",
    "duel_close_elo_exact",
    "duel_same_pace",
    "duel_same_tier",
    "duel_short_ping",
}

COMPOUND_OR = FIXTURES / "modelled" / "guide_ex10_ranged_teams_compound_or.json"


def _compound_or(d: dict[str, Any]) -> None:
    # two teams of 10 to 20: many arrivals, short games with quits likely
    d["name"] = "ranged_teams_compound_or"
    d["arrivals"] = {"name": "poisson", "rate": 60.0}
    d["world"] = _arena_world()
    attributes = {
        "division": {"source": "rating", "scale": 0.5, "offset": 5},
        "aim": {"source": "rating", "scale": 10, "offset": 50},
        "biome": {"values": {"ice": 0.9, "sand": 0.1}},
        "variant": {"values": {"classic": 0.95, "arcade": 0.05}},
    }
    d["matchmaker"] = {"rules": {"flexmatch": str(COMPOUND_OR), "attributes": attributes}}
    d["game"] = {"length": 3.0, "quit_rate": 0.1}


#: The cases of sets of no rules (one team of a range of sizes).
NO_RULES = {"ranged_lobby_no_rules", "open_lobby_no_rules"}

#: name -> (scenario file, FlexMatch rule set, horizon in minutes, edit of the scenario); the
#: modelled set has no scenario file: its edit writes the scenario.
CASES: dict[str, tuple[Path | None, Path, float, Edit]] = {
    "two_teams_skill": (
        FIXTURES / "two_teams_skill.yaml",
        FIXTURES / "two_teams_skill.json",
        25,
        _two_teams,
    ),
    "two_teams_skill_at_random": (
        FIXTURES / "two_teams_skill.yaml",
        FIXTURES / "two_teams_skill.json",
        25,
        _two_teams_at_random,
    ),
    "latency_platform": (
        FIXTURES / "latency_platform.yaml",
        FIXTURES / "latency_platform.json",
        20,
        _latency_platform,
    ),
    "forty_player_ffa": (
        FIXTURES / "forty_player_ffa.yaml",
        FIXTURES / "forty_player_ffa.json",
        12,
        _forty,
    ),
    "guide_ex4_sorted_arena": (None, MODELLED, 20, _arena),
    "duel_close_elo": (
        FIXTURES / "duel_close_elo.yaml",
        _modelled("gamelift_sample_duel_equal_sides_mean_gap.json"),
        10,
        _close_elo,
    ),
    "duel_close_elo_exact": (
        FIXTURES / "duel_close_elo.yaml",
        _modelled("gamelift_sample_duel_equal_sides_mean_gap.json"),
        10,
        _close_elo_exact,
    ),
    "duel_same_tier": (
        FIXTURES / "duel_same_tier.yaml",
        _modelled("gamelift_sample_duel_equal_value.json"),
        10,
        _short_games,
    ),
    "duel_same_pace": (
        FIXTURES / "duel_same_pace.yaml",
        _modelled("guide_ex6_duel_same_ruleset_and_arena_other_deck.json"),
        10,
        _short_games,
    ),
    "duel_short_ping": (
        FIXTURES / "duel_short_ping.yaml",
        _modelled("gamelift_sample_duel_ping_unread_attribute.json"),
        10,
        _short_games,
    ),
    "ranged_crews": (
        FIXTURES / "ranged_crews.yaml",
        _modelled("guide_ex1_two_ranged_crews_even_rank.json"),
        12,
        _ranged_crews,
    ),
    "three_squads": (
        FIXTURES / "three_squads.yaml",
        _modelled("guide_ex3_three_ranged_squads_engineers_ping.json"),
        12,
        _ranged_games,
    ),
    "one_ranged_party": (
        FIXTURES / "one_ranged_party.yaml",
        _modelled("terraform_one_ranged_team_mean_gap.json"),
        12,
        _ranged_games,
    ),
    "ranged_lobby_no_rules": (
        FIXTURES / "ranged_lobby_no_rules.yaml",
        _modelled("guide_cli_one_ranged_team_no_rules.json"),
        12,
        _ranged_games,
    ),
    "open_lobby_no_rules": (
        FIXTURES / "ranged_lobby_no_rules.yaml",
        _modelled("cloudformation_one_ranged_team_no_rules.json"),
        12,
        _open_lobby,
    ),
    "guide_ex10_compound_or": (None, COMPOUND_OR, 8, _compound_or),
    "ffa_rival_factions": (
        FIXTURES / "ffa_rival_factions.yaml",
        _modelled("guide_ex5_ffa_rival_factions.json"),
        10,
        _rival_factions,
    ),
    "flexmatch_5v5": (
        BUNDLED / "flexmatch_5v5.yaml",
        BUNDLED / "flexmatch" / "fair_teams_low_ping.json",
        120,
        _five_v_five,
    ),
    "flexmatch_5v5_true_skill": (
        BUNDLED / "flexmatch_5v5.yaml",
        BUNDLED / "flexmatch" / "fair_teams_low_ping.json",
        120,
        _five_v_five_oldest_rating,
    ),
}


def _scenario(name: str) -> Scenario:
    path, _, horizon, edit = CASES[name]
    data = {} if path is None else read_scenario_data(path)
    data["horizon"], data["warmup"] = horizon, 0
    edit(data)
    return Scenario.from_dict(data)


@functools.cache
def _run(name: str) -> tuple[SimulationResult, LobbySimulation]:
    """Run a case once (its records and its finished simulation)."""
    scenario = _scenario(name)
    sim = LobbySimulation(scenario, Streams(scenario.seed))
    with sim.tuned():
        sim.run()
        return collect(sim, scenario.seed), sim


def _frames(name: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    result, _ = _run(name)
    assert result.games is not None and result.participants is not None
    assert result.waits is not None
    return result.games, result.participants.copy(), result.waits


def _check(name: str, **changes: Any) -> Report:
    games, participants, waits = _frames(name)
    rule_set: Any = CASES[name][1]
    return check_run(changes.get("rule_set", rule_set), games, participants, waits)


#: The cases whose runs take longest: checked in the slow run (the default keeps the others).
SLOW_CASES = {"latency_platform", "flexmatch_5v5_true_skill"}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CASES else n for n in sorted(CASES)],
)
def test_every_game_keeps_every_rule_when_formed_and_backfilled(name: str) -> None:
    report = _check(name)
    assert report.violations == []
    assert report.games >= 5, f"{name}: only {report.games} games"
    if name in NO_RULES:  # only the teams' sizes are checked
        assert report.rules_checked == 0
    else:
        assert report.rules_checked >= report.games
    if name in ONE_V_ONE:  # no back-fill in 1v1 games (ONE_V_ONE)
        assert report.backfills == 0
    else:
        assert report.backfills > 0, f"{name}: no back-filled seat was checked"


def _battle_royale(d: dict[str, Any]) -> None:
    # the 60-player large match, on FlexMatch's builder (the exact search is slow at this size)
    d["matchmaker"]["rules"]["attributes"]["mode"] = {"values": {"solo": 0.97, "duo": 0.03}}
    d["matchmaker"]["algorithm"] = "flexmatch"
    d["arrivals"]["rate"] = 90.0
    d["game"] = {"length": 4.0, "quit_rate": 0.1}


@pytest.mark.slow
def test_the_large_battle_royale_keeps_its_rules() -> None:
    """The sixth fixture set, a 60-player free-for-all with batchDistance and latency rules:
    minutes to run, so in the slow stage."""
    CASES["large_battle_royale"] = (
        FIXTURES / "large_battle_royale.yaml",
        FIXTURES / "large_battle_royale.json",
        8,
        _battle_royale,
    )
    try:
        report = _check("large_battle_royale")
    finally:
        del CASES["large_battle_royale"]
    assert report.violations == []
    assert report.games >= 3 and report.backfills > 0


def test_the_checker_catches_a_changed_value_of_a_formed_game() -> None:
    games, participants, waits = _frames("two_teams_skill")
    first = participants.index[
        participants["joined"] == participants["game_id"].map(games.set_index("game_id")["start"])
    ][0]
    participants.loc[first, "attr_skill"] += 10_000
    report = check_run(CASES["two_teams_skill"][1], games, participants, waits)
    broken = {(v.game_id, v.rule, v.when) for v in report.violations}
    game = int(participants.loc[first, "game_id"])
    assert (game, "SimilarSkill", "formed") in broken
    assert (game, "FairTeams", "formed") in broken


@pytest.mark.slow  # a run with back-fills: 10 s on CI's fresh clone
def test_the_checker_catches_a_changed_value_of_a_backfilled_seat() -> None:
    games, participants, waits = _frames("latency_platform")
    start = participants["game_id"].map(games.set_index("game_id")["start"])
    seat = participants.index[participants["joined"] > start][0]
    participants.loc[seat, "latency_ms"] = 10_000.0
    report = check_run(CASES["latency_platform"][1], games, participants, waits)
    found = [v for v in report.violations if v.rule == "LowLatency"]
    assert found and found[0].when == "backfill" and found[0].value == 10_000.0
    assert found[0].limit in (60.0, 100.0, 150.0)


@pytest.mark.slow  # the latency_platform run, as the back-filled seat's test above
def test_the_checker_catches_a_repeated_hero_and_another_platform() -> None:
    games, participants, waits = _frames("latency_platform")
    game = participants[participants["game_id"] == participants["game_id"].iloc[0]]
    a, b = game.index[:2]
    participants.loc[b, "attr_hero"] = participants.loc[a, "attr_hero"]
    participants.loc[a, "attr_platform"] = "switch"
    report = check_run(CASES["latency_platform"][1], games, participants, waits)
    assert {v.rule for v in report.violations} >= {"DifferentHeroes", "SamePlatform"}


def test_the_checker_catches_a_list_without_the_common_maps() -> None:
    games, participants, waits = _frames("forty_player_ffa")
    seat = participants.index[0]
    participants.loc[seat, "attr_maps"] = json.dumps(["tundra"])
    report = check_run(CASES["forty_player_ffa"][1], games, participants, waits)
    assert any(v.rule == "CommonMaps" and v.value <= 1 for v in report.violations)


@pytest.mark.parametrize(
    ("name", "rule", "prop", "value"),
    [
        ("two_teams_skill", "SimilarSkill", "maxDistance", 1.0),
        ("flexmatch_5v5", "LowPing", "maxLatency", 5.0),
        ("forty_player_ffa", "SkillSpread", "maxDistance", 0.01),
    ],
)
def test_the_checker_catches_a_tightened_limit(
    name: str, rule: str, prop: str, value: float
) -> None:
    document = json.loads(CASES[name][1].read_text(encoding="utf-8"))
    for entry in document["rules"]:
        if entry["name"] == rule:
            entry[prop] = value
    for expansion in document.get("expansions", []):
        if expansion["target"] == f"rules[{rule}].{prop}":
            for step in expansion["steps"]:
                step["value"] = value
    report = _check(name, rule_set=document)
    assert any(v.rule == rule and v.limit == value for v in report.violations)
    assert {v.rule for v in report.violations} == {rule}


@pytest.mark.parametrize("name", ["flexmatch_5v5", "latency_platform"])
def test_expansions_are_read_on_the_documented_clock(name: str) -> None:
    """These sets relax by the oldest ticket's age: without their expansions, or read on the
    newest ticket's age (FlexMatch's default), games formed under the relaxed limits break
    them; as written, none does."""
    document = json.loads(CASES[name][1].read_text(encoding="utf-8"))
    assert document["algorithm"]["expansionAgeSelection"] == "oldest"
    assert _check(name, rule_set=document).violations == []
    strict = copy.deepcopy(document)
    strict["expansions"] = []
    assert any(v.when == "formed" for v in _check(name, rule_set=strict).violations)
    newest = copy.deepcopy(document)
    del newest["algorithm"]["expansionAgeSelection"]  # the default: the newest ticket's age
    assert any(v.when == "formed" for v in _check(name, rule_set=newest).violations)


def test_a_seat_opened_by_no_quit_is_a_violation() -> None:
    games, participants, waits = _frames("two_teams_skill")
    seat = participants.index[participants["seat_opened"].notna()][0]
    participants.loc[seat, "seat_opened"] -= 0.123
    report = check_run(CASES["two_teams_skill"][1], games, participants, waits)
    assert [v.rule for v in report.violations] == ["seat_opened"]


def test_what_the_checker_does_not_read_is_refused() -> None:
    games, participants, waits = _frames("two_teams_skill")
    document = json.loads(CASES["two_teams_skill"][1].read_text(encoding="utf-8"))
    compound = copy.deepcopy(document)
    # a compound rule may not name a batchDistance rule (the guide)
    statement = "or(SimilarSkill, FairTeams)"
    compound["rules"].append({"name": "Either", "type": "compound", "statement": statement})
    with pytest.raises(NotUnderstood, match="names the batchDistance 'SimilarSkill'"):
        check_run(compound, games, participants, waits)
    reference = copy.deepcopy(document)
    reference["rules"][0]["referenceValue"] = 3
    with pytest.raises(NotUnderstood, match="referenceValue"):
        check_run(reference, games, participants, waits)
    with pytest.raises(NotUnderstood, match="attr_skill"):
        check_run(document, games, participants.drop(columns="attr_skill"), waits)


def test_a_backfill_that_ignores_the_rules_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every waiting ticket taken to keep the rules (the back-fill of before), the same
    run's back-fills break them, and only its back-fills."""

    def anyone(
        self: SeatRules, game: Any, waiting: Any, rating: Any, positions: Any, *a: Any, **k: Any
    ) -> list[bool]:
        return [True] * len(positions)

    monkeypatch.setattr(SeatRules, "candidates", anyone)
    result = simulate(_scenario("two_teams_skill"))
    assert result.games is not None and result.participants is not None
    assert result.waits is not None
    report = check_run(CASES["two_teams_skill"][1], result.games, result.participants, result.waits)
    assert report.violations and {v.when for v in report.violations} == {"backfill"}


def test_backfills_count_in_the_rules_telemetry_as_matches() -> None:
    result, sim = _run("two_teams_skill")
    rule_pass, groups = sim.rule_pass, sim.games.groups
    assert rule_pass is not None and groups is not None and groups.seat_rules is not None
    backfills = groups.seat_rules.backfills
    recorded = int(result.participants["seat_opened"].notna().sum())  # type: ignore[index]
    assert backfills >= recorded > 0
    assert rule_pass.telemetry.matches_noted == groups.n_games + backfills


def test_best_latency_is_each_players_least_over_the_data_centres() -> None:
    result, sim = _run("flexmatch_5v5")
    participants, games = result.participants, result.games
    assert participants is not None and games is not None and sim.world is not None
    world = sim.world
    pids = participants["player_id"].to_numpy()
    every = world.latencies_of(pids)  # the world's own latency of each player to each centre
    assert np.array_equal(participants["best_latency_ms"].to_numpy(), every.min(axis=1))
    hosted = participants["game_id"].map(games.set_index("game_id")["data_centre"])
    column = hosted.map({name: k for k, name in enumerate(world.data_centres)}).to_numpy()
    at_host = every[np.arange(len(pids)), column]
    assert np.array_equal(participants["latency_ms"].to_numpy(), at_host)
    assert (participants["best_latency_ms"] <= participants["latency_ms"]).all()
    assert (participants["best_latency_ms"] < participants["latency_ms"]).any()


def test_the_rule_columns_come_only_with_rules() -> None:
    assert record_schema() == {kind: dict(c) for kind, c in RECORD_COLUMNS.items()}
    result, _ = _run("latency_platform")
    assert result.participants is not None
    columns = list(result.participants.columns)
    assert columns[-5:] == [
        "attr_platform",
        "attr_hero",
        "attr_skill",
        "best_latency_ms",
        "seat_opened",
    ]
    assert result.participants["attr_skill"].dtype == np.float64
    assert math.isnan(result.participants["seat_opened"].iloc[0])


@pytest.mark.slow  # the latency_platform run twice (streamed and in memory)
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_streamed_records_carry_the_rule_columns_and_check_the_same(
    fmt: str, tmp_path: Path
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    scenario = _scenario("latency_platform")
    records = {"stream": True, "format": fmt}
    streamed = Scenario.from_dict(scenario.to_dict() | {"records": records})
    simulate(streamed, records_dir=tmp_path)
    frames = read_records(tmp_path)
    assert frames["participants"]["attr_hero"].map(type).eq(str).all()
    assert frames["participants"]["attr_skill"].dtype == np.float64
    memory, _ = _run("latency_platform")
    assert memory.participants is not None
    assert list(frames["participants"].columns) == list(memory.participants.columns)
    pd.testing.assert_frame_equal(
        frames["participants"], memory.participants, check_dtype=False, check_exact=True
    )
    report = check_run(
        CASES["latency_platform"][1], frames["games"], frames["participants"], frames["waits"]
    )
    assert report.violations == [] and report.backfills == _check("latency_platform").backfills


# ------------------------------------------------------- the modelled sets' constructs


def _formed(games: pd.DataFrame, participants: pd.DataFrame) -> pd.DataFrame:
    """The seats taken when their games formed."""
    start = participants["game_id"].map(games.set_index("game_id")["start"])
    return participants[participants["joined"] == start]


def _broken_games(report: Report, rule: str, when: str = "formed") -> set[int]:
    return {v.game_id for v in report.violations if v.rule == rule and v.when == when}


def test_a_player_moved_to_the_other_side_of_a_duel_breaks_equal_sides() -> None:
    games, participants, waits = _frames("duel_close_elo")
    seat = participants.index[participants["team"] == 1][0]
    game = int(participants.loc[seat, "game_id"])
    participants.loc[seat, "team"] = 0
    report = check_run(CASES["duel_close_elo"][1], games, participants, waits)
    sides = [v for v in report.violations if v.rule == "SidesOfOneSize"]
    assert [(v.game_id, v.value, v.limit) for v in sides] == [(game, 0.0, 2.0)]
    assert {v.rule for v in report.violations if v.game_id == game} >= {"team black", "team white"}


def test_a_changed_elo_breaks_the_duels_mean_gap_at_the_limit_of_its_age() -> None:
    games, participants, waits = _frames("duel_close_elo")
    first = participants.index[0]
    game = int(participants.loc[first, "game_id"])
    participants.loc[first, "attr_elo"] += 5000  # a mean gap above every limit (600 at most)
    report = check_run(CASES["duel_close_elo"][1], games, participants, waits)
    (found,) = [v for v in report.violations if v.rule == "CloseElo"]
    assert found.game_id == game and found.limit in (150.0, 250.0, 400.0, 600.0)
    elo = participants[participants["game_id"] == game]["attr_elo"]
    assert found.value == pytest.approx(abs(elo.iloc[0] - elo.iloc[1]) / 2)


def test_one_deck_twice_another_pace_and_another_arena_break_a_duels_rules() -> None:
    """guide_ex6's three comparisons across the two players: '=' on a string, '=' and '!='
    on a number, each broken in its own game."""
    games, participants, waits = _frames("duel_same_pace")
    ids = participants["game_id"].drop_duplicates().tolist()[:3]
    seats = [participants.index[participants["game_id"] == g] for g in ids]
    a, b = seats[0]
    participants.loc[b, "attr_deck"] = participants.loc[a, "attr_deck"]
    a, b = seats[1]
    participants.loc[b, "attr_pace"] = "bullet"
    a, b = seats[2]
    participants.loc[b, "attr_arena"] += 0.5
    report = check_run(CASES["duel_same_pace"][1], games, participants, waits)
    broken = {(v.game_id, v.rule, v.value, v.limit) for v in report.violations}
    assert len(report.violations) == 3 and broken == {
        (ids[0], "OtherDeck", 1.0, 2.0),
        (ids[1], "SamePace", 2.0, 1.0),
        (ids[2], "SameArena", 2.0, 1.0),
    }


def test_a_faction_no_player_wants_to_face_breaks_the_rivals_rule() -> None:
    """reference_intersection_count against set_intersection(...): a player of a faction none
    wants to face has none in the reference; only the expansion to 0 at 20 s lets it pass."""
    games, participants, waits = _frames("ffa_rival_factions")
    document = json.loads(CASES["ffa_rival_factions"][1].read_text(encoding="utf-8"))
    strict = copy.deepcopy(document)
    strict["expansions"] = []  # minCount 1 at every age
    before = _broken_games(check_run(strict, games, participants, waits), "RivalsPresent")
    formed = _formed(games, participants)
    game = int(next(g for g in formed["game_id"] if g not in before))
    seat = formed.index[formed["game_id"] == game][0]
    participants.loc[seat, "attr_factions"] = json.dumps(["purples"])
    after = check_run(strict, games, participants, waits)
    assert _broken_games(after, "RivalsPresent") == before | {game}
    (found,) = [v for v in after.violations if v.game_id == game and v.when == "formed"]
    assert (found.value, found.limit) == (0.0, 1.0)
    # as written, the same seat breaks the rule only if the game formed before 20 s (the
    # newest ticket's age, the set's clock)
    spells = waits.dropna(subset=["left_queue"]).set_index(["player_id", "left_queue"])["wait"]
    seats = formed[formed["game_id"] == game]
    age = min(spells[key] for key in zip(seats["player_id"], seats["joined"], strict=True)) * 60
    as_written = check_run(document, games, participants, waits)
    assert (game in _broken_games(as_written, "RivalsPresent")) == (age < 20)


def _tier_set(*rules: dict[str, Any]) -> dict[str, Any]:
    """The modelled 'equal value' duel set with ``rules`` after its own."""
    document = json.loads(CASES["duel_same_tier"][1].read_text(encoding="utf-8"))
    document["rules"] += list(rules)
    return document


def _tier_cap(cap: float) -> dict[str, Any]:
    return {
        "name": "TierCap",
        "type": "comparison",
        "measurements": ["flatten(teams[*].players.attributes[tier])"],
        "referenceValue": cap,
        "operation": "<=",
    }


def test_a_constant_reference_is_kept_by_every_player_it_is_compared_with() -> None:
    games, participants, waits = _frames("duel_same_tier")
    formed = _formed(games, participants)
    cap = float(formed["attr_tier"].median())
    over = set(formed.loc[formed["attr_tier"] > cap, "game_id"].tolist())
    assert over and len(over) < len(games)
    report = check_run(_tier_set(_tier_cap(cap)), games, participants, waits)
    assert _broken_games(report, "TierCap") == over
    assert {v.rule for v in report.violations} == {"TierCap"}
    assert all(v.value > cap and v.limit == cap for v in report.violations)
    everyone = check_run(
        _tier_set(_tier_cap(float(formed["attr_tier"].max()))), games, participants, waits
    )
    assert everyone.violations == []


@pytest.mark.parametrize(
    ("statement", "breaks"),
    [
        ("or(SameTier, TierCap)", "none"),  # SameTier holds in every game
        ("and(SameTier, TierCap)", "over"),
        ("xor(SameTier, TierCap)", "under"),  # both hold where the cap does
        ("not(SameTier)", "all"),
        ("and(SameTier, not(TierCap))", "under"),
        ("not(and(SameTier, TierCap))", "under"),
    ],
)
def test_a_compound_rule_combines_its_parts_which_are_checked_only_through_it(
    statement: str, breaks: str
) -> None:
    games, participants, waits = _frames("duel_same_tier")
    formed = _formed(games, participants)
    cap = float(formed["attr_tier"].median())
    over = set(formed.loc[formed["attr_tier"] > cap, "game_id"].tolist())
    every = set(games["game_id"].tolist())
    compound = {"name": "Either", "type": "compound", "statement": statement}
    report = check_run(_tier_set(_tier_cap(cap), compound), games, participants, waits)
    expected = {"none": set(), "over": over, "under": every - over, "all": every}[breaks]
    assert _broken_games(report, "Either") == expected
    # a part is checked only through the compound rule; a rule it does not name, on its own
    assert _broken_games(report, "TierCap") == (set() if "TierCap" in statement else over)
    assert {v.rule for v in report.violations} <= {"Either", "TierCap"}
    assert all((v.value, v.limit) == (0.0, 1.0) for v in report.violations if v.rule == "Either")


def test_contains_counts_the_lists_holding_the_reference() -> None:
    games, participants, waits = _frames("ffa_rival_factions")
    formed = _formed(games, participants)
    reds = formed["attr_factions"].map(lambda text: "reds" in json.loads(text))
    count = reds.groupby(formed["game_id"]).sum()
    assert count.min() < 3 <= count.max()
    document = json.loads(CASES["ffa_rival_factions"][1].read_text(encoding="utf-8"))
    document["rules"].append(
        {
            "name": "FewReds",
            "type": "collection",
            "operation": "contains",
            "measurements": ["flatten(teams[*].players.attributes[factions])"],
            "referenceValue": "reds",
            "maxCount": 2,
        }
    )
    report = check_run(document, games, participants, waits)
    assert _broken_games(report, "FewReds") == set(count[count > 2].index.tolist())
    assert all(
        v.limit == 2 and v.value == count[v.game_id]
        for v in report.violations
        if v.when == "formed" and v.rule == "FewReds"
    )


def test_the_modelled_constructs_the_checker_does_not_read_are_refused() -> None:
    games, participants, waits = _frames("duel_same_tier")
    tier = "flatten(teams[*].players.attributes[tier])"
    refused = {
        "no rule defined before it": _tier_set(
            {"name": "C", "type": "compound", "statement": "and(SameTier, Later)"}
        ),
        "compound operator 'nand'": _tier_set(
            {"name": "C", "type": "compound", "statement": "nand(SameTier, SameTier)"}
        ),
        "an expression": _tier_set(
            {
                "name": "R",
                "type": "comparison",
                "measurements": [tier],
                "referenceValue": "max(teams[*].players.attributes[tier])",
                "operation": ">=",
            }
        ),
        "operation '<' on the string": _tier_set(
            {
                "name": "R",
                "type": "comparison",
                "measurements": [tier],
                "referenceValue": "x",
                "operation": "<",
            }
        ),
        "neither minCount nor maxCount": _tier_set(
            {
                "name": "R",
                "type": "collection",
                "operation": "contains",
                "measurements": [tier],
                "referenceValue": "x",
            }
        ),
        "team 'gold'": _tier_set(
            {
                "name": "R",
                "type": "comparison",
                "measurements": ["count(teams[gold].players)"],
                "referenceValue": "count(teams[duellist_1].players)",
                "operation": "=",
            }
        ),
    }
    for message, document in refused.items():
        with pytest.raises(NotUnderstood, match=re.escape(message)):
            check_run(document, games, participants, waits)
    expanded = _tier_set({"name": "C", "type": "compound", "statement": "not(SameTier)"})
    expanded["expansions"] = [
        {"target": "rules[C].statement", "steps": [{"waitTimeSeconds": 5, "value": 1}]}
    ]
    with pytest.raises(NotUnderstood, match="a compound rule has none"):
        check_run(expanded, games, participants, waits)
    # the teams of a definition of quantity 2 are duellist_1 and duellist_2: read
    sides = _tier_set(
        {
            "name": "R",
            "type": "comparison",
            "measurements": ["count(teams[duellist_1].players)"],
            "referenceValue": "count(teams[duellist_2].players)",
            "operation": "=",
        }
    )
    assert check_run(sides, games, participants, waits).violations == []


def test_teams_of_sizes_further_apart_than_the_limit_break_a_sizes_distance() -> None:
    """``max(count(teams[*].players))`` against ``min(...)``: a player moved to the other team
    of a 5v5 makes teams of 6 and 4."""
    games, participants, waits = _frames("two_teams_skill")
    document = json.loads(CASES["two_teams_skill"][1].read_text(encoding="utf-8"))
    document["rules"].append(
        {
            "name": "CloseSizes",
            "type": "distance",
            "measurements": ["max(count(teams[*].players))"],
            "referenceValue": "min(count(teams[*].players))",
            "maxDistance": 1,
        }
    )
    assert _broken_games(check_run(document, games, participants, waits), "CloseSizes") == set()
    formed = _formed(games, participants)
    seat = formed.index[formed["team"] == 0][0]
    participants.loc[seat, "team"] = 1
    report = check_run(document, games, participants, waits)
    game = int(participants.loc[seat, "game_id"])
    found = [v for v in report.violations if v.rule == "CloseSizes" and v.when == "formed"]
    assert [(v.game_id, v.value, v.limit) for v in found] == [(game, 2.0, 1.0)]


def test_without_seat_opened_only_a_set_where_nothing_relaxes_is_read() -> None:
    """A rule set whose rules read nothing gives records no rule columns: a back-fill is then
    checked (its teams' sizes) without its clock, as no limit relaxes; a set whose limits
    relax cannot be read so."""
    games, participants, waits = _frames("two_teams_skill")
    bare = participants.drop(columns="seat_opened")
    document = json.loads(CASES["two_teams_skill"][1].read_text(encoding="utf-8"))
    teams_only = {k: v for k, v in document.items() if k not in ("rules", "expansions")}
    report = check_run(teams_only, games, bare, waits)
    assert report.violations == [] and report.backfills == _check("two_teams_skill").backfills
    seat = bare.index[bare["joined"] > bare["game_id"].map(games.set_index("game_id")["start"])][0]
    crowded = pd.concat([bare, bare.loc[[seat]].assign(player_id=-1)])  # one more at once
    crowded_waits = pd.concat(
        [waits, waits.iloc[[0]].assign(player_id=-1, left_queue=bare.loc[seat, "joined"])]
    )
    found = check_run(teams_only, games, crowded, crowded_waits).violations
    game = int(bare.loc[seat, "game_id"])  # a team of 6 at this back-fill (and later ones)
    assert found and all(
        (v.game_id, v.when, v.value, v.limit) == (game, "backfill", 6, 5) for v in found
    )
    assert found[0].time == bare.loc[seat, "joined"]
    with pytest.raises(NotUnderstood, match="no seat_opened"):
        check_run(document, games, bare, waits)


def test_five_engineers_in_a_siege_break_few_engineers() -> None:
    """guide_ex3's contains with maxCount 4 over three squads."""
    games, participants, waits = _frames("three_squads")
    formed = _formed(games, participants)
    game = int(formed["game_id"].iloc[0])
    seats = formed.index[formed["game_id"] == game][:5]
    participants.loc[seats, "attr_roles"] = json.dumps(["engineer"])
    report = check_run(CASES["three_squads"][1], games, participants, waits)
    found = [v for v in report.violations if v.when == "formed"]
    engineers = formed[formed["game_id"] == game]["attr_roles"].map(
        lambda text: "engineer" in json.loads(text)
    )
    engineers.loc[seats] = True
    assert [(v.game_id, v.rule, v.value, v.limit) for v in found] == [
        (game, "FewEngineers", float(engineers.sum()), 4.0)
    ]


def test_contains_over_a_party_ticket_is_refused() -> None:
    games, participants, waits = _frames("ffa_rival_factions")
    game = participants[participants["game_id"] == participants["game_id"].iloc[0]]
    participants["party_id"] = pd.array([None] * len(participants), dtype="Int64")
    participants.loc[game.index[:2], "party_id"] = 7
    document = json.loads(CASES["ffa_rival_factions"][1].read_text(encoding="utf-8"))
    document["rules"].append(
        {
            "name": "FewReds",
            "type": "collection",
            "operation": "contains",
            "measurements": ["flatten(teams[*].players.attributes[factions])"],
            "referenceValue": "reds",
            "maxCount": 2,
        }
    )
    with pytest.raises(NotUnderstood, match="party's ticket"):
        check_run(document, games, participants, waits)


def test_the_rule_columns_of_1v1_games_come_only_with_rules() -> None:
    """A 1v1 run under a rule set carries the rule columns (the attributes its rules read,
    the best latency with a world, an empty seat_opened); the same run without the rule set
    has the columns of a run without rules."""
    result, _ = _run("duel_short_ping")
    assert result.participants is not None
    columns = list(result.participants.columns)
    assert columns[-3:] == ["latency_ms", "best_latency_ms", "seat_opened"]
    assert result.participants["seat_opened"].isna().all()
    assert (result.participants["best_latency_ms"] <= result.participants["latency_ms"]).all()
    tiers, _ = _run("duel_same_tier")
    assert tiers.participants is not None
    assert list(tiers.participants.columns) == [
        *RECORD_COLUMNS["participants"],
        "attr_tier",
        "seat_opened",
    ]
    data = _scenario("duel_same_tier").to_dict()
    del data["matchmaker"]["rules"], data["attributes"]
    data["matchmaker"]["algorithm"] = "exact"
    plain = simulate(Scenario.from_dict(data))
    assert plain.participants is not None
    assert list(plain.participants.columns) == list(RECORD_COLUMNS["participants"])


def test_streamed_1v1_records_carry_the_rule_columns_and_check_the_same(tmp_path: Path) -> None:
    scenario = _scenario("duel_close_elo_exact")
    streamed = Scenario.from_dict(scenario.to_dict() | {"records": {"stream": True}})
    simulate(streamed, records_dir=tmp_path)
    frames = read_records(tmp_path)
    memory, _ = _run("duel_close_elo_exact")
    assert memory.participants is not None
    pd.testing.assert_frame_equal(
        frames["participants"], memory.participants, check_dtype=False, check_exact=True
    )
    report = check_run(
        CASES["duel_close_elo_exact"][1], frames["games"], frames["participants"], frames["waits"]
    )
    assert report.violations == [] and report.games == len(memory.games)  # type: ignore[arg-type]
