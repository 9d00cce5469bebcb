"""Every game of runs under FlexMatch rule sets keeps every rule when it forms and at each
back-fill, as the independent checker (tests/flexmatch/rule_checker.py, written from the
FlexMatch guide) reads them from the records; and the checker can fail: it catches planted
violations, a tightened limit, a seat opened by no quit, and refuses what it does not read.

The runs are short (minutes of simulated time) with quits likely, so that back-fills happen;
their attributes are bound so that matches can form in that time (a set's rules are its own).
"""

from __future__ import annotations

import copy
import functools
import json
import math
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


def _arena(d: dict[str, Any]) -> None:
    # a set modelled on a published one (its README names it), with comments in its JSON
    d["name"] = "arena_rotation"
    d["arrivals"] = {"name": "poisson", "rate": 20.0}
    d["world"] = {
        "data_centres": ["us_east", "eu_west"],
        "regions": [
            {"name": "na", "share": 0.6, "utc_offset_hours": -5},
            {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
        ],
        "latency": {"name": "matrix", "base_ms": {"na": [35, 95], "eu": [95, 25]}, "spread": 0.3},
    }
    attributes = {
        "veterancy": {"source": "rating", "scale": 10, "offset": 20},
        "rulesets": {"values": {"classic": 0.6, "hardcore": 0.5}},
        "arenaLove": {"values": {"quarry": 60, "docks": 40}, "sd": 15},
        "arenasOk": {"values": {"quarry": 0.7, "docks": 0.5}},
    }
    d["matchmaker"] = {"rules": {"flexmatch": str(MODELLED), "attributes": attributes}}
    d["game"] = {"length": 5.0, "quit_rate": 0.1}


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


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_game_keeps_every_rule_when_formed_and_backfilled(name: str) -> None:
    report = _check(name)
    assert report.violations == []
    assert report.games >= 5, f"{name}: only {report.games} games"
    assert report.rules_checked >= report.games
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


def test_the_checker_catches_a_changed_value_of_a_backfilled_seat() -> None:
    games, participants, waits = _frames("latency_platform")
    start = participants["game_id"].map(games.set_index("game_id")["start"])
    seat = participants.index[participants["joined"] > start][0]
    participants.loc[seat, "latency_ms"] = 10_000.0
    report = check_run(CASES["latency_platform"][1], games, participants, waits)
    found = [v for v in report.violations if v.rule == "LowLatency"]
    assert found and found[0].when == "backfill" and found[0].value == 10_000.0
    assert found[0].limit in (60.0, 100.0, 150.0)


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
    compound["rules"].append({"name": "Either", "type": "compound", "statement": "or(a, b)"})
    with pytest.raises(NotUnderstood, match="compound"):
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
