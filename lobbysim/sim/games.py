"""Games in the lobby model: starting, quitting, back-filling, finishing, scoring, recording.

:class:`GameMechanics` is a mixin of :class:`lobbysim.sim.lobby.LobbySimulation`: the lobby finds
who plays; this part runs the games. See the lobby module's docstring for the semantics.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.policies.assignment import Pool, ThresholdSchedule
from lobbysim.policies.groups import balance_teams, form_groups
from lobbysim.records import GameResult, Seat
from lobbysim.sim.entities import (
    FinishedGame,
    FloatArray,
    GroupGame,
    Player,
    Records,
    Stint,
    Waiting,
)

if TYPE_CHECKING:
    from lobbysim.population import Population
    from lobbysim.raters import Rater
    from lobbysim.scenario import Scenario


class GameMechanics:
    """The game half of the lobby simulation (a mixin; the attributes below are the lobby's)."""

    env: simpy.Environment
    scenario: Scenario
    population: Population
    players: list[Player]
    pool: dict[int, Waiting]
    pending: list[GameResult]
    records: Records
    driver: Rater
    threshold: ThresholdSchedule
    n_games: int
    draw_quit: Callable[[], float]
    _finished: list[FinishedGame]
    _awaiting_scores: dict[int, int]
    _scored_awaiting: list[int]
    _open_games: dict[int, GroupGame]
    _perf: Callable[[float], float]
    _score_rng: np.random.Generator
    _draw_norm: float

    def wake(self) -> None:  # pragma: no cover - provided by the lobby
        raise NotImplementedError

    def snap_to_tick(self, end: float) -> float:  # pragma: no cover - provided by the lobby
        raise NotImplementedError

    def event_at(self, t: float) -> simpy.Event:  # pragma: no cover - provided by the lobby
        raise NotImplementedError

    def timeout_at(self, t: float) -> simpy.Timeout:  # pragma: no cover - provided by the lobby
        raise NotImplementedError

    # ------------------------------------------------------------- team and free-for-all
    def _group_pass(self, waiting: list[Waiting], pool: Pool) -> None:
        """Back-fill open seats of running games, then form new games from the rest."""
        rules = self.scenario.game
        free = np.ones(len(waiting), dtype=bool)
        if self._open_games:
            self._backfill(waiting, pool.mu, free)
        size = rules.seats
        left = np.flatnonzero(free)
        if left.size < size:
            return
        quality_fn = pool.quality_fn

        def sub_quality(i: NDArray[np.intp], j: NDArray[np.intp]) -> FloatArray:
            return quality_fn(left[i], left[j])

        groups = form_groups(pool.mu[left], pool.waited[left], size, sub_quality, self.threshold)
        for group in groups:
            members = left[group]
            q = float(sub_quality(*_all_pairs(group)).mean())
            self._start_group([waiting[i] for i in members.tolist()], pool.mu[members], q)

    def _backfill(self, waiting: list[Waiting], mu: FloatArray, free: NDArray[np.bool_]) -> None:
        """Fill open seats, oldest game first, with the free waiting player nearest in mean to
        the one who left (never somebody who has already played in that game)."""
        rules, now = self.scenario.game, self.env.now
        for game_id in list(self._open_games):
            game = self._open_games[game_id]
            if game.end - now < rules.backfill_min_remaining:
                game.open_seats.clear()
            # nobody returns to a game they have left
            eligible = free & np.fromiter(
                (w.pid not in game.been for w in waiting), dtype=bool, count=len(waiting)
            )
            while game.open_seats and eligible.any():
                team, target = game.open_seats.pop(0)
                candidates = np.flatnonzero(eligible)
                pick = int(candidates[np.argmin(np.abs(mu[candidates] - target))])
                eligible[pick] = False
                free[pick] = False
                self._seat(game, waiting[pick], team)
            if not game.open_seats:
                del self._open_games[game_id]

    def _start_group(self, members: list[Waiting], mu: FloatArray, quality: float) -> None:
        rules, env = self.scenario.game, self.env
        teams: list[int | None]
        if rules.mode == "team":
            teams = [int(t) for t in balance_teams(mu, rules.seats // 2)]
        else:
            teams = [None] * len(members)
        end = self.snap_to_tick(env.now + rules.length)
        game = GroupGame(self.n_games, rules.mode, env.now, end, quality, self.event_at(end))
        self.n_games += 1
        game.end_event.callbacks.append(self._make_group_finish(game))
        for member, team in zip(members, teams, strict=True):
            self._seat(game, member, team)

    def _seat(self, game: GroupGame, member: Waiting, team: int | None) -> None:
        """Put a waiting player into ``game`` now, on ``team``, until the end or a quit."""
        env, rules = self.env, self.scenario.game
        del self.pool[member.pid]
        player = self.players[member.pid]
        player.unscored += 1
        stint = Stint(player, team, env.now, math.nan, self._perf(player.skill), False)
        game.stints.append(stint)
        game.seated[player.pid] = stint
        game.been.add(player.pid)
        leave: simpy.Event = game.end_event
        if rules.quit_rate > 0:
            behind = self._behind(game, stint)
            rate = rules.quit_rate * (rules.quit_behind_multiplier if behind else 1.0)
            quit_at = env.now + self.draw_quit() / rate
            if quit_at < game.end:
                leave = self.timeout_at(quit_at)
                leave.callbacks.append(self._make_quit(game, stint))
        member.event.succeed(leave)

    @staticmethod
    def _behind(game: GroupGame, stint: Stint) -> bool:
        """Whether a player is behind when seated.

        Team: their team's mean performance is below the other team's; free-for-all: their
        performance is below the median of the others seated.
        """
        others = [s for s in game.seated.values() if s is not stint]
        if not others:
            return False
        if stint.team is None:
            return stint.performance < _median([s.performance for s in others])
        mine = [s.performance for s in game.seated.values() if s.team == stint.team]
        theirs = [s.performance for s in others if s.team != stint.team]
        return bool(theirs) and sum(mine) / len(mine) < sum(theirs) / len(theirs)

    def _make_quit(self, game: GroupGame, stint: Stint) -> Callable[[simpy.Event], None]:
        def quit_game(_event: simpy.Event) -> None:
            now = self.env.now
            stint.left = now
            stint.quit = True
            del game.seated[stint.player.pid]
            rules = self.scenario.game
            if rules.backfill and game.end - now >= rules.backfill_min_remaining:
                mean = float(self.driver.means(np.array([stint.player.pid]))[0])
                game.open_seats.append((stint.team, mean))
                self._open_games[game.game_id] = game
                self.wake()

        return quit_game

    def _make_group_finish(self, game: GroupGame) -> Callable[[simpy.Event], None]:
        def finish(_event: simpy.Event) -> None:
            for stint in game.seated.values():
                stint.left = game.end
            game.seated.clear()
            self._open_games.pop(game.game_id, None)
            self._finished.append(
                FinishedGame(
                    game.game_id, game.mode, game.start, game.end, game.stints, None, game.quality
                )
            )

        return finish

    def _start_1v1(self, wa: Waiting, wb: Waiting, quality: float) -> None:
        env, rules = self.env, self.scenario.game
        del self.pool[wa.pid]
        del self.pool[wb.pid]
        pa, pb = self.players[wa.pid], self.players[wb.pid]
        pa.unscored += 1
        pb.unscored += 1
        start = env.now
        perf_a, perf_b = self._perf(pa.skill), self._perf(pb.skill)
        end = self.snap_to_tick(start + rules.length)
        quitter: Player | None = None
        if rules.quit_rate > 0:
            rate_a = rules.quit_rate * (rules.quit_behind_multiplier if perf_a < perf_b else 1.0)
            rate_b = rules.quit_rate * (rules.quit_behind_multiplier if perf_b < perf_a else 1.0)
            quit_a = start + self.draw_quit() / rate_a
            quit_b = start + self.draw_quit() / rate_b
            if min(quit_a, quit_b) < end:
                quitter = pa if quit_a <= quit_b else pb
                end = min(quit_a, quit_b)
        # A quitter loses; otherwise the higher performance wins (side 0 is a, side 1 is b).
        loser_is_a = quitter is pa if quitter is not None else not perf_a > perf_b
        winner = 1 if loser_is_a else 0
        game_id = self.n_games
        self.n_games += 1
        end_event = self.event_at(end)
        done = self._make_finish(
            game_id, start, (pa, pb), (perf_a, perf_b), quitter, winner, quality
        )
        end_event.callbacks.append(done)
        wa.event.succeed(end_event)
        wb.event.succeed(end_event)

    def _make_finish(
        self,
        game_id: int,
        start: float,
        players: tuple[Player, Player],
        perfs: tuple[float, float],
        quitter: Player | None,
        winner: int,
        quality: float,
    ) -> Callable[[simpy.Event], None]:
        def finish(_: simpy.Event) -> None:
            end = self.env.now
            stints = [
                Stint(p, side, start, end, perfs[side], p is quitter)
                for side, p in enumerate(players)
            ]
            self._finished.append(FinishedGame(game_id, "1v1", start, end, stints, winner, quality))

        return finish

    def _score_finished(self) -> None:
        """Draw the scores of every game finished since the last call and record the games.

        Scores are Poisson counts over each stint's minutes with rate ``score_rate *
        exp(score_gain * z)``, z the performance in population standard deviations; all of them
        are drawn in one vectorised call, in the order the games finished.
        """
        if not self._finished:
            return
        finished, self._finished = self._finished, []
        rules = self.scenario.game
        z = np.array([st.performance for g in finished for st in g.stints])
        minutes = np.array([st.left - st.joined for g in finished for st in g.stints])
        z = (z - self._skill_mean) / self._skill_sd
        lam = rules.score_rate * np.exp(rules.score_gain * z) * minutes
        scores = self._score_rng.poisson(lam).astype(np.float64).tolist()
        k = 0
        for g in finished:
            seats = []
            for st in g.stints:
                p = st.player
                seats.append(
                    Seat(
                        p.pid,
                        st.team,
                        st.joined,
                        st.left,
                        scores[k],
                        p.registered,
                        st.quit,
                        st.performance,
                    )
                )
                k += 1
            self._record(g, tuple(seats))

    def _record(self, g: FinishedGame, seats: tuple[Seat, ...]) -> None:
        """Hand a scored game to the raters (via ``pending``) and append its record rows."""
        winner = g.winner
        if g.mode == "team":
            totals = [sum(st.score for st in seats if st.team == team) for team in (0, 1)]
            winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
        result = GameResult(g.game_id, g.mode, g.start, g.end, seats, winner)
        self.pending.append(result)
        for seat in seats:
            player = self.players[seat.player_id]
            player.unscored -= 1
            if not player.unscored and player.pid in self._awaiting_scores:
                self._scored_awaiting.append(player.pid)
            player.games += 1
            player.wins += winner is not None and seat.team == winner
            self.records.participants.append(
                (
                    g.game_id,
                    seat.player_id,
                    seat.team,
                    seat.joined,
                    seat.left,
                    seat.minutes,
                    seat.score,
                    seat.registered,
                    seat.quit,
                )
            )
        draw, gap, stronger_won = self._truth(g.mode, seats, winner)
        self.records.games.append(
            (g.game_id, g.mode, g.start, g.end, draw, gap, g.quality, stronger_won, winner)
        )

    def _truth(
        self, mode: str, seats: tuple[Seat, ...], winner: int | None
    ) -> tuple[float, float, bool | None]:
        """Return the true draw density (eq. 14), true skill gap and whether the stronger won.

        1v1 and team: between the two sides' mean true skills (a team's mean is weighted by each
        stint's minutes); free-for-all: the means over every pair of stints, and whether the most
        skilled player had the highest score per hour.
        """
        beta2 = self.scenario.game.beta2
        skill = [self.players[seat.player_id].skill for seat in seats]
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
            return draw * self._draw_norm, sum(gaps) / len(gaps), won
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
        draw = math.exp(-((s_a - s_b) ** 2) / (4.0 * beta2)) * self._draw_norm
        stronger_won = None if s_a == s_b or winner is None else winner == (0 if s_a > s_b else 1)
        return draw, abs(s_a - s_b), stronger_won

    @property
    def _skill_mean(self) -> float:
        return float(self.population.skill_mean)

    @property
    def _skill_sd(self) -> float:
        return float(self.population.skill_sd)

    # ---------------------------------------------------------------------------- accounting


def _all_pairs(group: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    i, j = np.triu_indices(len(group), k=1)
    return group[i], group[j]


def _median(values: list[float]) -> float:
    """Return the median of a non-empty list, as ``np.median`` computes it (bit for bit).

    ``np.median`` takes the middle value, or ``mean`` of the two middle ones, which for two
    float64 values is ``(a + b) / 2``; in pure Python this is much cheaper for a few values.
    """
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
