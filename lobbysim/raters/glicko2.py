"""The Glicko-2 rater: Glickman's rating, deviation and volatility, updated in rating periods.

``glicko2`` (:class:`Glicko2Rater`) implements the Glicko-2 system as Mark E. Glickman states it
in "Example of the Glicko-2 system" (Boston University, 2013;
http://www.glicko.net/glicko/glicko2.pdf), steps 1 to 8: ratings ``r``, deviations ``RD`` and
volatilities ``sigma`` on the Glicko scale, converted to the Glicko-2 scale with
``mu = (r - 1500) / 173.7178`` and ``phi = RD / 173.7178``; the volatility found by the
Illinois iteration of step 5 with the tolerance 0.000001 the paper suggests.

**Rating periods.** The system rates "a collection of games within a rating period" as if they
had occurred simultaneously. Here period ``k`` is the time interval
``[k * period, (k + 1) * period)`` in simulated minutes, and a game belongs to the period holding
its ``end``. Games are collected and each period is applied at once when it closes: every period
whose end is at or before the latest game end seen so far is closed, when that game is passed to
:meth:`Glicko2Rater.update`. A player's results in a period are rated together against the
opponents' pre-period ratings and deviations (steps 3 to 8); a player with no game in a period
keeps rating and volatility and has the deviation of step 6, ``phi' = sqrt(phi^2 + sigma^2)``.
That is done lazily: a player's ``phi`` is stored with the number of closed periods it is
current for, and ``k`` idle periods later it is read as ``sqrt(phi^2 + k sigma^2)``, exactly
the result of ``k`` applications of step 6 (``sigma`` does not change while idle). No loop over
idle players is ever run. Games passed in the order they finished (the lobby's order) each land
in an open period; a game whose end falls in an already closed period counts in the first open
one. Games of the open period are not reflected in :meth:`~Glicko2Rater.means` until it closes.
The deviation has no upper cap (Glicko-2's paper states none).

**Which results.** Glicko-2 rates two-player games. A ``1v1`` game is one result, decided by
``game.winner`` as in :mod:`lobbysim.raters.bayesian` (a game with a guest is no result). In a
``team`` or ``ffa`` game every two rated players on opposing sides (team: different teams; ffa:
every two) who were in the game at the same time (overlapping stints) form a 1v1 result,
decided by exact score per hour as :mod:`lobbysim.raters.bayesian` decides its pairs, with equal
SPH a draw (score 1/2, which Glicko-2 allows). Each pair is a full result: an ``n``-player
free-for-all gives each player up to ``n - 1`` results, as a round-robin of ``n - 1`` games
would. Seats are taken in player-id order, so the result does not depend on the seats' order.
A result whose expected score rounds to exactly 0 or 1 carries no information in floating point
(``v`` would be infinite); a player whose every result is such is treated as idle that period.

**Win model.** :meth:`~Glicko2Rater.win_probability` is the predictive probability that Glickman
gives in "The Glicko system" (1995; http://www.glicko.net/glicko/glicko.pdf) for a game between
two rated players, ``E = 1 / (1 + 10^(-g(sqrt(RD_a^2 + RD_b^2)) (r_a - r_b) / 400))``, which on
the Glicko-2 scale is ``1 / (1 + exp(-g(sqrt(phi_a^2 + phi_b^2)) (mu_a - mu_b)))``. Step 3's
``E(mu, mu_j, phi_j)`` is the special case for a player whose own rating is taken as exact; the
predictive form is symmetric (``P(a beats b) + P(b beats a) = 1``), as the rater protocol needs.
Match quality is ``1 - |2 E - 1|`` (:class:`~lobbysim.raters.base.EvenMatchQuality`).

Ratings live on the Glicko scale, not the true-skill scale (``skill_scale`` is False, so the
metrics use Kendall's tau only); :meth:`~Glicko2Rater.variances` are ``RD^2`` in rating points
squared, and :attr:`~Glicko2Rater.beta2` is the performance variance of the logistic win model on
that scale (see its docstring).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from lobbysim.raters.base import (
    RATERS,
    EvenMatchQuality,
    FloatArray,
    IdArray,
    PlayerTable,
    check_seats,
    compare_sph,
    duel_sides,
    float_array,
    game_error,
)
from lobbysim.records.rows import GameResult
from lobbysim.validation import real_parameter

SCALE = 173.7178
"""Glicko points per Glicko-2 unit (400 / ln 10, as the paper rounds it)."""
CENTRE = 1500.0
"""The Glicko rating that is 0 on the Glicko-2 scale."""
EPSILON = 0.000001
"""The convergence tolerance of step 5, the value the paper suggests."""
MAX_ITERATIONS = 200
"""A safety bound on step 5's iterations (it converges in a handful)."""

