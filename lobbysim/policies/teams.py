"""Two-team games: the best split of a group into its two teams, and the split's match quality.

**The split.** A team game's players come as tickets (a solo player, or a party that plays on
one team). Of every way to fill the two teams of ``team_size`` with whole tickets (35 for a solo
4v4, 126 for a 5v5; the ways for a pattern of ticket sizes are kept, :func:`_fine_splits`),
:func:`best_split` takes the one whose teams' rating sums are nearest (a ticket counts its
rating for matching once per member), among those whose counts of players in parties differ
by at most the parity limit; ties (within a relative 1e-9) go to the smaller difference of the
teams' spreads (the sum of squared deviations of their members' ratings from the game's mean),
then to the first in ticket order. Ratings are taken relative to the game's mean, so adding a
constant to every rating changes no split. For two teams of ``k`` players each, TrueSkill's
match quality of a split (:func:`team_quality`) falls with the square of the difference of the
sums and its variance term is the same for every split of the same players, so the nearest sums
are the highest quality. The oracle splits the same way on true skills; ``uniform_random``
splits at random (:func:`random_split`), being no matchmaking.

**The quality of a split** (:func:`team_quality`): with ``n`` players in all, the difference
``d`` of the teams' rating sums and ``c^2 = n beta2 + sum of the n players' variances``,

    q = sqrt(n beta2 / c^2) exp(-d^2 / (2 c^2)),

TrueSkill's two-team match quality (the draw probability of the split relative to that of two
equal teams); for one player a side it is the 1v1 quality. :func:`stronger_win_chance` is the
predicted chance that the team with the higher sum wins, ``Phi(|d| / c)``: 0.5 for two equal
teams. A policy may score a team game its own way (:func:`team_score_of`).

Everything here is SimPy-free; tests/policies/test_teams.py checks the split against an
exhaustive search and the quality against the ``trueskill`` library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from numpy.typing import NDArray

from lobbysim.policies.base import FloatArray, IntArray

#: Two splits whose differences of rating sums are within this share of the game's spread of
#: ratings (the sum of their absolute deviations from its mean) are a tie; so are two whose
#: differences of spreads are within this share of the game's sum of squared deviations.
TIE_TOLERANCE = 1e-9

#: ``score(gap, var_sum, players, beta2)``: a policy's score of two-team games in [0, 1], from
#: each game's difference of the teams' rating sums, the sum of its players' variances, its
#: number of players and the performance variance (:func:`team_score_of`).
TeamScore = Callable[[FloatArray, FloatArray, int, float], FloatArray]


def team_quality(gap: FloatArray, var_sum: FloatArray, players: int, beta2: float) -> FloatArray:
    """Return TrueSkill's two-team match quality of splits (see the module docstring).

    Args:
        gap: the difference of the two teams' rating sums, per split.
        var_sum: the sum of all the players' rating variances, per split (0: none).
        players: the number of players in the game (both teams).
        beta2: the performance variance on the rating scale.
    """
    c2 = players * beta2 + np.asarray(var_sum, dtype=np.float64)
    d = np.asarray(gap, dtype=np.float64)
    return np.asarray(np.sqrt(players * beta2 / c2) * np.exp(-(d * d) / (2.0 * c2)))


def stronger_win_chance(gap: float, var_sum: float, players: int, beta2: float) -> float:
    """Return the predicted chance that the team with the higher rating sum wins,
    ``Phi(|gap| / c)`` with ``c^2 = players beta2 + var_sum`` (0.5 for equal sums)."""
    return 0.5 * math.erfc(-abs(gap) / math.sqrt(2.0 * (players * beta2 + var_sum)))


def split_quality(
    mu: FloatArray, var: FloatArray, members: IntArray, teams: Sequence[int], beta2: float
) -> float:
    """Return TrueSkill's two-team match quality (:func:`team_quality`, on floats) of a game of
    ``members`` (indices into ``mu`` and ``var``) on ``teams`` (each member's)."""
    gap = _gap(mu[members].tolist(), teams)
    c2 = len(members) * beta2 + math.fsum(var[members].tolist())
    return math.sqrt(len(members) * beta2 / c2) * math.exp(-(gap * gap) / (2.0 * c2))


def _gap(values: Sequence[float], teams: Sequence[int | None]) -> float:
    """Return team 0's sum of ``values`` less team 1's."""
    return math.fsum(v if t == 0 else -v for v, t in zip(values, teams, strict=True))


def team_start(
    means: FloatArray,
    variances: FloatArray | None,
    truths: Sequence[float],
    teams: Sequence[int | None],
    beta2: float,
) -> tuple[float, float]:
    """Return a team game's predicted chance that its stronger team wins
    (:func:`stronger_win_chance` of the players' rating ``means`` and ``variances``, None: 0)
    and the true gap between its teams' mean skills (``truths``), each player on ``teams``."""
    n = len(teams)
    gap = _gap(np.asarray(means, dtype=np.float64).tolist(), teams)
    var_sum = 0.0 if variances is None else math.fsum(np.asarray(variances).tolist())
    chance = stronger_win_chance(gap, var_sum, n, beta2)
    size_a = sum(1 for t in teams if t == 0)
    truth_a = math.fsum(v for v, t in zip(truths, teams, strict=True) if t == 0)
    truth_b = math.fsum(v for v, t in zip(truths, teams, strict=True) if t != 0)
    return chance, abs(truth_a / size_a - truth_b / (n - size_a))


def point_team_quality(
    gap: FloatArray, var_sum: FloatArray, players: int, beta2: float
) -> FloatArray:
    """Return :func:`team_quality` with every variance taken as 0: a team game's score for a
    policy blind to the variances (point estimate)."""
    return team_quality(gap, np.zeros_like(np.asarray(var_sum, dtype=np.float64)), players, beta2)


def team_score_of(policy: object) -> TeamScore:
    """Return how ``policy`` scores a two-team game: its ``score_teams`` method, which takes
    ``(gap, var_sum, players, beta2)`` arrays as :func:`team_quality` does and returns scores in
    [0, 1] that the quality threshold admits; a policy that declares none gets the split's
    quality, :func:`team_quality` (DrawChance's draw chance of the game it starts).

    Raises:
        ValueError: ``score_teams`` is there but cannot be called.
    """
    method = getattr(policy, "score_teams", None)
    if method is None:
        return team_quality
    if not callable(method):
        raise ValueError(f"score_teams must be a method, got {method!r}")
    return method


@dataclass(frozen=True)
class TeamScoring:
    """How a pass scores the two-team games it may start.

    Attributes:
        var: the rating variances of the players (aligned with the ratings the games are
            formed from; zeros for a rater without variances or a policy that sees the truth).
        beta2: the performance variance on the rating scale.
        score: the policy's score (:func:`team_score_of`).
    """

    var: FloatArray
    beta2: float
    score: TeamScore

    def scores(self, gaps: FloatArray, members: IntArray) -> FloatArray:
        """Return the score of each game, of ``members`` (rows of indices into :attr:`var`)
        whose best split leaves the teams' rating sums ``gaps`` apart."""
        members = np.asarray(members)
        return self.score(gaps, self.var[members].sum(axis=-1), members.shape[-1], self.beta2)


# --- the split ---------------------------------------------------------------------------------


def best_split(
    sizes: Sequence[int],
    ratings: Sequence[float],
    team_size: int,
    max_premade_gap: float = math.inf,
) -> list[int] | None:
    """Return each ticket's team (0 or 1) of the best split (see the module docstring), or None
    if no split fills both teams within the parity limit.

    Args:
        sizes: each ticket's players.
        ratings: each ticket's rating for matching (a member's own for a solo player).
        team_size: players per team.
        max_premade_gap: the most by which the teams' counts of players in parties (tickets of
            two or more) may differ.
    """
    plan = _split_plan(tuple(int(s) for s in sizes), team_size, max_premade_gap)
    if plan is None:
        return None
    labels, bits = plan  # the splits that fit: each ticket's team, and team 0's tickets 1..
    size = np.asarray(sizes, dtype=np.float64)
    rating = np.asarray(ratings, dtype=np.float64)
    if len(labels) == 1 or not np.isfinite(rating).all():  # one split, or nothing to balance
        return labels[0]
    centred = rating - (size @ rating) / size.sum()
    totals = size * centred
    gap = np.abs(2.0 * (totals[0] + bits @ totals[1:]) - totals.sum())
    tied = gap <= gap.min() + TIE_TOLERANCE * float(np.abs(totals).sum())
    if np.count_nonzero(tied) > 1:
        squares = size * centred * centred
        spread = np.abs(2.0 * (squares[0] + bits @ squares[1:]) - squares.sum())
        spread[~tied] = np.inf
        tied &= spread <= spread.min() + TIE_TOLERANCE * float(squares.sum())
    return labels[int(np.argmax(tied))]  # the first of the ties in ticket order


def random_split(
    sizes: Sequence[int],
    team_size: int,
    rng: np.random.Generator,
    max_premade_gap: float = math.inf,
) -> list[int] | None:
    """Return each ticket's team of a split drawn uniformly from those that fill both teams
    within the parity limit (one integer drawn from ``rng``), or None if there is none."""
    fine = _fine_splits(tuple(int(s) for s in sizes), team_size, max_premade_gap)
    if fine is None:
        return None
    choices = np.flatnonzero(fine)
    best = int(choices[rng.integers(choices.size)])
    return [0, *(1 - _splits(len(sizes))[best]).tolist()]


def least_gaps(ratings: FloatArray) -> FloatArray:
    """Return, for each row of solo players' ratings (``(W, 2k)``), the least difference of
    the two teams' rating sums over its splits into two teams of ``k``: the gap of
    :func:`best_split`'s split of that row, for every row at once."""
    rows = np.asarray(ratings, dtype=np.float64)
    size = rows.shape[1]
    fine = _fine_splits((1,) * size, size // 2, math.inf)
    assert fine is not None
    bits = _splits(size)[fine].astype(np.float64)  # (S, size - 1)
    centred = rows - rows.mean(axis=1, keepdims=True)
    team0 = centred[:, :1] + centred[:, 1:] @ bits.T  # (W, S): team 0's centred sum
    return np.asarray(np.abs(2.0 * team0).min(axis=1))


def seat_teams(tickets: Sequence[Sequence[int]], split: Sequence[int]) -> list[int]:
    """Return each member's team, in the order of ``tickets``' members, from each ticket's."""
    return [team for ticket, team in zip(tickets, split, strict=True) for _ in ticket]


@lru_cache(maxsize=4096)
def _split_plan(
    sizes: tuple[int, ...], team_size: int, max_premade_gap: float
) -> tuple[list[list[int]], NDArray[np.float64]] | None:
    """Return the splits that fit (:func:`_fine_splits`), in the order of :func:`_splits`: each
    ticket's team, and as rows of floats whether each of tickets 1.. is on team 0 (read-only);
    None if none fits."""
    fine = _fine_splits(sizes, team_size, max_premade_gap)
    if fine is None:
        return None
    bits = _splits(len(sizes))[fine]
    labels = [[0, *(1 - row).tolist()] for row in bits]
    rows = bits.astype(np.float64)
    rows.flags.writeable = False
    return labels, rows


@lru_cache(maxsize=4096)
def _fine_splits(
    sizes: tuple[int, ...], team_size: int, max_premade_gap: float
) -> NDArray[np.bool_] | None:
    """Return which splits of :func:`_splits` fill both teams of ``team_size`` with counts of
    players in parties differing by at most ``max_premade_gap`` (read-only), or None if none
    does: what a split asks of the tickets' sizes, once per sizes."""
    bits = _splits(len(sizes))
    size = np.asarray(sizes, dtype=np.int64)
    filled = size[0] + bits @ size[1:]
    premade = np.where(size >= 2, size, 0)
    mine = premade[0] + bits @ premade[1:]
    fine = (filled == team_size) & (np.abs(2 * mine - premade.sum()) <= max_premade_gap)
    if not fine.any():
        return None
    fine.flags.writeable = False
    return fine


@cache
def _splits(n: int) -> NDArray[np.int64]:
    """Return every subset of tickets 1..n-1 as rows of bits (read-only), in counting order: a
    row's bit j is 1 if ticket j + 1 is on ticket 0's team (team 0), so its team is ``1 - bit``."""
    rows = (np.arange(2 ** (n - 1))[:, None] >> np.arange(n - 1)[None, :]) & 1
    rows = rows.astype(np.int64)
    rows.flags.writeable = False
    return rows
