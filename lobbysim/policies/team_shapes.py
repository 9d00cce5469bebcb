"""Games of any teams: ranges of players, uneven teams, more than two teams.

:mod:`lobbysim.policies.teams` splits a group into two teams of one fixed size exactly. A game
whose teams are given one by one (``game.teams``, :mod:`lobbysim.scenario.teams`) is split here:

**The sizes** (:func:`fill_sizes`): FlexMatch's documented order of filling teams: each player
goes to a team that has not reached its minimum, else to one below its maximum, and of those to
the team with the most open seats (ties to the first). Teams of one range thus end within one
player of each other; an uneven game fills its larger teams first.

**The split** (:func:`spread_split`): whole tickets (a solo player, or a party, which plays on one
team) on teams of those sizes, the teams' mean ratings as close as can be found: tickets are
placed largest first (then the highest rating first), each on the team with room where it adds
least to ``sum over teams of (team's sum of centred ratings)^2 / team's size`` (the players'
count times the spread of the teams' mean ratings about the game's); then the swap of two
tickets of one size on different teams that lowers that sum most is made, again and again,
until none does (at most :data:`MAX_SWAPS`). Ratings are centred on the game's mean first, so a
rating's sign never misleads the placing (a greedy that gives each next player to the team of
lowest sum is wrong once ratings go below zero). It is a heuristic: tests/policies/
test_team_shapes.py compares it with an exhaustive search on small games.

**The quality and prediction** (:func:`teams_quality`, :func:`teams_start`): each team is taken
as one side whose performance is its players' mean: two teams of ``n_a`` and ``n_b`` players
with mean ratings ``m_a``, ``m_b`` have ``c^2 = beta2 (1/n_a + 1/n_b) + var_a / n_a^2 + var_b /
n_b^2`` (``var``: a team's sum of rating variances), the quality ``sqrt(beta2 (1/n_a + 1/n_b) /
c^2) exp(-(m_a - m_b)^2 / (2 c^2))`` (1 for two equal teams known exactly) and the predicted
chance that the team of higher mean wins ``Phi(|m_a - m_b| / c)``; more teams: the mean quality
over every two teams, and no predicted chance (NaN). The true gap is that of the teams' mean
skills (more teams: the largest less the smallest).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from lobbysim.policies.base import FloatArray, IntArray

#: The most swaps :func:`spread_split` makes after placing the tickets.
MAX_SWAPS = 200


def fill_sizes(players: int, lows: Sequence[int], highs: Sequence[int]) -> list[int]:
    """Return how many of ``players`` each team gets in FlexMatch's order of filling (see the
    module docstring); ``players`` is at most the sum of ``highs``."""
    counts = [0] * len(highs)
    for _ in range(players):
        below = [t for t, c in enumerate(counts) if c < lows[t]]
        open_ = below or [t for t, c in enumerate(counts) if c < highs[t]]
        if not open_:
            raise ValueError(f"{players} players do not fit teams of at most {list(highs)}")
        best = max(open_, key=lambda t: (highs[t] - counts[t], -t))
        counts[best] += 1
    return counts


def spread_split(
    sizes: Sequence[int],
    ratings: Sequence[float],
    lows: Sequence[int],
    highs: Sequence[int],
) -> list[int] | None:
    """Return each ticket's team (0, 1, ...) of the split of :func:`fill_sizes`'s sizes with the
    teams' mean ratings close (see the module docstring), or None if the tickets cannot fill
    every team to its minimum within its maximum.

    Args:
        sizes: each ticket's players.
        ratings: each ticket's rating for matching (a member's own for a solo player).
        lows, highs: each team's least and most players.
    """
    size = np.asarray(sizes, dtype=np.int64)
    players = int(size.sum())
    if players < sum(lows) or players > sum(highs) or (size.size and size.max() > max(highs)):
        return None
    target = fill_sizes(players, lows, highs)
    rating = np.asarray(ratings, dtype=np.float64)
    if not np.isfinite(rating).all():
        rating = np.zeros_like(rating)
    centred = rating - (size @ rating) / max(players, 1)
    value = size * centred  # each ticket's share of its team's sum
    n_teams = len(highs)
    count = np.zeros(n_teams, dtype=np.int64)
    total = np.zeros(n_teams)
    team = np.full(size.size, -1, dtype=np.int64)
    order = np.lexsort((np.arange(size.size), -centred, -size))
    cap = np.asarray(target, dtype=np.int64)
    high = np.asarray(highs, dtype=np.int64)
    for k in order.tolist():
        s = int(size[k])
        room = count + s <= cap
        if not room.any():
            room = count + s <= high
            if not room.any():
                return None
        weight = np.maximum(cap, 1).astype(np.float64)
        added = ((total + value[k]) ** 2 - total**2) / weight
        added[~room] = np.inf
        t = int(np.argmin(added))
        team[k] = t
        count[t] += s
        total[t] += value[k]
    if (count < np.asarray(lows)).any():
        return None
    _improve(team, size, value, count, total)
    return [int(t) for t in team.tolist()]


def _improve(
    team: IntArray, size: IntArray, value: FloatArray, count: IntArray, total: FloatArray
) -> None:
    """Make the best swap of two tickets of one size on different teams while one lowers
    ``sum(total^2 / count)`` (in place; see the module docstring)."""
    for _ in range(MAX_SWAPS):
        weight = np.maximum(count, 1).astype(np.float64)
        a, b = np.triu_indices(team.size, k=1)
        keep = (team[a] != team[b]) & (size[a] == size[b])
        a, b = a[keep], b[keep]
        if not a.size:
            return
        ta, tb = team[a], team[b]
        moved = value[b] - value[a]  # team ta gains b and loses a
        before = total[ta] ** 2 / weight[ta] + total[tb] ** 2 / weight[tb]
        after = (total[ta] + moved) ** 2 / weight[ta] + (total[tb] - moved) ** 2 / weight[tb]
        gain = before - after
        best = int(np.argmax(gain))
        scale = float(np.abs(value).sum()) or 1.0
        if gain[best] <= 1e-12 * scale * scale:
            return
        i, j = int(a[best]), int(b[best])
        total[team[i]] += value[j] - value[i]
        total[team[j]] += value[i] - value[j]
        team[i], team[j] = team[j], team[i]


def _sides(
    values: Sequence[float], teams: Sequence[int]
) -> tuple[list[int], list[float], list[int]]:
    """Return the teams present (in order), the sums of ``values`` on each and their sizes."""
    present = sorted(set(teams))
    sums = [math.fsum(v for v, t in zip(values, teams, strict=True) if t == p) for p in present]
    sizes = [sum(1 for t in teams if t == p) for p in present]
    return present, sums, sizes


def _pair(
    m_a: float, m_b: float, n_a: int, n_b: int, v_a: float, v_b: float, beta2: float
) -> tuple[float, float]:
    """Return the quality and the predicted chance that the team of higher mean wins, of two
    teams (see the module docstring)."""
    noise = beta2 * (1.0 / n_a + 1.0 / n_b)
    c2 = noise + v_a / (n_a * n_a) + v_b / (n_b * n_b)
    d = m_a - m_b
    quality = math.sqrt(noise / c2) * math.exp(-(d * d) / (2.0 * c2))
    return quality, 0.5 * math.erfc(-abs(d) / math.sqrt(2.0 * c2))


def teams_quality(
    mu: FloatArray, var: FloatArray, members: IntArray, teams: Sequence[int], beta2: float
) -> float:
    """Return the quality of a game of ``members`` (indices into ``mu``, ``var``) on ``teams``
    (each member's; see the module docstring)."""
    at = np.asarray(members).tolist()
    _, sums, sizes = _sides([float(mu[i]) for i in at], teams)
    _, var_sums, _ = _sides([float(var[i]) for i in at], teams)
    means = [s / n for s, n in zip(sums, sizes, strict=True)]
    pairs = [
        _pair(means[a], means[b], sizes[a], sizes[b], var_sums[a], var_sums[b], beta2)[0]
        for a in range(len(means))
        for b in range(a + 1, len(means))
    ]
    return math.fsum(pairs) / len(pairs) if pairs else 1.0


def teams_start(
    means: FloatArray,
    variances: FloatArray | None,
    truths: Sequence[float],
    teams: Sequence[int],
    beta2: float,
) -> tuple[float, float]:
    """Return a game's predicted chance that the team of higher mean rating wins (two teams;
    more: NaN) and the true gap between its teams' mean skills (see the module docstring)."""
    m = np.asarray(means, dtype=np.float64).tolist()
    v = [0.0] * len(m) if variances is None else np.asarray(variances).tolist()
    _, sums, sizes = _sides(m, teams)
    _, var_sums, _ = _sides(v, teams)
    _, truth_sums, _ = _sides(list(truths), teams)
    true_means = [s / n for s, n in zip(truth_sums, sizes, strict=True)]
    gap = max(true_means) - min(true_means)
    if len(sizes) != 2:
        return math.nan, gap
    rated = [s / n for s, n in zip(sums, sizes, strict=True)]
    _, chance = _pair(rated[0], rated[1], sizes[0], sizes[1], var_sums[0], var_sums[1], beta2)
    return chance, gap
