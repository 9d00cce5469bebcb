"""Every bundled scenario runs (scaled down), and each shows what its comments claim."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

from lobbysim.commands.run_scenario import check_scenario
from lobbysim.experiments.replications import run_experiment
from lobbysim.experiments.simulation import simulate
from lobbysim.paper import PaperStudy, draw_priors, run_study
from lobbysim.players.arrivals import ARRIVALS
from lobbysim.registry import PluginError
from lobbysim.scenario import load_scenario
from lobbysim.sim import LobbySimulation
from lobbysim.streams import Streams

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def test_the_bundled_scenarios_are_all_here() -> None:
    names = {p.stem for p in SCENARIOS}
    assert {
        "quickstart",
        "one_visit",
        "paper_top",
        "paper_bottom",
        "paper_middle",
        "mechwarrior_ffa",
        "team_4v4",
        "evening_peak",
        "custom_arrivals",
        "live_game",
        "global_5v5",
        "ladder_4v4",
    } <= names


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_bundled_scenario_runs_scaled_down(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # plug-in files are named relative to the repository
    scenario = load_scenario(path)
    check_scenario(scenario)
    mm = scenario.matchmaker
    switch = None if mm.switch_at is None else min(mm.switch_at, 20.0)  # an A/B test's switch
    small = scenario.replace(
        horizon=min(scenario.horizon, 150.0),
        warmup=min(scenario.warmup, 20.0),
        replications=1,
        matchmaker=dataclasses.replace(mm, switch_at=switch),
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


# --- the paper's study as lobby scenarios ---------------------------------------------------------

PAPER_RANKS = {"top": 1, "bottom": -1, "middle": 25}


@pytest.mark.parametrize("case", sorted(PAPER_RANKS))
def test_paper_scenarios_put_the_ranked_focal_player_in_every_game(case: str) -> None:
    scenario = load_scenario(ROOT / "scenarios" / f"paper_{case}.yaml")
    scenario = scenario.replace(horizon=60.5)
    sim = LobbySimulation(scenario, Streams(7))
    sim.run(until=0.5)  # the first game is running, nothing is rated yet: beliefs are priors
    ids = np.arange(50)
    priors, variances = sim.driver.means(ids).copy(), sim.driver.variances(ids).copy()
    assert sim.focal is not None and len(sim.focal) == 1
    (focal,) = sim.focal
    order = np.argsort(-priors, kind="stable")
    assert focal == order[PAPER_RANKS[case] - 1 if PAPER_RANKS[case] > 0 else PAPER_RANKS[case]]
    # the paper engine's population for the same prior seed, whatever the run's seed
    _, truth_means, paper_variances = draw_priors(PaperStudy(case=case), 2011)
    np.testing.assert_array_equal(np.sort(priors), np.sort(truth_means))
    np.testing.assert_array_equal(np.sort(variances), np.sort(paper_variances))

    sim.advance(scenario.horizon)
    sim.apply_pending()
    assert len(sim.records.games) == 60  # one game a minute, all of them the focal player's
    players_per_game: dict[int, set[int]] = {}
    for game_id, player_id, *_ in sim.records.participants:
        players_per_game.setdefault(game_id, set()).add(player_id)
    assert all(focal in players for players in players_per_game.values())
    assert len(players_per_game) == 60


@pytest.mark.slow
def test_paper_top_in_the_lobby_agrees_with_the_paper_engine() -> None:
    """The lobby's paper_top and the paper engine estimate the same per-game means."""
    n_games = 100
    scenario = load_scenario(ROOT / "scenarios" / "paper_top.yaml").replace(horizon=n_games + 0.5)
    lobby = run_experiment(
        scenario, ["point_estimate", "knowledge_gradient"], replications=30, jobs=1
    ).metrics
    study = PaperStudy(case="top", n_games=n_games, windows=((1, n_games),))
    for policy, paths in (("point_estimate", 1000), ("knowledge_gradient", 400)):
        # the engine's seed is the scenario's prior_seed: the same 50 priors
        engine = run_study(study, [policy], paths=paths, seed=2011).windows
        got = lobby[lobby.policy == policy].draw_prob_true_mean.to_numpy()
        want, want_se = engine.draw_prob_true.iloc[0], engine.draw_prob_true_se.iloc[0]
        z = (got.mean() - want) / math.hypot(got.std(ddof=1) / math.sqrt(got.size), want_se)
        assert abs(z) < 4.0, (policy, got.mean(), want, z)
