"""Forming multi-player groups (the team split: tests/policies/test_teams.py)."""

from __future__ import annotations

import numpy as np

from lobbysim.policies.groups import form_groups
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.skill.gaussian import match_quality


def test_groups_are_rating_neighbours_disjoint_and_admissible() -> None:
    rng = np.random.default_rng(0)
    mu, var = rng.normal(0, 2, 40), np.full(40, 1.0)
    waited = np.zeros(40)

    def quality(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return match_quality(mu[i], var[i], mu[j], var[j], 2.5)

    groups = form_groups(mu, waited, 4, quality, ThresholdSchedule(((0, 0.0),)))
    assert len(groups) == 10  # threshold 0: everyone is placed
    flat = np.concatenate(groups)
    assert len(set(flat.tolist())) == 40
    order = np.argsort(mu)
    rank = np.empty(40, dtype=int)
    rank[order] = np.arange(40)
    for g in groups:
        assert sorted(rank[g].tolist()) == list(range(rank[g].min(), rank[g].min() + 4))
    strict = form_groups(mu, waited, 4, quality, ThresholdSchedule(((0, 0.8),)))
    for g in strict:
        i, j = np.triu_indices(4, k=1)
        assert quality(g[i], g[j]).mean() >= 0.8
    assert len(strict) < len(groups)
    relaxed = form_groups(mu, np.full(40, 5.0), 4, quality, ThresholdSchedule(((0, 0.8), (4, 0.0))))
    assert len(relaxed) == 10  # after waiting, the bar drops
