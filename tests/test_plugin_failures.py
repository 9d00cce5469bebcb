"""A user plug-in that fails stops the command with one line naming it, exit status 2.

Issue 29 (items 4 and 9): a retention model calling ``sys.exit(0)`` made ``lobbysim run`` exit 0
with no output and no message, and a retention or visit model that raised gave a traceback.
Every call into a plug-in's code now goes through :class:`lobbysim.registry.PluginRef`: an
exception or a ``sys.exit`` becomes ``"<field>: the <family> '<name>' failed in <verb>(...):
<what it raised>"``, run in this process or in a worker (``compare --jobs 2``), while Ctrl-C
(``KeyboardInterrupt``) still stops the run with exit status 130. A retention model may answer
with numpy scalars, as with Python numbers.

Each case runs the command line in a subprocess on a tiny scenario written to ``tmp_path``, with
its plug-in in a ``plugins.py`` there.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PLUGINS = '''\
import sys
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lobbysim.players.arrivals import Poisson
from lobbysim.policies.simple import DrawChance
from lobbysim.raters import BayesianRater
from lobbysim.players.retention import Experience
from lobbysim.players.visits import Daily


@dataclass(frozen=True)
class Leaver(Experience):
    """A retention model whose verbs do what ``how`` says."""

    name: ClassVar[str] = "leaver"
    how: str = "exit"

    def leave_probability(self, visit):
        if self.how == "exit":
            sys.exit(0)
        if self.how == "raise":
            raise ValueError("no visits today,\\nsorry")
        if self.how == "interrupt":
            raise KeyboardInterrupt
        # numpy scalars: np.float32 or np.float64, by the visit
        return np.float32(0.01) if visit.games % 2 else np.float64(0.02)

    def return_delay(self, visit):
        return np.float32(1.5) if visit.games % 2 else np.int64(1)


@dataclass(frozen=True)
class Stuck(Daily):
    """A visit model whose next_visits raises."""

    name: ClassVar[str] = "stuck"

    def next_visits(self, rng, now, rates):
        raise RuntimeError("the calendar is gone")


@dataclass(frozen=True)
class Quitter(Poisson):
    """An arrival model that calls sys.exit."""

    name: ClassVar[str] = "quitter"

    def sample(self, rng, start, end):
        sys.exit("bye")


@dataclass(frozen=True)
class Picky(DrawChance):
    """A policy whose score raises, or calls sys.exit."""

    name: ClassVar[str] = "picky"
    how: str = "raise"

    def score(self, decision):
        if self.how == "exit":
            sys.exit(1)
        raise ZeroDivisionError("cannot choose")


class Forgetful(BayesianRater):
    """A rater whose update calls sys.exit (beta2 > 1) or raises."""

    name: ClassVar[str] = "forgetful"

    def update(self, games):
        if self.beta2 > 1.0:
            sys.exit(3)
        raise KeyError(17)
'''


def base_scenario(retention: Any = None, visits: Any = None) -> dict[str, Any]:
    """A tiny player base (tests/sim/test_retention.py's ``scenario()``, a few hours long)."""
    base: dict[str, Any] = {"size": 120, "visits": visits or {"name": "daily", "per_day": 6.0}}
    if retention is not None:
        base["retention"] = retention
    return {
        "name": "failures",
        "horizon": 360,
        "warmup": 60,
        "arrivals": {"name": "none"},
        "population": {"session_games_mean": 3, "patience_mean": 3},
        "game": {"length": 10},
        "matchmaker": {
            "policy": "draw_chance",
            "tick": 1.0,
            "wake_on_arrival": False,
            "threshold": [[0, 0.6], [2, 0.0]],
        },
        "records": {"ratings_every": 120},
        "base": base,
    }


def guests_scenario(**changes: Any) -> dict[str, Any]:
    """A tiny lobby of guests, pools of several players at each tick."""
    scenario: dict[str, Any] = {
        "name": "failures",
        "horizon": 120,
        "warmup": 10,
        "arrivals": {"name": "poisson", "rate": 3.0},
        "population": {"session_games_mean": 3, "patience_mean": 5},
        "game": {"length": 8},
        "matchmaker": {"policy": "draw_chance", "tick": 1.0, "wake_on_arrival": False},
        "records": {"ratings_every": 60},
    }
    for key, value in changes.items():
        section, _, field = key.partition(".")
        if field:
            scenario[section][field] = value
        else:
            scenario[section] = value
    return scenario


def lobbysim(
    tmp_path: Path, scenario: dict[str, Any], *argv: str
) -> subprocess.CompletedProcess[str]:
    """Run ``lobbysim <argv[0]> scenario.yaml <argv[1:]>`` in ``tmp_path`` (a subprocess)."""
    (tmp_path / "plugins.py").write_text(PLUGINS)
    (tmp_path / "scenario.yaml").write_text(json.dumps(scenario))  # JSON is YAML
    command, *rest = argv
    args = [command, "scenario.yaml", "--replications", "1", "--quiet", "--out", "out", *rest]
    if "--jobs" not in rest:
        args += ["--jobs", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "lobbysim", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def assert_one_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    """The command exited 2 with ``message`` as its one line of error, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr == f"lobbysim: error: {message}\n", result.stderr


@pytest.mark.slow
def test_a_retention_model_calling_sys_exit_stops_the_run_with_one_line(tmp_path: Path) -> None:
    result = lobbysim(tmp_path, base_scenario({"name": "plugins.py:Leaver", "how": "exit"}), "run")
    assert_one_line(
        result,
        "base.retention: the retention model 'plugins.py:Leaver' failed in "
        "leave_probability(visit): called sys.exit(0)",
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_retention_model_that_raises_is_named_on_one_line(tmp_path: Path) -> None:
    result = lobbysim(tmp_path, base_scenario({"name": "plugins.py:Leaver", "how": "raise"}), "run")
    assert_one_line(
        result,
        "base.retention: the retention model 'plugins.py:Leaver' failed in "
        "leave_probability(visit): ValueError: no visits today, sorry",
    )


@pytest.mark.slow
def test_a_visit_model_raising_in_next_visits_is_named_on_one_line(tmp_path: Path) -> None:
    result = lobbysim(tmp_path, base_scenario(visits={"name": "plugins.py:Stuck"}), "run")
    assert_one_line(
        result,
        "base.visits: the visit model 'plugins.py:Stuck' failed in next_visits(rng, 0, rates): "
        "RuntimeError: the calendar is gone",
    )


@pytest.mark.slow
def test_an_arrival_model_calling_sys_exit_is_named_on_one_line(tmp_path: Path) -> None:
    scenario = guests_scenario(arrivals={"name": "plugins.py:Quitter", "rate": 1.0})
    result = lobbysim(tmp_path, scenario, "run")
    assert_one_line(
        result,
        "arrivals: the arrival model 'quitter' failed in sample(rng, 0, 60): "
        "called sys.exit('bye')",
    )


POLICY_FAILS = (
    "matchmaker.policy: the policy 'plugins.py:Picky' failed in score(decision): "
    "ZeroDivisionError: cannot choose"
)


@pytest.mark.slow
def test_a_policy_whose_score_raises_is_named_on_one_line(tmp_path: Path) -> None:
    scenario = guests_scenario(**{"matchmaker.policy": "plugins.py:Picky"})
    assert_one_line(lobbysim(tmp_path, scenario, "run"), POLICY_FAILS)


@pytest.mark.slow
def test_a_policy_failing_in_a_worker_process_reaches_compare_as_the_same_line(
    tmp_path: Path,
) -> None:
    scenario = guests_scenario(**{"matchmaker.policy": "plugins.py:Picky"})
    argv = ["--replications", "2", "--jobs", "2"]
    result = lobbysim(tmp_path, scenario, "compare", *argv)  # the policy and two baselines
    assert_one_line(result, POLICY_FAILS)
    assert not (tmp_path / "out").exists()
    policies = "draw_chance,plugins.py:Picky(how=exit)"
    result = lobbysim(tmp_path, scenario, "compare", "--policies", policies, *argv)
    assert_one_line(
        result,
        "matchmaker.policy: the policy 'plugins.py:Picky' failed in score(decision): "
        "called sys.exit(1)",
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("raters", "message"),
    [
        (
            {"driver": {"name": "plugins.py:Forgetful"}},  # the game's beta2: sys.exit
            "raters.driver: the rater 'plugins.py:Forgetful' failed in update(games): "
            "called sys.exit(3)",
        ),
        (
            {"driver": "bayesian", "shadows": [{"name": "plugins.py:Forgetful", "beta2": 0.5}]},
            "raters.shadows[0]: the rater 'plugins.py:Forgetful' failed in update(games): "
            "KeyError: 17",
        ),
    ],
)
def test_a_rater_failing_in_update_is_named_on_one_line(
    tmp_path: Path, raters: dict[str, Any], message: str
) -> None:
    assert_one_line(lobbysim(tmp_path, guests_scenario(raters=raters), "run"), message)


@pytest.mark.slow
def test_a_retention_model_may_answer_with_numpy_scalars(tmp_path: Path) -> None:
    """Leave probabilities np.float32 and np.float64, delays np.float32 and np.int64."""
    scenario = base_scenario({"name": "plugins.py:Leaver", "how": "numpy"})
    result = lobbysim(tmp_path, scenario, "run")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    with open(tmp_path / "out" / "replications.csv", newline="") as f:
        (row,) = csv.DictReader(f)
    assert 0.0 < float(row["retained"]) <= 1.0


@pytest.mark.slow
def test_ctrl_c_in_a_plugin_still_interrupts_the_run(tmp_path: Path) -> None:
    """KeyboardInterrupt is not a plug-in failure: exit 130 as after Ctrl-C (a guard: it held
    before too)."""
    result = lobbysim(
        tmp_path, base_scenario({"name": "plugins.py:Leaver", "how": "interrupt"}), "run"
    )
    assert result.returncode == 130, result.stderr
    assert result.stderr == "lobbysim: interrupted\n"
    assert not (tmp_path / "out").exists()
