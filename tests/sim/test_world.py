"""Regions, data centres and latency limits: invariants on traces, a closed case, bad input.

The checks of the limits are independent of the engine's own: each seat's data centre is taken
as the world notes it, each seat's wait from the waits records (the matched spell that ended as
the seat was taken), and the limit in force from the scenario's schedule, read here.
"""

from __future__ import annotations

import bisect
import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.cli.main import main
from lobbysim.experiments.simulation import simulate
from lobbysim.records.rows import record_schema
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import world as world_module
from lobbysim.validation import ScenarioError
from tests.sim.lobby_helpers import LIMITS, WORLD


def _scenario(mode: str = "1v1", policy: str = "draw_chance", **matchmaker: Any) -> dict[str, Any]:
    game: dict[str, Any] = {"length": 6, "quit_rate": 0.03}
    if mode != "1v1":
        game = {"mode": mode, "length": 10, "quit_rate": 0.02, "backfill": True}
        game |= {"team_size": 2} if mode == "team" else {"ffa_size": 4}
    return {
        "horizon": 300,
        "warmup": 30,
        "arrivals": {"name": "poisson", "rate": 8.0},
        "game": game,
        "matchmaker": {
            "policy": policy,
            "threshold": [[0, 0.5], [1, 0.0]],
            **matchmaker,
        },
        "world": copy.deepcopy(WORLD),
    }


def _limit(steps: list[list[float]], wait: float) -> float:
    waits = [w for w, _ in steps]
    return steps[bisect.bisect_right(waits, wait) - 1][1]


