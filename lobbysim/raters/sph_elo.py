"""The SPH Elo rater: the ZoneStats score-per-hour Elo over a player table.

``sph_elo`` (:class:`SPHEloRater`): the ZoneStats score-per-hour Elo of
:mod:`lobbysim.skill.sph_elo` (docs/model.md 3.3); SPH decides every game, ``1v1`` included.
Ordinary 1v1 games (two registered players on different sides, with minutes > 0) take a
vectorised path tested to equal :func:`~lobbysim.skill.sph_elo.rating_changes`
(:mod:`lobbysim.raters.sph_elo_duels`); team and free-for-all games a path on floats (or, in a
wave of many, on arrays) tested to equal it too; every other game goes through
:func:`~lobbysim.skill.sph_elo.rating_changes` itself. (This module is the rater; the rating
arithmetic itself is :mod:`lobbysim.skill.sph_elo`.)

The win model is the Elo's own predicted outcome, ``1 / (1 + exp(-(R_a - R_b) / T))``, evaluated
as the updates evaluate it (:func:`~lobbysim.raters.sph_elo_duels.predicted_hi`); the match
quality is ``1 - |2 P - 1|``
(:class:`~lobbysim.raters.base.EvenMatchQuality`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from lobbysim.raters.base import (
    RATERS,
    EvenMatchQuality,
    FloatArray,
    IdArray,
    PlayerTable,
    compare_sph,
    float_array,
    waves,
)
from lobbysim.raters.sph_elo_duels import predicted_hi, rate_duels
from lobbysim.records.rows import DuelBatch, GameResult
from lobbysim.skill.sph_elo import (
    Participant,
    SPHParams,
    cap_scale,
    rating_changes,
)
from lobbysim.validation import real_parameter

MAX_SCALE = 1e6
"""The largest ``t`` and ``game_mult`` (ZoneStats: 120 and 2); see :class:`SPHEloRater`."""
MIN_GAME_MULT = 1e-6
"""The smallest ``game_mult``: below, a game's change is lost in rounding the ratings."""
MIN_GAME_LENGTH = 0.001
"""The smallest ``max_game_length``, in minutes, for the same reason."""
MAX_RATING = 1e6
"""The largest initial rating, either sign (ZoneStats starts players at 500)."""


