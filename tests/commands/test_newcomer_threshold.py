"""A quality threshold no two newcomers can reach is reported by ``lobbysim validate``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.commands.run_scenario import newcomer_threshold_warning
from lobbysim.scenario import Scenario, load_scenario
from lobbysim.skill.gaussian import match_quality

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "scenarios").glob("*.yaml"))


def scenario(threshold: list[list[float]], **population: object) -> Scenario:
    return Scenario.from_dict(
        {"matchmaker": {"threshold": threshold}, "population": population, "game": {"beta2": 1.0}}
    )


def test_the_best_newcomer_pair_quality_is_the_gaussian_formula() -> None:
    # Two players N(0, 4) with beta2 = 1: sqrt(2 / (2 + 8)) = 0.447.
    best = match_quality(0.0, 4.0, 0.0, 4.0, 1.0)
    assert best == pytest.approx(math.sqrt(2 / 10))
    message = newcomer_threshold_warning(scenario([[0, 0.5], [2, 0.3], [4, 0.0]]))
    assert message == (
        "matchmaker.threshold: two newcomers (prior variance 4) reach a match quality of at most "
        "0.447 with each other, below the first step's 0.5: no newcomer is matched by it before "
        "waiting 2 minutes; start the threshold at or below that quality"
    )
    assert newcomer_threshold_warning(scenario([[0, 0.44], [2, 0.0]])) is None
    never = newcomer_threshold_warning(scenario([[0, 0.6], [2, 0.5]]))
    assert never is not None and "no two newcomers are ever matched with each other" in never


def test_informative_priors_use_the_smallest_prior_variance() -> None:
    informative = {"prior": "informative", "prior_var_low": 1.0, "prior_var_high": 3.0}
    # sqrt(2 / (2 + 2)) = 0.707 with the smallest variance 1
    assert newcomer_threshold_warning(scenario([[0, 0.7]], **informative)) is None
    message = newcomer_threshold_warning(scenario([[0, 0.71]], **informative))
    assert message is not None and "prior variance 1" in message and "0.707" in message


def test_validate_warns_but_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "strict.yaml"
    path.write_text("matchmaker: {threshold: [[0, 0.9], [1, 0.0]]}\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert f"{path}: ok" in captured.out
    assert f"lobbysim: warning: {path}: matchmaker.threshold: two newcomers" in captured.err


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_no_bundled_scenario_rejects_every_newcomer_pair(path: Path) -> None:
    assert newcomer_threshold_warning(load_scenario(path)) is None
