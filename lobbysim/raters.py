"""Raters: per-player skill estimates updated from finished games, behind one protocol.

A rater keeps one state row per player id (numpy arrays indexed by id, grown by doubling) and
turns :class:`~lobbysim.records.GameResult` records into new estimates. The simulator feeds every
rater the games that finished since its last matchmaking pass in one :meth:`Rater.update` call;
the result equals applying the games one at a time in the given order. For speed a batch is
split into maximal *waves* of consecutive games with no rated player in common: within a wave no
game reads what another writes, so each wave is computed with a few vectorised numpy calls.
An update is all or nothing: if any game is rejected, no rating changes.

Two raters are registered in :data:`RATERS`:

* ``bayesian`` (:class:`BayesianRater`): the Gaussian beliefs of the paper (DESIGN.md 3.1, the
  corrected TrueSkill form of :func:`lobbysim.skill.gaussian.update_1v1`). A ``1v1`` game updates
  both players by ``game.winner`` (a guest in the game: nothing changes for anybody). Team and
  free-for-all games follow DESIGN.md 3.4, with this **combination rule**. Every two rated
  players on opposing sides (team: different teams; ffa: every two) form a pair with weight
  ``w_ij = overlap([joined_i, left_i], [joined_j, left_j]) / game.length`` in [0, 1]. The pair is
  a 1v1 outcome decided by exact score per hour (``score_i * minutes_j`` against
  ``score_j * minutes_i``, ties by exact rational comparison); an SPH tie is no evidence and
  gives that pair no update. With ``n_i`` the number of i's pairs with ``w_ij > 0`` (tied pairs
  included) and ``dmu_ij``, ``f_ij = var_ij' / var_i`` i's change of mean and variance factor
  from the pairwise :func:`update_1v1` on the *pre-game* beliefs::

      mu_i  += sum_j (w_ij / n_i) * dmu_ij
      var_i *= prod_j f_ij ** (w_ij / n_i)

  The variance factor is a weighted geometric mean of factors in (0, 1] with weights summing to
  at most 1, so variances stay positive and never grow (without ``tau2``); a full-time game
  against one opponent is exactly one 1v1 update, and ``n_i`` opponents share one game's worth
  of evidence instead of counting as ``n_i`` games. Seats are put in player-id order before any
  arithmetic, so the result is bit-identical under any order of the seats. ``game.winner`` is not
  used in team and ffa games (SPH decides each pair). The dynamics variance ``tau2`` is added
  once per game, before the update, to every rated player who has at least one pair.
* ``sph_elo`` (:class:`SPHEloRater`): the ZoneStats score-per-hour Elo of
  :mod:`lobbysim.skill.sph_elo` (DESIGN.md 3.3); SPH decides every game, ``1v1`` included.
  Ordinary 1v1 games (two registered players on different sides, with minutes > 0) take a
  vectorised path tested to equal :func:`~lobbysim.skill.sph_elo.rating_changes`; every other
  game goes through :func:`~lobbysim.skill.sph_elo.rating_changes` itself.

Raters are SimPy-free and do no I/O. Player ids are non-negative ints; an unknown id of a rated
(registered) seat, or in :meth:`Rater.means`, is a :class:`KeyError` naming the id.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lobbysim.records import GameResult, Seat
from lobbysim.registry import Registry
from lobbysim.skill.gaussian import update_1v1
from lobbysim.skill.sph_elo import Participant, SPHParams, rating_changes

__all__ = ["RATERS", "BayesianRater", "Rater", "SPHEloRater"]

FloatArray = NDArray[np.float64]
IdArray = NDArray[np.int64]


@runtime_checkable
class Rater(Protocol):
    """Per-player skill estimates, updated from finished games.

    Class attributes: ``name`` (the registry key), ``has_variance`` (the rater keeps belief
    variances, as DrawChance and the knowledge gradient need) and ``skill_scale`` (ratings live on
    the true-skill scale, so their error against true skill is meaningful).
    """

    name: ClassVar[str]
    has_variance: ClassVar[bool]
    skill_scale: ClassVar[bool]

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start tracking new players with the population model's prior beliefs."""
        ...

    def means(self, ids: IdArray) -> FloatArray:
        """Return the current rating (belief mean) of each player."""
        ...

    def variances(self, ids: IdArray) -> FloatArray | None:
        """Return the belief variance of each player, or ``None`` if the rater keeps none."""
        ...

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games, in the given order."""
        ...


RATERS: Registry[Rater] = Registry("rater")


# --------------------------------------------------------------------------------------------
# Shared machinery: the per-player table, batch checks, waves, exact SPH comparison
# --------------------------------------------------------------------------------------------


class _PlayerTable:
    """Float columns indexed by player id, grown by doubling, with an undo journal.

    Writes go through :meth:`write`, which remembers the old values while a journal is open, so a
    batch update that fails half-way can be rolled back in time proportional to what it touched.
    """

    def __init__(self, rater: str, n_columns: int) -> None:
        self.rater = rater
        self.known = np.zeros(0, dtype=bool)
        self.columns: list[FloatArray] = [np.zeros(0) for _ in range(n_columns)]
        self._journal: list[tuple[NDArray[np.intp], list[FloatArray]]] | None = None

    def add(self, ids: ArrayLike, values: Sequence[FloatArray]) -> None:
        """Add players ``ids`` (new, non-negative, unique) with one value array per column."""
        idx = np.asarray(ids)
        if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
            raise ValueError(f"rater '{self.rater}': ids must be a 1-d array of ints, got {ids!r}")
        idx = idx.astype(np.intp)
        if idx.size == 0:
            return
        if idx.min() < 0:
            raise ValueError(f"rater '{self.rater}': player id {int(idx.min())} is negative")
        uniq, counts = np.unique(idx, return_counts=True)
        if (counts > 1).any():
            dup = int(uniq[np.argmax(counts > 1)])
            raise ValueError(f"rater '{self.rater}': player id {dup} is given twice")
        capacity = self.known.size
        old = idx[idx < capacity]
        if self.known[old].any():
            raise ValueError(
                f"rater '{self.rater}': player id {int(old[self.known[old]][0])} is already added"
            )
        needed = int(idx.max()) + 1
        if needed > capacity:
            new_capacity = max(needed, 2 * capacity, 16)
            self.known = np.concatenate([self.known, np.zeros(new_capacity - capacity, bool)])
            self.columns = [
                np.concatenate([col, np.zeros(new_capacity - capacity)]) for col in self.columns
            ]
        self.known[idx] = True
        for col, val in zip(self.columns, values, strict=True):
            col[idx] = val

    def index(self, ids: ArrayLike) -> NDArray[np.intp]:
        """Return ``ids`` as an index array; raise :class:`KeyError` naming an unknown id."""
        idx = np.asarray(ids)
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise KeyError(f"rater '{self.rater}': player ids must be ints, got {ids!r}")
        idx = idx.astype(np.intp)
        bad = (idx < 0) | (idx >= self.known.size)
        bad[~bad] = ~self.known[idx[~bad]]
        if bad.any():
            raise KeyError(f"rater '{self.rater}': unknown player id {int(idx[bad].flat[0])}")
        return idx

    def write(self, idx: NDArray[np.intp], values: Sequence[FloatArray]) -> None:
        """Set the columns at ``idx`` (journalled while a batch is in progress)."""
        if self._journal is not None:
            self._journal.append((idx, [col[idx] for col in self.columns]))
        for col, val in zip(self.columns, values, strict=True):
            col[idx] = val

    def begin(self) -> None:
        """Open the undo journal of a batch."""
        self._journal = []

    def commit(self) -> None:
        """Close the journal, keeping every write."""
        self._journal = None

    def rollback(self) -> None:
        """Undo every write since :meth:`begin`, newest first, and close the journal."""
        journal, self._journal = self._journal or [], None
        for idx, old in reversed(journal):
            for col, val in zip(self.columns, old, strict=True):
                col[idx] = val


def _float_array(name: str, values: ArrayLike, size: int, rater: str) -> FloatArray:
    """Return ``values`` as a finite float array of length ``size``; raise naming ``name``."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size != size:
        raise ValueError(f"rater '{rater}': {name} has {arr.size} values for {size} ids")
    if not np.isfinite(arr).all():
        raise ValueError(f"rater '{rater}': {name} must be finite, got {arr[~np.isfinite(arr)][0]}")
    return arr


