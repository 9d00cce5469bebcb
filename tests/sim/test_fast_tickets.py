"""A group pass's tickets formed once a pass (lobbysim/sim/fast/tickets.py), against the general
path, bit for bit (the team split with its sizes' splits kept: tests/policies/test_teams.py)."""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario
from lobbysim.sim.entities import Player
from lobbysim.sim.fast import backfill
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.fast.tickets import PassTickets
from lobbysim.sim.parties import Parties


def _players(rng: random.Random, n: int) -> tuple[list[Player], dict[int, list[Player]]]:
    """``n`` waiting players, some in parties (whole here or not), and every party's members
    (some of them elsewhere: playing, or gone)."""
    players = [Player(pid, 0.0, 0.0, 1.0, True, 5, 1e9) for pid in range(n)]
    members: dict[int, list[Player]] = {}
    k, party = 0, 0
    while k < n:
        size = rng.choice([1, 1, 1, 2, 3, 4, 5])
        here = players[k : k + size]
        k += size
        if size > 1:
            elsewhere = [Player(-1, 0.0, 0.0, 1.0, True, 5, 1e9)] * (rng.random() < 0.2)
            members[party] = here + elsewhere
            for p in here:
                p.party = party
            party += 1
    rng.shuffle(players)  # members of a party anywhere in the queue
    return players, members


def test_the_tickets_of_a_subset_are_read_off_the_passs_tickets() -> None:
    """PassTickets.among against Parties.tickets of each subset of the pass's players."""
    rng = random.Random(5)
    parties = Parties.__new__(Parties)
    seen = 0
    for case in range(800):
        players, members = _players(rng, rng.choice([0, 1, 2, 10, 60, rng.randint(0, 400)]))
        parties.members = members
        tickets = PassTickets(players, members)
        assert not tickets.overfull
        assert tickets.tickets == parties.tickets(players)
        for _ in range(3):
            share = rng.choice([0.0, 0.5, 0.9, 1.0])
            cand = np.array([k for k in range(len(players)) if rng.random() < share], dtype=np.intp)
            ids = tickets.among(cand)
            assert ids is not None
            expected = [
                [int(cand[k]) for k in t] for t in parties.tickets([players[k] for k in cand])
            ]
            assert [tickets.tickets[t] for t in ids] == expected, case
            seen += len(ids)
    assert seen > 10_000


def test_a_party_with_more_players_here_than_members_is_left_to_the_pass() -> None:
    players = [Player(pid, 0.0, 0.0, 1.0, True, 5, 1e9) for pid in range(4)]
    for p in players[:3]:
        p.party = 0
    tickets = PassTickets(players, {0: players[:2]})
    assert tickets.overfull and tickets.among(np.arange(2, dtype=np.intp)) is None


def _bench_scenario(concurrent: int, minutes: float, parties: bool) -> Scenario:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        from bench_regions import scenario_for
    finally:
        sys.path.pop(0)
    scenario = scenario_for(concurrent, minutes, parties)
    records = dataclasses.replace(scenario.records, stream=False, ratings_every=5.0)
    return scenario.replace(records=records, horizon=120.0, warmup=20.0)


@pytest.mark.parametrize(
    "off", [("group_tickets",), ("backfill_lists",), ("group_tickets", "backfill_lists")]
)
def test_the_regions_benchmarks_lobby_gives_the_same_records_kernel_by_kernel(
    off: tuple[str, ...],
) -> None:
    """bench_regions' lobby (parties, three regions, latency limits; small) with every kernel
    and with some of them off: the same records and metrics."""
    scenario = _bench_scenario(1500, 30.0, True)
    fast = simulate(scenario, 3)
    some = simulate(scenario, 3, plan=FastPlan.without(*off))
    assert len(fast.games) > 100 and (fast.participants.joined > 0).any()
    for kind in ("games", "participants", "waits", "ratings", "players"):
        a = getattr(fast, kind).to_csv(index=False)
        assert a == getattr(some, kind).to_csv(index=False), kind
    assert repr(fast.metrics) == repr(some.metrics)


@pytest.mark.slow
@pytest.mark.parametrize("parties", [True, False])
@pytest.mark.parametrize("sorted_from", [None, 1])
def test_the_regions_benchmarks_lobby_gives_the_same_records_with_the_plan_off(
    parties: bool, sorted_from: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the kernels and with the plan off: the same records and metrics (``sorted_from``
    1: every one-seat back-fill walks the candidates in order of distance)."""
    if sorted_from is not None:
        monkeypatch.setattr(backfill, "SORTED_FROM", sorted_from)
    scenario = _bench_scenario(1500, 30.0, parties)
    fast, plain = simulate(scenario, 4), simulate(scenario, 4, plan=FastPlan.off())
    late = fast.participants.joined > fast.participants.game_id.map(
        fast.games.set_index("game_id").start
    )
    assert late.sum() > 50  # back-filled seats
    for kind in ("games", "participants", "waits", "ratings", "players"):
        a = getattr(fast, kind).to_csv(index=False)
        assert a == getattr(plain, kind).to_csv(index=False), kind
    assert repr(fast.metrics) == repr(plain.metrics)
