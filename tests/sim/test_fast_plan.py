"""The fast plan: kernels chosen once from what plug-ins declare, a user's plug-in included.

A policy written here, outside the package, that declares ``scores_match_quality`` gets the
small-pass kernel, and its records equal those with the plan off; one that does not declare it
gets only pools of two. Subclasses that change what a declaration promises lose it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np
import pytest
import simpy

from lobbysim.experiments.simulation import simulate
from lobbysim.policies.assignment import GlobalMatching, small_pool_limit
from lobbysim.policies.base import Decision, FloatArray
from lobbysim.policies.simple import DrawChance
from lobbysim.raters.base import declares
from lobbysim.raters.bayesian import BayesianRater, rates_outcomes_only
from lobbysim.raters.openskill import OpenSkillRater
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import matchmaker
from lobbysim.sim.components import Components
from lobbysim.sim.fast.events import check_simpy
from lobbysim.sim.fast.plan import KERNELS, FastPlan

HERE = __name__  # this module, as a plug-in reference names it


class QualityScorer:
    """A user's policy: TrueSkill's match quality of the two beliefs, in its own code, with the
    capability declared."""

    name: ClassVar[str] = "user_quality"
    needs_variance: ClassVar[bool] = True
    scores_match_quality: ClassVar[bool] = True

    def score(self, decision: Decision) -> FloatArray:
        focal_mu = np.asarray(decision.focal_mu)[..., None]
        focal_var = np.asarray(decision.focal_var)[..., None]
        two_beta2 = 2.0 * decision.beta2
        c2 = focal_var + decision.var + two_beta2
        d = focal_mu - decision.mu
        result: FloatArray = np.sqrt(two_beta2 / c2) * np.exp(-0.5 * d * d / c2)
        return result


class UndeclaredScorer(QualityScorer):
    """The same policy without the declaration."""

    name: ClassVar[str] = "user_undeclared"
    scores_match_quality: ClassVar[bool] = False


class BadDeclaration(QualityScorer):
    name: ClassVar[str] = "user_bad"
    scores_match_quality = "yes"  # type: ignore[assignment]


def _scenario(policy: str) -> Scenario:
    return Scenario.from_dict(
        {
            "horizon": 240,
            "warmup": 20,
            "arrivals": {"name": "poisson", "rate": 3.0},
            "population": {"session_games_mean": 6},
            "game": {"length": 6, "quit_rate": 0.03},
            "matchmaker": {
                "policy": policy,
                "assignment": {"name": "global", "block_size": 6},
                "wake_on_arrival": True,
                "threshold": [[0, 0.6], [0.5, 0.3], [1.5, 0.0]],
            },
        }
    )


def _records(scenario: Scenario, plan: FastPlan | None = None) -> dict[str, str]:
    result = simulate(scenario, 3, plan=plan)
    return {
        kind: getattr(result, kind).to_csv(index=False)
        for kind in ("games", "participants", "waits", "ratings", "players")
    }


@pytest.mark.parametrize(
    ("policy", "small"), [("QualityScorer", 6), ("UndeclaredScorer", 2)], ids=["declared", "not"]
)
def test_a_users_policy_that_declares_the_capability_gets_the_small_pass(
    policy: str, small: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = _scenario(f"{HERE}:{policy}")
    plan = Components.build(scenario).plan(scenario)
    assert plan.small_pool == small
    decided: list[int] = []
    kernel = matchmaker.small_pass

    def counted(waiting: list[Any], *args: Any) -> Any:
        duels = kernel(waiting, *args)
        if duels is not None:
            decided.append(len(waiting))
        return duels

    monkeypatch.setattr(matchmaker, "small_pass", counted)
    fast = _records(scenario)
    assert len(decided) > 500
    assert (max(decided) > 2) == (small > 2)  # pools of three and more only when declared
    decided.clear()
    plain = _records(scenario, FastPlan.off())
    assert decided == []
    assert fast == plain


def test_the_declared_policy_pairs_as_draw_chance_does() -> None:
    """The user's policy scores as DrawChance does, so its records are DrawChance's: the kernel
    decides for it exactly what the assignment decides for DrawChance."""
    assert _records(_scenario(f"{HERE}:QualityScorer")) == _records(_scenario("draw_chance"))


def test_a_capability_declared_wrongly_is_one_line_naming_the_field() -> None:
    with pytest.raises(PluginError, match=r"matchmaker\.policy: .*scores_match_quality must be"):
        Components.build(_scenario(f"{HERE}:BadDeclaration"))


def test_subclasses_that_change_what_is_promised_lose_the_declaration() -> None:
    class Rescored(DrawChance):
        def score(self, decision: Decision) -> FloatArray:
            return -super().score(decision)

    class Redeclared(DrawChance):
        scores_match_quality: ClassVar[bool] = True

        def score(self, decision: Decision) -> FloatArray:
            return super().score(decision)

    class Repaired(GlobalMatching):
        def pairs(self, *args: Any) -> Any:
            return super().pairs(*args)

    class Requalified(BayesianRater):
        def quality(self, ids_a: Any, ids_b: Any) -> Any:
            return super().quality(ids_a, ids_b) ** 2

    class Remeaned(BayesianRater):
        def means(self, ids: Any) -> Any:
            return super().means(ids) + 1.0

    class Reupdated(BayesianRater):
        def update(self, games: Any) -> None:
            super().update(games)

    assert declares(DrawChance(), "scores_match_quality")
    assert not declares(Rescored(), "scores_match_quality")
    assert declares(Redeclared(), "scores_match_quality")
    assert small_pool_limit(GlobalMatching(block_size=5)) == 5
    assert small_pool_limit(Repaired()) == 0
    bayes = BayesianRater()
    assert declares(bayes, "float_beliefs") and declares(bayes, "float_means")
    assert rates_outcomes_only(bayes)
    assert not declares(Requalified(), "float_beliefs") and declares(Requalified(), "float_means")
    assert not declares(Remeaned(), "float_beliefs") and not declares(Remeaned(), "float_means")
    assert not rates_outcomes_only(Reupdated()) and declares(Reupdated(), "float_beliefs")
    assert declares(OpenSkillRater(), "float_beliefs") and not rates_outcomes_only(OpenSkillRater())


def test_the_plan_says_why_each_kernel_is_on_or_off() -> None:
    scenario = _scenario("draw_chance")
    plan = Components.build(scenario).plan(scenario)
    lines = plan.describe()
    assert len(lines) == len(KERNELS)
    assert lines[0].startswith("on  small_pool") and "2 to 6" in lines[0]
    mm = dataclasses.replace(scenario.matchmaker, rematch_games=1)
    barred = scenario.replace(matchmaker=mm)
    plan = Components.build(barred).plan(barred)
    assert plan.small_pool == 0 and not plan.ring_hold
    assert "rematch rule" in plan.reasons["small_pool"]
    off = Components.build(scenario).plan(scenario, FastPlan.off())
    assert not any(getattr(off, name) for name in KERNELS)
    held_only = Components.build(scenario).plan(scenario, FastPlan.without("held_scores"))
    assert held_only.small_pool == 6 and not held_only.held_scores and held_only.ring_hold
    with pytest.raises(ValueError, match="not kernels"):
        FastPlan.without("warp_drive")


def test_simpys_private_state_is_checked_loudly() -> None:
    check_simpy(simpy.Environment())

    class Changed(simpy.Environment):
        def __init__(self) -> None:
            super().__init__()
            del self._eid

    with pytest.raises(RuntimeError, match=r"_eid.*SimPy 4\.x"):
        check_simpy(Changed())


def test_validate_verbose_prints_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    from lobbysim.cli.main import main

    assert main(["validate", "-v", "one_visit", "live_game"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "one_visit: ok" in out and "live_game: ok" in out
    plan_lines = [line for line in out if line.startswith("  on ") or line.startswith("  off")]
    assert len(plan_lines) == 2 * len(KERNELS)
    assert any("small_pool:" in line and "pools of 2 to 8" in line for line in plan_lines)
    assert any("small_pool:" in line and "rematch rule" in line for line in plan_lines)
    assert all(len(line) <= 100 for line in out)
    assert main(["validate", "one_visit"]) == 0
    assert "small_pool" not in capsys.readouterr().out
