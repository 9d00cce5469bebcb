"""The population model: moments over a fixed range of seeds, determinism, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lobbysim.players.population import PlayerBatch, Population
from lobbysim.registry import PluginError

SEEDS = range(5)
N = 200_000


def within(value: float, target: float, se: float, k: float = 4.0) -> bool:
    return abs(value - target) <= k * se


def sample(pop: Population, seed: int, n: int = N) -> PlayerBatch:
    return pop.sample(np.random.default_rng(seed), n)


@pytest.mark.parametrize("seed", SEEDS)
def test_population_prior_skills_have_the_population_moments(seed: int) -> None:
    pop = Population(skill_mean=1.5, skill_sd=2.0)
    b = sample(pop, seed)
    assert within(b.skill.mean(), 1.5, 2.0 / math.sqrt(N))
    assert within(b.skill.var(), 4.0, 4.0 * math.sqrt(2.0 / (N - 1)))
    # The system knows nothing about a newcomer: the prior is the population.
    assert np.all(b.mu0 == 1.5)
    assert np.all(b.var0 == 4.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_informative_prior_is_right_on_average(seed: int) -> None:
    pop = Population(skill_mean=-1.0, skill_sd=2.0, prior="informative")
    b = sample(pop, seed)
    low, high = pop.prior_var_low, pop.prior_var_high
    # mu0 ~ N(skill_mean, skill_sd^2), var0 ~ U[low, high].
    assert within(b.mu0.mean(), -1.0, 2.0 / math.sqrt(N))
    assert within(b.mu0.var(), 4.0, 4.0 * math.sqrt(2.0 / (N - 1)))
    assert np.all((b.var0 >= low) & (b.var0 <= high))
    assert within(b.var0.mean(), (low + high) / 2, (high - low) / math.sqrt(12 * N))
    # s ~ N(mu0, var0): the error s - mu0 has mean 0 and variance mean(var0) ...
    err = b.skill - b.mu0
    assert within(err.mean(), 0.0, math.sqrt(b.var0.mean() / N))
    sq = (err - err.mean()) ** 2
    assert within(err.var(), b.var0.mean(), sq.std() / math.sqrt(N))
    # ... and, standardised by each player's own var0, is N(0, 1).
    z = err / np.sqrt(b.var0)
    assert within(z.var(), 1.0, math.sqrt(2.0 / (N - 1)))
    # The prior mean carries information: the skills correlate with it.
    assert np.corrcoef(b.skill, b.mu0)[0, 1] > 0.7


@pytest.mark.parametrize("seed", SEEDS)
def test_registered_fraction(seed: int) -> None:
    b = sample(Population(registered_fraction=0.3), seed)
    assert b.registered.dtype == np.bool_
    assert within(b.registered.mean(), 0.3, math.sqrt(0.3 * 0.7 / N))


@pytest.mark.parametrize("fraction", [0.0, 1.0])
def test_registered_fraction_extremes(fraction: float) -> None:
    b = sample(Population(registered_fraction=fraction), 0, n=1000)
    assert np.all(b.registered == bool(fraction))


@pytest.mark.parametrize("seed", SEEDS)
def test_session_games_are_geometric_with_the_given_mean_and_at_least_one(seed: int) -> None:
    mean = 10.0
    p = 1.0 / mean
    b = sample(Population(session_games_mean=mean), seed)
    assert b.session_games.dtype == np.int64
    assert b.session_games.min() == 1
    assert within(b.session_games.mean(), mean, math.sqrt((1 - p) / p**2 / N))
    assert within((b.session_games == 1).mean(), p, math.sqrt(p * (1 - p) / N))
    assert within((b.session_games == 2).mean(), p * (1 - p), math.sqrt(p * (1 - p) / N))
    assert np.all(np.isinf(b.session_minutes))  # no time limit by default


def test_a_session_games_mean_of_one_means_one_game() -> None:
    b = sample(Population(session_games_mean=1.0), 0, n=1000)
    assert np.all(b.session_games == 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_session_minutes_are_exponential(seed: int) -> None:
    b = sample(Population(session_minutes_mean=45.0), seed)
    assert np.all(b.session_minutes > 0)
    assert within(b.session_minutes.mean(), 45.0, 45.0 / math.sqrt(N))


@pytest.mark.parametrize("seed", SEEDS)
def test_patience_is_exponential_per_spell(seed: int) -> None:
    patience = Population(patience_mean=5.0).sample_patience(np.random.default_rng(seed), N)
    assert np.all(patience > 0)
    assert within(patience.mean(), 5.0, 5.0 / math.sqrt(N))
    infinite = Population(patience_mean=None).sample_patience(np.random.default_rng(seed), 10)
    assert np.all(np.isinf(infinite))


def test_same_seed_same_players_and_different_seed_different_players() -> None:
    pop = Population(prior="informative", registered_fraction=0.5, session_minutes_mean=30.0)
    a, b, c = sample(pop, 1, 500), sample(pop, 1, 500), sample(pop, 2, 500)
    for name in ("skill", "mu0", "var0", "registered", "session_games", "session_minutes"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.skill, c.skill)
    assert len(a) == 500


def test_every_call_draws_the_same_amount_whatever_the_options() -> None:
    # Changing one option must not shift the stream for the players that follow.
    options = [
        Population(),
        Population(prior="informative"),
        Population(session_minutes_mean=20.0, registered_fraction=0.0),
        Population(session_games_mean=1.0),
    ]
    after = []
    for pop in options:
        rng = np.random.default_rng(5)
        pop.sample(rng, 100)
        pop.sample_patience(rng, 10)
        after.append(rng.random())
    assert len(set(after)) == 1
    # Options that do not concern the skills leave them unchanged.
    base = sample(Population(), 3, 100)
    other = sample(Population(session_minutes_mean=20.0, registered_fraction=0.2), 3, 100)
    np.testing.assert_array_equal(base.skill, other.skill)
    np.testing.assert_array_equal(base.session_games, other.session_games)


def test_zero_players() -> None:
    b = sample(Population(), 0, 0)
    assert len(b) == 0
    assert b.session_games.shape == (0,)


@pytest.mark.parametrize("n", [-1, 2.5, True])
def test_a_bad_count_is_rejected(n: object) -> None:
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        Population().sample(np.random.default_rng(0), n)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"skill_sd": 0.0}, "skill_sd must be > 0, got 0.0"),
        ({"skill_mean": math.nan}, "skill_mean must be a finite number, got nan"),
        ({"prior": "uniform"}, "prior must be 'population' or 'informative', got 'uniform'"),
        ({"prior_var_low": -1.0}, "prior_var_low must be > 0, got -1.0"),
        ({"prior_var_high": 1.0}, "prior_var_high must be >= 2, got 1.0"),
        ({"registered_fraction": 1.5}, "registered_fraction must be <= 1, got 1.5"),
        ({"session_games_mean": 0.5}, "session_games_mean must be >= 1, got 0.5"),
        ({"session_minutes_mean": 0}, "session_minutes_mean must be > 0, got 0"),
        ({"patience_mean": -5.0}, "patience_mean must be > 0, got -5.0"),
        ({"patience_mean": "long"}, "patience_mean must be a finite number, got 'long'"),
    ],
)
def test_bad_parameters_name_the_field_and_the_value(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{message}"):
        Population(**params)  # type: ignore[arg-type]
    with pytest.raises(PluginError, match=f"^population: {message}"):
        Population.from_params(params)


def test_from_params_suggests_a_close_parameter_name() -> None:
    with pytest.raises(PluginError, match=r"no parameter 'skil_sd' \(did you mean 'skill_sd'\?\)"):
        Population.from_params({"skil_sd": 1.0})
    pop = Population.from_params({"skill_sd": 1, "patience_mean": None})
    assert pop.skill_sd == 1.0
    assert isinstance(pop.skill_sd, float)
    assert pop.patience_mean is None
