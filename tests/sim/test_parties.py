"""Parties: one ticket each, never split, back-filled only whole; their skill and their teams.

The invariants are checked on traces of whole runs (team and free-for-all games with quits and
back-fill): every game's seats as the games start them, each seat's party at that moment, and
the queueing spells of the records.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from lobbysim.cli.main import main
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario
from lobbysim.sim import group_games, parties
from lobbysim.sim.parties import party_skill

PARTIES = {"sizes": [[1, 0.55], [2, 0.25], [3, 0.12], [4, 0.08]], "skill": "max"}


def _scenario(mode: str, **party: Any) -> dict[str, Any]:
    game: dict[str, Any] = {"length": 10, "quit_rate": 0.02, "backfill": True}
    game |= {"mode": "team", "team_size": 4} if mode == "team" else {"mode": "ffa", "ffa_size": 6}
    return {
        "horizon": 400,
        "warmup": 40,
        "arrivals": {"name": "poisson", "rate": 10.0},
        "population": {"session_games_mean": 4, "patience_mean": 4},
        "game": game,
        "matchmaker": {"threshold": [[0, 0.4], [1, 0.0]]},
        "parties": copy.deepcopy(PARTIES) | party,
    }


def test_a_partys_skill_follows_its_rule() -> None:
    means = [1.0, 4.0, -2.0]
    assert party_skill(means, "average") == 1.0
    assert party_skill(means, "max") == 4.0
    assert party_skill(means, "min") == -2.0
    assert party_skill(means, "average_plus", 0.5) == 2.0  # + 0.5 per member beyond the first
    assert party_skill([3.0], "average_plus", 0.5) == 3.0


def _trace(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Capture every party formed, every game started and every seat taken."""
    seen: dict[str, list[Any]] = {"formed": [], "games": [], "seats": []}
    form = parties.Parties.form
    start_group = group_games.GroupGames.start_group
    seat = group_games.GroupGames._seat

    def forming(self: Any, players: Any) -> None:
        form(self, players)
        if len(players) >= 2:
            seen["formed"].append([(p.pid, p.games_left, p.leave_at) for p in players])

    def starting(self: Any, members: Any, mu: Any, quality: float, *args: Any) -> None:
        teams = args[1] if len(args) > 1 else None
        mates = {
            m.player.party: [p.pid for p in self._parties.members.get(m.player.party, [])]
            for m in members
            if m.player.party >= 0
        }
        seen["games"].append(([m.pid for m in members], mates, teams))
        start_group(self, members, mu, quality, *args)

    def seating(self: Any, game: Any, member: Any, team: Any) -> None:
        seen["seats"].append((game.start, self.env.now, member.player.party))
        seat(self, game, member, team)

    monkeypatch.setattr(parties.Parties, "form", forming)
    monkeypatch.setattr(group_games.GroupGames, "start_group", starting)
    monkeypatch.setattr(group_games.GroupGames, "_seat", seating)
    return seen


@pytest.mark.parametrize("mode", ["team", "ffa"])
def test_no_party_is_ever_split_nor_back_filled_in_part(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _trace(monkeypatch)
    result = simulate(Scenario.from_dict(_scenario(mode)), 3)
    assert len(seen["formed"]) > 100 and len(seen["games"]) > 200
    for members in seen["formed"]:  # a party arrives together and shares one session
        assert len({(g, t) for _, g, t in members}) == 1
    in_party = 0
    for pids, mates, teams in seen["games"]:
        for party, party_pids in mates.items():
            assert set(party_pids) <= set(pids), (party, party_pids, pids)  # whole
            if teams is not None:  # and on one team
                assert len({teams[pids.index(p)] for p in party_pids}) == 1
            in_party += len(party_pids)
    assert in_party > 200
    backfilled = [party for start, now, party in seen["seats"] if now > start]
    assert len(backfilled) > 10 and all(party < 0 for party in backfilled)
    assert result.metrics["party_split_games"] == 0.0
    assert 0.1 < result.metrics["premade_share"] < 0.9
    assert result.metrics["party_queue_time_mean"] > 0


def test_a_party_gives_up_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """A party member whose patience runs out takes the party's waiting members along: after
    the give-up, none of the members it had then is still in the queue."""
    from lobbysim.sim import sessions

    renege = sessions.Lobby._renege
    left_behind: list[Any] = []
    together = [0]

    def reneging(self: Any, waiting: Any, queued: Any = None) -> None:
        party = waiting.player.party
        members = self._parties.members.get(party, []) if party >= 0 else []
        mates = [p.pid for p in members if p.pid != waiting.pid and p.pid in self.pool]
        renege(self, waiting, queued)
        if mates:
            together[0] += 1
            left_behind.extend(pid for pid in mates if pid in self.pool)

    monkeypatch.setattr(sessions.Lobby, "_renege", reneging)
    data = _scenario("team")
    data["population"]["patience_mean"] = 1.0
    result = simulate(Scenario.from_dict(data), 5)
    assert together[0] > 20 and left_behind == []
    assert result.metrics["abandonment_rate"] > 0.1


def test_team_parity_zero_gives_equal_premade_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _trace(monkeypatch)
    simulate(Scenario.from_dict(_scenario("team", parity=[[0, 0]])), 6)
    assert len(seen["games"]) > 100
    for pids, mates, teams in seen["games"]:
        premade = [0, 0]
        for party_pids in mates.values():
            if len(party_pids) >= 2:
                premade[teams[pids.index(party_pids[0])]] += len(party_pids)
        assert premade[0] == premade[1]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"parties": {"sizes": [[1, 0.5], [2, 0.4]]}}, "parties.sizes: the shares must sum"),
        (
            {"game": {"mode": "team", "team_size": 2}, "parties": {"sizes": [[1, 0.5], [3, 0.5]]}},
            "parties.sizes: a party of 3 does not fit a team of 2",
        ),
        ({"parties": {"sizes": [[1, 1.0]]}}, "parties: parties play team or free-for-all games"),
        (
            {"game": {"mode": "ffa"}, "parties": {"sizes": [[1, 1.0]], "parity": [[0, 1]]}},
            "parties.parity: team games only",
        ),
        (
            {"game": {"mode": "ffa"}, "parties": {"sizes": [[1, 1.0]], "skill": "median"}},
            "parties.skill: expected one of",
        ),
    ],
)
def test_bad_parties_are_one_line_naming_the_field(
    data: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"horizon": 60, "warmup": 5, **data}))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["team", "ffa"])
