"""A persistent player base: members who join, visit again and again, and leave for good.

:class:`PlayerBase` runs the ``base:`` section of a scenario (:class:`lobbysim.scenario.BaseConfig`)
on top of the lobby of :mod:`lobbysim.sim.sessions`. At time 0 it registers ``size`` members:
true skills and the raters' priors from the population model, a visit rate from the visit model
(:mod:`lobbysim.players.visits`) and a lifetime in the base (exponential with rate
``leave_per_day``; no
end with 0). Newcomers join at the visit model's join times and play their first visit at once.

A member's visit is a session of the lobby like a guest's (its games and minutes drawn from the
population model, its patience per queueing spell); when it ends, the member goes offline and
the base draws their next visit from the visit model, from that moment on. A member whose next
visit would come after their lifetime leaves the base instead. Every rater keeps a member's
state from visit to visit: raters are told about a player once, when they join, so a returning
member starts each visit with the belief they ended the last one with.

Pending visits are one heap of ``(time, order, player)`` with a single wake-up for the earliest
(the lobby's reneging uses the same pattern), not a process per member, so an offline member costs
a heap entry. Randomness comes from named streams (``base``: the members and their lifetimes;
``visits``: visit times and join times; ``sessions``: each visit's games and minutes), none of
which the policy draws from: two runs that differ only in the policy are identical until the
policy first matters.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import simpy

from lobbysim.players.population import Population
from lobbysim.players.retention import RetentionModel
from lobbysim.players.visits import MINUTES_PER_DAY, VISITS, VisitModel, check_times
from lobbysim.records.rows import GameResult
from lobbysim.registry import PluginRef
from lobbysim.scenario import BaseConfig
from lobbysim.sim.clock import Clock
from lobbysim.sim.entities import OFFLINE, Buffered, Player
from lobbysim.sim.parties import Parties
from lobbysim.sim.retention import Retention
from lobbysim.sim.sessions import Lobby
from lobbysim.sim.world import World
from lobbysim.streams import Streams

JOIN_WINDOW = MINUTES_PER_DAY  # minutes of newcomer joins sampled at a time


class PlayerBase:
    """The members of a persistent player base and their visits.

    Args:
        config: the scenario's ``base`` section.
        model: the visit model, built from ``config.visits``.
        clock: the run's clock.
        lobby: the lobby the members visit. The builder then hands the lobby this base's
            :meth:`visit_ended` (and its retention's ``waited``): :meth:`Lobby.serve_base
            <lobbysim.sim.sessions.Lobby.serve_base>`.
        population: draws members' skills, priors and each visit's session.
        streams: the run's random streams (``base``, ``visits``, ``sessions``).
        horizon: the end of the run (no joins or visits after it).
        retention: the retention model, if any (built from ``config.retention``).
        metrics_start: when the retention metrics start counting.
    """

    def __init__(
        self,
        config: BaseConfig,
        model: VisitModel,
        clock: Clock,
        lobby: Lobby,
        population: Population,
        streams: Streams,
        horizon: float,
        retention: RetentionModel | None = None,
        metrics_start: float = 0.0,
        world: World | None = None,
        parties: Parties | None = None,
    ) -> None:
        #: The regions' time zones shift each member's visits (None: no world).
        self._world = world
        #: Crews of members who visit together, as parties (None: every member solo).
        self._parties = parties
        self._crews: dict[int, list[Player]] = {}  # a crew's leader's id -> the crew, leader first
        self._leader_of: dict[int, int] = {}  # a follower's id -> its crew's leader's id
        self.config = config
        self.model = model
        self._model_name = config.visits.name
        #: The visit model as errors name it: a verb that raises or calls ``sys.exit`` stops
        #: the run with one line naming it.
        self._plugin = PluginRef("base.visits", VISITS.family, config.visits.name)
        self.env = clock.env
        self._clock = clock
        self._lobby = lobby
        self._population = population
        self._base_rng = streams.get("base")
        self._visit_rng = streams.get("visits")
        session_rng = streams.get("sessions")
        self._sessions: Buffered[tuple[int, float]] = Buffered(
            lambda n: _session_pairs(population, session_rng, n)
        )
        self._horizon = horizon
        self._heap: list[tuple[float, int, int]] = []  # (visit time, order, player id)
        self._order = 0
        self._next_wake = math.inf
        self.members = 0  # members so far (joined at any time)
        self.left = 0  # members who have left the base
        #: The retention model at work (None: members stay until their lifetime ends).
        self.retention: Retention | None = None
        if retention is not None:
            self.retention = Retention(
                self,
                retention,
                config.retention.name if config.retention else "?",
                streams,
                lobby.players,
                metrics_start,
            )

    # ------------------------------------------------------------------ joining
    def start(self) -> None:
        """Register the starting members, schedule their first visits, start the newcomers."""
        self.join(self.config.size, first_visit_now=False)
        if self.config.newcomers_per_day > 0:
            self.env.process(self._newcomers())

    def join(self, n: int, *, first_visit_now: bool) -> list[Player]:
        """Register ``n`` new members now; their first visit is now or drawn from the model."""
        batch = self._population.sample(self._base_rng, n)
        members = self._lobby.join(batch)
        raw_rates = self._plugin.call(f"rates(rng, {n})", self.model.rates, self._base_rng, n)
        rates = check_times(self._model_name, "rates", raw_rates, n, 0.0)
        lifetimes = self._base_rng.standard_exponential(n)
        now = self.env.now
        per_day = self.config.leave_per_day
        for player, rate, life in zip(members, rates.tolist(), lifetimes.tolist(), strict=True):
            player.rate = rate
            player.leaves_base_at = now + life / per_day * MINUTES_PER_DAY if per_day else math.inf
        self.members += n
        if self._parties is not None:
            self._form_crews(members)
        visiting = [p for p in members if p.pid not in self._leader_of]  # followers come along
        if first_visit_now:
            for player in visiting:
                self._start_visit(player)
        else:
            self._schedule(visiting, self._next_visits(visiting))
        return members

    def _form_crews(self, members: Sequence[Player]) -> None:
        """Cut new members, in order, into crews of the parties' sizes: a crew visits together,
        at its leader's (first member's) visits, and queues as a party. With a world, each
        region's new members are cut apart (friends who play together live near each other)."""
        assert self._parties is not None
        groups = [list(members)]
        if self._world is not None:
            regions = self._world.region_of(np.array([p.pid for p in members], dtype=np.intp))
            groups = [
                [m for m, r in zip(members, regions.tolist(), strict=True) if r == region]
                for region in range(len(self._world.offsets))
            ]
        for group in groups:
            k = 0
            for size in self._parties.cut(len(group)):
                crew = group[k : k + size]
                k += size
                if size >= 2:
                    self._crews[crew[0].pid] = crew
                    for follower in crew[1:]:
                        self._leader_of[follower.pid] = crew[0].pid

    def _schedule(self, members: Sequence[Player], times: Sequence[float]) -> None:
        """Schedule each member's next visit, or let them leave if it comes after their lifetime."""
        staying, when = [], []
        for player, t in zip(members, times, strict=True):
            if t >= player.leaves_base_at:
                self.leave(player)
            else:
                staying.append(player)
                when.append(t)
        self._push(staying, when)

    def _newcomers(self) -> Generator[simpy.Event, Any, None]:
        env, horizon = self.env, self._horizon
        start = 0.0
        while start < horizon:
            end = min(start + JOIN_WINDOW, horizon)
            per_day = self.config.newcomers_per_day
            raw = self._plugin.call(
                f"joins(rng, {start:g}, {end:g}, {per_day:g})",
                self.model.joins,
                self._visit_rng,
                start,
                end,
                per_day,
            )
            times = check_times(self._model_name, "joins", raw, -1, start, end)
            for t in times.tolist():
                if t > env.now:
                    yield self._clock.timeout_at(t)
                self.join(1, first_visit_now=True)
            if end > env.now:
                yield self._clock.timeout_at(end)
            start = end

    # ------------------------------------------------------------------ visits
    def _next_visits(self, members: Sequence[Player]) -> list[float]:
        """Return each member's next visit time. With a world, the visit model is asked in each
        region's local time (its time of day is the region's), region by region in order."""
        world = self._world
        if world is None:
            return self._visits_at(members, 0.0)
        times = [0.0] * len(members)
        regions = world.region_of(np.array([p.pid for p in members], dtype=np.intp)).tolist()
        for r, offset in enumerate(world.offsets):
            mine = [k for k, region in enumerate(regions) if region == r]
            if mine:
                local = self._visits_at([members[k] for k in mine], offset)
                for k, t in zip(mine, local, strict=True):
                    times[k] = t
        return times

    def _visits_at(self, members: Sequence[Player], offset: float) -> list[float]:
        """Ask the visit model for members' next visits in a time zone ``offset`` minutes from
        UTC (the model's time of day is local); return them in UTC."""
        rates = np.array([p.rate for p in members], dtype=np.float64)
        now = self.env.now + offset
        try:
            raw = self.model.next_visits(self._visit_rng, now, rates)
        except (Exception, SystemExit) as exc:  # a model's own bug, or its sys.exit: one line
            raise self._plugin.failure(f"next_visits(rng, {now:g}, rates)", exc) from None
        times = check_times(self._model_name, "next_visits", raw, len(members), now)
        if not offset:
            return times.tolist()
        return np.maximum(times - offset, self.env.now).tolist()  # never before now, rounding

    def visit_ended(self, player: Player) -> None:
        """Schedule a member's next visit, or let them leave the base if it comes too late.

        With a retention model the decision waits until every game of the visit is scored
        (:class:`Retention`).
        """
        if self.retention is not None:
            self.retention.visit_ended(player)
            return
        if player.pid in self._leader_of:  # a follower visits at its leader's visits
            return
        self._schedule([player], self._next_visits([player]))

    def observe(self, games: Sequence[GameResult]) -> None:
        """Take note of freshly scored games (for the retention model, if any)."""
        if self.retention is not None:
            self.retention.observe(games)

    def leave(self, player: Player) -> None:
        """Let an offline member leave the base for good now."""
        self.left += 1
        self._lobby.leave_base(player)
        if self.retention is not None:
            self.retention.left(player)
        if self._crews or self._leader_of:
            self._leave_crew(player)

    def _leave_crew(self, player: Player) -> None:
        """Take a member who left the base out of their crew: a leader's next member leads
        from now on (and is scheduled, if offline), and a crew of one is a solo member."""
        leader = self._leader_of.pop(player.pid, player.pid)
        crew = self._crews.pop(leader, None)
        if crew is None:
            return
        rest = [m for m in crew if m is not player]
        for member in rest:
            self._leader_of.pop(member.pid, None)
        if len(rest) >= 2:
            self._crews[rest[0].pid] = rest
            for follower in rest[1:]:
                self._leader_of[follower.pid] = rest[0].pid
        if leader == player.pid and rest and rest[0].state == OFFLINE:  # the new leader
            self._schedule([rest[0]], self._next_visits([rest[0]]))

    def return_later(self, player: Player, delay: float) -> None:
        """Schedule a member's next visit with its gap multiplied by ``delay`` (a follower of a
        crew visits at its leader's visits)."""
        if player.pid in self._leader_of:
            return
        (t,) = self._next_visits([player])
        now = self.env.now
        self._schedule([player], [now + (t - now) * delay])

    def _push(self, members: Sequence[Player], times: Sequence[float]) -> None:
        heap = self._heap
        earliest = math.inf
        for player, t in zip(members, times, strict=True):
            if t >= self._horizon:
                continue  # after the run: the member stays offline
            heapq.heappush(heap, (t, self._order, player.pid))
            self._order += 1
            earliest = min(earliest, t)
        if earliest < self._next_wake:
            self._next_wake = earliest
            self._clock.timeout_at(earliest).callbacks.append(self._due)

    def _due(self, _event: simpy.Event) -> None:
        """Start every visit that is due; wake again at the next one."""
        now = self.env.now
        heap = self._heap
        players = self._lobby.players
        while heap and heap[0][0] <= now:
            _, _, pid = heapq.heappop(heap)
            player = players[pid]
            if player is not None:
                self._start_visit(player)
        if heap:
            if heap[0][0] != self._next_wake or self._next_wake <= now:
                self._next_wake = heap[0][0]
                self._clock.timeout_at(heap[0][0]).callbacks.append(self._due)
        else:
            self._next_wake = math.inf

    def _start_visit(self, player: Player) -> None:
        games, minutes = self._sessions.take()
        if self.retention is not None:
            self.retention.visit_started(player)
        self._lobby.visit(player, int(games), minutes)
        crew = self._crews.get(player.pid)
        if crew is None:
            return
        party = [player]  # the followers offline now come along, with the leader's session
        now = self.env.now
        for follower in crew[1:]:
            if follower.state != OFFLINE:
                continue
            if now >= follower.leaves_base_at:
                self.leave(follower)
                continue
            if self.retention is not None:
                self.retention.visit_started(follower)
            self._lobby.visit(follower, int(games), minutes)
            party.append(follower)
        assert self._parties is not None
        self._parties.form(party)


def _session_pairs(population: Population, rng: np.random.Generator, n: int) -> Any:
    """Return ``n`` (games, minutes) sessions as an object array for :class:`Buffered`."""
    games, minutes = population.sample_sessions(rng, n)
    pairs = np.empty(n, dtype=object)
    pairs[:] = list(zip(games.tolist(), minutes.tolist(), strict=True))
    return pairs
