"""Glicko-2 replayed over a log as a rating server would have run it (lobbysim/calibration/
replay.py, "Entry"): rating periods closed on the clock, each player entering at their first
match as Glickman's unrated player. Checked against an independent Glicko-2 (a server written
here, each period's update by the reference of tests/raters/glicko2_reference.py) from the formulas
of M. E. Glickman, "Example of the Glicko-2 system" (Boston University, 2013), steps 1 to 8,
and the predictive probability of "The Glicko system" (1995), over a small log with late
newcomers."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from lobbysim.calibration.read import read_log
from lobbysim.calibration.replay import LogArrays, replay, replay_by_event
from lobbysim.calibration.scores import score_log
from lobbysim.raters import RATERS
from tests.calibration.logs import Match, make_log
from tests.raters.glicko2_reference import reference

SCALE = 173.7178  # Glicko points per Glicko-2 unit (step 2)


def g(phi: float) -> float:
    """Step 3: g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


class Server:
    """A Glicko-2 server: periods of ``period`` minutes closed on the clock; a player enters
    unrated (1500, 350, 0.06) and is left alone until their first period with games; from
    then on every period rates their games (steps 3 to 8) or, idle, grows their deviation
    (step 6 alone)."""

    def __init__(self, period: float, tau: float) -> None:
        self.period, self.tau = period, tau
        self.state: dict[int, tuple[float, float, float]] = {}  # mu, phi, sigma (Glicko-2)
        self.rated: set[int] = set()
        self.games: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
        self.closed = 0  # periods 0 .. closed - 1 are rated

    def enter(self, pid: int) -> None:
        if pid not in self.state:
            self.state[pid] = ((1500.0 - 1500.0) / SCALE, 350.0 / SCALE, 0.06)

    def record(self, end: float, a: int, b: int, score_a: float) -> None:
        self.games[math.floor(end / self.period)].append((a, b, score_a))

    def close_until(self, time: float) -> None:
        """Rate every period that ended by ``time``."""
        while self.closed < math.floor(time / self.period):
            self.rate(self.games.pop(self.closed, []))
            self.closed += 1

    def rate(self, games: list[tuple[int, int, float]]) -> None:
        pre = dict(self.state)
        results: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for a, b, s in games:
            results[a].append((b, s))
            results[b].append((a, 1.0 - s))
        for pid in set(self.rated) | set(results):
            mu, phi, sigma = pre[pid]
            if pid not in results:  # idle: step 6 only
                self.state[pid] = (mu, math.sqrt(phi * phi + sigma * sigma), sigma)
                continue
            opponents = [  # on the Glicko scale, as the steps' reference takes them
                (SCALE * pre[opp][0] + 1500.0, SCALE * pre[opp][1], score)
                for opp, score in results[pid]
            ]
            r, rd, sigma_new, _ = reference(
                SCALE * mu + 1500.0, SCALE * phi, sigma, opponents, self.tau
            )  # steps 3 to 8
            self.state[pid] = ((r - 1500.0) / SCALE, rd / SCALE, sigma_new)
            self.rated.add(pid)

    def predict(self, a: int, b: int) -> float:
        """The Glicko system's predictive P(a beats b), on the Glicko-2 scale."""
        mu_a, phi_a, _ = self.state[a]
        mu_b, phi_b, _ = self.state[b]
        return 1.0 / (1.0 + math.exp(-g(math.hypot(phi_a, phi_b)) * (mu_a - mu_b)))


def late_newcomers_log(rng: np.random.Generator) -> list[Match]:
    """1v1 matches over ~100 periods of 10 minutes: four players from the start, three who
    join late (after 20, 45 and 80 periods), a gap of 25 idle periods, matches crossing a
    period's end and starting the moment another ends."""
    matches: list[Match] = []
    t = 0.0
    pool = [1, 2, 3, 4]
    joins = {200.0: 5, 450.0: 6, 800.0: 7}
    while t < 1000.0:
        for when, pid in list(joins.items()):
            if t >= when:
                pool.append(pid)
                del joins[when]
        a, b = rng.choice(pool, 2, replace=False).tolist()
        if pid_new := [p for p in pool[4:] if not any(p in (s[0] for s in m[2]) for m in matches)]:
            a = pid_new[0]  # a newcomer plays at once
            b = int(rng.choice([p for p in pool if p != a]))
        length = float(rng.integers(3, 15))
        winner = int(rng.integers(2))
        matches.append((t, t + length, [(a, 0, 1 - winner), (b, 1, winner)]))
        t += float(rng.choice([0.0, 2.0, 6.0, 13.0])) if t < 500.0 or t > 760.0 else 0.0
        if 500.0 <= t <= 760.0:
            t = 760.0  # 25 periods with no match
        t += 1.0
    return matches


