"""Raters scored on a match log: each rater replayed over the log in time order, no queue.

:func:`score_log` replays every rater over a :class:`~lobbysim.calibration.matchlog.MatchLog` and
scores the predictions it made of matches it had not yet seen; :func:`scores_text` puts the
scores in a few terminal lines. docs/calibrate.md ("Raters scored on the log") is the user's
account of the method; this docstring is the exact one.

**Replay.** The log's matches become events in time order: a match's end applies its update, a
match's start makes its prediction; at equal times ends come first (a match that starts the
moment another ends is predicted with that match's update applied), except that a match of zero
length ends after the starts at its time, so that its own prediction still comes first. Matches
ending together are rated in the order of their start. A prediction is therefore made from the
ratings as they stand at the match's start: after the updates of every match that ended at or
before that start, and of no other. The replay is exact but not event by event: it gathers
*stages*, predictions then updates, and closes a stage when a start reads a player an update of
the stage wrote (for Glicko-2, any update that closes a rating period writes every player; for a
rater it does not know, every update does). Predictions within a stage are one vectorised call
and its updates one :meth:`~lobbysim.raters.Rater.update` call (which equals the games one at a
time, in order); the result is that of the event-by-event replay
(tests/calibrate/test_scores.py holds the two side by side).

**Games the raters see.** Each match becomes one :class:`~lobbysim.records.GameResult`: every
seat registered, its stint the match's ``[start, end]`` and its score ``max rank - rank`` in the
match (so the best side scores most, equal ranks score alike and scores per hour order the sides
as the ranks do: the SPH Elo and the pair rules read scores per hour). Two one-player sides with
different ranks make a ``1v1`` game won by the better rank; any other match with two sides, or
with sides of several players, is a ``team`` game (sides as teams, the winner the single best
rank, ``None`` if tied) and one-player sides of three or more a free-for-all (``ffa``). So a
drawn 1v1 is a team game of equal scores: the Bayesian rater takes it as no evidence (its pair
rule for equal SPH), the SPH Elo and Glicko-2 as a draw (1/2), openskill as equal ranks. The
openskill adapter ranks a team game's sides by the winner only (best side first, the others
equal). Every player starts at the prior ``N(mu0, var0)`` (default ``N(0, 4)``, lobbysim's
population prior with skill sd 2); the Bayesian and openskill raters start there, the SPH Elo and
Glicko-2 at their own initial ratings. The Gaussian raters' predictions do not change when
``var0``, ``beta2`` and ``tau2`` are scaled together, so a fixed ``var0`` costs the grids nothing.
A match of zero length cannot move the SPH Elo (its time factor is its minutes).

**Predictions.** For two sides ``a`` and ``b`` each rater gives ``P(a beats b)``, with
``m`` a side's mean rating, ``s`` the sum of its players' rating variances and ``n`` its
players (every formula is the rater's own :meth:`~lobbysim.raters.Rater.win_probability` when
both sides have one player):

* Gaussian raters (``bayesian``, ``openskill``: :class:`~lobbysim.raters.base.GaussianBeliefs`)
  and the oracle: ``Phi((m_a - m_b) / c)`` with
  ``c^2 = beta2 / n_a + beta2 / n_b + s_a / n_a^2 + s_b / n_b^2``, the probability that the side
  with the higher mean performance wins when each performance is ``N(skill, beta2)``
  (1v1: ``c^2 = 2 beta2 + var_a + var_b``, TrueSkill's).
* ``sph_elo``: the Elo's logistic ``1 / (1 + exp(-(m_a - m_b) / t))``.
* ``glicko2``: Glickman's predictive ``1 / (1 + exp(-g(phi) (mu_a - mu_b)))`` on the Glicko-2
  scale, a side's ``mu`` its mean rating and ``phi^2 = (s_a / n_a^2 + s_b / n_b^2) / 173.7178^2``.
* any other rater: the mean of its ``win_probability`` over every two players of the two sides.

A match of ``k`` sides is scored on each of its ``k (k - 1) / 2`` pairs of sides (pairwise: a
free-for-all of 8 is 28 pairs); the outcome of a pair is 1 if side ``a`` ranked better, 0 if
worse, 1/2 if they drew. So ``n`` counts pairs, which are matches in a log of two-sided matches.

**Scores** of predictions ``p`` against outcomes ``y``: log loss ``-(y ln p + (1 - y) ln(1 - p))``
(``p`` clipped to ``[1e-15, 1 - 1e-15]``), Brier score ``(p - y)^2``, both averaged over the
pairs, draws included; pair-order accuracy, the share of decided pairs (no draw) where the side
given ``p > 1/2`` won, an exact 1/2 counting half; a calibration curve of 10 bins of ``p``
(``[0, 0.1)``, ..., ``[0.9, 1]``): mean ``p`` against the mean outcome, with the pairs in each.
Each score is given on every match (``all``) and, because a rater cannot know a newcomer, on the
matches whose every player had at least ``experienced`` (default 10) earlier finished matches in
the log (``all_experienced``).

**Tuning.** The log is split by start: the first ``split`` (default 0.5) of its matches are the
``first`` part, the rest the ``second``. Each rater's small grid (:data:`GRIDS`) is replayed over
the first part alone (its predictions need nothing later) and the setting with the lowest log
loss there is kept (the first in grid order on a tie), walked past the grid's end where it ends
the grid (:func:`_extend`); the whole log is then replayed with it and
the ``second`` part (and ``second_experienced``) is the held-out score, as the Elo-MMR paper's
benchmark scores raters (Ebtekar and Liu, "Elo-MMR: A Rating System for Massive Multiplayer
Competitions", WWW 2021). ``all`` and ``first`` include the matches the setting was chosen on.

**Truth.** With :class:`Truth` (each player's true skill and the performance variance, known for
a log lobbysim generated) the oracle's predictions use the Gaussian formula above with the true
skills and no rating variance: for a 1v1 ``Phi((s_a - s_b) / sqrt(2 beta2))``. Where the log's
outcomes are drawn that way (a 1v1 game without quits), its expected log loss is the floor no
rater can beat; quits, scores deciding team games, or drifting skills make it an approximation.
"""

from __future__ import annotations

