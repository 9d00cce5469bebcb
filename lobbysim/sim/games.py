"""Games in the lobby: starting 1v1 and group games, quits, back-fill, ends, scores, truth.

:class:`Games` runs every game from the moment the matchmaker picks its players to its record:

* **1v1 games.** Performances are drawn per game from N(s, beta2); each player may quit at an
  exponential time (hazard ``quit_rate``, times ``quit_behind_multiplier`` for the player with the
  lower performance); the game ends at its scheduled length or at the first quit, and a quitter
  loses; otherwise the higher performance wins, as in the paper. A game is one event whose first
  callback notes the game as finished; both players' sessions wait on that same event (with
  timed passes only, the games that end at one tick share one SimPy event).
* **Team and free-for-all games.** Teams are balanced by the driving rater's means. Each stint
  ends at the player's own quit time or at the game's end; a quit opens the seat and asks the
  matchmaker for a back-fill pass, which fills it from the queue at once (never with somebody who
  already played in that game) while enough of the game remains, or a later pass does; so minutes
  in the game differ between players.
* **Scores** are Poisson counts over each stint's minutes with a rate rising with performance,
  drawn for all games finished since the last call in one call; a team game is won by the higher
  total score. (A 1v1 game's winner is decided when it starts, so its outcome can go to a rater
  that reads no score as the game ends, before its scores are drawn: :meth:`Games.rate_at_end`,
  :meth:`Games.score_held`.) The true draw density, skill gap and whether the stronger side
  won go into the game's record with the scores (:class:`~lobbysim.sim.recorder.Recorder`).
* **Skill dynamics** (:mod:`lobbysim.sim.skills`, off by default). The truth of a game is each
  player's effective skill when they start it: their skill brought up to date for the drift,
  less the learning deficit; it is kept per game and is what its record's truth is computed
  from. Before each pass (:meth:`Games.score_finished` is the lobby's before-pass hook) the
  skills of the waiting players are brought up to date, so the oracle's pool reads current
  skills; at the horizon everybody still in the lobby or the base is, for the final records.

With timed passes only, a game's end on the tick grid is fired by the ticker just before that
tick's pass (:meth:`lobbysim.sim.clock.Clock.event_at`).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.policies.groups import balance_teams
from lobbysim.population import Population
from lobbysim.raters import Rater
from lobbysim.raters.base import mean_lists, rater_plugin
from lobbysim.records import DuelBatch, GameResult, Seat, make_result, make_seat
from lobbysim.scenario import GameRules
from lobbysim.sim.clock import Clock, Doorbell, Moment
from lobbysim.sim.entities import (
    Buffered,
    FinishedGame,
    FloatArray,
    GroupGame,
    Player,
    Stint,
    Waiting,
)
from lobbysim.sim.recorder import Recorder
from lobbysim.sim.sessions import Lobby
from lobbysim.sim.skills import SkillDynamics, game_truth, truth_1v1, truth_ffa
from lobbysim.streams import Streams

#: Batches of at most this many finished 1v1 games are scored on floats (the array path's steps
#: one by one, numpy's own exp and Poisson draws): a pass on every arrival scores one game.
FLOAT_SCORING_GAMES = 2


class Games:
    """Starts, runs, ends and scores the games of a run (see the module docstring).

    Args:
        rules: the game's rules (``scenario.game``).
        clock: exact-time events and the tick grid.
        backfill_bell: rung when a quit opens a seat to back-fill (the matchmaker then runs a
            back-fill pass).
        lobby: hands the chosen waiting players over to their games.
        recorder: gets every scored game.
        driver: the driving rater (a leaver's mean is the target for back-filling the seat).
        streams: the run's random streams (``performance``, ``quits``, ``scores``, and
            ``drift`` with a skill drift).
        skill_mean, skill_sd: the population's skill distribution, the scale of performances
            for scores.
        driver_name: the driving rater's name, for messages.

    The skill dynamics and the horizon are the lobby's population's and horizon's (the lobby
    is built with both).
    """

    def __init__(
        self,
        rules: GameRules,
        clock: Clock,
        backfill_bell: Doorbell,
        lobby: Lobby,
        recorder: Recorder,
        driver: Rater,
        streams: Streams,
        skill_mean: float,
        skill_sd: float,
        population: Population | None = None,
        horizon: float = math.inf,
        driver_name: str = "driver",
    ) -> None:
        self.env = clock.env
        self.rules = rules
        self._clock = clock
        self._backfill_bell = backfill_bell
        self._lobby = lobby
        self._recorder = recorder
        self._driver = driver
        self._mean_list = mean_lists(driver)  # a quitter's mean on floats, where it can
        self._driver_plugin = rater_plugin(0, driver_name)
        self._skill_mean = skill_mean
        self._skill_sd = skill_sd
        self.n_games = 0
        # finished games not yet scored (1v1: see _FinishDuels)
        self._finished: list[Any] = []
        #: Finished 1v1 games whose outcomes went out (:meth:`rate_at_end`), their scores not
        #: drawn yet: ``(end, game)`` as in :class:`_FinishDuels`, in the order they finished.
        self.held: list[Any] = []
        self._rate_duel: Callable[[int, int], None] | None = None  # see rate_at_end
        #: The doorbell whose rings a 1v1 game's end holds until its players are back in the
        #: queue (:meth:`~lobbysim.sim.clock.Doorbell.hold`; None: rings go to the queue). Set
        #: by the lobby where the game's end is the only callback of its event.
        self.ring_hold: Doorbell | None = None
        self._open_games: dict[int, GroupGame] = {}  # running group games with open seats
        # what start_duels reads on every call, read at its first (the lobby's hand_over and
        # stint_over, the clock and its enqueue_at, timed_only, beta, the performance normals)
        self._duel_kit: tuple[Any, ...] | None = None
        beta = math.sqrt(rules.beta2)
        perf: Buffered[float] = Buffered(streams.get("performance").standard_normal)
        # a performance is skill + beta * the next standard normal (start_duels, _seat)
        self._beta, self._perf_normal = beta, perf.take
        #: Source of standard exponentials for quit times (quit after draw / hazard minutes);
        #: replace it to script a trace.
        self.draw_quit: Callable[[], float] = Buffered(
            streams.get("quits").standard_exponential
        ).take
        self._score_rng = streams.get("scores")
        # the truth of each running or unscored game: its stints' effective skills, in order
        self._truths: dict[int, list[float]] = {}
        #: The skill dynamics of the run (None: skills never change, or no population given).
        self.dynamics = None if population is None else SkillDynamics.of(population, streams)
        self._horizon = horizon

    @property
    def has_open_seats(self) -> bool:
        """Whether a running group game has a seat to back-fill."""
        return bool(self._open_games)

    # ------------------------------------------------------------------------ the truth
    def _truth_of(self, waiting: Waiting) -> float:
        """Return a waiting player's effective skill in a game they start now (drift applied)."""
        dynamics, player = self.dynamics, waiting.player
        if dynamics is None:
            return player.skill
        dynamics.bring_up_to_date(player, self.env.now, waiting.since)
        return dynamics.effective(player)

    def true_skills(self, waiting: Sequence[Waiting]) -> FloatArray:
        """Return the effective skills of waiting players now: what a policy that sees the
        truth should match on (their skills brought up to date, less the learning deficit)."""
        if self.dynamics is None:
            return np.fromiter((w.player.skill for w in waiting), np.float64, len(waiting))
        return np.array([self._truth_of(w) for w in waiting], dtype=np.float64)

    def _bring_truth_up_to_date(self) -> None:
        """With a drift, bring the waiting players' skills up to now (the oracle's pool reads
        them), and at the horizon everybody's still in the lobby or the base (the records)."""
        dynamics = self.dynamics
        if dynamics is None or not dynamics.drifts:
            return
        now = self.env.now
        for waiting in self._lobby.pool.values():
            dynamics.bring_up_to_date(waiting.player, now, waiting.since)
        if now >= self._horizon:
            dynamics.finish(self._lobby.players, now)

    # ------------------------------------------------------------- team and free-for-all
    def backfill(self, waiting: list[Waiting], mu: FloatArray, free: NDArray[np.bool_]) -> None:
        """Fill open seats, oldest game first, with the free waiting player nearest in mean to
        the one who left (never somebody who has already played in that game).

        Args:
            waiting: the queue as the pass sees it.
            mu: the driving rater's mean of each waiting player.
            free: which waiting players are still free; those seated are marked taken.
        """
        for game in self._fillable():
            if not free.any():  # nobody left to seat: the seats stay open
                continue
            # nobody returns to a game they have left
            been = game.been
            eligible = free & np.fromiter(
                (w.pid not in been for w in waiting), dtype=bool, count=len(waiting)
            )
            while game.open_seats and eligible.any():
                team, target = game.open_seats.pop(0)
                candidates = np.flatnonzero(eligible)
                pick = int(candidates[np.argmin(np.abs(mu[candidates] - target))])
                eligible[pick] = False
                free[pick] = False
                self._seat(game, waiting[pick], team)

    def backfill_queue(self, waiting: list[Waiting], mu: list[float]) -> list[int]:
        """:meth:`backfill` with every waiting player free, on Python lists (a back-fill pass).

        The same seats in the same order, bit for bit: each open seat takes the first eligible
        player in queue order with the smallest ``abs(mu - target)`` (a NaN distance first, as
        ``np.argmin`` picks it); tested against :meth:`backfill` in
        tests/sim/test_fast_paths.py. A back-fill pass sees a queue of a few dozen players and
        one open seat, where :meth:`backfill`'s array calls cost more than this loop.

        Args:
            waiting: the queue as the pass sees it.
            mu: the driving rater's mean of each waiting player.

        Returns:
            The positions in ``waiting`` of the players seated, in the order seated.
        """
        seated: list[int] = []
        taken: set[int] = set()
        for game in self._fillable():
            if len(taken) == len(waiting):  # nobody left to seat: the seats stay open
                continue
            # nobody returns to a game they have left
            been = game.been
            if len(game.open_seats) == 1:  # one seat (a quit's): _nearest over the eligible
                team, target = game.open_seats[0]
                pick = _nearest_eligible(waiting, mu, target, taken, been)
                if pick >= 0:
                    del game.open_seats[0]
                    taken.add(pick)
                    seated.append(pick)
                    self._seat(game, waiting[pick], team)
                continue
            eligible = [k for k, w in enumerate(waiting) if k not in taken and w.pid not in been]
            while game.open_seats and eligible:
                team, target = game.open_seats.pop(0)
                pick = _nearest(eligible, mu, target)
                eligible.remove(pick)
                taken.add(pick)
                seated.append(pick)
                self._seat(game, waiting[pick], team)
        return seated

    def _fillable(self) -> Iterator[GroupGame]:
        """Yield the running games with open seats, oldest first, for a back-fill to seat
        players in; the seats of a game too near its end are closed first, and a game leaves
        the open games once its seats are all filled or closed."""
        rules, now = self.rules, self.env.now
        for game_id in list(self._open_games):
            game = self._open_games[game_id]
            if game.end - now < rules.backfill_min_remaining:
                game.open_seats.clear()
            if game.open_seats:
                yield game
            if not game.open_seats:
                del self._open_games[game_id]

    def start_group(self, members: list[Waiting], mu: FloatArray, quality: float) -> None:
        """Start a team or free-for-all game of ``members`` (driving-rater means ``mu``)."""
        rules, env = self.rules, self.env
        teams: list[int | None]
        if rules.mode == "team":
            teams = [int(t) for t in balance_teams(mu, rules.seats // 2)]
        else:
            teams = [None] * len(members)
        end = self._clock.snap_to_tick(env.now + rules.length)
        game = GroupGame(self.n_games, rules.mode, env.now, end, quality, self._clock.event_at(end))
        self.n_games += 1
        self._truths[game.game_id] = []
        game.end_event.callbacks.append(_FinishGroup(self, game))
        for member, team in zip(members, teams, strict=True):
            self._seat(game, member, team)

    def _seat(self, game: GroupGame, member: Waiting, team: int | None) -> None:
        """Put a waiting player into ``game`` now, on ``team``, until the end or a quit."""
        now, rules = self.env.now, self.rules
        player = member.player
        # _truth_of without the call when skills never change
        truth = player.skill if self.dynamics is None else self._truth_of(member)
        self._truths[game.game_id].append(truth)
        player.unscored += 1
        performance = truth + self._beta * self._perf_normal()
        stint = Stint(player, team, now, math.nan, performance, False)
        game.stints.append(stint)
        ffa_behind = team is None and _behind_ffa(game, performance)  # before sitting down
        _sit(game, stint)
        game.been.add(player.pid)
        leave: simpy.Event | Moment = game.end_event
        if rules.quit_rate > 0:
            behind = self._behind(game, stint) if team is not None else ffa_behind
            rate = rules.quit_rate * (rules.quit_behind_multiplier if behind else 1.0)
            quit_at = now + self.draw_quit() / rate
            if quit_at < game.end:
                leave = self._clock.timeout_at(quit_at)
                leave.callbacks.append(self._make_quit(game, stint))  # ends the stint too
        if leave is game.end_event:
            game.finishing.append(player)  # its stint ends with the game (_FinishGroup)
        self._lobby.hand_over(member, leave)

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
            _stand(game, stint)
            rules = self.rules
            if rules.backfill and game.end - now >= rules.backfill_min_remaining:
                pid = stint.player.pid
                if self._mean_list is not None:
                    (mean,) = self._mean_list([pid])
                else:
                    plugin = self._driver_plugin
                    mean = float(plugin.call("means(ids)", self._driver.means, np.array([pid]))[0])
                game.open_seats.append((stint.team, mean))
                self._open_games[game.game_id] = game
                self._backfill_bell.ring()
            self._lobby.stint_over(stint.player)

        return quit_game

    def _finish_group(self, game: GroupGame) -> None:
        """End a team or free-for-all game: its last stints end, and it waits for its scores."""
        for stint in game.seated.values():
            stint.left = game.end
        game.seated.clear()
        game.performances.clear()
        self._open_games.pop(game.game_id, None)
        self._finished.append(
            FinishedGame(
                game.game_id, game.mode, game.start, game.end, game.stints, None, game.quality
            )
        )

    # ------------------------------------------------------------------------------- 1v1
    def start_duels(self, duels: Sequence[tuple[Waiting, Waiting, float]]) -> None:
        """Start the 1v1 games of a pass, each of two waiting players (side 0, side 1) with its
        predicted match quality, one after another.

        The games that end at one moment (with timed passes only, all those without a quit)
        are noted as finished by one callback, :class:`_FinishDuels`, which does for each game
        in turn what its own callback would have done. Otherwise a game's end is an entry of
        the event queue (:meth:`~lobbysim.sim.clock.Clock.enqueue_at`), shared by the games
        that end together one after another (a pass's games without a quit): their entries
        would have been next to each other in the queue, as nothing is scheduled in between.
        """
        kit = self._duel_kit
        if kit is None:  # read at the first game (a pass on every arrival starts one or two)
            lobby, clock = self._lobby, self._clock
            kit = self._duel_kit = (
                lobby.hand_over,
                lobby.stint_over,
                clock,
                clock.enqueue_at,
                clock.timed_only,
                self._beta,
                self._perf_normal,
            )
        hand_over, stint_over, clock, enqueue_at, timed_only, beta, normal = kit
        rules, dynamics = self.rules, self.dynamics
        start = self.env._now  # env.now without the property
        full_end = clock.snap_to_tick(start + rules.length) if timed_only else start + rules.length
        quit_rate, behind = rules.quit_rate, rules.quit_behind_multiplier
        group: list[tuple[Any, ...]] = []
        group_event: Any = None
        group_end = math.nan  # the end of group_event's games (equal to no end)
        finish = _FinishDuels if self._rate_duel is None else _FinishRatedDuels
        end_event: Any
        for wa, wb, quality in duels:
            pa, pb = wa.player, wb.player
            if dynamics is None:  # _truth_of, without the call
                truth_a, truth_b = pa.skill, pb.skill
            else:
                truth_a, truth_b = self._truth_of(wa), self._truth_of(wb)
            pa.unscored += 1
            pb.unscored += 1
            perf_a = truth_a + beta * normal()
            perf_b = truth_b + beta * normal()
            end = full_end
            quit_side = -1
            if quit_rate > 0:
                quit_a = start + self.draw_quit() / (
                    quit_rate * (behind if perf_a < perf_b else 1.0)
                )
                quit_b = start + self.draw_quit() / (
                    quit_rate * (behind if perf_b < perf_a else 1.0)
                )
                if min(quit_a, quit_b) < end:
                    quit_side = 0 if quit_a <= quit_b else 1
                    end = min(quit_a, quit_b)
            # A quitter loses; otherwise the higher performance wins (side 0 is a, side 1 is b).
            loser_is_a = quit_side == 0 if quit_side >= 0 else not perf_a > perf_b
            winner = 1 if loser_is_a else 0
            game_id = self.n_games
            self.n_games += 1
            game = (
                game_id,
                start,
                pa,
                pb,
                perf_a,
                perf_b,
                quit_side,
                winner,
                quality,
                truth_a,
                truth_b,
            )
            if timed_only:  # an end shared by the games of a pass that end at one tick
                end_event = clock.shared_event_at(end)
                if end_event is not group_event:
                    group, group_event = [], end_event
                    end_event.callbacks.append(finish(self, group, stint_over))
            elif end != group_end:  # the game's end is an entry of the event queue ...
                group, group_end = [], end
                end_event = group_event = finish(self, group, stint_over, True)
                enqueue_at(end, end_event)
            else:  # ... shared with the pass's last game if they end together
                end_event = group_event
            group.append(game)
            hand_over(wa, end_event)
            hand_over(wb, end_event)

    # ------------------------------------------------------------------ scores and truth
    def score_finished(self) -> Sequence[GameResult]:
        """Draw the scores of every game finished since the last call, record the games, and
        return them as the raters get them (the skills are brought up to date first): 1v1
        games as one :class:`~lobbysim.records.DuelBatch`, other games as a list.

        Scores are Poisson counts over each stint's minutes with rate ``score_rate *
        exp(score_gain * z)``, z the performance in population standard deviations; all of them
        are drawn in one vectorised call, in the order the games finished.
        """
        self._bring_truth_up_to_date()
        if not self._finished:
            return []
        finished, self._finished = self._finished, []
        if self.rules.mode == "1v1":
            return self._score_1v1(finished)
        rules = self.rules
        stints = [st for g in finished for st in g.stints]
        minutes = [st.left - st.joined for st in stints]  # each seat's minutes
        z = np.array([st.performance for st in stints])
        z = (z - self._skill_mean) / self._skill_sd
        lam = rules.score_rate * np.exp(rules.score_gain * z) * np.array(minutes)
        scores = self._score_rng.poisson(lam).astype(np.float64).tolist()
        beta2 = rules.beta2
        results = []
        k = 0
        for g in finished:
            n = len(g.stints)
            seats = tuple(
                [
                    make_seat(
                        st.player.pid,
                        st.team,
                        st.joined,
                        st.left,
                        score,
                        st.player.registered,
                        st.quit,
                        st.performance,
                    )
                    for st, score in zip(g.stints, scores[k : k + n], strict=True)
                ]
            )
            result = self._result(g, seats)
            players = [st.player for st in g.stints]
            skills = self._truths.pop(g.game_id)
            if g.mode == "ffa":  # game_truth's ffa branch on the lists (tested against it)
                truth = truth_ffa(skills, scores[k : k + n], minutes[k : k + n], beta2)
            else:
                truth = game_truth(g.mode, result.seats, skills, result.winner, beta2)
            k += n
            self._recorder.game(result, g.quality, truth, players)
            results.append(result)
        return results

    def rate_at_end(self, rate_duel: Callable[[int, int], None]) -> None:
        """From now on, give each 1v1 game's outcome to ``rate_duel(winner, loser)`` as the
        game ends (when both players are registered), and hold the game back for
        :meth:`score_held`, its scores not drawn yet.

        A rater that reads no score (:func:`~lobbysim.raters.bayesian.rates_outcomes_only`)
        can be given a game's outcome before its scores are drawn; the scores come from their
        own stream in the order the games finished, so drawing them later, many at once, draws
        the same values (:meth:`score_held`). Only for skills that do not drift: the truth of
        a game is then known at its start, and nothing has to be brought up to date first.
        """
        self._rate_duel = rate_duel

    @property
    def n_held(self) -> int:
        """The number of games held back (:meth:`rate_at_end`), not scored yet."""
        return len(self.held)

    def score_held(self) -> DuelBatch | None:
        """Score and record the games held back (:meth:`rate_at_end`), in the order they
        finished, as :meth:`score_finished` would have one by one (None: none held)."""
        if not self.held:
            return None
        held, self.held = self.held, []
        return self._score_1v1(held)

    def _score_1v1(self, finished: list[Any]) -> DuelBatch:
        """:meth:`score_finished` for 1v1 games (entries of :class:`_FinishDuels`), bit for bit,
        as one :class:`~lobbysim.records.DuelBatch` (columns, no object per game).

        Both stints of a 1v1 game last from its start to its end; the truth is
        :func:`~lobbysim.sim.skills.truth_1v1` of the two players' effective skills.
        """
        rules = self.rules
        if len(finished) == 1 and FLOAT_SCORING_GAMES:
            return self._score_one_1v1(*finished[0])
        ends = [end for end, _ in finished]
        game_id, start, pa, pb, perf_a, perf_b, quit_side, winner, quality, ta, tb = zip(
            *[game for _, game in finished], strict=True
        )
        minutes = [end - begun for end, begun in zip(ends, start, strict=True)]
        # the performances and minutes of side a then side b, game by game
        perf = list(itertools.chain.from_iterable(zip(perf_a, perf_b, strict=True)))
        both = list(itertools.chain.from_iterable(zip(minutes, minutes, strict=True)))
        if len(finished) <= FLOAT_SCORING_GAMES:  # a pass on every arrival: on floats
            mean, sd = self._skill_mean, self._skill_sd
            gain, rate = rules.score_gain, rules.score_rate
            growth = np.exp([gain * ((p - mean) / sd) for p in perf]).tolist()
            lam = [rate * g * m for g, m in zip(growth, both, strict=True)]
            poisson = self._score_rng.poisson  # one draw at a time: the array's draws in turn
            scores = [float(poisson(x)) for x in lam]
        else:
            z = (np.array(perf) - self._skill_mean) / self._skill_sd
            lam = rules.score_rate * np.exp(rules.score_gain * z) * np.array(both)
            scores = self._score_rng.poisson(lam).astype(np.float64).tolist()
        beta2 = rules.beta2
        truths = [
            truth_1v1(m, skill_a, skill_b, won, beta2)
            for m, skill_a, skill_b, won in zip(minutes, ta, tb, winner, strict=True)
        ]
        batch = DuelBatch(
            game_id,
            start,
            ends,
            [p.pid for p in pa],
            [p.pid for p in pb],
            [p.registered for p in pa],
            [p.registered for p in pb],
            scores[0::2],
            scores[1::2],
            perf_a,
            perf_b,
            quit_side,
            winner,
        )
        self._recorder.duels(batch, pa, pb, minutes, quality, truths)
        return batch

    def _score_one_1v1(self, end: float, game: tuple[Any, ...]) -> DuelBatch:
        """:meth:`_score_1v1` of one game (a pass on every arrival scores one), step by step:
        the same draws and values, without the columns' set-up."""
        game_id, start, pa, pb, perf_a, perf_b, quit_side, winner, quality, ta, tb = game
        rules = self.rules
        minutes = end - start
        mean, sd, gain, rate = self._skill_mean, self._skill_sd, rules.score_gain, rules.score_rate
        exp = np.exp  # on one float: the kernel of the array call (tested equal)
        growth_a = float(exp(gain * ((perf_a - mean) / sd)))
        growth_b = float(exp(gain * ((perf_b - mean) / sd)))
        poisson = self._score_rng.poisson
        score_a = float(poisson(rate * growth_a * minutes))
        score_b = float(poisson(rate * growth_b * minutes))
        truth = truth_1v1(minutes, ta, tb, winner, rules.beta2)
        batch = DuelBatch(
            (game_id,),
            (start,),
            (end,),
            (pa.pid,),
            (pb.pid,),
            (pa.registered,),
            (pb.registered,),
            (score_a,),
            (score_b,),
            (perf_a,),
            (perf_b,),
            (quit_side,),
            (winner,),
        )
        self._recorder.duels(batch, (pa,), (pb,), (minutes,), (quality,), (truth,))
        return batch

    @staticmethod
    def _result(g: FinishedGame, seats: tuple[Seat, ...]) -> GameResult:
        """Return a scored game as the raters get it; a team game is won on total score."""
        winner = g.winner
        if g.mode == "team":
            totals = [sum(st.score for st in seats if st.team == team) for team in (0, 1)]
            winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
        return make_result(g.game_id, g.mode, g.start, g.end, seats, winner)


def _behind_ffa(game: GroupGame, performance: float) -> bool:
    """Return :meth:`Games._behind` of a stint of ``performance`` about to sit down in a
    free-for-all ``game``: below the median of the others seated, read off their sorted
    performances (``game.performances``, kept by :func:`_sit` and :func:`_stand`). Tested
    against :meth:`Games._behind` in tests/sim/test_fast_paths.py.
    """
    others = game.performances
    return bool(others) and performance < _median_of_sorted(others)


def _sit(game: GroupGame, stint: Stint) -> None:
    """Seat a stint in a group game (its sorted performances kept in step)."""
    game.seated[stint.player.pid] = stint
    bisect.insort(game.performances, stint.performance)


def _stand(game: GroupGame, stint: Stint) -> None:
    """Take a quitting stint out of a group game (its sorted performances kept in step)."""
    del game.seated[stint.player.pid]
    performances = game.performances
    del performances[bisect.bisect_left(performances, stint.performance)]


def _nearest(candidates: list[int], mu: list[float], target: float) -> int:
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


def _nearest_eligible(
    waiting: list[Waiting], mu: list[float], target: float, taken: set[int], been: set[int]
) -> int:
    """Return :func:`_nearest` of the eligible positions of ``waiting`` (neither ``taken``
    nor a player in ``been``), in one walk over the queue without the list of candidates, or
    -1 if none is eligible. Tested against :meth:`Games.backfill` (as
    :meth:`Games.backfill_queue`) in tests/sim/test_fast_paths.py."""
    best, best_distance = -1, math.inf
    for k, w in enumerate(waiting):
        if w.pid in been or k in taken:
            continue
        distance = abs(mu[k] - target)
        if distance != distance:  # NaN: np.argmin returns the first one
            return k
        if distance < best_distance or best < 0:  # the first of equal distances stays
            best, best_distance = k, distance
    return best


def _median(values: list[float]) -> float:
    """Return the median of a non-empty list, as ``np.median`` computes it (bit for bit).

    ``np.median`` takes the middle value, or ``mean`` of the two middle ones, which for two
    float64 values is ``(a + b) / 2``; in pure Python this is much cheaper for a few values.
    """
    return _median_of_sorted(sorted(values))


def _median_of_sorted(ordered: list[float]) -> float:
    """Return :func:`_median` of values already sorted."""
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


class _FinishGroup:
    """The end event's callback of a team or free-for-all game: :meth:`Games._finish_group`.

    It lets go of the game once called. The game holds its end event, and a
    :class:`~lobbysim.sim.clock.Moment` keeps its callbacks after firing: holding the game
    after that would make a reference cycle (game, end event, this callback) that keeps the
    game, its stints and its players' callbacks alive until the cyclic garbage collector runs,
    rather than freeing them by reference counting.
    """

    __slots__ = ("_game", "_games")

    def __init__(self, games: Games, game: GroupGame) -> None:
        self._games = games
        self._game: GroupGame | None = game

    def __call__(self, _event: Any) -> None:
        game, self._game = self._game, None
        assert game is not None, "a game ends once"
        self._games._finish_group(game)
        stint_over = self._games._lobby.stint_over
        for player in game.finishing:  # as their own callbacks would, in seating order
            stint_over(player)


class _FinishDuels:
    """The end of 1v1 games that end together: notes each game as finished, with its end, then
    ends both players' stints (in seat order), game after game, as their own callbacks would,
    one after another.

    It is a callback of the games' end event (a :class:`~lobbysim.sim.clock.Moment` of a tick),
    or, made with ``queued``, the end event itself: an entry of the event queue
    (:meth:`lobbysim.sim.clock.Clock.enqueue_at`), processed as SimPy processes an event (its
    ``callbacks`` called with it, the first one :meth:`end`), which saves a timeout object per
    game where every game ends at its own time. Others may add callbacks to it, as to an event
    (the rematch rule's), which run after :meth:`end`.

    A finished game is ``(end, game)``, ``game`` the tuple (id, start, player a, player b, their
    performances, the side that quit or -1, the winning side, the predicted quality, their
    effective skills) that :meth:`Games._score_1v1` reads.
    """

    __slots__ = ("_games", "_owner", "_stint_over", "callbacks")
    _ok = True  # as an event, it never fails, and its value is None
    _value = None

    def __init__(
        self,
        owner: Games,
        games: list[tuple[Any, ...]],
        stint_over: Callable[[Player], None],
        queued: bool = False,
    ) -> None:
        self._owner = owner
        self._games = games
        self._stint_over = stint_over
        #: As a queue entry, the callbacks SimPy calls with it (the class's end first, so that
        #: the entry is not in a cycle with itself); None otherwise.
        self.callbacks: list[Callable[[Any], None]] | None = [type(self).end] if queued else None

    @property
    def env(self) -> simpy.Environment:
        """The run's environment (as an event's ``env``, for the other callbacks)."""
        return self._owner.env

    def __call__(self, _event: Any) -> None:
        """As a callback of the games' end event: :meth:`end`."""
        self.end()

    def end(self) -> None:
        """End the games now."""
        owner, stint_over = self._owner, self._stint_over
        now = owner.env.now
        finished = owner._finished  # the list of the games not scored yet, now
        bell = owner.ring_hold
        if bell is not None:
            bell.hold()
        for game in self._games:
            finished.append((now, game))
            stint_over(game[2])
            stint_over(game[3])
        if bell is not None:
            bell.release()


class _FinishRatedDuels(_FinishDuels):
    """:class:`_FinishDuels` where the games' outcomes are rated as they end
    (:meth:`Games.rate_at_end`): each game is held back for :meth:`Games.score_held` and its
    outcome goes to the rater (both players registered), then both stints end."""

    __slots__ = ()

    def end(self) -> None:
        """End the games now, rating their outcomes."""
        owner, stint_over = self._owner, self._stint_over
        now = owner.env._now  # env.now without the property
        held, rate_duel, bell = owner.held, owner._rate_duel, owner.ring_hold
        assert rate_duel is not None
        if bell is not None:
            bell.hold()
        for game in self._games:
            held.append((now, game))
            pa, pb = game[2], game[3]
            if pa.registered and pb.registered:
                if game[7] == 0:
                    rate_duel(pa.pid, pb.pid)
                else:
                    rate_duel(pb.pid, pa.pid)
            stint_over(pa)
            stint_over(pb)
        if bell is not None:
            bell.release()
