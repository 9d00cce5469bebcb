"""The rules' telemetry: games past a rule's first step, and those that needed the relaxed limit."""

from __future__ import annotations

import math

import numpy as np

from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.rule_telemetry import RuleTelemetry
from lobbysim.sim.rules import RuleSet, View


def _view(rating: list[float], waited: list[float]) -> View:
    r = np.array(rating, dtype=float)
    return View(
        waited=np.array(waited, dtype=float),
        rating=r,
        quality=lambda i, j: np.ones(np.shape(i)),
        numbers={"rating": r},
        codes={},
        masks={},
    )


def test_a_game_past_the_first_step_needed_it_only_if_it_breaks_the_first_limit() -> None:
    skill = RuleConfig(name="skill", kind="skill_distance", limit=1.0, expansions=((0.5, 3.0),))
    rules = RuleSet([skill], None)
    telemetry = RuleTelemetry(rules, start=0.0)
    # both past the first step (waited 1 minute): 0.5 apart keeps the first limit, 2.0 does not
    view = _view([0.0, 0.5, 10.0, 12.0, 20.0, 20.2], [1.0, 1.0, 1.0, 1.0, 0.1, 0.1])
    telemetry.formed(view.waited, [[0], [1]], 5.0, view)
    telemetry.formed(view.waited, [[2], [3]], 5.0, view)
    telemetry.formed(view.waited, [[4], [5]], 5.0, view)  # at the first step: not relaxed
    metrics = telemetry.metrics()
    assert metrics["rule_relaxed_share@skill"] == 2 / 3
    assert metrics["rule_needed_share@skill"] == 1 / 3
    # a game noted without the pass's view counts in the steps, not in the need
    telemetry.formed(view.waited, [[2], [3]], 5.0)
    metrics = telemetry.metrics()
    assert metrics["rule_relaxed_share@skill"] == 3 / 4
    assert metrics["rule_needed_share@skill"] == 1 / 3
    assert telemetry.matches_noted == 4
    # before the metrics' start nothing is noted
    late = RuleTelemetry(rules, start=10.0)
    late.formed(view.waited, [[0], [1]], 5.0, view)
    assert math.isnan(late.metrics()["rule_needed_share@skill"])
    assert late.matches_noted == 0