import itertools
import math
import textwrap
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.special import expit, ndtr

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.raters import RATERS, Rater
from lobbysim.raters.base import GaussianBeliefs
from lobbysim.raters.glicko2 import SCALE, Glicko2Rater
from lobbysim.raters.sph_elo import SPHEloRater
from lobbysim.records import GameResult, Seat, make_result, make_seat
from lobbysim.scenario import PluginSpec

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The raters scored by default, in this order (``openskill`` only where its package is
#: installed: it is an optional extra).
DEFAULT_RATERS = ("bayesian", "sph_elo", "glicko2", "openskill")

#: Each rater's grid of settings tried on the first part (small on purpose: every setting is a
#: replay). ``bayesian``: the performance variance ``beta2`` (against the prior variance 4) and
#: the skill drift ``tau2`` added before each game; ``sph_elo``: its K, ``game_mult`` rating
#: points per minute of a pair's shared time (its logistic scale ``t`` stays 120: only K / t
#: matters); ``glicko2``: the system constant ``tau`` and the rating period in minutes (a quarter
#: of an hour to a day); ``openskill``: ``beta2``. A chosen value at the end of its range is
#: extended past it (:func:`_extend`), and noted if the extension still ends there.
GRIDS: dict[str, list[dict[str, float]]] = {
    "bayesian": [{"beta2": b, "tau2": t} for b in (1.0, 2.5, 6.25) for t in (0.0, 0.01, 0.05)],
    "sph_elo": [{"game_mult": k} for k in (1.0, 2.0, 4.0, 8.0, 16.0)],
    "glicko2": [
        {"tau": t, "period": p} for t in (0.3, 0.6, 1.2) for p in (15.0, 60.0, 360.0, 1440.0)
    ],
    "openskill": [{"beta2": b} for b in (1.0, 2.5, 6.25)],
}

#: At most this many steps past the end of a grid's range (each a step of the range's own
#: spacing: times the ratio of its last two values, or plus their difference) for a parameter
#: whose chosen value ends the values tried (:func:`_extend`).
EXTEND_STEPS = 4

#: A step past a grid's end is taken only where it lowers the first part's log loss by more than
#: this (far below what a log of thousands of matches can tell apart), and a value at the end
#: is noted only where it beats its neighbour by more: a parameter that changes next to nothing
#: (Glicko-2's ``tau`` over a few games a period) is neither walked nor noted.
MIN_GAIN = 1e-4

#: The range an extension past a grid stays in, per rater and parameter (the grid itself may
#: lie anywhere): wide, but short of values a rater's author would not use (Glickman's
#: Glicko-2 paper suggests a system constant ``tau`` of 0.3 to 1.2; a rating period past a
#: week, or a performance variance 25 times the prior's, stops meaning what it says).
RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "bayesian": {"beta2": (0.1, 100.0), "tau2": (0.0, 1.0)},
    "sph_elo": {"game_mult": (0.125, 128.0)},
    "glicko2": {"tau": (0.15, 2.4), "period": (1.0, 10080.0)},
    "openskill": {"beta2": (0.1, 100.0)},
}

#: How parameters are named in the terminal lines.
PARAM_LABELS = {"beta2": "beta^2", "tau2": "tau^2", "game_mult": "K", "tau": "tau"}

#: The parts of the log a score can be on (see the module docstring).
PARTS = ("all", "first", "second", "all_experienced", "second_experienced")

#: The metrics of :attr:`RaterScores.scores`.
METRICS = ("log_loss", "brier", "pair_order")

#: Predictions are clipped this far from 0 and 1 for the log loss.
CLIP = 1e-15

ORACLE = "oracle"


@dataclass(frozen=True)
class Truth:
    """The truth behind a log: each player's true skill and the performance variance.

    Attributes:
        skill: true skill by player code (``MatchLog.player_ids`` order).
        beta2: the performance variance: a performance is ``N(skill, beta2)`` (lobbysim's
            ``game.beta2``).
    """

    skill: FloatArray
    beta2: float

    @classmethod
    def from_skills(
        cls, log: MatchLog, skills: Mapping[Any, float] | pd.Series, beta2: float
    ) -> Truth:
        """Return the truth of ``log`` from true skills keyed by the log's own player ids (a
        lobbysim run's ``players.set_index("player_id")["skill"]``).

        Raises:
            ValueError: a player of the log has no skill, or ``beta2`` is not > 0.
        """
        series = pd.Series(skills) if not isinstance(skills, pd.Series) else skills
        values = series.reindex(pd.Index(log.player_ids)).to_numpy(dtype=np.float64)
        if np.isnan(values).any():
            missing = log.player_ids[np.isnan(values)][0]
            raise ValueError(f"no true skill for player {missing!r} of the log")
        if not (math.isfinite(beta2) and beta2 > 0):
            raise ValueError(f"beta2 must be a finite number > 0, got {beta2!r}")
        return cls(values, float(beta2))


