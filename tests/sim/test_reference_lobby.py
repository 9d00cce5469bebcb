"""The engine's queue against an independent reference lobby, written here from scratch.

**The reference** (:class:`ReferenceLobby`) is the specification of the lobby's queue
semantics, as a plain SimPy model with a process per player session. It uses no part of
``lobbysim`` (only SimPy and numpy; the module imports ``Scenario`` and ``simulate`` only to run
the engine, ``lobbysim.sim``, on the same lobby). The rules, as ``docs/model.md`` (section 4) and
the engine's docstrings state them:

* **Arrivals.** Players arrive as a Poisson process of ``rate`` per minute (or at the times of a
  trace) until the horizon. A session lasts Geometric(1 / ``games_mean``) games on {1, 2, ...}
  (no limit without a mean) and, with ``minutes_mean``, at most Exp(``minutes_mean``) minutes.
* **Queueing.** A player queues, and waits for a match with ``yield matched | timeout(patience)``,
  patience ~ Exp(``patience_mean``) drawn afresh per queueing spell, cut to the session's time
  left. If the timeout wins, the player reneges: the spell is *abandoned* and the session ends.
* **Matchmaker.** A process rings every ``tick`` minutes (tick k at k * tick) and, with
  ``wake_on_arrival``, so does every player who queues. Rings at one instant are coalesced into
  one pass, which runs after everything already due at that instant, so a game that ends on a
  tick returns its players in time for that tick's pass. A pass with at least two players
  waiting shuffles them and pairs them consecutively (``uniform_random``: no threshold, every
  pair acceptable); an odd player out waits on.
* **Games.** 1v1, of fixed ``length``; each player quits at an Exp(``quit_rate``) time, and the
  first quit ends the game early. A quit ends the game, not the quitter's session. When a game
  ends, each player's session ends if its games or its minutes are used up, else the player
  queues again at once.

**Comparisons.** Which are exact, which statistical, and why:

* *Exact* (trace arrivals, infinite patience, fixed game length, one game per session or no
  limit): the event order cannot differ, so the queueing spells (who, from when, to when, how)
  and the games (start, end; and the pairs, where pairing has no choice: on every arrival with
  one game per session) are compared row for row.
* *Statistical* (Poisson arrivals, exponential patience, geometric sessions, quits): the two
  models draw from different random streams, so each runs ``REPS`` replications and each of five
  figures (mean wait of matched spells, abandonment share, games started per minute, games per
  finished session, mean number waiting) must agree: the 99.9% Welch interval of the difference
  contains 0 and the relative difference is under ``REL_TOL``. Negative controls (the reference
  with game ends just after the tick, as unsnapped float sums can land, or with patience cut by
  a fifth) prove that the same comparison flags a real difference.
* *Closed form* (on every arrival, one game per session, threshold 0): the queue holds at most one
  player, a two-state Markov chain, so with arrival rate lam and renege rate th = 1 / patience:
  abandonment th / (2 lam + th), mean wait of matched spells 1 / (2 (lam + th)), mean number
  waiting lam / (2 lam + th) (= lam x the mean wait of all spells, 1 / (2 lam + th): Little's
  law) and games per minute lam^2 / (2 lam + th). Both models, and the engine also under
  ``draw_chance`` (threshold 0), must match it.

Ticks, game lengths and trace times are binary fractions, so that ``now + delay`` sums are exact
in both models (the engine also snaps game ends to its tick grid; the reference need not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import simpy

from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario

# --------------------------------------------------------------------------- the reference


@dataclass(frozen=True)
class LobbySpec:
    """A lobby both models run: the reference directly, the engine as :meth:`scenario`."""

    horizon: float = 1000.0
    warmup: float = 40.0
    rate: float = 2.0  # Poisson arrivals per minute (unless ``trace``)
    trace: tuple[float, ...] | None = None  # arrival times instead of Poisson arrivals
    patience_mean: float | None = 1.0  # Exp per queueing spell; None: never give up
    games_mean: float | None = 3.0  # Geometric games per session; None: no limit
    minutes_mean: float | None = None  # Exp session time limit; None: none
    length: float = 4.0  # game length, minutes
    quit_rate: float = 0.0  # each player's quit hazard per minute in a game
    tick: float = 0.5
    wake_on_arrival: bool = False
    late_by: float = 0.0  # a negative control: full-length games end this much late
    policy: str = "uniform_random"  # the engine's (the reference always pairs uniformly)

    def scenario(self, trace_path: Path | None = None) -> Scenario:
        """Return the engine's scenario of this lobby (1v1, threshold 0, timed passes on
        ``tick`` and, with ``wake_on_arrival``, on every queueing)."""
        arrivals = (
            {"name": "trace", "path": str(trace_path)}
            if self.trace is not None
            else {"name": "poisson", "rate": self.rate}
        )
        return Scenario.from_dict(
            {
                "horizon": self.horizon,
                "warmup": self.warmup,
                "arrivals": arrivals,
                "population": {
                    "patience_mean": self.patience_mean,
                    "session_games_mean": self.games_mean,
                    "session_minutes_mean": self.minutes_mean,
                },
                "game": {"length": self.length, "quit_rate": self.quit_rate},
                "matchmaker": {
                    "policy": self.policy,
                    "tick": self.tick,
                    "wake_on_arrival": self.wake_on_arrival,
                },
                "raters": {"shadows": []},
            }
        )


class ReferenceLobby:
    """One replication of a :class:`LobbySpec`: the specification in the module docstring.

    Records, in the engine's columns: ``waits`` (player_id, enqueued, left_queue, outcome),
    ``games`` (start, end, a, b) and ``players`` (player_id, state).
    """

    def __init__(self, spec: LobbySpec, seed: int) -> None:
        self.spec = spec
        self.env = simpy.Environment()
        streams = np.random.default_rng(seed).spawn(5)
        self.arrival_rng, self.session_rng, self.patience_rng, self.quit_rng, self.pair_rng = (
            streams
        )
        self.queue: dict[int, tuple[float, simpy.Event]] = {}  # pid -> (since, matched)
        self.rung = False  # a pass is due at this instant
        self.waits: list[tuple[int, float, float, str]] = []
        self.games: list[tuple[float, float, int, int]] = []
        self.state: dict[int, str] = {}

    def run(self) -> ReferenceLobby:
        env, horizon = self.env, self.spec.horizon
        env.process(self.arrivals())
        env.process(self.matchmaker())
        env.run(until=horizon)
        for pid, (since, _) in self.queue.items():
            self.waits.append((pid, since, math.nan, "still_waiting"))
        return self

    def arrivals(self) -> Any:
        spec, env = self.spec, self.env
        pid, t = 0, 0.0
        while True:
            if spec.trace is not None:
                t = spec.trace[pid] if pid < len(spec.trace) else math.inf
            else:
                t += self.arrival_rng.exponential(1.0 / spec.rate)
            if t >= spec.horizon:
                return
            yield env.timeout(t - env.now)
            env.process(self.session(pid))
            pid += 1

    def session(self, pid: int) -> Any:
        """A player's session: queue, play, queue again ... until it ends."""
        spec, env = self.spec, self.env
        rng = self.session_rng
        games = math.inf if spec.games_mean is None else rng.geometric(1.0 / spec.games_mean)
        leave_at = env.now + (
            math.inf if spec.minutes_mean is None else rng.exponential(spec.minutes_mean)
        )
        played = 0
        while True:
            since = env.now
            matched = env.event()  # succeeds with the game's end when a pass pairs the player
            self.queue[pid] = (since, matched)
            self.state[pid] = "waiting"
            if spec.wake_on_arrival:
                self.ring()
            patience = math.inf
            if spec.patience_mean is not None:
                patience = self.patience_rng.exponential(spec.patience_mean)
            patience = min(patience, leave_at - since)
            if patience < math.inf:
                yield matched | env.timeout(patience)
            else:
                yield matched
            if not matched.triggered:  # patience, or the session's time, ran out in the queue
                del self.queue[pid]
                self.waits.append((pid, since, env.now, "abandoned"))
                self.state[pid] = "abandoned"
                return
            self.waits.append((pid, since, env.now, "matched"))
            self.state[pid] = "playing"
            yield matched.value  # the game's end
            played += 1
            if played >= games or env.now >= leave_at:
                self.state[pid] = "gone"
                return

    def matchmaker(self) -> Any:
        while True:
            yield self.env.timeout(self.spec.tick)
            self.ring()

    def ring(self) -> None:
        """Ask for a pass now: one per instant, after everything already due at it."""
        if not self.rung:
            self.rung = True
            bell = self.env.event()
            bell.callbacks.append(self.matchmaking_pass)
            bell.succeed()

    def matchmaking_pass(self, _bell: simpy.Event) -> None:
        self.rung = False
        waiting = list(self.queue)
        order = self.pair_rng.permutation(len(waiting)).tolist()
        for k in range(0, len(order) - 1, 2):
            self.start_game(waiting[order[k]], waiting[order[k + 1]])

    def start_game(self, a: int, b: int) -> None:
        spec, env = self.spec, self.env
        duration = spec.length + spec.late_by
        if spec.quit_rate > 0:
            first_quit = float(self.quit_rng.exponential(1.0 / spec.quit_rate, 2).min())
            duration = min(duration, first_quit)
        end = env.timeout(duration)  # made now, so it is due before a later tick's ring
        for pid in (a, b):
            _, matched = self.queue.pop(pid)
            matched.succeed(end)
        self.games.append((env.now, env.now + duration, a, b))

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """Return the waits, games and players records as frames."""
        waits = pd.DataFrame(self.waits, columns=["player_id", "enqueued", "left_queue", "outcome"])
        games = pd.DataFrame(self.games, columns=["start", "end", "a", "b"])
        players = pd.DataFrame(sorted(self.state.items()), columns=["player_id", "state"])
        return waits, games, players


