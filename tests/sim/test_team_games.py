"""Team games in the lobby: every game plays the best split (or a random one for uniform
pairing), the team measures recomputed from the records, the bounds in their order, and a
policy's own score of a team game (lobbysim/policies/teams.py, lobbysim/sim/group_pass.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import stats

from lobbysim.experiments.simulation import simulate
from lobbysim.policies import POLICIES
from lobbysim.policies.base import Decision, FloatArray
from lobbysim.policies.teams import least_gaps
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import group_games
from lobbysim.validation import ScenarioError


def _team(policy: str = "draw_chance", **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "horizon": 240,
        "warmup": 30,
        "seed": 11,
        "arrivals": {"name": "poisson", "rate": 3.0},
        "population": {"patience_mean": 5.0, "session_games_mean": 4},
        "game": {"mode": "team", "team_size": 3, "length": 10, "quit_rate": 0.01},
        "matchmaker": {"policy": policy, "threshold": [[0, 0.6], [1.5, 0.3], [3, 0.0]]},
    }
    data.update(extra)
    return data


def _starts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[np.ndarray, list[int], list[float]]]:
    """Capture each team game's ratings as the pass gave them, its teams and its players'
    true skills."""
    seen: list[tuple[np.ndarray, list[int], list[float]]] = []
    start_group = group_games.GroupGames.start_group

    def starting(self: Any, members: Any, mu: Any, quality: float, *args: Any) -> None:
        start_group(self, members, mu, quality, *args)
        teams = args[1]
        seen.append((np.array(mu, dtype=float), list(teams), [m.player.skill for m in members]))

    monkeypatch.setattr(group_games.GroupGames, "start_group", starting)
    return seen


@pytest.mark.parametrize("policy", ["draw_chance", "oracle"])
def test_every_team_game_plays_the_best_split_of_its_ratings(
    policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _starts(monkeypatch)
    simulate(Scenario.from_dict(_team(policy)), 2)
    assert len(seen) > 100
    for mu, teams, skills in seen:
        side = np.array(teams)
        assert sorted(np.bincount(side).tolist()) == [3, 3]
        gap = abs(mu[side == 0].sum() - mu[side == 1].sum())
        assert gap == pytest.approx(least_gaps(mu[None, :])[0], abs=1e-9)
        if policy == "oracle":  # its ratings are the true skills (no skill dynamics here)
            assert np.allclose(mu, skills)


def test_uniform_random_splits_at_random(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _starts(monkeypatch)
    simulate(Scenario.from_dict(_team("uniform_random")), 2)
    best = [
        abs(mu[np.array(t) == 0].sum() - mu[np.array(t) == 1].sum())
        <= least_gaps(mu[None, :])[0] + 1e-9
        for mu, t, _ in seen
    ]
    # one split in ten is the best of a solo 3v3 (10 splits): far from every game
    assert len(best) > 100 and 0.03 < np.mean(best) < 0.25


def test_the_team_measures_are_recomputed_from_the_records() -> None:
    scenario = Scenario.from_dict(_team(metrics={"fair_band": [0.4, 0.6]}))
    result = simulate(scenario, 3)
    games, seats, players = result.games, result.participants, result.players
    assert {"win_chance_predicted", "team_gap_true"} <= set(games.columns)
    skill = players.set_index("player_id").skill
    starters = seats.merge(games[["game_id", "start"]], on="game_id")
    starters = starters[starters.joined == starters.start]  # the line-up at the start
    starters = starters.assign(skill=skill.reindex(starters.player_id).to_numpy())
    means = starters.groupby(["game_id", "team"]).skill.mean().unstack()
    gap = (means[0] - means[1]).abs()
    assert np.allclose(games.set_index("game_id").team_gap_true.reindex(gap.index), gap)
    chance = games.win_chance_predicted
    assert chance.between(0.5, 1.0).all() and chance.gt(0.5).any()
    counted = games[games.start >= scenario.metrics_start]
    assert result.metrics["fair_band_share"] == pytest.approx(
        float(counted.win_chance_predicted.between(0.4, 0.6).mean())
    )
    assert result.metrics["team_gap_true_mean"] == pytest.approx(counted.team_gap_true.mean())
    wide = simulate(Scenario.from_dict(_team(metrics={"fair_band": [0.0, 1.0]})), 3)
    assert wide.metrics["fair_band_share"] == 1.0


def test_a_1v1_run_has_no_team_measures() -> None:
    data = _team()
    data["game"] = {"mode": "1v1", "length": 10}
    result = simulate(Scenario.from_dict(data), 1)
    assert "fair_band_share" not in result.metrics and "team_gap_true" not in result.games


@pytest.mark.parametrize("band", [[0.6, 0.7], [0.5], [0.4, math.inf]])
def test_a_bad_fair_band_is_one_line_naming_the_field(band: list[float]) -> None:
    with pytest.raises(ScenarioError, match=r"^metrics\.fair_band: expected") as info:
        Scenario.from_dict(_team(metrics={"fair_band": band}))
    assert len(info.value.problems) == 1


@pytest.mark.slow
def test_the_bounds_bracket_the_matchmaker_on_the_true_skill_gap() -> None:
    """oracle < draw_chance < uniform_random, paired over 6 replications, each difference's
    95% t interval clear of 0 (docs/findings.md's team_4v4 figures: 20 replications)."""
    gaps: dict[str, list[float]] = {}
    for policy in ("oracle", "draw_chance", "uniform_random"):
        scenario = Scenario.from_dict(_team(policy, horizon=120))
        gaps[policy] = [
            simulate(scenario, seed).metrics["skill_gap_true_mean"] for seed in range(8)
        ]
    for better, worse in (("oracle", "draw_chance"), ("draw_chance", "uniform_random")):
        diff = np.array(gaps[worse]) - np.array(gaps[better])
        half = stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / math.sqrt(diff.size)
        assert diff.mean() - half > 0, (better, worse, diff)


@POLICIES.register
@dataclass(frozen=True)
class _BrokenTeams:
    """A plug-in policy whose team score fails or returns nonsense."""

    name: ClassVar[str] = "test_broken_teams"
    needs_variance: ClassVar[bool] = False
    how: str = "raise"

    def score(self, decision: Decision) -> FloatArray:
        return np.zeros(decision.mu.shape)

    def score_teams(
        self, gap: FloatArray, var_sum: FloatArray, players: int, beta2: float
    ) -> FloatArray:
        if self.how == "raise":
            raise ZeroDivisionError("my bug")
        return np.full(np.shape(gap), 2.0)


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("raise", r"score_teams\(gap, var_sum, players, beta2\).*ZeroDivisionError: my bug"),
        ("wrong", r"score_teams returned .*expected one score in \[0, 1\] per game"),
    ],
)
def test_a_policys_team_score_is_checked_and_its_failure_named(how: str, message: str) -> None:
    data = _team({"name": "test_broken_teams", "how": how})
    with pytest.raises(PluginError, match=message) as info:
        simulate(Scenario.from_dict(data), 1)
    assert "test_broken_teams" in str(info.value) and "\n" not in str(info.value)


def test_the_team_measures_are_headline_measures_of_team_runs_only() -> None:
    from lobbysim.reporting.headline import headline_metrics
    from lobbysim.stats.metrics import metric_names

    team = headline_metrics(metric_names(["bayesian"], teams=True), "bayesian")
    assert {"fair_band_share", "team_gap_true_mean"} <= set(team)
    solo = headline_metrics(metric_names(["bayesian"]), "bayesian")
    assert not {"fair_band_share", "team_gap_true_mean"} & set(solo)
