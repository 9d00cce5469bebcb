"""Two-team games (lobbysim/policies/teams.py): the best split against an exhaustive search of
TrueSkill's two-team quality (the ``trueskill`` library), translation invariance, the tie-break,
random splits, and the predicted win chance against openskill and the model's own draws."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
import trueskill
from openskill.models import ThurstoneMostellerFull

from lobbysim.policies.teams import (
    best_split,
    least_gaps,
    random_split,
    seat_teams,
    split_quality,
    stronger_win_chance,
    team_quality,
)


def _case(rng: np.random.Generator, team: int) -> tuple[list[int], float]:
    """Ticket sizes for two teams of ``team`` (parties of up to ``team``), and a parity limit."""
    sizes: list[int] = []
    while sum(sizes) < 2 * team:
        biggest = min(team, 2 * team - sum(sizes))
        sizes.append(int(rng.choice([1, 1, 1, int(rng.integers(1, biggest + 1))])))
    rng.shuffle(sizes)
    parity = float(rng.choice([0, 1, 2, 3, math.inf]))
    return sizes, parity


def _exhaustive(
    sizes: list[int],
    members: list[list[tuple[float, float]]],
    team: int,
    parity: float,
    beta2: float,
) -> tuple[float, list[tuple[int, ...]]]:
    """Every way to put whole tickets on two teams of ``team`` within the parity limit, scored
    by trueskill's quality of the members' (mu, sigma^2): the best quality and its splits."""
    env = trueskill.TrueSkill(mu=0.0, sigma=1.0, beta=math.sqrt(beta2), draw_probability=0.1)
    best, best_splits = -1.0, []
    for labels in itertools.product((0, 1), repeat=len(sizes)):
        if labels[0] != 0 or sum(s for s, t in zip(sizes, labels, strict=True) if t == 0) != team:
            continue
        premade = [
            sum(s for s, t in zip(sizes, labels, strict=True) if t == side and s >= 2)
            for side in (0, 1)
        ]
        if abs(premade[0] - premade[1]) > parity:
            continue
        teams = [
            [
                env.create_rating(mu, math.sqrt(var))
                for k, t in enumerate(labels)
                if t == side
                for mu, var in members[k]
            ]
            for side in (0, 1)
        ]
        quality = env.quality(teams)
        if quality > best + 1e-12:
            best, best_splits = quality, [labels]
        elif quality > best - 1e-12:
            best_splits.append(labels)
    return best, best_splits


@pytest.mark.slow
@pytest.mark.parametrize("team", [4, 5])
def test_the_split_is_the_best_of_an_exhaustive_search_of_trueskills_quality(team: int) -> None:
    """>= 400 random games with parties, variances and parity limits per team size."""
    rng = np.random.default_rng(41 + team)
    checked = refused = 0
    for case in range(800):
        sizes, parity = _case(rng, team)
        beta2 = float(rng.choice([1.0, 2.5, 25.0]))
        centre = float(rng.normal(0, 10))
        members = [
            [(centre + float(rng.normal(0, 2)), float(rng.uniform(0.0, 4.0))) for _ in range(s)]
            for s in sizes
        ]
        ratings = [float(np.mean([mu for mu, _ in m])) for m in members]  # the party's average
        got = best_split(sizes, ratings, team, parity)
        best, splits = _exhaustive(sizes, members, team, parity, beta2)
        if not splits:
            assert got is None, case
            refused += 1
            continue
        assert got is not None, case
        assert tuple(got) in splits, case
        mu = np.array([mu for m in members for mu, _ in m])
        var = np.array([var for m in members for _, var in m])
        everyone = np.arange(mu.size)
        quality = split_quality(mu, var, everyone, seat_teams(members, got), beta2)
        assert quality == pytest.approx(best, rel=1e-12), case
        checked += 1
    assert checked >= 400 and refused > 0


def test_team_quality_is_trueskills_and_its_win_chance_the_models() -> None:
    rng = np.random.default_rng(7)
    beta2 = 2.5
    env = trueskill.TrueSkill(mu=0.0, sigma=1.0, beta=math.sqrt(beta2))
    model = ThurstoneMostellerFull(mu=0.0, sigma=1.0, beta=math.sqrt(beta2))
    for n in (1, 2, 4, 5):
        mu, var = rng.normal(0, 2, 2 * n), rng.uniform(0, 3, 2 * n)
        gap, var_sum = mu[:n].sum() - mu[n:].sum(), var.sum()
        teams = [
            [env.create_rating(m, math.sqrt(v)) for m, v in zip(mu[s], var[s], strict=True)]
            for s in (slice(0, n), slice(n, None))
        ]
        assert team_quality(gap, var_sum, 2 * n, beta2) == pytest.approx(
            env.quality(teams), rel=1e-12
        )
        chance = stronger_win_chance(float(gap), float(var_sum), 2 * n, beta2)
        # the model: each player performs N(skill, var + beta2); the higher team total wins
        draws = rng.normal(mu, np.sqrt(var + beta2), size=(400_000, 2 * n))
        won = (draws[:, :n].sum(axis=1) > draws[:, n:].sum(axis=1)).mean()
        stronger = won if gap > 0 else 1.0 - won
        assert chance == pytest.approx(stronger, abs=0.004)
        assert chance >= 0.5
        if n == 1:  # one player a side: openskill's predicted win, exactly
            a = [model.rating(mu=float(mu[0]), sigma=float(math.sqrt(var[0])))]
            b = [model.rating(mu=float(mu[1]), sigma=float(math.sqrt(var[1])))]
            assert chance == pytest.approx(max(model.predict_win([a, b])), rel=1e-12)
    assert stronger_win_chance(0.0, 1.0, 8, beta2) == 0.5


def test_adding_a_constant_to_every_rating_changes_no_split() -> None:
    rng = np.random.default_rng(3)
    for case in range(600):
        team = int(rng.choice([2, 3, 4, 5]))
        sizes, parity = _case(rng, team)
        ratings = rng.normal(float(rng.choice([0.0, -5.0])), 1.0, len(sizes))
        if case % 5 == 0:  # ties: whole numbers
            ratings = np.round(ratings * 2)
        split = best_split(sizes, ratings.tolist(), team, parity)
        for shift in (-5.0, 3.7, 100.0, 1e4):
            assert best_split(sizes, (ratings + shift).tolist(), team, parity) == split, case
    # solo windows too, as the pass scores them
    rows = rng.normal(0, 1, (200, 8))
    assert np.allclose(least_gaps(rows + 1e3), least_gaps(rows), atol=1e-9)


def test_the_issues_example_and_the_greedys_bias() -> None:
    means = [4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0]
    split = best_split([1] * 8, means, 4)
    assert split is not None
    side = np.array(split)
    assert np.sum(np.array(means)[side == 0]) == np.sum(np.array(means)[side == 1])
    # the least gap of random N(0, 1) eights is small, and the same for N(-5, 1)
    rng = np.random.default_rng(0)
    rows = rng.normal(0, 1, (4000, 8))
    for centre in (0.0, -5.0):
        mean_gap = float((least_gaps(rows + centre) / 4).mean())  # between the teams' means
        assert mean_gap < 0.04


def test_ties_go_to_the_split_whose_teams_are_spread_alike() -> None:
    means = [3.0, 3.0, -3.0, -3.0, 1.0, 1.0, -1.0, -1.0]
    split = best_split([1] * 8, means, 4)
    assert split is not None
    for side in (0, 1):  # each team: one of 3, -3, 1 and -1 (not 3, 3, -3, -3 against the rest)
        team = sorted(m for m, t in zip(means, split, strict=True) if t == side)
        assert team == [-3.0, -1.0, 1.0, 3.0]
    # equal spreads too: the first split in ticket order
    assert best_split([1, 1, 1, 1], [1.0, 1.0, 1.0, 1.0], 2) == [0, 0, 1, 1]


def test_whole_tickets_and_the_parity_limit_are_kept() -> None:
    # a party of three on one side; the parity limit 1 forbids parties of two on both sides...
    assert best_split([3, 1, 1, 1, 1, 1], [0.0] * 6, 3, 0.0) is None
    split = best_split([2, 2, 1, 1, 1, 1], [5.0, 0.0, 1.0, 1.0, 1.0, 1.0], 4, 0.0)
    assert split is not None and split[0] != split[1]  # one party a side
    assert best_split([3, 3, 3, 1], [0.0] * 4, 5) is None  # nothing fills two teams of 5


def test_a_random_split_is_uniform_over_the_splits_that_fit() -> None:
    rng = np.random.default_rng(1)
    seen = Counter(tuple(random_split([1, 1, 1, 1], 2, rng)) for _ in range(6000))  # type: ignore[arg-type]
    assert set(seen) == {(0, 0, 1, 1), (0, 1, 0, 1), (0, 1, 1, 0)}
    assert all(abs(count - 2000) < 150 for count in seen.values())
    parity = Counter(tuple(random_split([2, 2, 1, 1, 1, 1], 4, rng, 0.0)) for _ in range(500))  # type: ignore[arg-type]
    assert all(labels[0] != labels[1] for labels in parity)
    assert random_split([3, 1, 1, 1, 1, 1], 3, rng, 0.0) is None


def test_least_gaps_are_the_best_splits_gaps() -> None:
    rng = np.random.default_rng(5)
    for size in (4, 8, 10):
        rows = rng.normal(0, 2, (50, size))
        gaps = least_gaps(rows)
        for row, gap in zip(rows, gaps, strict=True):
            split = np.array(best_split([1] * size, row.tolist(), size // 2))
            assert abs(row[split == 0].sum() - row[split == 1].sum()) == pytest.approx(
                gap, abs=1e-9
            )