# --------------------------------------------------------------------------- the figures

FIGURES = ("wait_matched", "abandoned", "games_per_min", "games_per_session", "n_waiting")
REPS = 30  # replications per model and lobby
LEVEL = 0.999  # of the Welch intervals
REL_TOL = 0.05  # the largest relative difference (engine - reference) / reference


def figures(waits: pd.DataFrame, players: pd.DataFrame, spec: LobbySpec) -> dict[str, float]:
    """Return the five figures of one replication's records, from the end of the warm-up."""
    start, end = spec.warmup, spec.horizon
    spells = waits[waits.enqueued >= start]
    matched = spells[spells.outcome == "matched"]
    over = spells[spells.outcome != "still_waiting"]
    left = waits.left_queue.fillna(end).clip(upper=end)  # still waiting: until the horizon
    in_window = (left - waits.enqueued.clip(lower=start)).clip(lower=0.0)
    is_match = waits.outcome == "matched"
    games_started = int((is_match & (waits.left_queue >= start)).sum()) / 2
    # sessions begun after the warm-up and over by the horizon: their games (matched spells)
    first = waits.groupby("player_id").enqueued.min()
    over_ids = players.player_id[players.state.isin(["gone", "abandoned"])]
    sessions = first.index[first.index.isin(over_ids) & (first >= start).to_numpy()]
    games = waits[is_match].groupby("player_id").size().reindex(sessions, fill_value=0)
    return {
        "wait_matched": float((matched.left_queue - matched.enqueued).mean()),
        "abandoned": float((over.outcome == "abandoned").mean()),
        "games_per_min": games_started / (end - start),
        "games_per_session": float(games.mean()),
        "n_waiting": float(in_window.sum()) / (end - start),
    }


