"""Raters replayed over a match log in time order, each match predicted before it is rated.

:class:`LogArrays` is a :class:`~lobbysim.calibration.matchlog.MatchLog` as the replay reads it,
built once; :func:`replay` runs a rater over it and returns the prediction it made of every pair
of sides of every match before that match was rated; :func:`oracle_predictions` gives the
predictions of the true skills (:class:`Truth`). :mod:`lobbysim.calibration.scores` scores and
tunes raters on these predictions. docs/calibrate.md ("Raters scored on the log") is the user's
account of the method; this docstring and that of :mod:`lobbysim.calibration.scores` are the
exact one.

**Replay.** The log's matches become events in time order: a match's end applies its update, a
match's start makes its prediction; at equal times ends come first (a match that starts the
moment another ends is predicted with that match's update applied), except that a match of zero
length ends after the starts at its time, so that its own prediction still comes first. Matches
ending together are rated in the order of their start. A prediction is therefore made from the
ratings as they stand at the match's start: after the updates of every match that ended at or
before that start, and of no other. The replay is exact but not event by event: it gathers
*stages*, predictions then updates, and closes a stage when a start reads a player an update of
the stage wrote (for Glicko-2, any update that closes a rating period writes every player; for a
rater declaring no replay family, every update does). Predictions within a stage are one
vectorised call and its updates one :meth:`~lobbysim.raters.Rater.update` call (which equals the
games one at a time, in order); the result is that of the event-by-event replay
(tests/calibration/test_scores.py holds the two side by side).

**Games the raters see.** Each match becomes one :class:`~lobbysim.records.rows.GameResult`: every
seat registered, its stint the match's ``[start, end]`` and its score ``max rank - rank`` in the
match (so the best side scores most, equal ranks score alike and scores per hour order the sides
as the ranks do: the SPH Elo and the pair rules read scores per hour). Two one-player sides with
different ranks make a ``1v1`` game won by the better rank; any other match with two sides, or
with sides of several players, is a ``team`` game (sides as teams, the winner the single best
rank, ``None`` if tied) and one-player sides of three or more a free-for-all (``ffa``). So a
drawn 1v1 is a team game of equal scores: the Bayesian rater takes it as no evidence (its pair
rule for equal SPH), the SPH Elo and Glicko-2 as a draw (1/2), openskill as equal ranks. The
openskill adapter ranks a team game's sides by the winner only (best side first, the others
equal). The Gaussian raters' predictions do not change when ``var0``, ``beta2`` and ``tau2`` are
scaled together, so a fixed ``var0`` costs the grids nothing. A match whose recorded length is
zero (rounded or missing times) would not move the SPH Elo, whose update is per minute: such a
match's stints are replayed as ``[end - L, end]``, ``L`` the median length of the log's matches
of positive length (:attr:`LogArrays.replay_length`; 1 minute if there are none); the other
raters read a stint only to see that two players met (Glicko-2's pairs in a team game) or through
a ratio of equal lengths, and the replay's times (its order, the rating periods) stay the
recorded ones.

**Entry.** A player enters the replay at the start of their first match, as a rating system
running at the time would have met them: added to the rater then, at the prior ``N(mu0, var0)``
(default ``N(0, 4)``, lobbysim's population prior with skill sd 2; the Bayesian and openskill
raters start there, the SPH Elo and Glicko-2 at their own initial ratings). Glicko-2 (the
``glicko2`` family) is replayed as a server runs it: its rating periods close on the clock (at
a match's start, every period that ended by then), and a newcomer is Glickman's unrated player
(the initial rating, deviation and volatility) in the first period that rates their games, not
one whose deviation grew by every period before they came. :mod:`lobbysim.calibration.entry`
states how (tests/calibration/test_glicko2_replay.py holds it against the paper's formulas).

**Predictions.** For two sides ``a`` and ``b`` each rater gives ``P(a beats b)``, with
``m`` a side's mean rating, ``s`` the sum of its players' rating variances and ``n`` its
players (every formula is the rater's own :meth:`~lobbysim.raters.Rater.win_probability` when
both sides have one player). The formula is the one of the *replay family* the rater declares
(``replay_family``, :func:`~lobbysim.raters.base.replay_family`), so a user's rater declaring
one is replayed as the built-ins of that family are:

* ``gaussian`` (``bayesian``, ``openskill``) and the oracle, ``elo`` (``sph_elo``) and
  ``glicko2`` (``glicko2``): the formulas of :mod:`lobbysim.calibration.probabilities`.
* ``generic``, a rater declaring no family: the mean of its ``win_probability`` over every two
  players of the two sides.

A match of ``k`` sides is scored on each of its ``k (k - 1) / 2`` pairs of sides (pairwise: a
free-for-all of 8 is 28 pairs); the outcome of a pair is 1 if side ``a`` ranked better, 0 if
worse, 1/2 if they drew. So ``n`` counts pairs, which are matches in a log of two-sided matches.

**Truth.** With :class:`Truth` (each player's true skill and the performance variance, known for
a log lobbysim generated) the oracle's predictions use the Gaussian formula above with the true
skills and no rating variance: for a 1v1 ``Phi((s_a - s_b) / sqrt(2 beta2))``. Where the log's
outcomes are drawn that way (a 1v1 game without quits), its expected log loss is the floor no
rater can beat; quits, scores deciding team games, or drifting skills make it an approximation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from lobbysim.calibration.entry import PRIOR, Entry
from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.probabilities import (
    elo_probability,
    gaussian_probability,
    glicko2_probability,
)
from lobbysim.raters import Rater
from lobbysim.raters.base import replay_family
from lobbysim.records.rows import GameResult, Seat, make_result, make_seat

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


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
    zero_length: int = 0  #: matches whose recorded length is 0
    replay_length: float = 1.0  #: the length, in minutes, they are replayed at

    @property
    def zero_share(self) -> float:
        """The share of the matches whose recorded length is 0."""
        return self.zero_length / self.matches if self.matches else 0.0

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
        zero = end <= start
        positive = (end - start)[~zero]
        length = float(np.median(positive)) if positive.size else 1.0
        stint = np.where(zero, end - length, start)
        players_of, games = _games(stint, end, seat_lo, player, side, rank, sides_per_match)
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
            zero_length=int(zero.sum()),
            replay_length=length,
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
    module docstring: modes, winners, scores ``max rank - rank``); ``start`` is the stints'
    start (a zero-length match's is ``end - replay_length``)."""
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
# Predictions, per rater family (the formulas: lobbysim/calibration/probabilities.py)


