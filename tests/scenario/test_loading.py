"""A scenario file loaded for a run (lobbysim/scenario/loading.py): ``--set`` of a FlexMatch rule
set's reference (``matchmaker.rules.flexmatch=FILE``, ``matchmaker.rules.attributes...``) runs
the scenario under another rule set, exactly as a file naming that set would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from lobbysim.scenario.bundled import find_scenario
from lobbysim.scenario.loading import load_run_scenario
from lobbysim.validation import ScenarioError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flexmatch"
SKILL = "{source: rating, scale: 100, offset: 1500}"


def test_a_set_flexmatch_file_runs_the_scenario_under_that_rule_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "two_teams_skill.json", tmp_path / "other.json")
    swapped = load_run_scenario(
        "flexmatch_5v5", ["matchmaker.rules.flexmatch=other.json", "replications=2"]
    )
    # the same scenario written as a file that names the other set
    data = yaml.safe_load(Path(find_scenario("flexmatch_5v5")).read_text())
    data["matchmaker"]["rules"]["flexmatch"] = str(tmp_path / "other.json")
    data["replications"] = 2
    (tmp_path / "named.yaml").write_text(yaml.safe_dump(data))
    named = load_run_scenario(tmp_path / "named.yaml")
    assert swapped == named
    own = load_run_scenario("flexmatch_5v5")
    names = [rule.name for rule in swapped.matchmaker.rules]
    assert names == [rule.name for rule in named.matchmaker.rules]
    assert names != [rule.name for rule in own.matchmaker.rules]
    assert "SimilarSkill" in names and swapped.replications == 2


def test_a_scenario_without_rules_gets_a_rule_set_and_its_bindings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "two_teams_skill.json", tmp_path / "rules.json")
    data = yaml.safe_load((FIXTURES / "two_teams_skill.yaml").read_text())
    named = dict(data)
    del data["matchmaker"]
    data["game"] = {**data["game"], "mode": "team", "team_size": 4}
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump(data))
    assert load_run_scenario("plain.yaml").matchmaker.rules is None
    scenario = load_run_scenario(
        "plain.yaml",
        [
            "matchmaker.rules.flexmatch=rules.json",
            f"matchmaker.rules.attributes.skill={SKILL}",
            "game.team_size=5",
        ],
    )
    named["matchmaker"]["rules"]["flexmatch"] = str(tmp_path / "rules.json")
    (tmp_path / "named.yaml").write_text(yaml.safe_dump(named))
    assert scenario.matchmaker == load_run_scenario("named.yaml").matchmaker
    assert [rule.name for rule in scenario.matchmaker.rules] == ["SimilarSkill", "FairTeams"]
    assert scenario.game.team_size == 5


def test_a_missing_rule_file_or_binding_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError, match=r"nowhere\.json"):
        load_run_scenario("flexmatch_5v5", ["matchmaker.rules.flexmatch=nowhere.json"])
    shutil.copy(FIXTURES / "two_teams_skill.json", tmp_path / "rules.json")
    with pytest.raises(ScenarioError, match=r"skill"):
        load_run_scenario("team_4v4", ["matchmaker.rules.flexmatch=rules.json"])

