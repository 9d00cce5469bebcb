"""Every bundled scenario runs (scaled down), and each shows what its comments claim."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from lobbysim.arrivals import ARRIVALS
from lobbysim.registry import PluginError
from lobbysim.runs import check_scenario
from lobbysim.scenario import load_scenario
from lobbysim.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def test_the_bundled_scenarios_are_all_here() -> None:
    names = {p.stem for p in SCENARIOS}
    assert {"quickstart", "mechwarrior_ffa", "team_4v4", "evening_peak", "custom_arrivals"} <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_bundled_scenario_runs_scaled_down(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # plug-in files are named relative to the repository
    scenario = load_scenario(path)
    check_scenario(scenario)
    small = scenario.replace(
        horizon=min(scenario.horizon, 150.0), warmup=min(scenario.warmup, 20.0), replications=1
    )
    result = simulate(small, seed=1)
    assert len(result.games) > 10
    assert np.isfinite(result.metrics["queue_time_mean"])
    assert result.scenario.name == scenario.name


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_evening_peak_queues_are_longer_off_peak(seed: int) -> None:
    result = simulate(ROOT / "scenarios" / "evening_peak.yaml", seed=seed)
    waits = result.waits[result.waits.outcome != "still_waiting"]
    hour = (waits.enqueued // 60) % 24
    night, evening = waits[hour.between(1, 5)], waits[hour.between(17, 21)]

    def mean_wait(frame):  # type: ignore[no-untyped-def]
        return frame[frame.outcome == "matched"].wait.mean()

    assert mean_wait(night) > 1.2 * mean_wait(evening)
    assert (night.outcome == "abandoned").mean() > (evening.outcome == "abandoned").mean()


def test_ffa_and_team_scenarios_back_fill_and_rate_guests_never() -> None:
    result = simulate(ROOT / "scenarios" / "mechwarrior_ffa.yaml", seed=2)
    parts, games = result.participants, result.games.set_index("game_id")
    late = parts.joined > games.loc[parts.game_id, "start"].to_numpy()
    assert late.sum() > 50 and parts.quit.sum() > 50
    guests = result.players[~result.players.registered].player_id
    final = result.ratings[
        (result.ratings.rater == "sph_elo") & (result.ratings.time == result.ratings.time.max())
    ]
    assert (final[final.player_id.isin(guests)].rating == 500.0).all()
    assert len(guests) > 20


def test_the_custom_arrival_model_is_loaded_from_its_file_and_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    source = (ROOT / "examples" / "custom_arrivals.py").read_text()
    assert len(source.splitlines()) < 30
    model = ARRIVALS.create("examples/custom_arrivals.py:Evenings", {"base": 1.0, "peak": 3.0})
    arrivals = model.sample(np.random.default_rng(0), 0.0, 24 * 60.0 * 20)  # 20 days
    hour = (arrivals.times / 60.0) % 24
    evening = np.mean([(hour >= h) & (hour < h + 1) for h in range(18, 23)], axis=0).sum()
    day = np.mean([(hour >= h) & (hour < h + 1) for h in range(9, 14)], axis=0).sum()
    assert 2.7 < evening / day < 3.3  # three times the base rate from 18:00 to 23:00
    with pytest.raises(PluginError, match=r"has no parameter 'peek' \(did you mean 'peak'\?\)"):
        ARRIVALS.create("examples/custom_arrivals.py:Evenings", {"peek": 2})
    with pytest.raises(PluginError, match=re.escape("need base > 0 and peak >= 1, got 1.0, 0.5")):
        ARRIVALS.create("examples/custom_arrivals.py:Evenings", {"base": 1.0, "peak": 0.5})
    with pytest.raises(PluginError, match=re.escape("no file 'examples/nope.py'")):
        ARRIVALS.create("examples/nope.py:Evenings")
