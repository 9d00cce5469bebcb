"""The matchmaker's pass for team and free-for-all games: back-fill, then new groups.

:class:`GroupPass` is the part of :class:`~lobbysim.sim.matchmaker.Matchmaker` that serves games
of more than two players: open seats of running games are back-filled first (by the driving
rater's means), then groups of players adjacent in rating are formed
(:func:`~lobbysim.policies.groups.form_groups`; at random for uniform pairing) and started. With
a world's latency limits, groups are formed data centre by data centre, so that every group has
a data centre within all its members' limits (docs/model.md, section 8).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import simpy

from lobbysim.policies.assignment import Pool, QualityFn, ThresholdSchedule
from lobbysim.policies.base import IntArray
from lobbysim.policies.groups import form_groups, group_qualities
from lobbysim.raters import Rater
from lobbysim.registry import PluginRef
from lobbysim.scenario import GameRules
from lobbysim.sim.entities import FloatArray, IdArray, Waiting
from lobbysim.sim.pairing import InForce
from lobbysim.sim.world import World


class GroupPass:
    """The group pass of the matchmaker (a part of
    :class:`~lobbysim.sim.matchmaker.Matchmaker`, which sets the attributes below): back-fill
    open seats, then form new games of players adjacent in rating."""

    _games: Any
    rematch: Any
    _rater: PluginRef
    _driver: Rater
    _rules: GameRules
    _threshold: ThresholdSchedule
    _world: World | None
    env: simpy.Environment

    def _tie_generator(self) -> np.random.Generator:
        raise NotImplementedError  # the matchmaker's

    def _check_quality(self, values: list[float]) -> None:
        raise NotImplementedError  # the matchmaker's

    def _group_pass(
        self,
        waiting: list[Waiting],
        ids: IdArray,
        pool: Pool,
        quality: QualityFn,
        policy: InForce,
    ) -> None:
        """Back-fill open seats of running games, then form new games from the rest."""
        games, rematch = self._games, self.rematch
        free = np.ones(len(waiting), dtype=bool)
        if games.has_open_seats:
            mu = (
                self._rater.call("means(ids)", self._driver.means, ids) if policy.truth else pool.mu
            )
            games.backfill(waiting, mu, free)
            if rematch is not None:
                rematch.played([waiting[i] for i in np.flatnonzero(~free).tolist()])
        size = self._rules.seats
        left = np.flatnonzero(free)
        if left.size < size:
            return
        masked = pool.quality_fn

        def sub_quality(i: IntArray, j: IntArray) -> FloatArray:
            return quality(left[i], left[j])

        def sub_masked(i: IntArray, j: IntArray) -> FloatArray:
            return masked(left[i], left[j])

        world, now = self._world, self.env.now
        if world is not None and world.limits:
            groups = self._groups_by_data_centre(world, left, ids, pool, sub_masked, policy)
        elif policy.uniform:
            order = self._tie_generator().permutation(left.size)
            groups = list(order[: left.size - left.size % size].reshape(-1, size))
        else:
            groups = form_groups(
                pool.mu[left], pool.waited[left], size, sub_masked, self._threshold
            )
        for group, q in zip(groups, group_qualities(groups, sub_quality), strict=True):
            members = left[group]
            self._check_quality([q])
            seated = [waiting[i] for i in members.tolist()]
            host = -1
            if world is not None:  # a data centre within every member's limits, or no game
                host = world.host([w.pid for w in seated], [now - w.since for w in seated])
                if host < 0:
                    continue
            games.start_group(seated, pool.mu[members], q, host)
            if rematch is not None:
                rematch.met(seated)

    def _groups_by_data_centre(
        self,
        world: World,
        left: IntArray,
        ids: IdArray,
        pool: Pool,
        masked: QualityFn,
        policy: InForce,
    ) -> list[IntArray]:
        """Form groups (indices into ``left``) data centre by data centre under latency limits.

        Groups of players adjacent in rating mix regions, and a run of them rarely has a data
        centre within everybody's limits; so each data centre in turn (the one open to the most
        waiting players first) forms groups among the free players it is open to, as the pass
        forms them over the whole pool (adjacent in rating under the threshold, or at random for
        uniform pairing). Every group then has a data centre within all its members' limits.
        """
        size = self._rules.seats
        open_ = world.open_matrix(ids[left], pool.waited[left])
        taken = np.zeros(left.size, dtype=bool)
        groups: list[IntArray] = []
        for d in np.argsort(-open_.sum(axis=0), kind="stable").tolist():
            cand = np.flatnonzero(open_[:, d] & ~taken)
            if cand.size < size:
                continue
            if policy.uniform:
                order = self._tie_generator().permutation(cand.size)
                found = list(order[: cand.size - cand.size % size].reshape(-1, size))
            else:

                def sub(i: IntArray, j: IntArray, cand: IntArray = cand) -> FloatArray:
                    return masked(cand[i], cand[j])

                found = form_groups(
                    pool.mu[left][cand], pool.waited[left][cand], size, sub, self._threshold
                )
            for group in found:
                groups.append(cand[group])
                taken[cand[group]] = True
        return groups
