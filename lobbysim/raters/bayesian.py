"""The Bayesian rater: Gaussian beliefs per player, updated as in the paper.

``bayesian`` (:class:`BayesianRater`): the Gaussian beliefs of the paper (docs/model.md 3.1, the
corrected TrueSkill form of :func:`lobbysim.skill.gaussian.update_1v1`). A ``1v1`` game updates
both players by ``game.winner`` (a guest in the game: nothing changes for anybody). Team and
free-for-all games follow docs/model.md 3.4, with this **combination rule**. Every two rated
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

The win model is the same Gaussian one: P(a beats b) = Phi((mu_a - mu_b) / c) and the match
quality is TrueSkill's, with c^2 = 2 beta2 + var_a + var_b
(:func:`~lobbysim.skill.gaussian.win_probability`, :func:`~lobbysim.skill.gaussian.match_quality`).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import attrgetter
from typing import ClassVar

import numpy as np

from lobbysim.raters.base import (
    RATERS,
    GaussianBeliefs,
    PlayerTable,
    check_seats,
    compare_sph,
    declares,
    duel_sides,
    game_error,
    waves,
)
from lobbysim.records.rows import DuelBatch, GameResult, Seat
from lobbysim.skill.gaussian import update_1v1, update_1v1_one
from lobbysim.validation import MAX_SKILL_VARIANCE


def _is_finite_real(value: object) -> bool:
    """Whether ``value`` is a finite real number (``bool`` excluded)."""
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


#: A wave of at most this many rated 1v1 games is updated on floats (update_1v1_one, bit for bit
#: update_1v1): small passes, such as passes on every arrival, rate a game or a few.
FLOAT_DUELS = 4

_player_id = attrgetter("player_id")


@cache
def _pairs(k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """All index pairs ``(a, b)``, ``a < b``, of ``k`` seats: the a's and the b's, in order."""
    pairs = list(itertools.combinations(range(k), 2))
    return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)


@RATERS.register
@dataclass(frozen=True, eq=False)
class BayesianRater(GaussianBeliefs):
    """The paper's rater: a Gaussian belief N(mu, var) per player, updated after each game.

    Args:
        beta2: the performance-noise variance sigma_eps^2 (> 0 and at most 1e8,
            :data:`~lobbysim.validation.MAX_SKILL_VARIANCE`: a noise sd of 10,000 skill points;
            the update squares and sums it, and near 1e308 overflows) the rater assumes. In a
            lobby it defaults to the scenario's ``game.beta2``, the true one: a rater spec
            without ``beta2`` gets it. An explicit ``beta2`` in the rater's parameters overrides
            it, a deliberate mismatch between the model and the game. Built directly, the
            default is 2.5 (the paper's).
        tau2: dynamics variance added before each game a player is rated in (>= 0, at most
            1e8 for the same reason).

    Raises:
        ValueError: if a parameter is out of range; the message names it and its value.
    """

    name: ClassVar[str] = "bayesian"
    has_variance: ClassVar[bool] = True
    skill_scale: ClassVar[bool] = True
    #: Rates 1v1 games by outcomes alone (:func:`rates_outcomes_only`): the lobby may give it
    #: a game's outcome as the game ends, before its scores are drawn.
    outcome_only: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if "outcome_only" not in own and any(name in own for name in _OUTCOME_METHODS):
            cls.outcome_only = False

    beta2: float = 2.5
    tau2: float = 0.0
    _table: PlayerTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate the parameters and create the empty player table."""
        if not (_is_finite_real(self.beta2) and self.beta2 > 0):
            raise ValueError(f"beta2 must be a finite number > 0, got {self.beta2!r}")
        if not (_is_finite_real(self.tau2) and self.tau2 >= 0):
            raise ValueError(f"tau2 must be a finite number >= 0, got {self.tau2!r}")
        for label, value in (("beta2", self.beta2), ("tau2", self.tau2)):
            if value > MAX_SKILL_VARIANCE:
                raise ValueError(
                    f"{label} must be <= {MAX_SKILL_VARIANCE:g} (a noise sd of 10,000 skill "
                    f"points; larger variances overflow the update), got {value!r}"
                )
        object.__setattr__(self, "_table", PlayerTable(self.name, 2))

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games in order (as if one at a time), wave by wave.

        Raises:
            KeyError: a registered seat's player id is unknown.
            ValueError: a malformed game (wrong seats for its mode, bad winner, bad stint).
        """
        if isinstance(games, DuelBatch):
            self._update_duels(games)
            return
        if len(games) == 1 and games[0].mode == "1v1":
            self._update_duel(games[0])
            return
        duels: list[tuple[int, int] | None] = []  # (winner, loser) of each rated 1v1 game
        id_groups: list[Sequence[int]] = []
        for game in games:
            if game.mode == "1v1":
                a, b = duel_sides(game)
                if game.winner not in (a.team, b.team):
                    raise game_error(game, f"winner {game.winner!r} is neither side")
                if not (a.registered and b.registered):
                    duels.append(None)
                    id_groups.append(())
                    continue
                pair = (a.player_id, b.player_id)
                duels.append(pair if game.winner == a.team else pair[::-1])
                id_groups.append(pair)
            else:
                check_seats(game)
                duels.append(None)
                id_groups.append([s.player_id for s in game.seats if s.registered])
        self._rate(games, duels, id_groups)

    def _update_duels(self, batch: DuelBatch) -> None:
        """:meth:`update` of 1v1 games given as columns (well-formed, as the lobby makes them):
        the same updates, the pairs read from the columns."""
        if len(batch) == 1:
            if batch.registered_a[0] and batch.registered_b[0]:
                a, b = batch.player_a[0], batch.player_b[0]
                self.rate_duel(*((a, b) if batch.winner[0] == 0 else (b, a)))
            return
        duels: list[tuple[int, int] | None] = [
            ((a, b) if won == 0 else (b, a)) if ra and rb else None
            for a, b, ra, rb, won in zip(
                batch.player_a,
                batch.player_b,
                batch.registered_a,
                batch.registered_b,
                batch.winner,
                strict=True,
            )
        ]
        self._rate(batch, duels, [() if d is None else d for d in duels])

    def rate_duels(self, duels: list[tuple[int, int]]) -> None:
        """Apply rated 1v1 outcomes ``(winner, loser)`` in order, as :meth:`update` applies
        1v1 games of registered players with these outcomes (a 1v1 update reads nothing else).

        Up to :data:`FLOAT_DUELS` games of known players (the games that end at one moment of
        a lobby) are applied one by one on floats (:meth:`_apply_duels`' arithmetic); larger
        batches, or one with an unknown player, go through :meth:`_rate`, wave by wave.

        Raises:
            KeyError: a player id is unknown (nothing is changed).
        """
        if len(duels) == 1:
            self.rate_duel(*duels[0])
            return
        if len(duels) <= FLOAT_DUELS:
            ids = [pid for duel in duels for pid in duel]
            if min(ids) >= 0 and max(ids) < self._table.n_dense:
                for w, lo in duels:
                    self.rate_duel(w, lo)
                return
        self._rate((), list(duels), list(duels))

    def _rate(
        self,
        games: Sequence[GameResult],
        duels: list[tuple[int, int] | None],
        id_groups: list[Sequence[int]],
    ) -> None:
        """Apply a batch wave by wave: the rated 1v1 games ``duels`` (winner, loser) at once,
        the team and ffa games by the pair rule; all or nothing."""
        table = self._table
        table.index(np.fromiter(itertools.chain.from_iterable(id_groups), np.int64))
        table.begin()
        try:
            for wave in waves(id_groups):
                self._apply_duels([d for k in wave if (d := duels[k]) is not None])
                # the team and ffa games (a 1v1 game with a guest has no rated ids)
                self._apply_multi([games[k] for k in wave if duels[k] is None and id_groups[k]])
        except BaseException:
            table.rollback()
            raise
        table.commit()

    def _update_duel(self, game: GameResult) -> None:
        """:meth:`update` of a batch of one 1v1 game (a pass on every arrival rates one): the
        same checks and errors, and :meth:`_apply_duels`' arithmetic for one game on floats,
        its two players written in place (nothing can fail after the first write, so there is
        nothing to undo)."""
        a, b = duel_sides(game)
        if game.winner not in (a.team, b.team):
            raise game_error(game, f"winner {game.winner!r} is neither side")
        if not (a.registered and b.registered):
            return
        w, lo = (a.player_id, b.player_id) if game.winner == a.team else (b.player_id, a.player_id)
        self.rate_duel(w, lo)

    def rate_duel(self, w: int, lo: int) -> None:
        """Apply one rated 1v1 outcome, ``w`` beat ``lo`` (:meth:`rate_duels` of one game):
        :meth:`_apply_duels`' arithmetic for one game on floats, the two players written in
        place (nothing can fail after the first write, so there is nothing to undo).

        Raises:
            KeyError: a player id is unknown (nothing is changed).
        """
        table = self._table
        if not (0 <= w < table.n_dense and 0 <= lo < table.n_dense):
            table.index(np.array([w, lo], dtype=np.int64))  # raises KeyError for an unknown id
        mu, var = table.views  # Python floats, read and written in place
        mu[w], var[w], mu[lo], var[lo] = update_1v1_one(
            mu[w], var[w], mu[lo], var[lo], self.beta2, self.tau2
        )

    def _apply_duels(self, duels: list[tuple[int, int]]) -> None:
        """Apply 1v1 results (winner, loser) of players who are all different."""
        if not duels:
            return
        mu, var = self._table.columns
        if len(duels) <= FLOAT_DUELS:  # a pass on every arrival: the same updates on floats
            players: list[int] = []
            means: list[float] = []
            variances: list[float] = []
            for w, lo in duels:
                mu_w1, var_w1, mu_l1, var_l1 = update_1v1_one(
                    float(mu[w]),
                    float(var[w]),
                    float(mu[lo]),
                    float(var[lo]),
                    self.beta2,
                    self.tau2,
                )
                players += (w, lo)
                means += (mu_w1, mu_l1)
                variances += (var_w1, var_l1)
            self._table.write(
                np.array(players, dtype=np.intp), [np.array(means), np.array(variances)]
            )
            return
        ids = np.array(duels, dtype=np.intp)
        win, lose = ids[:, 0], ids[:, 1]
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
        rated: list[Seat] = []  # every game's rated seats, game after game
        pair_a: list[int] = []
        pair_b: list[int] = []
        length: list[float] = []
        for game in games:
            # Player-id order makes the arithmetic independent of the order of the seats.
            seats = sorted([s for s in game.seats if s.registered], key=_player_id)
            base = len(rated)
            rated += seats
            first, second = _pairs(len(seats))
            pair_a.extend(map(base.__add__, first))
            pair_b.extend(map(base.__add__, second))
            length.extend([game.length] * len(first))
        if not pair_a:
            return
        pid = [s.player_id for s in rated]
        # ffa: a distinct negative side per seat, so every two seats are opponents.
        side = [-1 - k if s.team is None else int(s.team) for k, s in enumerate(rated)]
        joined = [s.joined for s in rated]
        left = [s.left for s in rated]
        score = [s.score for s in rated]
        a = np.array(pair_a, dtype=np.intp)
        b = np.array(pair_b, dtype=np.intp)
        start = np.array(joined)
        end = np.array(left)
        sides = np.array(side)
        glen = np.array(length)
        overlap = np.minimum(end[a], end[b]) - np.maximum(start[a], start[b])
        w = np.divide(overlap, glen, out=np.zeros_like(overlap), where=glen > 0)
        w = np.minimum(w, 1.0)
        # overlap, not w: a positive overlap too short for w to be a positive float (w underflows
        # to 0) still makes the pair opponents, as the documented rule counts them
        keep = (sides[a] != sides[b]) & (overlap > 0) & (glen > 0)
        a, b, w = a[keep], b[keep], w[keep]
        n_seats = len(pid)
        n_opp = np.bincount(a, minlength=n_seats) + np.bincount(b, minlength=n_seats)
        played = n_opp > 0
        if not played.any():
            return
        sc = np.array(score)
        minutes = end - start
        sign = compare_sph(sc[a], minutes[a], sc[b], minutes[b])
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


#: The methods behind ``outcome_only`` (a subclass overriding one loses the declaration).
_OUTCOME_METHODS = ("update", "rate_duels", "rate_duel", "_update_duels", "_rate", "_apply_duels")


def rates_outcomes_only(rater: object) -> bool:
    """Return whether ``rater`` declares that it rates 1v1 games by their outcomes alone.

    A rater declares it with ``outcome_only = True`` and a method ``rate_duel(winner, loser)``
    (ids): a 1v1 game moves it by the sides, their registration and the winner, and
    :meth:`~lobbysim.raters.Rater.update` of a batch equals ``rate_duel`` of each game in turn
    (both players registered). :class:`BayesianRater` declares it; a subclass that overrides
    the methods behind it loses the declaration unless it sets it again. Such a driving rater
    can be given a game's outcome before its scores are drawn
    (:meth:`lobbysim.sim.games.Games.rate_at_end`).
    """
    return declares(rater, "outcome_only") and callable(getattr(rater, "rate_duel", None))
