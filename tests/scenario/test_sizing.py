"""A run's memory estimate (lobbysim/scenario/sizing.py) reads what the arrival and visit models
declare (``expected_arrivals``, ``mean_visits_per_day``), never their classes: a user's model
that declares the capability is sized as a built-in is, one that does not is not counted."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from lobbysim.players.arrivals import (
    ARRIVALS,
    Arrivals,
    ExpectedArrivals,
    Poisson,
    expected_arrivals,
)
from lobbysim.players.visits import VISITS, Daily, mean_visits_per_day
from lobbysim.registry import PluginError
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.model import Scenario
from lobbysim.scenario.sizing import memory_problems, run_needs

HERE = __name__


@dataclass(frozen=True)
class SteadyArrivals:
    """A user's arrival model (Poisson arrivals) that declares its rate."""

    name: ClassVar[str] = "steady"
    rate: float = 1.0

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        n = int(rng.poisson(self.rate * (end - start)))
        return Arrivals.of(np.sort(rng.uniform(start, end, n)))

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        return ExpectedArrivals(per_minute=self.rate, parameter="rate")


@dataclass(frozen=True)
class QuietArrivals(SteadyArrivals):
    """The same model declaring nothing: it is not counted."""

    expected_arrivals = None  # type: ignore[assignment]


@dataclass(frozen=True)
class BrokenArrivals(SteadyArrivals):
    """A declaration that fails."""

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        raise KeyError("no rate")


@dataclass(frozen=True)
class WrongArrivals(SteadyArrivals):
    """A declaration of the wrong type."""

    def expected_arrivals(self, horizon: float) -> Any:
        return self.rate


@dataclass(frozen=True)
class SteadyVisits(Daily):
    """A user's visit model (``daily``'s verbs) that declares its visits a day itself."""

    name: ClassVar[str] = "steady_visits"

    def mean_visits_per_day(self) -> float:
        return self.per_day


def scenario(arrivals: dict[str, Any], stream: bool = False, **more: Any) -> Scenario:
    return as_scenario(
        {"arrivals": arrivals, "horizon": 6000, "records": {"stream": stream}, **more}
    )


def fields(needs: list[Any]) -> list[tuple[Any, ...]]:
    return [dataclasses.astuple(need) for need in needs]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("rate", [0.5, 3.0, 90_000.0])
def test_a_user_arrival_model_declaring_its_rate_is_sized_as_poisson(
    stream: bool, rate: float
) -> None:
    user = scenario({"name": f"{HERE}:SteadyArrivals", "rate": rate}, stream)
    builtin = scenario({"name": "poisson", "rate": rate}, stream)
    expected = fields(run_needs(builtin, 3))
    assert expected  # the built-in is counted
    assert fields(run_needs(user, 3, import_plugins=True)) == expected
    assert memory_problems(user, 3, import_plugins=True) == memory_problems(builtin, 3)


def test_a_huge_user_rate_is_refused_naming_its_field() -> None:
    user = scenario({"name": f"{HERE}:SteadyArrivals", "rate": 90_000.0})
    (line,) = memory_problems(user, 1000, import_plugins=True)
    assert line.startswith("arrivals.rate: 90,000 players a minute over 6000 minutes")


def test_a_user_model_declaring_nothing_is_not_counted() -> None:
    quiet = scenario({"name": f"{HERE}:QuietArrivals", "rate": 90_000.0})
    assert run_needs(quiet, import_plugins=True) == []


def test_without_import_plugins_a_user_class_is_not_imported(tmp_path: Path) -> None:
    """``lobbysim validate`` imports no user class: nor does the estimate, unless allowed."""
    module = "sizing_user_arrivals_never_imported"
    (tmp_path / f"{module}.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        user = scenario({"name": f"{module}:Model", "rate": 90_000.0})
        assert run_needs(user) == []
        assert memory_problems(user) == []
        assert module not in sys.modules
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("BrokenArrivals", r"failed in expected_arrivals\(6000\): KeyError: 'no rate'"),
        ("WrongArrivals", "returned float from expected_arrivals, not ExpectedArrivals or None"),
    ],
)
def test_a_failing_declaration_is_one_line_naming_the_model(name: str, message: str) -> None:
    user = scenario({"name": f"{HERE}:{name}", "rate": 1.0})
    with pytest.raises(PluginError, match=message) as info:
        run_needs(user, import_plugins=True)
    assert "\n" not in str(info.value)
    assert f"arrival model '{HERE}:{name}'" in str(info.value)


def test_the_builtin_arrival_models_declare_todays_sizing() -> None:
    """The formulas the estimate had for the built-ins, pinned."""

    def declared(name: str, **params: Any) -> tuple[float, float | None, float, str]:
        got = expected_arrivals(ARRIVALS.create(name, params), 6000.0)
        assert got is not None
        return got.per_minute, got.peak_per_minute, got.at_once, got.parameter

    assert declared("poisson", rate=2.0) == (2.0, 2.0, 0.0, "rate")
    rates = [1.0] * 23 + [5.0]
    assert declared("time_of_day", rates=rates) == (sum(rates) / 24, 5.0, 0.0, "rates")
    assert declared("bursts", rate=1.5, mean_size=2.5) == (3.75, 3.75, 0.0, "rate")
    assert declared("cohort", size=500) == (0.0, 0.0, 500.0, "size")
    assert declared("none") == (0.0, 0.0, 0.0, "")
    assert expected_arrivals(object(), 6000.0) is None  # declares nothing
    assert mean_visits_per_day(VISITS.create("daily", {"per_day": 2.5})) == 2.5
    assert mean_visits_per_day(object()) is None
    assert isinstance(ARRIVALS.create("poisson", {"rate": 1.0}), Poisson)


def test_expected_arrivals_are_checked() -> None:
    assert ExpectedArrivals(2.0).peak_per_minute == 2.0
    with pytest.raises(ValueError, match="per_minute must be >= 0"):
        ExpectedArrivals(-1.0)
    with pytest.raises(ValueError, match="at_once must be a finite number"):
        ExpectedArrivals(at_once=float("nan"))


def test_a_user_visit_model_declaring_its_visits_is_sized_as_daily() -> None:
    base = {"size": 100_000, "newcomers_per_day": 100}
    builtin = scenario({"name": "none"}, base={**base, "visits": {"name": "daily", "per_day": 3.0}})
    user = scenario(
        {"name": "none"},
        base={**base, "visits": {"name": f"{HERE}:SteadyVisits", "per_day": 3.0}},
    )
    expected = fields(run_needs(builtin))
    assert [need[0] for need in expected] == [
        "base.size",
        "base.newcomers_per_day",
        "records.stream",
    ]
    assert fields(run_needs(user, import_plugins=True)) == expected
    # without the declaration's import, the visits are not counted
    assert [n.field for n in run_needs(user)] == ["base.size", "base.newcomers_per_day"]
