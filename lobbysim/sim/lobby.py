"""The SimPy model of a matchmaking lobby: one :class:`LobbySimulation` is one replication.

:class:`LobbySimulation` is a thin façade: it builds the plug-ins of a scenario and the parts of
the model, wires them together, and keeps the Python API of a run (``run``, ``advance``,
``sample_ratings``, ``records``, ...). The parts, each with one job, get their collaborators
explicitly (clock: minutes, on one ``simpy.Environment``):

* :class:`~lobbysim.sim.clock.Clock` and :class:`~lobbysim.sim.fast.events.Doorbell`: exact-time
  events and the tick grid; the matchmaker's coalesced wake-up.
* :class:`~lobbysim.sim.sessions.Lobby`: arrivals, player sessions, the queue; it owns the
  patience deadlines (:class:`~lobbysim.sim.reneging.Reneging`).
* :class:`~lobbysim.sim.matchmaker.Matchmaker`: passes, their wake-ups and ticks (at each, the
  lobby's ``at_tick``), the pool, thresholds and focal players; it builds and owns the pass of
  its mode, :class:`~lobbysim.sim.duel_pass.DuelPass` (1v1: the assignment, its output checked)
  or :class:`~lobbysim.sim.group_pass.GroupPass` (team and free-for-all).
* :class:`~lobbysim.sim.games.Games`: 1v1 games, quits, ends, scores, truth; for team and
  free-for-all it builds and owns :class:`~lobbysim.sim.group_games.GroupGames`, which owns the
  open seats and their back-fill (:class:`~lobbysim.sim.open_seats.OpenSeats`).
* :class:`~lobbysim.sim.recorder.Recorder`: record rows, their buffers and sink, departed
  players, rating samples.

Every part gets its collaborators and callbacks as constructor arguments, and none is changed
after it is built, with one exception: a player base needs the lobby, so it is built after it
and the lobby is then told once to serve it (:meth:`Components.player_base
<lobbysim.sim.components.Components.player_base>`, :meth:`Lobby.serve_base
<lobbysim.sim.sessions.Lobby.serve_base>`).

**Raters.** Finished games are scored and applied to every rater in one batch before each pass
and each ratings sample (:meth:`LobbySimulation.apply_pending`): beliefs are read nowhere else,
so this equals applying them at once. (On every arrival, with the Bayesian driver, a pass gives
the driver the games' outcomes and their scores are drawn later, many at once: the same
records; see :meth:`LobbySimulation._before_pass`.) The matchmaker reads only the driving
rater, through the rater protocol (beliefs, match quality, ``beta2``), never a rater's
parameters.

Randomness comes only from the named streams of :class:`lobbysim.streams.Streams` (arrivals,
population, patience, performance, quits, scores, ties), so changing the policy changes neither
who arrives nor how skilled they are. The model does no file I/O: records are kept as tuples and
either turned into pandas frames by :mod:`lobbysim.experiments.simulation` or, when streamed,
handed in bounded batches to a sink it provides.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import simpy

from lobbysim.players.population import PlayerBatch
from lobbysim.raters import Rater
from lobbysim.raters.base import rater_plugin
from lobbysim.records.rows import DuelBatch, GameResult
from lobbysim.running import interpreter
from lobbysim.scenario import Scenario
from lobbysim.sim.clock import Clock
from lobbysim.sim.components import Components
from lobbysim.sim.entities import Player, Records, RecordSink, Waiting
from lobbysim.sim.fast.events import Doorbell, check_simpy
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.games import Games
from lobbysim.sim.matchmaker import Matchmaker
from lobbysim.sim.parties import Parties
from lobbysim.sim.player_base import PlayerBase
from lobbysim.sim.recorder import Recorder
from lobbysim.sim.sessions import Lobby
from lobbysim.sim.world import World
from lobbysim.streams import Streams

PROGRESS_STEPS = 100  # stops of a run with progress (LobbySimulation.run)
SHADOW_BATCH = 2048  # the shadow raters get their held games once this many are held
HELD_SCORES = 256  # games whose scores wait to be drawn together (LobbySimulation._before_pass)


class LobbySimulation:
    """One replication of a scenario: builds and wires the model (see the module docstring).

    Attributes:
        scenario, streams, env: what is run, its random streams, and its environment.
        driver, shadows: the driving rater and the shadow raters.
        raters: ``(name, rater)`` of the driver then the shadows; every one gets each batch of
            finished games and is sampled (it may be replaced before the run, e.g. to wrap one).
        clock, lobby, matchmaker, games, recorder, world, parties: the parts of the model.
    """

    def __init__(
        self,
        scenario: Scenario,
        streams: Streams,
        sink: RecordSink | None = None,
        *,
        plan: FastPlan | None = None,
        components: Components | None = None,
    ) -> None:
        """Build the model.

        Args:
            scenario: the validated scenario.
            streams: the replication's random streams.
            sink: where streamed records go (required with ``records.stream``); called as
                ``sink(kind, rows)`` with kind in ``Records.KINDS``.
            plan: the kernels allowed (:meth:`FastPlan.off() <FastPlan.off>`: none, the general
                paths everywhere; default: every kernel the plug-ins allow), for tests.
            components: the scenario's plug-ins, built (default: built here).

        Raises:
            PluginError: a plug-in cannot be built, or the policy (or the status quo) needs
                belief variances that the driving rater does not keep; the message names the
                scenario field.
        """
        if scenario.records.stream and sink is None:
            raise ValueError("records.stream needs a sink to write the records to")
        self.scenario = scenario
        self.streams = streams
        self.env = env = simpy.Environment()
        check_simpy(env)
        mm = scenario.matchmaker
        parts = Components.build(scenario) if components is None else components
        #: The kernels this run uses, decided once (:class:`~lobbysim.sim.fast.plan.FastPlan`).
        self.plan = parts.plan(scenario, plan)
        self.driver = parts.driver
        self.shadows = [rater for _, rater in parts.raters[1:]]
        self.raters: list[tuple[str, Rater]] = list(parts.raters)
        # the batches of scored games not yet given to the shadow raters, and how many games
        self._shadow_games: list[Sequence[GameResult]] = []
        self._shadow_count = 0
        population = parts.population
        world, parties = parts.world(scenario, streams), parts.parties(scenario, streams)
        #: Where players are (None: no world); who queues with whom (None: all solo).
        self.world: World | None = world
        self.parties: Parties | None = parties
        self.clock = clock = Clock(env, mm.tick, timed_only=not mm.wake_on_arrival)
        doorbell = Doorbell(env)
        backfill_bell = Doorbell(env)  # rung by a quit that opens a seat
        streamed = sink if scenario.records.stream else None
        # a writer process keeps up best fed in small batches (less left to write at the end)
        flush_rows = min(scenario.records.flush_rows, getattr(streamed, "batch_rows", math.inf))
        records = Records(sink=streamed, flush_rows=int(flush_rows))
        self.recorder = Recorder(records, self.world, self.parties is not None)
        self.lobby = Lobby(
            clock,
            doorbell,
            self.recorder,
            population,
            parts.arrivals,
            [self.driver, *self.shadows],
            streams,
            scenario.horizon,
            mm.wake_on_arrival,
            rater_names=[name for name, _ in self.raters],
            world=self.world,
            parties=self.parties,
        )
        #: The persistent player base, if the scenario has one.
        self.base: PlayerBase | None = parts.player_base(
            scenario, streams, clock, self.lobby, world, parties
        )
        #: Whether a pass gives the driving rater the outcomes of the games finished since the
        #: last and holds their scores back, to be drawn many at once (see :meth:`_before_pass`).
        self._hold_scores = self.plan.held_scores
        self.games = games = Games(
            scenario.game,
            clock,
            backfill_bell,
            self.lobby,
            self.recorder,
            self.driver,
            streams,
            float(population.skill_mean),
            float(population.skill_sd),
            population=population,
            horizon=scenario.horizon,
            driver_name=scenario.raters.driver.name,
            plan=self.plan,
            ring_hold=doorbell if self.plan.ring_hold else None,
            rate_duel=self.driver.rate_duel if self._hold_scores else None,  # type: ignore[attr-defined]
            world=self.world,
            parties=self.parties,
        )
        rematch = parts.rematch_rule(env, mm.rematch_minutes, self.lobby.has_left)
        self.rule_pass = parts.rule_pass(scenario, streams, games, world, parties, rematch)
        self.matchmaker = Matchmaker(
            mm,
            scenario.game,
            clock,
            doorbell,
            self.lobby,
            self.games,
            self.driver,
            parts.policy,
            parts.assignment,
            parts.threshold,
            streams.get("ties"),
            before_pass=self._before_held_pass if self._hold_scores else self._before_pass,
            driver_name=scenario.raters.driver.name,
            plan=self.plan,
            backfill_bell=backfill_bell,
            status_quo=parts.status_quo,
            switch_at=parts.switch_at,
            rematch=rematch,
            engagement=None if self.base is None else self.base.retention,
            settle=self._score_held if self._hold_scores else None,
            world=self.world,
            parties=self.parties,
            rule_pass=self.rule_pass,
            at_tick=self.lobby.reneging.at_tick,
        )

    # ----------------------------------------------------------------------- set-up and run
    def run(
        self,
        until: float | None = None,
        *,
        progress: Callable[[float, float], None] | None = None,
    ) -> None:
        """Start the processes (arrivals, matchmaker, tick, ratings) and run to the horizon.

        With ``progress``, the run stops at :data:`PROGRESS_STEPS` evenly spaced times to call
        ``progress(now, until)``: a stop adds one event that changes no other event's order,
        and the last leg starts past half the run, where ``until - now`` is exact, so the run
        ends at the same time and gives the same records as without it (tested).
        """
        self.start_arrivals()
        self.start_service()
        end = self.scenario.horizon if until is None else until
        with self.tuned():
            if progress is not None:
                start = float(self.env.now)
                for k in range(1, PROGRESS_STEPS):
                    at = start + (end - start) * k / PROGRESS_STEPS
                    if at > self.env.now:
                        self.advance(at)
                        progress(at, end)
            self.advance(end)
            if progress is not None:
                progress(end, end)
            self.apply_pending()

    def advance(self, until: float) -> None:
        """Run the environment to ``until`` under :meth:`tuned`."""
        with self.tuned():
            self.env.run(until=until)

    @staticmethod
    @contextmanager
    def tuned() -> Iterator[None]:
        """Run a block with the interpreter tuned for a run
        (:func:`lobbysim.running.interpreter.tuned`)."""
        with interpreter.tuned():
            yield

    def start_arrivals(self) -> None:
        """Start the arrivals: the player base's members, then the arrival model's guests."""
        if self.base is not None:
            self.base.start()
        self.lobby.start_arrivals()

    def start_service(self) -> None:
        """Start the matchmaker, its tick and the ratings sampler (not the arrivals)."""
        self.matchmaker.start()
        self.env.process(self._sample_ratings())

    def register(self, batch: PlayerBatch) -> None:
        """Tell the raters about players who will arrive next (see :meth:`Lobby.register`)."""
        self.lobby.register(batch)

    def add_players(self, batch: PlayerBatch, *, registered: bool = False) -> list[int]:
        """Add players who arrive now and start their sessions; return their ids.

        Args:
            batch: the players.
            registered: True if :meth:`register` was already called for them.
        """
        return self.lobby.add_players(batch, registered=registered)

    def _sample_ratings(self) -> Generator[simpy.Event, Any, None]:
        every = self.scenario.records.ratings_every
        while True:
            yield self.env.timeout(every)
            self.sample_ratings()

    # -------------------------------------------------------------------------- the work
    def matchmaking_pass(self) -> None:
        """Apply finished games, then pair waiting players and start their games."""
        self.matchmaker.run_pass()

    def apply_pending(self) -> None:
        """Score and record the games finished since the last call; apply them to every rater.

        With streamed records, departed players whose games are all scored are then written
        out and forgotten, and full record buffers go to the sink.
        """
        self._before_pass()
        self._score_held()
        self._update_shadows()

    def _before_pass(self) -> None:
        """The matchmaker's before-pass hook: :meth:`apply_pending` for the driving rater.

        The games go to the driving rater (whose beliefs the pass reads) and the player base
        now; the shadow raters, which no pass reads, get them in batches of at least
        :data:`SHADOW_BATCH` games, and all that are left before each ratings sample and at the
        end of a run (:meth:`apply_pending`). A rater applies a batch as if one game at a time,
        in order (the rater protocol), so the shadows' ratings are the same as when each pass's
        games were applied at once (tests/sim/test_fast_paths.py), at a fraction of the cost when
        passes are many and small (a pass on every arrival rates one game).

        **Held scores** (the plan's ``held_scores``): on every arrival, in a 1v1 lobby whose
        driving rater rates outcomes alone, each game's outcome goes to the driver as the game
        ends (:mod:`lobbysim.sim.fast.duels`), and its scores are drawn and recorded
        (:meth:`_score_held`) once :data:`HELD_SCORES` wait, before a pass that reads more than
        the driver's beliefs and the queue, before each ratings sample and at the end: the same
        draws, records, files and ratings as scoring at every pass
        (tests/sim/test_fast_paths.py); only the records in memory lag during the run.
        """
        if self._hold_scores:
            if self.games.n_held >= HELD_SCORES:
                self._score_held()
            return
        games = self.games.score_finished()
        if games:
            raters = self.raters
            try:
                raters[0][1].update(games)  # the driver (or what replaced it in self.raters)
            except (Exception, SystemExit) as exc:  # a rater's own bug or exit: one line
                raise rater_plugin(0, raters[0][0]).failure("update(games)", exc) from None
            if len(raters) > 1:
                self._shadow_games.append(games)
                self._shadow_count += len(games)
                if self._shadow_count >= SHADOW_BATCH:
                    self._update_shadows()
            if self.base is not None:
                self.base.observe(games)
        if self.recorder.streaming:
            self.lobby.forget(self.recorder.write_departed())
            self.recorder.flush()

    def _before_held_pass(self) -> None:
        """:meth:`_before_pass` with held scores, as the matchmaker's hook (on every arrival, a
        pass per game): score the held games once :data:`HELD_SCORES` wait."""
        if len(self.games.held) >= HELD_SCORES:
            self._score_held()

    def _score_held(self) -> None:
        """Score and record the games whose outcomes alone went to the driving rater
        (:meth:`_before_pass`), and do for them what :meth:`_before_pass` does for scored games:
        the shadow raters' batch, and with streamed records the departed players and the
        buffers."""
        if not self._hold_scores:
            return
        games = self.games.score_held()
        if games is not None and len(self.raters) > 1:
            self._shadow_games.append(games)
            self._shadow_count += len(games)
            if self._shadow_count >= SHADOW_BATCH:
                self._update_shadows()
        if self.recorder.streaming:
            self.lobby.forget(self.recorder.write_departed())
            self.recorder.flush()

    def _update_shadows(self) -> None:
        """Apply the games held back for the shadow raters, in order, as one batch."""
        held, self._shadow_games, self._shadow_count = self._shadow_games, [], 0
        if not held:
            return
        duels = [batch for batch in held if isinstance(batch, DuelBatch)]
        games: Sequence[GameResult] = (
            DuelBatch.concat(duels)
            if len(duels) == len(held)
            else list(itertools.chain.from_iterable(held))
        )
        for k, (name, rater) in enumerate(self.raters[1:], start=1):
            rater_plugin(k, name).call("update(games)", rater.update, games)

    def sample_ratings(self, everyone: bool = False) -> None:
        """Record every rater's rating (and variance) of the players in the lobby now.

        Args:
            everyone: sample every player seen so far instead (done once, at the horizon), not
                only those waiting or playing; periodic samples stay as large as the lobby, not
                as the number of players ever seen, so long runs stay flat.
        """
        self.apply_pending()
        if everyone:
            ids = np.arange(len(self.lobby.players), dtype=np.int64)
        else:
            ids = self.lobby.present_ids()
        self.recorder.sample_ratings(self.raters, ids, self.env.now)

    def states(self) -> dict[str, int]:
        """Return how many players are in each state (waiting, playing, abandoned, gone)."""
        return self.lobby.states()

    # ------------------------------------------------------------- the parts' state, read
    @property
    def players(self) -> list[Player | None]:
        """Every player so far by id (None once written out and forgotten, when streaming)."""
        return self.lobby.players

    @property
    def pool(self) -> dict[int, Waiting]:
        """The queue: players waiting for a game, by id."""
        return self.lobby.pool

    @property
    def present(self) -> dict[int, None]:
        """Players waiting or playing, in arrival order."""
        return self.lobby.present

    @property
    def records(self) -> Records:
        """The record rows collected so far (not yet handed to the sink, when streaming)."""
        return self.recorder.records

    @property
    def n_games(self) -> int:
        """Games started so far."""
        return self.games.n_games

    @property
    def n_passes(self) -> int:
        """Matchmaking passes run so far (passes with too few players waiting not counted)."""
        return self.matchmaker.n_passes

    @property
    def focal(self) -> frozenset[int] | None:
        """The focal players (None: everybody chooses)."""
        return self.matchmaker.focal

    @property
    def draw_quit(self) -> Callable[[], float]:
        """Source of standard exponentials for quit times; replace it to script a trace."""
        return self.games.draws.quit

    @draw_quit.setter
    def draw_quit(self, draw: Callable[[], float]) -> None:
        self.games.draws.quit = draw

    @property
    def draw_patience(self) -> Callable[[], float]:
        """Source of one patience (minutes) per queueing spell; replace it to script a trace."""
        return self.lobby.draw_patience

    @draw_patience.setter
    def draw_patience(self, draw: Callable[[], float]) -> None:
        self.lobby.draw_patience = draw