TAU_RANGE = (0.001, 10.0)
"""The system constant's bounds (the paper suggests 0.3 to 1.2); see :class:`Glicko2Rater`."""
MAX_RATING = 1e6
"""The largest initial rating, either sign (ratings span a few thousand points)."""
MAX_DEVIATION = 1e4
"""The largest initial rating deviation (the paper's unrated player: 350)."""
VOLATILITY_RANGE = (1e-6, 10.0)
"""The initial volatility's bounds (the paper: 0.06)."""
MIN_PERIOD = 0.001
"""The shortest rating period, in minutes."""

Result = tuple[int, int, float]
"""One 1v1 result: player a, player b, a's score (1 win, 1/2 draw, 0 loss)."""


def g_factor(phi2: FloatArray) -> FloatArray:
    """Return Glickman's ``g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2)`` from ``phi^2`` (step 3)."""
    return 1.0 / np.sqrt(1.0 + 3.0 * phi2 / math.pi**2)


def new_volatility(
    delta2: FloatArray, phi2: FloatArray, v: FloatArray, sigma: FloatArray, tau: float
) -> FloatArray:
    """Return each player's new volatility ``sigma'`` by step 5 (the Illinois iteration).

    Vectorised over players: each element follows the paper's scalar iteration on its own
    (players whose bracket or iteration ends earlier drop out of the arrays).

    Args:
        delta2: ``Delta^2`` of step 4.
        phi2: the pre-period ``phi^2``.
        v: the estimated variance ``v`` of step 3.
        sigma: the pre-period volatility.
        tau: the system constant.
    """
    a = np.log(sigma * sigma)
    tau2 = tau * tau

    def f(x: FloatArray, k: IdArray) -> FloatArray:
        ex = np.exp(x)
        d = phi2[k] + v[k] + ex
        return ex * (delta2[k] - phi2[k] - v[k] - ex) / (2.0 * d * d) - (x - a[k]) / tau2

    every = np.arange(a.size)
    over = delta2 - phi2 - v
    big = over > 0
    b = np.empty_like(a)
    b[big] = np.log(over[big])
    k, step = every[~big], 1
    while k.size:  # B = a - k tau for the first k >= 1 with f(a - k tau) >= 0
        x = a[k] - step * tau
        negative = f(x, k) < 0
        b[k[~negative]] = x[~negative]
        k, step = k[negative], step + 1
    a_it = a.copy()
    f_a, f_b = f(a_it, every), f(b, every)
    k = every[np.abs(b - a_it) > EPSILON]
    for _ in range(MAX_ITERATIONS):
        if not k.size:
            break
        c = a_it[k] + (a_it[k] - b[k]) * f_a[k] / (f_b[k] - f_a[k])
        f_c = f(c, k)
        flip = f_c * f_b[k] <= 0
        a_it[k] = np.where(flip, b[k], a_it[k])
        f_a[k] = np.where(flip, f_b[k], f_a[k] / 2.0)
        b[k], f_b[k] = c, f_c
        k = k[np.abs(b[k] - a_it[k]) > EPSILON]
    return np.exp(a_it / 2.0)


@dataclass
class Periods:
    """The rating-period clock: how many periods are closed, and the results of the open ones."""

    closed: int = 0
    latest_end: float = -math.inf
    pending: dict[int, list[Result]] = field(default_factory=dict)


