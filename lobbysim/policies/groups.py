"""Forming multi-player games (team and free-for-all) from waiting players.

A game of G players is formed from G players adjacent in rating (the multi-player form of the
point-estimate rule). Every run of G consecutive players in rating order is a candidate group.
A free-for-all group's quality is the mean match quality over all its pairs of players (every
player faces every other); a team game's is the policy's score of the split it will play
(:mod:`lobbysim.policies.teams`: the best split of the group into two teams, scored by default
with TrueSkill's two-team quality), so that a group is admitted on the game it starts. A group
is admissible when its quality clears the threshold for the longest wait in the group and no
pair of it is barred (quality ``-inf``: the rematch rule, latency limits). Admissible groups are
taken greedily in rating order without overlap. Everything is vectorised over the candidate
groups; this module is SimPy-free.

:func:`group_qualities` gives each formed free-for-all group's quality from one call of the
quality.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

from lobbysim.policies.assignment import QualityFn
from lobbysim.policies.base import FloatArray, IntArray
from lobbysim.policies.teams import TeamScoring, least_gaps
from lobbysim.policies.thresholds import ThresholdSchedule


def form_groups(
    mu: FloatArray,
    waited: FloatArray,
    size: int,
    quality: QualityFn,
    threshold: ThresholdSchedule,
    teams: TeamScoring | None = None,
) -> list[IntArray]:
    """Return groups of ``size`` pool indices, players adjacent in rating, admissible and disjoint.

    Args:
        mu: the waiting players' rating means.
        waited: minutes each has waited.
        size: players per game (2k for k vs k, n for an n-player free-for-all).
        quality: match quality of index pairs (``-inf``: the pair may not meet).
        threshold: the relaxation schedule; a group's bar is the one for its longest wait.
        teams: how a two-team game is scored (its variances aligned with ``mu``); None: a
            free-for-all, scored by the mean quality of its pairs.
    """
    n = mu.shape[0]
    if n < size:
        return []
    order = np.argsort(mu, kind="stable")
    windows = sliding_window_view(order, size)  # (W, size)
    pairs = np.array(list(itertools.combinations(range(size), 2)), dtype=np.intp)
    a, b = windows[:, pairs[:, 0]], windows[:, pairs[:, 1]]
    pair_quality = quality(a.ravel(), b.ravel()).reshape(a.shape)
    if teams is None:
        group_quality = pair_quality.mean(axis=1)
    else:
        scores = teams.scores(least_gaps(mu[windows]), windows)
        group_quality = np.where(np.isfinite(pair_quality).all(axis=1), scores, -np.inf)
    bar = threshold.at(waited[windows].max(axis=1))
    admissible = np.flatnonzero(group_quality >= bar)
    groups: list[NDArray[np.intp]] = []
    next_free = 0
    for w in admissible.tolist():
        if w >= next_free:
            groups.append(windows[w].copy())
            next_free = w + size
    return groups


def group_qualities(groups: list[IntArray], quality: QualityFn) -> list[float]:
    """Return each group's mean match quality over its pairs, from one call of ``quality``.

    Equal to ``float(quality(*_all_pairs(group)).mean())`` per group, bit for bit: a quality
    is per pair (:meth:`lobbysim.raters.Rater.quality`), and each group's mean is taken over
    its own contiguous row of the values, in pair order, as over that group's array (tested in
    tests/sim/test_fast_paths.py).

    Groups of different sizes (games of a range of players) are taken size by size; a group of
    one player has no pair and the quality 1.

    Args:
        groups: the groups, each an array of pool indices.
        quality: match quality of index pairs.
    """
    if not groups:
        return []
    sizes = {len(g) for g in groups}
    if len(sizes) > 1 or sizes == {1}:
        out = [1.0] * len(groups)
        for size in sizes - {1}:
            at = [k for k, g in enumerate(groups) if len(g) == size]
            for k, value in zip(at, group_qualities([groups[k] for k in at], quality), strict=True):
                out[k] = value
        return out
    stacked = np.array(groups)
    i, j = _pair_indices(stacked.shape[1])
    values = quality(stacked[:, i].ravel(), stacked[:, j].ravel()).reshape(len(groups), -1)
    return [float(row.mean()) for row in values]


def _all_pairs(group: IntArray) -> tuple[IntArray, IntArray]:
    """Return every pair of a group's pool indices, in pair order (as :func:`group_qualities`
    pairs them)."""
    i, j = _pair_indices(len(group))
    return group[i], group[j]


@cache
def _pair_indices(n: int) -> tuple[IntArray, IntArray]:
    """Return ``np.triu_indices(n, k=1)`` (made once per group size; read-only)."""
    i, j = np.triu_indices(n, k=1)
    i.flags.writeable = False
    j.flags.writeable = False
    return i, j