#: Which updates a prediction of each replay family reads (see :class:`Predictor`).
CONFLICTS = {"gaussian": "players", "elo": "players", "glicko2": "periods", "generic": "all"}


class Predictor:
    """P(side a beats side b) of a rater as its ratings stand, and which updates it reads.

    The rater's replay family (:func:`~lobbysim.raters.base.replay_family`, what the rater
    declares, never its class) chooses the formula. ``conflicts`` is ``"players"`` (a
    prediction reads only its players, whom only their own matches move), ``"periods"``
    (Glicko-2: ratings move only when a rating period closes, and then everybody's) or ``"all"``
    (a rater declaring no family: every update may move anything).
    """

    def __init__(self, rater: Rater) -> None:
        self.rater = rater
        self.period = math.inf
        self.family = replay_family(rater)  # what the rater declares (lobbysim.raters.base)
        self.conflicts = CONFLICTS[self.family]
        if self.family == "glicko2":
            self.period = float(rater.period)  # type: ignore[attr-defined]

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


def replay(
    rater: Rater,
    arrays: LogArrays,
    events: Sequence[int] | None = None,
    prior: tuple[float, float] = PRIOR,
) -> FloatArray:
    """Replay ``rater`` (fresh, no player added) over the log's events in stages (see the
    module docstring: each player enters at their first match's start, at ``prior``) and return
    its prediction for every pair of sides (NaN for the pairs of matches whose start is not
    among ``events``; default: every event)."""
    events = arrays.events if events is None else events
    predictor = Predictor(rater)
    entry = Entry(rater, arrays.players, arrays.matches, prior)
    p = np.full(arrays.pair_y.size, np.nan)
    players_of, games = arrays.players_of, arrays.games
    start, end = arrays.start, arrays.end
    conflicts = predictor.conflicts
    preds: list[int] = []
    ups: list[int] = []
    written: set[int] = set()
    everyone = False

    def flush() -> None:
        entry.add()
        if preds:
            ms = np.array(preds, dtype=np.int64)
            if arrays.duel:
                p[ms] = predictor.duels(arrays.duel_a[ms], arrays.duel_b[ms])
            else:
                pairs = arrays.pairs_of(ms)
                p[pairs] = predictor.pairs(arrays, ms, pairs)
            preds.clear()
        if ups:
            entry.update([games[m] for m in ups])
            ups.clear()

    for e in events:
        if e >= 0:
            if entry.glicko and entry.period_of(start[e]) > entry.clock:
                flush()
                entry.tick(start[e])
                written.clear()
                everyone = False
            elif everyone or (written and not written.isdisjoint(players_of[e])):
                flush()
                written.clear()
                everyone = False
            entry.gather(players_of[e], e)
            preds.append(e)
        else:
            m = ~e
            if entry.glicko:
                index = entry.period_of(end[m])
                if index > entry.clock:
                    if entry.waiting:  # not past a waiting player's first period in one update
                        flush()
                        written.clear()
                    entry.clock = index
                    everyone = True
            elif conflicts == "players":
                written.update(players_of[m])
            else:
                everyone = True
            ups.append(m)
    flush()
    return p


def replay_by_event(
    rater: Rater, arrays: LogArrays, prior: tuple[float, float] = PRIOR
) -> FloatArray:
    """Replay ``rater`` event by event: each start predicts its own match, each end rates its
    own (players entering, and Glicko-2's clock, as in :func:`replay`). Slow; :func:`replay`
    gives the same predictions (the tests compare them)."""
    predictor = Predictor(rater)
    entry = Entry(rater, arrays.players, arrays.matches, prior)
    p = np.full(arrays.pair_y.size, np.nan)
    for e in arrays.events:
        if e >= 0:
            t = float(arrays.start[e])
            if entry.glicko and entry.period_of(t) > entry.clock:
                entry.tick(t)
            entry.gather(arrays.players_of[e], e)
            entry.add()
            ms = np.array([e], dtype=np.int64)
            pairs = arrays.pairs_of(ms)
            if arrays.duel:
                p[pairs] = predictor.duels(arrays.duel_a[ms], arrays.duel_b[ms])
            else:
                p[pairs] = predictor.pairs(arrays, ms, pairs)
        else:
            m = ~e
            if entry.glicko:
                entry.clock = max(entry.clock, entry.period_of(float(arrays.end[m])))
            entry.update([arrays.games[m]])
    return p


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
