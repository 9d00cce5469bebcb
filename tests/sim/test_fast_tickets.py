"""A group pass's tickets formed once a pass (lobbysim/sim/fast/tickets.py) and split_teams with
its sizes' splits kept, against the general paths, bit for bit."""

from __future__ import annotations

import dataclasses
import math
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
from lobbysim.sim.parties import Parties, _splits, split_teams


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


def _split_teams_general(
    sizes: list[int], totals: list[float], team_size: int, max_premade_gap: float = math.inf
) -> list[int] | None:
    """split_teams as it was before its sizes' splits were kept: every array anew."""
    n = len(sizes)
    bits = _splits(n)
    size = np.asarray(sizes, dtype=np.int64)
    filled = size[0] + bits @ size[1:]
    premade = np.where(size >= 2, size, 0)
    mine = premade[0] + bits @ premade[1:]
    total = np.asarray(totals, dtype=np.float64)
    gap = np.abs(2.0 * (total[0] + bits @ total[1:]) - total.sum())
    fine = (filled == team_size) & (np.abs(2 * mine - premade.sum()) <= max_premade_gap)
    if not fine.any():
        return None
    best = int(np.argmin(np.where(fine, gap, np.inf)))
    return [0, *(1 - bits[best]).tolist()]


def test_split_teams_splits_as_it_did_with_every_array_anew() -> None:
    """Ties (equal totals, equal ratings), infinite and NaN totals, no split within the
    parity limit, the same sizes again and again with other totals."""
    rng = random.Random(9)
    found = 0
    for case in range(20_000):
        team = rng.choice([2, 4, 5, 5, rng.randint(2, 6)])
        sizes: list[int] = []
        while sum(sizes) < 2 * team:
            sizes.append(rng.randint(1, min(team, 2 * team - sum(sizes))))
        if rng.random() < 0.3:
            rng.shuffle(sizes)
        kinds = [lambda: round(rng.gauss(0, 2), rng.choice([0, 1])), lambda: 1.0]
        kinds.append(lambda: rng.choice([math.inf, -math.inf, math.nan, 0.0]))
        weights = [0.8, 0.15, 0.05 if rng.random() < 0.2 else 0.0]
        totals = [rng.choices(kinds, weights)[0]() * s for s in sizes]
        gap = rng.choice([0.0, 1.0, 2.0, 3.0, math.inf, math.nan])
        with np.errstate(invalid="ignore"):
            expected = _split_teams_general(sizes, totals, team, gap)
            got = split_teams(sizes, totals, team, gap)
        assert got == expected, case
        found += got is not None
    assert found > 5000


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
