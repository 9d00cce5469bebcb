"""The population model: who the arriving players are (docs/model.md, section 4, "Players").

:class:`Population` holds the parameters (a frozen, validated dataclass) and samples players in
batches, struct-of-arrays: each player's true skill s (hidden from policies and raters), the
system's prior belief (mu0, var0) about that player, a registered/guest flag and the length of the
session (in games, and optionally in minutes). Patience is drawn per queueing spell with
:meth:`Population.sample_patience`. The population also says how true skills change once players
play (a drift per day, a learning curve for newcomers); the lobby applies that
(:mod:`lobbysim.sim.skill_dynamics`), drawing nothing from the population's stream.

Randomness comes only from the injected generator, and every call consumes a fixed number of
variates for a given ``n``, whatever the parameters (e.g. whether sessions have a time limit), so
that scenarios differing in one population option still see the same players in every other
respect. SimPy-free.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from lobbysim.registry import PluginError, did_you_mean
from lobbysim.validation import real_parameter

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

PriorKind = Literal["population", "informative"]
PRIOR_KINDS: tuple[PriorKind, ...] = ("population", "informative")
UNLIMITED_GAMES = 2**62  # the session length in games when sessions have no game limit


@dataclass(frozen=True)
class PlayerBatch:
    """Newly sampled players, one array entry per player.

    Attributes:
        skill: true skill s (hidden from policies and raters).
        mu0, var0: the system's prior belief about the player, N(mu0, var0).
        registered: True for a registered player, False for a guest.
        session_games: games the player plays before leaving (>= 1).
        session_minutes: the session's time limit in minutes (``inf`` if sessions are unlimited);
            the player leaves at the first end of a game after it, or while waiting.
    """

    skill: FloatArray
    mu0: FloatArray
    var0: FloatArray
    registered: BoolArray
    session_games: IntArray
    session_minutes: FloatArray

    def __len__(self) -> int:
        return int(self.skill.shape[0])


def _count(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return int(n)


@dataclass(frozen=True)
class Population:
    """Who the players are: skills, prior beliefs, guests, session lengths, patience, and how
    skills change.

    Args:
        skill_mean: mean of the true skills in the population.
        skill_sd: standard deviation of the skills (> 0).
        prior: how the system's prior belief about a newcomer is formed.
            ``"population"``: s ~ N(skill_mean, skill_sd^2) and every prior is
            (mu0, var0) = (skill_mean, skill_sd^2): the system knows nothing about a newcomer.
            ``"informative"`` (the paper's study): mu0 ~ N(skill_mean, skill_sd^2),
            var0 ~ U[prior_var_low, prior_var_high] and s ~ N(mu0, var0), so the prior is right on
            average (the skills then have variance skill_sd^2 + mean(var0)).
        prior_var_low, prior_var_high: the range of var0 for the informative prior
            (0 < low <= high).
        registered_fraction: the share of registered players, in [0, 1]; the rest are guests.
        session_games_mean: mean games per session (>= 1); the count is Geometric(1 / mean) on
            {1, 2, ...}. ``None``: no limit on games (the session then ends only by
            ``session_minutes_mean``, patience or the horizon; the paper's study).
        session_minutes_mean: if given (> 0), a session also ends after Exp(mean) minutes.
        patience_mean: mean patience in minutes per queueing spell, Exp(mean) (> 0); ``None`` for
            players who never give up.
        prior_seed: with the informative prior, draw the prior means and variances from this
            seed instead of the run's stream, so every replication has the same priors and only
            the true skills (and everything else) change: the paper's study, which fixes its 50
            players' priors and draws their skills per sample path. The priors are the paper
            engine's (:func:`lobbysim.paper.draw_priors`) for the same seed, before its reordering.
        skill_drift_per_day: variance a true skill gains per day (>= 0; 0: skills never
            change): a Gaussian random walk, applied lazily and exactly by the lobby
            (:mod:`lobbysim.sim.skill_dynamics`; docs/model.md, "Skill dynamics").
        learning_deficit: how far below their skill a player plays in their first game
            (>= 0; 0: no learning curve). In a game after n others a player's effective skill
            is ``skill - learning_deficit * exp(-n / learning_games)``.
        learning_games: games over which the deficit shrinks by a factor e (> 0).
    """

    skill_mean: float = 0.0
    skill_sd: float = 2.0
    prior: PriorKind = "population"
    prior_var_low: float = 2.0
    prior_var_high: float = 3.0
    registered_fraction: float = 1.0
    session_games_mean: float | None = 10.0
    session_minutes_mean: float | None = None
    patience_mean: float | None = 5.0
    prior_seed: int | None = None
    skill_drift_per_day: float = 0.0
    learning_deficit: float = 0.0
    learning_games: float = 20.0
    _prior_rng: np.random.Generator | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        def put(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        put("skill_mean", real_parameter("skill_mean", self.skill_mean))
        put("skill_sd", real_parameter("skill_sd", self.skill_sd, gt=0.0))
        if self.prior not in PRIOR_KINDS:
            hint = did_you_mean(str(self.prior), list(PRIOR_KINDS))
            raise ValueError(
                f"prior must be 'population' or 'informative', got {self.prior!r}{hint}"
            )
        put("prior_var_low", real_parameter("prior_var_low", self.prior_var_low, gt=0.0))
        put(
            "prior_var_high",
            real_parameter("prior_var_high", self.prior_var_high, ge=self.prior_var_low),
        )
        put(
            "registered_fraction",
            real_parameter("registered_fraction", self.registered_fraction, ge=0.0, le=1.0),
        )
        if self.session_games_mean is not None:
            games_mean = real_parameter("session_games_mean", self.session_games_mean, ge=1.0)
            put("session_games_mean", games_mean)
        if self.session_minutes_mean is not None:
            minutes = real_parameter("session_minutes_mean", self.session_minutes_mean, gt=0.0)
            put("session_minutes_mean", minutes)
        if self.patience_mean is not None:
            put("patience_mean", real_parameter("patience_mean", self.patience_mean, gt=0.0))
        if self.prior_seed is not None:
            if (
                isinstance(self.prior_seed, bool)
                or not isinstance(self.prior_seed, numbers.Integral)
                or self.prior_seed < 0
            ):
                raise ValueError(f"prior_seed must be a whole number >= 0, got {self.prior_seed!r}")
            if self.prior != "informative":
                raise ValueError("prior_seed needs prior: informative (other priors are all equal)")
            seq = np.random.SeedSequence(int(self.prior_seed), spawn_key=(0,))
            put("_prior_rng", np.random.default_rng(seq))
        drift = real_parameter("skill_drift_per_day", self.skill_drift_per_day, ge=0.0)
        put("skill_drift_per_day", drift)
        put("learning_deficit", real_parameter("learning_deficit", self.learning_deficit, ge=0.0))
        put("learning_games", real_parameter("learning_games", self.learning_games, gt=0.0))

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None) -> Population:
        """Build a population from a scenario's mapping, with the registries' errors.

        Raises:
            PluginError: for an unknown parameter (with a "did you mean") or an invalid value.
        """
        params = dict(params or {})
        declared = [f.name for f in fields(cls) if f.init]
        for key in params:
            if key not in declared:
                hint = did_you_mean(key, declared)
                allowed = ", ".join(declared)
                raise PluginError(
                    f"population has no parameter '{key}'{hint}; parameters: {allowed}"
                )
        try:
            return cls(**params)
        except (TypeError, ValueError) as exc:
            raise PluginError(f"population: {exc}") from None

    def sample(self, rng: np.random.Generator, n: int) -> PlayerBatch:
        """Sample ``n`` new players.

        Always draws, in this order, n standard normals (prior mean), n uniforms (prior variance),
        n standard normals (skill), n uniforms (registered), n uniforms (session games) and n
        standard exponentials (session minutes), whatever the options.

        Args:
            rng: the population's random stream.
            n: the number of players (>= 0).
        """
        n = _count(n)
        z_prior = rng.standard_normal(n)
        u_var = rng.random(n)
        z_skill = rng.standard_normal(n)
        u_registered = rng.random(n)
        u_games = rng.random(n)
        e_minutes = rng.standard_exponential(n)

        if self._prior_rng is not None:  # the same priors in every replication
            z_prior = self._prior_rng.standard_normal(n)
            u_var = self._prior_rng.random(n)
        if self.prior == "informative":
            mu0 = self.skill_mean + self.skill_sd * z_prior
            var0 = self.prior_var_low + (self.prior_var_high - self.prior_var_low) * u_var
            skill = mu0 + np.sqrt(var0) * z_skill
        else:
            mu0 = np.full(n, self.skill_mean)
            var0 = np.full(n, self.skill_sd**2)
            skill = self.skill_mean + self.skill_sd * z_skill

        registered = u_registered < self.registered_fraction
        session_games, session_minutes = self._sessions(u_games, e_minutes)
        return PlayerBatch(skill, mu0, var0, registered, session_games, session_minutes)

    def sample_sessions(self, rng: np.random.Generator, n: int) -> tuple[IntArray, FloatArray]:
        """Return the games and minutes of ``n`` sessions (the visits of a player base's members).

        Draws n uniforms (games) then n standard exponentials (minutes), whatever the options,
        and maps them as :meth:`sample` does.
        """
        n = _count(n)
        u_games = rng.random(n)
        e_minutes = rng.standard_exponential(n)
        return self._sessions(u_games, e_minutes)

    def _sessions(self, u_games: FloatArray, e_minutes: FloatArray) -> tuple[IntArray, FloatArray]:
        """Map uniforms and standard exponentials to session games (geometric) and minutes."""
        if self.session_games_mean is None:
            games = np.full(u_games.shape, UNLIMITED_GAMES, dtype=np.int64)
        else:
            games = _geometric(1.0 / self.session_games_mean, u_games)
        if self.session_minutes_mean is None:
            minutes = np.full(e_minutes.shape, math.inf)
        else:
            minutes = self.session_minutes_mean * e_minutes
        return games, minutes

    def sample_patience(self, rng: np.random.Generator, n: int) -> FloatArray:
        """Return ``n`` patiences in minutes, one per queueing spell (``inf`` if none is set).

        Draws n standard exponentials whether or not ``patience_mean`` is set.
        """
        e = rng.standard_exponential(_count(n))
        if self.patience_mean is None:
            return np.full(e.shape, math.inf)
        return self.patience_mean * e


def _geometric(p: float, u: FloatArray) -> IntArray:
    """Return Geometric(p) counts on {1, 2, ...} (mean 1/p) by inversion of uniforms in [0, 1)."""
    if p >= 1.0:
        return np.ones(u.shape, dtype=np.int64)
    # P(G <= k) = 1 - (1 - p)^k; with v = 1 - u in (0, 1], G = ceil(log v / log(1 - p)).
    g = np.ceil(np.log1p(-u) / math.log1p(-p))
    return np.clip(g, 1.0, float(UNLIMITED_GAMES)).astype(np.int64)
