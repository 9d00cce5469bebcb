"""Arrival models: rates over a fixed range of seeds, windowing, trace replay, plug-ins, errors."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import stats

from lobbysim.players.arrivals import (
    ARRIVALS,
    ArrivalModel,
    Arrivals,
    Bursts,
    Poisson,
    TimeOfDay,
    Trace,
    check_arrivals,
    sample_window,
)
from lobbysim.registry import PluginError

SEEDS = range(5)


def within(value: float, target: float, se: float, k: float = 4.0) -> bool:
    return abs(value - target) <= k * se


def windows(
    model: ArrivalModel, rng: np.random.Generator, end: float, width: float = 60.0
) -> Arrivals:
    """Sample [0, end) window by window, as the simulator does, checking every window."""
    parts = [
        sample_window(model, rng, start, min(start + width, end))
        for start in np.arange(0.0, end, width)
    ]
    return Arrivals(
        np.concatenate([p.times for p in parts]), np.concatenate([p.sizes for p in parts])
    )


# --- poisson ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_poisson_counts_have_mean_and_variance_rate_times_length(seed: int) -> None:
    rate, length, reps = 3.0, 10.0, 2000
    model = Poisson(rate)
    rng = np.random.default_rng(seed)
    counts = np.array([len(model.sample(rng, 100.0, 100.0 + length)) for _ in range(reps)])
    lam = rate * length
    assert within(counts.mean(), lam, math.sqrt(lam / reps))
    # Var of the sample variance of Poisson counts: (lam + 2 lam^2) / reps, to first order.
    assert within(counts.var(ddof=1), lam, math.sqrt((lam + 2 * lam**2) / reps))


@pytest.mark.parametrize("seed", SEEDS)
def test_poisson_window_by_window_keeps_the_rate_and_the_order(seed: int) -> None:
    rate, end = 2.0, 6000.0
    arrivals = windows(Poisson(rate), np.random.default_rng(seed), end)
    assert np.all(np.diff(arrivals.times) >= 0)
    assert arrivals.times.min() >= 0.0
    assert arrivals.times.max() < end
    assert np.all(arrivals.sizes == 1)
    assert within(len(arrivals), rate * end, math.sqrt(rate * end))
    # Inter-arrival gaps (also across window edges) are Exp(rate).
    gaps = np.diff(arrivals.times)
    assert within(gaps.mean(), 1 / rate, (1 / rate) / math.sqrt(gaps.size))


def test_times_stay_inside_a_half_open_window_far_from_zero() -> None:
    # Near 1e15 floats are 0.125 apart, so start + width * u rounds up to ``end`` unless clipped.
    start, end = 1e15, 1e15 + 1.0
    for model in (Poisson(2000.0), Bursts(2000.0), TimeOfDay([2000.0] * 24)):
        arrivals = sample_window(model, np.random.default_rng(0), start, end)
        assert len(arrivals) > 1000
        assert arrivals.times.max() < end


def test_an_empty_window_has_no_arrivals() -> None:
    arrivals = sample_window(Poisson(5.0), np.random.default_rng(0), 30.0, 30.0)
    assert len(arrivals) == 0
    assert arrivals.times.dtype == np.float64
    assert arrivals.sizes.dtype == np.int64


# --- time of day -------------------------------------------------------------------------------

PROFILE = [0.2 + 0.15 * math.sin(2 * math.pi * (h - 14) / 24) for h in range(24)]
PROFILE[4] = 0.0  # nobody plays at 4 am


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("start_hour", [0.0, 7.5])
def test_time_of_day_arrivals_per_clock_hour_follow_the_profile(
    seed: int, start_hour: float
) -> None:
    days = 30
    model = TimeOfDay(PROFILE, start_hour=start_hour)
    arrivals = windows(model, np.random.default_rng(seed), days * 24 * 60.0)
    clock_hour = np.floor((start_hour * 60 + arrivals.times) / 60).astype(int) % 24
    counts = np.bincount(clock_hour, minlength=24)
    assert counts[4] == 0
    for hour, rate in enumerate(PROFILE):
        expected = rate * 60 * days
        assert within(counts[hour], expected, math.sqrt(max(expected, 1.0)), k=5.0), hour


def test_start_hour_shifts_the_profile() -> None:
    rates = [0.0] * 24
    rates[8] = 1.0  # arrivals only between 8:00 and 9:00
    model = TimeOfDay(rates, start_hour=7.5)  # minute 0 is 7:30
    arrivals = windows(model, np.random.default_rng(1), 3 * 24 * 60.0)
    minute_of_day = arrivals.times % (24 * 60)
    assert len(arrivals) > 100
    assert np.all((minute_of_day >= 30) & (minute_of_day < 90))
    np.testing.assert_array_equal(model.rate_at([29.9, 30.0, 89.9, 90.0]), [0.0, 1.0, 1.0, 0.0])


def test_time_of_day_stores_the_rates_as_a_tuple() -> None:
    model = ARRIVALS.create("time_of_day", {"rates": list(PROFILE)})
    assert isinstance(model, TimeOfDay)
    assert isinstance(model.rates, tuple)
    assert hash(model) == hash(TimeOfDay(tuple(PROFILE)))


# --- bursts ---------------------------------------------------------------------------------------


def capped_size_moments(mean_size: float, max_size: int) -> tuple[float, float]:
    """Exact mean and variance of min(1 + Poisson(mean_size - 1), max_size)."""
    k = np.arange(max_size - 1)
    probs = np.append(
        stats.poisson.pmf(k, mean_size - 1), stats.poisson.sf(max_size - 2, mean_size - 1)
    )
    values = np.arange(1, max_size + 1)
    mean = float(probs @ values)
    return mean, float(probs @ values**2) - mean**2


@pytest.mark.parametrize("seed", SEEDS)
def test_bursts_group_sizes_follow_the_capped_distribution(seed: int) -> None:
    rate, mean_size, max_size, end = 5.0, 3.0, 4, 6000.0
    model = Bursts(rate, mean_size=mean_size, max_size=max_size)
    arrivals = windows(model, np.random.default_rng(seed), end)
    n = len(arrivals)
    assert within(n, rate * end, math.sqrt(rate * end))
    assert arrivals.sizes.min() >= 1
    assert arrivals.sizes.max() <= max_size
    mean, var = capped_size_moments(mean_size, max_size)
    assert mean < mean_size - 0.2  # the cap matters at these settings (40 standard errors)
    assert within(arrivals.sizes.mean(), mean, math.sqrt(var / n))
    p_max = stats.poisson.sf(max_size - 2, mean_size - 1)  # P(size == max_size)
    assert within((arrivals.sizes == max_size).mean(), p_max, math.sqrt(p_max * (1 - p_max) / n))
    assert within(arrivals.n_players, rate * end * mean, math.sqrt(rate * end * (var + mean**2)))


def test_bursts_of_mean_size_one_are_single_players() -> None:
    arrivals = Bursts(1.0, mean_size=1.0).sample(np.random.default_rng(0), 0.0, 500.0)
    assert len(arrivals) > 0
    assert np.all(arrivals.sizes == 1)


# --- trace ----------------------------------------------------------------------------------------


def write_trace(tmp_path: Path, text: str) -> str:
    path = tmp_path / "trace.csv"
    path.write_text(text)
    return str(path)


@pytest.fixture
def trace_path(tmp_path: Path) -> str:
    # Unsorted on purpose; the two arrivals at 3.0 keep their file order.
    return write_trace(tmp_path, "time,size\n3.0,2\n0.5,1\n1.25,3\n3.0,1\n10.0,4\n")


def test_trace_replays_exactly_per_window(trace_path: str) -> None:
    model = ARRIVALS.create("trace", {"path": trace_path})
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    got = [
        sample_window(model, rng, a, b) for a, b in [(0, 1), (1, 3), (3, 10), (10, 20), (20, 30)]
    ]
    assert [a.times.tolist() for a in got] == [[0.5], [1.25], [3.0, 3.0], [10.0], []]
    assert [a.sizes.tolist() for a in got] == [[1], [3], [2, 1], [4], []]
    assert rng.bit_generator.state == state  # replay draws no random numbers


def test_trace_time_scale_and_default_sizes(tmp_path: Path) -> None:
    path = write_trace(tmp_path, "time\n30\n90\n150\n")  # seconds
    model = Trace(path, time_scale=1 / 60)
    arrivals = model.sample(np.random.default_rng(0), 0.0, 2.0)
    np.testing.assert_allclose(arrivals.times, [0.5, 1.5])
    np.testing.assert_array_equal(arrivals.sizes, [1, 1])
    assert len(model.times) == 3


def test_trace_with_a_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match=r"nope\.csv' does not exist"):
        Trace(missing)
    with pytest.raises(PluginError, match=r"arrival model 'trace': .*nope\.csv' does not exist"):
        ARRIVALS.create("trace", {"path": missing})


def test_trace_without_a_time_column_lists_the_columns(tmp_path: Path) -> None:
    path = write_trace(tmp_path, "t,size\n1.0,2\n")
    with pytest.raises(ValueError, match=r"no column 'time'; its columns: 't', 'size'"):
        Trace(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("time\n1.0\n-2.0\n", r"data row 2 has the time -2\.0"),
        ("time\n1.0\n2.0\n\n", None),  # a trailing blank line is fine
        ("time,size\n1.0,1\n,2\n", r"data row 2 has the time nan"),
        ("time\n1.0\nsoon\n", r"data row 2 has the time 'soon'"),
        ("time,size\n1.0,1\n2.0,0\n", r"data row 2 has the size 0"),
        ("time,size\n1.0,1.5\n", r"data row 1 has the size 1\.5"),
    ],
)
def test_trace_rejects_bad_rows_naming_the_row(
    tmp_path: Path, text: str, message: str | None
) -> None:
    path = write_trace(tmp_path, text)
    if message is None:
        assert len(Trace(path).times) == 2
        return
    with pytest.raises(ValueError, match=message):
        Trace(path)


# --- user plug-ins and the checks on what a model returns -----------------------------------------


@dataclass(frozen=True)
class Evenings:
    """A user's model: players at ``rate`` per minute, kept only in the second half of each hour."""

    name: ClassVar[str] = "evenings"

    rate: float = 1.0

    def __post_init__(self) -> None:
        if not self.rate > 0:
            raise ValueError(f"rate must be > 0, got {self.rate!r}")

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        n = rng.poisson(self.rate * (end - start))
        times = np.sort(rng.uniform(start, end, n))
        return Arrivals.of(times[times % 60 >= 30])


