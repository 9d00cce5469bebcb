"""The back-fill kernels (lobbysim/sim/fast/backfill.py) and a seat's behind rule against their
references, bit for bit."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from lobbysim.sim.entities import GroupGame, Player, Stint, Waiting, median
from lobbysim.sim.fast.backfill import nearest_eligible, nearest_sorted, seat_from_queue
from lobbysim.sim.group_games import GroupGames


def _queue(rng: random.Random, n: int) -> tuple[list[Waiting], list[float]]:
    pids = rng.sample(range(4 * n + 10), n)
    waiting = [Waiting(pid, Player(pid, 0.0, 0.0, 1.0, True, 5, 1e9), 0.0, 1) for pid in pids]
    values = [0.0, 1.5, -1.5, 3.0, math.inf, -math.inf, math.nan]
    mu = [
        rng.choice(values) if rng.random() < 0.1 else round(rng.gauss(0, 2), rng.choice([0, 1, 3]))
        for _ in range(n)
    ]
    if rng.random() < 0.7:  # NaN is rare in a rater's means
        mu = [0.0 if math.isnan(m) else m for m in mu]
    return waiting, mu


def test_the_queue_walked_in_order_of_distance_picks_whom_the_walk_picks() -> None:
    """nearest_sorted against nearest_eligible: ties (equal means, distances equal on both
    sides of the target), infinite means and targets, NaN (None: the walk decides), players
    taken or who were in the game, a ``may`` that allows few, some or all, and none allowed."""
    rng = random.Random(7)
    decided = picked = 0
    for case in range(4000):
        n = rng.choice([1, 2, 5, 48, 200, rng.randint(1, 500)])
        waiting, mu = _queue(rng, n)
        target = rng.choice([0.0, 1.5, math.inf, -math.inf, math.nan, round(rng.gauss(0, 2), 1)])
        if rng.random() < 0.9:
            target = 0.0 if not math.isfinite(target) else target
        taken = set(rng.sample(range(n), rng.randint(0, n)) if rng.random() < 0.5 else [])
        been = {w.pid for w in waiting if rng.random() < 0.05}
        share = rng.choice([0.0, 0.02, 0.2, 0.7, 1.0])
        allowed = {w.pid for w in waiting if rng.random() < share}
        asked: list[int] = []

        def may(w: Waiting, allowed: set[int] = allowed, asked: list[int] = asked) -> bool:
            asked.append(w.pid)
            return w.pid in allowed

        # the candidates: every position may allows, and some it does not
        positions = [k for k, w in enumerate(waiting) if w.pid in allowed or rng.random() < 0.3]
        for rule, among in ((may, None), (None, None), (may, positions)):
            expected = nearest_eligible(waiting, mu, target, taken, been, rule)
            if among is not None:
                assert nearest_eligible(waiting, mu, target, taken, been, rule, among) == expected
                if not among:
                    continue
            means = mu if among is None else [mu[k] for k in among]
            array = np.array(means, dtype=np.float64)
            got = nearest_sorted(waiting, array, target, taken, been, rule, among)
            if got is None:  # a NaN distance: only then is nothing decided
                assert any(math.isnan(abs(m - target)) for m in means), case
                continue
            assert got == expected, case
            decided += 1
            picked += got >= 0
    assert decided > 8000 and picked > 4000


def test_a_pass_among_the_candidates_seats_whom_a_pass_over_the_queue_seats() -> None:
    """seat_from_queue with the candidates named (every player ``allowed`` allows) against
    the same pass without them: the same seats in the same order, games of one seat and of
    several, long queues and short."""
    rng = random.Random(11)
    seated = 0
    for case in range(1500):
        n = rng.choice([0, 1, 3, 30, 47, 48, 120, rng.randint(0, 400)])
        waiting, mu = _queue(rng, n)
        solo = {w.pid for w in waiting if rng.random() < 0.3}
        near = {w.pid: rng.randrange(3) for w in waiting}
        specs = []
        for game_id in range(rng.randint(1, 4)):
            seats = [
                (rng.choice([0, 1]), round(rng.gauss(0, 2), 1)) for _ in range(rng.randint(1, 3))
            ]
            been = {w.pid for w in waiting if rng.random() < 0.05}
            specs.append((game_id, seats, been, rng.randrange(3)))

        def allowed(
            game: Any, w: Waiting, solo: set[int] = solo, near: dict[int, int] = near
        ) -> bool:
            return w.pid in solo and near[w.pid] != game.data_centre

        runs = []
        for named in (False, True):
            games = []
            for game_id, seats, been, centre in specs:
                game = GroupGame(game_id, "team", 0.0, 20.0, 0.5, None)
                game.open_seats = list(seats)
                game.been = set(been)
                game.data_centre = centre
                games.append(game)
            order: list[tuple[int, int, int | None]] = []

            def seat(game: Any, w: Waiting, team: int | None, order: list[Any] = order) -> None:
                order.append((game.game_id, w.pid, team))

            candidates = [k for k, w in enumerate(waiting) if w.pid in solo] if named else None
            picks = seat_from_queue(games, waiting, mu, seat, allowed, candidates)
            runs.append((picks, order, [g.open_seats for g in games]))
        assert runs[1] == runs[0], case
        seated += len(runs[0][0])
    assert seated > 1000


def _behind_general(game: GroupGame, stint: Stint) -> bool:
    """GroupGames._behind as it was, on the others first (the reference)."""
    others = [s for s in game.seated.values() if s is not stint]
    if not others:
        return False
    if stint.team is None:
        return stint.performance < median([s.performance for s in others])
    mine = [s.performance for s in game.seated.values() if s.team == stint.team]
    theirs = [s.performance for s in others if s.team != stint.team]
    return bool(theirs) and sum(mine) / len(mine) < sum(theirs) / len(theirs)


def test_behind_in_a_team_game_is_the_rule_on_the_others() -> None:
    """GroupGames._behind in one walk against the rule on the others: one seat, one team
    seated, equal and infinite performances, a team of nobody (the same ZeroDivisionError)."""
    rng = random.Random(3)
    for case in range(20_000):
        game = GroupGame(0, "team", 0.0, 20.0, 0.5, None)
        seated = []
        for k in range(rng.randint(1, 10)):
            performance = rng.choice([0.0, 1.0, rng.gauss(0, 1), math.inf, -math.inf])
            player = Player(k, 0.0, 0.0, 1.0, True, 5, 1e9)
            stint = Stint(player, rng.choice([0, 1, None]), 0.0, math.nan, performance, False, -1)
            game.seated[k] = stint
            seated.append(stint)
        stint = rng.choice(seated)
        if rng.random() < 0.05:  # not seated (yet)
            del game.seated[stint.player.pid]
        results = []
        for rule in (_behind_general, GroupGames._behind):
            try:
                results.append(rule(game, stint))
            except ZeroDivisionError:
                results.append("ZeroDivisionError")
        assert results[0] == results[1], case
