"""Games in the lobby: starting 1v1 and group games, quits, back-fill, ends, scores, truth.

:class:`Games` runs every game from the moment the matchmaker picks its players to its record:

* **1v1 games.** Performances are drawn per game from N(s, beta2); each player may quit at an
  exponential time (hazard ``quit_rate``, times ``quit_behind_multiplier`` for the player with the
  lower performance); the game ends at its scheduled length or at the first quit, and a quitter
  loses; otherwise the higher performance wins, as in the paper. A game is one event whose first
  callback notes the game as finished; both players' sessions wait on that same event (with
  timed passes only, the games that end at one tick share one SimPy event).
* **Team and free-for-all games** are run by a :class:`~lobbysim.sim.group_games.GroupGames`
  that :class:`Games` builds and owns for such a run (:attr:`Games.groups`; None in a 1v1 run):
  seats, quits, back-fill and the behind rule of games of more than two players, with their own
  ids, running games and finished games. Both kinds draw performances and quit times from one
  :class:`~lobbysim.sim.entities.GameDraws` (:attr:`Games.draws`), and take the truth of a
  game from one :class:`~lobbysim.sim.skill_dynamics.SkillDynamics` (:attr:`Games.dynamics`).
* **Scores** are Poisson counts over each stint's minutes with a rate rising with performance,
  drawn for all games finished since the last call in one call; a team game is won by the higher
  total score. (A 1v1 game's winner is decided when it starts, so its outcome can go to a rater
  that reads no score as the game ends, before its scores are drawn: ``rate_duel``,
  :meth:`Games.score_held`.) The true draw density, skill gap and whether the stronger side
  won go into the game's record with the scores (:class:`~lobbysim.sim.recorder.Recorder`).
* **Skill dynamics** (:mod:`lobbysim.sim.skill_dynamics`, off by default). The truth of a game
  is each player's effective skill when they start it: their skill brought up to date for the drift,
  less the learning deficit; it is kept per game and is what its record's truth is computed
  from. Before each pass (:meth:`Games.score_finished` is the lobby's before-pass hook) the
  skills of the waiting players are brought up to date, so the oracle's pool reads current
  skills; at the horizon everybody still in the lobby or the base is, for the final records.

With timed passes only, a game's end on the tick grid is fired by the ticker just before that
tick's pass (:meth:`lobbysim.sim.clock.Clock.event_at`). The speed kernels of 1v1 games (their
ends as queue entries, scores on floats) are in :mod:`lobbysim.sim.fast.duels`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lobbysim.players.population import Population
from lobbysim.raters import Rater
from lobbysim.records.rows import DuelBatch, GameResult
from lobbysim.scenario import GameRules
from lobbysim.sim.clock import Clock
from lobbysim.sim.entities import FloatArray, GameDraws, Waiting
from lobbysim.sim.fast.duels import (
    DuelKit,
    FinishDuels,
    FinishRatedDuels,
    ScoreModel,
    score_one,
    scores_on_floats,
)
from lobbysim.sim.fast.events import Doorbell
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.group_games import GroupGames
from lobbysim.sim.parties import Parties
from lobbysim.sim.recorder import Recorder
from lobbysim.sim.rule_columns import DuelRules
from lobbysim.sim.sessions import Lobby
from lobbysim.sim.skill_dynamics import SkillDynamics
from lobbysim.sim.world import World
from lobbysim.skill.truth import truth_1v1
from lobbysim.streams import Streams

#: Batches of at most this many finished 1v1 games are scored on floats with the plan's
#: ``float_scoring`` (the array path's steps one by one, numpy's own exp and Poisson draws).
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
        plan: the kernels the run uses (:class:`~lobbysim.sim.fast.plan.FastPlan`): scores of
            one or two games on floats, the driver's means on floats, back-fills on lists,
            held scores and held rings.
        ring_hold: the doorbell a 1v1 game's end holds until its players are back in the
            queue (:meth:`~lobbysim.sim.fast.events.Doorbell.hold`; the plan's ``ring_hold``,
            where the game's end is the only callback of its event).
        rate_duel: with the plan's ``held_scores``, the driving rater's ``rate_duel(winner,
            loser)``: each 1v1 game's outcome goes to it as the game ends (both players
            registered), and the game is held back for :meth:`score_held`. The scores come
            from their own stream in the order the games finished, so drawing them later, many
            at once, draws the same values; only for skills that do not drift (the truth of a
            game is then known at its start).

        world, parties: where games are hosted, who queues with whom (each None: none).

    The skill dynamics and the horizon are the lobby's population's and horizon's (the lobby
    is built with both). In a run of team or free-for-all games the group games are
    :attr:`groups`'s (built here with what they need: the rules, clock, back-fill doorbell,
    lobby, recorder, driver, draws, scores stream, dynamics, plan, world and parties); the
    matchmaker starts and back-fills them through it.
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
        *,
        plan: FastPlan | None = None,
        ring_hold: Doorbell | None = None,
        rate_duel: Callable[[int, int], None] | None = None,
        world: World | None = None,
        parties: Parties | None = None,
    ) -> None:
        #: Where games are hosted and what each seat's latency is (None: no world).
        self._world = world
        self.env = clock.env
        self.plan = plan = FastPlan.off() if plan is None else plan
        self.rules = rules
        self._clock = clock
        self._lobby = lobby
        self._recorder = recorder
        self._skill_mean = skill_mean
        self._skill_sd = skill_sd
        #: 1v1 games started so far (a game's id is the count before it).
        self.n_duels = 0
        # finished 1v1 games not yet scored ((end, game) of lobbysim.sim.fast.duels), a list
        # kept for the run (the duels' ends append to it)
        self._finished: list[Any] = []
        #: Finished 1v1 games whose outcomes went out (``rate_duel``), their scores not drawn
        #: yet: ``(end, game)``, in the order they finished (a list kept for the run).
        self.held: list[Any] = []
        self._rate_duel = rate_duel
        #: Under a rule set whose records carry rule columns, the 1v1 seats' columns
        #: (:meth:`follow_rules`; None: none, and a 1v1 game's rows are those of a run
        #: without rules).
        self.duel_rules: DuelRules | None = None
        self._driver = driver
        # what start_duels reads on every call, read at its first (the lobby's hand_over, the
        # clock and its enqueue_at, timed_only, beta, the performance normals, the ends' kit)
        self._duel_kit: tuple[Any, ...] | None = None
        self._ring_hold = ring_hold
        #: The games' performances and quit times (replace ``draws.quit`` to script a trace);
        #: a performance is skill + beta * the next standard normal.
        self.draws = GameDraws(
            streams.get("performance").standard_normal, streams.get("quits").standard_exponential
        )
        self._beta = math.sqrt(rules.beta2)
        self._score_rng = streams.get("scores")
        self._score_model = ScoreModel(
            skill_mean, skill_sd, rules.score_gain, rules.score_rate, rules.beta2
        )
        #: The skill dynamics of the run (None: skills never change, or no population given).
        self.dynamics = None if population is None else SkillDynamics.of(population, streams)
        self._horizon = horizon
        #: The team or free-for-all games of the run (None: a run of 1v1 games).
        self.groups: GroupGames | None = None
        if rules.mode != "1v1":
            self.groups = GroupGames(
                rules,
                clock,
                backfill_bell,
                lobby,
                recorder,
                driver,
                driver_name,
                self.draws,
                self._score_rng,
                skill_mean,
                skill_sd,
                self.dynamics,
                plan,
                world=world,
                parties=parties,
            )

    def follow_rules(self, duel_rules: DuelRules) -> None:
        """Record the rule columns of every 1v1 game's seats from now on (a 1v1 run under a
        rule set whose records carry them: the run's 1v1 pass calls this once, before any
        game starts)."""
        self.duel_rules = duel_rules

    @property
    def n_games(self) -> int:
        """Games started so far: the 1v1 games, or in a run of team or free-for-all games the
        group games (a run plays one mode)."""
        return self.n_duels if self.groups is None else self.groups.n_games

    # ------------------------------------------------------------------------ the truth
    def _truth_of(self, waiting: Waiting) -> float:
        """Return a waiting player's effective skill in a game they start now (drift applied)."""
        dynamics, player = self.dynamics, waiting.player
        if dynamics is None:
            return player.skill
        return dynamics.skill_now(player, self.env.now, waiting.since)

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

    # ------------------------------------------------------------------------------- 1v1
    def start_duels(
        self,
        duels: Sequence[tuple[Waiting, Waiting, float]],
        ratings: Sequence[tuple[float, float]] | None = None,
    ) -> None:
        """Start the 1v1 games of a pass, each of two waiting players (side 0, side 1) with its
        predicted match quality, one after another.

        Under :attr:`duel_rules` each game's seats are noted as it starts, with the ratings
        the pass's rules read (``ratings``, per game side 0's then side 1's; None: the
        driving rater's means now, which are the pool's but for a policy that sees the truth).

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
            ends = DuelKit(
                self.env,
                self._finished,
                lobby.stint_over,
                self._ring_hold,
                self._rate_duel,
                self.held,
            )
            kit = self._duel_kit = (
                lobby.hand_over,
                clock,
                clock.enqueue_at,
                clock.timed_only,
                self._beta,
                self.draws.normal,
                ends,
            )
        hand_over, clock, enqueue_at, timed_only, beta, normal, ends = kit
        if self.duel_rules is not None:  # before the loop changes n_duels
            self.duel_rules.note_games(self.n_duels, duels, ratings, self._driver.means)
        rules, dynamics = self.rules, self.dynamics
        start = self.env.now
        full_end = clock.snap_to_tick(start + rules.length) if timed_only else start + rules.length
        quit_rate, behind = rules.quit_rate, rules.quit_behind_multiplier
        group: list[tuple[Any, ...]] = []
        group_event: Any = None
        group_end = math.nan  # the end of group_event's games (equal to no end)
        finish = FinishDuels if self._rate_duel is None else FinishRatedDuels
        world, draw_quit = self._world, self.draws.quit
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
                quit_a = start + draw_quit() / (quit_rate * (behind if perf_a < perf_b else 1.0))
                quit_b = start + draw_quit() / (quit_rate * (behind if perf_b < perf_a else 1.0))
                if min(quit_a, quit_b) < end:
                    quit_side = 0 if quit_a <= quit_b else 1
                    end = min(quit_a, quit_b)
            # A quitter loses; otherwise the higher performance wins (side 0 is a, side 1 is b).
            loser_is_a = quit_side == 0 if quit_side >= 0 else not perf_a > perf_b
            winner = 1 if loser_is_a else 0
            game_id = self.n_duels
            self.n_duels += 1
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
                    end_event.callbacks.append(finish(ends, group))
            elif end != group_end:  # the game's end is an entry of the event queue ...
                group, group_end = [], end
                end_event = group_event = finish(ends, group, True)
                enqueue_at(end, end_event)
            else:  # ... shared with the pass's last game if they end together
                end_event = group_event
            group.append(game)
            if world is not None:  # its data centre, within both players' limits
                self._place_duel(world, wa, wb, start, game_id)
            hand_over(wa, end_event)
            hand_over(wb, end_event)

    @staticmethod
    def _place_duel(world: World, wa: Waiting, wb: Waiting, now: float, game_id: int) -> None:
        """Host a 1v1 game of ``wa`` and ``wb`` starting now, and note its seats."""
        pids = [wa.pid, wb.pid]
        host = world.host(pids, [now - wa.since, now - wb.since])
        if host < 0:
            raise RuntimeError(
                f"players {pids} were paired with no data centre within their limits"
            )
        world.host_duel(game_id, host)
        world.started(pids, now)
        world.seated(wa.pid, host, now)
        world.seated(wb.pid, host, now)

    # ------------------------------------------------------------------ scores and truth
    def score_finished(self) -> Sequence[GameResult]:
        """Draw the scores of every game finished since the last call, record the games, and
        return them as the raters get them (the skills are brought up to date first): 1v1
        games as one :class:`~lobbysim.records.rows.DuelBatch`, other games as a list.

        Scores are Poisson counts over each stint's minutes with rate ``score_rate *
        exp(score_gain * z)``, z the performance in population standard deviations; all of them
        are drawn in one vectorised call, in the order the games finished.
        """
        self._bring_truth_up_to_date()
        if self.groups is not None:
            return self.groups.score_finished()
        if not self._finished:
            return []
        finished = self._finished[:]  # the list itself is kept (the duels' ends append to it)
        self._finished.clear()
        return self._score_1v1(finished)

    @property
    def n_held(self) -> int:
        """The number of games held back (``rate_duel``), not scored yet."""
        return len(self.held)

    def score_held(self) -> DuelBatch | None:
        """Score and record the games held back (``rate_duel``), in the order they finished, as
        :meth:`score_finished` would have one by one (None: none held)."""
        if not self.held:
            return None
        held = self.held[:]  # the list itself is kept (the duels' ends append to it)
        self.held.clear()
        return self._score_1v1(held)

    def _score_1v1(self, finished: list[Any]) -> DuelBatch:
        """:meth:`score_finished` for 1v1 games (``(end, game)`` of
        :mod:`lobbysim.sim.fast.duels`), as one :class:`~lobbysim.records.rows.DuelBatch` (columns,
        no object per game).

        Both stints of a 1v1 game last from its start to its end; the truth is
        :func:`~lobbysim.skill.truth.truth_1v1` of the two players' effective skills. With the
        plan's ``float_scoring`` one or two games are scored on floats by the duel kernels.
        """
        rules = self.rules
        fast = self.plan.float_scoring
        if fast and len(finished) == 1:
            end, game = finished[0]
            batch, minute, truth = score_one(self._score_model, end, game, self._score_rng.poisson)
            self._recorder.duels(
                batch,
                (game[2],),
                (game[3],),
                (minute,),
                (game[8],),
                (truth,),
                None if self.duel_rules is None else self.duel_rules.record_games(batch),
            )
            return batch
        ends = [end for end, _ in finished]
        game_id, start, pa, pb, perf_a, perf_b, quit_side, winner, quality, ta, tb = zip(
            *[game for _, game in finished], strict=True
        )
        minutes = [end - begun for end, begun in zip(ends, start, strict=True)]
        # the performances and minutes of side a then side b, game by game
        perf = list(itertools.chain.from_iterable(zip(perf_a, perf_b, strict=True)))
        both = list(itertools.chain.from_iterable(zip(minutes, minutes, strict=True)))
        if fast and len(finished) <= FLOAT_SCORING_GAMES:  # on floats, one draw at a time
            scores = scores_on_floats(self._score_model, perf, both, self._score_rng.poisson)
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
        rule_values = None if self.duel_rules is None else self.duel_rules.record_games(batch)
        self._recorder.duels(batch, pa, pb, minutes, quality, truths, rule_values)
        return batch
