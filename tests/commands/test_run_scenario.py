"""The scenario of a run checked before it runs (lobbysim/commands/run_scenario.py): a user's
arrival model that declares its rate is sized as a built-in is, so a run it cannot hold is refused
before anything is allocated; one that fails to import is reported as a plug-in problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from lobbysim.commands.run_scenario import check_scenario
from lobbysim.registry import PluginError
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.model import Scenario

STEADY = """\
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lobbysim.players.arrivals import Arrivals, ExpectedArrivals


@dataclass(frozen=True)
class Steady:
    name: ClassVar[str] = "steady"
    rate: float = 1.0

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        n = int(rng.poisson(self.rate * (end - start)))
        return Arrivals.of(np.sort(rng.uniform(start, end, n)))

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        return ExpectedArrivals(per_minute=self.rate, parameter="rate")
"""


def _scenario(name: str, rate: float) -> Scenario:
    return as_scenario({"arrivals": {"name": name, "rate": rate}, "horizon": 6000})


def test_a_run_a_user_arrival_model_cannot_hold_is_refused_like_poisson(tmp_path: Path) -> None:
    plugin = tmp_path / "steady.py"
    plugin.write_text(STEADY)
    messages = []
    for name in (f"{plugin}:Steady", "poisson"):
        with pytest.raises(PluginError) as info:
            check_scenario(_scenario(name, 90_000.0), ["draw_chance"], held_runs=1000)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("arrivals.rate: 90,000 players a minute over 6000 minutes")
    check_scenario(_scenario(f"{plugin}:Steady", 0.5), ["draw_chance"])  # a small one runs


def test_a_user_arrival_model_that_fails_to_import_is_a_plugin_problem(tmp_path: Path) -> None:
    plugin = tmp_path / "broken.py"
    plugin.write_text("raise RuntimeError('broken on import')\n")
    with pytest.raises(PluginError) as info:
        check_scenario(_scenario(f"{plugin}:Steady", 90_000.0), ["draw_chance"], held_runs=1000)
    assert "broken on import" in str(info.value)
    assert "players a minute" not in str(info.value)  # not sized: it could not be imported