@dataclass
class LogArrays:
    """A match log as the replay reads it: arrays by match, side, seat and pair, built once.

    Sides are numbered across the log (match by match, side by side), pairs too (match by
    match, in :func:`itertools.combinations` order of its sides). ``events`` is the replay's
    order: ``m`` for match m's start, ``~m`` for its end (see the module docstring).
    """

    matches: int
    start: FloatArray
    end: FloatArray
    seat_lo: IntArray
    seat_player: IntArray
    seat_side: IntArray
    side_lo: IntArray
    side_n: IntArray
    pair_lo: IntArray
    pair_match: IntArray
    pair_a: IntArray
    pair_b: IntArray
    pair_y: FloatArray
    duel: bool
    duel_a: IntArray
    duel_b: IntArray
    players_of: list[tuple[int, ...]]
    games: list[GameResult]
    events: list[int]
    seen: IntArray  #: per match: the fewest earlier finished matches of any of its players
    players: int

    @classmethod
    def from_log(cls, log: MatchLog) -> LogArrays:
        """Return the arrays of ``log`` (its seats in match, side, player order)."""
        seats = log.seats
        match = seats["match"].to_numpy(np.int64)
        side = seats["side"].to_numpy(np.int64)
        player = seats["player"].to_numpy(np.int64)
        order = np.lexsort((player, side, match))
        if not (order == np.arange(order.size)).all():
            match, side, player = match[order], side[order], player[order]
        rank = seats["rank"].to_numpy(np.int64)[order]
        seat_start = seats["start"].to_numpy(np.float64)[order]
        seat_end = seats["end"].to_numpy(np.float64)[order]
        n_matches = int(match[-1]) + 1 if match.size else 0
        seat_lo = _offsets(np.bincount(match, minlength=n_matches))
        new_side = np.ones(match.size, dtype=bool)
        new_side[1:] = (match[1:] != match[:-1]) | (side[1:] != side[:-1])
        seat_side = np.cumsum(new_side) - 1
        side_match = match[new_side]
        side_rank = rank[new_side]
        side_n = np.bincount(seat_side, minlength=side_match.size)
        sides_per_match = np.bincount(side_match, minlength=n_matches)
        side_lo = _offsets(sides_per_match)
        start = np.zeros(n_matches)
        end = np.zeros(n_matches)
        start[match] = seat_start
        end[match] = seat_end
        pair_match, pair_a, pair_b = _side_pairs(side_lo, sides_per_match)
        ra, rb = side_rank[pair_a], side_rank[pair_b]
        pair_y = np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0))
        pair_lo = _offsets(np.bincount(pair_match, minlength=n_matches))
        duel = bool(n_matches) and bool((sides_per_match == 2).all() and (side_n == 1).all())
        first = seat_lo[:-1]
        duel_a = player[first] if duel else np.zeros(0, np.int64)
        duel_b = player[first + 1] if duel else np.zeros(0, np.int64)
        events = _events(start, end)
        players = int(player.max()) + 1 if player.size else 0
        seen = _seen(events, match, player, seat_lo, n_matches)
        players_of, games = _games(start, end, seat_lo, player, side, rank, sides_per_match)
        return cls(
            matches=n_matches,
            start=start,
            end=end,
            seat_lo=seat_lo,
            seat_player=player,
            seat_side=seat_side,
            side_lo=side_lo,
            side_n=side_n,
            pair_lo=pair_lo,
            pair_match=pair_match,
            pair_a=pair_a,
            pair_b=pair_b,
            pair_y=pair_y,
            duel=duel,
            duel_a=duel_a,
            duel_b=duel_b,
            players_of=players_of,
            games=games,
            events=events.tolist(),
            seen=seen,
            players=players,
        )

    def events_before(self, matches: int) -> list[int]:
        """Return the events of the first ``matches`` matches (by start), in replay order."""
        if matches >= self.matches:
            return self.events
        return [e for e in self.events if (e if e >= 0 else ~e) < matches]

    def pairs_of(self, ms: IntArray) -> IntArray:
        """Return the pairs of matches ``ms`` (ascending), match by match."""
        if self.duel:
            return ms
        return _ranges(self.pair_lo, ms)


def _offsets(counts: IntArray) -> IntArray:
    """Return ``[0, c0, c0 + c1, ...]``: where each group of ``counts`` starts, and the end."""
    out = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _ranges(lo: IntArray, ms: IntArray) -> IntArray:
    """Return the concatenated index ranges ``lo[m] .. lo[m + 1] - 1`` of the groups ``ms``."""
    counts = lo[ms + 1] - lo[ms]
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(lo[ms] - _offsets(counts)[:-1], counts)
    return starts + np.arange(total, dtype=np.int64)


def _side_pairs(
    side_lo: IntArray, sides_per_match: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Return every pair of sides of every match: its match and the two sides' global ids."""
    parts_m, parts_a, parts_b = [], [], []
    for k in np.unique(sides_per_match).tolist():
        if k < 2:
            continue
        ms = np.flatnonzero(sides_per_match == k)
        combos = np.array(list(itertools.combinations(range(k), 2)), dtype=np.int64)
        base = side_lo[ms][:, None]
        parts_m.append(np.repeat(ms, len(combos)))
        parts_a.append((base + combos[:, 0]).reshape(-1))
        parts_b.append((base + combos[:, 1]).reshape(-1))
    if not parts_m:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    pm, pa, pb = np.concatenate(parts_m), np.concatenate(parts_a), np.concatenate(parts_b)
    order = np.lexsort((pb, pa, pm))
    return pm[order], pa[order], pb[order]


def _events(start: FloatArray, end: FloatArray) -> IntArray:
    """Return the replay's events (``m`` a start, ``~m`` an end) in time order: ends first at
    equal times, but a match of zero length ends after the starts at its time."""
    n = start.size
    codes = np.arange(n, dtype=np.int64)
    times = np.concatenate([start, end])
    kind = np.concatenate([np.ones(n, np.int64), np.where(end > start, 0, 2)])
    code = np.concatenate([codes, codes])
    order = np.lexsort((code, kind, times))
    return np.where(order < n, code[order], ~code[order])


def _seen(
    events: IntArray, match: IntArray, player: IntArray, seat_lo: IntArray, n: int
) -> IntArray:
    """Return, per match, the fewest earlier finished matches (ends before its start in the
    replay's order) of any of its players."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    position = np.empty(events.size, dtype=np.int64)
    position[np.where(events >= 0, events, n + ~events)] = np.arange(events.size)
    pos_start, pos_end = position[:n], position[n:]
    width = np.int64(events.size + 1)
    base = player * width
    ends = np.sort(base + pos_end[match])
    count = np.searchsorted(ends, base + pos_start[match]) - np.searchsorted(ends, base)
    return np.minimum.reduceat(count, seat_lo[:-1])


def _games(
    start: FloatArray,
    end: FloatArray,
    seat_lo: IntArray,
    player: IntArray,
    side: IntArray,
    rank: IntArray,
    sides_per_match: IntArray,
) -> tuple[list[tuple[int, ...]], list[GameResult]]:
    """Return each match's players and the :class:`GameResult` the raters are given (see the
    module docstring: modes, winners, scores ``max rank - rank``)."""
    pl, sd, rk = player.tolist(), side.tolist(), rank.tolist()
    lo_list = seat_lo.tolist()
    players_of: list[tuple[int, ...]] = []
    games: list[GameResult] = []
    nan = math.nan
    columns = zip(start.tolist(), end.tolist(), sides_per_match.tolist(), strict=True)
    for m, (t0, t1, k) in enumerate(columns):
        lo, hi = lo_list[m], lo_list[m + 1]
        ids = tuple(pl[lo:hi])
        players_of.append(ids)
        ranks = rk[lo:hi]
        top = max(ranks)
        seats: tuple[Seat, ...]
        if k == 2 and hi - lo == 2 and ranks[0] != ranks[1]:
            seats = (
                make_seat(ids[0], sd[lo], t0, t1, float(top - ranks[0]), True, False, nan),
                make_seat(ids[1], sd[lo + 1], t0, t1, float(top - ranks[1]), True, False, nan),
            )
            winner = sd[lo] if ranks[0] < ranks[1] else sd[lo + 1]
            games.append(make_result(m, "1v1", t0, t1, seats, winner))
            continue
        team_game = k == 2 or hi - lo > k
        best = min(ranks)
        best_sides = {sd[lo + i] for i, r in enumerate(ranks) if r == best}
        winner_side = best_sides.pop() if team_game and len(best_sides) == 1 else None
        seats = tuple(
            make_seat(
                ids[i],
                sd[lo + i] if team_game else None,
                t0,
                t1,
                float(top - ranks[i]),
                True,
                False,
                nan,
            )
            for i in range(hi - lo)
        )
        games.append(make_result(m, "team" if team_game else "ffa", t0, t1, seats, winner_side))
    return players_of, games


# ----------------------------------------------------------------------------------------------
# Predictions, per rater family


def gaussian_probability(
    m_a: FloatArray,
    s_a: FloatArray,
    n_a: FloatArray,
    m_b: FloatArray,
    s_b: FloatArray,
    n_b: FloatArray,
    beta2: float,
) -> FloatArray:
    """Return ``Phi((m_a - m_b) / c)``, ``c^2 = beta2/n_a + beta2/n_b + s_a/n_a^2 + s_b/n_b^2``.

    ``m`` a side's mean rating, ``s`` the sum of its rating variances, ``n`` its players.
    """
    c2 = beta2 / n_a + beta2 / n_b + s_a / (n_a * n_a) + s_b / (n_b * n_b)
    return ndtr((m_a - m_b) / np.sqrt(c2))


def elo_probability(m_a: FloatArray, m_b: FloatArray, t: float) -> FloatArray:
    """Return the Elo's ``1 / (1 + exp(-(m_a - m_b) / t))`` (no overflow for any gap)."""
    return expit((m_a - m_b) / t)


