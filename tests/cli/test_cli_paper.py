"""``lobbysim paper``: a small end-to-end run, argument errors, atomic output, determinism."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pytest

import lobbysim.commands.paper
from lobbysim.cli.main import main
from lobbysim.commands.paper import PaperArgumentError, run_paper

SMALL = ["paper", "--case", "top", "--paths", "4", "--games", "30"]
REPORT_FILES = {
    "manifest.json",
    "per_game.csv",
    "windows.csv",
    "claims.csv",
    "summary.md",
    "draw_prob_true.png",
    "sq_error.png",
    "skill_diff.png",
    "win.png",
    "overview.png",
}


def test_paper_writes_the_report_and_prints_the_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main([*SMALL, "--jobs", "1", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert {p.name for p in out.iterdir()} == REPORT_FILES
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no temporary folder left
    lines = captured.out.splitlines()
    assert lines[0] == f"wrote {out}"
    assert len(lines) == 1 + 10  # claims (a)-(e) against two other policies
    assert all(
        re.match(r"\((a|b|c|d|e)\) knowledge_gradient vs \w+ \[", line) for line in lines[1:]
    )
    assert all(
        line.endswith((": supported", ": not supported", ": contradicted")) for line in lines[1:]
    )
    assert captured.err == ""  # stderr is not a terminal: no progress bar
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert (
        "`lobbysim paper --case top --paths 4 --seed 0 "
        "--policies point_estimate,draw_chance,knowledge_gradient --games 30`" in summary
    )
    assert "windows: 1-6, 7-12, 13-30" in summary


@pytest.mark.slow
def test_same_command_twice_gives_identical_files(tmp_path: Path) -> None:
    # Different --jobs too: the results must not depend on the number of processes.
    assert main([*SMALL, "--seed", "5", "--jobs", "1", "--out", str(tmp_path / "one")]) == 0
    assert main([*SMALL, "--seed", "5", "--jobs", "2", "--out", str(tmp_path / "two")]) == 0
    for name in ("per_game.csv", "windows.csv", "claims.csv", "summary.md"):
        one = (tmp_path / "one" / name).read_bytes()
        assert one == (tmp_path / "two" / name).read_bytes(), name
    assert main([*SMALL, "--seed", "6", "--jobs", "1", "--out", str(tmp_path / "three")]) == 0
    other_seed = (tmp_path / "three" / "per_game.csv").read_bytes()
    assert other_seed != (tmp_path / "one" / "per_game.csv").read_bytes()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            ["--policies", "point_estimate,draw_chanse"],
            ["--policies", "draw_chanse", "did you mean 'draw_chance'"],
        ),
        (["--policies", ","], ["--policies", "','", "at least one policy"]),
        (["--policies", "draw_chance,oracle"], ["--policies 'oracle' is a lobby baseline"]),
        (["--policies", "uniform_random"], ["--policies 'uniform_random' is a lobby baseline"]),
        (["--paths", "1"], ["--paths", "got 1", ">= 2"]),
        (["--games", "2"], ["--games", "got 2", ">= 3"]),
        (["--jobs", "0"], ["--jobs", "got 0", ">= 1"]),
        (["--seed", "-1"], ["--seed", "got -1", ">= 0"]),
    ],
)
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], expected: list[str]
) -> None:
    out = tmp_path / "run"
    argv = ["paper", "--case", "top", "--paths", "4", "--games", "30", *extra, "--out", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("lobbysim: error: ")
    for text in expected:
        assert text in lines[0]
    assert "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    assert main([*SMALL, "--jobs", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"--out {out} exists and is not empty" in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


@pytest.mark.slow
def test_an_empty_existing_out_is_used(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    assert main([*SMALL, "--jobs", "1", "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == REPORT_FILES


@pytest.mark.slow
def test_a_stale_temporary_folder_is_replaced(tmp_path: Path) -> None:
    stale = tmp_path / f"run.tmp-{os.getpid()}"
    stale.mkdir()
    (stale / "old.txt").write_text("from an earlier crash", encoding="utf-8")
    assert main([*SMALL, "--jobs", "1", "--out", str(tmp_path / "run")]) == 0
    assert {p.name for p in (tmp_path / "run").iterdir()} == REPORT_FILES
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_failure_while_writing_leaves_nothing_behind(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: type[BaseException],
) -> None:
    def failing_write(result: object, out_dir: Path, *, command: str | None = None) -> None:
        (out_dir / "per_game.csv").write_text("half", encoding="utf-8")
        raise error("stop")

    monkeypatch.setattr(lobbysim.commands.paper, "write_report", failing_write)
    out = tmp_path / "run"
    argv = [*SMALL, "--jobs", "1", "--out", str(out)]
    if error is KeyboardInterrupt:
        assert main(argv) == 130
        assert capsys.readouterr().err == "lobbysim: interrupted\n"
    else:
        with pytest.raises(RuntimeError, match="stop"):
            main(argv)
    assert list(tmp_path.iterdir()) == []


def test_default_out_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["paper", "--case", "middle", "--equal-priors", "--paths", "3", "--games", "5"]
    assert main([*argv, "--jobs", "1"]) == 0
    (folder,) = (tmp_path / "outputs").iterdir()
    assert re.fullmatch(r"paper-middle-equal-\d{8}-\d{6}", folder.name)
    assert {p.name for p in folder.iterdir()} == REPORT_FILES
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert "(f) the three policies perform similarly" in summary
    assert "equal priors: yes" in summary


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.slow
def test_progress_bar_only_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["paper", "--case", "bottom", "--paths", "3", "--games", "5", "--jobs", "1"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    assert "paper study" in terminal.getvalue()
    assert "3/3" in terminal.getvalue()  # three policies, one block each
    assert capsys.readouterr().out.startswith("wrote ")


def test_run_paper_validates_before_running(tmp_path: Path) -> None:
    with pytest.raises(PaperArgumentError) as info:
        run_paper("side", paths=4, games=30, out=tmp_path / "run")
    assert info.value.argument == "case"
    assert "got 'side'" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_paper_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["paper", "--help"])
    assert info.value.code == 0
    assert "--equal-priors" in capsys.readouterr().out
