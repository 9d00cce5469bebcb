"""A sweep over FlexMatch rule sets (lobbysim/commands/sweep.py): ``--grid
matchmaker.rules.flexmatch=a.json,b.json`` gives each cell the scenario a ``--set`` of that file
gives, and other grid keys still apply on top."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lobbysim.commands.sweep import build_sweep
from lobbysim.experiments.sweeps import SweepError
from lobbysim.scenario.loading import load_run_scenario

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flexmatch"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the 5v5 fixture scenario and two variants of its rule set."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "two_teams_skill.yaml", tmp_path / "lobby.yaml")
    shutil.copy(FIXTURES / "two_teams_skill.json", tmp_path / "two_teams_skill.json")
    shutil.copy(FIXTURES / "two_teams_skill.json", tmp_path / "loose.json")
    loose = json.loads((tmp_path / "loose.json").read_text())
    loose["rules"][0]["maxDistance"] = 250
    (tmp_path / "loose.json").write_text(json.dumps(loose))
    return tmp_path


def test_a_grid_over_rule_files_gives_each_cell_that_rule_set(work: Path) -> None:
    sweep = build_sweep(
        "lobby.yaml",
        grid=["matchmaker.rules.flexmatch=two_teams_skill.json,loose.json", "game.length=8,12"],
        replications=1,
    )
    assert len(sweep.cells) == 4
    by_cell = {run.cell.number: run.scenario for run in sweep.runs}
    for cell in sweep.cells:
        file = cell.values["matchmaker.rules.flexmatch"]
        length = cell.values["game.length"]
        expected = load_run_scenario(
            "lobby.yaml", [f"matchmaker.rules.flexmatch={file}", f"game.length={length}"]
        ).replace(sweep=None)
        assert by_cell[cell.number] == expected
    limits = {
        cell.values["matchmaker.rules.flexmatch"]: by_cell[cell.number].matchmaker.rules[0].limit
        for cell in sweep.cells
    }
    assert limits == {"two_teams_skill.json": 200.0, "loose.json": 250.0}
    # the rule sets differ, so the runs' keys do (a store never mixes them up)
    assert len({run.key for run in sweep.runs}) == 4


def test_a_cell_naming_a_missing_rule_file_is_one_line_naming_the_cell(work: Path) -> None:
    with pytest.raises(SweepError) as info:
        build_sweep(
            "lobby.yaml", grid=["matchmaker.rules.flexmatch=loose.json,nowhere.json"]
        )
    (line,) = str(info.value).splitlines()
    assert line.startswith("lobby.yaml: cell 2 (matchmaker.rules.flexmatch=nowhere.json): ")
    assert "nowhere.json" in line.split(": ", 2)[2]
