"""A persistent player base: members keep one id, their ratings persist, they join and leave."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.players.visits import VISITS, Daily
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import LEFT, Player
from lobbysim.streams import Streams

DAY = 1440.0


def base_scenario(days: float = 2.0, **base: Any) -> Scenario:
    """A small lobby of members only: 10-minute games, visits of ~4 games."""
    return Scenario.from_dict(
        {
            "name": "base",
            "horizon": days * DAY,
            "warmup": 0,
            "arrivals": {"name": "none"},
            "population": {"session_games_mean": 4, "patience_mean": 10},
            "game": {"length": 10},
            "matchmaker": {"policy": "draw_chance", "tick": 1.0, "wake_on_arrival": False},
            "records": {"ratings_every": 720},
            "base": {"size": 150, "visits": {"name": "daily", "per_day": 3.0}, **base},
        }
    )


def traced(scenario: Scenario, seed: int = 1) -> tuple[LobbySimulation, list[tuple]]:
    """Run ``scenario``, logging (pid, visit, 'start'/'end', time, mean, variance) per visit."""
    sim = LobbySimulation(scenario, Streams(seed))
    log: list[tuple] = []
    lobby, base = sim.lobby, sim.base
    assert base is not None

    def belief(player: Player) -> tuple[float, float]:
        sim.apply_pending()  # every game finished so far reaches the raters
        ids = np.array([player.pid])
        return float(sim.driver.means(ids)[0]), float(sim.driver.variances(ids)[0])

    visit, ended = lobby.visit, base.visit_ended

    def visit_logged(player: Player, games: int, minutes: float) -> None:
        log.append((player.pid, player.visits + 1, "start", sim.env.now, *belief(player)))
        visit(player, games, minutes)

    def ended_logged(player: Player) -> None:
        log.append((player.pid, player.visits, "end", sim.env.now, *belief(player)))
        ended(player)

    lobby.visit = visit_logged  # type: ignore[method-assign]
    lobby.on_visit_end = ended_logged
    sim.run()
    return sim, log


def test_a_member_starts_each_visit_with_the_belief_they_ended_the_last_one_with() -> None:
    _, log = traced(base_scenario(days=2.0))
    trace = pd.DataFrame(log, columns=["pid", "visit", "what", "time", "mean", "var"])
    ends = trace[trace.what == "end"].set_index(["pid", "visit"])
    starts = trace[(trace.what == "start") & (trace.visit >= 2)].copy()
    starts["visit"] -= 1  # the visit before
    starts = starts.set_index(["pid", "visit"])
    joined = starts.merge(ends, left_index=True, right_index=True, suffixes=("_next", "_prev"))
    assert len(joined) > 300  # many members came back
    # Exactly the belief they left with: no reset to the prior, no drift while offline.
    np.testing.assert_array_equal(joined.mean_next.to_numpy(), joined.mean_prev.to_numpy())
    np.testing.assert_array_equal(joined.var_next.to_numpy(), joined.var_prev.to_numpy())
    assert (joined.time_next > joined.time_prev).all()
    # ... and the beliefs did learn: the variance after visits is well below the prior's.
    first_starts = trace[(trace.what == "start") & (trace.visit == 1)]
    assert joined.var_prev.mean() < 0.5 * first_starts["var"].mean()


def test_members_keep_one_id_and_their_games_add_up_across_visits() -> None:
    sim, _ = traced(base_scenario(days=2.0))
    result_players = [p for p in sim.players if p is not None]
    members = [p for p in result_players if p.member]
    assert len(members) == 150 == sim.base.members
    assert max(p.visits for p in members) >= 4
    # The records' seats of a member are all under the one id, and count every visit's games.
    sim2 = simulate(base_scenario(days=2.0), 1)
    seats = sim2.participants.groupby("player_id").size()
    players = sim2.players.set_index("player_id")
    np.testing.assert_array_equal(seats.to_numpy(), players.loc[seats.index, "games"].to_numpy())
    assert players.registered.all()
    assert set(players.state) <= {"offline", "waiting", "playing", "left"}


def test_a_run_with_a_base_is_reproducible_and_streams_the_same_records(tmp_path: Any) -> None:
    scenario = base_scenario(days=1.0)
    a, b = simulate(scenario, 5), simulate(scenario, 5)
    pd.testing.assert_frame_equal(a.games, b.games)
    pd.testing.assert_frame_equal(a.players, b.players)
    streamed = scenario.replace(records=dataclass_replace(scenario.records, stream=True))
    c = simulate(streamed, 5, records_dir=tmp_path / "rec")
    on_disk = pd.read_csv(tmp_path / "rec" / "players.csv").sort_values("player_id")
    np.testing.assert_array_equal(on_disk.player_id.to_numpy(), a.players.player_id.to_numpy())
    np.testing.assert_array_equal(on_disk.games.to_numpy(), a.players.games.to_numpy())
    assert c.metrics == a.metrics


def dataclass_replace(obj: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(obj, **changes)


def test_newcomers_join_at_their_rate_and_play_their_first_visit_at_once() -> None:
    days, per_day = 6.0, 40.0
    sim, log = traced(base_scenario(days=days, newcomers_per_day=per_day), seed=2)
    joined = sim.base.members - 150
    expected = per_day * days
    assert abs(joined - expected) < 4 * math.sqrt(expected), (joined, expected)
    trace = pd.DataFrame(log, columns=["pid", "visit", "what", "time", "mean", "var"])
    newcomers = trace[(trace.pid >= 150) & (trace.what == "start") & (trace.visit == 1)]
    assert len(newcomers) == joined
    # A newcomer's first visit starts with the prior: nobody has rated them yet.
    players = {p.pid: p for p in sim.players if p is not None}
    mu0 = np.array([players[pid].mu0 for pid in newcomers.pid])
    np.testing.assert_array_equal(newcomers["mean"].to_numpy(), mu0)


def test_members_leave_for_good_at_their_hazard_and_never_visit_after() -> None:
    days, leave = 4.0, 0.25
    sim, log = traced(base_scenario(days=days, leave_per_day=leave), seed=3)
    members = [p for p in sim.players if p is not None and p.member]
    left = [p for p in members if p.state == LEFT]
    trace = pd.DataFrame(log, columns=["pid", "visit", "what", "time", "mean", "var"])
    starts = trace[trace.what == "start"].groupby("pid").time.max()
    for p in members:
        if p.pid in starts.index:
            assert starts[p.pid] < p.leaves_base_at
    # Lifetimes are exponential at the hazard. A member leaves at the end of their last visit
    # before their lifetime ends (when the next visit would come too late), on average a visit
    # gap (8 hours here) before it, so those who have left are about those whose lifetime ended.
    ended = sum(p.leaves_base_at <= days * DAY for p in members)
    share = 1 - math.exp(-leave * days)
    assert abs(ended / len(members) - share) < 4 * math.sqrt(share * (1 - share) / len(members))
    assert 0.7 * ended <= len(left) <= 1.3 * ended


def test_the_daily_model_visits_at_its_rate_and_follows_the_profile() -> None:
    profile = [0.0] * 6 + [1.0] * 12 + [3.0] * 6
    model = VISITS.create("daily", {"per_day": 2.0, "profile": profile, "start_hour": 5.5})
    rng = np.random.default_rng(7)
    rates = np.full(400, 2.0)
    now = np.zeros(400)
    hours = []
    visits = 0
    while now.min() < 100 * DAY:
        now = np.array(
            [model.next_visits(rng, t, r[None])[0] for t, r in zip(now, rates, strict=True)]
        )
        keep = now < 100 * DAY
        visits += int(keep.sum())
        hours.append(((now[keep] / 60.0 + 5.5) % 24).astype(int))
    per_player_per_day = visits / 400 / 100
    assert abs(per_player_per_day - 2.0) < 0.03  # sd of the estimate: sqrt(2/40000) ~ 0.007
    share = np.bincount(np.concatenate(hours), minlength=24) / visits
    expected = np.array(profile) / sum(profile)
    np.testing.assert_allclose(share, expected, atol=0.005)


def test_the_daily_model_draws_gamma_rates_and_poisson_joins() -> None:
    model = Daily(per_day=1.5, shape=3.0)
    rng = np.random.default_rng(3)
    rates = model.rates(rng, 200_000)
    assert abs(rates.mean() - 1.5) < 0.01
    assert abs(rates.var() - 1.5**2 / 3.0) < 0.02
    equal = Daily(per_day=1.5, shape=math.inf).rates(rng, 10)
    np.testing.assert_array_equal(equal, np.full(10, 1.5))
    joins = model.joins(rng, 0.0, 200 * DAY, 10.0)
    assert abs(len(joins) - 2000) < 4 * math.sqrt(2000)
    assert np.all(np.diff(joins) >= 0) and joins.min() >= 0 and joins.max() < 200 * DAY


@pytest.mark.parametrize(
    ("base", "message"),
    [
        ({"size": 0}, "base.size: expected a whole number >= 1, got 0"),
        ({"newcomers_per_day": -1}, "base.newcomers_per_day: expected a number >= 0, got -1"),
        ({"leave_per_day": -0.5}, "base.leave_per_day: expected a number >= 0, got -0.5"),
        ({"newcomer_games": 0}, "base.newcomer_games: expected a whole number >= 1, got 0"),
    ],
)
def test_bad_base_fields_are_named(base: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict({"base": base})
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("visits", "message"),
    [
        ({"name": "dayly"}, "base.visits: unknown visit model 'dayly'"),
        ({"name": "daily", "per_day": 0}, "base.visits: visit model 'daily': per_day must be"),
        ({"name": "daily", "profile": [1, 2]}, "profile must have 24 hourly weights, got 2"),
        ({"name": "daily", "profile": [0] * 24}, "profile must have a positive weight"),
        ({"name": "daily", "shape": -1}, "shape must be a number > 0"),
    ],
)
def test_bad_visit_models_are_named(visits: dict[str, Any], message: str) -> None:
    scenario = Scenario.from_dict({"base": {"visits": visits}})
    with pytest.raises(PluginError) as info:
        LobbySimulation(scenario, Streams(0))
    assert message in str(info.value)


class EarlyVisits(Daily):
    """A broken visit model: next visits in the past."""

    name = "early"

    def next_visits(self, rng: Any, now: float, rates: Any) -> Any:
        return np.full(np.shape(rates), now - 1.0)


def test_a_visit_model_returning_past_times_is_named() -> None:
    scenario = Scenario.from_dict(
        {"base": {"size": 5, "visits": {"name": "tests.sim.test_player_base:EarlyVisits"}}}
    )
    with pytest.raises(PluginError) as info:
        LobbySimulation(scenario, Streams(0)).run()
    assert "visit model 'tests.sim.test_player_base:EarlyVisits': next_visits returned" in str(
        info.value
    )


def test_validate_names_every_bad_plug_in_of_a_base_scenario_at_once(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from lobbysim.cli.main import main

    path = tmp_path / "bad.yaml"
    path.write_text(
        "base: {visits: {name: daily, per_dya: 2}}\nmatchmaker: {status_quo: drawchance}\n",
        encoding="utf-8",
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "matchmaker.status_quo: unknown policy 'drawchance' (did you mean 'draw_chance'?)" in err
    assert "base.visits: visit model 'daily' has no parameter 'per_dya' (did you mean" in err
    assert "Traceback" not in err
