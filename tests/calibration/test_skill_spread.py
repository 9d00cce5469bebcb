"""The skills' spread (lobbysim/calibration/skills.py): fixed effects read a log whose pairings
were made by skill (a running game's) as one of random pairings, where a prior on the skills
reads it narrow; the replay's predictive likelihood's peak is searched for beyond the first
guess's reach, so a wide spread is not read short."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from lobbysim.calibration.skills import (
    fit_skill,
    fixed_effects_spread,
    replay_beliefs,
    replay_spread,
    skill_fit,
)
from tests.calibration.logs import Match, make_log


def test_a_wide_spread_is_found_beyond_the_first_guess() -> None:
    """200 players of skill sd 4 in 3,000 random 1v1 games (30 each), results drawn from the
    model (performance noise beta^2 2.5): the first guess (the law of total variance under the
    prior sd 2) is 2.54; the peak lies beyond the 1.25 x 2.54 = 3.18 the search used to stop
    at, and is found within 5% of the drawn players' spread."""
    rng = np.random.default_rng(5)
    skill = rng.normal(0.0, 4.0, 200)
    matches = []
    for k in range(3000):
        a, b = (int(x) for x in rng.choice(200, 2, replace=False))
        won = bool(rng.random() < ndtr((skill[a] - skill[b]) / math.sqrt(5.0)))
        matches.append((0.5 * k, 0.5 * k + 1.0, [(a, 0, 0 if won else 1), (b, 1, 1 if won else 0)]))
    log = make_log(matches)
    mu, var, games, _ = replay_beliefs(log, 4.0, 2.5)
    first = math.sqrt(float(np.var(mu[games >= 20]) + np.mean(var[games >= 20])))
    sd, method = replay_spread(log, 2.5)
    assert method == "predictive likelihood"
    assert sd > 1.25 * first
    assert abs(sd / float(np.std(skill)) - 1) < 0.05


def _paired_by_skill(seed: int, width: int = 60) -> tuple[list[Match], np.ndarray]:
    """300 players of skill sd 3, 6,000 1v1 games each between a player and one of the 59
    nearest in skill either side (a matchmaker that knows them), results drawn from the model
    (beta^2 2.5): a log cut from a running game, whose pairings the log's results did not make."""
    rng = np.random.default_rng(seed)
    n, games = 300, 6000
    skill = np.sort(rng.normal(0.0, 3.0, n))
    i = rng.integers(0, n, games)
    j = np.clip(i + rng.integers(1, width, games) * rng.choice([-1, 1], games), 0, n - 1)
    j = np.where(j == i, np.where(i < n - 1, i + 1, i - 1), j)
    won = rng.random(games) < ndtr((skill[i] - skill[j]) / math.sqrt(5.0))
    matches = [
        (0.5 * k, 0.5 * k + 1.0, [(int(a), 0, 0 if w else 1), (int(b), 1, 1 if w else 0)])
        for k, (a, b, w) in enumerate(zip(i.tolist(), j.tolist(), won.tolist(), strict=True))
    ]
    return matches, skill


def test_pairings_by_skill_are_read_as_random_ones_by_fixed_effects() -> None:
    """Players paired with others close in skill win about half their games whatever the
    spread: a prior on the skills (the replay's predictive likelihood, any marginal likelihood)
    takes that for a narrow spread; fixed effects read the results alone (the error variance
    taken off and the common level given back): 0.95 to 1.12 times the drawn spread on seeds 1
    to 6, 1.06 on average (the maximum likelihood's own inflation with some 40 games a player,
    which the refinement by simulation measures and takes off)."""
    for seed in (1, 2):
        matches, skill = _paired_by_skill(seed)
        log = make_log(matches)
        sd, method, error = skill_fit(log, 2.5)
        assert method == "fixed effects"
        assert 0.93 < sd / float(np.std(skill)) < 1.15, (seed, sd)
        assert 0 < error < 0.2 * sd
        if seed == 1:
            replayed, _ = replay_spread(log, 2.5)
            assert replayed < 0.5 * float(np.std(skill)), replayed  # the prior's: too narrow


def test_fixed_effects_need_ten_players_with_enough_games() -> None:
    matches, _ = _paired_by_skill(3)
    log = make_log(matches[:300])  # 2 games a player on average
    assert fixed_effects_spread(log, 2.5) is None
    sd, method = fit_skill(log, 2.5)  # the replay instead
    assert method.startswith(("law of total variance", "predictive")) and sd > 0
