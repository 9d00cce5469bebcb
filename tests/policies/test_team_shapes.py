"""Games of any teams (lobbysim/policies/team_shapes.py): FlexMatch's order of filling teams, the
split against an exhaustive search, the quality against the ``trueskill`` library where the two
models meet (two equal teams), and the predicted win chance against a simulation of its model."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import trueskill

from lobbysim.policies.team_shapes import fill_sizes, spread_split, teams_quality, teams_start
from lobbysim.policies.teams import split_quality


def _spread(team: list[int] | tuple[int, ...], sizes: list[int], ratings: list[float]) -> float:
    """sum over teams of (centred rating sum)^2 / team size: what the split lowers."""
    size = np.asarray(sizes, dtype=float)
    rating = np.asarray(ratings)
    centred = rating - (size @ rating) / size.sum()
    teams = max(team) + 1
    total = np.bincount(team, weights=size * centred, minlength=teams)
    count = np.bincount(team, weights=size, minlength=teams)
    return float((total**2 / np.maximum(count, 1)).sum())


def test_teams_of_one_range_fill_within_one_player_and_the_minimums_first() -> None:
    for players in range(9, 16):  # three teams of 3-5
        sizes = fill_sizes(players, [3, 3, 3], [5, 5, 5])
        assert sum(sizes) == players and max(sizes) - min(sizes) <= 1
        assert all(3 <= s <= 5 for s in sizes)
    # uneven: the team with most open seats first, the minimums before anything else
    assert fill_sizes(6, [5, 1], [5, 1]) == [5, 1]
    assert fill_sizes(4, [3, 1], [5, 1]) == [3, 1]  # team 1 reaches its minimum too
    assert fill_sizes(12, [5, 5, 2], [10, 10, 3]) == [5, 5, 2]
    assert fill_sizes(15, [5, 5, 2], [10, 10, 3]) == [7, 6, 2]  # the larger open teams first
    with pytest.raises(ValueError, match="do not fit"):
        fill_sizes(7, [1, 1], [3, 3])


def test_the_split_is_the_exhaustive_best_in_most_small_games_and_never_far() -> None:
    rng = np.random.default_rng(7)
    exact = tried = 0
    for _ in range(400):
        teams = int(rng.integers(2, 4))
        lows = [int(x) for x in rng.integers(1, 3, teams)]
        highs = [low + int(rng.integers(0, 3)) for low in lows]
        players = int(rng.integers(sum(lows), sum(highs) + 1))
        if players > 9:
            continue
        sizes = [1] * players
        ratings = rng.normal(0.0, 3.0, players).tolist()  # centred on zero: signs mixed
        team = spread_split(sizes, ratings, lows, highs)
        assert team is not None
        target = fill_sizes(players, lows, highs)
        assert np.bincount(team, minlength=teams).tolist() == target
        best = min(
            _spread(assign, sizes, ratings)
            for assign in itertools.product(range(teams), repeat=players)
            if np.bincount(assign, minlength=teams).tolist() == target
        )
        got = _spread(team, sizes, ratings)
        scale = float(np.var(ratings)) * players
        assert got - best <= 0.05 * scale, (ratings, lows, highs, got, best)
        tried += 1
        exact += got - best <= 1e-9 * scale
    assert tried >= 150
    assert exact / tried >= 0.85, f"{exact} of {tried} exactly best"


def test_parties_stay_whole_and_uneven_teams_get_their_sizes() -> None:
    sizes = [3, 1, 1, 2, 1, 1, 1]  # 10 players on a team of 5-8 and one of 1-2
    ratings = [2.0, -1.0, 0.5, 1.0, -2.0, 0.0, 3.0]
    team = spread_split(sizes, ratings, [5, 1], [8, 2])
    assert team is not None
    counts = np.bincount(team, weights=sizes).tolist()
    assert counts == fill_sizes(10, [5, 1], [8, 2]) == [8, 2]
    # a party larger than every team, or too few players, cannot be split
    assert spread_split([3, 1], [0.0, 0.0], [1, 1], [2, 2]) is None
    assert spread_split([1, 1, 1], [0.0] * 3, [2, 2], [3, 3]) is None


def test_ratings_below_zero_are_placed_by_what_they_add_not_by_their_sign() -> None:
    # the greedy that gives each next player (strongest first) to the team of lowest sum puts
    # -3 and -4 together once the sums go negative; centring and the added spread do not
    ratings = [4.0, 3.0, -3.0, -4.0]
    team = spread_split([1] * 4, ratings, [2, 2], [2, 2])
    assert team is not None
    means = [np.mean([r for r, t in zip(ratings, team, strict=True) if t == k]) for k in (0, 1)]
    assert abs(means[0] - means[1]) <= 1.0


def test_the_quality_of_two_equal_teams_is_trueskills() -> None:
    rng = np.random.default_rng(3)
    beta2 = 2.5
    env = trueskill.TrueSkill(mu=0.0, sigma=1.0, beta=math.sqrt(beta2), draw_probability=0.0)
    for k in (1, 3, 5):
        mu = rng.normal(0, 2, 2 * k)
        var = rng.uniform(0.1, 2.0, 2 * k)
        teams = [0] * k + [1] * k
        members = np.arange(2 * k)
        ours = teams_quality(mu, var, members, teams, beta2)
        sides = [
            [env.create_rating(mu[i], math.sqrt(var[i])) for i in range(2 * k) if teams[i] == t]
            for t in (0, 1)
        ]
        assert ours == pytest.approx(env.quality(sides), rel=1e-12)
        assert ours == pytest.approx(split_quality(mu, var, members, teams, beta2), rel=1e-12)


def test_the_predicted_chance_of_uneven_teams_is_that_of_their_mean_performances() -> None:
    # five raiders against one dragon, ratings exact: the chance that the team of the higher
    # mean performance (each player's skill plus N(0, beta2) noise) has the higher mean
    beta2 = 2.5
    skills = np.array([1.0, 0.5, 2.0, -0.5, 1.5, 0.2])
    teams = [0, 0, 0, 0, 0, 1]
    chance, gap = teams_start(skills, np.zeros(6), skills.tolist(), teams, beta2)
    assert gap == pytest.approx(abs(skills[:5].mean() - skills[5]))
    rng = np.random.default_rng(11)
    draws = skills + math.sqrt(beta2) * rng.standard_normal((400_000, 6))
    stronger_won = (draws[:, :5].mean(axis=1) > draws[:, 5]).mean()  # team 0's mean is higher
    assert chance == pytest.approx(stronger_won, abs=0.003)
    # three teams: no chance predicted, the gap of the strongest and weakest means
    chance, gap = teams_start(skills, None, skills.tolist(), [0, 0, 1, 1, 2, 2], beta2)
    assert math.isnan(chance) and gap == pytest.approx(0.85 - 0.75)  # means 0.75, 0.75, 0.85
