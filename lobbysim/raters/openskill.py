"""The OpenSkill rater: an adapter for the ``openskill`` library's Weng-Lin models.

``openskill`` (:class:`OpenSkillRater`) rates games with one of the five models of the
``openskill`` package (https://pypi.org/project/openskill/, documentation at
https://openskill.me): ``PlackettLuce`` (the default), ``BradleyTerryFull``,
``BradleyTerryPart``, ``ThurstoneMostellerFull`` and ``ThurstoneMostellerPart``, the Bayesian
approximations of Ruby C. Weng and Chih-Jen Lin, "A Bayesian Approximation Method for Online
Ranking", Journal of Machine Learning Research 12 (2011), 267-300
(https://jmlr.org/papers/v12/weng11a.html). The package is optional
(``pip install 'lobbysim[openskill]'``) and imported only when the rater is built.

**Scale.** Each player's belief is the Gaussian ``N(mu, sigma^2)`` the library keeps, started
at the prior the lobby gives :meth:`~OpenSkillRater.add_players` (``mu = mu0``,
``sigma = sqrt(var0)``); the model's ``beta`` (one performance's noise) is ``sqrt(beta2)``, the
game's own ``beta2`` unless the rater's spec sets one, exactly as for the Bayesian rater. The
library's defaults (``mu = 25``, ``sigma = 25/3``, ``beta = 25/6``) are TrueSkill's scale; with
these settings the beliefs are on lobbysim's true-skill scale instead, so ``skill_scale`` is True
and the metrics include the RMSE against true skill. The dynamics ``tau2`` (variance added before
each game, default 0 as in the Bayesian rater) is the library's ``tau``, squared. Every other
model setting keeps the library's default (``kappa``, ``margin``, ``limit_sigma``, ``balance``
and, for the Thurstone-Mosteller models, the draw margin ``epsilon = 0.1``).

**Outcomes**, per mode as :mod:`lobbysim.raters.bayesian` reads them. A ``1v1`` game is decided
by ``game.winner`` (a game with a guest changes nothing). A ``team`` game ranks its sides by
``game.winner`` (the side with the larger total score; ``None``, a draw, ranks them equal), with
each side's rated players who were in the game (minutes > 0) as its team. A free-for-all ranks
its rated players with minutes > 0 by exact score per hour, equal SPH an equal rank. Guests are
left out of every team. Games with fewer than two sides that have rated players change nothing.
Seats are put in player-id order and sides in side order before the library is called. A
partial stint counts as a full one: the library's ``weights`` are not the stint share (they are
normalised within each team), so none are passed. Games are applied one at a time in order.

**Win model.** :meth:`~OpenSkillRater.win_probability` is ``Phi((mu_a - mu_b) / c)``,
``c^2 = 2 beta2 + sigma_a^2 + sigma_b^2``: the library's ``predict_win`` for two teams of one
player, vectorised. :meth:`~OpenSkillRater.quality` is TrueSkill's match quality on the same
beliefs (:func:`lobbysim.skill.gaussian.match_quality`), the measure the Bayesian rater uses: in
[0, 1], 1 for an even match of exactly known players.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from lobbysim.raters.base import (
    RATERS,
    GaussianBeliefs,
    PlayerTable,
    check_seats,
    duel_sides,
    game_error,
)
from lobbysim.records.rows import GameResult, Seat
from lobbysim.registry import did_you_mean
from lobbysim.validation import MAX_SKILL_VARIANCE, real_parameter

MODELS = (
    "PlackettLuce",
    "BradleyTerryFull",
    "BradleyTerryPart",
    "ThurstoneMostellerFull",
    "ThurstoneMostellerPart",
)
"""The openskill models the adapter accepts, by class name."""

INSTALL_HINT = "install it with: pip install 'lobbysim[openskill]'"

Match = tuple[list[list[int]], list[int]]
"""One game as the library takes it: teams of player ids, and each team's rank (0 best)."""


def openskill_models() -> Any:
    """Return the ``openskill.models`` module, or raise a ValueError saying how to install it."""
    try:
        import openskill.models
    except ImportError:
        raise ValueError(f"the openskill package is not installed: {INSTALL_HINT}") from None
    return openskill.models


def competition_ranks(keys: Sequence[Fraction]) -> list[int]:
    """Return each key's rank, higher keys first: the number of keys strictly above it."""
    ordered = sorted(keys, reverse=True)
    first: dict[Fraction, int] = {}
    for position, key in enumerate(ordered):
        first.setdefault(key, position)
    return [first[key] for key in keys]