@dataclass(frozen=True)
class Backwards:
    """A broken user model: its times run backwards."""

    name: ClassVar[str] = "backwards"

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        return Arrivals.of([end - 0.5, start + 0.5])


def test_a_user_model_loads_from_its_module_path() -> None:
    model = ARRIVALS.create("tests.players.test_arrivals:Evenings", {"rate": 2.0})
    assert isinstance(model, Evenings)
    assert isinstance(model, ArrivalModel)
    arrivals = sample_window(model, np.random.default_rng(0), 0.0, 120.0)
    assert len(arrivals) > 0
    assert np.all(arrivals.times % 60 >= 30)


def test_a_user_models_parameter_typo_gets_did_you_mean() -> None:
    with pytest.raises(PluginError, match=r"no parameter 'rte' \(did you mean 'rate'\?\)"):
        ARRIVALS.create("tests.players.test_arrivals:Evenings", {"rte": 2.0})
    evenings = r"'tests.players.test_arrivals:Evenings'"
    with pytest.raises(PluginError, match=evenings + r": rate must be > 0"):
        ARRIVALS.create("tests.players.test_arrivals:Evenings", {"rate": -1.0})
    with pytest.raises(PluginError, match=r"has no 'Evening' \(did you mean 'Evenings'\?\)"):
        ARRIVALS.create("tests.players.test_arrivals:Evening", {})


