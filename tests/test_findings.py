"""scripts/findings.py and docs/findings.md name the same findings with the same commands, and
the script reads a figure from a command's output as it says."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "findings.py"
PAGE = ROOT / "docs" / "findings.md"
REMEASURE = re.compile(r"^Re-measure ([a-z0-9-]+): (.*)$", re.M)


def load_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("findings", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["findings"] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def documented() -> dict[str, list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    found: dict[str, list[str]] = {}
    for name, rest in REMEASURE.findall(text):
        assert name not in found, f"docs/findings.md gives {name} twice"
        found[name] = re.findall(r"`([^`]+)`", rest)
    return found


def test_every_finding_of_the_page_is_the_scripts_with_the_same_commands() -> None:
    script = load_script()
    page = documented()
    assert len(page) >= 30
    assert all(commands for commands in page.values()), "a finding without a command"
    assert {f.name: list(f.commands) for f in script.FINDINGS} == page


def test_every_finding_reads_a_figure_and_every_section_of_the_page_has_one() -> None:
    script = load_script()
    assert all(f.figures for f in script.FINDINGS)
    sections = re.split(r"^### ", PAGE.read_text(encoding="utf-8"), flags=re.M)[1:]
    without = [s.splitlines()[0] for s in sections if not REMEASURE.search(s)]
    assert without == []


def test_a_command_runs_from_the_scratch_folder_on_the_repositorys_files(tmp_path: Path) -> None:
    script = load_script()
    words = script.command_line(
        "lobbysim compare scenarios/live_game.yaml --jobs 2", tmp_path, tmp_path / "a"
    )
    assert words[:3] == [sys.executable, "-m", "lobbysim"]
    assert words[4] == str(ROOT / "scenarios" / "live_game.yaml")
    assert words[-2:] == ["--out", str(tmp_path / "a")]
    words = script.command_line("lobbysim paper --out outputs/x", tmp_path, tmp_path / "b")
    assert words[-2:] == ["--out", str(tmp_path / "b")] and "outputs/x" not in words
    words = script.command_line("python scripts/team_balance.py", tmp_path, tmp_path / "c")
    assert words == [sys.executable, str(ROOT / "scripts" / "team_balance.py")]


def test_the_readers_read_a_comparisons_folder_and_its_printed_lines(tmp_path: Path) -> None:
    script = load_script()
    pd.DataFrame(
        [["oracle", "skill_gap_true_mean", 1.3961, 0.05, 10, 1.3612, 1.4310]],
        columns=["policy", "metric", "mean", "sd", "n", "ci_low", "ci_high"],
    ).to_csv(tmp_path / "summary.csv", index=False)
    pd.DataFrame(
        [["b", "a", "retained", 0.0126, 0.01, 20, 0.0057, 0.0196]],
        columns=["policy", "baseline", "metric", "mean", "sd", "n", "ci_low", "ci_high"],
    ).to_csv(tmp_path / "differences.csv", index=False)
    outputs = [script.Output(tmp_path, "x captures 55% [50%, 59%] of\nrow: 1.2 3.4\n")]
    assert script.Summary("oracle", "skill_gap_true_mean")(outputs) == "1.40 [1.36, 1.43]"
    assert script.Difference("b", "retained")(outputs) == "+0.0126 [+0.00570, +0.0196]"
    assert script.Printed(r"captures (\S+% \[\S+, \S+\])")(outputs) == "55% [50%, 59%]"
    assert script.Line("row:")(outputs) == "row: 1.2 3.4"
    assert script.Line("absent")(outputs).startswith("no line holds")
    with pytest.raises(FileNotFoundError):
        script.Summary("oracle", "x")([script.Output(None, "")])


def test_an_unknown_or_manual_finding_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = load_script()
    assert script.main(["--only", "nonesuch"]) == 2
    assert script.main(["--only", "first-command"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "nonesuch" in err[0] and "fresh clone" in err[1]
