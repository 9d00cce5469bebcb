"""The records of a run with a world and parties: each game's data centre, each seat's region,
latency and party, each queueing spell's region and party, each player's region.

The columns are checked against a trace of the run (every seat the world notes with its data
centre, every game start with each player's party at that moment), and the per-region and the
parties' queue times (metrics) must come out of the records alone. A run without a world or
parties has the columns it always had (the byte-identical records of every bundled scenario
are checked by ``scripts/hash_results.py``).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.records.files import csv_text, record_frame
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS, record_schema
from lobbysim.scenario import Scenario
from lobbysim.sim.parties import Parties
from lobbysim.sim.world import World
from tests.sim.lobby_helpers import LIMITS, WORLD

PARTIES = {"sizes": [[1, 0.55], [2, 0.25], [3, 0.12], [4, 0.08]], "skill": "max"}


def _scenario(mode: str, world: bool = True, parties: bool = True) -> dict[str, Any]:
    game: dict[str, Any] = {"length": 8, "quit_rate": 0.03}
    if mode == "team":
        game = {"mode": "team", "team_size": 4, "length": 10, "quit_rate": 0.02, "backfill": True}
    elif mode == "ffa":
        game = {"mode": "ffa", "ffa_size": 6, "length": 10, "quit_rate": 0.02, "backfill": True}
    data: dict[str, Any] = {
        "horizon": 300,
        "warmup": 40,
        "arrivals": {"name": "poisson", "rate": 10.0},
        "population": {"session_games_mean": 4, "patience_mean": 4},
        "game": game,
        "matchmaker": {"threshold": [[0, 0.4], [1, 0.0]]},
    }
    if world:
        data["world"] = copy.deepcopy(WORLD)
        data["matchmaker"] |= copy.deepcopy(LIMITS)
    if parties:
        data["parties"] = copy.deepcopy(PARTIES)
    return data


def _trace(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Record every seat the world notes (its player, data centre and time, with the world)
    and every game start the parties note (each player's party at that moment)."""
    trace: dict[str, list[Any]] = {"seated": [], "started": []}
    seated, started = World.seated, Parties.started

    def note_seat(self: World, pid: int, data_centre: int, now: float) -> None:
        trace["seated"].append((self, pid, data_centre, now))
        seated(self, pid, data_centre, now)

    def note_start(self: Parties, players: Any, teams: Any, now: float) -> None:
        trace["started"] += [(p.pid, now, p.party) for p in players]
        started(self, players, teams, now)

    monkeypatch.setattr(World, "seated", note_seat)
    monkeypatch.setattr(Parties, "started", note_start)
    return trace


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["1v1", "team", "ffa"])
def test_each_seat_has_the_region_and_latency_the_run_gave_it(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = _trace(monkeypatch)
    scenario = Scenario.from_dict(_scenario(mode, parties=mode != "1v1"))
    run = simulate(scenario, 5)
    assert run.games is not None and run.participants is not None
    assert run.waits is not None and run.players is not None
    schema = record_schema(world=True, parties=mode != "1v1", teams=mode == "team")
    for kind in schema:
        assert list(getattr(run, kind).columns) == list(schema[kind]), kind
    world = trace["seated"][0][0]
    noted = {
        (pid, now): (WORLD["data_centres"][dc], world.latency_of(pid, dc), world.region_name(pid))
        for _, pid, dc, now in trace["seated"]
    }
    seats = run.participants
    hosted = seats.game_id.map(run.games.set_index("game_id").data_centre)
    recorded = zip(
        seats.player_id, seats.joined, hosted, seats.latency_ms, seats.region, strict=True
    )
    assert len(seats) > 1000 and hosted.nunique() == 3
    for pid, joined, dc, latency, region in recorded:  # every seat, back-filled ones too
        assert noted[(pid, joined)] == (dc, latency, region)
    # the players' regions; each region's queue time (the world's metric) from the records
    region = run.players.set_index("player_id").region
    assert (run.waits.region == run.waits.player_id.map(region)).all()
    start = scenario.metrics_start
    for name in ("na", "eu", "apac"):
        mine = run.waits[(run.waits.region == name) & (run.waits.enqueued >= start)]
        matched = mine.wait[mine.outcome == "matched"]
        got = run.metrics[f"queue_time_mean@{name}"]
        assert len(matched) > 50 and math.isclose(got, matched.mean(), rel_tol=1e-12), name


@pytest.mark.parametrize("mode", ["team", "ffa"])
def test_each_seat_and_spell_has_the_party_it_was_taken_with(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = _trace(monkeypatch)
    scenario = Scenario.from_dict(_scenario(mode, world=mode == "team"))
    run = simulate(scenario, 6)
    assert run.participants is not None and run.waits is not None and run.games is not None
    noted = {(pid, now): party for pid, now, party in trace["started"]}
    seats = run.participants
    began = seats.game_id.map(run.games.set_index("game_id").start)
    first = seats[seats.joined == began]
    assert 0.2 < first.party_id.notna().mean() < 0.9
    for pid, joined, party in zip(first.player_id, first.joined, first.party_id, strict=True):
        assert noted[(pid, joined)] == (-1 if pd.isna(party) else party)
    if mode == "team":  # a party's members come from one region (there is a world)
        assert first.region.nunique() == 3
        assert (first.dropna(subset="party_id").groupby("party_id").region.nunique() == 1).all()
    if mode == "team":  # a party sits on one team
        assert (
            first.dropna(subset="party_id").groupby(["game_id", "party_id"]).team.nunique() == 1
        ).all()
    late = seats[seats.joined > began]  # back-filled: solo players only
    assert len(late) > 20 and late.party_id.isna().all()
    # a party's members queue under its id; the parties' queue time comes out of the records
    w = run.waits
    members = set(w.player_id[w.party_id.notna()])
    start = scenario.metrics_start
    spells = w[(w.enqueued >= start) & (w.outcome == "matched") & w.player_id.isin(members)]
    assert math.isclose(run.metrics["party_queue_time_mean"], spells.wait.mean(), rel_tol=1e-12)
    assert (w.groupby("party_id").player_id.nunique() >= 2).all()  # a party of one is no party


@pytest.mark.slow
def test_streamed_records_have_the_same_columns_and_values(tmp_path: Path) -> None:
    data = _scenario("team") | {"records": {"stream": True}}
    streamed = simulate(Scenario.from_dict(data), 2, records_dir=tmp_path)
    data["records"] = {}
    memory = simulate(Scenario.from_dict(data), 2)
    back = read_records(tmp_path)
    for kind in ("games", "participants", "waits"):
        assert back[kind].to_csv(index=False) == getattr(memory, kind).to_csv(index=False), kind
    players = back["players"].sort_values("player_id", ignore_index=True)
    assert players.to_csv(index=False) == memory.players.to_csv(index=False)  # type: ignore[union-attr]
    assert repr(streamed.metrics) == repr(memory.metrics)
    only = read_records(
        tmp_path, ["participants"], columns={"participants": ["game_id", "party_id"]}
    )
    assert list(only["participants"].columns) == ["game_id", "party_id"]


def test_a_run_without_a_world_or_parties_has_the_columns_it_always_had(tmp_path: Path) -> None:
    data = _scenario("team", world=False, parties=False) | {"records": {"stream": True}}
    simulate(Scenario.from_dict(data), 2, records_dir=tmp_path)
    back = read_records(tmp_path)
    schema = record_schema(teams=True)  # a team game's records add TEAM_COLUMNS, no more
    for kind, columns in RECORD_COLUMNS.items():
        assert list(back[kind].columns) == list(schema[kind]), kind
        assert list(columns) == list(schema[kind])[: len(columns)]
    with pytest.raises(KeyError, match="no column 'region'"):
        read_records(tmp_path, ["waits"], columns={"waits": ["player_id", "region"]})


def test_a_text_that_needs_quoting_is_written_as_pandas_writes_it() -> None:
    schema = record_schema(world=True, parties=True)["waits"]
    rows = [(1, 0.5, 1.0, "matched", 0.5, "new york, ny", 3), (2, 0.0, 2.0, "x", 2.0, "eu", None)]
    expected = record_frame("waits", rows, schema).to_csv(header=False, index=False)
    assert csv_text("waits", rows, schema) == expected
    assert '"new york, ny"' in expected