def server_predictions(arrays: LogArrays, period: float, tau: float, ids: np.ndarray) -> list:
    """Each match's P(side a beats side b) from the server, in the log's own time order (ends
    before starts at one time), written from the log's matches, not the replay's arrays."""
    server = Server(period, tau)
    events = []
    for m in range(arrays.matches):
        events.append((float(arrays.start[m]), 1, m))
        events.append((float(arrays.end[m]), 0, m))
    out = [math.nan] * arrays.matches
    for time, kind, m in sorted(events):
        a, b = int(arrays.duel_a[m]), int(arrays.duel_b[m])
        if kind == 1:
            server.close_until(time)
            server.enter(a)
            server.enter(b)
            out[m] = server.predict(a, b)
        else:
            server.record(time, a, b, float(arrays.pair_y[m]))
    return out


@pytest.mark.parametrize("staged", [True, False])
def test_glicko2_replay_is_glickmans_system_with_late_newcomers(staged: bool) -> None:
    rng = np.random.default_rng(4)
    log = make_log(late_newcomers_log(rng))
    arrays = LogArrays.from_log(log)
    assert arrays.duel and arrays.matches > 100
    period, tau = 10.0, 0.5
    rater = RATERS.create("glicko2", {"period": period, "tau": tau})
    got = (replay if staged else replay_by_event)(rater, arrays)
    want = np.array(server_predictions(arrays, period, tau, log.player_ids))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    # the newcomers' first predictions are at RD 350 against rated players: not 1/2 in general,
    # and a replay that let the newcomers' deviation grow from minute 0 predicts otherwise
    late = [m for m in range(arrays.matches) if arrays.start[m] >= 200.0]
    assert np.abs(want[late] - 0.5).max() > 0.05
    old = RATERS.create("glicko2", {"period": period, "tau": tau})
    old.add_players(np.arange(arrays.players), np.zeros(arrays.players), np.ones(arrays.players))
    shifted = np.abs(_replay_with_everyone_at_zero(old, arrays) - want)
    assert shifted.max() > 1e-3


def _replay_with_everyone_at_zero(rater, arrays: LogArrays) -> np.ndarray:
    """The replay before players entered at their first match (everyone added at minute 0,
    periods closed only by the games' ends), event by event."""
    p = np.full(arrays.matches, np.nan)
    for e in arrays.events:
        if e >= 0:
            a, b = arrays.duel_a[[e]], arrays.duel_b[[e]]
            p[e] = rater.win_probability(a, b)[0]
        else:
            rater.update([arrays.games[~e]])
    return p


SAMPLE = Path(__file__).resolve().parents[2] / "lobbysim" / "scenarios" / "logs"


@pytest.mark.parametrize("period", [15.0, 360.0])
def test_glicko2_replay_is_glickmans_system_on_the_sample_log(period: float) -> None:
    """The bundled sample log (440 players, most of whom join after minute 0, their first
    match often crossing a period's end)."""
    log = read_log(SAMPLE / "quickstart_games.csv.gz")
    arrays = LogArrays.from_log(log)
    rater = RATERS.create("glicko2", {"period": period, "tau": 0.5})
    got = replay(rater, arrays)
    want = np.array(server_predictions(arrays, period, 0.5, log.player_ids))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.slow
def test_glicko2_scores_no_worse_than_the_gaussian_rater_on_the_sample_log() -> None:
    """Issue 44's bar: tuned on the first half, scored on the second, glicko2's log loss is no
    worse than the Bayesian rater's by more than the interval says: the 95% interval of the
    paired difference (glicko2 - bayesian, per pair of the second part) holds 0 or lies below
    it. Measured: 0.6387 against 0.6398, -0.0012 +/- 0.0019.

    It holds on this log, not on every log of this game. Tuned on every pair of the first part
    (before the tuning loss counted the experienced pairs only), this log chose Glicko-2's
    initial deviation 87.5 and scored 0.6536 against 0.6490 (+0.0046 +/- 0.0015). On 12 other
    logs cut the same way (benchmarks/bench_calibrate_tuning.py, quickstart seeds 22-33) the
    bar held on 8, and glicko2 - bayesian averaged +0.0023 [+0.0001, +0.0045] over them: on a
    game whose performances are Gaussian (the Bayesian rater's own model) Glicko-2 scores a
    little worse, and a log of 1,700 held-out matches tells a difference that small only
    sometimes. The replay itself is Glickman's system to 1e-9 (the tests above)."""
    log = read_log(SAMPLE / "quickstart_games.csv.gz")
    result = score_log(log, ["bayesian", "glicko2"])
    second = result.pairs[result.pairs["part"] == "second"]
    y = second["outcome"].to_numpy()

    def loss(p: np.ndarray) -> np.ndarray:
        return -(y * np.log(p) + (1.0 - y) * np.log1p(-p))

    diff = loss(second["glicko2"].to_numpy()) - loss(second["bayesian"].to_numpy())
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    assert diff.mean() - 1.96 * se <= 0.0, (diff.mean(), se, result.chosen["glicko2"])
