"""The matchmaker: passes over the queue, their wake-ups and ticks, and who plays whom.

:class:`Matchmaker` runs a pass whenever the doorbell rings (the pass is its answer, called
when the ring's entry in the event queue is processed), rung by a tick process at every
``k * tick`` minutes (tick k at exactly that float, not at a running sum) and, with
``wake_on_arrival``, whenever a player queues; everyone who queues at the same instant is in the
pool before the pass runs. With timed passes only, the events due at a tick (games ending on the
grid) are fired just before its pass, so their players make it.

**Back-fill passes.** A quit that opens a seat of a team or free-for-all game rings a second
doorbell, answered by :meth:`Matchmaker.backfill_pass`: the ratings are brought up to date and
open seats are filled from the queue as a full pass fills them, but no new game is formed; new
games form at the passes above (so with timed passes only, on the tick grid;
tests/sim/test_group_games.py shows a full pass per quit agrees where no game could form).

A pass first brings the ratings up to date (the ``before_pass`` hook: finished games are applied
to the raters), then builds the :class:`~lobbysim.policies.assignment.Pool` of waiting players
from the driving rater's beliefs, with the rater's own match quality and ``beta2``, and the focal
players (a ``focal_rank`` is resolved at the first pass). 1v1: the assignment strategy, with the
policy and the quality threshold, returns pairs of pool indices, checked
(:func:`~lobbysim.sim.pairing.check_pairs`), and the games start. Team and free-for-all: open
seats of running games are back-filled first, then groups of players adjacent in rating are
formed (:func:`~lobbysim.policies.groups.form_groups`). A game's predicted quality goes into its
record and must lie in [0, 1]. A plug-in that fails or returns something else stops the run with
a :class:`~lobbysim.registry.PluginError` naming it.

**The policy in force.** With an A/B switch (``matchmaker.status_quo``), passes before
``switch_at`` use the status-quo policy and passes from ``switch_at`` on the scenario's policy;
every random stream is named and none depends on the policy (:mod:`lobbysim.streams`), so two
runs that differ only in the policy are identical up to the switch. A policy's capability flags
(:mod:`lobbysim.policies.baselines`) are honoured pass by pass: ``sees_truth`` builds the pool
from the true skills (variances zero) with the true match quality ``exp(-(s_i - s_j)^2 /
(4 beta2))``; ``pairing = "uniform"`` bypasses the assignment and the threshold (consecutive
players of a shuffle with the tie-break stream; with focal players, each takes the first free
player of it; groups of consecutive players in team and free-for-all games). Teams are balanced
on the pool's means; back-fill goes by the driving rater's means. For a policy with
``needs_online`` the pool also holds the driving rater's beliefs of everyone online
(:class:`~lobbysim.policies.assignment.Pool`).

**No accidental rematches**, **latency limits** and a **rule set** (1v1, exact search): the
pass's quality is wrapped by :class:`~lobbysim.sim.rematch.RematchRule`,
:class:`~lobbysim.sim.world.World` and :class:`~lobbysim.sim.rule_pass.RulePass` so that barred
pairs never clear a threshold (uniform pairing ignores the rematch rule, not the limits); with
``seed_greedy`` or ``flexmatch``, the rule pass forms every mode's games.

**Who forms the games.** Small 1v1 passes are decided on floats by the matchmaker where the
run's plan allows (:mod:`lobbysim.sim.fast`). Otherwise it builds the pass's pool and hands it
to the pass it built and owns for the run's mode: a :class:`~lobbysim.sim.duel_pass.DuelPass`
(1v1) or a :class:`~lobbysim.sim.group_pass.GroupPass` (team and free-for-all), or with
``seed_greedy`` or ``flexmatch`` to the rule pass; each is given its collaborators when built.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.policies.assignment import Assignment, Pool, QualityFn
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.raters import Rater
from lobbysim.raters.base import float_beliefs, mean_lists, rater_plugin
from lobbysim.scenario import GameRules, MatchmakerConfig
from lobbysim.sim.clock import Clock
from lobbysim.sim.duel_pass import DuelPass
from lobbysim.sim.entities import FloatArray, IdArray, Waiting
from lobbysim.sim.fast.events import Doorbell
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.fast.small_pass import small_pass
from lobbysim.sim.games import Games
from lobbysim.sim.group_pass import GroupPass
from lobbysim.sim.pairing import (
    InForce,
    PoolQuality,
    check_quality,
    online_beliefs,
    player_of_rank,
    true_quality,
)
from lobbysim.sim.parties import Parties
from lobbysim.sim.rematch import RematchRule
from lobbysim.sim.retention import Retention
from lobbysim.sim.rule_pass import RulePass
from lobbysim.sim.sessions import Lobby
from lobbysim.sim.world import World
from lobbysim.streams import Uniforms

IntArray = NDArray[np.intp]


class Matchmaker:
    """Matchmaking passes over the lobby's queue (see the module docstring).

    Args:
        settings, rules: the scenario's matchmaker section and the game's rules.
        clock, doorbell: exact-time events and the tick grid; the matchmaker's wake-up.
        lobby, games: the queue and the players present; starts games, back-fills seats.
        driver, driver_name: the driving rater (beliefs, match quality, ``beta2``), its name.
        policy, status_quo: the policy (with its flags), and the one before the switch (None:
            no switch) at ``switch_at``.
        assignment, threshold: pairs waiting players (1v1); the quality by time waited.
        tie_rng: the tie-break stream of the policy and the assignment.
        before_pass, settle: run first in every pass (finished games to the raters); run
            before a pass that reads more than the beliefs and the queue (held scores).
        plan: the run's kernels (:class:`~lobbysim.sim.fast.plan.FastPlan`).
        backfill_bell: rung when a quit opens a seat: answered by a back-fill pass.
        rematch, engagement, world, parties: the rematch rule, the retention model's churn
            predictions, where players are, who queues with whom (each None: none).
        rule_pass: the scenario's rule set (:mod:`lobbysim.sim.rule_pass`; None: none).
        at_tick: run at every tick before its events fire (the lobby's
            :meth:`~lobbysim.sim.reneging.Reneging.at_tick`; None: nothing).

    In a run of team or free-for-all games the matchmaker builds and owns the
    :class:`~lobbysim.sim.group_pass.GroupPass` that forms them, on the games' own
    :class:`~lobbysim.sim.group_games.GroupGames` (``games.groups``), its threshold, rules,
    rematch rule, world, parties, rule pass and tie-break stream.
    """

    def __init__(
        self,
        settings: MatchmakerConfig,
        rules: GameRules,
        clock: Clock,
        doorbell: Doorbell,
        lobby: Lobby,
        games: Games,
        driver: Rater,
        policy: InForce,
        assignment: Assignment,
        threshold: ThresholdSchedule,
        tie_rng: np.random.Generator,
        before_pass: Callable[[], None],
        driver_name: str,
        *,
        plan: FastPlan,
        backfill_bell: Doorbell | None = None,
        status_quo: InForce | None = None,
        switch_at: float = math.inf,
        rematch: RematchRule | None = None,
        engagement: Retention | None = None,
        settle: Callable[[], None] | None = None,
        world: World | None = None,
        parties: Parties | None = None,
        rule_pass: RulePass | None = None,
        at_tick: Callable[[], None] | None = None,
    ) -> None:
        self._rule_pass = rule_pass  # the scenario's rule set at work (None: no rules)
        self._world = world  # where players are, their latency limits (None: no world)
        self.env = clock.env
        self._settings = settings
        self._rules = rules
        self._clock = clock
        self._doorbell = doorbell
        self._lobby = lobby
        self._games = games
        # the open seats of team and free-for-all games (None: 1v1)
        self._open_seats = None if games.groups is None else games.groups.open_seats
        self._driver = driver
        #: The driving rater as errors name it (a verb that raises stops the run on one line).
        self._rater = rater_plugin(0, driver_name)
        #: The kernels of the run (:class:`~lobbysim.sim.fast.plan.FastPlan`).
        self.plan = plan
        self._mean_list = mean_lists(driver) if plan.float_means else None
        self._beliefs = float_beliefs(driver)  # a small pass on floats, with the plan's
        self._policy = policy
        self._status_quo = status_quo
        #: When the scenario's policy takes over from the status quo (infinity: no switch).
        self.switch_at = switch_at if status_quo is not None else math.inf
        #: Who may not meet whom yet (None: no rematch rule).
        self.rematch = rematch
        self._threshold = threshold
        # The tie-break stream: with the plan's float_ties nearly every pass on every arrival
        # is a small one, so its uniforms are drawn ahead (the stream is the same).
        self._tie_rng = tie_rng
        self._ties: Uniforms | None = None
        self._uniforms: Callable[[int], list[float]] = lambda k: tie_rng.random(k).tolist()
        if plan.float_ties:
            self._ties = Uniforms(tie_rng)
            self._uniforms = self._ties.take
        self._driver_name = driver_name
        #: Run first in every pass; replace it to watch the ratings pass by pass.
        self.before_pass = before_pass
        #: Run before a pass that reads more than the driving rater's beliefs and the queue
        #: (one that is not a small pass): the lobby scores the games whose scores it held back
        #: (None: nothing to do).
        self.settle = settle
        #: The performance variance the policies are given: the driving rater's own.
        self.beta2 = self._rater.call("beta2", lambda: float(driver.beta2))
        #: The focal players (None: everybody chooses); a ``focal_rank`` is resolved at the
        #: first pass.
        self.focal = None if settings.focal_players is None else frozenset(settings.focal_players)
        self._focal_rank = settings.focal_rank
        self._backfill_bell = backfill_bell
        self._at_tick = at_tick
        #: Passes run so far (passes with too few players waiting not counted).
        self.n_passes = 0
        #: Back-fill passes run so far (with an open seat and somebody waiting).
        self.n_backfill_passes = 0
        # the pass of 1v1 games on a pool, or of team and free-for-all games
        self._duels: DuelPass | None = None
        self._groups: GroupPass | None = None
        if games.groups is None:
            self._duels = DuelPass(
                settings,
                games,
                assignment,
                threshold,
                self._tie_generator,
                driver_name,
                self._win_probability,
                self.env,
                rematch=rematch,
                engagement=engagement,
                world=world,
                rule_pass=rule_pass,
            )
        else:
            self._groups = GroupPass(
                rules,
                games.groups,
                threshold,
                self._tie_generator,
                driver_name,
                self.env,
                plan,
                rematch=rematch,
                world=world,
                parties=parties,
                rule_pass=rule_pass,
            )

    # ------------------------------------------------------------------------ processes
    def start(self) -> None:
        """Start answering the doorbells (a pass per ring) and the tick process."""
        self._doorbell.answer_with(self.run_pass)
        self.env.process(self._ticker())
        if self._backfill_bell is not None:
            self._backfill_bell.answer_with(self.backfill_pass)

    def _ticker(self) -> Generator[simpy.Event, Any, None]:
        """Ring at tick k = 1, 2, ... at exactly the float time ``k * tick``.

        At each tick ``at_tick`` runs first (the lobby's deadlines kept back for the tick), then
        the events due at the tick (:meth:`Clock.event_at`) are fired: they are processed
        before the wake-up, which is triggered after them through the same event queue.
        """
        clock, tick, at_tick = self._clock, self._settings.tick, self._at_tick
        clock.ticking = True
        k = 0
        while True:
            k += 1
            yield clock.timeout_at(k * tick)
            if at_tick is not None:
                at_tick()
            clock.fire_tick(k)
            self._doorbell.ring()

    # ------------------------------------------------------------------------ a pass
    def run_pass(self) -> None:
        """Bring the ratings up to date, then pair waiting players and start their games."""
        self.before_pass()
        lobby = self._lobby
        # two players make a game; one is enough to fill an open seat of a running game
        size = len(lobby.pool)
        if size < 2:
            open_seats = self._open_seats
            if size == 0 or open_seats is None or not open_seats.any:
                return
        self.n_passes += 1
        if self._focal_rank is not None:
            ids = lobby.present_ids()
            means = self._rater.call("means(ids)", self._driver.means, ids)
            self.focal = frozenset([player_of_rank(ids, means, self._focal_rank)])
            self._focal_rank = None
        plan = self.plan
        if self._status_quo is None:
            policy, small = self._policy, plan.small_pool
        else:
            policy = self.policy_in_force()
            small = plan.small_pool if policy is self._policy else plan.small_pool_status_quo
        waiting = list(lobby.pool.values())
        if size <= small and self.focal is None and self._small_pass(waiting):
            return
        if self.settle is not None:
            self.settle()
        ids = np.fromiter((w.pid for w in waiting), dtype=np.int64, count=len(waiting))
        pool, quality = self._pool(waiting, ids, policy)
        rules = self._rule_pass
        if rules is not None and rules.greedy:  # every mode: seed_greedy, flexmatch
            rules.run(waiting, ids, pool, quality, policy, self._tie_generator)
            return
        group_pass = self._groups
        if group_pass is not None:  # team and free-for-all games
            group_pass.run(waiting, ids, pool, quality, policy)
            return
        # 1v1 games
        assert self._duels is not None
        self._duels.run(waiting, ids, pool, quality, policy, self.n_passes)

    def _small_pass(self, waiting: list[Waiting]) -> bool:
        """Pair a small 1v1 pool on floats and start its games, as the pool and the assignment
        would (the kernel :func:`~lobbysim.sim.fast.small_pass.small_pass`); return False,
        having drawn and started nothing, where the pass must take the arrays. Taken for pools
        up to the plan's ``small_pool`` (or ``small_pool_status_quo``) without focal players.
        """
        assert self._beliefs is not None  # the plan's small_pool needs float_beliefs
        duels = small_pass(
            waiting, self.env.now, self._beliefs, self.beta2, self._threshold, self._uniforms
        )
        if duels is None:
            return False
        if duels:
            for _, _, q in duels:
                if not 0.0 <= q <= 1.0:
                    check_quality(self._driver_name, [q])
            self._games.start_duels(duels)
        return True

    def backfill_pass(self) -> None:
        """Bring the ratings up to date, then fill open seats of running games from the queue.

        A quit that opens a seat asks for this pass rather than a full one: it seats players as
        a full pass's back-fill would (by the driving rater's means; by true skill for a policy
        that sees the truth, at random for one that pairs at random), but forms no new game,
        and costs a look at the queue, not a pool with its policy and quality threshold.
        """
        self.before_pass()
        lobby, games, open_seats = self._lobby, self._games, self._open_seats
        if open_seats is None or not open_seats.any or not lobby.pool:
            return
        self.n_backfill_passes += 1
        waiting = list(lobby.pool.values())
        policy = self.policy_in_force()
        if policy.truth:
            mu = games.true_skills(waiting).tolist()
        elif self._mean_list is not None:
            mu = self._mean_list(list(lobby.pool))  # keyed by player id
        else:
            ids = np.fromiter(lobby.pool, dtype=np.int64, count=len(waiting))
            mu = self._rater.call("means(ids)", self._driver.means, ids).tolist()
        rng = self._tie_generator() if policy.uniform else None
        # OpenSeats.backfill with everybody free, on lists (tested against it)
        seated = open_seats.backfill_queue(waiting, mu, truth=policy.truth, rng=rng)
        if self.rematch is not None:
            self.rematch.played([waiting[i] for i in sorted(seated)])

    def _tie_generator(self) -> np.random.Generator:
        """Return the tie-break generator, as the uniforms taken so far have left it."""
        return self._tie_rng if self._ties is None else self._ties.generator()

    def policy_in_force(self) -> InForce:
        """Return the policy of a pass now: the status quo before the switch, else the policy."""
        if self._status_quo is not None and self.env.now < self.switch_at:
            return self._status_quo
        return self._policy

    def _pool(
        self, waiting: list[Waiting], ids: IdArray, policy: InForce
    ) -> tuple[Pool, QualityFn]:
        """Return the pass's pool and its match quality (the pool's own bars rematches).

        The pool holds the driving rater's beliefs, or for a policy that sees the truth the
        true skills with zero variances, the true match quality and the game's ``beta2``.
        """
        n = len(waiting)
        if policy.truth:
            mu = self._games.true_skills(waiting)  # less a newcomer's learning deficit
            var = np.zeros_like(mu)
            beta2 = self._rules.beta2
            quality = true_quality(mu, beta2)
        else:
            try:
                mu = self._driver.means(ids)
            except (Exception, SystemExit) as exc:  # a rater's own bug or exit: one line
                raise self._rater.failure("means(ids)", exc) from None
            try:
                variances = self._driver.variances(ids)
            except (Exception, SystemExit) as exc:
                raise self._rater.failure("variances(ids)", exc) from None
            var = np.zeros_like(mu) if variances is None else variances
            beta2 = self.beta2
            quality = self._quality_fn(ids)
        now = self.env.now
        waited = now - np.fromiter((w.since for w in waiting), dtype=np.float64, count=n)
        focal = None
        if self.focal is not None:
            focal = np.fromiter((pid in self.focal for pid in ids.tolist()), dtype=bool)
        games_played = np.fromiter((w.player.games for w in waiting), dtype=np.int64, count=n)
        rematch, world = self.rematch, self._world
        masked = quality if rematch is None else rematch.mask(quality, ids.tolist())
        if world is not None and world.limits:  # no pair outside the latency limits
            masked = world.mask(masked, ids, waited)
        if self._rule_pass is not None and self._rules.mode == "1v1":  # nor a rule breaks
            masked = self._rule_pass.mask(masked, waiting, ids, waited, mu)
        pool = Pool(
            mu=mu,
            var=var,
            waited=waited,
            beta2=beta2,
            quality_fn=masked,
            focal=focal,
            games_played=games_played,
        )
        if policy.online and not policy.truth:
            playing = [pid for pid in self._lobby.present if pid not in self._lobby.pool]
            pool.future_mu, pool.future_var = online_beliefs(
                self._rater, self._driver, playing, mu, var
            )
            pool.future_pool = max(n - 1, 1)
        return pool, quality

    def _quality_fn(self, ids: IdArray) -> QualityFn:
        """Return the match quality of pool indices: the driving rater's, of their players."""
        return PoolQuality(self._driver.quality, ids, self._rater)

    def _win_probability(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return the driving rater's win probabilities (a failure names the rater)."""
        return self._rater.call(
            "win_probability(ids_a, ids_b)", self._driver.win_probability, ids_a, ids_b
        )