def test_a_model_returning_unsorted_times_is_rejected_by_name() -> None:
    model = ARRIVALS.create("tests.players.test_arrivals:Backwards")
    with pytest.raises(PluginError, match=r"arrival model 'backwards' returned unsorted times"):
        sample_window(model, np.random.default_rng(0), 0.0, 60.0)


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ([1.0, 2.0], r"returned list, not Arrivals"),
        (Arrivals.of([1.0, 70.0]), r"returned the time 70\.0 at position 1, outside the window"),
        (Arrivals.of([-1.0]), r"returned the time -1\.0 at position 0, outside"),
        (Arrivals.of([60.0]), r"returned the time 60\.0 .* outside the window \[0\.0, 60\.0\)"),
        (Arrivals.of([1.0, math.nan]), r"returned the time nan at position 1"),
        (Arrivals.of([1.0, 2.0], [1, 0]), r"returned the group size 0 at position 1"),
        (Arrivals(np.array([1.0, 2.0]), np.array([1])), r"returned 2 times but 1 sizes"),
        (Arrivals(np.array(["a"]), np.array([1])), r"returned times of dtype <U1"),
        (Arrivals(np.array([1.0]), np.array([1.5])), r"returned sizes with the non-integer 1\.5"),
        (Arrivals(np.array([[1.0]]), np.array([1])), r"returned times of shape \(1, 1\)"),
    ],
)
def test_check_arrivals_names_the_model_and_the_problem(returned: object, message: str) -> None:
    with pytest.raises(PluginError, match=r"^arrival model 'mine' " + message):
        check_arrivals("mine", returned, 0.0, 60.0)


def test_check_arrivals_coerces_plain_numbers() -> None:
    returned = Arrivals(np.array([1, 5, 5]), np.array([1.0, 2.0, 3.0]))
    checked = check_arrivals("mine", returned, 0.0, 60.0)
    assert checked.times.dtype == np.float64
    assert checked.sizes.dtype == np.int64
    assert checked.sizes.tolist() == [1, 2, 3]
    assert checked.n_players == 6


# --- every registered model: conformance and parameter errors -------------------------------------