_cache: dict[tuple[str, LobbySpec], pd.DataFrame] = {}


def engine_runs(spec: LobbySpec, reps: int = REPS) -> pd.DataFrame:
    """Return the figures of ``reps`` replications of the engine (seeds 0, 1, ...)."""
    key = ("engine", spec)
    if key not in _cache:
        rows = []
        for seed in range(reps):
            result = simulate(spec.scenario(), seed=seed)
            rows.append(figures(result.waits, result.players, spec))
        _cache[key] = pd.DataFrame(rows)
    return _cache[key]


def reference_runs(spec: LobbySpec, reps: int = REPS) -> pd.DataFrame:
    """Return the figures of ``reps`` replications of the reference (seeds 10_000, ...)."""
    key = ("reference", spec)
    if key not in _cache:
        rows = []
        for seed in range(10_000, 10_000 + reps):
            waits, _, players = ReferenceLobby(spec, seed).run().frames()
            rows.append(figures(waits, players, spec))
        _cache[key] = pd.DataFrame(rows)
    return _cache[key]


@dataclass(frozen=True)
class Comparison:
    """Engine minus reference for one figure: the difference, its Welch interval, relative."""

    figure: str
    engine: float
    reference: float
    low: float
    high: float

    @property
    def relative(self) -> float:
        return (self.engine - self.reference) / abs(self.reference)

    @property
    def agrees(self) -> bool:
        return self.low <= 0.0 <= self.high and abs(self.relative) <= REL_TOL

    def __str__(self) -> str:
        verdict = "agree" if self.agrees else "DIFFER"
        return (
            f"{self.figure:>17}: engine {self.engine:.4f} reference {self.reference:.4f} "
            f"diff {self.engine - self.reference:+.4f} [{self.low:+.4f}, {self.high:+.4f}] "
            f"rel {self.relative:+.2%} {verdict}"
        )