def _is_finite_real(value: object) -> bool:
    """Whether ``value`` is a finite real number (``bool`` excluded)."""
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _game_error(game: GameResult, message: str) -> ValueError:
    return ValueError(f"game {game.game_id} ({game.mode}): {message}")


def _check_seats(game: GameResult) -> None:
    """Validate a team or ffa game's seats: sides, unique players, finite stints and scores."""
    if game.mode not in ("team", "ffa"):
        raise _game_error(game, "mode must be one of '1v1', 'team', 'ffa'")
    team_game = game.mode == "team"
    seen: set[int] = set()
    for seat in game.seats:
        if (seat.team is not None) != team_game:
            side = "an int team" if team_game else "team None"
            raise _game_error(game, f"player {seat.player_id} has team {seat.team!r}; needs {side}")
        if seat.player_id in seen:
            raise _game_error(game, f"player {seat.player_id} has more than one seat")
        seen.add(seat.player_id)
        if not (
            math.isfinite(seat.score)
            and math.isfinite(seat.joined)
            and math.isfinite(seat.left)
            and seat.left >= seat.joined
        ):
            raise _game_error(game, f"player {seat.player_id} has a bad stint or score: {seat!r}")


def _duel_sides(game: GameResult) -> tuple[Seat, Seat]:
    """Return the two seats of a 1v1 game, checked."""
    if len(game.seats) != 2:
        raise _game_error(game, f"a 1v1 game needs exactly 2 seats, got {len(game.seats)}")
    a, b = game.seats
    if a.player_id == b.player_id or a.team is None or a.team == b.team:
        raise _game_error(game, "a 1v1 game needs two different players on two different teams")
    return a, b


