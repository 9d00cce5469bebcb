"""Every file a user names as an output follows one rule (lobbysim/records/outputs.py): never over
an existing file unless --force (a regular file only), never through a link, never to a device, a
pipe or a folder, a missing folder refused before any work; nothing else is written or changed.
Checked on every command that writes such a file, and on the rule itself."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.records.outputs import (
    OutputTargetError,
    output_file_problem,
    write_output_file,
    write_output_text,
)
from lobbysim.scenario.schema import schema_text

#: Each command that writes one file the user names: its arguments with {out} for the target,
#: and the option that names it. The log of `calibrate` and the run folder of `log export` do
#: not exist: the target is checked before any of them is read.
COMMANDS = {
    "schema": (["schema", "--out", "{out}"], "--out"),
    "rules export": (["rules", "export", "team_4v4", "--flexmatch", "--out", "{out}"], "--out"),
    "log export": (["log", "export", "{tmp}/no-such-run", "--out", "{out}"], "--out"),
    "calibrate": (["calibrate", "{tmp}/no-such-log.csv", "--to", "{out}"], "--to"),
}
SUFFIX = {"log export": ".csv", "calibrate": ".yaml"}


def _argv(command: str, tmp: Path, out: Path) -> list[str]:
    args, _ = COMMANDS[command]
    return [a.format(tmp=tmp, out=out) for a in args]


def _target(command: str, tmp: Path) -> Path:
    return tmp / f"target{SUFFIX.get(command, '.json')}"


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 2, captured
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


def _listing(folder: Path) -> dict[str, str]:
    """Every entry of ``folder``: its kind and (for a file) content, or (for a link) target."""
    seen = {}
    for path in sorted(folder.iterdir()):
        if path.is_symlink():
            seen[path.name] = "link to " + os.readlink(path)
        elif path.is_dir():
            seen[path.name] = "folder"
        elif path.is_file():
            seen[path.name] = "file " + path.read_text(encoding="utf-8")
        else:
            seen[path.name] = "other " + oct(path.lstat().st_mode)
    return seen


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_existing_file_is_never_overwritten(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _target(command, tmp_path)
    out.write_text("mine", encoding="utf-8")
    err = _refused(capsys, _argv(command, tmp_path, out))
    option = COMMANDS[command][1]
    assert err == (
        f"lobbysim: error: {option}: {out} exists already: not overwritten "
        "(give --force to replace it)\n"
    )
    assert _listing(tmp_path) == {out.name: "file mine"}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
def test_a_link_is_never_followed_or_replaced_even_with_force(
    command: str, dangling: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    if not dangling:
        victim.write_text("precious", encoding="utf-8")
    out = _target(command, tmp_path)
    out.symlink_to(victim)
    before = _listing(tmp_path)
    for force in ([], ["--force"]):
        err = _refused(capsys, _argv(command, tmp_path, out) + force)
        assert f"{out} is a symbolic link: not followed or replaced" in err
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_folder_or_a_missing_folder_is_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / f"folder{SUFFIX.get(command, '.json')}"
    folder.mkdir()
    err = _refused(capsys, [*_argv(command, tmp_path, folder), "--force"])
    assert f"{folder} is a folder: name the file to write" in err
    missing = tmp_path / "missing" / _target(command, tmp_path).name
    err = _refused(capsys, _argv(command, tmp_path, missing))
    assert f"the folder {missing.parent} does not exist (make it first)" in err
    assert _listing(tmp_path) == {folder.name: "folder"}
    assert not any(folder.iterdir())


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_pipe_is_refused_without_opening_it(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = _target(command, tmp_path)
    os.mkfifo(fifo)  # opening it for writing would block: the check must not open it
    err = _refused(capsys, [*_argv(command, tmp_path, fifo), "--force"])
    assert f"{fifo} is not a regular file (a device, a pipe or a socket): not written" in err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_device_node_is_never_written(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device = _target(command, tmp_path)
    # /dev/null's device numbers, but a node of the test's own folder, never a system one
    os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    err = _refused(capsys, [*_argv(command, tmp_path, device), "--force"])
    assert f"{device} is not a regular file (a device, a pipe or a socket)" in err
    assert stat.S_ISCHR(device.lstat().st_mode)


def test_force_replaces_a_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "schema.json"
    out.write_text("old", encoding="utf-8")
    assert main(["schema", "--out", str(out), "--force"]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert out.read_text(encoding="utf-8") == schema_text()
    assert _listing(tmp_path) == {out.name: "file " + schema_text()}  # no temporary left


def test_rules_export_writes_a_new_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rules.json"
    assert main(["rules", "export", "flexmatch_5v5", "--flexmatch", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert json.loads(out.read_text(encoding="utf-8"))["ruleLanguageVersion"] == "1.0"
    assert [p.name for p in tmp_path.iterdir()] == ["rules.json"]


def test_init_never_writes_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "mine.yaml"
    link.symlink_to(tmp_path / "elsewhere.yaml")  # dangling: Path.exists() says False
    err = _refused(capsys, ["init", "quickstart", "--to", str(link)])
    assert f"{link} is a symbolic link: not followed or replaced" in err
    assert _listing(tmp_path) == {"mine.yaml": f"link to {tmp_path / 'elsewhere.yaml'}"}


# --- the rule itself -------------------------------------------------------------------------


def test_a_file_made_while_the_output_is_written_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"

    def write(tmp: Path) -> None:
        tmp.write_text("ours", encoding="utf-8")
        out.write_text("theirs", encoding="utf-8")  # another process, meanwhile

    with pytest.raises(OutputTargetError, match="was made while lobbysim wrote it"):
        write_output_file(out, write)
    assert _listing(tmp_path) == {"out.txt": "file theirs"}


def test_a_link_made_while_the_output_is_written_is_kept_even_with_force(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old", encoding="utf-8")
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")

    def write(tmp: Path) -> None:
        tmp.write_text("ours", encoding="utf-8")
        out.unlink()
        out.symlink_to(victim)

    with pytest.raises(OutputTargetError, match="is a symbolic link"):
        write_output_file(out, write, force=True)
    assert _listing(tmp_path) == {"out.txt": f"link to {victim}", "victim": "file precious"}


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_leaves_the_target_as_it_was(tmp_path: Path, error: BaseException) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old", encoding="utf-8")

    def write(tmp: Path) -> None:
        tmp.write_text("half", encoding="utf-8")
        raise error

    with pytest.raises(type(error)):
        write_output_file(out, write, force=True)
    assert _listing(tmp_path) == {"out.txt": "file old"}


def test_a_new_file_takes_the_umask_mode_not_a_temporary_files(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        out = write_output_text(tmp_path / "out.txt", "text")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda p: None, None),
        (lambda p: p.write_text("x"), "exists already"),
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.symlink_to(p.parent), "is a symbolic link"),
        (lambda p: os.mkfifo(p), "is not a regular file"),
    ],
)
def test_output_file_problem(
    tmp_path: Path, make: Callable[[Path], object], problem: str | None
) -> None:
    path = tmp_path / "target"
    make(path)
    found = output_file_problem(path)
    assert (found is None) if problem is None else (problem in str(found))
    assert [p.name for p in tmp_path.iterdir()] == ([] if problem is None else ["target"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_folder_that_takes_no_files_is_refused_before_any_work(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert "cannot write in" in str(output_file_problem(folder / "out.txt"))
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "quickstart", "--out", "{out}"],
        ["calibrate", "{tmp}/no-such-log.csv", "--to", "{tmp}/x.yaml", "--report", "{out}"],
    ],
    ids=["run --out", "calibrate --report"],
)
def test_an_output_folder_is_never_a_link(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    err = _refused(capsys, [a.format(tmp=tmp_path, out=link) for a in argv])
    assert f"{link} is a symbolic link: not followed (name a new or empty folder)" in err
    assert _listing(tmp_path) == {"link": f"link to {real}", "real": "folder"}
    assert not any(real.iterdir())
