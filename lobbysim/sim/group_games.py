"""Team and free-for-all games: seats, quits, back-fill, the behind rule, ends, scores, passes.

:class:`GroupGames` is the part of :class:`~lobbysim.sim.games.Games` that runs games of more than
two players. A team game's teams are given by the pass that forms it (the best split,
:func:`lobbysim.policies.teams.best_split`); at its start the driving rater's predicted chance
that the stronger team wins and the true gap between the teams' mean skills are noted for its
record. Each stint ends at the player's own
quit time or at the game's end; a quit opens the seat and rings the back-fill doorbell, whose
pass fills it from the queue at once (never with somebody who already played in that game) while
enough of the game remains, or a later pass does; so minutes in the game differ between players.
A player is *behind* when seated (their quit hazard is then multiplied by
``quit_behind_multiplier``): in a team game, their team's mean performance is below the other's;
in a free-for-all, their performance is below the median of the others seated. A team game is won
by the higher total score. The matchmaker's pass for them is
:class:`~lobbysim.sim.group_pass.GroupPass`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.policies.teams import team_start
from lobbysim.raters import Rater
from lobbysim.records.rows import GameResult, Seat, make_result, make_seat
from lobbysim.registry import PluginRef
from lobbysim.scenario import GameRules
from lobbysim.sim.clock import Clock
from lobbysim.sim.entities import FinishedGame, FloatArray, GroupGame, Stint, Waiting, median
from lobbysim.sim.fast.backfill import seat_from_queue
from lobbysim.sim.fast.events import Doorbell, Moment
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.parties import Parties
from lobbysim.sim.recorder import Recorder
from lobbysim.sim.skill_dynamics import SkillDynamics
from lobbysim.sim.world import World
from lobbysim.skill.truth import game_truth, truth_ffa

if TYPE_CHECKING:
    from lobbysim.sim.sessions import Lobby


class GroupGames:
    """Team and free-for-all games (see the module docstring); a part of
    :class:`~lobbysim.sim.games.Games`, which sets the attributes below."""

    env: simpy.Environment
    rules: GameRules
    plan: FastPlan
    n_games: int
    dynamics: SkillDynamics | None
    draw_quit: Callable[[], float]
    _clock: Clock
    _backfill_bell: Doorbell
    _lobby: Lobby
    _recorder: Recorder
    _driver: Rater
    _driver_plugin: PluginRef
    _mean_list: Callable[[list[int]], list[float]] | None
    _beta: float
    _perf_normal: Callable[[], float]
    _score_rng: np.random.Generator
    _skill_mean: float
    _skill_sd: float
    _truths: dict[int, list[float]]
    _finished: list[Any]
    _open_games: dict[int, GroupGame]
    _world: World | None
    _parties: Parties | None
    _premade: dict[int, tuple[int, int]]
    _team_start: dict[int, tuple[float, float]]

    def _truth_of(self, waiting: Waiting) -> float:
        raise NotImplementedError  # Games'

    @property
    def has_open_seats(self) -> bool:
        """Whether a running group game has a seat to back-fill."""
        return bool(self._open_games)

    def backfill(
        self,
        waiting: list[Waiting],
        mu: FloatArray,
        free: NDArray[np.bool_],
        seat: Callable[[GroupGame, Waiting, int | None], None] | None = None,
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
            seat: seats a player (default: :meth:`_seat`).
            truth: ``mu`` holds true skills; the target is the leaver's true skill.
            rng: pick among the eligible uniformly with it (the pass's tie-break stream).
        """
        seat = self._seat if seat is None else seat
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
        if self.plan.backfill_lists and rng is None:
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
        for game_id in list(self._open_games):
            game = self._open_games[game_id]
            if game.end - now < rules.backfill_min_remaining:
                game.open_seats.clear()
            if game.open_seats:
                yield game
            if not game.open_seats:
                del self._open_games[game_id]

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
            if rules.mode == "team":
                in_party = [p.party >= 0 for p in players]
                team_a = sum(k for k, t in zip(in_party, seated, strict=True) if t == 0)
                self._premade[game.game_id] = (team_a, sum(in_party) - team_a)
        for member, team in zip(members, seated, strict=True):
            self._seat(game, member, team)
        if rules.mode == "team":
            self._team_start[game.game_id] = self._team_prediction(members, seated, game)

    def _team_prediction(
        self, members: list[Waiting], seated: Sequence[int | None], game: GroupGame
    ) -> tuple[float, float]:
        """Return :func:`~lobbysim.policies.teams.team_start` of a team game starting now, on
        the driving rater's beliefs."""
        ids = np.fromiter((m.pid for m in members), dtype=np.int64, count=len(members))
        means = self._driver_plugin.call("means(ids)", self._driver.means, ids)
        variances = self._driver_plugin.call("variances(ids)", self._driver.variances, ids)
        beta2 = float(self._driver.beta2)
        return team_start(means, variances, self._truths[game.game_id], seated, beta2)

    def _seat(self, game: GroupGame, member: Waiting, team: int | None) -> None:
        """Put a waiting player into ``game`` now, on ``team``, until the end or a quit."""
        now, rules = self.env.now, self.rules
        player = member.player
        # _truth_of without the call when skills never change
        truth = player.skill if self.dynamics is None else self._truth_of(member)
        self._truths[game.game_id].append(truth)
        player.unscored += 1
        if self._world is not None:
            self._world.seated(player.pid, game.data_centre, now)
        performance = truth + self._beta * self._perf_normal()
        stint = Stint(player, team, now, math.nan, performance, False, player.party)
        game.stints.append(stint)
        ffa_behind = team is None and game.behind_ffa(performance)  # before sitting down
        game.sit(stint)
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

    def _score_groups(self, finished: list[FinishedGame]) -> list[GameResult]:
        """Score and record finished team and free-for-all games (see
        :meth:`Games.score_finished <lobbysim.sim.games.Games.score_finished>`)."""
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
            self._recorder.game(
                result, g.quality, truth, players, g.data_centre, party_ids, team_start
            )
            results.append(result)
        return results

    @staticmethod
    def _result(g: FinishedGame, seats: tuple[Seat, ...]) -> GameResult:
        """Return a scored game as the raters get it; a team game is won on total score."""
        winner = g.winner
        if g.mode == "team":
            totals = [sum(st.score for st in seats if st.team == team) for team in (0, 1)]
            winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
        return make_result(g.game_id, g.mode, g.start, g.end, seats, winner)


class _FinishGroup:
    """The end event's callback of a team or free-for-all game: :meth:`Games._finish_group`.

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