def example_params(name: str, trace_path: str) -> dict[str, Any]:
    examples: dict[str, dict[str, Any]] = {
        "poisson": {"rate": 0.5},
        "time_of_day": {"rates": PROFILE, "start_hour": 18.0},
        "bursts": {"rate": 0.2, "mean_size": 2.5, "max_size": 5},
        "trace": {"path": trace_path},
        "cohort": {"size": 12, "at": 3.5},
        "none": {},
    }
    return examples[name]


@pytest.mark.parametrize("name", ARRIVALS.names())
def test_every_registered_model_conforms_and_repeats_with_the_seed(
    name: str, trace_path: str
) -> None:
    model = ARRIVALS.create(name, example_params(name, trace_path))
    assert isinstance(model, ArrivalModel)
    assert model.name == name

    def run(seed: int) -> Arrivals:
        return windows(model, np.random.default_rng(seed), 600.0)

    a, b = run(3), run(3)
    np.testing.assert_array_equal(a.times, b.times)
    np.testing.assert_array_equal(a.sizes, b.sizes)
    assert len(a) == 0 if name == "none" else len(a) > 0


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("poisson", {"rate": 0}, "rate must be > 0, got 0"),
        ("cohort", {"size": 0}, "size must be a whole number >= 1, got 0"),
        ("cohort", {"size": 2.5}, "size must be a whole number >= 1, got 2.5"),
        ("cohort", {"size": 5, "at": -1}, "at must be >= 0, got -1"),
        ("poisson", {"rate": -2.0}, "rate must be > 0, got -2.0"),
        ("poisson", {"rate": "fast"}, "rate must be a finite number, got 'fast'"),
        ("poisson", {"rate": math.inf}, "rate must be a finite number, got inf"),
        (
            "time_of_day",
            {"rates": [1.0] * 5 + [-1.0] + [1.0] * 18},
            r"rates\[5\] must be >= 0, got -1.0",
        ),
        ("time_of_day", {"rates": [1.0] * 23}, "rates must have 24 hourly values, got 23"),
        ("time_of_day", {"rates": [0.0] * 24}, "rates must have at least one hour > 0"),
        ("time_of_day", {"rates": 1.0}, "rates must be a list of 24 numbers, got 1.0"),
        ("time_of_day", {"rates": [1.0] * 24, "start_hour": 24}, "start_hour must be < 24, got 24"),
        (
            "time_of_day",
            {"rates": [1.0] * 24, "start_hour": -1.0},
            "start_hour must be >= 0, got -1.0",
        ),
        ("bursts", {"rate": 0.0}, "rate must be > 0, got 0.0"),
        ("bursts", {"rate": 1.0, "mean_size": 0.5}, "mean_size must be >= 1, got 0.5"),
        ("bursts", {"rate": 1.0, "max_size": 0}, "max_size must be a whole number >= 1, got 0"),
        ("bursts", {"rate": 1.0, "max_size": 2.5}, "max_size must be a whole number >= 1, got 2.5"),
        (
            "bursts",
            {"rate": 1.0, "mean_size": 9.0},
            r"mean_size must not exceed max_size \(8\), got 9.0",
        ),
        ("trace", {"path": "x.csv", "time_scale": 0}, "time_scale must be > 0, got 0"),
        ("trace", {"path": 3}, "path must be a file path, got 3"),
    ],
)
def test_bad_parameters_name_the_field_and_the_value(
    name: str, params: dict[str, Any], message: str
) -> None:
    cls = ARRIVALS.get(name)
    with pytest.raises(ValueError, match=f"^{message}"):
        cls(**params)
    with pytest.raises(PluginError, match=f"^arrival model '{name}': {message}"):
        ARRIVALS.create(name, params)


def test_a_missing_parameter_is_a_plugin_error() -> None:
    with pytest.raises(PluginError, match=r"arrival model 'poisson'.*rate"):
        ARRIVALS.create("poisson", {})


def test_an_unknown_model_suggests_a_registered_one() -> None:
    with pytest.raises(
        PluginError, match=r"unknown arrival model 'busrts' \(did you mean 'bursts'\?\)"
    ):
        ARRIVALS.create("busrts", {"rate": 1.0})


def test_cohort_arrives_once_as_one_group_in_the_window_holding_its_time() -> None:
    model = ARRIVALS.create("cohort", {"size": 50, "at": 60.0})
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert len(model.sample(rng, 0.0, 60.0)) == 0
    got = model.sample(rng, 60.0, 120.0)
    assert got.times.tolist() == [60.0] and got.sizes.tolist() == [50]
    assert len(model.sample(rng, 120.0, 180.0)) == 0
    assert rng.bit_generator.state == state  # draws nothing
