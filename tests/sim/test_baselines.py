"""The reference policies in a real lobby: ``uniform_random`` (no matchmaking) and ``oracle``.

``uniform_random`` pairs uniformly at random over the whole pool, bypassing the assignment and
the threshold; ``oracle`` matches on true skill, with the true match quality under the
threshold. Every test runs real simulations.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import collect, simulate
from lobbysim.policies import POLICIES, Decision, pairing_of, sees_truth
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.streams import Streams
from tests.sim.lobby_helpers import base, players, scripted

SKILL_SD = 2.0


def big_pools(policy: str, assignment: str = "global", **population: Any) -> Scenario:
    """A lobby of one-game visits with passes every 5 minutes: about 100 players per pass.

    One game per player makes the games' skill gaps independent draws under uniform pairing;
    timed passes make the pool large, so that who is paired with whom is the policy's choice.
    """
    return Scenario.from_dict(
        {
            "horizon": 600,
            "warmup": 0,
            "seed": 3,
            "arrivals": {"name": "poisson", "rate": 20.0},
            "population": {
                "skill_sd": SKILL_SD,
                "session_games_mean": 1,
                "patience_mean": None,
                **population,
            },
            "game": {"length": 10},
            "matchmaker": {
                "policy": policy,
                "assignment": assignment,
                "tick": 5.0,
                "wake_on_arrival": False,
                # no pair reaches quality 1: only a policy that ignores the threshold plays
                "threshold": [[0, 1.0]] if policy == "uniform_random" else [[0, 0.0]],
            },
            "raters": {"shadows": []},
        }
    )


def gap_check(games: pd.DataFrame, sd: float) -> tuple[float, float, float]:
    """Return the mean true skill gap, the closed form for independent pairs, and its SE.

    For s_a, s_b independent N(m, sd^2), s_a - s_b ~ N(0, 2 sd^2), so E|s_a - s_b| =
    2 sd / sqrt(pi) and Var|s_a - s_b| = sd^2 (2 - 4 / pi).
    """
    closed = 2.0 * sd / math.sqrt(math.pi)
    se = sd * math.sqrt(2.0 - 4.0 / math.pi) / math.sqrt(len(games))
    return float(games.skill_gap_true.mean()), closed, se


def test_the_flags_of_the_reference_policies() -> None:
    uniform, oracle = POLICIES.create("uniform_random"), POLICIES.create("oracle")
    assert pairing_of(uniform) == "uniform" and not sees_truth(uniform)
    assert pairing_of(oracle) == "assignment" and sees_truth(oracle)
    assert pairing_of(POLICIES.create("random")) == "assignment"
    assert not uniform.needs_variance and not oracle.needs_variance
    d = Decision(np.float64(0.0), np.float64(1.0), np.array([3.0, -0.5, 1.0]), np.ones(3), 2.5)
    assert oracle.score(d).tolist() == [-3.0, -0.5, -1.0]  # the closest (true skill) wins
    assert uniform.score(d).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("assignment", ["global", "sequential"])
def test_uniform_random_without_information_gives_the_closed_form_skill_gap(
    assignment: str,
) -> None:
    # every prior is the population's: no rating information at all; uniform_random ignores
    # the threshold of quality 1, which nothing reaches
    result = simulate(big_pools("uniform_random", assignment, prior="population"), 3)
    games = result.games
    assert len(games) > 5000  # (nearly) everybody played their game
    mean, closed, se = gap_check(games, SKILL_SD)
    assert abs(mean - closed) < 4 * se, (mean, closed, se)  # 2.2609 vs 2.2568, se 0.0224


def test_uniform_random_bypasses_the_assignment_and_the_threshold() -> None:
    # the same seed under either assignment: the same games, for the assignment is never asked
    a = simulate(big_pools("uniform_random", "global"), 3).games
    b = simulate(big_pools("uniform_random", "sequential"), 3).games
    assert len(a) > 5000
    pd.testing.assert_frame_equal(a, b)
    # a policy that honours the threshold of quality 1 plays no game at all
    scenario = big_pools("random")
    mm = dataclasses.replace(scenario.matchmaker, threshold=((0.0, 1.0),))
    assert len(simulate(scenario.replace(matchmaker=mm), 3).games) == 0


def test_uniform_random_pairs_across_the_whole_rating_range_under_global() -> None:
    # informative beliefs (prior variance 0.01: the means are nearly the skills); under the
    # global assignment, random picks within blocks of 8 neighbours in rating of ~100 waiting,
    # uniform_random across the whole pool
    informative = {"prior": "informative", "prior_var_low": 0.01, "prior_var_high": 0.01}
    uniform = simulate(big_pools("uniform_random", **informative), 3).games
    blocked = simulate(big_pools("random", **informative), 3).games
    # the skills are N(mu0, 0.01) with mu0 ~ N(0, sd^2): sd' = sqrt(sd^2 + 0.01)
    mean, closed, se = gap_check(uniform, math.sqrt(SKILL_SD**2 + 0.01))
    assert abs(mean - closed) < 4 * se, (mean, closed, se)
    assert blocked.skill_gap_true.mean() < 0.25 * mean  # measured 0.319 vs 2.252
    # gaps beyond one population standard deviation: about 48% of uniform pairs, rare in blocks
    assert (uniform.skill_gap_true > SKILL_SD).mean() > 0.4
    assert (blocked.skill_gap_true > SKILL_SD).mean() < 0.02


def test_uniform_random_pairs_everyone_waiting_in_one_pass() -> None:
    # eleven players queue at once, far apart in rating: five games start at the first pass
    # (one player is left over), whatever the threshold
    sim = scripted(
        base(policy="uniform_random", threshold=[[0, 1.0]]),
        [(0.0, players([10.0 * k for k in range(11)], var=0.01))],
        iter([math.inf] * 30),
    )
    sim.env.run(until=1.5)
    assert sim.n_games == 5
    assert len(sim.pool) == 1


def test_uniform_random_pairs_only_the_focal_players_with_a_random_partner() -> None:
    # with focal players only they choose: each pass pairs player 0 with one of the others,
    # uniformly (over many seeds every other player is drawn)
    partners = []
    for seed in range(40):
        scenario = base(policy="uniform_random", focal_players=[0]).replace(seed=seed)
        sim = LobbySimulation(scenario, Streams(seed))
        sim.draw_patience = lambda: math.inf
        sim.add_players(players([0.0, 1.0, 2.0, 3.0, 4.0], var=0.01))
        sim.start_service()
        sim.env.run(until=0.5)  # the first pass only: the game started by now
        assert sim.n_games == 1 and len(sim.pool) == 3 and 0 not in sim.pool
        partners.append(({1, 2, 3, 4} - set(sim.pool)).pop())
    assert set(partners) == {1, 2, 3, 4}


def learning_lobby(policy: str) -> Scenario:
    """A lobby of ten-game sessions whose beliefs start uninformed and learn as games finish."""
    return Scenario.from_dict(
        {
            "horizon": 600,
            "warmup": 0,
            "arrivals": {"name": "poisson", "rate": 5.0},
            "population": {"skill_sd": SKILL_SD, "session_games_mean": 10, "patience_mean": None},
            "game": {"length": 10},
            "matchmaker": {"policy": policy, "tick": 2.0, "wake_on_arrival": False},
            "raters": {"shadows": []},
        }
    )


def test_the_oracle_gap_is_far_below_draw_chance_and_uniform_random_on_the_same_seed() -> None:
    gaps = {
        policy: simulate(learning_lobby(policy), 3).games.skill_gap_true.mean()
        for policy in ("oracle", "draw_chance", "uniform_random")
    }
    # measured: oracle 0.123, draw_chance 1.50, uniform_random 2.25
    assert gaps["oracle"] < 0.2 * gaps["draw_chance"] < 0.2 * gaps["uniform_random"]


def test_the_oracle_pairs_the_closest_true_skills_of_a_pass() -> None:
    # The beliefs mislead: players close in mean are far apart in skill.
    skill = [0.0, 10.0, 20.0, 0.5, 10.5, 20.5]
    mu = [0.0, 0.2, 0.4, 10.0, 10.2, 10.4]
    closest_in_truth = {frozenset({0, 3}), frozenset({1, 4}), frozenset({2, 5})}
    for policy, expected in (("oracle", True), ("point_estimate", False)):
        sim = scripted(
            base(policy=policy),
            [(0.0, players(mu, var=0.01, skill=skill))],
            iter([math.inf] * 30),
        )
        sim.env.run(until=12)
        result = collect(sim, 0)
        pairs = set(result.participants.groupby("game_id").player_id.apply(frozenset))
        assert (pairs == closest_in_truth) is expected, (policy, pairs)
        first = result.games[result.games.start == 0.0]
        if policy == "oracle":
            # the recorded quality is the true one: exp(-(0.5)^2 / (4 beta2)), beta2 = 2.5
            assert first.quality_predicted.tolist() == pytest.approx(
                [math.exp(-0.25 / 10.0)] * 3, rel=1e-12
            )


def test_the_threshold_applies_to_the_oracles_true_quality() -> None:
    # Two players with the same belief, 6 apart in skill: a true quality of exp(-36/10) ~ 0.03.
    # The driving rater's quality (equal means, small variances) is ~1, so point_estimate
    # plays at once, while the oracle waits until the threshold falls below the true quality.
    schedule = [[0, 0.5], [7, 0.0]]
    for policy, start in (("point_estimate", 0.0), ("oracle", 7.0)):
        sim = scripted(
            base(policy=policy, threshold=schedule),
            [(0.0, players([0.0, 0.0], var=0.01, skill=[0.0, 6.0]))],
            iter([math.inf] * 4),
        )
        sim.env.run(until=20)
        assert collect(sim, 0).games.start.tolist() == [start], policy


def test_the_oracle_needs_no_variances_but_the_status_quo_is_checked() -> None:
    elo = {"driver": "sph_elo", "shadows": []}
    scenario = Scenario.from_dict(
        {"horizon": 120, "warmup": 0, "matchmaker": {"policy": "oracle"}, "raters": elo}
    )
    assert len(simulate(scenario, 1).games) > 20
    bad = Scenario.from_dict(
        {
            "horizon": 120,
            "warmup": 0,
            "matchmaker": {"policy": "oracle", "status_quo": "draw_chance"},
            "raters": elo,
        }
    )
    with pytest.raises(PluginError) as info:
        LobbySimulation(bad, Streams(0))
    assert str(info.value) == (
        "matchmaker.status_quo: 'draw_chance' needs belief variances, but the driving rater "
        "'sph_elo' has none"
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", [{"mode": "team", "team_size": 2}, {"mode": "ffa", "ffa_size": 4}])
def test_group_games_honour_the_reference_policies(mode: dict[str, Any]) -> None:
    def run(policy: str) -> pd.DataFrame:
        scenario = Scenario.from_dict(
            {
                "horizon": 600,
                "warmup": 0,
                "arrivals": {"name": "poisson", "rate": 5.0},
                "population": {"skill_sd": SKILL_SD, "patience_mean": None},
                "game": {"length": 10, **mode},
                "matchmaker": {"policy": policy, "tick": 2.0, "wake_on_arrival": False},
                "raters": {"shadows": []},
            }
        )
        return simulate(scenario, 2).games

    gaps = {p: run(p).skill_gap_true.mean() for p in ("oracle", "draw_chance", "uniform_random")}
    assert gaps["oracle"] < 0.5 * gaps["draw_chance"] < 0.5 * gaps["uniform_random"], gaps
