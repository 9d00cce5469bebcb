"""Latency models: the matrix model's distribution over a fixed range of seeds, its draws, its
checks against the world, the engine's check of a model's answer, and the registry."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lobbysim.players.latency import (
    LATENCY,
    LatencyModel,
    MatrixLatency,
    check_latency_output,
)
from lobbysim.registry import PluginError

SEEDS = range(20)
REGIONS = ("eu", "na", "asia")
CENTRES = ("fra", "iad", "sin")
#: Every base is at least 15 ms against a floor of 1 ms: the floor is 12 spreads below, never hit.
BASE = {"eu": [15.0, 90.0, 180.0], "na": [95.0, 20.0, 160.0], "asia": [170.0, 150.0, 30.0]}
SPREAD = 0.25
PER_REGION = 4_000
#: 180 KS tests (20 seeds x 9 cells) of a true null: with p uniform, a threshold of 1e-4 fails
#: somewhere in the range with probability 1.8% (1e-3: 16%), which matters whenever a change
#: re-rolls the draws. The smallest p over the fixed seeds is 0.012.
KS_THRESHOLD = 1e-4


def cells(
    model: MatrixLatency, seed: int, per_region: int = PER_REGION, spread: float = SPREAD
) -> dict[tuple[str, str], np.ndarray]:
    """Return ``log(latency / base) / spread`` of every (region, data centre) cell of one draw."""
    regions = np.repeat(np.arange(len(REGIONS)), per_region)
    np.random.default_rng(10_000 + seed).shuffle(regions)  # interleaved, not in blocks
    lat = model.latencies(np.random.default_rng(seed), regions, REGIONS, CENTRES)
    return {
        (region, centre): np.log(lat[regions == r, d] / BASE[region][d]) / spread
        for r, region in enumerate(REGIONS)
        for d, centre in enumerate(CENTRES)
    }


# --- the declared distribution ----------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_log_latency_is_normal_around_the_base_with_sd_spread(seed: int) -> None:
    model = MatrixLatency(base_ms=BASE, spread=SPREAD, floor_ms=1.0)
    n = PER_REGION
    # The sample median of N(0, 1) has sd sqrt(pi / 2n); 5 of them on the latency's ratio.
    median_tolerance = 5 * SPREAD * math.sqrt(math.pi / (2 * n))  # 2.5%
    for cell, z in cells(model, seed).items():
        assert z.shape == (n,)
        p = stats.kstest(z, "norm").pvalue
        assert p > KS_THRESHOLD, (cell, p)
        median_ratio = math.exp(SPREAD * float(np.median(z)))  # median latency / base
        assert abs(median_ratio - 1) < median_tolerance, (cell, median_ratio)
        # sd of the log-latency within 5% of spread (its standard error here is 1.1%).
        assert abs(float(np.std(z * SPREAD, ddof=1)) / SPREAD - 1) < 0.05, cell


def test_the_distribution_test_has_power_against_a_wrong_spread() -> None:
    """Latencies drawn with spread 0.3, tested as if 0.25: the KS test and the sd check fail."""
    wrong = MatrixLatency(base_ms=BASE, spread=0.3, floor_ms=1.0)
    for seed in SEEDS[:5]:
        # KS on cells of 16,000 players: p < 1e-6 in every one (largest seen: 5.6e-26; at the
        # test's 4,000 a cell, 1.3e-6).
        for cell, z in cells(wrong, seed, per_region=16_000).items():
            assert stats.kstest(z, "norm").pvalue < 1e-6, cell
        # At the test's own size the sd check fails in every cell (20% off, 18 standard errors).
        for cell, z in cells(wrong, seed).items():
            assert abs(float(np.std(z * SPREAD, ddof=1)) / SPREAD - 1) > 0.05, cell


def test_the_median_check_has_power_against_a_wrong_base() -> None:
    """Bases 5% above those the test divides by: the median check fails in every cell."""
    shifted = MatrixLatency(
        base_ms={r: [b * 1.05 for b in row] for r, row in BASE.items()}, spread=SPREAD
    )
    tolerance = 5 * SPREAD * math.sqrt(math.pi / (2 * PER_REGION))
    for seed in SEEDS[:5]:
        for cell, z in cells(shifted, seed).items():
            assert abs(math.exp(SPREAD * float(np.median(z))) - 1) > tolerance, cell


# --- the draws ----------------------------------------------------------------------------------


def test_spread_zero_gives_every_player_the_base_of_their_region_exactly() -> None:
    model = MatrixLatency(base_ms=BASE, spread=0.0, floor_ms=0.0)
    regions = np.array([2, 0, 1, 1, 0, 2, 2], dtype=np.intp)
    lat = model.latencies(np.random.default_rng(1), regions, REGIONS, CENTRES)
    assert lat.dtype == np.float64
    assert lat.shape == (7, 3)
    for i, r in enumerate(regions):
        assert lat[i].tolist() == BASE[REGIONS[r]]


def test_the_latency_is_the_formula_with_one_call_of_standard_normal() -> None:
    model = MatrixLatency(base_ms=BASE, spread=0.7, floor_ms=25.0)
    regions = np.array([0, 1, 2, 0, 0, 1], dtype=np.intp)
    lat = model.latencies(np.random.default_rng(5), regions, REGIONS, CENTRES)
    z = np.random.default_rng(5).standard_normal((6, 3))
    base = np.array([BASE[REGIONS[r]] for r in regions])
    expected = np.maximum(25.0, base * np.exp(0.7 * z))
    assert lat.tobytes() == expected.tobytes()


def test_the_floor_applies() -> None:
    low = {"eu": [0.0, 0.5, 2.0], "na": [3.0, 0.0, 1.0], "asia": [5.0, 5.0, 5.0]}
    exact = MatrixLatency(base_ms=low, spread=0.0, floor_ms=1.0)
    regions = np.arange(3, dtype=np.intp)
    lat = exact.latencies(np.random.default_rng(0), regions, REGIONS, CENTRES)
    assert lat.tolist() == [[1.0, 1.0, 2.0], [3.0, 1.0, 1.0], [5.0, 5.0, 5.0]]
    spread = MatrixLatency(base_ms=BASE, spread=1.0, floor_ms=20.0)
    many = spread.latencies(np.random.default_rng(0), np.zeros(5_000, np.intp), REGIONS, CENTRES)
    assert many.min() == 20.0  # reached (15 ms at sd 1 falls below 20 often) and never passed
    assert (many[:, 0] == 20.0).mean() > 0.3
    # floor 0: a base of 0 stays 0 whatever the factor
    zero = MatrixLatency(base_ms=low, spread=1.0, floor_ms=0.0)
    lat = zero.latencies(np.random.default_rng(0), np.zeros(50, np.intp), REGIONS, CENTRES)
    assert (lat[:, 0] == 0.0).all() and (lat[:, 1] > 0).all()


def test_the_same_seed_gives_the_same_bytes_and_another_seed_others() -> None:
    model = MatrixLatency(base_ms=BASE)
    regions = np.array([0, 2, 1, 1, 2, 0, 0], dtype=np.intp)
    a = model.latencies(np.random.default_rng(42), regions, REGIONS, CENTRES)
    b = MatrixLatency(base_ms=dict(BASE)).latencies(
        np.random.default_rng(42), regions, REGIONS, CENTRES
    )
    c = model.latencies(np.random.default_rng(43), regions, REGIONS, CENTRES)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()


def test_the_draws_depend_only_on_the_numbers_of_players_and_data_centres() -> None:
    model = MatrixLatency(base_ms=BASE, spread=0.4)
    other = MatrixLatency(base_ms={r: [2 * b for b in row] for r, row in BASE.items()}, spread=0.1)
    first, second = np.random.default_rng(7), np.random.default_rng(7)
    a = model.latencies(first, np.array([0, 0, 0, 0], np.intp), REGIONS, CENTRES)
    b = other.latencies(second, np.array([2, 1, 0, 2], np.intp), REGIONS, CENTRES)
    assert first.bit_generator.state == second.bit_generator.state
    assert first.random() == second.random()
    # the same normals behind both: log(latency / base) / spread agrees cell by cell
    za = np.log(a / np.array([BASE["eu"]] * 4)) / 0.4
    zb = np.log(b / np.array([[2 * x for x in BASE[r]] for r in ("asia", "na", "eu", "asia")]))
    np.testing.assert_allclose(za, zb / 0.1, rtol=1e-9)
    # no players: a (0, k) answer, and the stream still consumed as for (0, k) (not at all)
    rng = np.random.default_rng(3)
    empty = model.latencies(rng, np.array([], dtype=np.intp), REGIONS, CENTRES)
    assert empty.shape == (0, 3)
    assert rng.random() == np.random.default_rng(3).random()


def test_bad_region_indices_are_refused() -> None:
    model = MatrixLatency(base_ms=BASE)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"regions: the index 3 is not one of the 3 regions"):
        model.latencies(rng, np.array([0, 3]), REGIONS, CENTRES)
    with pytest.raises(ValueError, match=r"regions: the index -1"):
        model.latencies(rng, np.array([-1]), REGIONS, CENTRES)
    with pytest.raises(ValueError, match=r"regions: expected a 1-d array"):
        model.latencies(rng, np.array([0.5]), REGIONS, CENTRES)
    with pytest.raises(ValueError, match=r"regions: expected a 1-d array"):
        model.latencies(rng, np.zeros((2, 2), np.intp), REGIONS, CENTRES)


def test_latencies_refuse_a_base_that_does_not_fit_the_world() -> None:
    model = MatrixLatency(base_ms={"eu": [10.0, 20.0]})
    with pytest.raises(ValueError, match=r"world\.latency\.base_ms\.eu: 2 latencies"):
        model.latencies(np.random.default_rng(0), np.array([0], np.intp), ("eu",), CENTRES)
    fine = model.latencies(np.random.default_rng(0), np.array([0], np.intp), ("eu",), ("a", "b"))
    assert fine.shape == (1, 2)


# --- check against the world --------------------------------------------------------------------


def test_a_base_that_fits_the_world_has_no_problems() -> None:
    assert MatrixLatency(base_ms=BASE).check(REGIONS, CENTRES) == []
    assert MatrixLatency(base_ms={"eu": []}).check(("eu",), ()) == []


def test_check_names_an_unknown_region_with_a_did_you_mean() -> None:
    base = {**BASE, "asai": [1.0, 2.0, 3.0]}
    (problem,) = MatrixLatency(base_ms=base).check(REGIONS, CENTRES)
    assert problem.startswith("world.latency.base_ms.asai: unknown region 'asai'")
    assert "(did you mean 'asia'?)" in problem
    assert "eu, na, asia" in problem


def test_check_names_a_missing_region() -> None:
    base = {"eu": BASE["eu"], "na": BASE["na"]}
    (problem,) = MatrixLatency(base_ms=base).check(REGIONS, CENTRES)
    assert problem.startswith("world.latency.base_ms: no latencies for the region 'asia'")
    # the default, empty base_ms: every region is missing
    assert len(MatrixLatency().check(REGIONS, CENTRES)) == 3


def test_check_names_a_row_of_the_wrong_length_and_the_data_centres() -> None:
    base = {**BASE, "na": [95.0, 20.0]}
    (problem,) = MatrixLatency(base_ms=base).check(REGIONS, CENTRES)
    assert problem.startswith("world.latency.base_ms.na: 2 latencies [95.0, 20.0]")
    assert "for 3 data centres (fra, iad, sin)" in problem


def test_check_reports_every_problem_at_once() -> None:
    base = {"eu": [1.0], "ue": [1.0, 2.0, 3.0]}
    problems = MatrixLatency(base_ms=base).check(REGIONS, CENTRES)
    assert len(problems) == 4  # eu's length, ue unknown, na and asia missing
    assert all(p.startswith("world.latency.base_ms") for p in problems)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (math.nan, "nan"),
        (-1.0, "-1.0"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        ("20", "'20'"),
        (True, "True"),
        (None, "None"),
        (20_000.0, "20000.0"),
    ],
)
def test_check_names_a_bad_value_with_its_path(value: object, shown: str) -> None:
    # __post_init__ refuses such a value (below); check finds it too in a base_ms changed since,
    # e.g. a mapping edited in place, so that its message is the same wherever it is found.
    model = MatrixLatency(base_ms=BASE)
    model.base_ms["na"] = (95.0, value, 160.0)  # type: ignore[index]
    (problem,) = model.check(REGIONS, CENTRES)
    assert problem.startswith("world.latency.base_ms.na[1]: expected a latency in ms")
    assert problem.endswith(f"got {shown}")


def test_check_names_a_row_that_is_not_a_list() -> None:
    model = MatrixLatency(base_ms=BASE)
    model.base_ms["eu"] = 20.0  # type: ignore[index]
    (problem,) = model.check(REGIONS, CENTRES)
    assert problem == (
        "world.latency.base_ms.eu: expected a list of latencies in ms, one per data centre, "
        "got 20.0"
    )


# --- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"spread": -1.0}, "spread: expected a number in [0, 3], got -1.0"),
        ({"spread": 3.5}, "spread: expected a number in [0, 3], got 3.5"),
        ({"spread": math.nan}, "spread: expected a number in [0, 3], got nan"),
        ({"spread": math.inf}, "spread: expected a number in [0, 3], got inf"),
        ({"spread": True}, "spread: expected a number in [0, 3], got True"),
        ({"spread": "0.2"}, "spread: expected a number in [0, 3], got '0.2'"),
        ({"floor_ms": -0.5}, "floor_ms: expected a number in [0, 10000], got -0.5"),
        ({"floor_ms": 10_001}, "floor_ms: expected a number in [0, 10000], got 10001"),
        ({"floor_ms": math.nan}, "floor_ms: expected a number in [0, 10000], got nan"),
        ({"base_ms": [1.0, 2.0]}, "base_ms: expected a mapping of region name"),
        ({"base_ms": {"eu": 5.0}}, "base_ms.eu: expected a list of latencies in ms"),
        ({"base_ms": {"eu": "5"}}, "base_ms.eu: expected a list of latencies in ms"),
        ({"base_ms": {"eu": [1.0, math.nan]}}, "base_ms.eu[1]: expected a latency in ms"),
        ({"base_ms": {"eu": [-2.0]}}, "got -2.0"),
        ({"base_ms": {"eu": [math.inf]}}, "got inf"),
        ({"base_ms": {"eu": [False]}}, "got False"),
        ({"base_ms": {"eu": [10_000.5]}}, "base_ms.eu[0]: expected a latency in ms"),
        ({"base_ms": {"eu": [1.0] * 1_001}}, "base_ms.eu: at most 1,000 data centres"),
        ({"base_ms": {1: [1.0]}}, "base_ms: a region name must be text, got 1"),
    ],
)
def test_bad_parameters_are_refused_naming_the_parameter_and_the_value(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        MatrixLatency(**params)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_parameters_at_their_bounds_are_accepted_and_stored_as_floats() -> None:
    model = MatrixLatency(base_ms={"eu": (0, 10_000), "na": np.array([3, 4])}, spread=3, floor_ms=0)
    assert model.spread == 3.0 and isinstance(model.spread, float)
    assert model.floor_ms == 0.0 and isinstance(model.floor_ms, float)
    assert model.base_ms == {"eu": (0.0, 10_000.0), "na": (3.0, 4.0)}
    assert all(isinstance(v, float) for row in model.base_ms.values() for v in row)
    assert MatrixLatency(spread=0, floor_ms=10_000).floor_ms == 10_000.0


def test_the_base_is_copied_so_the_caller_cannot_change_it() -> None:
    rows = {"eu": [10.0, 20.0]}
    model = MatrixLatency(base_ms=rows)
    rows["eu"][0] = 99.0
    rows["na"] = [1.0, 2.0]
    assert model.base_ms == {"eu": (10.0, 20.0)}


def test_a_model_is_equal_hashable_and_picklable() -> None:
    a = MatrixLatency(base_ms=BASE, spread=0.3)
    b = MatrixLatency(base_ms={r: tuple(row) for r, row in BASE.items()}, spread=0.3)
    a.latencies(np.random.default_rng(0), np.array([0], np.intp), REGIONS, CENTRES)  # cached
    assert a == b and hash(a) == hash(b)
    assert a != MatrixLatency(base_ms=BASE, spread=0.2)
    copy = pickle.loads(pickle.dumps(a))
    assert copy == a
    regions = np.array([0, 1, 2], np.intp)
    assert (
        copy.latencies(np.random.default_rng(1), regions, REGIONS, CENTRES).tobytes()
        == a.latencies(np.random.default_rng(1), regions, REGIONS, CENTRES).tobytes()
    )


# --- the engine's check of a model's answer -----------------------------------------------------


def test_check_latency_output_accepts_arrays_and_lists_and_returns_float64() -> None:
    out = check_latency_output(np.array([[1, 2], [3, 4]], dtype=np.int32), 2, 2)
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    out = check_latency_output([[1.5, 2], [0, 4.0]], 2, 2)
    assert out.dtype == np.float64 and out.tolist() == [[1.5, 2.0], [0.0, 4.0]]
    out = check_latency_output(np.zeros((0, 3), np.float32), 0, 3)
    assert out.dtype == np.float64 and out.shape == (0, 3)
    exact = np.array([[1.0]])
    assert check_latency_output(exact, 1, 1) is exact  # float64 already: not copied


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (np.ones((2, 3)), r"shape \(3, 2\) .* got shape \(2, 3\)"),
        (np.ones(6), r"got shape \(6,\)"),
        ([[1.0, 2.0], [3.0, 4.0]], r"got shape \(2, 2\)"),
        ([[1.0, 2.0], [3.0]], "ragged list"),
        (np.array([[1.0, 2.0], [np.nan, 1.0], [1.0, 1.0]]), r"got nan for player 1, data centre 0"),
        (np.array([[1.0, 2.0], [1.0, 1.0], [1.0, np.inf]]), r"got inf for player 2, data centre 1"),
        (np.array([[1.0, -3.0], [1.0, 1.0], [1.0, 1.0]]), r">= 0, got -3.0 for player 0, data"),
        (5.0, "got float"),
        (None, "got NoneType"),
        ("[[1, 2]]", "got str"),
        ({"eu": [1.0]}, "got dict"),
        (np.full((3, 2), "1"), "array of <U1 values"),
        (np.ones((3, 2), dtype=bool), "array of bool values"),
        ([[True, False], [True, True], [False, False]], "array of bool values"),
        ([[1.0, None], [1.0, 1.0], [1.0, 1.0]], "array of object values"),
        (np.ones((3, 2), dtype=complex), "array of complex128 values"),
    ],
)
def test_check_latency_output_says_what_is_wrong(values: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_latency_output(values, 3, 2)


# --- the registry and user models ---------------------------------------------------------------


def test_the_registry_builds_the_matrix_model() -> None:
    assert LATENCY.family == "latency model"
    assert "matrix" in LATENCY.names()
    model = LATENCY.create("matrix", {"base_ms": BASE, "spread": 0.1, "floor_ms": 5.0})
    assert isinstance(model, MatrixLatency)
    assert isinstance(model, LatencyModel)
    assert model == MatrixLatency(base_ms=BASE, spread=0.1, floor_ms=5.0)
    assert LATENCY.create("matrix") == MatrixLatency()


def test_the_registry_names_an_unknown_model_or_parameter_with_a_did_you_mean() -> None:
    with pytest.raises(PluginError, match=r"unknown latency model 'matrx' \(did you mean 'matrix'"):
        LATENCY.create("matrx", {})
    with pytest.raises(PluginError, match=r"has no parameter 'sprad' \(did you mean 'spread'"):
        LATENCY.create("matrix", {"sprad": 0.1})
    with pytest.raises(
        PluginError, match=r"latency model 'matrix': spread: expected a number in \[0, 3\]"
    ):
        LATENCY.create("matrix", {"spread": 4})


def test_a_user_model_from_a_file_is_built_and_its_answer_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_latency.py").write_text(
        "from dataclasses import dataclass\n"
        "from typing import ClassVar\n"
        "import numpy as np\n\n"
        "@dataclass(frozen=True)\n"
        "class Flat:\n"
        "    name: ClassVar[str] = 'flat'\n"
        "    ms: float = 40.0\n\n"
        "    def latencies(self, rng, regions, region_names, data_centres):\n"
        "        return [[self.ms] * len(data_centres) for _ in regions]\n\n"
        "class NoVerb:\n"
        "    name = 'nothing'\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    model = LATENCY.create("my_latency.py:Flat", {"ms": 12.5})
    answer = model.latencies(np.random.default_rng(0), np.array([0, 1]), ("a", "b"), ("x",))
    assert check_latency_output(answer, 2, 1).tolist() == [[12.5], [12.5]]
    with pytest.raises(PluginError, match=r"is not a latency model: it lacks latencies"):
        LATENCY.create("my_latency.py:NoVerb")
