"""The open seats of running team and free-for-all games, and their back-fill from the queue.

A quit from a team or free-for-all game opens a seat (its team, the leaver's mean and true skill:
``GroupGame.open_seats``) while enough of the game remains. :class:`OpenSeats` keeps the running
games with open seats, oldest first, and fills them from the queue: with the free waiting player
nearest in mean to the one who left (nearest in true skill for a policy that sees the truth; at
random for one that pairs at random), never somebody who has already played in that game, only
solo players when parties queue, and only within a world's latency limits at the game's data
centre. The seats of a game too near its end are closed instead. Under a rule set
(:attr:`OpenSeats.seat_rules`, a :class:`lobbysim.sim.seat_rules.SeatRules`) a seat is filled only
by a ticket with which the game's seated players keep every rule, on the clock
:mod:`lobbysim.sim.seat_rules` describes (the back-fill ticket's age from the quit that opened
the seat, as FlexMatch's back-fill ticket); a back-fill counts in the rules' telemetry as a
match. Without one, nothing changes.

:class:`~lobbysim.sim.group_games.GroupGames` owns one (``GroupGames.open_seats``) and seats the
players it picks; the matchmaker's passes (a full pass's back-fill, a back-fill pass) and the rule
pass call :meth:`OpenSeats.backfill` and :meth:`OpenSeats.backfill_queue`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.scenario import GameRules
from lobbysim.sim.entities import FloatArray, GroupGame, Waiting
from lobbysim.sim.fast.backfill import seat_from_queue
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.parties import Parties
from lobbysim.sim.world import World


class SeatRules(Protocol):
    """A rule set at the seats, as the back-fill and the seats' records use it
    (:class:`lobbysim.sim.seat_rules.SeatRules`; a protocol here, so that the games do not
    import the rule pass, which imports them)."""

    #: Whether seats' records carry the rule columns.
    recorded: bool

    def note(self, game_id: int, player: Waiting, rating: float, opened: float) -> None:
        """Note a seat about to be taken: the rating the rules read, when it was opened."""

    def record(self, game_id: int, pid: int) -> tuple[Any, ...]:
        """Return a seat's rule columns (and forget its note)."""

    def candidates(
        self,
        game: GroupGame,
        waiting: Sequence[Waiting],
        rating: FloatArray,
        positions: Sequence[int],
        team: int | None,
        opened: float,
        now: float,
        *,
        first: bool = False,
    ) -> list[bool]:
        """Return whether each waiting player's ticket keeps every rule with those seated."""

    def formed(
        self,
        game: GroupGame,
        member: Waiting,
        rating: float,
        team: int | None,
        opened: float,
        now: float,
    ) -> None:
        """Count a back-fill in the rules' telemetry."""


#: Seats a waiting player into a running game, on a team (None: a free-for-all).
Seat = Callable[[GroupGame, Waiting, int | None], None]


