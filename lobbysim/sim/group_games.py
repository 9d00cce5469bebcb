"""Team and free-for-all games: seats, quits (opening seats), the behind rule, ends, scores.

:class:`GroupGames` runs games of more than two players: :class:`~lobbysim.sim.games.Games`
builds one for a run of team or free-for-all games and owns it (``Games.groups``); the
matchmaker's group pass (:class:`~lobbysim.sim.group_pass.GroupPass`) and the rule pass start
and back-fill games through it. A team game's teams are given by the pass that forms it (the
best split, :func:`lobbysim.policies.teams.best_split`); at its start the driving rater's
predicted chance that the stronger team wins and the true gap between the teams' mean skills
are noted for its record. Each stint ends at the player's own quit time or at the game's end; a
quit opens the seat and rings the back-fill doorbell, whose pass fills it from the queue at once
(never with somebody who already played in that game) while enough of the game remains, or a
later pass does; so minutes in the game differ between players. A player is *behind* when
seated (their quit hazard is then multiplied by ``quit_behind_multiplier``): in a team game,
their team's mean performance is below the other's; in a free-for-all, their performance is
below the median of the others seated. A team game is won by the higher total score. Under a
rule set (:meth:`GroupGames.follow_rules`) each seat's record carries the values its rules read
and a back-fill keeps them (:mod:`lobbysim.sim.seat_rules`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy

from lobbysim.policies.team_shapes import teams_start
from lobbysim.policies.teams import team_start
from lobbysim.raters import Rater
from lobbysim.raters.base import mean_lists, rater_plugin
from lobbysim.records.rows import GameResult, Seat, make_result, make_seat
from lobbysim.scenario import GameRules
from lobbysim.sim.clock import Clock
from lobbysim.sim.entities import (
    FinishedGame,
    FloatArray,
    GameDraws,
    GroupGame,
    Stint,
    Waiting,
    median,
)
from lobbysim.sim.fast.events import Doorbell, Moment
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.open_seats import OpenSeats, SeatRules
from lobbysim.sim.parties import Parties
from lobbysim.sim.recorder import Recorder
from lobbysim.sim.skill_dynamics import SkillDynamics
from lobbysim.sim.world import World
from lobbysim.skill.truth import game_truth, truth_ffa

if TYPE_CHECKING:
    from lobbysim.sim.sessions import Lobby


class GroupGames:
    """Team and free-for-all games (see the module docstring): a collaborator of
    :class:`~lobbysim.sim.games.Games`, which builds it for a run of team or free-for-all games.

    It owns the group games' state: their ids and count (:attr:`n_games`), the open seats of
    the running games (:attr:`open_seats`, an :class:`~lobbysim.sim.open_seats.OpenSeats`, which
    seats back-filled players through this object), each running or unscored game's truth, the
    finished games waiting for their scores, and what a team game's record notes at its start.

    Args:
        rules: the game's rules (``scenario.game``; a mode other than ``1v1``).
        clock: exact-time events and the tick grid (games end on it).
        backfill_bell: rung when a quit opens a seat to back-fill.
        lobby: hands the seated players over to their games, takes them back.
        recorder: gets every scored game.
        driver, driver_name: the driving rater (a leaver's mean is the target for back-filling
            the seat; a team game's predicted win chance), its name for messages.
        draws: the games' performances and quit times (shared with the owning ``Games``).
        score_rng: the ``scores`` stream.
        skill_mean, skill_sd: the population's skill distribution, the scale of performances
            for scores.
        dynamics: the skill dynamics of the run (None: skills never change).
        plan: the run's kernels (back-fills on lists, the driver's means on floats, ffa truth
            on lists).
        world, parties: where games are hosted, who queues with whom (each None: none).
    """

    def __init__(
        self,
        rules: GameRules,
        clock: Clock,
        backfill_bell: Doorbell,
        lobby: Lobby,
        recorder: Recorder,
        driver: Rater,
        driver_name: str,
        draws: GameDraws,
        score_rng: np.random.Generator,
        skill_mean: float,
        skill_sd: float,
        dynamics: SkillDynamics | None,
        plan: FastPlan,
        *,
        world: World | None = None,
        parties: Parties | None = None,
    ) -> None:
        self.env = clock.env
        self.rules = rules
        self.plan = plan
        self._clock = clock
        self._backfill_bell = backfill_bell
        self._lobby = lobby
        self._recorder = recorder
        self._driver = driver
        self._driver_plugin = rater_plugin(0, driver_name)
        # a quitter's mean on floats, with the plan's float_means
        self._mean_list = mean_lists(driver) if plan.float_means else None
        self._draws = draws
        self._beta = math.sqrt(rules.beta2)
        self._score_rng = score_rng
        self._skill_mean = skill_mean
        self._skill_sd = skill_sd
        self._dynamics = dynamics
        self._world = world
        self._parties = parties
        # whether the teams are a fixed shape (two of one size, or a free-for-all of one size)
        self._fixed = rules.shape is None or rules.shape.fixed
        #: Group games started so far (a game's id is the count before it).
        self.n_games = 0
        #: The open seats of the running games, and their back-fill.
        self.open_seats = OpenSeats(rules, self.env, plan, self._seat, world=world, parties=parties)
        # the truth of each running or unscored game: its stints' effective skills, in order
        self._truths: dict[int, list[float]] = {}
        self._finished: list[FinishedGame] = []  # finished games not yet scored
        self._premade: dict[int, tuple[int, int]] = {}  # team games' players in parties
        # team games' predicted win chance of the stronger team and true gap, at the start
        self._team_start: dict[int, tuple[float, float]] = {}
        #: The run's rule set at the seats (None: no rules).
        self.seat_rules: SeatRules | None = None

    def follow_rules(self, seat_rules: SeatRules) -> None:
        """Play under a rule set: seats' records carry its values, back-fills keep its rules."""
        self.seat_rules = seat_rules
        self.open_seats.seat_rules = seat_rules

    def start_group(
        self,
        members: list[Waiting],
        mu: FloatArray,
        quality: float,
        data_centre: int = -1,
        teams: Sequence[int] | None = None,
    ) -> None:
        """Start a team or free-for-all game of ``members`` (the pass's ratings ``mu``), hosted
        in ``data_centre`` (-1: no world), on ``teams`` (team games: each member's team, the
        pass's split)."""
        rules, env = self.rules, self.env
        seated: list[int | None]
        if rules.mode != "team":
            seated = [None] * len(members)
        else:
            assert teams is not None, "a team game's pass gives its teams"
            seated = list(teams)
        end = self._clock.snap_to_tick(env.now + rules.length)
        game = GroupGame(self.n_games, rules.mode, env.now, end, quality, self._clock.event_at(end))
        self.n_games += 1
        self._truths[game.game_id] = []
        game.end_event.callbacks.append(_FinishGroup(self, game))
        game.data_centre = data_centre
        if self._world is not None:
            self._world.started([m.pid for m in members], env.now)
        parties = self._parties
        if parties is not None:
            players = [m.player for m in members]
            parties.started(players, seated, env.now)
            if rules.mode == "team" and self._fixed:
                in_party = [p.party >= 0 for p in players]
                team_a = sum(k for k, t in zip(in_party, seated, strict=True) if t == 0)
                self._premade[game.game_id] = (team_a, sum(in_party) - team_a)
        seat_rules = self.seat_rules
        if seat_rules is not None:  # the ratings the pass's rules read
            for member, rating in zip(members, np.asarray(mu).tolist(), strict=True):
                seat_rules.note(game.game_id, member, rating, math.nan)
        for member, team in zip(members, seated, strict=True):
            self._seat(game, member, team)
        if rules.mode == "team":
            self._team_start[game.game_id] = self._team_prediction(members, seated, game)

    def _team_prediction(
        self, members: list[Waiting], seated: Sequence[int | None], game: GroupGame
    ) -> tuple[float, float]:
        """Return :func:`~lobbysim.policies.teams.team_start` of a team game starting now, on
        the driving rater's beliefs (teams of ranges, uneven or more than two:
        :func:`~lobbysim.policies.team_shapes.teams_start`)."""
        ids = np.fromiter((m.pid for m in members), dtype=np.int64, count=len(members))
        means = self._driver_plugin.call("means(ids)", self._driver.means, ids)
        variances = self._driver_plugin.call("variances(ids)", self._driver.variances, ids)
        beta2 = float(self._driver.beta2)
        truths = self._truths[game.game_id]
        if not self._fixed:
            teams = [int(t) for t in seated if t is not None]
            return teams_start(means, variances, truths, teams, beta2)
        return team_start(means, variances, truths, seated, beta2)

    def _seat(self, game: GroupGame, member: Waiting, team: int | None) -> None:
        """Put a waiting player into ``game`` now, on ``team``, until the end or a quit."""
        now, rules = self.env.now, self.rules
        player = member.player
        dynamics = self._dynamics  # the skill now, brought up to date if it changes
        truth = player.skill if dynamics is None else dynamics.skill_now(player, now, member.since)
        self._truths[game.game_id].append(truth)
        player.unscored += 1
        if self._world is not None:
            self._world.seated(player.pid, game.data_centre, now)
        performance = truth + self._beta * self._draws.normal()
        stint = Stint(player, team, now, math.nan, performance, False, player.party)
        game.stints.append(stint)
        ffa_behind = team is None and game.behind_ffa(performance)  # before sitting down
        game.sit(stint)
        game.been.add(player.pid)
        leave: simpy.Event | Moment = game.end_event
        if rules.quit_rate > 0:
            behind = self._behind(game, stint) if team is not None else ffa_behind
            rate = rules.quit_rate * (rules.quit_behind_multiplier if behind else 1.0)
            quit_at = now + self._draws.quit() / rate
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
        team = stint.team
        if team is not None:  # one walk (the stint is never on the other team)
            mine: list[float] = []
            theirs: list[float] = []
            for s in game.seated.values():
                (mine if s.team == team else theirs).append(s.performance)
            return bool(theirs) and sum(mine) / len(mine) < sum(theirs) / len(theirs)
        others = [s for s in game.seated.values() if s is not stint]
        if not others:
            return False
        return stint.performance < median([s.performance for s in others])

    def _make_quit(self, game: GroupGame, stint: Stint) -> Callable[[simpy.Event], None]:
        def quit_game(_event: simpy.Event) -> None:
            now = self.env.now
            stint.left = now
            stint.quit = True
            game.stand(stint)
            rules = self.rules
            if rules.backfill and game.end - now >= rules.backfill_min_remaining:
                pid = stint.player.pid
                if self._mean_list is not None:
                    (mean,) = self._mean_list([pid])
                else:
                    plugin = self._driver_plugin
                    mean = float(plugin.call("means(ids)", self._driver.means, np.array([pid]))[0])
                truths = self._truths[game.game_id]
                truth = next(t for s, t in zip(game.stints, truths, strict=True) if s is stint)
                game.open_seats.append((stint.team, mean, truth))
                self.open_seats.open(game)
                self._backfill_bell.ring()
            self._lobby.stint_over(stint.player)

        return quit_game

    def _finish_group(self, game: GroupGame) -> None:
        """End a team or free-for-all game: its last stints end, and it waits for its scores."""
        for stint in game.seated.values():
            stint.left = game.end
        game.seated.clear()
        game.performances.clear()
        self.open_seats.close(game.game_id)
        self._finished.append(
            FinishedGame(
                game.game_id,
                game.mode,
                game.start,
                game.end,
                game.stints,
                None,
                game.quality,
                game.data_centre,
            )
        )

    def score_finished(self) -> list[GameResult]:
        """Score and record the games finished since the last call, in the order they finished,
        and return them as the raters get them (see :meth:`Games.score_finished
        <lobbysim.sim.games.Games.score_finished>`, which calls this)."""
        if not self._finished:
            return []
        finished, self._finished = self._finished, []
        return self._score_groups(finished)

    def _score_groups(self, finished: list[FinishedGame]) -> list[GameResult]:
        """Score and record finished team and free-for-all games (:meth:`score_finished`)."""
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
            result = self._result(g, seats, self._fixed)
            premade = self._premade.pop(g.game_id, None)
            if premade is not None and self._parties is not None:
                self._parties.scored(premade, result.winner, g.start)
            players = [st.player for st in g.stints]
            skills = self._truths.pop(g.game_id)
            if g.mode == "ffa" and self.plan.float_scoring:  # game_truth's, on lists
                truth = truth_ffa(skills, scores[k : k + n], minutes[k : k + n], beta2)
            else:
                truth = game_truth(g.mode, result.seats, skills, result.winner, beta2)
            k += n
            party_ids = [st.party for st in g.stints] if self._parties is not None else None
            team_start = self._team_start.pop(g.game_id, None)
            seat_rules = self.seat_rules
            rule_values = None
            if seat_rules is not None:  # each seat's note is forgotten, recorded or not
                rule_values = [seat_rules.record(g.game_id, st.player.pid) for st in g.stints]
                rule_values = rule_values if seat_rules.recorded else None
            self._recorder.game(
                result, g.quality, truth, players, g.data_centre, party_ids, team_start, rule_values
            )
            results.append(result)
        return results

    @staticmethod
    def _result(g: FinishedGame, seats: tuple[Seat, ...], fixed: bool = True) -> GameResult:
        """Return a scored game as the raters get it: a team game of two teams of one fixed
        size is won on total score; one of other teams (``fixed`` False) by the highest score
        per minute played (a team's total over its players' minutes), a tie by none."""
        winner = g.winner
        if g.mode == "team" and fixed:
            totals = [sum(st.score for st in seats if st.team == team) for team in (0, 1)]
            winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
        elif g.mode == "team":
            teams = sorted({int(st.team) for st in seats if st.team is not None})
            rates = []
            for team in teams:
                mine = [st for st in seats if st.team == team]
                minutes = math.fsum(st.minutes for st in mine)
                score = math.fsum(st.score for st in mine)
                rates.append(score / minutes if minutes > 0 else 0.0)
            best = max(rates)
            winner = teams[rates.index(best)] if rates.count(best) == 1 else None
        return make_result(g.game_id, g.mode, g.start, g.end, seats, winner)


class _FinishGroup:
    """The end event's callback of a team or free-for-all game: :meth:`GroupGames._finish_group`.

    It lets go of the game once called. The game holds its end event, and a
    :class:`~lobbysim.sim.fast.events.Moment` keeps its callbacks after firing: holding the game
    after that would make a reference cycle (game, end event, this callback) that keeps the
    game, its stints and its players' callbacks alive until the cyclic garbage collector runs,
    rather than freeing them by reference counting.
    """

    __slots__ = ("_game", "_games")

    def __init__(self, games: GroupGames, game: GroupGame) -> None:
        self._games = games
        self._game: GroupGame | None = game

    def __call__(self, _event: Any) -> None:
        game, self._game = self._game, None
        assert game is not None, "a game ends once"
        self._games._finish_group(game)
        stint_over = self._games._lobby.stint_over
        for player in game.finishing:  # as their own callbacks would, in seating order
            stint_over(player)
