"""A back-fill pass on Python lists: the open seats of running games filled from the queue.

A quit in a team or free-for-all game opens a seat and asks for a back-fill pass, which sees a
queue of a few dozen players and one open seat, where the general path,
:meth:`OpenSeats.backfill <lobbysim.sim.open_seats.OpenSeats.backfill>` on arrays, costs more
than the decision. :func:`seat_from_queue` seats the same players in the same order, bit for
bit: each open seat takes the first eligible player in queue order with the smallest
``abs(mu - target)`` (a NaN distance first, as ``np.argmin`` picks it); tested against the
arrays in tests/sim/test_fast_paths.py (the plan's ``backfill_lists``).

Two things keep a pass over a long queue short where a seat is open to few of the waiting
players (parties: solos only; latency limits): the caller may name, once a pass, the only
players who may take a seat at all (``candidates``: the solo players), so that no one else is
looked at; and a long list of candidates (:data:`SORTED_FROM` or more) is walked in order of
distance (:func:`nearest_sorted`, one numpy argsort), asking whom the seat is open to only up to
the first who may take it. Both make the picks of :func:`nearest_eligible` over the whole queue
(tested against it in tests/sim/test_fast_backfill.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from lobbysim.sim.entities import GroupGame, Waiting

#: The number of candidates from which a one-seat back-fill walks them in order of distance.
SORTED_FROM = 48


def seat_from_queue(
    fillable: Iterable[GroupGame],
    waiting: list[Waiting],
    mu: list[float],
    seat: Callable[[GroupGame, Waiting, int | None], None],
    allowed: Callable[[GroupGame, Waiting], bool] | None = None,
    candidates: list[int] | None = None,
    *,
    truth: bool = False,
) -> list[int]:
    """Fill the open seats of ``fillable`` games (oldest first) from the whole queue.

    Args:
        fillable: the running games with open seats, oldest first.
        waiting: the queue as the pass sees it.
        mu: the driving rater's mean of each waiting player (``truth``: its true skill).
        seat: seats a waiting player in a game, on a team (or None).
        allowed: whether a waiting player may take a seat of a game at all (parties: solos
            only; latency limits: within the player's at the game's data centre; None: all),
            asked only of a player who would otherwise be picked.
        candidates: the positions in ``waiting``, ascending, of every player ``allowed`` may
            allow in any game (None: everybody); nobody else is looked at.
        truth: the target of an open seat is the leaver's true skill (the oracle's), not its
            rating mean.

    Returns:
        The positions in ``waiting`` of the players seated, in the order seated.
    """
    seated: list[int] = []
    taken: set[int] = set()
    positions: Sequence[int] = range(len(waiting)) if candidates is None else candidates
    mu_array = None  # the candidates' mu as an array, once a pass, for nearest_sorted
    for game in fillable:
        if len(taken) == len(waiting):  # nobody left to seat: the seats stay open
            continue
        # nobody returns to a game they have left
        been = game.been
        may = None if allowed is None else partial(allowed, game)
        if len(game.open_seats) == 1:  # one seat (a quit's): nearest over the eligible
            team, target = _seat_target(game.open_seats[0], truth)
            pick = None
            if len(positions) >= SORTED_FROM:
                if mu_array is None:
                    mu_array = np.array([mu[k] for k in positions], dtype=np.float64)
                pick = nearest_sorted(waiting, mu_array, target, taken, been, may, positions)
            if pick is None:  # few candidates, or a NaN distance
                pick = nearest_eligible(waiting, mu, target, taken, been, may, positions)
            if pick >= 0:
                del game.open_seats[0]
                taken.add(pick)
                seated.append(pick)
                seat(game, waiting[pick], team)
            continue
        eligible = [
            k
            for k in positions
            if k not in taken and waiting[k].pid not in been and (may is None or may(waiting[k]))
        ]
        while game.open_seats and eligible:
            team, target = _seat_target(game.open_seats.pop(0), truth)
            pick = nearest(eligible, mu, target)
            eligible.remove(pick)
            taken.add(pick)
            seated.append(pick)
            seat(game, waiting[pick], team)
    return seated


def _seat_target(
    open_seat: tuple[int | None, float, float], truth: bool
) -> tuple[int | None, float]:
    """Return an open seat's team and target: the leaver's true skill, else its rating mean."""
    return open_seat[0], open_seat[2] if truth else open_seat[1]


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
    positions: Sequence[int] | None = None,
) -> int:
    """Return :func:`nearest` of the eligible positions of ``waiting`` (neither ``taken``
    nor a player in ``been``, and allowed by ``may``), in one walk over the queue without the
    list of candidates, or -1 if none is eligible. ``may`` is asked only of a player who would
    be the pick so far (the same pick as filtering first: the first allowed NaN distance, else
    the first of the smallest allowed distances). ``positions``: only these (ascending; None:
    the whole queue)."""
    best, best_distance = -1, math.inf
    for k in range(len(waiting)) if positions is None else positions:
        w = waiting[k]
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


def nearest_sorted(
    waiting: list[Waiting],
    mu: NDArray[np.float64],
    target: float,
    taken: set[int],
    been: set[int],
    may: Callable[[Waiting], bool] | None = None,
    positions: Sequence[int] | None = None,
) -> int | None:
    """Return :func:`nearest_eligible` by walking the queue in order of distance (a stable
    sort: equal distances in queue order) up to the first eligible player, or -1 if none is
    eligible; None (nothing decided) if a distance is NaN, where :func:`nearest_eligible`
    must pick. ``mu``: the means of ``positions`` (ascending; None: the whole queue), as an
    array (non-empty)."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf; as Python floats, silently
        distance = np.abs(mu - target)
    order = np.argsort(distance, kind="stable")
    if distance[order[-1]] != distance[order[-1]]:  # NaN sorts last
        return None
    for i in order.tolist():
        k = i if positions is None else positions[i]
        if k in taken:
            continue
        w = waiting[k]
        if w.pid not in been and (may is None or may(w)):
            return k
    return -1