def _seats(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    """Capture every seat the world notes, ``(pid, data centre, time)``, and the world."""
    seats: list[Any] = []
    worlds: list[Any] = []
    seated = world_module.World.seated

    def noting(self: Any, pid: int, data_centre: int, now: float) -> None:
        if not worlds:
            worlds.append(self)
        seats.append((pid, data_centre, now))
        seated(self, pid, data_centre, now)

    monkeypatch.setattr(world_module.World, "seated", noting)
    return seats, worlds


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "policy"),
    [
        ("1v1", "draw_chance"),
        ("1v1", "uniform_random"),
        ("team", "draw_chance"),
        ("ffa", "draw_chance"),
    ],
)
def test_every_seat_is_within_the_limits_in_force_when_taken(
    mode: str, policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _scenario(mode, policy, **LIMITS)
    data["world"]["host"] = "lowest_worst"
    seats, worlds = _seats(monkeypatch)
    result = simulate(Scenario.from_dict(data), 4)
    world = worlds[0]
    waits = result.waits[result.waits.outcome == "matched"]
    wait_at = {
        (int(p), float(t)): float(w)
        for p, t, w in zip(waits.player_id, waits.left_queue, waits.wait, strict=True)
    }
    checked = 0
    for pid, dc, now in seats:
        if now < 30:
            continue  # the world notes seats from the metrics' start
        wait = wait_at[(pid, now)]
        latency = world.latencies_of(np.array([pid]))[0]
        assert latency[dc] <= _limit(LIMITS["max_latency_ms"], wait)
        assert latency[dc] - latency.min() <= _limit(LIMITS["max_delta_ping_ms"], wait)
        checked += 1
    assert checked > 300
    assert result.metrics["latency_ms_p90"] <= 250
    if mode != "1v1":  # back-filled seats were checked too
        joined = result.participants.joined.to_numpy()
        starts = result.participants.game_id.map(result.games.set_index("game_id").start)
        assert (joined > starts.to_numpy()).sum() > 5


def test_a_game_is_hosted_where_its_worst_seat_is_best_within_the_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hosts: list[Any] = []
    host = world_module.World.host

    def noting(self: Any, pids: Any, waited: Any) -> int:
        chosen = host(self, pids, waited)
        hosts.append((self, list(pids), list(waited), chosen))
        return chosen

    monkeypatch.setattr(world_module.World, "host", noting)
    data = _scenario(**LIMITS)
    data["horizon"] = 90  # a thousand or so games hosted (9,400 over the usual 300 minutes)
    simulate(Scenario.from_dict(data), 5)
    assert len(hosts) > 300
    for world, pids, waited, chosen in hosts:
        lat = world.latencies_of(np.array(pids))
        best = lat.min(axis=1)
        ok = [
            all(
                lat[k, d] <= _limit(LIMITS["max_latency_ms"], w)
                and lat[k, d] - best[k] <= _limit(LIMITS["max_delta_ping_ms"], w)
                for k, w in enumerate(waited)
            )
            for d in range(lat.shape[1])
        ]
        worst = [lat[:, d].max() if ok[d] else math.inf for d in range(lat.shape[1])]
        assert chosen == int(np.argmin(worst)) and ok[chosen]


@pytest.mark.slow
def test_one_data_centre_without_spread_changes_nothing() -> None:
    """With one data centre, no spread and limits that never bind, every record is that of the
    run without a world, plus the world's columns (the world draws only from its own streams),
    in 1v1 and team games; the world's metrics are the hand-computed ones."""
    for mode in ("1v1", "team"):
        data = _scenario(mode, max_latency_ms=[[0, 50]], max_delta_ping_ms=[[0, 1]])
        data["world"] = {
            "data_centres": ["only"],
            "regions": [{"name": "a", "share": 0.7}, {"name": "b", "share": 0.3}],
            "latency": {"name": "matrix", "base_ms": {"a": [40], "b": [40]}, "spread": 0.0},
        }
        plain = copy.deepcopy(data)
        del plain["world"]
        del plain["matchmaker"]["max_latency_ms"], plain["matchmaker"]["max_delta_ping_ms"]
        with_world = simulate(Scenario.from_dict(data), 2)
        without = simulate(Scenario.from_dict(plain), 2)
        extra = record_schema(world=True, teams=mode == "team")
        for kind in ("games", "participants", "waits", "ratings", "players"):
            plain_columns = getattr(with_world, kind)[list(getattr(without, kind).columns)]
            pd.testing.assert_frame_equal(plain_columns, getattr(without, kind))
            assert list(getattr(with_world, kind).columns) == list(extra[kind])
        for name, value in without.metrics.items():
            assert repr(with_world.metrics[name]) == repr(value), name
        m = with_world.metrics
        assert m["latency_ms_mean"] == 40.0 and m["latency_ms_p90"] == 40.0
        assert m["delta_ping_ms_mean"] == 0.0
        # two players from regions of shares 0.7 and 0.3 differ with probability 0.42
        assert 0.3 < m["cross_region_share"] < (0.55 if mode == "1v1" else 1.0)
        assert m["queue_time_mean@a"] > 0 and m["queue_time_mean@b"] > 0


@pytest.mark.slow
def test_tighter_limits_trade_latency_for_queue_time() -> None:
    loose = simulate(Scenario.from_dict(_scenario()), 3).metrics
    tight = simulate(Scenario.from_dict(_scenario(**LIMITS)), 3).metrics
    assert tight["latency_ms_mean"] < 0.7 * loose["latency_ms_mean"]
    assert tight["cross_region_share"] < loose["cross_region_share"]
    assert tight["queue_time_mean"] > loose["queue_time_mean"]
    # the smallest region waits longest when it must play near home
    assert tight["queue_time_mean@apac"] > tight["queue_time_mean@na"]


def test_members_visit_by_their_regions_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A base whose visit profile peaks at 20:00 local time: members of a region 12 hours
    ahead visit about 12 hours earlier in simulated (UTC) time."""
    profile = [0.1] * 24
    profile[20] = 10.0
    data = {
        "horizon": 4 * 1440,
        "warmup": 60,
        "arrivals": {"name": "poisson", "rate": 1e-6},
        "base": {"size": 400, "visits": {"name": "daily", "per_day": 1.0, "profile": profile}},
        "world": {
            "data_centres": ["x"],
            "regions": [
                {"name": "home", "share": 0.5, "utc_offset_hours": 0},
                {"name": "away", "share": 0.5, "utc_offset_hours": 12},
            ],
            "latency": {"name": "matrix", "base_ms": {"home": [20], "away": [20]}},
        },
    }
    worlds: list[Any] = []
    register = world_module.World.register

    def keep(self: Any, ids: Any, parties: Any = None) -> None:
        if not worlds:
            worlds.append(self)
        register(self, ids, parties)

    monkeypatch.setattr(world_module.World, "register", keep)
    result = simulate(Scenario.from_dict(data), 1)
    waits = result.waits
    first = waits.groupby("player_id").enqueued.min()  # each member's first visit
    regions = worlds[0].region_of(first.index.to_numpy())
    hours = (first.to_numpy() % 1440) / 60
    for region, local_peak in ((0, 20.0), (1, 8.0)):
        mine = hours[regions == region]
        near = np.minimum(np.abs(mine - local_peak), 24 - np.abs(mine - local_peak)) <= 1.5
        assert mine.size > 100 and near.mean() > 0.6, (region, near.mean())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["world"]["latency"]["base_ms"].pop("apac"), "world.latency.base_ms"),
        (
            lambda d: d["world"]["latency"]["base_ms"].update(mars=[1, 2, 3]),
            "world.latency.base_ms.mars",
        ),
        (
            lambda d: d["world"]["latency"]["base_ms"].update(na=[30, 95]),
            "world.latency.base_ms.na",
        ),
        (
            lambda d: d["world"]["latency"]["base_ms"].update(na=[30, -1, 5]),
            "world.latency: latency model 'matrix': base_ms.na[1]",
        ),
        (
            lambda d: d["world"]["regions"][0].update(share=0.9),
            "world.regions: the shares must sum",
        ),
        (lambda d: d["world"].update(data_centres=[]), "world.data_centres"),
        (lambda d: d.pop("world"), "matchmaker.max_latency_ms: a latency limit needs a world"),
        (
            lambda d: d["matchmaker"].update(max_latency_ms=[[0, 100], [1, 50]]),
            "matchmaker.max_latency_ms: a limit relaxes",
        ),
        (lambda d: d["world"].update(host="nearest"), "world.host"),
    ],
)
def test_bad_world_input_is_one_line_naming_the_field(
    change: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    data = _scenario(**LIMITS)
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    with pytest.raises((ScenarioError, PluginError)):
        from lobbysim.sim.components import Components

        Components.build(Scenario.from_dict(data))


@pytest.mark.slow
def test_the_report_has_a_section_per_region(tmp_path: Path) -> None:
    import yaml

    data = _scenario("team", **LIMITS) | {"horizon": 200, "replications": 2}
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.md").read_text()
    section = report.split("## Regions and latency")[1].split("\n## ")[0]
    for region in ("na", "eu", "apac"):
        assert f"| {region} | draw_chance |" in section
    assert "latency**: draw_chance: mean" in section
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert {"latency_ms_mean", "queue_time_quiet@apac"} <= set(summary.metric)
    assert "(queue_time_by_region_and_hour.png)" in section
    assert (tmp_path / "out" / "queue_time_by_region_and_hour.png").stat().st_size > 10_000


def test_local_hours_shift_by_the_regions_time_zone() -> None:
    from lobbysim.experiments.figure_data import local_hours

    minutes = np.array([0.0, 59.9, 60.0, 1439.0, 1740.0])
    assert local_hours(minutes, -5).tolist() == [19, 19, 20, 18, 0]
    assert local_hours(minutes, 8).tolist() == [8, 8, 9, 7, 13]
    assert local_hours(minutes, 0).tolist() == [0, 0, 1, 23, 5]


@pytest.mark.slow
def test_each_regions_hourly_queue_times_are_its_records(tmp_path: Path) -> None:
    """The figure's numbers: per replication, the mean matched wait of the region's spells by
    the local hour they began, which weighted by the spells gives the region's queue time."""
    from lobbysim.experiments.replications import run_experiment
    from lobbysim.reporting.region_figures import hourly_queue_times
    from lobbysim.reporting.run_frames import Frames

    data = _scenario("team", **LIMITS) | {"horizon": 200, "replications": 2}
    result = run_experiment(Scenario.from_dict(data))
    frames = Frames(result)
    for region, offset in (("na", -5), ("apac", 8)):
        got = hourly_queue_times(result, frames, "draw_chance", region, offset)
        assert got is not None
        per_run, counts = got
        assert per_run.shape == (2, 24) and counts.sum() > 100
        for r, run in enumerate(result.runs["draw_chance"]):
            w = run.waits
            assert w is not None
            w = w[(w.region == region) & (w.enqueued >= result.scenario.metrics_start)]
            hour = ((w.enqueued + 60 * offset) % 1440 // 60).astype(int)
            matched = w[w.outcome == "matched"]
            expected = matched.wait.groupby(hour[w.outcome == "matched"]).mean()
            observed = pd.Series(per_run[r]).dropna()
            pd.testing.assert_series_equal(
                observed, expected, check_names=False, check_index_type=False
            )
            metric = run.metrics[f"queue_time_mean@{region}"]
            n = matched.wait.groupby(hour[w.outcome == "matched"]).size()
            assert np.isclose((observed * n).sum() / n.sum(), metric, rtol=1e-12)


class PairInOrder:
    """A user's assignment that ignores the threshold: pool order, two by two."""

    name = "pair_in_order"

    def pairs(self, pool: Any, policy: Any, threshold: Any, rng: Any, pass_index: int) -> Any:
        n = pool.size - pool.size % 2
        return np.arange(n, dtype=np.intp).reshape(-1, 2)


def test_an_assignment_that_ignores_the_limits_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    data = _scenario(**LIMITS)
    data["matchmaker"]["assignment"] = f"{__name__}:PairInOrder"
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "'tests.sim.test_world:PairInOrder' returned the pair" in err
    assert "no data centre within matchmaker.max_latency_ms" in err and "Traceback" not in err
