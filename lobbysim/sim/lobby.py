"""The SimPy model of the lobby: arrivals, player sessions, the matchmaker, games and records.

One :class:`LobbySimulation` is one replication on one ``simpy.Environment`` (clock: minutes).

* **Arrivals.** A process asks the arrival model for the arrivals of each window of
  ``ARRIVAL_WINDOW`` minutes, samples those players from the population model in one call and
  starts one session process per player at its arrival time.
* **Sessions.** A player queues, is matched or reneges when its patience runs out (counted as
  abandoned), plays, and queues again until its session's games or minutes are used up.
* **Matchmaker.** A process that waits on one ``wake`` event, triggered by a tick process at
  every ``k * tick`` minutes (tick k at exactly that float, not at a running sum) and, with
  ``wake_on_arrival``, whenever a player queues. Triggering goes through the event queue, so
  everyone who queues at the same instant (both players of a finished game) is in the pool before
  the pass runs. A pass first applies the finished games to the raters, then asks the assignment
  strategy for pairs and starts their games. With timed passes only (no ``wake_on_arrival``), a
  game whose scheduled end is within rounding of a tick's time ends at exactly that time, and the
  tick process ends it just before its wake-up: its players make that tick's pass.
* **1v1 games.** Performances are drawn per game from N(s, beta2); each player may quit at an
  exponential time (hazard ``quit_rate``, times ``quit_behind_multiplier`` for the player with the
  lower performance); the game ends at its scheduled length or at the first quit, and a quitter
  loses; otherwise the higher performance wins, as in the paper. A game is one Timeout event whose
  first callback records the result; both players' processes wait on that same event.
* **Team and free-for-all games.** Groups of players adjacent in rating
  (:mod:`lobbysim.policies.groups`); teams balanced by the driving rater's means. Each stint ends
  at the player's own quit time or at the game's end; a quit opens the seat, and the next pass
  back-fills it from the queue (never with somebody who already played in that game) while enough
  of the game remains, so minutes in the game differ between players.
* **Scores** are Poisson counts over each stint's minutes with a rate rising with performance,
  drawn for all games finished since the last pass in one call; a team game is won by the higher
  total score.
* **Raters.** Finished games are queued and applied to every rater in one batch before each pass
  and each ratings sample: beliefs are read nowhere else, so this equals applying them at once.

Randomness comes only from the named streams of :class:`lobbysim.streams.Streams` (arrivals,
population, patience, performance, quits, scores, ties), so changing the policy changes neither
who arrives nor how skilled they are. This module does no file I/O: records are kept as tuples and
either turned into pandas frames by :mod:`lobbysim.simulation` or, when streamed, handed in bounded
batches to a sink it provides.
"""

from __future__ import annotations

import gc
import heapq
import math
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
import simpy
from numpy.typing import NDArray
from scipy.special import expit

from lobbysim.arrivals import ARRIVALS, ArrivalModel, sample_window
from lobbysim.policies import POLICIES, OpponentPolicy
from lobbysim.policies.assignment import ASSIGNMENTS, Assignment, Pool, ThresholdSchedule
from lobbysim.population import PlayerBatch, Population
from lobbysim.raters import RATERS, Rater
from lobbysim.records import GameResult
from lobbysim.registry import PluginError, declared_parameters
from lobbysim.scenario import PluginSpec, Scenario
from lobbysim.sim.entities import (
    ABANDONED,
    GONE,
    PLAYING,
    WAITING,
    Buffered,
    FinishedGame,
    FloatArray,
    GroupGame,
    Player,
    Records,
    RecordSink,
    Waiting,
)
from lobbysim.sim.games import GameMechanics
from lobbysim.skill.gaussian import match_quality
from lobbysim.streams import Streams

ARRIVAL_WINDOW = 60.0  # minutes of arrivals sampled at a time
TICK_SNAP = 1e-9  # a game's end this close to a tick's time (relative) is that time
GC_THRESHOLDS = (1_000_000, 50, 1000)  # see LobbySimulation.tuned_gc


def build_plugin(
    registry: Any,
    spec: PluginSpec,
    field_name: str,
    defaults: Mapping[str, Any] | None = None,
) -> Any:
    """Instantiate a plug-in, naming the scenario field in any error.

    Args:
        registry: the plug-in family's registry.
        spec: the plug-in's name and parameters.
        field_name: the scenario field, for messages.
        defaults: values for parameters that ``spec`` does not set, each given only to a class
            that declares that parameter (the lobby gives its raters the game's ``beta2``).
    """
    try:
        params = dict(spec.params)
        if defaults:
            declared = declared_parameters(registry.get(spec.name))
            params = {**{k: v for k, v in defaults.items() if k in declared}, **params}
        return registry.create(spec.name, params)
    except PluginError as exc:
        raise PluginError(f"{field_name}: {exc}") from None