def welch(figure: str, a: np.ndarray, b: np.ndarray, level: float = LEVEL) -> Comparison:
    """Return the Welch interval of mean(a) - mean(b) at ``level``."""
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = float(scipy.stats.t.ppf(0.5 + level / 2, df)) * math.sqrt(va + vb)
    diff = float(a.mean() - b.mean())
    return Comparison(figure, float(a.mean()), float(b.mean()), diff - half, diff + half)


def compare(engine: pd.DataFrame, reference: pd.DataFrame, label: str) -> list[Comparison]:
    """Compare every figure, printing the table (``pytest -s`` shows it)."""
    out = [welch(f, engine[f].to_numpy(), reference[f].to_numpy()) for f in FIGURES]
    print(f"\n{label} ({len(engine)} + {len(reference)} replications, {LEVEL:.1%} Welch):")
    for c in out:
        print("  " + str(c))
    return out


# --------------------------------------------------------------------------- the lobbies

#: Passes on the tick only: a fresh player waits for the next tick, a player back from a
#: full-length game (which ends on a tick) is in that tick's pass.
TICKS = LobbySpec()
#: A pass whenever a player queues (the tick's passes then find at most one player).
EVERY_ARRIVAL = LobbySpec(wake_on_arrival=True, tick=1.0, patience_mean=0.5)
#: Quits (games end off the grid) and sessions with a time limit (they end in the queue too).
QUITS = LobbySpec(quit_rate=0.05, minutes_mean=30.0, games_mean=5.0)

LOBBIES = {"ticks": TICKS, "every-arrival": EVERY_ARRIVAL, "quits-and-session-minutes": QUITS}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LOBBIES))
def test_the_engine_queues_as_the_reference(name: str) -> None:
    spec = LOBBIES[name]
    comparisons = compare(engine_runs(spec), reference_runs(spec), name)
    assert all(c.agrees for c in comparisons), "\n".join(map(str, comparisons))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "control", "flagged"),
    [
        # game ends a hair after the tick (unsnapped float sums): back players miss its pass
        ("ticks", replace(TICKS, late_by=1e-9), "wait_matched"),
        # players a fifth less patient
        ("every-arrival", replace(EVERY_ARRIVAL, patience_mean=0.4), "abandoned"),
    ],
    ids=["game-ends-after-the-tick", "patience-0.8"],
)
def test_the_comparison_flags_a_different_lobby(
    name: str, control: LobbySpec, flagged: str
) -> None:
    comparisons = compare(engine_runs(LOBBIES[name]), reference_runs(control), f"control {name}")
    by_figure = {c.figure: c for c in comparisons}
    assert not by_figure[flagged].agrees
    assert not (by_figure[flagged].low <= 0.0 <= by_figure[flagged].high)


# --------------------------------------------------------------------------- closed form

#: On every arrival with one game per session, the queue holds at most one player.
ONE_GAME = LobbySpec(wake_on_arrival=True, tick=1.0, games_mean=1.0, patience_mean=0.5)


def one_game_closed_form(spec: LobbySpec) -> dict[str, float]:
    """Return the five figures of :data:`ONE_GAME`-like lobbies in closed form.

    The queue is empty (0) or holds one player (1): 0 -> 1 at the arrival rate lam, 1 -> 0 at
    lam (a match) + th (a renege, th = 1 / patience_mean), so P1 = lam / (2 lam + th). By PASTA
    an arrival finds a player waiting with probability P1 and is matched at once; otherwise it
    waits Exp(lam + th) and is matched with probability lam / (lam + th).
    """
    assert spec.patience_mean is not None
    lam, th = spec.rate, 1.0 / spec.patience_mean
    return {
        "wait_matched": 1.0 / (2.0 * (lam + th)),
        "abandoned": th / (2.0 * lam + th),
        "games_per_min": lam**2 / (2.0 * lam + th),
        "games_per_session": 2.0 * lam / (2.0 * lam + th),
        "n_waiting": lam / (2.0 * lam + th),  # = lam * (mean wait of all spells): Little's law
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "model",
    ["reference", "engine-uniform_random", "engine-draw_chance"],
)
def test_one_game_sessions_on_every_arrival_match_the_closed_form(model: str) -> None:
    exact = one_game_closed_form(ONE_GAME)
    if model == "reference":
        runs = reference_runs(ONE_GAME)
    else:
        runs = engine_runs(replace(ONE_GAME, policy=model.removeprefix("engine-")))
    print(f"\n{model} against the closed form ({len(runs)} replications):")
    problems = []
    for figure in FIGURES:
        values = runs[figure].to_numpy()
        half = float(scipy.stats.t.ppf(0.5 + LEVEL / 2, values.size - 1)) * (
            values.std(ddof=1) / math.sqrt(values.size)
        )
        mean, rel = float(values.mean()), float(values.mean() / exact[figure] - 1.0)
        ok = abs(mean - exact[figure]) <= half and abs(rel) <= REL_TOL
        print(f"  {figure:>17}: {mean:.4f} +- {half:.4f} exact {exact[figure]:.4f} rel {rel:+.2%}")
        if not ok:
            problems.append(figure)
    assert not problems