def glicko2_probability(
    m_a: FloatArray,
    s_a: FloatArray,
    n_a: FloatArray,
    m_b: FloatArray,
    s_b: FloatArray,
    n_b: FloatArray,
) -> FloatArray:
    """Return Glickman's ``1 / (1 + exp(-g(phi) (mu_a - mu_b)))`` from Glicko ratings ``m`` and
    deviations (``s`` the sum of RD^2 of a side, ``n`` its players), on the Glicko-2 scale."""
    phi2 = (s_a / (n_a * n_a) + s_b / (n_b * n_b)) / (SCALE * SCALE)
    g = 1.0 / np.sqrt(1.0 + 3.0 * phi2 / math.pi**2)
    return expit(g * (m_a - m_b) / SCALE)


class Predictor:
    """P(side a beats side b) of a rater as its ratings stand, and which updates it reads.

    ``conflicts`` is ``"players"`` (a prediction reads only its players, whom only their own
    matches move), ``"periods"`` (Glicko-2: ratings move only when a rating period closes, and
    then everybody's) or ``"all"`` (a rater it does not know: every update may move anything).
    """

    def __init__(self, rater: Rater) -> None:
        self.rater = rater
        self.period = math.inf
        if isinstance(rater, GaussianBeliefs):
            self.family, self.conflicts = "gaussian", "players"
        elif isinstance(rater, SPHEloRater):
            self.family, self.conflicts = "elo", "players"
        elif isinstance(rater, Glicko2Rater):
            self.family, self.conflicts = "glicko2", "periods"
            self.period = float(rater.period)
        else:
            self.family, self.conflicts = "generic", "all"

    def sides(
        self,
        m_a: FloatArray,
        s_a: FloatArray | None,
        n_a: FloatArray,
        m_b: FloatArray,
        s_b: FloatArray | None,
        n_b: FloatArray,
    ) -> FloatArray:
        """Return P(a beats b) from the sides' mean ratings, variance sums and sizes."""
        rater: Any = self.rater
        if self.family == "elo":
            return elo_probability(m_a, m_b, float(rater.t))
        assert s_a is not None and s_b is not None
        if self.family == "glicko2":
            return glicko2_probability(m_a, s_a, n_a, m_b, s_b, n_b)
        return gaussian_probability(m_a, s_a, n_a, m_b, s_b, n_b, float(rater.beta2))

    def duels(self, a: IntArray, b: IntArray) -> FloatArray:
        """Return P(a beats b) for one-player sides."""
        rater = self.rater
        if self.family == "generic":
            return np.asarray(rater.win_probability(a, b), dtype=np.float64)
        ids = np.concatenate([a, b])
        mu = rater.means(ids)
        var = None if self.family == "elo" else rater.variances(ids)
        k = a.size
        one = np.ones(k)
        return self.sides(
            mu[:k],
            None if var is None else var[:k],
            one,
            mu[k:],
            None if var is None else var[k:],
            one,
        )

    def pairs(self, arrays: LogArrays, ms: IntArray, pairs: IntArray) -> FloatArray:
        """Return P(a beats b) for ``pairs`` of sides of the matches ``ms`` (ascending)."""
        seat = _ranges(arrays.seat_lo, ms)
        sides = _ranges(arrays.side_lo, ms)
        players = arrays.seat_player[seat]
        local = np.searchsorted(sides, arrays.seat_side[seat])
        la = np.searchsorted(sides, arrays.pair_a[pairs])
        lb = np.searchsorted(sides, arrays.pair_b[pairs])
        if self.family == "generic":
            return self._generic_pairs(players, local, la, lb)
        n = arrays.side_n[sides].astype(np.float64)
        mu = self.rater.means(players)
        mean = np.bincount(local, weights=mu, minlength=sides.size) / n
        var = None if self.family == "elo" else self.rater.variances(players)
        total: FloatArray | None = None
        if var is not None:
            total = np.bincount(local, weights=var, minlength=sides.size).astype(np.float64)
        return self.sides(
            mean[la],
            None if total is None else total[la],
            n[la],
            mean[lb],
            None if total is None else total[lb],
            n[lb],
        )

    def _generic_pairs(
        self, players: IntArray, local: IntArray, la: IntArray, lb: IntArray
    ) -> FloatArray:
        """The mean of the rater's ``win_probability`` over every two players of two sides."""
        members: dict[int, list[int]] = {}
        for pid, s in zip(players.tolist(), local.tolist(), strict=True):
            members.setdefault(s, []).append(pid)
        xs: list[int] = []
        ys: list[int] = []
        owner: list[int] = []
        for k, (sa, sb) in enumerate(zip(la.tolist(), lb.tolist(), strict=True)):
            for x, y in itertools.product(members[sa], members[sb]):
                xs.append(x)
                ys.append(y)
                owner.append(k)
        p = self.rater.win_probability(np.array(xs, np.int64), np.array(ys, np.int64))
        index = np.array(owner, dtype=np.int64)
        sums = np.bincount(index, weights=np.asarray(p, np.float64), minlength=la.size)
        return sums / np.bincount(index, minlength=la.size)