class LobbySimulation(GameMechanics):
    """One replication of a scenario (see the module docstring)."""

    def __init__(
        self, scenario: Scenario, streams: Streams, sink: RecordSink | None = None
    ) -> None:
        """Build the model.

        Args:
            scenario: the validated scenario.
            streams: the replication's random streams.
            sink: where streamed records go (required with ``records.stream``); called as
                ``sink(kind, rows)`` with kind in ``Records.KINDS``.
        """
        if scenario.records.stream and sink is None:
            raise ValueError("records.stream needs a sink to write the records to")
        self.scenario = scenario
        self.streams = streams
        self.env = simpy.Environment()
        self.population = Population.from_params(scenario.population)
        self.arrival_model: ArrivalModel = build_plugin(ARRIVALS, scenario.arrivals, "arrivals")
        mm = scenario.matchmaker
        self.policy: OpponentPolicy = build_plugin(POLICIES, mm.policy, "matchmaker.policy")
        self.assignment: Assignment = build_plugin(
            ASSIGNMENTS, mm.assignment, "matchmaker.assignment"
        )
        self.threshold = ThresholdSchedule(mm.threshold)
        # A rater that declares beta2 assumes the game's true one unless its spec sets its own
        # (a deliberate model mismatch).
        rater_defaults = {"beta2": scenario.game.beta2}
        self.driver: Rater = build_plugin(
            RATERS, scenario.raters.driver, "raters.driver", rater_defaults
        )
        self.shadows: list[Rater] = [
            build_plugin(RATERS, spec, f"raters.shadows[{i}]", rater_defaults)
            for i, spec in enumerate(scenario.raters.shadows)
        ]
        if self.policy.needs_variance and not self.driver.has_variance:
            raise PluginError(
                f"matchmaker.policy: '{mm.policy.name}' needs belief variances, but the driving "
                f"rater '{scenario.raters.driver.name}' has none"
            )
        self.raters: list[tuple[str, Rater]] = [(scenario.raters.driver.name, self.driver)]
        self.raters += [
            (spec.name, r) for spec, r in zip(scenario.raters.shadows, self.shadows, strict=True)
        ]
        self.beta2_model = float(getattr(self.driver, "beta2", scenario.game.beta2))
        self.focal = None if mm.focal_players is None else frozenset(mm.focal_players)
        self._focal_rank = mm.focal_rank  # resolved to ``focal`` at the first pass

        self.players: list[Player] = []
        self.pool: dict[int, Waiting] = {}
        self.pending: list[GameResult] = []  # scored games not yet given to the raters
        self._finished: list[FinishedGame] = []  # finished games not yet scored
        self.records = Records(
            sink=sink if scenario.records.stream else None, flush_rows=scenario.records.flush_rows
        )
        self._departed: list[int] = []  # streaming: players to write out and forget
        # streaming: departed players whose last game is not scored yet (with the order in which
        # they were found), and those of them whose games have been scored since
        self._awaiting_scores: dict[int, int] = {}
        self._awaiting_seq = 0
        self._scored_awaiting: list[int] = []
        self.present: dict[int, None] = {}  # players waiting or playing, in arrival order
        self._state_counts = {ABANDONED: 0, GONE: 0}  # of players already forgotten
        self.n_games = 0
        self.n_passes = 0
        self._registered = 0  # players the raters know about (>= len(self.players))
        self._deadlines: list[tuple[float, int, int]] = []  # (renege time, player, spell)
        self._open_games: dict[int, GroupGame] = {}  # running group games with open seats
        self._next_renege_check = math.inf
        self._wake = self.env.event()
        # timed passes only: events the ticker fires at tick k, just before waking the matchmaker
        self._tick_events: dict[int, list[simpy.Event]] = {}

        beta = math.sqrt(scenario.game.beta2)
        perf = Buffered(streams.get("performance").standard_normal)
        self._perf = lambda skill: skill + beta * perf.take()
        #: Source of standard exponentials for quit times (quit after draw / hazard minutes);
        #: replace it to script a trace.
        self.draw_quit: Callable[[], float] = Buffered(
            streams.get("quits").standard_exponential
        ).take
        patience_rng = streams.get("patience")
        #: Source of one patience (minutes) per queueing spell; replace it to script a trace.
        self.draw_patience: Callable[[], float] = Buffered(
            lambda n: self.population.sample_patience(patience_rng, n)
        ).take
        self._score_rng = streams.get("scores")
        self._tie_rng = streams.get("ties")
        # eq. (14): the true draw density is exp(-(s_a - s_b)^2 / (4 beta2)) / sqrt(4 pi beta2)
        self._draw_norm = 1.0 / math.sqrt(4.0 * math.pi * scenario.game.beta2)

    # ----------------------------------------------------------------------- set-up and run
    def run(self, until: float | None = None) -> None:
        """Start the processes (arrivals, matchmaker, tick, ratings) and run to the horizon."""
        self.start_arrivals()
        self.start_service()
        with self.tuned_gc():
            self.advance(self.scenario.horizon if until is None else until)
            self.apply_pending()

    def advance(self, until: float) -> None:
        """Run the environment to ``until`` under :meth:`tuned_gc`."""
        with self.tuned_gc():
            self.env.run(until=until)

    @staticmethod
    @contextmanager
    def tuned_gc() -> Iterator[None]:
        """Run a block with the garbage collector's thresholds tuned for large lobbies.

        Python's cyclic collector scans the young objects every ``threshold0`` net allocations
        (allocations minus deallocations) and, every few of those, older ones; with 10^5
        players alive one scan takes a large part of a second. At the default (700) that
        dominated the run (349 us per game against 112 us at 100,000 players). The model makes
        no cyclic garbage (``gc.collect()`` finds none after an hour of a 1v1 or a free-for-all
        lobby): its objects are freed by reference counting, and what mostly moves the count
        are the buffered record rows (up to a few times ``records.flush_rows``). At 100,000
        net allocations a scan still ran at nearly every flush; at 1,000,000 they are rare
        (1v1 at 100,000 players, 30 simulated minutes: 104 -> 93 us of CPU per game), and
        :meth:`run` writes the final records inside the block too. The previous thresholds are
        restored afterwards (blocks may nest).
        """
        previous = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLDS)
        try:
            yield
        finally:
            gc.set_threshold(*previous)

    def start_arrivals(self) -> None:
        """Start the arrival process (players from the scenario's arrival model)."""
        self.env.process(self._arrivals())

    def start_service(self) -> None:
        """Start the matchmaker, its tick and the ratings sampler (not the arrivals)."""
        self.env.process(self._matchmaker())
        self.env.process(self._ticker())
        self.env.process(self._sample_ratings())

    def register(self, batch: PlayerBatch) -> None:
        """Tell the raters about players who will arrive next (ids in arrival order).

        The arrival process registers a whole window's players in one call, which is much cheaper
        than one call per arrival; a rater is only ever asked about players who have arrived.
        """
        first = self._registered
        ids = np.arange(first, first + len(batch), dtype=np.int64)
        for r in (self.driver, *self.shadows):
            r.add_players(ids, batch.mu0, batch.var0)
        self._registered += len(batch)

    def add_players(self, batch: PlayerBatch, *, registered: bool = False) -> list[int]:
        """Add players who arrive now and start their sessions; return their ids.

        Args:
            batch: the players.
            registered: True if :meth:`register` was already called for them.
        """
        n = len(batch)
        first = len(self.players)
        if not registered:
            if first != self._registered:
                raise RuntimeError("players registered ahead must arrive before others are added")
            self.register(batch)
        now = self.env.now
        for k in range(n):
            player = Player(
                pid=first + k,
                skill=float(batch.skill[k]),
                mu0=float(batch.mu0[k]),
                var0=float(batch.var0[k]),
                registered=bool(batch.registered[k]),
                games_left=int(batch.session_games[k]),
                leave_at=now + float(batch.session_minutes[k]),
            )
            self.players.append(player)
            self.present[player.pid] = None
            self.env.process(self._session(player))
        return list(range(first, first + n))

    # ---------------------------------------------------------------------------- processes
    def _arrivals(self) -> Generator[simpy.Event, Any, None]:
        env, horizon = self.env, self.scenario.horizon
        arrival_rng = self.streams.get("arrivals")
        population_rng = self.streams.get("population")
        start = 0.0
        while start < horizon:
            end = min(start + ARRIVAL_WINDOW, horizon)
            arrivals = sample_window(self.arrival_model, arrival_rng, start, end)
            batch = self.population.sample(population_rng, arrivals.n_players)
            self.register(batch)
            offset = 0
            for t, size in zip(arrivals.times.tolist(), arrivals.sizes.tolist(), strict=True):
                if t > env.now:
                    yield env.timeout(t - env.now)
                self.add_players(_slice(batch, offset, offset + size), registered=True)
                offset += size
            if end > env.now:
                yield env.timeout(end - env.now)
            start = end

    def _session(self, player: Player) -> Generator[simpy.Event, Any, None]:
        env = self.env
        while True:
            player.spell += 1
            player.state = WAITING
            since = env.now
            event = env.event()
            self.pool[player.pid] = Waiting(player.pid, since, event, player.spell)
            patience = min(self.draw_patience(), player.leave_at - since)
            if math.isfinite(patience):
                self._add_deadline(since + max(patience, 0.0), player.pid, player.spell)
            if self.scenario.matchmaker.wake_on_arrival:
                self.wake()
            game = yield event
            if game is None:  # reneged: patience (or the session's time) ran out unmatched
                self.records.waits.append(
                    (player.pid, since, env.now, "abandoned", env.now - since)
                )
                player.state = ABANDONED
                self._depart(player)
                return
            self.records.waits.append((player.pid, since, env.now, "matched", env.now - since))
            player.state = PLAYING
            yield game
            player.games_left -= 1
            if player.games_left <= 0 or env.now >= player.leave_at:
                player.state = GONE
                self._depart(player)
                return

    def _depart(self, player: Player) -> None:
        """Note a player who has left; with streaming, they are written out and forgotten at
        the next :meth:`apply_pending` (after their last game is scored)."""
        del self.present[player.pid]
        if self.records.sink is not None:
            self._departed.append(player.pid)

    def _forget_departed(self) -> None:
        """Write out and drop departed players, except those in a game not yet scored (a
        quitter may have left while the game goes on).

        Rows come in the order of the list ``[still waiting for scores, in the order found] +
        [departed since the last call]``, filtered to the players with every game scored; the
        players still waiting are not rescanned: :meth:`_record` reports those it finishes
        scoring (``_scored_awaiting``), and their order is restored from when they were found.
        """
        awaiting = self._awaiting_scores
        players = self.players
        if self._scored_awaiting:
            ready, self._scored_awaiting = self._scored_awaiting, []
            ready.sort(key=awaiting.__getitem__)
            for pid in ready:
                del awaiting[pid]
                self._write_departed(pid)
        for pid in self._departed:
            if players[pid].unscored:
                awaiting[pid] = self._awaiting_seq
                self._awaiting_seq += 1
            else:
                self._write_departed(pid)
        self._departed = []

    def _write_departed(self, pid: int) -> None:
        """Append a departed player's row and forget the player."""
        p = self.players[pid]
        self.records.players.append(player_row(p))
        self._state_counts[p.state] += 1
        self.players[pid] = None  # type: ignore[call-overload]

    def _add_deadline(self, deadline: float, pid: int, spell: int) -> None:
        """Make player ``pid`` renege at ``deadline`` if still in queueing spell ``spell``."""
        heapq.heappush(self._deadlines, (deadline, pid, spell))
        if deadline < self._next_renege_check:
            self._next_renege_check = deadline
            self._renege_check_at(deadline)

    def _renege_check_at(self, deadline: float) -> None:
        """Call :meth:`_renege_due` at ``deadline`` (see :meth:`timeout_at`).

        Firing even one float before it would find nobody due and leave no wake-up.
        """
        self.timeout_at(deadline).callbacks.append(self._renege_due)

    def timeout_at(self, t: float) -> simpy.Timeout:
        """Return a timeout that fires at time ``t`` (>= now), or just after if it cannot.

        SimPy fires at ``now + delay``, and ``now + (t - now)`` can round to either side of
        ``t`` while now < t / 2 (from now >= t / 2 on, t - now is exact: Sterbenz). The delay
        is stepped up until ``now + delay >= t``: the timeout fires at ``t`` whenever a delay
        reaches it (always from now >= t / 2, and when ``t`` was computed as ``now + d``), and
        otherwise at the first float time after ``t`` that ``now + delay`` can take.
        """
        now = self.env.now
        delay = t - now
        while now + delay < t:
            delay = math.nextafter(delay, math.inf)
        return self.env.timeout(delay)

    def snap_to_tick(self, end: float) -> float:
        """Return a game's scheduled end, on the tick grid if it is within rounding of it.

        With timed passes only (``wake_on_arrival: false``) a game that lasts a whole number
        of ticks ends at the time of a tick, ``k * tick`` as the ticker computes it, rather
        than at ``start + length``, which rounds differently: its players then queue again in
        time for that tick's pass. (With ``wake_on_arrival``, queueing wakes the matchmaker
        anyway.)
        """
        mm = self.scenario.matchmaker
        if mm.wake_on_arrival:
            return end
        on_grid = round(end / mm.tick) * mm.tick
        return on_grid if abs(on_grid - end) <= TICK_SNAP * on_grid else end

    def event_at(self, t: float) -> simpy.Event:
        """Return an event that fires at time ``t`` (> now), e.g. a game's end.

        With timed passes only, at the time of a future tick the ticker fires the event itself,
        just before that tick's pass, so whoever it releases is in the pool for the pass. A
        timeout could not promise that: from now < t / 2, ``now + delay`` can miss ``t`` (see
        :meth:`timeout_at`). Elsewhere the event is a timeout at ``t``.
        """
        mm = self.scenario.matchmaker
        if not mm.wake_on_arrival and t > self.env.now:
            k = round(t / mm.tick)
            if k * mm.tick == t:
                event = self.env.event()
                self._tick_events.setdefault(k, []).append(event)
                return event
        return self.timeout_at(t)

    def _renege_due(self, _event: simpy.Event) -> None:
        """Remove every player whose patience has run out; wake again at the next deadline.

        One heap of (deadline, player, spell) replaces a timeout per queueing spell: entries of
        players matched meanwhile are skipped when they come up, and only one wake-up is pending
        for the earliest deadline at a time (plus, rarely, an earlier one pushed meanwhile).
        """
        now = self.env.now
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            _, pid, spell = heapq.heappop(heap)
            waiting = self.pool.get(pid)
            if waiting is not None and waiting.spell == spell:
                del self.pool[pid]
                waiting.event.succeed(None)
        if heap:
            if heap[0][0] != self._next_renege_check or self._next_renege_check <= now:
                self._next_renege_check = heap[0][0]
                self._renege_check_at(heap[0][0])
        else:
            self._next_renege_check = math.inf

    def wake(self) -> None:
        """Ask the matchmaker for a pass (coalesced with any already asked for)."""
        if not self._wake.triggered:
            self._wake.succeed()

    def _ticker(self) -> Generator[simpy.Event, Any, None]:
        """Wake the matchmaker at tick k = 1, 2, ... at exactly the float time ``k * tick``.

        The events due at the tick (:meth:`event_at`) are fired first: they are processed
        before the wake-up, which is triggered after them through the same event queue.
        """
        tick = self.scenario.matchmaker.tick
        k = 0
        while True:
            k += 1
            yield self.timeout_at(k * tick)
            for event in self._tick_events.pop(k, ()):
                event.succeed()
            self.wake()

    def _matchmaker(self) -> Generator[simpy.Event, Any, None]:
        while True:
            yield self._wake
            self._wake = self.env.event()
            self.matchmaking_pass()

    def _sample_ratings(self) -> Generator[simpy.Event, Any, None]:
        every = self.scenario.records.ratings_every
        while True:
            yield self.env.timeout(every)
            self.sample_ratings()

    # -------------------------------------------------------------------------- the work
    def apply_pending(self) -> None:
        """Score and record the games finished since the last call; apply them to every rater."""
        self._score_finished()
        if self.pending:
            games, self.pending = self.pending, []
            for _, rater in self.raters:
                rater.update(games)
        if self.records.sink is not None:
            self._forget_departed()
            self.records.flush()

    def sample_ratings(self, everyone: bool = False) -> None:
        """Record every rater's rating (and variance) of the players in the lobby now.

        Args:
            everyone: sample every player seen so far instead (done once, at the horizon), not
                only those waiting or playing; periodic samples stay as large as the lobby, not
                as the number of players ever seen, so long runs stay flat.
        """
        self.apply_pending()
        if everyone:
            ids = np.arange(len(self.players), dtype=np.int64)
        else:
            ids = np.fromiter(self.present, dtype=np.int64, count=len(self.present))
        if ids.size == 0:
            return
        now = self.env.now
        for name, rater in self.raters:
            means = rater.means(ids).tolist()
            variances = rater.variances(ids)
            var_list = [math.nan] * len(means) if variances is None else variances.tolist()
            self.records.ratings.extend(
                zip(
                    [now] * len(means),
                    [name] * len(means),
                    ids.tolist(),
                    means,
                    var_list,
                    strict=True,
                )
            )

    def _player_of_rank(self, rank: int) -> int:
        """Return the present player whose driving-rater mean has this rank (1 = highest)."""
        ids = np.fromiter(self.present, dtype=np.int64, count=len(self.present))
        if not 1 <= abs(rank) <= ids.size:
            raise PluginError(
                f"matchmaker.focal_rank: {rank} is out of range: {ids.size} players were present "
                "at the first matchmaking pass"
            )
        order = ids[np.argsort(-self.driver.means(ids), kind="stable")]
        return int(order[rank - 1] if rank > 0 else order[rank])

    def matchmaking_pass(self) -> None:
        """Apply finished games, then pair waiting players and start their games."""
        self.apply_pending()
        # two players make a game; one is enough to fill an open seat of a running game
        if len(self.pool) < (1 if self._open_games else 2):
            return
        self.n_passes += 1
        if self._focal_rank is not None:
            self.focal = frozenset([self._player_of_rank(self._focal_rank)])
            self._focal_rank = None
        waiting = list(self.pool.values())
        ids = np.fromiter((w.pid for w in waiting), dtype=np.int64, count=len(waiting))
        mu = self.driver.means(ids)
        variances = self.driver.variances(ids)
        var = np.zeros_like(mu) if variances is None else variances
        now = self.env.now
        waited = now - np.fromiter((w.since for w in waiting), dtype=np.float64, count=len(ids))
        focal = None
        if self.focal is not None:
            focal = np.fromiter((pid in self.focal for pid in ids.tolist()), dtype=bool)
        games_played = np.fromiter(
            (self.players[pid].games for pid in ids.tolist()), dtype=np.int64, count=len(ids)
        )
        pool = Pool(
            mu=mu,
            var=var,
            waited=waited,
            beta2=self.beta2_model,
            quality_fn=self._quality_fn(mu, var),
            focal=focal,
            games_played=games_played,
        )
        if self.scenario.game.mode != "1v1":
            self._group_pass(waiting, pool)
            return
        pairs = self.assignment.pairs(
            pool, self.policy, self.threshold, self._tie_rng, self.n_passes
        )
        if len(pairs) == 0:
            return
        quality = pool.quality_fn(pairs[:, 0], pairs[:, 1])
        for (a, b), q in zip(pairs.tolist(), quality.tolist(), strict=True):
            self._start_1v1(waiting[a], waiting[b], q)

    def _quality_fn(self, mu: FloatArray, var: FloatArray) -> Callable[..., FloatArray]:
        if self.driver.has_variance:
            beta2 = self.beta2_model

            def quality(i: NDArray[np.intp], j: NDArray[np.intp]) -> FloatArray:
                return match_quality(mu[i], var[i], mu[j], var[j], beta2)

            return quality
        t = float(getattr(self.driver, "t", 120.0))

        def elo_quality(i: NDArray[np.intp], j: NDArray[np.intp]) -> FloatArray:
            # 1 for an even match, 0 for a certain one: 1 - |2 P(i beats j) - 1|.
            return 1.0 - np.abs(2.0 * expit((mu[i] - mu[j]) / t) - 1.0)

        return elo_quality

    def states(self) -> dict[str, int]:
        """Return how many players are in each state (waiting, playing, abandoned, gone)."""
        counts = {WAITING: 0, PLAYING: 0, **self._state_counts}
        for p in self.players:
            if p is not None:
                counts[p.state] += 1
        return counts


def player_row(p: Player) -> tuple[Any, ...]:
    """Return a player's row of the players records (``simulation.PLAYER_COLUMNS``)."""
    return (p.pid, p.skill, p.mu0, p.var0, p.registered, p.games, p.wins, p.state)


def _slice(batch: PlayerBatch, start: int, stop: int) -> PlayerBatch:
    return PlayerBatch(
        skill=batch.skill[start:stop],
        mu0=batch.mu0[start:stop],
        var0=batch.var0[start:stop],
        registered=batch.registered[start:stop],
        session_games=batch.session_games[start:stop],
        session_minutes=batch.session_minutes[start:stop],
    )