# --------------------------------------------------------------------------- exact traces


def run_both(spec: LobbySpec, tmp_path: Path) -> tuple[Any, tuple[pd.DataFrame, ...]]:
    """Run the engine (trace arrivals from a CSV file) and the reference on ``spec``."""
    assert spec.trace is not None
    path = tmp_path / "trace.csv"
    path.write_text("time\n" + "".join(f"{float(t)!r}\n" for t in spec.trace))
    return simulate(spec.scenario(path), seed=0), ReferenceLobby(spec, 0).run().frames()


def spells(waits: pd.DataFrame) -> list[tuple[Any, ...]]:
    """Return the queueing spells as sorted rows (a spell still waiting leaves at -1)."""
    rows = waits[["player_id", "enqueued", "left_queue", "outcome"]].fillna({"left_queue": -1.0})
    return sorted(rows.itertuples(index=False, name=None))


def trace(rng: np.random.Generator, n: int) -> tuple[float, ...]:
    """Return ``n`` distinct arrival times, multiples of 1/16 minute (exact float sums)."""
    return tuple((np.cumsum(rng.integers(1, 16, size=n)) / 16).tolist())


def test_a_trace_on_every_arrival_gives_the_same_pairs_and_waits(tmp_path: Path) -> None:
    """Infinite patience, one game per session, a pass whenever a player queues: each arrival
    finds the queue empty and waits, or finds one player and plays them at once. The last of
    an odd number is still waiting at the horizon."""
    spec = LobbySpec(
        horizon=40.0,
        warmup=0.0,
        trace=trace(np.random.default_rng(7), 41),
        patience_mean=None,
        games_mean=1.0,
        tick=1.0,
        wake_on_arrival=True,
    )
    engine, (waits, games, players) = run_both(spec, tmp_path)
    assert spells(engine.waits) == spells(waits)
    assert spells(waits)[-1][3] == "still_waiting"
    seats = engine.participants.groupby("game_id").player_id.apply(frozenset)
    engine_games = sorted(
        (row.start, row.end, seats[row.game_id]) for row in engine.games.itertuples()
    )
    reference_games = sorted((g.start, g.end, frozenset((g.a, g.b))) for g in games.itertuples())
    assert len(engine_games) == 20
    assert engine_games == reference_games
    assert engine.players.state.tolist() == players.state.tolist()


def test_a_trace_on_ticks_with_sessions_that_go_on_gives_the_same_waits(tmp_path: Path) -> None:
    """Passes on the tick only, infinite patience, sessions without end, games of four ticks:
    an even number of players arrives between two ticks, so every pass pairs everyone waiting.
    A newcomer waits for the next tick; a player back from a game, which ends on a tick, is
    in that tick's pass and waits 0. Who plays whom is random, so only the spells and the
    games' times are compared."""
    rng = np.random.default_rng(11)
    times: list[float] = []
    # 0, 2 or 4 arrivals between ticks k / 2 and (k + 1) / 2, at k / 2 + j / 16, j in 1..7
    for k in range(12):
        offsets = rng.choice(np.arange(1, 8), 2 * (k % 3), replace=False) / 16
        times += sorted((k / 2 + offsets).tolist())
    spec = LobbySpec(
        horizon=20.1,
        warmup=0.0,
        trace=tuple(times),
        patience_mean=None,
        games_mean=None,
        length=2.0,
        tick=0.5,
        wake_on_arrival=False,
    )
    engine, (waits, games, players) = run_both(spec, tmp_path)
    assert spells(engine.waits) == spells(waits)
    back = waits[waits.groupby("player_id").cumcount() > 0]
    assert len(back) > 100 and (back.left_queue == back.enqueued).all()  # waited 0
    engine_games = sorted(engine.games[["start", "end"]].itertuples(index=False, name=None))
    reference_games = sorted(
        games.loc[games.end <= spec.horizon, ["start", "end"]].itertuples(index=False, name=None)
    )
    assert engine_games == reference_games
    assert engine.players.state.tolist() == players.state.tolist()