def replay(rater: Rater, arrays: LogArrays, events: Sequence[int] | None = None) -> FloatArray:
    """Replay ``rater`` (fresh, its players not yet added) over the log's events in stages (see
    the module docstring) and return its prediction for every pair of sides (NaN for the pairs
    of matches whose start is not among ``events``; default: every event)."""
    events = arrays.events if events is None else events
    predictor = Predictor(rater)
    p = np.full(arrays.pair_y.size, np.nan)
    players_of, games, end = arrays.players_of, arrays.games, arrays.end
    conflicts, period = predictor.conflicts, predictor.period
    preds: list[int] = []
    ups: list[int] = []
    written: set[int] = set()
    everyone = False
    closed = -math.inf  # the rating periods closed, as the updates so far close them

    def flush() -> None:
        if preds:
            ms = np.array(preds, dtype=np.int64)
            if arrays.duel:
                p[ms] = predictor.duels(arrays.duel_a[ms], arrays.duel_b[ms])
            else:
                pairs = arrays.pairs_of(ms)
                p[pairs] = predictor.pairs(arrays, ms, pairs)
            preds.clear()
        if ups:
            rater.update([games[m] for m in ups])
            ups.clear()

    for e in events:
        if e >= 0:
            if everyone or (written and not written.isdisjoint(players_of[e])):
                flush()
                written.clear()
                everyone = False
            preds.append(e)
        else:
            m = ~e
            ups.append(m)
            if conflicts == "players":
                written.update(players_of[m])
            elif conflicts == "periods":
                index = math.floor(end[m] / period)
                if index > closed:
                    closed = index
                    everyone = True
            else:
                everyone = True
    flush()
    return p


def replay_by_event(rater: Rater, arrays: LogArrays) -> FloatArray:
    """Replay ``rater`` event by event: each start predicts its own match, each end rates its
    own. Slow; :func:`replay` gives the same predictions (the tests compare them)."""
    predictor = Predictor(rater)
    p = np.full(arrays.pair_y.size, np.nan)
    for e in arrays.events:
        if e >= 0:
            ms = np.array([e], dtype=np.int64)
            pairs = arrays.pairs_of(ms)
            if arrays.duel:
                p[pairs] = predictor.duels(arrays.duel_a[ms], arrays.duel_b[ms])
            else:
                p[pairs] = predictor.pairs(arrays, ms, pairs)
        else:
            rater.update([arrays.games[~e]])
    return p


# ----------------------------------------------------------------------------------------------
# Scores


def pair_scores(p: FloatArray, y: FloatArray) -> list[tuple[str, float, int]]:
    """Return ``(metric, value, n)`` of predictions ``p`` against outcomes ``y`` (see the module
    docstring): log loss and Brier score on every pair, pair order on the decided ones."""
    n = int(p.size)
    if n == 0:
        return [(metric, math.nan, 0) for metric in METRICS]
    q = np.clip(p, CLIP, 1.0 - CLIP)
    log_loss = float(np.mean(-(y * np.log(q) + (1.0 - y) * np.log1p(-q))))
    brier = float(np.mean((p - y) ** 2))
    decided = y != 0.5
    pd_, yd = p[decided], y[decided]
    right = np.where(pd_ == 0.5, 0.5, ((pd_ > 0.5) == (yd == 1.0)).astype(np.float64))
    order = float(right.mean()) if right.size else math.nan
    return [("log_loss", log_loss, n), ("brier", brier, n), ("pair_order", order, int(right.size))]


