"""The matchmaker's pass for 1v1 games on a pool: pairs, checked, and their games started.

:class:`DuelPass` pairs the waiting players of a 1v1 pass once the
:class:`~lobbysim.sim.matchmaker.Matchmaker` has built its pool (a small pool decided on floats
never gets here): consecutive players of a shuffle for uniform pairing
(:func:`~lobbysim.sim.pairing.uniform_pairs`; the latency limits still bar pairs, the rematch rule
does not), the engagement search for a policy that pairs for engagement
(:func:`~lobbysim.sim.engagement.engagement_pairs`), else the assignment strategy with the policy
and the quality threshold (its pairs checked, :func:`~lobbysim.sim.pairing.check_pairs`; a
failure names the plug-in). Each game's predicted quality must lie in [0, 1], and no pair the
rematch rule, the latency limits or a rule set bars may meet; the games then start
(:meth:`~lobbysim.sim.games.Games.start_duels`), and the rule pass and the rematch rule note who
met.

Under a rule set whose records carry rule columns (:mod:`lobbysim.sim.seat_rules`), the pass
gives the run's games a :class:`~lobbysim.sim.rule_columns.DuelRules` when it is built, and hands
each game's ratings (the pool's, which the rules read) to the games as they start: every 1v1
game's seats then record the values the rules read. Without one the games are started as
always.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import simpy

from lobbysim.policies.assignment import Assignment, Pool, QualityFn
from lobbysim.policies.base import IntArray
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.registry import PluginError, PluginRef
from lobbysim.scenario import MatchmakerConfig
from lobbysim.sim.engagement import engagement_pairs
from lobbysim.sim.entities import FloatArray, IdArray, Waiting
from lobbysim.sim.games import Games
from lobbysim.sim.pairing import (
    InForce,
    check_not_barred,
    check_pairs,
    check_quality,
    raised_in,
    uniform_pairs,
)
from lobbysim.sim.rematch import RematchRule
from lobbysim.sim.retention import Retention
from lobbysim.sim.rule_columns import DuelRules
from lobbysim.sim.rule_pass import RulePass
from lobbysim.sim.world import World


class DuelPass:
    """The 1v1 pass on a pool (see the module docstring); the matchmaker of a 1v1 run builds
    one and calls :meth:`run`. It holds no state between passes.

    Args:
        settings: the scenario's matchmaker section (the tick, the assignment's name).
        games: the run's games, which start the 1v1 games.
        assignment, threshold: pairs waiting players; the quality by time waited.
        tie_generator: returns the tie-break generator as the matchmaker's draws have left it.
        driver_name: the driving rater's name (a match quality outside [0, 1] names it).
        win_probability: the driving rater's win probabilities of players (by id), for the
            engagement search.
        env: the run's environment (the time now).
        rematch, engagement, world, rule_pass: the rematch rule, the retention model's churn
            predictions, where players are, the scenario's rule set (each None: none).
    """

    def __init__(
        self,
        settings: MatchmakerConfig,
        games: Games,
        assignment: Assignment,
        threshold: ThresholdSchedule,
        tie_generator: Callable[[], np.random.Generator],
        driver_name: str,
        win_probability: Callable[[IdArray, IdArray], FloatArray],
        env: simpy.Environment,
        *,
        rematch: RematchRule | None = None,
        engagement: Retention | None = None,
        world: World | None = None,
        rule_pass: RulePass | None = None,
    ) -> None:
        self._settings = settings
        self._games = games
        self._assignment = assignment
        self._threshold = threshold
        self._tie_generator = tie_generator
        self._driver_name = driver_name
        self._win_probability = win_probability
        self.env = env
        self._rematch = rematch
        self._engagement = engagement
        self._world = world
        self._rule_pass = rule_pass
        if rule_pass is not None:  # the seats' rule columns (the schema's, schema_of)
            duel_rules = DuelRules(rule_pass.rule_set, world)
            if duel_rules.recorded:
                games.follow_rules(duel_rules)

    def run(
        self,
        waiting: list[Waiting],
        ids: IdArray,
        pool: Pool,
        quality: QualityFn,
        policy: InForce,
        n_passes: int,
    ) -> None:
        """Pair the pool's players (``n_passes``: the matchmaker's passes so far, for the
        assignment) and start their games."""
        if policy.uniform:
            world = self._world
            allowed = None  # uniform pairing ignores the rematch rule, not the latency limits
            if world is not None and world.limits:
                allowed = world.mask(quality, ids, pool.waited)
            pairs = uniform_pairs(pool.size, self._tie_generator(), pool.focal, allowed)
        elif policy.engagement and self._engagement is not None:
            pairs = engagement_pairs(
                self._engagement,
                waiting,
                ids,
                pool.mu,
                pool.waited,
                self._win_probability,
                pool.quality_fn,
                int(getattr(policy.policy, "candidates", 16)),
                self._settings.tick,
                bool(getattr(policy.policy, "reach", True)),
            )
        else:
            pairs = self._pairs(pool, policy, n_passes)
        if len(pairs) == 0:
            return
        values = quality(pairs[:, 0], pairs[:, 1]).tolist()
        check_quality(self._driver_name, values)
        rematch, rules = self._rematch, self._rule_pass
        if not policy.uniform and pool.quality_fn is not quality:  # a rematch rule or limits
            limits = self._world is not None and self._world.limits
            check_not_barred(self._settings.assignment.name, pairs, pool.quality_fn, limits)
        pairs_list = pairs.tolist()
        games = self._games
        ratings = None
        if games.duel_rules is not None:  # the ratings the rules read: the pool's
            mu = pool.mu
            ratings = [(float(mu[a]), float(mu[b])) for a, b in pairs_list]
        games.start_duels(
            [(waiting[a], waiting[b], q) for (a, b), q in zip(pairs_list, values, strict=True)],
            ratings,
        )
        if rules is not None:
            rules.formed_pairs(pool.waited, pairs_list, self.env.now)
        if rematch is not None:  # after the games' own end callbacks, as it only notes the time
            for a, b in pairs_list:
                rematch.met_pair(waiting[a], waiting[b])

    def _pairs(self, pool: Pool, policy: InForce, n_passes: int) -> IntArray:
        """Ask the assignment for this pass's pairs; check them (a problem names the plug-in).

        A failure (an exception, or ``sys.exit``) inside the policy's ``score``, which the
        assignment calls, names the policy; any other names the assignment; a rater's, named
        where the engine calls it (the pool's quality), passes through.
        """
        name = self._settings.assignment.name
        try:
            pairs = self._assignment.pairs(
                pool, policy.policy, self._threshold, self._tie_generator(), n_passes
            )
        except PluginError:
            raise
        except (Exception, SystemExit) as exc:  # a plug-in's own bug: name it, no traceback
            if raised_in(exc, policy.policy, "score"):
                raise PluginRef(policy.field, "policy", policy.name).failure(
                    "score(decision)", exc
                ) from None
            raise PluginRef("matchmaker.assignment", "assignment", name).failure(
                f"pairs() with the policy '{policy.name}'", exc
            ) from None
        return check_pairs(name, pairs, pool.size)