def _waves(id_groups: Sequence[Sequence[int]]) -> list[range]:
    """Split games (given by their rated ids) into maximal runs with no id in common."""
    waves: list[range] = []
    start = 0
    seen: set[int] = set()
    for k, ids in enumerate(id_groups):
        if not seen.isdisjoint(ids):
            waves.append(range(start, k))
            start, seen = k, set()
        seen.update(ids)
    if id_groups:
        waves.append(range(start, len(id_groups)))
    return waves


def _compare_sph(
    score_a: FloatArray, min_a: FloatArray, score_b: FloatArray, min_b: FloatArray
) -> NDArray[np.int64]:
    """Return sign(SPH_a - SPH_b) per pair, exactly, for minutes > 0 and finite scores.

    SPH_a > SPH_b iff ``score_a * min_b > score_b * min_a`` in exact arithmetic. Rounding is
    monotone, so a strict inequality between the rounded products holds exactly as well; only
    rounded products that are equal are decided again with :class:`~fractions.Fraction`.
    """
    x = score_a * min_b
    y = score_b * min_a
    sign = (x > y).astype(np.int64) - (x < y).astype(np.int64)
    for k in np.flatnonzero(x == y):
        if score_a[k] == 0.0 and score_b[k] == 0.0:
            continue
        fx = Fraction(float(score_a[k])) * Fraction(float(min_b[k]))
        fy = Fraction(float(score_b[k])) * Fraction(float(min_a[k]))
        sign[k] = (fx > fy) - (fx < fy)
    return sign


@cache
def _pairs(k: int) -> tuple[tuple[int, int], ...]:
    """All index pairs ``(a, b)``, ``a < b``, of ``k`` seats."""
    return tuple(itertools.combinations(range(k), 2))


# --------------------------------------------------------------------------------------------
# The Bayesian rater
# --------------------------------------------------------------------------------------------