@RATERS.register
@dataclass(frozen=True, eq=False)
class Glicko2Rater(EvenMatchQuality):
    """Glickman's Glicko-2 system over rating periods of simulated time.

    Every player starts at ``initial_rating`` / ``initial_deviation`` / ``initial_volatility``
    (the prior beliefs given to :meth:`add_players` are only size-checked: the Glicko scale is
    not the skill scale); :meth:`set_ratings` starts known players elsewhere.

    Args:
        tau: the system constant tau, in [0.001, 10] (:data:`TAU_RANGE`); the paper suggests
            0.3 to 1.2. Step 5 divides by tau^2 and exponentiates: above 10 its ``exp``
            overflows, and at 1e-30 its iteration stalls.
        initial_rating: an unrated player's rating r, |r| <= 1e6 (:data:`MAX_RATING`; the
            paper: 1500, ratings span a few thousand points). Far beyond, a game's change is
            lost in rounding (every rating stays equal: no Kendall tau), and near 1e308 the
            rating differences overflow.
        initial_deviation: an unrated player's rating deviation RD, in (0, 1e4]
            (:data:`MAX_DEVIATION`; the paper: 350). RD is squared (RD / 173.7)^2: at 1e200
            that overflows.
        initial_volatility: an unrated player's volatility sigma, in [1e-6, 10]
            (:data:`VOLATILITY_RANGE`; the paper: 0.06; 10 adds some 1,700 points of deviation
            a period). Step 5 takes log(sigma^2), which is -inf at 1e-300, and idle periods add
            sigma^2, which overflows near 1e154.
        period: minutes per rating period, at least 0.001 (:data:`MIN_PERIOD`: a period index
            is the game's end over it, which near 1e-300 overflows). The paper recommends
            periods in which players have 10 to 15 games on average.

    Raises:
        ValueError: if a parameter is out of range; the message names it and its value.
    """

    name: ClassVar[str] = "glicko2"
    has_variance: ClassVar[bool] = True
    skill_scale: ClassVar[bool] = False
    #: Replayed as the glicko2 family (:func:`~lobbysim.raters.base.replay_family`):
    #: Glickman's prediction, ratings moving when a period closes.
    replay_family: ClassVar[str] = "glicko2"

    tau: float = 0.5
    initial_rating: float = 1500.0
    initial_deviation: float = 350.0
    initial_volatility: float = 0.06
    period: float = 60.0
    _table: PlayerTable = field(init=False, repr=False, compare=False)
    _periods: Periods = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate the parameters and create the empty player table and period clock."""
        real_parameter("tau", self.tau, ge=TAU_RANGE[0], le=TAU_RANGE[1])
        real_parameter("initial_rating", self.initial_rating, ge=-MAX_RATING, le=MAX_RATING)
        real_parameter("initial_deviation", self.initial_deviation, gt=0, le=MAX_DEVIATION)
        low, high = VOLATILITY_RANGE
        real_parameter("initial_volatility", self.initial_volatility, ge=low, le=high)
        real_parameter("period", self.period, ge=MIN_PERIOD)
        # columns: mu, phi^2 (Glicko-2 scale), sigma, and the closed periods phi^2 is current for
        object.__setattr__(self, "_table", PlayerTable(self.name, 4))
        object.__setattr__(self, "_periods", Periods())

    @property
    def beta2(self) -> float:
        """``pi^2 173.7178^2 / 6``: one performance's variance in the win model, in points^2.

        For players with exact ratings the win probability is ``logistic((r_a - r_b) / s)``
        with ``s = 400 / ln 10 = 173.7178``: the model in which each performance is the rating
        plus Gumbel noise of scale ``s``, whose variance is ``pi^2 s^2 / 6`` (as for the SPH
        Elo's ``beta2``).
        """
        return math.pi**2 * SCALE**2 / 6.0

    @property
    def closed_periods(self) -> int:
        """The number of rating periods applied so far (periods ``0 .. closed_periods - 1``)."""
        return self._periods.closed

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start new players unrated (the initial values); ``mu0``, ``var0`` are size-checked."""
        size = np.asarray(ids).size
        float_array("mu0", mu0, size, self.name)
        float_array("var0", var0, size, self.name)
        values = [
            (self.initial_rating - CENTRE) / SCALE,
            (self.initial_deviation / SCALE) ** 2,
            float(self.initial_volatility),
            float(self._periods.closed),
        ]
        self._table.add(ids, [np.full(size, value) for value in values])

    def set_ratings(
        self, ids: IdArray, rating: ArrayLike, deviation: ArrayLike, volatility: ArrayLike
    ) -> None:
        """Set known players' rating, deviation and volatility (e.g. ratings from elsewhere).

        The deviation is taken as current now: idle periods inflate it from the next close on.

        Raises:
            KeyError: an unknown id.
            ValueError: a value that is not finite, or a deviation or volatility that is not > 0.
        """
        idx = self._table.index(ids)
        r = float_array("rating", rating, idx.size, self.name)
        rd = float_array("deviation", deviation, idx.size, self.name)
        vol = float_array("volatility", volatility, idx.size, self.name)
        for label, values in (("deviation", rd), ("volatility", vol)):
            if (values <= 0).any():
                bad = values[values <= 0][0]
                raise ValueError(f"rater '{self.name}': {label} must be > 0, got {bad}")
        closed = np.full(idx.size, float(self._periods.closed))
        self._table.write(idx, [(r - CENTRE) / SCALE, (rd / SCALE) ** 2, vol, closed])

    def _state(self, ids: IdArray) -> tuple[FloatArray, FloatArray]:
        """Return ``mu`` and the current ``phi^2`` (idle periods applied) of ``ids``."""
        idx = self._table.index(ids)
        mu, phi2, sigma, fresh = self._table.columns
        return mu[idx], phi2[idx] + (self._periods.closed - fresh[idx]) * sigma[idx] ** 2

    def means(self, ids: IdArray) -> FloatArray:
        """Return the ratings ``r`` of ``ids`` as of the last closed period."""
        return SCALE * self._table.columns[0][self._table.index(ids)] + CENTRE

    def variances(self, ids: IdArray) -> FloatArray:
        """Return ``RD^2`` of ``ids``: the deviation as of the last closed period, squared."""
        return SCALE**2 * self._state(ids)[1]

    def deviations(self, ids: IdArray) -> FloatArray:
        """Return the rating deviations ``RD`` of ``ids`` as of the last closed period."""
        return SCALE * np.sqrt(self._state(ids)[1])

    def volatilities(self, ids: IdArray) -> FloatArray:
        """Return the volatilities ``sigma`` of ``ids``."""
        return self._table.columns[2][self._table.index(ids)]

    def win_probability(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return Glickman's predictive ``1 / (1 + exp(-g(sqrt(phi_a^2 + phi_b^2)) d))`` per pair.

        ``d = mu_a - mu_b`` on the Glicko-2 scale (the module docstring cites the source).
        """
        mu_a, phi2_a = self._state(ids_a)
        mu_b, phi2_b = self._state(ids_b)
        return 1.0 / (1.0 + np.exp(-g_factor(phi2_a + phi2_b) * (mu_a - mu_b)))

    def update(self, games: Sequence[GameResult]) -> None:
        """Collect finished games into their rating periods; apply every period that closes.

        The result equals passing the games one at a time in the given order.

        Raises:
            KeyError: a rated seat's player id is unknown.
            ValueError: a malformed game (wrong seats for its mode, bad winner, bad stint or end).
        """
        staged: list[tuple[float, list[Result]]] = []
        for game in games:
            if not math.isfinite(game.end):
                raise game_error(game, f"end {game.end!r} is not finite")
            staged.append((game.end, self._results(game)))
        rated = itertools.chain.from_iterable((a, b) for _, rs in staged for a, b, _ in rs)
        self._table.index(np.fromiter(rated, np.int64))
        clock = self._periods
        closed, latest_end = clock.closed, clock.latest_end
        lengths = {k: len(v) for k, v in clock.pending.items()}  # to undo appends and closes
        popped: dict[int, list[Result]] = {}
        self._table.begin()
        try:
            for end, results in staged:
                if results:
                    index = max(math.floor(end / self.period), clock.closed)
                    clock.pending.setdefault(index, []).extend(results)
                if end > clock.latest_end:
                    clock.latest_end = end
                    popped.update(self._close_until(math.floor(end / self.period)))
        except BaseException:
            self._table.rollback()
            clock.pending.update(popped)
            for k in list(clock.pending):
                del clock.pending[k][lengths.get(k, 0) :]
                if not clock.pending[k]:
                    del clock.pending[k]
            clock.closed, clock.latest_end = closed, latest_end
            raise
        self._table.commit()

    def _results(self, game: GameResult) -> list[Result]:
        """Return the 1v1 results of one game (see the module docstring), checked."""
        if game.mode == "1v1":
            a, b = duel_sides(game)
            if game.winner not in (a.team, b.team):
                raise game_error(game, f"winner {game.winner!r} is neither side")
            if not (a.registered and b.registered):
                return []
            return [(a.player_id, b.player_id, 1.0 if game.winner == a.team else 0.0)]
        check_seats(game)
        rated = sorted((s for s in game.seats if s.registered), key=lambda s: s.player_id)
        pairs = [
            (x, y)
            for x, y in itertools.combinations(rated, 2)
            if (x.team is None or x.team != y.team)
            and min(x.left, y.left) > max(x.joined, y.joined)
        ]
        if not pairs:
            return []
        cols = np.array([(x.score, x.minutes, y.score, y.minutes) for x, y in pairs])
        sign = compare_sph(cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3])
        return [
            (x.player_id, y.player_id, 0.5 * (float(s) + 1.0))
            for (x, y), s in zip(pairs, sign.tolist(), strict=True)
        ]

    def _close_until(self, target: int) -> dict[int, list[Result]]:
        """Close every open period before ``target``, applying those with results in order.

        Returns the results of the periods closed (for the undo of a failed batch).
        """
        clock = self._periods
        done: dict[int, list[Result]] = {}
        if target <= clock.closed:
            return done
        for index in sorted(k for k in clock.pending if k < target):
            done[index] = clock.pending.pop(index)
            self._apply_period(index, done[index])
        clock.closed = target
        return done

    def _apply_period(self, index: int, results: list[Result]) -> None:
        """Apply steps 3 to 8 to every player with results in period ``index``, vectorised."""
        res = np.array(results, dtype=np.float64)
        me = np.concatenate([res[:, 0], res[:, 1]]).astype(np.intp)
        opp = np.concatenate([res[:, 1], res[:, 0]]).astype(np.intp)
        score = np.concatenate([res[:, 2], 1.0 - res[:, 2]])
        mu, phi2, sigma, fresh = self._table.columns
        players, pos = np.unique(me, return_inverse=True)
        # pre-period phi^2: step 6 for each idle period since the player's phi was current
        pre_phi2 = phi2[players] + (index - fresh[players]) * sigma[players] ** 2
        opp_phi2 = phi2[opp] + (index - fresh[opp]) * sigma[opp] ** 2
        g = g_factor(opp_phi2)
        e = 1.0 / (1.0 + np.exp(-g * (mu[me] - mu[opp])))
        info = np.bincount(pos, weights=g * g * e * (1.0 - e), minlength=players.size)
        gain = np.bincount(pos, weights=g * (score - e), minlength=players.size)
        new_mu = mu[players].copy()
        new_sigma = sigma[players].copy()
        new_phi2 = pre_phi2 + new_sigma**2  # step 6 alone: an uninformative period
        ok = info > 0
        if ok.any():
            v = 1.0 / info[ok]  # step 3
            delta = v * gain[ok]  # step 4
            new_sigma[ok] = new_volatility(delta**2, pre_phi2[ok], v, sigma[players][ok], self.tau)
            phi_star2 = pre_phi2[ok] + new_sigma[ok] ** 2  # step 6
            new_phi2[ok] = 1.0 / (1.0 / phi_star2 + 1.0 / v)  # step 7
            new_mu[ok] = mu[players][ok] + new_phi2[ok] * gain[ok]
        self._table.write(
            players, [new_mu, new_phi2, new_sigma, np.full(players.size, float(index + 1))]
        )
