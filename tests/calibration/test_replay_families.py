"""The replay reads a rater's declared replay family (``replay_family``), never its class: a
user's rater declaring a family is replayed on that family's fast path and scores as the
built-in does; one declaring none takes the generic path (lobbysim/calibration/replay.py,
lobbysim/raters/base.py: replay_family)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from lobbysim.calibration.replay import LogArrays, Predictor, replay
from lobbysim.calibration.scores import score_log
from lobbysim.raters import RATERS, BayesianRater, Rater
from lobbysim.raters.base import REPLAY_FAMILIES, replay_family
from lobbysim.records.rows import GameResult
from lobbysim.scenario import PluginSpec
from tests.calibration.logs import random_log

HERE = __name__


@dataclass(eq=False)
class UserGaussian:
    """A user's rater, no subclass of any lobbysim class: the Bayesian rater's beliefs behind
    its own face, declaring the Gaussian replay family."""

    name: ClassVar[str] = "user_gaussian"
    has_variance: ClassVar[bool] = True
    skill_scale: ClassVar[bool] = True
    replay_family: ClassVar[str] = "gaussian"

    beta2: float = 2.5
    tau2: float = 0.0
    inner: BayesianRater = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.inner = BayesianRater(beta2=self.beta2, tau2=self.tau2)

    def add_players(self, ids: Any, mu0: Any, var0: Any) -> None:
        self.inner.add_players(ids, mu0, var0)

    def means(self, ids: Any) -> Any:
        return self.inner.means(ids)

    def variances(self, ids: Any) -> Any:
        return self.inner.variances(ids)

    def update(self, games: Sequence[GameResult]) -> None:
        self.inner.update(games)

    def win_probability(self, ids_a: Any, ids_b: Any) -> Any:
        return self.inner.win_probability(ids_a, ids_b)

    def quality(self, ids_a: Any, ids_b: Any) -> Any:
        return self.inner.quality(ids_a, ids_b)


@dataclass(eq=False)
class UserUndeclared(UserGaussian):
    """The same rater declaring no family: replayed on the generic path."""

    name: ClassVar[str] = "user_undeclared"
    replay_family: ClassVar[str] = "generic"


class Wrapped:
    """A built-in rater behind a user's class declaring ``family`` (``t`` and ``period``, which
    the elo and glicko2 families read, are the inner rater's)."""

    replay_family: ClassVar[str]

    def __init__(self, inner: Rater) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def wrapped(name: str, **params: Any) -> Wrapped:
    inner = RATERS.create(name, params)
    family = replay_family(inner)
    cls = type(f"Wrapped_{family}", (Wrapped,), {"replay_family": family})
    return cls(inner)


def fresh(rater: Any, players: int) -> Any:
    """Return ``rater`` as the replay takes it: no player added (each enters at their first
    match; ``players`` is the log's count, unused)."""
    return rater


def arrays(seed: int = 3, **kinds: Any) -> LogArrays:
    return LogArrays.from_log(random_log(np.random.default_rng(seed), matches=150, **kinds))


def test_the_builtin_raters_declare_their_families() -> None:
    got = {name: replay_family(RATERS.create(name, {})) for name in ("bayesian", "sph_elo")}
    got["glicko2"] = replay_family(RATERS.create("glicko2", {}))
    assert got == {"bayesian": "gaussian", "sph_elo": "elo", "glicko2": "glicko2"}
    assert replay_family(object()) == "generic"  # declares nothing
    assert set(REPLAY_FAMILIES) == {"gaussian", "elo", "glicko2", "generic"}


def test_a_user_rater_declaring_gaussian_replays_on_the_fast_path() -> None:
    log = arrays()
    user = fresh(UserGaussian(beta2=2.5, tau2=0.01), log.players)
    builtin = fresh(BayesianRater(beta2=2.5, tau2=0.01), log.players)
    assert Predictor(user).family == "gaussian"
    assert Predictor(user).conflicts == "players"
    assert Predictor(UserUndeclared()).family == "generic"
    np.testing.assert_array_equal(replay(user, log), replay(builtin, log))


def scored(kinds: tuple[str, ...]) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Return the scores of the Bayesian rater, of UserGaussian and of UserUndeclared (the
    same parameters) on a random log of matches of ``kinds``."""
    log = random_log(np.random.default_rng(5), matches=200, kinds=kinds)
    params = {"beta2": 2.5, "tau2": 0.01}
    specs = [
        PluginSpec("bayesian", params),
        PluginSpec(f"{HERE}:UserGaussian", params),
        PluginSpec(f"{HERE}:UserUndeclared", params),
    ]
    scores = score_log(log, specs, tune=False).scores
    values = scores.pivot_table(index=["part", "metric"], columns="rater", values="value")
    builtin, user, undeclared = (values[str(spec.name)] for spec in specs)
    return builtin, user, undeclared


def test_a_user_rater_declaring_gaussian_scores_as_the_builtin() -> None:
    builtin, user, undeclared = scored(("1v1", "2v2", "ffa"))
    pd.testing.assert_series_equal(user, builtin, check_names=False, rtol=0, atol=0)
    # undeclared, the rater is replayed as a rater of no family (team sides: the mean of its
    # win_probability over every two players, not the Gaussian sides' formula)
    assert not np.allclose(undeclared.to_numpy(), builtin.to_numpy(), rtol=1e-6, atol=0)
    # in a log of 1v1 matches both formulas are win_probability: the same up to rounding
    builtin, user, undeclared = scored(("1v1",))
    pd.testing.assert_series_equal(user, builtin, check_names=False, rtol=0, atol=0)
    pd.testing.assert_series_equal(undeclared, builtin, check_names=False, rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "params"),
    [("bayesian", {"beta2": 2.0}), ("sph_elo", {}), ("glicko2", {"period": 10.0})],
)
def test_a_user_rater_declaring_a_family_replays_as_the_builtin(
    name: str, params: dict[str, Any]
) -> None:
    log = arrays(7)
    user = fresh(wrapped(name, **params), log.players)
    builtin = fresh(RATERS.create(name, params), log.players)
    assert Predictor(user).family == replay_family(builtin) != "generic"
    np.testing.assert_array_equal(replay(user, log), replay(builtin, log))


def test_a_subclass_predicting_its_own_way_loses_the_family() -> None:
    class Sharper(BayesianRater):
        def win_probability(self, ids_a: Any, ids_b: Any) -> Any:
            return super().win_probability(ids_a, ids_b) ** 2

    class SharperDeclared(Sharper):
        replay_family: ClassVar[str] = "gaussian"

    class Renamed(BayesianRater):  # changes nothing the family reads: keeps it
        name: ClassVar[str] = "renamed"

    assert replay_family(Sharper()) == "generic"
    assert replay_family(SharperDeclared()) == "gaussian"
    assert replay_family(Renamed()) == "gaussian"


def test_an_unknown_family_is_refused() -> None:
    class Odd(UserGaussian):
        replay_family: ClassVar[str] = "trueskill"

    with pytest.raises(ValueError, match="replay_family must be one of"):
        Predictor(Odd())
