"""A back-fill pass on Python lists: the open seats of running games filled from the queue.

A quit in a team or free-for-all game opens a seat and asks for a back-fill pass, which sees a
queue of a few dozen players and one open seat, where the general path,
:meth:`GroupGames.backfill <lobbysim.sim.group_games.GroupGames.backfill>` on arrays, costs more
than the decision. :func:`seat_from_queue` seats the same players in the same order, bit for
bit: each open seat takes the first eligible player in queue order with the smallest
``abs(mu - target)`` (a NaN distance first, as ``np.argmin`` picks it); tested against the
arrays in tests/sim/test_fast_paths.py (the plan's ``backfill_lists``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from functools import partial

from lobbysim.sim.entities import GroupGame, Waiting


def seat_from_queue(
    fillable: Iterable[GroupGame],
    waiting: list[Waiting],
    mu: list[float],
    seat: Callable[[GroupGame, Waiting, int | None], None],
    allowed: Callable[[GroupGame, Waiting], bool] | None = None,
) -> list[int]:
    """Fill the open seats of ``fillable`` games (oldest first) from the whole queue.

    Args:
        fillable: the running games with open seats, oldest first.
        waiting: the queue as the pass sees it.
        mu: the driving rater's mean of each waiting player.
        seat: seats a waiting player in a game, on a team (or None).
        allowed: whether a waiting player may take a seat of a game at all (parties: solos
            only; latency limits: within the player's at the game's data centre; None: all),
            asked only of a player who would otherwise be picked.

    Returns:
        The positions in ``waiting`` of the players seated, in the order seated.
    """
    seated: list[int] = []
    taken: set[int] = set()
    for game in fillable:
        if len(taken) == len(waiting):  # nobody left to seat: the seats stay open
            continue
        # nobody returns to a game they have left
        been = game.been
        may = None if allowed is None else partial(allowed, game)
        if len(game.open_seats) == 1:  # one seat (a quit's): nearest over the eligible
            team, target = game.open_seats[0]
            pick = nearest_eligible(waiting, mu, target, taken, been, may)
            if pick >= 0:
                del game.open_seats[0]
                taken.add(pick)
                seated.append(pick)
                seat(game, waiting[pick], team)
            continue
        eligible = [
            k
            for k, w in enumerate(waiting)
            if k not in taken and w.pid not in been and (may is None or may(w))
        ]
        while game.open_seats and eligible:
            team, target = game.open_seats.pop(0)
            pick = nearest(eligible, mu, target)
            eligible.remove(pick)
            taken.add(pick)
            seated.append(pick)
            seat(game, waiting[pick], team)
    return seated


def nearest(candidates: list[int], mu: list[float], target: float) -> int:
    """Return the candidate whose ``mu`` is nearest ``target``, as ``np.argmin`` of
    ``np.abs(mu[candidates] - target)`` picks it: the first of the smallest distances, or the
    first NaN distance if there is one (``candidates`` non-empty)."""
    best, best_distance = candidates[0], math.inf
    for k in candidates:
        distance = abs(mu[k] - target)
        if distance != distance:  # NaN: np.argmin returns the first one
            return k
        if distance < best_distance:  # strictly: the first of equal distances stays
            best, best_distance = k, distance
    return best


def nearest_eligible(
    waiting: list[Waiting],
    mu: list[float],
    target: float,
    taken: set[int],
    been: set[int],
    may: Callable[[Waiting], bool] | None = None,
) -> int:
    """Return :func:`nearest` of the eligible positions of ``waiting`` (neither ``taken``
    nor a player in ``been``, and allowed by ``may``), in one walk over the queue without the
    list of candidates, or -1 if none is eligible. ``may`` is asked only of a player who would
    be the pick so far (the same pick as filtering first: the first allowed NaN distance, else
    the first of the smallest allowed distances)."""
    best, best_distance = -1, math.inf
    for k, w in enumerate(waiting):
        if w.pid in been or k in taken:
            continue
        distance = abs(mu[k] - target)
        if distance != distance:  # NaN: np.argmin returns the first one
            if may is None or may(w):
                return k
            continue
        if (distance < best_distance or best < 0) and (may is None or may(w)):
            best, best_distance = k, distance  # the first of equal distances stays
    return best
