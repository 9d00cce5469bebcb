"""The truth of a game: what its record says about the true skills it was played at.

:func:`game_truth` computes the true draw density (docs/model.md, eq. 14), the true skill gap and
whether the stronger side won, from each seat's effective true skill; :func:`truth_1v1` and
:func:`truth_ffa` are the same values on floats for one 1v1 or free-for-all game, bit for bit
(tests/sim/test_fast_paths.py), for the lobby's kernels that score games without building seats.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from lobbysim.records.rows import Seat


def game_truth(
    mode: str, seats: Sequence[Seat], skill: Sequence[float], winner: int | None, beta2: float
) -> tuple[float, float, bool | None]:
    """Return the true draw density (eq. 14), true skill gap and whether the stronger won.

    1v1 and team: between the two sides' mean true skills (a team's mean is weighted by each
    stint's minutes); free-for-all: the means over every pair of stints, and whether the most
    skilled player had the highest score per hour; more than two teams: the means over every
    two teams, and whether the team of highest mean skill won. The draw density of a skill gap d is
    ``exp(-d^2 / (4 beta2)) / sqrt(4 pi beta2)``.

    Args:
        mode: the game's mode.
        seats: its seats, scored.
        skill: the effective true skill of each seat's player when they sat down.
        winner: the winning side, if any.
        beta2: the game's performance variance.
    """
    draw_norm = 1.0 / math.sqrt(4.0 * math.pi * beta2)
    if mode == "ffa":
        pairs = list(itertools.combinations(range(len(seats)), 2))
        if not pairs:
            return math.nan, math.nan, None
        gaps = [abs(skill[i] - skill[j]) for i, j in pairs]
        draw = sum(math.exp(-(d * d) / (4.0 * beta2)) for d in gaps) / len(gaps)
        timed = [k for k, seat in enumerate(seats) if seat.minutes > 0]
        best_sph = max(timed, key=lambda k: seats[k].score / seats[k].minutes, default=None)
        best_skill = max(timed, key=lambda k: skill[k], default=None)
        won = None if best_sph is None else best_sph == best_skill
        return draw * draw_norm, sum(gaps) / len(gaps), won
    sides = (0, 1) if mode == "1v1" else sorted({int(s.team) for s in seats if s.team is not None})
    if len(sides) > 2:  # more than two teams: the means over every two teams
        means = [_side_skill(seats, skill, team) for team in sides]
        pairs = list(itertools.combinations(range(len(means)), 2))
        gaps = [abs(means[i] - means[j]) for i, j in pairs]
        draw = sum(math.exp(-(d * d) / (4.0 * beta2)) for d in gaps) / len(gaps)
        strongest = max(means)
        won = None
        if winner is not None and means.count(strongest) == 1:
            won = winner == sides[means.index(strongest)]
        return draw * draw_norm, sum(gaps) / len(gaps), won
    side_skill = []
    for team in (0, 1):
        weights = [seat.minutes for seat in seats if seat.team == team]
        values = [sk for sk, seat in zip(skill, seats, strict=True) if seat.team == team]
        total = sum(weights)
        side_skill.append(
            sum(w * v for w, v in zip(weights, values, strict=True)) / total
            if total > 0
            else sum(values) / len(values)
        )
    s_a, s_b = side_skill
    draw = math.exp(-((s_a - s_b) ** 2) / (4.0 * beta2)) * draw_norm
    stronger_won = None if s_a == s_b or winner is None else winner == (0 if s_a > s_b else 1)
    return draw, abs(s_a - s_b), stronger_won


def _side_skill(seats: Sequence[Seat], skill: Sequence[float], team: int) -> float:
    """Return a team's mean true skill, each stint weighted by its minutes (a team of no
    minutes: the plain mean)."""
    weights = [seat.minutes for seat in seats if seat.team == team]
    values = [sk for sk, seat in zip(skill, seats, strict=True) if seat.team == team]
    total = sum(weights)
    if total > 0:
        return sum(w * v for w, v in zip(weights, values, strict=True)) / total
    return sum(values) / len(values)


def truth_1v1(
    minutes: float, skill_a: float, skill_b: float, winner: int | None, beta2: float
) -> tuple[float, float, bool | None]:
    """Return :func:`game_truth` of a 1v1 game whose two stints last ``minutes``, bit for bit.

    Each side is one stint, so its mean skill is ``(minutes * skill) / minutes`` (or the skill
    itself for a game of 0 minutes), computed as :func:`game_truth` computes it.
    """
    if minutes > 0:
        s_a = minutes * skill_a / minutes
        s_b = minutes * skill_b / minutes
    else:
        s_a, s_b = skill_a / 1, skill_b / 1
    draw = math.exp(-((s_a - s_b) ** 2) / (4.0 * beta2)) * (1.0 / math.sqrt(4.0 * math.pi * beta2))
    stronger_won = None if s_a == s_b or winner is None else winner == (0 if s_a > s_b else 1)
    return draw, abs(s_a - s_b), stronger_won


def truth_ffa(
    skill: Sequence[float], scores: Sequence[float], minutes: Sequence[float], beta2: float
) -> tuple[float, float, bool | None]:
    """Return :func:`game_truth` of a free-for-all game from its stints' lists, bit for bit.

    ``scores[k]`` and ``minutes[k]`` are seat k's score and minutes (``seat.minutes``). The same
    operations in the same order: the gaps over the pairs in :func:`itertools.combinations`
    order, their densities summed by :func:`sum`, and the first best of each ``max`` (a later
    value replaces it only if strictly greater); tested against :func:`game_truth` in
    tests/sim/test_fast_paths.py.
    """
    draw_norm = 1.0 / math.sqrt(4.0 * math.pi * beta2)
    gaps = [abs(a - b) for a, b in itertools.combinations(skill, 2)]
    if not gaps:
        return math.nan, math.nan, None
    four_beta2 = 4.0 * beta2
    draw = sum([math.exp(-(d * d) / four_beta2) for d in gaps]) / len(gaps)
    best_sph = best_skill = -1
    top_sph = top_skill = 0.0
    for k, length in enumerate(minutes):
        if length > 0:
            sph, sk = scores[k] / length, skill[k]
            if best_sph < 0 or sph > top_sph:
                best_sph, top_sph = k, sph
            if best_skill < 0 or sk > top_skill:
                best_skill, top_skill = k, sk
    won = None if best_sph < 0 else best_sph == best_skill
    return draw * draw_norm, sum(gaps) / len(gaps), won
