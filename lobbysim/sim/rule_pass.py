"""A matchmaking pass under a rule set, and the rules' telemetry (docs/model.md, section 10).

:class:`RulePass` carries a scenario's ``matchmaker.rules`` into the matchmaker's passes:

* ``algorithm: exact``: the matchmaker searches as without rules, with every rule a hard
  constraint. A ``match_quality`` rule on the ``oldest`` clock is the search's quality threshold
  (:meth:`RulePass.threshold`: its steps, and 0 from its ``optional_after``). In 1v1 games every
  other rule bars the pairs that break it (:meth:`RulePass.mask`: the pair's quality is
  ``-inf``, as the rematch rule and latency limits bar pairs), so the global assignment is exact
  under the rules; in team and free-for-all games a group the matchmaker forms (data centre by
  data centre under latency rules, :meth:`RulePass.open_matrix`) starts only if it keeps every
  rule (:meth:`RulePass.admitted`).
* ``algorithm: seed_greedy`` (``flexmatch``): :meth:`RulePass.run` back-fills open seats as the
  matchmaker does, then forms matches by :func:`~lobbysim.sim.seed_greedy.seed_greedy`
  (:func:`~lobbysim.sim.flexmatch_builder.flexmatch_matches`) from the free tickets (a solo
  player, a whole party) and starts them. Pairs the rematch rule or a world's latency limits
  bar never meet.

With a world, a game is hosted by the world's host rule among the data centres that keep the
latency rules for every player (the world is built with the rules, ``World(host_rules=...)``:
:meth:`lobbysim.sim.world.World.host`); a match whose parties keep a rule only on their combined
latency (``party: average`` or ``min``) may have none, and is then hosted by the world's rule
alone.

**Telemetry**: :class:`~lobbysim.sim.rule_telemetry.RuleTelemetry` (:attr:`RulePass.telemetry`)
notes each game formed and gives the rules' metrics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lobbysim.policies.assignment import Pool, QualityFn
from lobbysim.policies.base import IntArray
from lobbysim.policies.groups import group_qualities
from lobbysim.policies.team_shapes import spread_split, teams_quality
from lobbysim.policies.teams import best_split, seat_teams, split_quality
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.scenario import Scenario
from lobbysim.scenario.compound import compound_children
from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.attributes import Attributes
from lobbysim.sim.entities import FloatArray, IdArray, Waiting
from lobbysim.sim.flexmatch_builder import flexmatch_matches, sort_keys
from lobbysim.sim.games import Games
from lobbysim.sim.pairing import InForce, check_quality
from lobbysim.sim.parties import Parties
from lobbysim.sim.rematch import RematchRule
from lobbysim.sim.rule_kinds import pair_ok
from lobbysim.sim.rule_telemetry import RuleTelemetry
from lobbysim.sim.rules import LATENCY_KINDS, RuleSet, View
from lobbysim.sim.seed_greedy import seed_greedy
from lobbysim.sim.world import World
from lobbysim.streams import Streams


def _is_threshold(rule: Any) -> bool:
    return rule.kind == "match_quality" and rule.config.clock == "oldest"


def rules_threshold(rules: Sequence[RuleConfig]) -> ThresholdSchedule:
    """Return the exact search's quality threshold under a rule set: the steps of its
    ``match_quality`` rule on the ``oldest`` clock (0 from its ``optional_after``), else 0."""
    children = compound_children(list(rules))  # they hold through their compound rule
    for rule in rules:
        if rule.kind == "match_quality" and rule.clock == "oldest" and rule.name not in children:
            steps = [(0.0, rule.limit or 0.0), *rule.expansions]
            if rule.optional_after is not None:
                steps = [s for s in steps if s[0] < rule.optional_after]
                steps.append((rule.optional_after, 0.0))
            return ThresholdSchedule(tuple(steps))
    return ThresholdSchedule(((0.0, 0.0),))


class RulePass:
    """The rule set of a run in its passes, and its telemetry (see the module docstring).

    Args:
        scenario: the scenario (its ``matchmaker.rules``, ``algorithm`` and ``attributes``; the
            driving rater's name, which a match quality outside [0, 1] names).
        streams: the run's random streams (``attributes:<name>``, one per attribute).
        games: the run's games, which a seed-and-greedy pass starts and back-fills.
        world, parties, rematch: where players are, who queues with whom, the rematch rule
            (told who met; each None: none).
    """

    def __init__(
        self,
        scenario: Scenario,
        streams: Streams,
        games: Games,
        world: World | None = None,
        parties: Parties | None = None,
        rematch: RematchRule | None = None,
    ) -> None:
        mm = scenario.matchmaker
        assert mm.rules is not None
        configs = dict(scenario.attributes or {})
        attributes = None
        if configs:
            attributes = Attributes(configs, lambda name: streams.get(f"attributes:{name}"))
        self.rule_set = RuleSet(mm.rules, attributes, configs)
        #: Whether this pass forms the matches (seed_greedy, flexmatch), and which way.
        self.greedy = mm.algorithm in ("seed_greedy", "flexmatch")
        self._algorithm, self._batching = mm.algorithm, mm.batching
        self._batch_size, self._batch_sort = mm.batch_size, mm.batch_sort
        #: Deals the pool into batches at random (FlexMatch's ``random`` batching, cut into
        #: batches of ``batch_size``); None where nothing is dealt, so other runs keep their
        #: streams.
        self._batch_rng = (
            streams.get("matchmaker:batches")
            if mm.batch_size is not None and mm.batching == "none"
            else None
        )
        self._game = scenario.game
        self._games, self._rematch = games, rematch
        self._driver_name = scenario.raters.driver.name
        self._world, self._parties = world, parties
        self._start = scenario.metrics_start
        rules = self.rule_set.rules
        self.telemetry = RuleTelemetry(self.rule_set, scenario.metrics_start)
        self._pass_view: View | None = None  # the exact group search's view of its pass
        self._sides: list[int] | None = None  # the teams of the group it last admitted
        self._pair_view: View | None = None  # the exact 1v1 search's view of its pass
        #: Whether a rule constrains latency (the exact group search then forms groups data
        #: centre by data centre, :meth:`open_matrix`).
        self.latency = any(r.kind in LATENCY_KINDS for r in rules)

    # ------------------------------------------------------------------ the exact search
    def view(
        self,
        waiting: Sequence[Waiting],
        ids: IdArray,
        waited: FloatArray,
        mu: FloatArray,
        quality: QualityFn,
    ) -> View:
        """Return the rules' view of a pass's pool (``waiting``: its players, for their
        parties; ``quality``: the pool's, which bars what it bars)."""
        world, parties = self._world, self._parties
        latency = best = premade = None
        if world is not None:
            latency = world.latencies_of(ids)
            best = latency.min(axis=1)
        if parties is not None:
            premade = np.array([w.player.party >= 0 for w in waiting], dtype=bool)
        skill = None
        if self.rule_set.needs_skill:  # an attribute bound to true skill
            skill = np.array([w.player.skill for w in waiting], dtype=float)
        return self.rule_set.view(ids, waited, mu, quality, skill, latency, best, premade)

    def classes(
        self, waiting: Sequence[Waiting], ids: IdArray, pool: Pool
    ) -> NDArray[np.int64] | None:
        """Return each pool position's class under the ``equal`` rules that hold at every
        wait (no ``optional_after``, not a compound's): players of different classes can never
        share a game, so the exact group search forms groups class by class (None: no such
        rule). The pass's view is made here and kept for :meth:`admitted`."""
        rules = self.rule_set
        kept = [
            r.attribute
            for k, r in enumerate(rules.rules)
            if r.kind == "equal" and k not in rules.children and math.isinf(r.optional_after)
        ]
        if not kept:
            return None
        view = self._pass_view = self.view(waiting, ids, pool.waited, pool.mu, pool.quality_fn)
        codes = np.stack([view.codes[a] for a in kept], axis=1)
        return np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)

    def mask(
        self,
        quality: QualityFn,
        waiting: Sequence[Waiting],
        ids: IdArray,
        waited: FloatArray,
        mu: FloatArray,
    ) -> QualityFn:
        """Return ``quality`` with ``-inf`` for a pair that breaks a rule (1v1, exact search;
        the threshold's rule is the threshold's; ``waited`` and ``mu`` in pool order)."""
        view = self._pair_view = self.view(waiting, ids, waited, mu, quality)
        children = self.rule_set.children  # they hold through their compound rule
        rules = [
            (k, r)
            for k, r in enumerate(self.rule_set.rules)
            if not _is_threshold(r) and k not in children
        ]
        tally = self.rule_set.rejections

        def within(i: IntArray, j: IntArray) -> FloatArray:
            values = quality(i, j)
            ok = np.ones(np.shape(values), dtype=bool)
            for k, rule in rules:
                broken = ok & ~pair_ok(
                    self.rule_set, rule, view, np.asarray(i), np.asarray(j), values
                )
                tally[k] += int(broken.sum())
                ok &= ~broken
            result: FloatArray = np.where(ok, values, -np.inf)
            return result

        return within

    def admitted(
        self,
        waiting: Sequence[Waiting],
        ids: IdArray,
        pool: Pool,
        members: IntArray,
        teams: Sequence[int] | None,
    ) -> list[list[int]] | None:
        """Return the tickets of a group the exact search formed (pool positions ``members``;
        ``teams``: each member's team, None: balanced by rating) if it keeps every rule, else
        None. The pass's view is made at its first group and kept for the others."""
        view = self._pass_view
        if view is None or view.waited is not pool.waited:
            view = self._pass_view = self.view(waiting, ids, pool.waited, pool.mu, pool.quality_fn)
        at = members.tolist()
        tickets: list[list[int]] = []
        sides: list[int] = []
        if teams is None and self._game.mode == "team":
            teams = best_split([1] * len(at), pool.mu[members].tolist(), self._game.seats // 2)
        seen: dict[int, list[int]] = {}
        for k, position in enumerate(at):
            party = waiting[position].player.party
            if party >= 0 and party in seen:
                seen[party].append(position)
                continue
            tickets.append([position])
            if party >= 0:
                seen[party] = tickets[-1]
            if teams is not None:
                sides.append(int(teams[k]))
        self._sides = sides if teams is not None else None
        return tickets if self.admits(view, tickets, self._sides) else None

    def admits(self, view: View, tickets: list[list[int]], teams: list[int] | None) -> bool:
        """Whether a group the exact search formed keeps every rule (the threshold's aside)."""
        rules = self.rule_set
        waits = [float(view.waited[t].max()) for t in tickets]
        for k, rule in enumerate(rules.rules):
            if k in rules.children:  # it holds through its compound rule
                continue
            limits = None if _is_threshold(rule) else rule.limits(waits)
            if limits is not None and not rules.holds(rule, limits, view, tickets, teams):
                rules.rejections[k] += 1
                return False
        return True

    # ------------------------------------------------------------------ seed-and-greedy
    def run(
        self,
        waiting: list[Waiting],
        ids: IdArray,
        pool: Pool,
        quality: QualityFn,
        policy: InForce,
        tie_generator: Callable[[], np.random.Generator],
    ) -> None:
        """A seed-and-greedy pass of the matchmaker: back-fill open seats (team and free-for-all
        games), form matches of the free tickets, start them.

        Args:
            waiting, ids, pool, quality: the pass's queue, its players' ids, its pool and match
                quality.
            policy: the policy in force (the back-fill's target and pick).
            tie_generator: returns the matchmaker's tie-break generator.
        """
        game, games, rematch = self._game, self._games, self._rematch
        group_games = games.groups
        free = np.ones(len(waiting), dtype=bool)
        if group_games is not None and group_games.open_seats.any:
            # pool.mu: the oracle's true skills, else the means
            rng = tie_generator() if policy.uniform else None
            group_games.open_seats.backfill(waiting, pool.mu, free, truth=policy.truth, rng=rng)
            if rematch is not None:
                rematch.played([waiting[i] for i in np.flatnonzero(~free).tolist()])
        left = np.flatnonzero(free)
        if left.size < 2:
            return
        view = self.view(waiting, ids, pool.waited, pool.mu, pool.quality_fn)
        tickets = self._tickets(waiting, left)
        split = None
        team_size = None
        shape = game.shape
        ranged = shape if shape is not None and not shape.fixed else None
        if game.mode == "team":
            if ranged is None:
                team_size = game.seats // 2
            split = self._splitter(view)
        if self._algorithm == "flexmatch":
            matches = flexmatch_matches(
                view,
                self.rule_set,
                tickets,
                game.seats,
                team_size,
                split,
                sorts=sort_keys(self.rule_set),
                batching=self._batching,
                shape=ranged,
                batch_size=self._batch_size,
                batch_sort=self._batch_sort,
                rng=self._batch_rng,
            )
        else:
            matches = seed_greedy(
                view, self.rule_set, tickets, game.seats, team_size, split, shape=ranged
            )
        groups = [np.array([p for t in m for p in t], dtype=np.intp) for m, _ in matches]
        barred = group_qualities(groups, pool.quality_fn)  # -inf: a pair may not meet
        if game.mode == "team":  # the quality of the split each plays
            quality_of = split_quality if ranged is None else teams_quality
            qualities = [
                quality_of(pool.mu, pool.var, g, seat_teams(m, t or ()), pool.beta2)
                for g, (m, t) in zip(groups, matches, strict=True)
            ]
        else:
            qualities = group_qualities(groups, quality)
        now = games.env.now
        for (match, teams), members, q, bar in zip(matches, groups, qualities, barred, strict=True):
            if not math.isfinite(bar):  # a pair the rematch rule or the limits bar
                continue
            check_quality(self._driver_name, [q])
            seated = [waiting[i] for i in members.tolist()]
            if game.mode == "1v1":
                a, b = members.tolist()  # the ratings the rules read: the pool's
                games.start_duels(
                    [(seated[0], seated[1], q)], [(float(pool.mu[a]), float(pool.mu[b]))]
                )
                if rematch is not None:
                    rematch.met_pair(seated[0], seated[1])
                self.formed(view.waited, match, now, view)
                continue
            host = -1
            if self._world is not None:
                host = self._world.host([w.pid for w in seated], [now - w.since for w in seated])
                if host < 0:
                    continue
            by_seat = None if teams is None else seat_teams(match, teams)
            assert group_games is not None  # a team or free-for-all game
            group_games.start_group(seated, pool.mu[members], q, host, by_seat)
            if rematch is not None:
                rematch.met(seated)
            self.formed(view.waited, match, now, view, teams)

    def _tickets(self, waiting: list[Waiting], left: IntArray) -> list[list[int]]:
        """Return the tickets among the free players (pool positions): a solo player, or a
        party whose members are all free and waiting."""
        parties = self._parties
        if parties is None:
            return [[int(k)] for k in left.tolist()]
        at = left.tolist()
        players = [waiting[k].player for k in at]
        return [[at[k] for k in t] for t in parties.tickets(players)]

    def _splitter(self, view: View) -> Any:
        """Return the team split of a full match: whole tickets, the best split
        (:func:`~lobbysim.policies.teams.best_split`, each ticket rated by its members' mean
        rating; within the parties' parity limit, if any, of the match's longest wait); teams
        of ranges, uneven or more than two: :func:`~lobbysim.policies.team_shapes
        .spread_split` with the minimums at the match's waits."""
        parties, game = self._parties, self._game
        shape = game.shape
        assert shape is not None

        def split(match: Sequence[Sequence[int]]) -> list[int] | None:
            sizes = [len(t) for t in match]
            ratings = [float(view.rating[list(t)].mean()) for t in match]
            if not shape.fixed:  # teams of ranges, uneven, or more than two
                waits = [float(view.waited[list(t)].max()) for t in match]
                lows = shape.lows_at(min(waits), max(waits))
                return spread_split(sizes, ratings, lows, shape.highs)
            gap = math.inf
            if parties is not None and parties.config.parity is not None:
                longest = max(float(view.waited[list(t)].max()) for t in match)
                steps = parties.config.parity
                gap = [g for w, g in steps if w <= longest][-1]
            return best_split(sizes, ratings, game.seats // 2, gap)

        return split

    # ------------------------------------------------------------------ hosting and tallies
    def open_matrix(self, ids: IdArray, waited: FloatArray) -> Any:
        """Return, per player (rows) and data centre, whether the latency rules would let the
        player play there by the limits of their own wait (the exact group search's data
        centres; a group is then checked under the rules' own clocks)."""
        world = self._world
        assert world is not None
        lat = world.latencies_of(ids)
        ok = np.ones(lat.shape, dtype=bool)
        for k, rule in enumerate(self.rule_set.rules):
            if rule.kind in LATENCY_KINDS and k not in self.rule_set.children:
                x = lat - lat.min(axis=1)[:, None] if rule.kind == "delta_ping" else lat
                ok &= x <= rule.limits_at(np.asarray(waited))[:, None]
        return ok

    def formed(
        self,
        waited: FloatArray,
        tickets: Sequence[Sequence[int]],
        now: float,
        view: View | None = None,
        teams: Sequence[int] | None = None,
    ) -> None:
        """Note a game formed of ``tickets`` now in the telemetry (:meth:`RuleTelemetry.formed
        <lobbysim.sim.rule_telemetry.RuleTelemetry.formed>`)."""
        self.telemetry.formed(waited, tickets, now, view, teams)

    def formed_group(
        self, waited: FloatArray, tickets: Sequence[Sequence[int]], now: float
    ) -> None:
        """:meth:`formed` of the group the exact search last admitted (its view and teams)."""
        self.telemetry.formed(waited, tickets, now, self._pass_view, self._sides)

    def formed_pairs(self, waited: FloatArray, pairs: Sequence[Sequence[int]], now: float) -> None:
        """:meth:`formed` of 1v1 games (pool positions of their two players)."""
        view = (
            self._pair_view
            if self._pair_view is not None and self._pair_view.waited is waited
            else None
        )
        for a, b in pairs:
            self.telemetry.formed(waited, [[a], [b]], now, view)

    def metrics(self) -> dict[str, float]:
        """Return the rules' telemetry (:mod:`lobbysim.sim.rule_telemetry`)."""
        return self.telemetry.metrics()
