"""The matchmaker's pass for team and free-for-all games: back-fill, then new groups.

:class:`GroupPass` serves games of more than two players; the
:class:`~lobbysim.sim.matchmaker.Matchmaker` of such a run builds one and calls
:meth:`GroupPass.run` at each pass. Open seats of running games are back-filled first (by the
driving rater's means), then groups of players adjacent in rating are formed
(:func:`~lobbysim.policies.groups.form_groups`; at random for uniform pairing) and started, both
through the run's :class:`~lobbysim.sim.group_games.GroupGames`. A team game's group is admitted
on the policy's score of the split it will play, and it plays the best split
(:mod:`lobbysim.policies.teams`; a random one for uniform pairing); its recorded quality is
TrueSkill's two-team quality of that split from the pass's beliefs. With a world's latency
limits, groups are formed data centre by data centre, so that every group has a data centre
within all its members' limits (docs/model.md, section 8). Under a rule set a group starts only
if it keeps every rule (:meth:`~lobbysim.sim.rule_pass.RulePass.admitted`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from functools import cache

import numpy as np
import simpy

from lobbysim.policies.assignment import Pool, QualityFn
from lobbysim.policies.base import IntArray
from lobbysim.policies.groups import form_groups, group_qualities
from lobbysim.policies.teams import (
    TeamScoring,
    best_split,
    random_split,
    seat_teams,
    split_quality,
)
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.scenario import GameRules
from lobbysim.sim.entities import FloatArray, IdArray, Waiting
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.fast.tickets import PassTickets
from lobbysim.sim.group_games import GroupGames
from lobbysim.sim.pairing import InForce, check_quality
from lobbysim.sim.parties import Parties, party_skill
from lobbysim.sim.rematch import RematchRule
from lobbysim.sim.rule_pass import RulePass
from lobbysim.sim.world import World


def _by_class(
    former: Callable[[IntArray], list[tuple[IntArray, list[int] | None]]], classes: IntArray
) -> Callable[[IntArray], list[tuple[IntArray, list[int] | None]]]:
    """Return ``former`` run class by class (``classes``: each candidate's, by index into the
    pass's free players): no group mixes classes."""

    def by_class(cand: IntArray) -> list[tuple[IntArray, list[int] | None]]:
        out: list[tuple[IntArray, list[int] | None]] = []
        of = classes[cand]
        for c in np.unique(of).tolist():
            out += former(cand[of == c])
        return out

    return by_class


class GroupPass:
    """The matchmaker's pass for team and free-for-all games (see the module docstring): back-fill
    open seats, then form new games of players adjacent in rating.

    The :class:`~lobbysim.sim.matchmaker.Matchmaker` of a run of such games builds one and calls
    :meth:`run` with each pass's pool and policy; it holds no state between passes.

    Args:
        rules: the game's rules (its mode and seats).
        games: the group games the pass back-fills and starts
            (:class:`~lobbysim.sim.group_games.GroupGames`).
        threshold: the quality threshold by time waited.
        tie_generator: returns the tie-break generator as the matchmaker's draws have left it
            (uniform pairing, random picks).
        driver_name: the driving rater's name (a match quality outside [0, 1] names it).
        env: the run's environment (the time now).
        plan: the run's kernels (the plan's ``group_tickets``).
        rematch, world, parties, rule_pass: the rematch rule, where players are, who queues
            with whom, the scenario's rule set (each None: none).
    """

    def __init__(
        self,
        rules: GameRules,
        games: GroupGames,
        threshold: ThresholdSchedule,
        tie_generator: Callable[[], np.random.Generator],
        driver_name: str,
        env: simpy.Environment,
        plan: FastPlan,
        *,
        rematch: RematchRule | None = None,
        world: World | None = None,
        parties: Parties | None = None,
        rule_pass: RulePass | None = None,
    ) -> None:
        self._rules = rules
        self._games = games
        self._threshold = threshold
        self._tie_generator = tie_generator
        self._driver_name = driver_name
        self.env = env
        self.plan = plan
        self._rematch = rematch
        self._world = world
        self._parties = parties
        self._rule_pass = rule_pass

    def run(
        self,
        waiting: list[Waiting],
        ids: IdArray,
        pool: Pool,
        quality: QualityFn,
        policy: InForce,
    ) -> None:
        """Back-fill open seats of running games, then form new games from the rest."""
        games, rematch = self._games, self._rematch
        free = np.ones(len(waiting), dtype=bool)
        if games.open_seats.any:  # pool.mu: the oracle's true skills, else the rater's means
            rng = self._tie_generator() if policy.uniform else None
            games.open_seats.backfill(waiting, pool.mu, free, truth=policy.truth, rng=rng)
            if rematch is not None:
                rematch.played([waiting[i] for i in np.flatnonzero(~free).tolist()])
        size = self._rules.seats
        left = np.flatnonzero(free)
        if left.size < size:
            return
        masked = pool.quality_fn

        def sub_quality(i: IntArray, j: IntArray) -> FloatArray:
            return quality(left[i], left[j])

        team = self._rules.mode == "team"
        half = size // 2
        scoring = None  # how a two-team game is scored (not for uniform pairing)
        if team and not policy.uniform:
            scoring = policy.team_scoring(pool.var[left], pool.beta2)
        mu_left = pool.mu[left]
        world, now = self._world, self.env.now
        rule_pass = self._rule_pass  # latency rules: groups form data centre by data centre too
        limited = world is not None and (world.limits or bool(rule_pass and rule_pass.latency))
        tickets = None  # with the plan's group_tickets: formed once, read per data centre
        parties = self._parties
        if parties is not None and limited and self.plan.group_tickets:
            tickets = PassTickets([waiting[i].player for i in left.tolist()], parties.members)
        skills: dict[int, float] = {}  # each ticket's rating for matching, as it is needed

        def former(cand: IntArray) -> list[tuple[IntArray, list[int] | None]]:
            """Groups among the free players ``cand`` (indices into ``left``), with teams."""
            if parties is not None:
                return self._ticket_groups(
                    cand, left, waiting, pool, masked, policy, tickets, skills, scoring
                )
            solo = [1] * size
            if policy.uniform:
                rng = self._tie_generator()
                order = rng.permutation(cand.size)
                found = list(order[: cand.size - cand.size % size].reshape(-1, size))
                if team:  # no matchmaking: the teams at random too
                    return [(cand[g], random_split(solo, half, rng)) for g in found]
                return [(cand[g], None) for g in found]

            def sub(i: IntArray, j: IntArray) -> FloatArray:
                return masked(left[cand[i]], left[cand[j]])

            sub_scoring = None
            if scoring is not None:
                sub_scoring = TeamScoring(scoring.var[cand], scoring.beta2, scoring.score)
            found = form_groups(
                mu_left[cand], pool.waited[left][cand], size, sub, self._threshold, sub_scoring
            )
            if not team:
                return [(cand[g], None) for g in found]
            return [(cand[g], best_split(solo, mu_left[cand[g]].tolist(), half)) for g in found]

        classes = None  # equal rules: groups form class by class (solo players only)
        if rule_pass is not None and parties is None and not policy.uniform:
            classes = rule_pass.classes(waiting, ids, pool)
        form = former if classes is None else _by_class(former, classes[left])
        everyone = np.arange(left.size)
        if world is not None and limited:
            formed = self._groups_by_data_centre(world, left, ids, pool, form)
        else:
            formed = form(everyone)
        groups = [g for g, _ in formed]
        if team:  # the two-team quality of the split each plays, from the pass's beliefs
            var_left = pool.var[left]
            qualities = [
                split_quality(mu_left, var_left, g, t or (), pool.beta2) for g, t in formed
            ]
        else:
            qualities = group_qualities(groups, sub_quality)
        tickets_of = None
        for (group, teams), q in zip(formed, qualities, strict=True):
            members = left[group]
            check_quality(self._driver_name, [q])
            seated = [waiting[i] for i in members.tolist()]
            if rule_pass is not None:  # the group starts only if it keeps every rule
                tickets_of = rule_pass.admitted(waiting, ids, pool, members, teams)
                if tickets_of is None:
                    continue
            host = -1
            if world is not None:  # a data centre within every member's limits, or no game
                host = world.host([w.pid for w in seated], [now - w.since for w in seated])
                if host < 0:
                    continue
            games.start_group(seated, pool.mu[members], q, host, teams)
            if rematch is not None:
                rematch.met(seated)
            if rule_pass is not None and tickets_of is not None:
                rule_pass.formed_group(pool.waited, tickets_of, now)

    def _groups_by_data_centre(
        self,
        world: World,
        left: IntArray,
        ids: IdArray,
        pool: Pool,
        former: Callable[[IntArray], list[tuple[IntArray, list[int] | None]]],
    ) -> list[tuple[IntArray, list[int] | None]]:
        """Form groups (indices into ``left``) data centre by data centre under latency limits.

        Groups of players adjacent in rating mix regions, and a run of them rarely has a data
        centre within everybody's limits; so each data centre in turn (the one open to the most
        waiting players first) forms groups (``former``) among the free players it is open to,
        as the pass forms them over the whole pool. Every group then has a data centre within
        all its members' limits.
        """
        size = self._rules.seats
        open_ = world.open_matrix(ids[left], pool.waited[left])
        if self._rule_pass is not None and self._rule_pass.latency:
            open_ &= self._rule_pass.open_matrix(ids[left], pool.waited[left])
        taken = np.zeros(left.size, dtype=bool)
        groups: list[tuple[IntArray, list[int] | None]] = []
        for d in np.argsort(-open_.sum(axis=0), kind="stable").tolist():
            cand = np.flatnonzero(open_[:, d] & ~taken)
            if cand.size < size:
                continue
            for group, teams in former(cand):
                groups.append((group, teams))
                taken[group] = True
        return groups

    def _ticket_groups(
        self,
        cand: IntArray,
        left: IntArray,
        waiting: list[Waiting],
        pool: Pool,
        masked: QualityFn,
        policy: InForce,
        pass_tickets: PassTickets | None = None,
        skills: dict[int, float] | None = None,
        scoring: TeamScoring | None = None,
    ) -> list[tuple[IntArray, list[int] | None]]:
        """Form groups of whole tickets among the free players ``cand`` (indices into ``left``).

        Tickets (:meth:`~lobbysim.sim.parties.Parties.tickets`) are ordered by their combined
        rating (:func:`~lobbysim.sim.parties.party_skill`; shuffled for uniform pairing). From
        each ticket in that order, the next tickets that fit are taken until the game is full;
        in team games its tickets must split into two teams within the parity limit (the best
        split, :func:`~lobbysim.policies.teams.best_split`; a random one for uniform pairing).
        The group starts if no pair of it is barred and its quality clears the threshold of its
        longest wait (not for uniform pairing): in a team game the policy's score of its split
        (``scoring``), else the mean match quality over every pair. Its tickets then leave the
        pool; otherwise the next ticket is tried as the first.

        ``pass_tickets``: the tickets of the whole pass (the plan's ``group_tickets``), whose
        ratings are kept in ``skills`` by ticket (None: the tickets are formed among ``cand``).
        Tickets and groups are held as indices into ``left``.
        """
        parties = self._parties
        assert parties is not None
        size, config = self._rules.seats, parties.config
        mu_left = pool.mu[left]
        ids = None if pass_tickets is None else pass_tickets.among(cand)
        if pass_tickets is None or ids is None:  # the tickets among cand
            players = [waiting[i].player for i in left[cand].tolist()]
            at = cand.tolist()
            tickets = [[at[k] for k in t] for t in parties.tickets(players)]
            skill = [
                party_skill(mu_left[t].tolist(), config.skill, config.premade_bonus)
                for t in tickets
            ]
        else:
            tickets = [pass_tickets.tickets[t] for t in ids]
            assert skills is not None
            missing = [t for t in ids if t not in skills]
            if missing:
                means = mu_left.tolist()
                for t in missing:
                    ticket = pass_tickets.tickets[t]
                    skills[t] = party_skill(
                        [means[k] for k in ticket], config.skill, config.premade_bonus
                    )
            skill = [skills[t] for t in ids]
        waited = pool.waited[left]
        if policy.uniform:
            order = self._tie_generator().permutation(len(tickets)).tolist()
        else:
            order = np.argsort(np.array(skill), kind="stable").tolist()
        remaining = order
        found: list[tuple[IntArray, list[int] | None]] = []
        pairs = _pairs(size)
        start = 0
        while start < len(remaining):
            chosen, total = [], 0
            for t in remaining[start:]:
                if total + len(tickets[t]) <= size:
                    chosen.append(t)
                    total += len(tickets[t])
                    if total == size:
                        break
            if total < size:  # the tickets from here do not fill a game greedily
                start += 1
                continue
            members = np.array([k for t in chosen for k in tickets[t]], dtype=np.intp)
            longest = float(waited[members].max())
            rng = self._tie_generator() if policy.uniform else None
            teams = self._ticket_teams(chosen, tickets, skill, longest, rng)
            fine = teams is not None or self._rules.mode != "team"
            if fine and not policy.uniform:
                i, j = pairs
                pair_q = masked(left[members[i]], left[members[j]])
                if teams is not None and scoring is not None:  # the score of its split
                    rating = [skill[t] for t in chosen for _ in tickets[t]]
                    gap = math.fsum(r if s == 0 else -r for r, s in zip(rating, teams, strict=True))
                    score = scoring.scores(np.array([gap]), members[None, :])[0]
                    value = float(score) if np.isfinite(pair_q).all() else -math.inf
                else:
                    value = float(pair_q.mean())
                fine = value >= self._threshold.at_one(longest)
            if fine:
                found.append((members, teams))
                taken = set(chosen)
                remaining = [t for t in remaining if t not in taken]
            else:
                start += 1
        return found

    def _ticket_teams(
        self,
        chosen: list[int],
        tickets: list[list[int]],
        skill: list[float],
        longest: float,
        rng: np.random.Generator | None = None,
    ) -> list[int] | None:
        """Return each member's team (in the order of ``chosen``'s tickets) for a team game of
        these tickets: the best split, or with ``rng`` a random one (uniform pairing); None if
        no split is within the parity limit (None too outside team games)."""
        if self._rules.mode != "team":
            return None
        parties = self._parties
        assert parties is not None
        parity = parties.config.parity
        gap = math.inf
        if parity is not None:
            waits = [w for w, _ in parity]
            gap = parity[max(bisect.bisect_right(waits, longest) - 1, 0)][1]
        sizes = [len(tickets[t]) for t in chosen]
        half = self._rules.seats // 2
        if rng is not None:
            split = random_split(sizes, half, rng, gap)
        else:
            split = best_split(sizes, [skill[t] for t in chosen], half, gap)
        if split is None:
            return None
        return seat_teams([tickets[t] for t in chosen], split)


@cache
def _pairs(size: int) -> tuple[IntArray, IntArray]:
    """Return ``np.triu_indices(size, k=1)``: every pair of a group's members (read-only)."""
    i, j = np.triu_indices(size, k=1)
    i.flags.writeable = False
    j.flags.writeable = False
    return i, j