@RATERS.register
@dataclass(frozen=True, eq=False)
class BayesianRater:
    """Gaussian beliefs N(mu, var) per player, updated as in the paper (see the module docstring).

    Args:
        beta2: performance-noise variance sigma_eps^2 (> 0).
        tau2: dynamics variance added before each game a player is rated in (>= 0).

    Raises:
        ValueError: if a parameter is out of range; the message names it and its value.
    """

    name: ClassVar[str] = "bayesian"
    has_variance: ClassVar[bool] = True
    skill_scale: ClassVar[bool] = True

    beta2: float = 2.5
    tau2: float = 0.0
    _table: _PlayerTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate the parameters and create the empty player table."""
        if not (_is_finite_real(self.beta2) and self.beta2 > 0):
            raise ValueError(f"beta2 must be a finite number > 0, got {self.beta2!r}")
        if not (_is_finite_real(self.tau2) and self.tau2 >= 0):
            raise ValueError(f"tau2 must be a finite number >= 0, got {self.tau2!r}")
        object.__setattr__(self, "_table", _PlayerTable(self.name, 2))

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start new players at their prior beliefs ``N(mu0, var0)`` (``var0 > 0``)."""
        size = np.asarray(ids).size
        mu = _float_array("mu0", mu0, size, self.name)
        var = _float_array("var0", var0, size, self.name)
        if (var <= 0).any():
            raise ValueError(f"rater '{self.name}': var0 must be > 0, got {var[var <= 0][0]}")
        self._table.add(ids, [mu, var])

    def means(self, ids: IdArray) -> FloatArray:
        """Return the belief means of ``ids``."""
        return self._table.columns[0][self._table.index(ids)]

    def variances(self, ids: IdArray) -> FloatArray:
        """Return the belief variances of ``ids``."""
        return self._table.columns[1][self._table.index(ids)]

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games in order (as if one at a time), wave by wave.

        Raises:
            KeyError: a registered seat's player id is unknown.
            ValueError: a malformed game (wrong seats for its mode, bad winner, bad stint).
        """
        duels: list[tuple[int, int] | None] = []  # (winner, loser) of each rated 1v1 game
        id_groups: list[Sequence[int]] = []
        for game in games:
            if game.mode == "1v1":
                a, b = _duel_sides(game)
                if game.winner not in (a.team, b.team):
                    raise _game_error(game, f"winner {game.winner!r} is neither side")
                if not (a.registered and b.registered):
                    duels.append(None)
                    id_groups.append(())
                    continue
                pair = (a.player_id, b.player_id)
                duels.append(pair if game.winner == a.team else pair[::-1])
                id_groups.append(pair)
            else:
                _check_seats(game)
                duels.append(None)
                id_groups.append([s.player_id for s in game.seats if s.registered])
        table = self._table
        table.index(np.fromiter(itertools.chain.from_iterable(id_groups), np.int64))
        table.begin()
        try:
            for wave in _waves(id_groups):
                self._apply_duels([d for k in wave if (d := duels[k]) is not None])
                self._apply_multi([games[k] for k in wave if games[k].mode != "1v1"])
        except BaseException:
            table.rollback()
            raise
        table.commit()

    def _apply_duels(self, duels: list[tuple[int, int]]) -> None:
        """Apply 1v1 results (winner, loser) of players who are all different."""
        if not duels:
            return
        ids = np.array(duels, dtype=np.intp)
        win, lose = ids[:, 0], ids[:, 1]
        mu, var = self._table.columns
        mu_w, var_w, mu_l, var_l = update_1v1(
            mu[win], var[win], mu[lose], var[lose], self.beta2, self.tau2
        )
        self._table.write(
            ids.T.reshape(-1), [np.concatenate([mu_w, mu_l]), np.concatenate([var_w, var_l])]
        )

    def _apply_multi(self, games: list[GameResult]) -> None:
        """Apply team and ffa games whose rated players are all different (the pair rule)."""
        if not games:
            return
        pid: list[int] = []
        side: list[int] = []
        joined: list[float] = []
        left: list[float] = []
        score: list[float] = []
        pair_a: list[int] = []
        pair_b: list[int] = []
        length: list[float] = []
        for game in games:
            # Player-id order makes the arithmetic independent of the order of the seats.
            rated = sorted((s for s in game.seats if s.registered), key=lambda s: s.player_id)
            base = len(pid)
            for k, seat in enumerate(rated):
                pid.append(seat.player_id)
                # ffa: a distinct negative side per seat, so every two seats are opponents.
                side.append(-1 - (base + k) if seat.team is None else int(seat.team))
                joined.append(seat.joined)
                left.append(seat.left)
                score.append(seat.score)
            pairs = _pairs(len(rated))
            pair_a.extend(base + a for a, _ in pairs)
            pair_b.extend(base + b for _, b in pairs)
            length.extend([game.length] * len(pairs))
        if not pair_a:
            return
        a = np.array(pair_a, dtype=np.intp)
        b = np.array(pair_b, dtype=np.intp)
        start = np.array(joined)
        end = np.array(left)
        sides = np.array(side)
        glen = np.array(length)
        overlap = np.minimum(end[a], end[b]) - np.maximum(start[a], start[b])
        w = np.divide(overlap, glen, out=np.zeros_like(overlap), where=glen > 0)
        w = np.minimum(w, 1.0)
        keep = (sides[a] != sides[b]) & (w > 0)
        a, b, w = a[keep], b[keep], w[keep]
        n_seats = len(pid)
        n_opp = np.bincount(a, minlength=n_seats) + np.bincount(b, minlength=n_seats)
        played = n_opp > 0
        if not played.any():
            return
        sc = np.array(score)
        minutes = end - start
        sign = _compare_sph(sc[a], minutes[a], sc[b], minutes[b])
        decisive = sign != 0
        a_won = sign[decisive] > 0
        a, b, w = a[decisive], b[decisive], w[decisive]
        win = np.where(a_won, a, b)
        lose = np.where(a_won, b, a)
        ids = np.array(pid, dtype=np.intp)
        mu = self._table.columns[0][ids]
        var = self._table.columns[1][ids] + self.tau2
        mu_w, var_w, mu_l, var_l = update_1v1(mu[win], var[win], mu[lose], var[lose], self.beta2)
        share_w = w / n_opp[win]
        share_l = w / n_opp[lose]
        who = np.concatenate([win, lose])
        dmu = np.concatenate([share_w * (mu_w - mu[win]), share_l * (mu_l - mu[lose])])
        dlog = np.concatenate(
            [share_w * np.log(var_w / var[win]), share_l * np.log(var_l / var[lose])]
        )
        new_mu = mu + np.bincount(who, weights=dmu, minlength=n_seats)
        factor = np.minimum(np.exp(np.bincount(who, weights=dlog, minlength=n_seats)), 1.0)
        new_var = var * factor
        self._table.write(ids[played], [new_mu[played], new_var[played]])


# --------------------------------------------------------------------------------------------
# The SPH Elo rater
# --------------------------------------------------------------------------------------------


@RATERS.register
@dataclass(frozen=True, eq=False)
class SPHEloRater:
    """The ZoneStats score-per-hour Elo (DESIGN.md 3.3) over a player table.

    Every player starts at ``initial_rating`` (the prior beliefs given to :meth:`add_players` are
    ignored). After each :meth:`update`, :attr:`last_batch_change_sums` holds the sum of the
    rating changes of each game of the batch, in order (0 up to rounding: the rating is
    zero-sum).

    Args:
        t: logistic scale T of the predicted outcome (> 0).
        game_mult: rating points per minute of a pair's shared time (> 0).
        max_game_length: cap in minutes on each pair's time factor (> 0).
        initial_rating: the rating of a new player (finite).

    Raises:
        ValueError: if a parameter is out of range; the message names it and its value.
    """

    name: ClassVar[str] = "sph_elo"
    has_variance: ClassVar[bool] = False
    skill_scale: ClassVar[bool] = False

    t: float = 120.0
    game_mult: float = 2.0
    max_game_length: float = 20.0
    initial_rating: float = 500.0
    last_batch_change_sums: list[float] = field(
        init=False, repr=False, compare=False, default_factory=list
    )
    _params: SPHParams = field(init=False, repr=False, compare=False)
    _table: _PlayerTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate the parameters (via :class:`SPHParams`) and create the empty table."""
        params = SPHParams(self.t, self.game_mult, self.max_game_length, self.initial_rating)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_table", _PlayerTable(self.name, 1))

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start new players at ``initial_rating``; ``mu0`` and ``var0`` are only size-checked."""
        size = np.asarray(ids).size
        _float_array("mu0", mu0, size, self.name)
        _float_array("var0", var0, size, self.name)
        self._table.add(ids, [np.full(size, float(self.initial_rating))])

    def means(self, ids: IdArray) -> FloatArray:
        """Return the current ratings of ``ids``."""
        return self._table.columns[0][self._table.index(ids)]

    def variances(self, ids: IdArray) -> None:
        """Return ``None``: the SPH Elo keeps no variance."""
        return None

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games in order (as if one at a time), wave by wave.

        Raises:
            KeyError: a registered seat's player id is unknown.
            ValueError: a game :func:`~lobbysim.skill.sph_elo.rating_changes` rejects.
        """
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
        table = self._table
        table.index(np.fromiter(itertools.chain.from_iterable(id_groups), np.int64))
        sums = [0.0] * len(games)
        table.begin()
        try:
            for wave in _waves(id_groups):
                slow = self._apply_duels([k for k in wave if fast[k]], games, sums)
                for k in sorted([k for k in wave if not fast[k]] + slow):
                    sums[k] = self._apply_general(games[k])
        except BaseException:
            table.rollback()
            raise
        table.commit()
        self.last_batch_change_sums[:] = sums

    def _apply_duels(
        self, ks: list[int], games: Sequence[GameResult], sums: list[float]
    ) -> list[int]:
        """Rate the ordinary 1v1 games ``games[k]`` (all players different), vectorised.

        Returns the positions of games unfit for the fast path (a seat with 0 minutes or a
        score or stint that :func:`rating_changes` must judge); ``sums`` gets the others' sums.
        """
        if not ks:
            return []
        cols = np.array(
            [(s.player_id, s.score, s.left - s.joined) for k in ks for s in games[k].seats]
        ).reshape(len(ks), 2, 3)
        score_a, score_b = cols[:, 0, 1], cols[:, 1, 1]
        min_a, min_b = cols[:, 0, 2], cols[:, 1, 2]
        ok = (
            np.isfinite(cols[:, :, 1:]).all(axis=(1, 2))
            & (score_a >= 0)
            & (score_b >= 0)
            & (min_a > 0)
            & (min_b > 0)
        )
        slow = [k for k, fit in zip(ks, ok, strict=True) if not fit]
        if slow:
            ks = [k for k, fit in zip(ks, ok, strict=True) if fit]
            cols = cols[ok]
            score_a, score_b = cols[:, 0, 1], cols[:, 1, 1]
            min_a, min_b = cols[:, 0, 2], cols[:, 1, 2]
            if not ks:
                return slow
        ia = cols[:, 0, 0].astype(np.intp)
        ib = cols[:, 1, 0].astype(np.intp)
        p = self._params
        ratings = self._table.columns[0]
        r_a, r_b = ratings[ia], ratings[ib]
        # As in sph_elo._pair_adjustment: evaluate from the higher-rated side (a on equal
        # ratings), whose prediction is a logistic of a non-negative argument.
        a_hi = r_a >= r_b
        outcome_a = 0.5 * (_compare_sph(score_a, min_a, score_b, min_b) + 1.0)
        outcome_hi = np.where(a_hi, outcome_a, 1.0 - outcome_a)
        predicted_hi = 1.0 / (1.0 + np.exp(-(np.abs(r_a - r_b) / p.t)))
        time = np.minimum(np.minimum(p.max_game_length, min_a), min_b)
        indiv_hi = (outcome_hi - predicted_hi) * p.game_mult * time
        # No cap in a 1v1: both players share |offset| = |result| * game_mult * time with
        # |result| <= 1 and time <= min(minutes), so min(minutes) * game_mult / |offset| >= 1 (also
        # in floating point: the same two factors are rounded alike) and the scale is always 1.
        change_hi = indiv_hi
        change_a = np.where(a_hi, change_hi, -change_hi)
        change_b = -change_a
        self._table.write(
            np.concatenate([ia, ib]), [np.concatenate([r_a + change_a, r_b + change_b])]
        )
        for k, total in zip(ks, (change_a + change_b).tolist(), strict=True):
            sums[k] = total
        return slow

    def _apply_general(self, game: GameResult) -> float:
        """Rate one game with :func:`rating_changes`; return the sum of its changes."""
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