def test_parties_and_latency_limits_give_the_same_records_with_the_plan_off(mode: str) -> None:
    """The back-fill kernel on lists, asking whom a seat is open to (a solo player, within
    their limits at the game's data centre), seats whom the arrays seat."""
    from lobbysim.sim.fast.plan import FastPlan

    data = _scenario(mode) | {
        "world": {
            "data_centres": ["a", "b"],
            "regions": [{"name": "x", "share": 0.6}, {"name": "y", "share": 0.4}],
            "latency": {"name": "matrix", "base_ms": {"x": [30, 90], "y": [90, 30]}},
        }
    }
    data["matchmaker"]["max_latency_ms"] = [[0, 60], [1, 120]]
    scenario = Scenario.from_dict(data)
    fast, plain = simulate(scenario, 8), simulate(scenario, 8, plan=FastPlan.off())
    late = fast.participants.joined > fast.participants.game_id.map(
        fast.games.set_index("game_id").start
    )
    assert late.sum() > 10  # back-filled seats
    for kind in ("games", "participants", "waits", "players"):
        assert getattr(fast, kind).to_csv() == getattr(plain, kind).to_csv(), kind
    assert repr(fast.metrics) == repr(plain.metrics)


def test_base_crews_visit_together_and_play_as_parties(monkeypatch: pytest.MonkeyPatch) -> None:
    """Members of a base cut into crews: a follower's visits start with its leader's (with the
    leader's session), a crew queues as a party, and the rematch rule never bars crew mates."""
    from lobbysim.sim import sessions

    visits: dict[int, list[float]] = {}
    visit = sessions.Lobby.visit

    def noting(self: Any, player: Any, games: int, minutes: float) -> None:
        visits.setdefault(player.pid, []).append(self.env.now)
        visit(self, player, games, minutes)

    monkeypatch.setattr(sessions.Lobby, "visit", noting)
    data = {
        "horizon": 1440,
        "warmup": 120,
        "arrivals": {"name": "none"},
        "population": {"session_games_mean": 3, "patience_mean": 8},
        "game": {"mode": "team", "team_size": 3, "length": 10, "quit_rate": 0.01},
        "base": {"size": 1500, "visits": {"name": "daily", "per_day": 2.0}},
        "matchmaker": {"tick": 0.5, "wake_on_arrival": False},
        "parties": {"sizes": [[1, 0.5], [2, 0.3], [3, 0.2]]},
    }
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    scenario = Scenario.from_dict(data)
    assert scenario.matchmaker.rematch_games is None  # 1 with a base: the rule is on
    sim = LobbySimulation(scenario, Streams(2))
    sim.run()
    assert sim.base is not None
    crews = sim.base._crews
    assert len(crews) > 100
    together = 0
    for leader, crew in crews.items():
        led = set(visits.get(leader, []))
        for follower in crew[1:]:
            assert set(visits.get(follower.pid, [])) <= led
            together += len(visits.get(follower.pid, []))
    assert together > 300
    from lobbysim.experiments.simulation import collect

    metrics = collect(sim, 2).metrics
    assert metrics["party_split_games"] == 0.0
    assert metrics["premade_share"] > 0.3 and metrics["abandonment_rate"] < 0.3


def test_a_party_has_one_patience_per_queueing_round() -> None:
    """The first member to queue sets the party's give-up time; the others share it (not a
    minimum of their own draws); a game started by the party begins a new round."""
    from lobbysim.scenario import PartiesConfig
    from lobbysim.sim.entities import Player
    from lobbysim.streams import Streams

    book = parties.Parties(PartiesConfig(sizes=((2.0, 1.0),)), Streams(1), 0.0)
    a, b = (Player(k, 0.0, 0.0, 1.0, True, 3, 1e9) for k in range(2))
    book.form([a, b])
    assert book.patience(a.party, 10.0, 4.0) == 4.0
    assert book.patience(b.party, 11.0, 0.5) == 3.0  # the party's deadline, 14.0
    book.started([a, b], [0, 0], 12.0)
    assert book.patience(a.party, 20.0, 2.0) == 2.0  # a new round
