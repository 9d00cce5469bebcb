"""The SimPy model of the lobby: arrivals, player sessions, the matchmaker, games and records.

One :class:`LobbySimulation` is one replication on one ``simpy.Environment`` (clock: minutes).

* **Arrivals.** A process asks the arrival model for the arrivals of each window of
  ``ARRIVAL_WINDOW`` minutes, samples those players from the population model in one call and
  starts one session process per player at its arrival time.
* **Sessions.** A player queues, is matched or reneges when its patience runs out (counted as
  abandoned), plays, and queues again until its session's games or minutes are used up.
* **Matchmaker.** A process that waits on one ``wake`` event, triggered by a tick process every
  ``tick`` minutes and, with ``wake_on_arrival``, whenever a player queues. Triggering goes through
  the event queue, so everyone who queues at the same instant (both players of a finished game)
  is in the pool before the pass runs. A pass first applies the finished games to the raters, then
  asks the assignment strategy for pairs and starts their games.
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
import itertools
import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy
from numpy.typing import NDArray
from scipy.special import expit

from lobbysim.arrivals import ARRIVALS, ArrivalModel, sample_window
from lobbysim.policies import POLICIES, OpponentPolicy
from lobbysim.policies.assignment import ASSIGNMENTS, Assignment, Pool, ThresholdSchedule
from lobbysim.policies.groups import balance_teams, form_groups
from lobbysim.population import PlayerBatch, Population
from lobbysim.raters import RATERS, Rater
from lobbysim.records import GameResult, Seat
from lobbysim.registry import PluginError
from lobbysim.scenario import PluginSpec, Scenario
from lobbysim.skill.gaussian import match_quality
from lobbysim.streams import Streams

ARRIVAL_WINDOW = 60.0  # minutes of arrivals sampled at a time
_BUFFER = 4096  # random numbers drawn per refill of a buffered stream

FloatArray = NDArray[np.float64]

# Player states at the end of a run.
WAITING, PLAYING, ABANDONED, GONE = "waiting", "playing", "abandoned", "gone"


class _Buffered:
    """Draws from one generator in blocks; yields the same sequence as one draw at a time."""

    def __init__(self, draw: Callable[[int], FloatArray]) -> None:
        self._draw = draw
        self._values: list[float] = []
        self._next = 0

    def take(self) -> float:
        if self._next == len(self._values):
            self._values = self._draw(_BUFFER).tolist()
            self._next = 0
        value = self._values[self._next]
        self._next += 1
        return value


@dataclass
class _Player:
    pid: int
    skill: float
    registered: bool
    games_left: int
    leave_at: float
    state: str = WAITING
    games: int = 0
    wins: int = 0
    spell: int = 0  # queueing spell counter, to ignore stale patience timeouts
    unscored: int = 0  # games sat in whose records are not written yet


@dataclass
class _Waiting:
    pid: int
    since: float
    event: simpy.Event
    spell: int


@dataclass(slots=True)
class _Stint:
    """One player's time in one game, before its score is drawn."""

    player: _Player
    team: int | None
    joined: float
    left: float
    performance: float
    quit: bool


@dataclass(slots=True)
class _Finished:
    """A finished game waiting for its scores."""

    game_id: int
    mode: str
    start: float
    end: float
    stints: list[_Stint]
    winner: int | None
    quality: float


@dataclass(slots=True)
class _GroupGame:
    """A running team or free-for-all game."""

    game_id: int
    mode: str
    start: float
    end: float
    quality: float
    end_event: simpy.Event
    stints: list[_Stint] = field(default_factory=list)
    seated: dict[int, _Stint] = field(default_factory=dict)
    # (team, the leaver's rating mean) of each seat left open by a quitter
    open_seats: list[tuple[int | None, float]] = field(default_factory=list)
    been: set[int] = field(default_factory=set)  # everyone who has sat in the game


RecordSink = Callable[[str, list[tuple[Any, ...]]], None]


@dataclass
class Records:
    """Rows collected during a run (tuples, cheap to append on the hot path).

    With a ``sink`` (streaming), :meth:`flush` hands every kind's rows to it once there are
    ``flush_rows`` of them (and all of them with ``force``); the sink writes them somewhere.
    """

    games: list[tuple[Any, ...]] = field(default_factory=list)
    participants: list[tuple[Any, ...]] = field(default_factory=list)
    waits: list[tuple[Any, ...]] = field(default_factory=list)
    ratings: list[tuple[Any, ...]] = field(default_factory=list)
    players: list[tuple[Any, ...]] = field(default_factory=list)  # departed players (streaming)
    sink: RecordSink | None = None
    flush_rows: int = 50_000

    KINDS = ("games", "participants", "waits", "ratings", "players")

    def flush(self, force: bool = False) -> None:
        """Hand full buffers (all non-empty ones with ``force``) to the sink."""
        if self.sink is None:
            return
        for kind in self.KINDS:
            rows: list[tuple[Any, ...]] = getattr(self, kind)
            if rows and (force or len(rows) >= self.flush_rows):
                self.sink(kind, rows)
                setattr(self, kind, [])