class OpenSeats:
    """The running games with open seats, and filling them (see the module docstring).

    Args:
        rules: the game's rules (``backfill_min_remaining``).
        env: the run's environment (the time now).
        plan: the run's kernels (the plan's ``backfill_lists``).
        seat: seats a waiting player into a game (the group games' own seating).
        world, parties: where games are hosted and players' latency limits, who queues with
            whom (each None: none).
    """

    def __init__(
        self,
        rules: GameRules,
        env: simpy.Environment,
        plan: FastPlan,
        seat: Seat,
        *,
        world: World | None = None,
        parties: Parties | None = None,
    ) -> None:
        self.rules = rules
        self.env = env
        self.plan = plan
        self._seat = seat
        self._world = world
        self._parties = parties
        self._games: dict[int, GroupGame] = {}  # running games with open seats, oldest first
        #: The run's rule set at the seats (None: no rules; set by ``GroupGames.follow_rules``).
        self.seat_rules: SeatRules | None = None
        # under a rule set: the minute each open seat of a game was opened, as its open_seats
        self._opened: dict[int, list[float]] = {}

    @property
    def any(self) -> bool:
        """Whether a running game has a seat to back-fill."""
        return bool(self._games)

    def open(self, game: GroupGame) -> None:
        """Note that ``game`` has an open seat (a quit opened it; its ``open_seats`` say whom
        the seat is to be filled for)."""
        self._games[game.game_id] = game
        if self.seat_rules is not None:
            self._opened.setdefault(game.game_id, []).append(self.env.now)

    def close(self, game_id: int) -> None:
        """Forget the open seats of a game that has ended."""
        self._games.pop(game_id, None)
        self._opened.pop(game_id, None)

    def backfill(
        self,
        waiting: list[Waiting],
        mu: FloatArray,
        free: NDArray[np.bool_],
        seat: Seat | None = None,
        *,
        truth: bool = False,
        rng: np.random.Generator | None = None,
    ) -> None:
        """Fill open seats, oldest game first, with the free waiting player nearest in mean to
        the one who left (never somebody who has already played in that game); for a policy
        that sees the truth (the oracle), nearest in true skill; for one that pairs at random
        (``uniform_random``), any eligible player at random.

        Args:
            waiting: the queue as the pass sees it.
            mu: the driving rater's mean of each waiting player (``truth``: the effective
                true skill of each).
            free: which waiting players are still free; those seated are marked taken.
            seat: seats a player (default: the group games' own seating).
            truth: ``mu`` holds true skills; the target is the leaver's true skill.
            rng: pick among the eligible uniformly with it (the pass's tie-break stream).
        """
        seat = self._seat if seat is None else seat
        if self.seat_rules is not None:
            self._backfill_ruled(waiting, mu, free, seat, truth=truth, rng=rng)
            return
        n = len(waiting)
        solo = open_ = None  # who may take a seat at all, and at each data centre: once a pass
        if self._parties is not None:  # a party is back-filled only whole: solos only
            solo = np.fromiter((w.player.party < 0 for w in waiting), dtype=bool, count=n)
        world = self._world
        if world is not None and world.limits:  # only within their limits at the game's host
            pids = np.fromiter((w.pid for w in waiting), dtype=np.int64, count=n)
            waited = self.env.now - np.fromiter((w.since for w in waiting), dtype=float, count=n)
            open_ = world.open_matrix(pids, waited)
        for game in self._fillable():
            if not free.any():  # nobody left to seat: the seats stay open
                continue
            # nobody returns to a game they have left
            been = game.been
            eligible = free & np.fromiter((w.pid not in been for w in waiting), dtype=bool, count=n)
            if solo is not None:
                eligible &= solo
            if open_ is not None:
                eligible &= open_[:, game.data_centre]
            while game.open_seats and eligible.any():
                open_seat = game.open_seats.pop(0)
                team, target = open_seat[0], open_seat[2] if truth else open_seat[1]
                candidates = np.flatnonzero(eligible)
                if rng is not None:
                    pick = int(candidates[rng.integers(candidates.size)])
                else:
                    pick = int(candidates[np.argmin(np.abs(mu[candidates] - target))])
                eligible[pick] = False
                free[pick] = False
                seat(game, waiting[pick], team)

    def backfill_queue(
        self,
        waiting: list[Waiting],
        mu: list[float],
        *,
        truth: bool = False,
        rng: np.random.Generator | None = None,
    ) -> list[int]:
        """:meth:`backfill` with every waiting player free (a back-fill pass): the positions in
        ``waiting`` of the players seated, in the order seated.

        With the plan's ``backfill_lists`` the kernel
        :func:`lobbysim.sim.fast.backfill.seat_from_queue` seats them on lists (the same seats,
        bit for bit); otherwise, and for a random pick (``rng``), :meth:`backfill` does, on
        arrays.
        """
        if self.plan.backfill_lists and rng is None and self.seat_rules is None:
            world = self._world
            limited = world is not None and world.limits
            allowed = self._may_sit if limited or self._parties is not None else None
            solos = None  # with parties, only solo players may take a seat: no one else is asked
            if self._parties is not None:
                solos = [k for k, w in enumerate(waiting) if w.player.party < 0]
            return seat_from_queue(
                self._fillable(), waiting, mu, self._seat, allowed, solos, truth=truth
            )
        free = np.ones(len(waiting), dtype=bool)
        order: list[int] = []  # the positions seated, in the order seated

        def seat(game: GroupGame, member: Waiting, team: int | None) -> None:
            order.append(int(np.flatnonzero(~free & ~taken)[0]))
            taken[order[-1]] = True
            self._seat(game, member, team)

        taken = np.zeros(len(waiting), dtype=bool)
        self.backfill(waiting, np.array(mu, dtype=np.float64), free, seat, truth=truth, rng=rng)
        return order

    def _backfill_ruled(
        self,
        waiting: list[Waiting],
        mu: FloatArray,
        free: NDArray[np.bool_],
        seat: Seat,
        *,
        truth: bool = False,
        rng: np.random.Generator | None = None,
    ) -> None:
        """:meth:`backfill` under a rule set: each open seat (oldest first, a seat no ticket
        can take left open) takes the eligible player nearest the leaver (``rng``: one at
        random) among those whose ticket keeps every rule with the players seated."""
        rules = self.seat_rules
        assert rules is not None
        n, now = len(waiting), self.env.now
        able = np.ones(n, dtype=bool)  # who may take a seat at all: solos with parties
        if self._parties is not None:
            able = np.fromiter((w.player.party < 0 for w in waiting), dtype=bool, count=n)
        open_ = None
        world = self._world
        if world is not None and world.limits:  # the world's own limits at the game's host
            pids = np.fromiter((w.pid for w in waiting), dtype=np.int64, count=n)
            waited = now - np.fromiter((w.since for w in waiting), dtype=float, count=n)
            open_ = world.open_matrix(pids, waited)
        for game in self._fillable():
            # when each open seat was opened (noted by open(); one per seat, in the same order)
            opened = self._opened.setdefault(game.game_id, [])
            assert len(opened) == len(game.open_seats), "a seat opened without its time"
            k = 0
            while k < len(game.open_seats) and free.any():
                been = game.been
                eligible = free & able
                eligible &= np.fromiter((w.pid not in been for w in waiting), dtype=bool, count=n)
                if open_ is not None:
                    eligible &= open_[:, game.data_centre]
                positions = np.flatnonzero(eligible)
                team, mean, true_skill = game.open_seats[k]
                target = true_skill if truth else mean
                pick = self._ruled_pick(game, waiting, mu, positions, team, opened[k], target, rng)
                if pick < 0:  # no ticket keeps the rules: the seat stays open
                    k += 1
                    continue
                del game.open_seats[k]
                at = opened.pop(k)
                free[pick] = False
                member = waiting[pick]
                rules.formed(game, member, float(mu[pick]), team, at, now)
                rules.note(game.game_id, member, float(mu[pick]), at)
                seat(game, member, team)

    def _ruled_pick(
        self,
        game: GroupGame,
        waiting: list[Waiting],
        mu: FloatArray,
        positions: NDArray[np.intp],
        team: int | None,
        opened: float,
        target: float,
        rng: np.random.Generator | None,
    ) -> int:
        """Return the position of the player to seat (-1: none keeps the rules)."""
        rules = self.seat_rules
        assert rules is not None
        now = self.env.now
        if positions.size == 0:
            return -1
        if rng is not None:
            ok = rules.candidates(game, waiting, mu, positions.tolist(), team, opened, now)
            keep = positions[np.array(ok, dtype=bool)]
            return int(keep[rng.integers(keep.size)]) if keep.size else -1
        order = positions[np.argsort(np.abs(mu[positions] - target), kind="stable")].tolist()
        ok = rules.candidates(game, waiting, mu, order, team, opened, now, first=True)
        return int(order[len(ok) - 1]) if ok and ok[-1] else -1

    def _may_sit(self, game: GroupGame, member: Waiting) -> bool:
        """Whether a waiting player may take a seat of ``game`` (a back-fill): a solo player
        (with parties), within their latency limits at its data centre (with a world's)."""
        if self._parties is not None and member.player.party >= 0:
            return False
        world = self._world
        if world is None or not world.limits:
            return True
        return world.can_take(member.pid, game.data_centre, self.env.now - member.since)

    def _fillable(self) -> Iterator[GroupGame]:
        """Yield the running games with open seats, oldest first, for a back-fill to seat
        players in; the seats of a game too near its end are closed first, and a game leaves
        the open games once its seats are all filled or closed."""
        rules, now = self.rules, self.env.now
        for game_id in list(self._games):
            game = self._games[game_id]
            if game.end - now < rules.backfill_min_remaining:
                game.open_seats.clear()
            if game.open_seats:
                yield game
            if not game.open_seats:
                del self._games[game_id]
                self._opened.pop(game_id, None)