@RATERS.register
@dataclass(frozen=True, eq=False)
class SPHEloRater(EvenMatchQuality):
    """The ZoneStats score-per-hour Elo (docs/model.md 3.3) over a player table.

    Every player starts at ``initial_rating`` (the prior beliefs given to :meth:`add_players` are
    ignored). After each :meth:`update`, :attr:`last_batch_change_sums` holds the sum of the
    rating changes of each game of the batch, in order (0 up to rounding: the rating is
    zero-sum).

    Args:
        t: logistic scale T of the predicted outcome, in (0, 1e6] (ZoneStats: 120);
            :attr:`beta2` squares it, which overflows near 1e154.
        game_mult: rating points per minute of a pair's shared time, in [1e-6, 1e6]
            (ZoneStats: 2): the changes it scales overflow near 1e308, and below 1e-6 a
            game's change is lost in rounding the ratings (no Kendall tau).
        max_game_length: cap in minutes on each pair's time factor, at least 0.001 (``.inf``:
            no cap), for the same rounding.
        initial_rating: the rating of a new player, |r| <= 1e6 (ZoneStats: 500): far beyond,
            a game's change is lost in rounding (every rating stays equal).

    Raises:
        ValueError: if a parameter is out of range; the message names it and its value.
    """

    name: ClassVar[str] = "sph_elo"
    has_variance: ClassVar[bool] = False
    skill_scale: ClassVar[bool] = False
    #: Replayed as the elo family (:func:`~lobbysim.raters.base.replay_family`): the Elo's
    #: logistic of the ratings, of scale ``t``.
    replay_family: ClassVar[str] = "elo"

    t: float = 120.0
    game_mult: float = 2.0
    max_game_length: float = 20.0
    initial_rating: float = 500.0
    last_batch_change_sums: list[float] = field(
        init=False, repr=False, compare=False, default_factory=list
    )
    _params: SPHParams = field(init=False, repr=False, compare=False)
    _table: PlayerTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate the parameters (via :class:`SPHParams`) and create the empty table."""
        real_parameter("t", self.t, gt=0.0, le=MAX_SCALE)
        real_parameter("game_mult", self.game_mult, ge=MIN_GAME_MULT, le=MAX_SCALE)
        if not (self.max_game_length == math.inf and not isinstance(self.max_game_length, bool)):
            real_parameter("max_game_length", self.max_game_length, ge=MIN_GAME_LENGTH)
        real_parameter("initial_rating", self.initial_rating, ge=-MAX_RATING, le=MAX_RATING)
        params = SPHParams(self.t, self.game_mult, self.max_game_length, self.initial_rating)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_table", PlayerTable(self.name, 1))

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start new players at ``initial_rating``; ``mu0`` and ``var0`` are only size-checked."""
        size = np.asarray(ids).size
        float_array("mu0", mu0, size, self.name)
        float_array("var0", var0, size, self.name)
        self._table.add(ids, [np.full(size, float(self.initial_rating))])

    def means(self, ids: IdArray) -> FloatArray:
        """Return the current ratings of ``ids``."""
        return self._table.columns[0][self._table.index(ids)]

    def variances(self, ids: IdArray) -> None:
        """Return ``None``: the SPH Elo keeps no variance."""
        return None

    @property
    def beta2(self) -> float:
        """``pi^2 t^2 / 6``: the variance of one player's performance in the Elo's own model.

        P(a beats b) = logistic((R_a - R_b) / t) is the model in which each performance is the
        rating plus Gumbel noise of scale t (the difference of two is logistic of scale t), whose
        variance is ``pi^2 t^2 / 6``, in rating points squared.
        """
        return math.pi**2 * self._params.t**2 / 6.0

    def win_probability(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return the predicted outcome ``1 / (1 + exp(-(R_a - R_b) / t))`` per pair."""
        ratings = self._table.columns[0]
        r_a = ratings[self._table.index(ids_a)]
        r_b = ratings[self._table.index(ids_b)]
        a_hi, predicted = predicted_hi(r_a, r_b, self._params.t)
        return np.where(a_hi, predicted, 1.0 - predicted)

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games in order (as if one at a time), wave by wave.

        Raises:
            KeyError: a registered seat's player id is unknown.
            ValueError: a game :func:`~lobbysim.skill.sph_elo.rating_changes` rejects.
        """
        if isinstance(games, DuelBatch):
            self._update_duels(games)
            return
        fast: list[bool] = []
        id_groups: list[Sequence[int]] = []
        for game in games:
            seats = game.seats
            if game.mode == "1v1" and len(seats) == 2:
                a, b = seats
                if (
                    a.registered
                    and b.registered
                    and a.player_id != b.player_id
                    and a.team is not None
                    and b.team is not None
                    and a.team != b.team
                ):
                    fast.append(True)
                    id_groups.append((a.player_id, b.player_id))
                    continue
            fast.append(False)
            id_groups.append([s.player_id for s in seats if s.registered])

        def duel(k: int) -> tuple[float, ...]:
            a, b = games[k].seats
            return (
                a.player_id,
                a.score,
                a.left - a.joined,
                b.player_id,
                b.score,
                b.left - b.joined,
            )

        self._rate(games, fast, id_groups, duel, games.__getitem__)

    def _update_duels(self, batch: DuelBatch) -> None:
        """:meth:`update` of 1v1 games given as columns: the same games on the same paths
        (ordinary games vectorised, a game with a guest through :func:`rating_changes`), their
        values read from the columns; a :class:`GameResult` is made only for a game with a
        guest."""
        fast = [ra and rb for ra, rb in zip(batch.registered_a, batch.registered_b, strict=True)]
        id_groups: list[Sequence[int]] = [
            (a, b) if ra and rb else [pid for pid, r in ((a, ra), (b, rb)) if r]
            for a, b, ra, rb in zip(
                batch.player_a,
                batch.player_b,
                batch.registered_a,
                batch.registered_b,
                strict=True,
            )
        ]
        ids_a, ids_b, score_a, score_b = (
            batch.player_a,
            batch.player_b,
            batch.score_a,
            batch.score_b,
        )
        start, end = batch.start, batch.end

        def duel(k: int) -> tuple[float, ...]:
            minutes = end[k] - start[k]  # both stints last the whole game
            return (ids_a[k], score_a[k], minutes, ids_b[k], score_b[k], minutes)

        self._rate(batch, fast, id_groups, duel, batch.result)

    def _rate(
        self,
        games: Sequence[GameResult],
        fast: list[bool],
        id_groups: list[Sequence[int]],
        duel: Callable[[int], tuple[float, ...]],
        game: Callable[[int], GameResult],
    ) -> None:
        """Rate a batch wave by wave: the ordinary 1v1 games (``fast``) vectorised, the others
        one by one; ``duel(k)`` is game k's (player, score, minutes) of side a then side b,
        ``game(k)`` the game itself."""
        table = self._table
        table.index(np.fromiter(itertools.chain.from_iterable(id_groups), np.int64))
        sums = [0.0] * len(games)
        table.begin()
        try:
            for wave in waves(id_groups):
                duels = [k for k in wave if fast[k]]
                slow = rate_duels(table, self._params, duels, duel, sums)
                self._apply_general(sorted([k for k in wave if not fast[k]] + slow), game, sums)
        except BaseException:
            table.rollback()
            raise
        table.commit()
        self.last_batch_change_sums[:] = sums

    def _apply_general(
        self, ks: list[int], game: Callable[[int], GameResult], sums: list[float]
    ) -> None:
        """Rate the games ``game(k)`` (no rated player in two of them) with
        :func:`rating_changes`, in order; ``sums`` gets the sum of each game's changes.

        The changes of the games :meth:`_changes_plain` rates are written together after the
        loop: each game reads only its own players' ratings, which no other game of the wave
        writes, and each rating gets ``rating + change`` as a write per game would give it.
        """
        ids: list[int] = []
        changes: list[float] = []
        if len(ks) >= WAVE_GAMES:  # many games: their plain ones rated together, vectorised
            ids, changes, unplain = self._changes_wave([(k, game(k)) for k in ks], sums)
            for k, one in unplain:  # players of their own: rated in any order
                sums[k] = self._apply_checked(one)
            ks = []
        for k in ks:
            one = game(k)
            quick = self._changes_plain(one)
            if quick is None:
                sums[k] = self._apply_checked(one)
                continue
            ids += quick[0]
            changes += quick[1]
            sums[k] = math.fsum(quick[1]) if quick[0] else 0.0
        if ids:
            ratings = self._table.columns[0]
            idx = np.array(ids, dtype=np.intp)
            self._table.write(idx, [ratings[idx] + np.array(changes)])

    def _changes_plain(self, game: GameResult) -> tuple[list[int], list[float]] | None:
        """Return the ids and rating changes :func:`rating_changes` gives for ``game``, or
        ``None`` for a game it must judge itself (a seat it would reject, or an unusual one).

        The same arithmetic in the same order (the pair loop over seats with minutes > 0 in seat
        order, :func:`pair_adjustment`'s operations with :func:`math.exp` as it has them,
        :func:`math.fsum` of each player's pair adjustments, the same cap), without building and
        validating :class:`Participant` objects: bit for bit the same changes (tested against
        :func:`rating_changes` in tests/sim/test_fast_paths.py).
        SPH is compared exactly as :func:`compare_sph` does (``score_a * minutes_b`` against
        ``score_b * minutes_a``, exact fractions only where the rounded products are equal).
        """
        if not _is_plain(game):
            return None
        seats = game.seats
        rated = [s for s in seats if s.registered]
        team_game = bool(seats) and seats[0].team is not None
        p = self._params
        t, game_mult, cap = p.t, p.game_mult, p.max_game_length
        ratings = self._table.columns[0]
        pre = [ratings.item(s.player_id) for s in rated]
        scores = [s.score for s in rated]
        minutes = [s.left - s.joined for s in rated]
        contributions: list[list[float]] = [[] for _ in rated]
        active = [k for k in range(len(rated)) if minutes[k] > 0]
        exp = math.exp
        for x, a in enumerate(active):
            team_a, score_a, min_a, r_a = rated[a].team, scores[a], minutes[a], pre[a]
            time_a = min_a if min_a < cap else cap  # min(cap, min_a), as min() picks it
            mine = contributions[a]
            for b in active[x + 1 :]:
                if team_game and team_a == rated[b].team:
                    continue
                score_b, min_b, r_b = scores[b], minutes[b], pre[b]
                u = score_a * min_b
                v = score_b * min_a
                if u == v:
                    sign = compare_sph(
                        np.array([score_a]),
                        np.array([min_a]),
                        np.array([score_b]),
                        np.array([min_b]),
                    )[0]
                    outcome = 0.5 * (float(sign) + 1.0)
                else:
                    outcome = 1.0 if u > v else 0.0
                # min(cap, min_a, min_b) and pair_adjustment, step by step
                time = min_b if min_b < time_a else time_a
                if r_a >= r_b:
                    predicted_a = 1.0 / (1.0 + exp(-((r_a - r_b) / t)))
                    indiv = (outcome - predicted_a) * game_mult * time
                else:
                    predicted_b = 1.0 / (1.0 + exp(-((r_b - r_a) / t)))
                    indiv = -((1.0 - outcome - predicted_b) * game_mult * time)
                mine.append(indiv)
                contributions[b].append(-indiv)
        ids = [s.player_id for s in rated]
        offsets = [math.fsum(values) for values in contributions]
        scale = cap_scale(
            dict(zip(ids, offsets, strict=True)), dict(zip(ids, minutes, strict=True)), p.game_mult
        )
        return ids, [offset * scale for offset in offsets]

    def _changes_wave(
        self, games: list[tuple[int, GameResult]], sums: list[float]
    ) -> tuple[list[int], list[float], list[tuple[int, GameResult]]]:
        """Return the ids and rating changes of the plain games (:func:`_is_plain`) among
        ``games`` (position, game) of one wave, as :meth:`_changes_plain` gives them game after
        game, bit for bit, and the other games, for :func:`rating_changes` to judge; ``sums``
        gets the sum of each plain game's changes.

        The pairs of every game are rated together: each float operation is the one
        :meth:`_changes_plain` does for a pair (IEEE arithmetic element-wise, in the same order,
        with :func:`math.exp` of each argument), a pair's values do not depend on the other
        pairs, and each player's offset is the :func:`math.fsum` of their pairs' adjustments,
        which is correctly rounded and hence the same in any order. The scale and the sums
        follow per game, as :func:`~lobbysim.skill.sph_elo.cap_scale` computes them. Tested
        against :meth:`_changes_plain` in tests/sim/test_fast_paths.py.
        """
        pid: list[int] = []
        side: list[int] = []
        score: list[float] = []
        minutes: list[float] = []
        rows: dict[int, list[list[int]]] = {}  # each game's active seats, by their number
        bounds = [0]
        team_games = False
        plain: list[tuple[int, GameResult]] = []
        unplain: list[tuple[int, GameResult]] = []
        inf = math.inf
        for entry in games:
            seats = entry[1].seats
            team_game = bool(seats) and seats[0].team is not None
            teams: dict[object, int] = {}
            active: list[int] = []
            seen: set[int] = set()
            base = len(pid)
            for s in seats:
                # _is_plain's checks, seat by seat
                team, player, joined, left, points = s.team, s.player_id, s.joined, s.left, s.score
                if (
                    (team is not None) != team_game
                    or type(points) is not float
                    or type(left) is not float
                    or type(joined) is not float
                    or not (0.0 <= points < inf)
                    or player in seen
                ):
                    break
                stint = left - joined
                if not (0.0 <= stint < inf):
                    break
                seen.add(player)
                if s.registered:
                    k = len(pid)
                    pid.append(player)
                    score.append(points)
                    minutes.append(stint)
                    # ffa: a distinct negative side per seat, so every two seats are opponents
                    side.append(teams.setdefault(team, len(teams)) if team_game else -1 - k)
                    if stint > 0:
                        active.append(k)
            else:
                plain.append(entry)
                team_games |= team_game
                if len(active) > 1:
                    rows.setdefault(len(active), []).append(active)
                bounds.append(len(pid))
                continue
            unplain.append(entry)  # a seat _is_plain refuses: its rows are taken back
            del pid[base:], score[base:], minutes[base:], side[base:]
        offsets = [0.0] * len(pid)
        if rows:
            firsts, seconds = [], []
            for m, group in rows.items():
                stacked = np.array(group, dtype=np.intp)
                i, j = _pair_indices(m)
                firsts.append(stacked[:, i].ravel())
                seconds.append(stacked[:, j].ravel())
            a, b = np.concatenate(firsts), np.concatenate(seconds)
            if team_games:  # teammates are never compared
                sides = np.array(side)
                keep = sides[a] != sides[b]
                a, b = a[keep], b[keep]
            p = self._params
            sc, mins = np.array(score), np.array(minutes)
            pre = self._table.columns[0][np.array(pid, dtype=np.intp)]
            score_a, min_a, score_b, min_b = sc[a], mins[a], sc[b], mins[b]
            outcome = 0.5 * (compare_sph(score_a, min_a, score_b, min_b) + 1.0)
            time = np.minimum(np.minimum(min_a, p.max_game_length), min_b)
            r_a, r_b = pre[a], pre[b]
            a_hi = r_a >= r_b
            # pair_adjustment from the higher-rated side (a on equal ratings)
            arguments = -(np.where(a_hi, r_a - r_b, r_b - r_a) / p.t)
            growth = np.array(list(map(math.exp, arguments.tolist())), dtype=np.float64)
            prediction_hi = 1.0 / (1.0 + growth)
            outcome_hi = np.where(a_hi, outcome, 1.0 - outcome)
            indiv_hi = (outcome_hi - prediction_hi) * p.game_mult * time
            indiv = np.where(a_hi, indiv_hi, -indiv_hi)
            # each seat's adjustments, seat after seat, each summed exactly
            owner = np.concatenate([a, b])
            order = np.argsort(owner, kind="stable")
            values = np.concatenate([indiv, -indiv])[order].tolist()
            ends = np.cumsum(np.bincount(owner, minlength=len(pid))).tolist()
            fsum = math.fsum
            offsets = [fsum(values[lo:hi]) for lo, hi in zip([0, *ends[:-1]], ends, strict=True)]
        game_mult = self._params.game_mult
        changes: list[float] = []
        for (k, _), lo, hi in zip(plain, bounds, bounds[1:], strict=False):
            if lo == hi:  # no rated seat
                sums[k] = 0.0
                continue
            game_offsets = offsets[lo:hi]
            largest = max(map(abs, game_offsets))  # cap_scale, on the game's lists
            scale = 1.0
            if largest != 0.0:
                scale = min(
                    1.0,
                    *[
                        m * game_mult / largest
                        for offset, m in zip(game_offsets, minutes[lo:hi], strict=True)
                        if abs(offset) == largest
                    ],
                )
            game_changes = [offset * scale for offset in game_offsets]
            sums[k] = math.fsum(game_changes)
            changes += game_changes
        return pid, changes, unplain

    def _apply_checked(self, game: GameResult) -> float:
        """Rate one game with :func:`rating_changes` itself; return the sum of its changes."""
        ratings = self._table.columns[0]
        participants = [
            Participant(
                s.player_id,
                s.team,
                s.score,
                s.minutes,
                s.registered,
                float(ratings[s.player_id]) if s.registered else None,
            )
            for s in game.seats
        ]
        changes = rating_changes(participants, self._params)
        if not changes:
            return 0.0
        ids = np.fromiter(changes, dtype=np.intp, count=len(changes))
        delta = np.fromiter(changes.values(), dtype=np.float64, count=len(changes))
        self._table.write(ids, [ratings[ids] + delta])
        return math.fsum(changes.values())


#: A wave of at least this many games other than ordinary 1v1 games rates its plain ones
#: together (:meth:`SPHEloRater._changes_wave`); fewer go one game at a time.
WAVE_GAMES = 4


def _is_plain(game: GameResult) -> bool:
    """Whether :meth:`SPHEloRater._changes_plain` rates ``game`` itself: every seat of one kind
    (team or free-for-all), a float score in [0, inf), a float stint of [0, inf) minutes, and no
    player twice; otherwise :func:`~lobbysim.skill.sph_elo.rating_changes` judges it."""
    seats = game.seats
    first_team = seats[0].team is None if seats else True
    seen: set[int] = set()
    for s in seats:
        if (
            (s.team is None) != first_team
            or type(s.score) is not float
            or type(s.left) is not float
            or type(s.joined) is not float
            or not (0.0 <= s.score < math.inf)
            or s.player_id in seen
        ):
            return False
        stint = s.left - s.joined
        if not (0.0 <= stint < math.inf):
            return False
        seen.add(s.player_id)
    return True


@functools.cache
def _pair_indices(m: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Return ``np.triu_indices(m, k=1)``: every pair of ``m`` seats (made once per size)."""
    i, j = np.triu_indices(m, k=1)
    return i.astype(np.intp), j.astype(np.intp)