def sph(seat: Seat) -> Fraction:
    """Return a seat's score per minute exactly (the order of score per hour)."""
    return Fraction(seat.score) / Fraction(seat.minutes)


@RATERS.register
@dataclass(frozen=True, eq=False)
class OpenSkillRater(GaussianBeliefs):
    """Beliefs N(mu, sigma^2) updated by an ``openskill`` model (needs the openskill package).

    Args:
        model: the openskill model's class name, one of :data:`MODELS`.
        beta2: one performance's variance (> 0 and at most 1e8,
            :data:`~lobbysim.validation.MAX_SKILL_VARIANCE`: the models square and sum it and
            near 1e308 overflow to NaN ratings); in a lobby it defaults to the game's
            ``beta2``, as for the Bayesian rater. Built directly, the default is 2.5.
        tau2: the dynamics variance added to sigma^2 before each game (>= 0, at most 1e8).

    Raises:
        ValueError: a parameter out of range (the message names it), or the openskill package
            is not installed (the message says how to install it).
    """

    name: ClassVar[str] = "openskill"
    has_variance: ClassVar[bool] = True
    skill_scale: ClassVar[bool] = True

    model: str = "PlackettLuce"
    beta2: float = 2.5
    tau2: float = 0.0
    _model: Any = field(init=False, repr=False, compare=False)
    _table: PlayerTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate the parameters, import openskill and build the model."""
        if self.model not in MODELS:
            hint = did_you_mean(str(self.model), list(MODELS))
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {self.model!r}{hint}")
        beta2 = real_parameter("beta2", self.beta2, gt=0, le=MAX_SKILL_VARIANCE)
        tau2 = real_parameter("tau2", self.tau2, ge=0, le=MAX_SKILL_VARIANCE)
        cls = getattr(openskill_models(), self.model)
        built = cls(mu=0.0, sigma=1.0, beta=math.sqrt(beta2), tau=math.sqrt(tau2))
        object.__setattr__(self, "_model", built)
        object.__setattr__(self, "_table", PlayerTable(self.name, 2))

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games in order, one ``model.rate`` call per game that rates anyone.

        Raises:
            KeyError: a rated seat's player id is unknown.
            ValueError: a malformed game (wrong seats for its mode, bad winner, bad stint).
        """
        matches = [m for game in games if (m := self._match(game)) is not None]
        ids = itertools.chain.from_iterable(p for teams, _ in matches for p in teams)
        table = self._table
        table.index(np.fromiter(ids, np.int64))
        table.begin()
        try:
            for teams, ranks in matches:
                self._rate(teams, ranks)
        except BaseException:
            table.rollback()
            raise
        table.commit()

    def _rate(self, teams: list[list[int]], ranks: list[int]) -> None:
        """Rate one game with the library and write its players' new beliefs."""
        mu, var = self._table.columns
        model = self._model
        ratings = [
            [model.rating(mu=float(mu[p]), sigma=math.sqrt(float(var[p]))) for p in team]
            for team in teams
        ]
        new = model.rate(ratings, ranks=[float(r) for r in ranks])
        idx = np.fromiter(itertools.chain.from_iterable(teams), np.intp)
        flat = list(itertools.chain.from_iterable(new))
        self._table.write(
            idx,
            [np.array([r.mu for r in flat]), np.array([r.sigma for r in flat]) ** 2],
        )

    def _match(self, game: GameResult) -> Match | None:
        """Return the teams and ranks ``game`` gives the library, or None if it rates nobody."""
        if game.mode == "1v1":
            a, b = duel_sides(game)
            if game.winner not in (a.team, b.team):
                raise game_error(game, f"winner {game.winner!r} is neither side")
            if not (a.registered and b.registered):
                return None
            return [[a.player_id], [b.player_id]], [0, 1] if game.winner == a.team else [1, 0]
        check_seats(game)
        rated = sorted(
            (s for s in game.seats if s.registered and s.minutes > 0), key=lambda s: s.player_id
        )
        if game.mode == "ffa":
            if len(rated) < 2:
                return None
            return [[s.player_id] for s in rated], competition_ranks([sph(s) for s in rated])
        sides = sorted({int(s.team) for s in game.seats if s.team is not None})
        if game.winner is not None and game.winner not in sides:
            raise game_error(game, f"winner {game.winner!r} is no side of the game")
        teams = {side: [s.player_id for s in rated if s.team == side] for side in sides}
        present = [side for side in sides if teams[side]]
        if len(present) < 2:
            return None
        ranks = [0 if game.winner is None or side == game.winner else 1 for side in present]
        return [teams[side] for side in present], ranks