def calibration_curve(
    p: FloatArray, y: FloatArray, bins: int = 10, *, symmetric: bool = False
) -> pd.DataFrame:
    """Return ``bin, lo, hi, predicted, observed, n``: ``bins`` equal bins of ``p`` on [0, 1]
    (the last one closed), the mean prediction and mean outcome in each (NaN where empty).

    ``symmetric``: count every pair both ways, (p, y) for the first side and (1 - p, 1 - y) for
    the second, so that the curve does not depend on which side a log lists first (lobbysim's
    own records, for one, usually list the weaker-rated side first).
    """
    if symmetric:
        p, y = np.concatenate([p, 1.0 - p]), np.concatenate([y, 1.0 - y])
    index = np.minimum((p * bins).astype(np.int64), bins - 1)
    n = np.bincount(index, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = np.bincount(index, weights=p, minlength=bins) / n
        observed = np.bincount(index, weights=y, minlength=bins) / n
    edges = np.arange(bins + 1) / bins
    return pd.DataFrame(
        {
            "bin": np.arange(bins),
            "lo": edges[:-1],
            "hi": edges[1:],
            "predicted": predicted,
            "observed": observed,
            "n": n,
        }
    )


def oracle_predictions(arrays: LogArrays, truth: Truth) -> FloatArray:
    """Return the oracle's P(a beats b) per pair: the Gaussian formula on true skills with no
    rating variance (1v1: ``Phi((s_a - s_b) / sqrt(2 beta2))``)."""
    if truth.skill.size < arrays.players:
        raise ValueError(
            f"truth has skills of {truth.skill.size} players, the log has {arrays.players}"
        )
    skill = truth.skill[arrays.seat_player]
    n = arrays.side_n.astype(np.float64)
    mean = np.bincount(arrays.seat_side, weights=skill, minlength=n.size) / n
    zero = np.zeros(arrays.pair_a.size)
    a, b = arrays.pair_a, arrays.pair_b
    return gaussian_probability(mean[a], zero, n[a], mean[b], zero, n[b], truth.beta2)


# ----------------------------------------------------------------------------------------------
# The whole method


@dataclass
class RaterScores:
    """What :func:`score_log` found.

    Attributes:
        scores: ``rater, part, metric, value, n`` (tidy): every rater's, and the oracle's with a
            truth, on every part of :data:`PARTS` (metrics :data:`METRICS`).
        calibration: ``rater, part, bin, lo, hi, predicted, observed, n`` on ``all`` and
            ``second`` (10 bins of predicted probability).
        grid: ``rater, setting, params, log_loss, n, seconds, chosen``: each setting tried and
            its log loss on the first part.
        chosen: each rater's parameters as replayed over the whole log.
        labels: each rater's name with its chosen parameters, as the terminal lines show it.
        speed: ``rater, setting, matches, seconds, matches_per_s`` of every replay.
        pairs: one row per pair of sides (``match, side_a, side_b, outcome, part,
            experienced``) and each rater's (and the oracle's) prediction in a column.
        split, first_matches, experienced: the split fraction, the matches in the first part,
            and the earlier matches every player needs for the ``*_experienced`` parts.
        matches, players, duel: the log's size, and whether every match is one player against
            one (then ``n`` counts matches).
        tuned: whether the grids were searched (else every rater ran as given).
        notes: what was left out or assumed (e.g. openskill not installed).
    """

    scores: pd.DataFrame
    calibration: pd.DataFrame
    grid: pd.DataFrame
    chosen: dict[str, dict[str, Any]]
    labels: dict[str, str]
    speed: pd.DataFrame
    pairs: pd.DataFrame
    split: float
    first_matches: int
    experienced: int
    matches: int
    players: int
    duel: bool
    tuned: bool = True
    source: str = "log"
    notes: list[str] = field(default_factory=list)

    def value(self, rater: str, part: str, metric: str) -> float:
        """Return one score (NaN if absent)."""
        rows = self.scores[
            (self.scores["rater"] == rater)
            & (self.scores["part"] == part)
            & (self.scores["metric"] == metric)
        ]
        return float(rows["value"].iloc[0]) if len(rows) else math.nan

    def count(self, rater: str, part: str, metric: str = "log_loss") -> int:
        """Return the ``n`` of one score (0 if absent)."""
        rows = self.scores[
            (self.scores["rater"] == rater)
            & (self.scores["part"] == part)
            & (self.scores["metric"] == metric)
        ]
        return int(rows["n"].iloc[0]) if len(rows) else 0


def params_label(params: Mapping[str, Any]) -> str:
    """Return ``"beta^2 2.5, tau^2 0.01"`` of a rater's parameters (a period in minutes)."""
    parts = []
    for key, value in params.items():
        text = f"{value:g}" if isinstance(value, float | int) else str(value)
        if key == "period":
            text += " min"
        parts.append(f"{PARAM_LABELS.get(key, key)} {text}")
    return ", ".join(parts)


def _spec(rater: str | PluginSpec) -> PluginSpec:
    return PluginSpec(rater) if isinstance(rater, str) else rater


def _settings(spec: PluginSpec, grid: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Return the settings to try: the grid's over the spec's parameters, a grid key the spec
    sets held at the spec's value (distinct settings only)."""
    base = dict(spec.params)
    if not grid:
        return [base]
    out: list[dict[str, Any]] = []
    for setting in grid:
        merged = {**setting, **base}
        if merged not in out:
            out.append(merged)
    return out


def _build(
    spec: PluginSpec, params: Mapping[str, Any], players: int, prior: tuple[float, float]
) -> Rater:
    rater = RATERS.create(spec.name, params)
    if players:
        ids = np.arange(players, dtype=np.int64)
        rater.add_players(ids, np.full(players, prior[0]), np.full(players, prior[1]))
    return rater


def _timed_replay(
    spec: PluginSpec,
    params: Mapping[str, Any],
    arrays: LogArrays,
    events: list[int],
    prior: tuple[float, float],
) -> tuple[FloatArray, float]:
    rater = _build(spec, params, arrays.players, prior)
    started = time.perf_counter()
    p = replay(rater, arrays, events)
    return p, time.perf_counter() - started


def score_log(
    log: MatchLog,
    raters: Iterable[str | PluginSpec] | None = None,
    *,
    truth: Truth | None = None,
    split: float = 0.5,
    tune: bool = True,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    experienced: int = 10,
    prior: tuple[float, float] = (0.0, 4.0),
    bins: int = 10,
    progress: Callable[[str], None] | None = None,
) -> RaterScores:
    """Score raters on a match log (the method is the module docstring's).

    Args:
        log: the match log.
        raters: rater names or specs (a scenario's ``raters.driver`` and ``raters.shadows``);
            default :data:`DEFAULT_RATERS`. A spec's parameters are held fixed; the grid tunes
            the others. openskill is skipped, with a note, where its package is not installed.
        truth: the true skills and performance variance, for the oracle's scores.
        split: the share of the matches (by start) in the first part, in (0, 1).
        tune: grid-search each rater on the first part (else replay the specs as given).
        grids: settings to try per rater name, instead of :data:`GRIDS`.
        experienced: the earlier finished matches every player of a match needs for the
            ``*_experienced`` parts.
        prior: the prior ``(mu0, var0)`` every player starts with.
        bins: calibration bins.
        progress: called with a line as each rater's replays finish.

    Raises:
        ValueError: a split outside (0, 1), a negative ``experienced``, or a rater the
            registry does not know (openskill without its package is skipped instead).
    """
    if not 0.0 < split < 1.0:
        raise ValueError(f"split must be in (0, 1), got {split!r}")
    if experienced < 0:
        raise ValueError(f"experienced must be >= 0, got {experienced!r}")
    specs = [_spec(r) for r in (DEFAULT_RATERS if raters is None else raters)]
    arrays = LogArrays.from_log(log)
    n_first = math.floor(split * arrays.matches)
    grids = GRIDS if grids is None else grids
    notes: list[str] = []
    predictions: dict[str, FloatArray] = {}
    chosen: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    grid_rows: list[dict[str, Any]] = []
    speed_rows: list[dict[str, Any]] = []
    first_events = arrays.events_before(n_first)
    first_pairs = arrays.pair_match < n_first
    for spec in specs:
        settings = _settings(spec, grids.get(spec.name) if tune else None)
        try:
            _build(spec, settings[0], 0, prior)
        except ValueError as exc:
            if spec.name == "openskill" and "not installed" in str(exc):
                notes.append(f"openskill skipped: {exc}")
                continue
            raise
        label = spec.name
        while label in predictions:  # the same rater twice: named by its own parameters
            label = f"{label} ({params_label(spec.params) or 'again'})"
        best = settings[0]
        if tune and len(settings) > 1 and n_first > 0:
            search = _Search(spec, label, arrays, first_events, first_pairs, prior, n_first)
            best = search.run(settings)
            grid_rows.extend(search.rows)
            speed_rows.extend(search.speed)
            notes.extend(
                _edge_notes(spec.name, label, search.tried, search.losses, best, spec.params)
            )
        p, seconds = _timed_replay(spec, best, arrays, arrays.events, prior)
        speed_rows.append(_speed(label, params_label(best), arrays.matches, seconds))
        predictions[label] = p
        chosen[label] = dict(best)
        labels[label] = f"{spec.name} ({params_label(best)})" if best else spec.name
        for row in grid_rows:
            if row["rater"] == label:
                row["chosen"] = row["params"] == params_label(best)
        if progress is not None:
            progress(f"{label}: {arrays.matches / max(seconds, 1e-9):,.0f} matches/s")
    if truth is not None:
        predictions[ORACLE] = oracle_predictions(arrays, truth)
    if truth is not None:
        labels[ORACLE] = f"{ORACLE} (true skills, beta^2 {truth.beta2:g})"
    pair_part = np.where(first_pairs, "first", "second")
    seasoned = arrays.seen[arrays.pair_match] >= experienced
    masks = {
        "all": np.ones(arrays.pair_y.size, dtype=bool),
        "first": first_pairs,
        "second": ~first_pairs,
        "all_experienced": seasoned,
        "second_experienced": seasoned & ~first_pairs,
    }
    rows = []
    curves = []
    y = arrays.pair_y
    for name, p in predictions.items():
        for part, mask in masks.items():
            for metric, value, n in pair_scores(p[mask], y[mask]):
                rows.append({"rater": name, "part": part, "metric": metric, "value": value, "n": n})
        for part in ("all", "second"):
            curve = calibration_curve(p[masks[part]], y[masks[part]], bins, symmetric=True)
            curve.insert(0, "part", part)
            curve.insert(0, "rater", name)
            curves.append(curve)
    pairs = pd.DataFrame(
        {
            "match": arrays.pair_match,
            "side_a": arrays.pair_a - arrays.side_lo[arrays.pair_match],
            "side_b": arrays.pair_b - arrays.side_lo[arrays.pair_match],
            "outcome": y,
            "part": pair_part,
            "experienced": seasoned,
            **predictions,
        }
    )
    if not arrays.duel and arrays.matches:
        notes.append("scored on pairs of sides: a match of k sides counts k (k - 1) / 2 pairs")
    draws = int((y == 0.5).sum())
    if draws:
        notes.append(
            f"{draws:,} drawn pairs: outcome 1/2 in log loss and Brier, left out of pair order"
        )
    grid_frame = pd.DataFrame(
        grid_rows,
        columns=["rater", "setting", "params", "log_loss", "n", "seconds", "chosen"],
    )
    return RaterScores(
        scores=pd.DataFrame(rows, columns=["rater", "part", "metric", "value", "n"]),
        calibration=pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(),
        grid=grid_frame,
        chosen=chosen,
        labels=labels,
        speed=pd.DataFrame(
            speed_rows, columns=["rater", "setting", "matches", "seconds", "matches_per_s"]
        ),
        pairs=pairs,
        split=split,
        first_matches=n_first,
        experienced=experienced,
        matches=arrays.matches,
        players=arrays.players,
        duel=arrays.duel,
        tuned=tune and n_first > 0,
        source=log.source,
        notes=notes,
    )


class _Search:
    """A rater's grid search on the first part: each setting replayed over it and scored by log
    loss (:attr:`rows`, :attr:`speed`), the grid extended past a chosen value at its end."""

    def __init__(
        self,
        spec: PluginSpec,
        label: str,
        arrays: LogArrays,
        events: list[int],
        pairs: NDArray[np.bool_],
        prior: tuple[float, float],
        matches: int,
    ) -> None:
        self.spec, self.label, self.arrays, self.matches = spec, label, arrays, matches
        self.events, self.pairs, self.prior = events, pairs, prior
        self.tried: list[dict[str, Any]] = []
        self.losses: list[float] = []
        self.rows: list[dict[str, Any]] = []
        self.speed: list[dict[str, Any]] = []

    def loss(self, setting: dict[str, Any]) -> float:
        """Return ``setting``'s log loss on the first part (and record it)."""
        p, seconds = _timed_replay(self.spec, setting, self.arrays, self.events, self.prior)
        ((_, loss, n), *_rest) = pair_scores(p[self.pairs], self.arrays.pair_y[self.pairs])
        self.rows.append(
            {
                "rater": self.label,
                "setting": len(self.tried),
                "params": params_label(setting),
                "log_loss": loss,
                "n": n,
                "seconds": seconds,
            }
        )
        self.tried.append(setting)
        self.losses.append(loss)
        self.speed.append(_speed(self.label, params_label(setting), self.matches, seconds))
        return loss

    def valid(self, setting: dict[str, Any]) -> bool:
        """Return whether ``setting`` is within :data:`RANGES` and builds a rater."""
        ranges = RANGES.get(self.spec.name, {})
        for key, (lo, hi) in ranges.items():
            if key in setting and not lo <= setting[key] <= hi:
                return False
        try:
            _build(self.spec, setting, 0, self.prior)
        except ValueError:
            return False
        return True

    def run(self, settings: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Return the best of ``settings`` (the first on a tie), extended (:func:`_extend`)."""
        losses = [self.loss(setting) for setting in settings]
        best = settings[losses.index(min(losses))]
        best, _ = _extend(best, min(losses), settings, self.spec.params, self.loss, self.valid)
        return best


def _edge(
    key: str, value: Any, settings: Sequence[Mapping[str, Any]], fixed: Mapping[str, Any]
) -> tuple[str, float] | None:
    """Return which end of the values tried for ``key`` the chosen ``value`` is (``smallest``
    or ``largest``) and the next value past it, at the spacing of the last two values (times
    their ratio where both are positive, else plus their difference); None where it is inside
    the range, the spec sets the parameter, fewer than two values were tried, or the end is a
    smallest 0 (nothing below it: no drift)."""
    if key in fixed or not isinstance(value, float | int) or isinstance(value, bool):
        return None
    tried = sorted({s[key] for s in settings if isinstance(s.get(key), float | int)})
    if len(tried) < 2 or value not in (tried[0], tried[-1]):
        return None
    if value == tried[-1]:
        before = tried[-2]
        step = value * (value / before) if before > 0 else value + (value - before)
        return "largest", float(step)
    after = tried[1]
    if value <= 0:
        return None
    return "smallest", float(value * (value / after))


def _extend(
    best: dict[str, Any],
    best_loss: float,
    settings: Sequence[Mapping[str, Any]],
    fixed: Mapping[str, Any],
    loss_of: Callable[[dict[str, Any]], float],
    valid: Callable[[dict[str, Any]], bool],
) -> tuple[dict[str, Any], float]:
    """Extend the grid past each parameter whose chosen value ends its range: one parameter
    at a time (the others at the best setting), up to :data:`EXTEND_STEPS` steps, while the
    first-part loss keeps falling; return the best setting and its loss."""
    seen = [dict(s) for s in settings]
    for key in list(best):
        for _ in range(EXTEND_STEPS):
            edge = _edge(key, best[key], seen, fixed)
            if edge is None:
                break
            candidate = {**best, key: edge[1]}
            if candidate in seen or not valid(candidate):
                break
            seen.append(candidate)
            loss = loss_of(candidate)
            if not loss < best_loss - MIN_GAIN:
                break
            best, best_loss = candidate, loss
    return best, best_loss


def _edge_notes(
    rater: str,
    label: str,
    settings: Sequence[Mapping[str, Any]],
    losses: Sequence[float],
    best: Mapping[str, Any],
    fixed: Mapping[str, Any],
) -> list[str]:
    """Return a note for each tuned parameter whose chosen value still ends the values tried
    (the grid and its extensions: :func:`_extend`; but 0, the least there is) and beats its
    neighbour there (the others as chosen) by more than :data:`MIN_GAIN`."""
    notes = []
    loss_of = {params_label(s): loss for s, loss in zip(settings, losses, strict=True)}
    for key, value in best.items():
        edge = _edge(key, value, settings, fixed)
        if edge is None:
            continue
        line = sorted(
            s[key] for s in settings if all(s.get(k) == v for k, v in best.items() if k != key)
        )
        if len(line) > 1:  # else no neighbour with the others as chosen: noted
            neighbour = line[1] if edge[0] == "smallest" else line[-2]
            gain = loss_of[params_label({**best, key: neighbour})] - loss_of[params_label(best)]
            if gain <= MIN_GAIN:
                continue
        bounds = RANGES.get(rater, {}).get(key)
        within = f", within {bounds[0]:g} to {bounds[1]:g}" if bounds else ""
        notes.append(
            f"{label}: {params_label({key: value})} is the {edge[0]} value tried, the grid "
            f"extended as far as allowed (up to {EXTEND_STEPS} steps{within}); the best may "
            "lie further"
        )
    return notes


def _speed(rater: str, setting: str, matches: int, seconds: float) -> dict[str, Any]:
    return {
        "rater": rater,
        "setting": setting,
        "matches": matches,
        "seconds": seconds,
        "matches_per_s": matches / seconds if seconds > 0 else math.inf,
    }


def scores_text(result: RaterScores, width: int = 100) -> list[str]:
    """Return the scores as terminal lines of at most ``width`` characters: the held-out
    (second part) log loss, Brier score and pair order of each rater beside the oracle's, the
    same on experienced players, the replay speed and the notes."""
    unit = "matches" if result.duel else "pairs"
    first = next(iter(result.labels), "")
    n_second = result.count(first, "second")
    n_exp = result.count(first, "second_experienced")
    how = (
        f"tuned on the first {result.first_matches:,} matches by start (least log loss)"
        if result.tuned
        else f"as given (not tuned); the first part is {result.first_matches:,} matches"
    )
    lines = textwrap.wrap(
        f"Raters on {result.source}: {result.matches:,} matches, {result.players:,} players; "
        f"{how}; scored on the {n_second:,} {unit} of the second part, each predicted before "
        "it was rated.",
        width,
    )
    oracle = ORACLE in result.labels

    def metrics(name: str, part: str) -> str:
        text = f"log loss {result.value(name, part, 'log_loss'):.3f}"
        if oracle and name != ORACLE:
            text += f" (oracle {result.value(ORACLE, part, 'log_loss'):.3f})"
        return (
            f"{text}, Brier {result.value(name, part, 'brier'):.3f}, "
            f"pair order {result.value(name, part, 'pair_order'):.3f}"
        )

    def line(head: str, body: str, indent: str = "") -> list[str]:
        if len(indent) + len(head) + len(body) <= width:
            return [indent + head + body]
        return [*textwrap.wrap(indent + head, width), *textwrap.wrap(indent + "  " + body, width)]

    names = [n for n in result.labels if n != ORACLE] + ([ORACLE] if oracle else [])
    for name in names:
        lines += line(f"{result.labels[name]}: ", metrics(name, "second"))
    if n_exp:
        lines += textwrap.wrap(
            f"Players with >= {result.experienced} earlier matches, {n_exp:,} {unit} of the "
            "second part (a rater cannot know a newcomer):",
            width,
        )
        for name in names:
            lines += line(f"{name}: ", metrics(name, "second_experienced"), "  ")
    full = result.speed[result.speed["matches"] == result.matches]
    if len(full):
        speeds = ", ".join(
            f"{row.rater} {row.matches_per_s:,.0f}" for row in full.itertuples(index=False)
        )
        lines += textwrap.wrap(f"Replay speed (matches/s): {speeds}", width)
    for note in result.notes:
        lines += textwrap.wrap(f"Note: {note}", width, subsequent_indent="  ")
    return lines
