"""The skills' spread (lobbysim/calibration/skills.py): the predictive likelihood's peak is
searched for beyond the first guess's reach, so a wide spread is not read short."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from lobbysim.calibration.skills import fit_skill, replay_beliefs
from tests.calibration.logs import make_log


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
    sd, method = fit_skill(log, 2.5)
    assert method == "predictive likelihood"
    assert sd > 1.25 * first
    assert abs(sd / float(np.std(skill)) - 1) < 0.05