def build_plugin(registry: Any, spec: PluginSpec, field_name: str) -> Any:
    """Instantiate a plug-in, naming the scenario field in any error."""
    try:
        return registry.create(spec.name, spec.params)
    except PluginError as exc:
        raise PluginError(f"{field_name}: {exc}") from None


class LobbySimulation:
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
        self.driver: Rater = build_plugin(RATERS, scenario.raters.driver, "raters.driver")
        self.shadows: list[Rater] = [
            build_plugin(RATERS, spec, f"raters.shadows[{i}]")
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

        self.players: list[_Player] = []
        self.pool: dict[int, _Waiting] = {}
        self.pending: list[GameResult] = []  # scored games not yet given to the raters
        self._finished: list[_Finished] = []  # finished games not yet scored
        self.records = Records(
            sink=sink if scenario.records.stream else None, flush_rows=scenario.records.flush_rows
        )
        self._departed: list[int] = []  # streaming: players to write out and forget
        self.present: dict[int, None] = {}  # players waiting or playing, in arrival order
        self._state_counts = {ABANDONED: 0, GONE: 0}  # of players already forgotten
        self.n_games = 0
        self.n_passes = 0
        self._registered = 0  # players the raters know about (>= len(self.players))
        self._deadlines: list[tuple[float, int, int]] = []  # (renege time, player, spell)
        self._open_games: dict[int, _GroupGame] = {}  # running group games with open seats
        self._next_renege_check = math.inf
        self._wake = self.env.event()

        beta = math.sqrt(scenario.game.beta2)
        perf = _Buffered(streams.get("performance").standard_normal)
        self._perf = lambda skill: skill + beta * perf.take()
        #: Source of standard exponentials for quit times (quit after draw / hazard minutes);
        #: replace it to script a trace.
        self.draw_quit: Callable[[], float] = _Buffered(
            streams.get("quits").standard_exponential
        ).take
        patience_rng = streams.get("patience")
        #: Source of one patience (minutes) per queueing spell; replace it to script a trace.
        self.draw_patience: Callable[[], float] = _Buffered(
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
        self.advance(self.scenario.horizon if until is None else until)
        self.apply_pending()

    def advance(self, until: float) -> None:
        """Run the environment to ``until`` with the garbage collector tuned for large lobbies.

        Python's cyclic collector scans every live object in a full collection, and by default it
        runs one every few hundred thousand allocations: with 10^5 players alive that dominated
        the run (349 us per game against 112 us with these thresholds, same memory). Cycles are
        still collected, less often; the previous thresholds are restored afterwards.
        """
        previous = gc.get_threshold()
        gc.set_threshold(100_000, 50, 1000)
        try:
            self.env.run(until=until)
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
            player = _Player(
                pid=first + k,
                skill=float(batch.skill[k]),
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

    def _session(self, player: _Player) -> Generator[simpy.Event, Any, None]:
        env = self.env
        while True:
            player.spell += 1
            player.state = WAITING
            since = env.now
            event = env.event()
            self.pool[player.pid] = _Waiting(player.pid, since, event, player.spell)
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

    def _depart(self, player: _Player) -> None:
        """Note a player who has left; with streaming, they are written out and forgotten at
        the next :meth:`apply_pending` (after their last game is scored)."""
        del self.present[player.pid]
        if self.records.sink is not None:
            self._departed.append(player.pid)

    def _forget_departed(self) -> None:
        """Write out and drop departed players, except those in a game not yet scored (a
        quitter may have left while the game goes on)."""
        waiting_for_scores = []
        for pid in self._departed:
            p = self.players[pid]
            if p.unscored:
                waiting_for_scores.append(pid)
                continue
            self.records.players.append((pid, p.skill, p.registered, p.games, p.wins, p.state))
            self._state_counts[p.state] += 1
            self.players[pid] = None  # type: ignore[call-overload]
        self._departed = waiting_for_scores

    def _add_deadline(self, deadline: float, pid: int, spell: int) -> None:
        """Make player ``pid`` renege at ``deadline`` if still in queueing spell ``spell``."""
        heapq.heappush(self._deadlines, (deadline, pid, spell))
        if deadline < self._next_renege_check:
            self._next_renege_check = deadline
            timeout = self.env.timeout(deadline - self.env.now)
            timeout.callbacks.append(self._renege_due)

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
                timeout = self.env.timeout(heap[0][0] - now)
                timeout.callbacks.append(self._renege_due)
        else:
            self._next_renege_check = math.inf

    def wake(self) -> None:
        """Ask the matchmaker for a pass (coalesced with any already asked for)."""
        if not self._wake.triggered:
            self._wake.succeed()

    def _ticker(self) -> Generator[simpy.Event, Any, None]:
        tick = self.scenario.matchmaker.tick
        while True:
            yield self.env.timeout(tick)
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

    def matchmaking_pass(self) -> None:
        """Apply finished games, then pair waiting players and start their games."""
        self.apply_pending()
        # two players make a game; one is enough to fill an open seat of a running game
        if len(self.pool) < (1 if self._open_games else 2):
            return
        self.n_passes += 1
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

    # ------------------------------------------------------------- team and free-for-all
    def _group_pass(self, waiting: list[_Waiting], pool: Pool) -> None:
        """Back-fill open seats of running games, then form new games from the rest."""
        rules = self.scenario.game
        free = np.ones(len(waiting), dtype=bool)
        if self._open_games:
            self._backfill(waiting, pool.mu, free)
        size = 2 * rules.team_size if rules.mode == "team" else rules.ffa_size
        left = np.flatnonzero(free)
        if left.size < size:
            return
        quality_fn = pool.quality_fn

        def sub_quality(i: NDArray[np.intp], j: NDArray[np.intp]) -> FloatArray:
            return quality_fn(left[i], left[j])

        groups = form_groups(pool.mu[left], pool.waited[left], size, sub_quality, self.threshold)
        for group in groups:
            members = left[group]
            q = float(sub_quality(*_all_pairs(group)).mean())
            self._start_group([waiting[i] for i in members.tolist()], pool.mu[members], q)

    def _backfill(self, waiting: list[_Waiting], mu: FloatArray, free: NDArray[np.bool_]) -> None:
        """Fill open seats, oldest game first, with the free waiting player nearest in mean to
        the one who left (never somebody who has already played in that game)."""
        rules, now = self.scenario.game, self.env.now
        for game_id in list(self._open_games):
            game = self._open_games[game_id]
            if game.end - now < rules.backfill_min_remaining:
                game.open_seats.clear()
            # nobody returns to a game they have left
            eligible = free & np.fromiter(
                (w.pid not in game.been for w in waiting), dtype=bool, count=len(waiting)
            )
            while game.open_seats and eligible.any():
                team, target = game.open_seats.pop(0)
                candidates = np.flatnonzero(eligible)
                pick = int(candidates[np.argmin(np.abs(mu[candidates] - target))])
                eligible[pick] = False
                free[pick] = False
                self._seat(game, waiting[pick], team)
            if not game.open_seats:
                del self._open_games[game_id]

    def _start_group(self, members: list[_Waiting], mu: FloatArray, quality: float) -> None:
        rules, env = self.scenario.game, self.env
        teams: list[int | None]
        if rules.mode == "team":
            teams = [int(t) for t in balance_teams(mu, rules.team_size)]
        else:
            teams = [None] * len(members)
        end_event = env.timeout(rules.length)
        game = _GroupGame(
            self.n_games, rules.mode, env.now, env.now + rules.length, quality, end_event
        )
        self.n_games += 1
        end_event.callbacks.append(self._make_group_finish(game))
        for member, team in zip(members, teams, strict=True):
            self._seat(game, member, team)

    def _seat(self, game: _GroupGame, member: _Waiting, team: int | None) -> None:
        """Put a waiting player into ``game`` now, on ``team``, until the end or a quit."""
        env, rules = self.env, self.scenario.game
        del self.pool[member.pid]
        player = self.players[member.pid]
        player.unscored += 1
        stint = _Stint(player, team, env.now, math.nan, self._perf(player.skill), False)
        game.stints.append(stint)
        game.seated[player.pid] = stint
        game.been.add(player.pid)
        leave: simpy.Event = game.end_event
        if rules.quit_rate > 0:
            behind = self._behind(game, stint)
            rate = rules.quit_rate * (rules.quit_behind_multiplier if behind else 1.0)
            quit_at = env.now + self.draw_quit() / rate
            if quit_at < game.end:
                leave = env.timeout(quit_at - env.now)
                leave.callbacks.append(self._make_quit(game, stint))
        member.event.succeed(leave)

    @staticmethod
    def _behind(game: _GroupGame, stint: _Stint) -> bool:
        """Whether a player is behind when seated.

        Team: their team's mean performance is below the other team's; free-for-all: their
        performance is below the median of the others seated.
        """
        others = [s for s in game.seated.values() if s is not stint]
        if not others:
            return False
        if stint.team is None:
            return stint.performance < float(np.median([s.performance for s in others]))
        mine = [s.performance for s in game.seated.values() if s.team == stint.team]
        theirs = [s.performance for s in others if s.team != stint.team]
        return bool(theirs) and sum(mine) / len(mine) < sum(theirs) / len(theirs)

    def _make_quit(self, game: _GroupGame, stint: _Stint) -> Callable[[simpy.Event], None]:
        def quit_game(_event: simpy.Event) -> None:
            now = self.env.now
            stint.left = now
            stint.quit = True
            del game.seated[stint.player.pid]
            rules = self.scenario.game
            if rules.backfill and game.end - now >= rules.backfill_min_remaining:
                mean = float(self.driver.means(np.array([stint.player.pid]))[0])
                game.open_seats.append((stint.team, mean))
                self._open_games[game.game_id] = game
                self.wake()

        return quit_game

    def _make_group_finish(self, game: _GroupGame) -> Callable[[simpy.Event], None]:
        def finish(_event: simpy.Event) -> None:
            for stint in game.seated.values():
                stint.left = game.end
            game.seated.clear()
            self._open_games.pop(game.game_id, None)
            self._finished.append(
                _Finished(
                    game.game_id, game.mode, game.start, game.end, game.stints, None, game.quality
                )
            )

        return finish

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

    def _start_1v1(self, wa: _Waiting, wb: _Waiting, quality: float) -> None:
        env, rules = self.env, self.scenario.game
        del self.pool[wa.pid]
        del self.pool[wb.pid]
        pa, pb = self.players[wa.pid], self.players[wb.pid]
        pa.unscored += 1
        pb.unscored += 1
        start = env.now
        perf_a, perf_b = self._perf(pa.skill), self._perf(pb.skill)
        end = start + rules.length
        quitter: _Player | None = None
        if rules.quit_rate > 0:
            rate_a = rules.quit_rate * (rules.quit_behind_multiplier if perf_a < perf_b else 1.0)
            rate_b = rules.quit_rate * (rules.quit_behind_multiplier if perf_b < perf_a else 1.0)
            quit_a = start + self.draw_quit() / rate_a
            quit_b = start + self.draw_quit() / rate_b
            if min(quit_a, quit_b) < end:
                quitter = pa if quit_a <= quit_b else pb
                end = min(quit_a, quit_b)
        # A quitter loses; otherwise the higher performance wins (side 0 is a, side 1 is b).
        loser_is_a = quitter is pa if quitter is not None else not perf_a > perf_b
        winner = 1 if loser_is_a else 0
        game_id = self.n_games
        self.n_games += 1
        timeout = env.timeout(end - start)
        done = self._make_finish(
            game_id, start, (pa, pb), (perf_a, perf_b), quitter, winner, quality
        )
        timeout.callbacks.append(done)
        wa.event.succeed(timeout)
        wb.event.succeed(timeout)

    def _make_finish(
        self,
        game_id: int,
        start: float,
        players: tuple[_Player, _Player],
        perfs: tuple[float, float],
        quitter: _Player | None,
        winner: int,
        quality: float,
    ) -> Callable[[simpy.Event], None]:
        def finish(_: simpy.Event) -> None:
            end = self.env.now
            stints = [
                _Stint(p, side, start, end, perfs[side], p is quitter)
                for side, p in enumerate(players)
            ]
            self._finished.append(_Finished(game_id, "1v1", start, end, stints, winner, quality))

        return finish

    def _score_finished(self) -> None:
        """Draw the scores of every game finished since the last call and record the games.

        Scores are Poisson counts over each stint's minutes with rate ``score_rate *
        exp(score_gain * z)``, z the performance in population standard deviations; all of them
        are drawn in one vectorised call, in the order the games finished.
        """
        if not self._finished:
            return
        finished, self._finished = self._finished, []
        rules = self.scenario.game
        z = np.array([st.performance for g in finished for st in g.stints])
        minutes = np.array([st.left - st.joined for g in finished for st in g.stints])
        z = (z - self._skill_mean) / self._skill_sd
        lam = rules.score_rate * np.exp(rules.score_gain * z) * minutes
        scores = self._score_rng.poisson(lam).astype(np.float64).tolist()
        k = 0
        for g in finished:
            seats = []
            for st in g.stints:
                p = st.player
                seats.append(
                    Seat(
                        p.pid,
                        st.team,
                        st.joined,
                        st.left,
                        scores[k],
                        p.registered,
                        st.quit,
                        st.performance,
                    )
                )
                k += 1
            self._record(g, tuple(seats))

    def _record(self, g: _Finished, seats: tuple[Seat, ...]) -> None:
        """Hand a scored game to the raters (via ``pending``) and append its record rows."""
        winner = g.winner
        if g.mode == "team":
            totals = [sum(st.score for st in seats if st.team == team) for team in (0, 1)]
            winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
        result = GameResult(g.game_id, g.mode, g.start, g.end, seats, winner)
        self.pending.append(result)
        for seat in seats:
            player = self.players[seat.player_id]
            player.unscored -= 1
            player.games += 1
            player.wins += winner is not None and seat.team == winner
            self.records.participants.append(
                (
                    g.game_id,
                    seat.player_id,
                    seat.team,
                    seat.joined,
                    seat.left,
                    seat.minutes,
                    seat.score,
                    seat.registered,
                    seat.quit,
                )
            )
        draw, gap, stronger_won = self._truth(g.mode, seats, winner)
        self.records.games.append(
            (g.game_id, g.mode, g.start, g.end, draw, gap, g.quality, stronger_won, winner)
        )

    def _truth(
        self, mode: str, seats: tuple[Seat, ...], winner: int | None
    ) -> tuple[float, float, bool | None]:
        """Return the true draw density (eq. 14), true skill gap and whether the stronger won.

        1v1 and team: between the two sides' mean true skills (a team's mean is weighted by each
        stint's minutes); free-for-all: the means over every pair of stints, and whether the most
        skilled player had the highest score per hour.
        """
        beta2 = self.scenario.game.beta2
        skill = [self.players[seat.player_id].skill for seat in seats]
        if mode == "ffa":
            pairs = list(itertools.combinations(range(len(seats)), 2))
            if not pairs:
                return math.nan, math.nan, None
            gaps = [abs(skill[i] - skill[j]) for i, j in pairs]
            draw = sum(math.exp(-(d * d) / (4.0 * beta2)) for d in gaps) / len(gaps)
            timed = [k for k, seat in enumerate(seats) if seat.minutes > 0]
            best_sph = max(timed, key=lambda k: seats[k].score / seats[k].minutes, default=None)
            best_skill = max(timed, key=lambda k: skill[k], default=None)
            won = None if best_sph is None else best_sph == best_skill
            return draw * self._draw_norm, sum(gaps) / len(gaps), won
        side_skill = []
        for team in (0, 1):
            weights = [seat.minutes for seat in seats if seat.team == team]
            values = [sk for sk, seat in zip(skill, seats, strict=True) if seat.team == team]
            total = sum(weights)
            side_skill.append(
                sum(w * v for w, v in zip(weights, values, strict=True)) / total
                if total > 0
                else sum(values) / len(values)
            )
        s_a, s_b = side_skill
        draw = math.exp(-((s_a - s_b) ** 2) / (4.0 * beta2)) * self._draw_norm
        stronger_won = None if s_a == s_b or winner is None else winner == (0 if s_a > s_b else 1)
        return draw, abs(s_a - s_b), stronger_won

    @property
    def _skill_mean(self) -> float:
        return float(self.population.skill_mean)

    @property
    def _skill_sd(self) -> float:
        return float(self.population.skill_sd)

    # ---------------------------------------------------------------------------- accounting
    def states(self) -> dict[str, int]:
        """Return how many players are in each state (waiting, playing, abandoned, gone)."""
        counts = {WAITING: 0, PLAYING: 0, **self._state_counts}
        for p in self.players:
            if p is not None:
                counts[p.state] += 1
        return counts


def _all_pairs(group: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    i, j = np.triu_indices(len(group), k=1)
    return group[i], group[j]


def _slice(batch: PlayerBatch, start: int, stop: int) -> PlayerBatch:
    return PlayerBatch(
        skill=batch.skill[start:stop],
        mu0=batch.mu0[start:stop],
        var0=batch.var0[start:stop],
        registered=batch.registered[start:stop],
        session_games=batch.session_games[start:stop],
        session_minutes=batch.session_minutes[start:stop],
    )
