"""Hardening of the studies' inputs: every input file a user names (a scenario, a tune space, a
FlexMatch rule set, a match log, a column mapping, a template) that is a pipe, a device, a socket
or a folder is refused before it is opened, naming the option (or the file) and the path; a tune
or calibrate study that would plan more simulations than the limit is refused before anything
runs or is read, with the simulations and their estimated time; a number too long to read in a
scenario names its field. Bad input: one line, exit status 2, no traceback, nothing written."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from lobbysim.cli.main import main
from lobbysim.validation import MAX_STUDY_SIMULATIONS
from tests.hardening.helpers import TINY, lobbysim_under_limit, one_line_error

LOG = "match_id,player_id,start,end,team,result\nm,a,0,10,0,win\nm,b,0,10,1,loss\n"
SPACE = {
    "objective": {"minimize": "skill_gap_true_mean"},
    "constraints": ["queue_time_mean <= 0.05"],
    "parameters": {"matchmaker.tick": [0.25, 1.0]},
    "trials": 6,
    "batch": 3,
    "replications": [2, 4],
    "evaluate": 4,
}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (tmp_path / "log.csv").write_text(LOG)
    return tmp_path


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("lobbysim: error: ")
    return lines[0].removeprefix("lobbysim: error: ")


@pytest.fixture
def unblocking(work: Path) -> Iterator[list[Path]]:
    """Yield a list to put pipes in; should a command open one to read (and so block), a
    watchdog opens it for writing after 20 s and closes it, so that the reader gets an end of
    file and the test fails instead of hanging."""
    pipes: list[Path] = []
    done = threading.Event()

    def watch() -> None:
        if done.wait(20):
            return
        while not done.is_set():
            for pipe in pipes:
                with contextlib.suppress(OSError):  # no reader on it (yet)
                    os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
            time.sleep(0.1)

    watchdog = threading.Thread(target=watch, daemon=True)
    watchdog.start()
    yield pipes
    done.set()
    watchdog.join()


PIPE_CASES = [
    # (the pipe's name, the command line with {pipe} for it, the start of the error line)
    ("p.yaml", ["tune", "one_visit", "--space", "{pipe}"], "--space: {pipe}: "),
    ("p.yaml", ["tune", "{pipe}", "--space", "space.yaml"], "{pipe}: "),
    ("p.csv", ["calibrate", "{pipe}", "--to", "x.yaml"], "{pipe}: "),
    ("p.yaml", ["calibrate", "log.csv", "--to", "x.yaml", "--columns", "{pipe}"], "--columns: "),
    ("p.yaml", ["calibrate", "log.csv", "--to", "x.yaml", "--template", "{pipe}"], "--template: "),
    ("p.csv", ["log", "check", "{pipe}"], "{pipe}: "),
    ("p.yaml", ["log", "check", "log.csv", "--columns", "{pipe}"], "--columns: {pipe}: "),
    ("p.json", ["rules", "show", "{pipe}"], "{pipe}: "),
    ("p.yaml", ["rules", "export", "{pipe}", "--flexmatch"], "{pipe}: "),
    ("p.yaml", ["run", "{pipe}", "--quiet", "--out", "never"], "{pipe}: "),
    ("p.yaml", ["sweep", "{pipe}", "--quiet", "--out", "never"], "{pipe}: "),
    ("p.yaml", ["validate", "{pipe}"], "{pipe}: "),
]


@pytest.mark.parametrize(("name", "argv", "start"), PIPE_CASES)
def test_an_input_that_is_a_pipe_is_refused_without_opening_it(
    work: Path,
    unblocking: list[Path],
    capsys: pytest.CaptureFixture[str],
    name: str,
    argv: list[str],
    start: str,
) -> None:
    pipe = work / name
    os.mkfifo(pipe)  # opening it to read would block until something writes to it
    unblocking.append(pipe)
    began = time.perf_counter()
    assert main([a.replace("{pipe}", name) for a in argv]) == 2
    line = _err_line(capsys)
    assert line.startswith(start.replace("{pipe}", name)), line
    assert line.endswith(f"{name}: is a pipe, not a regular file; give a file"), line
    assert time.perf_counter() - began < 15
    assert not (work / "x.yaml").exists() and not (work / "never").exists()


def test_a_socket_and_a_folder_are_refused_naming_the_option(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("s.yaml")  # relative: a socket's path is short
        assert main(["tune", "one_visit", "--space", "s.yaml"]) == 2
        assert _err_line(capsys) == "--space: s.yaml: is a socket, not a regular file; give a file"
        assert main(["calibrate", "log.csv", "--to", "x.yaml", "--columns", "s.yaml"]) == 2
        assert _err_line(capsys) == (
            "--columns: s.yaml: is a socket, not a regular file; give a file"
        )
    finally:
        server.close()
    (work / "folder.yaml").mkdir()
    assert main(["tune", "one_visit", "--space", "folder.yaml"]) == 2
    assert _err_line(capsys) == "--space: folder.yaml: is a folder, not a file"
    assert main(["tune", "one_visit", "--space", "missing.yaml"]) == 2
    assert _err_line(capsys) == "--space: missing.yaml: no such file"


DEVICE_CASES = [
    (["tune", "one_visit", "--space", "{dev}.yaml"], "--space: {dev}.yaml: "),
    (["calibrate", "log.csv", "--to", "x.yaml", "--columns", "{dev}.yaml"], "--columns: "),
    (["calibrate", "{dev}.csv", "--to", "x.yaml"], "{dev}.csv: "),
    (["log", "check", "{dev}.csv"], "{dev}.csv: "),
    (["rules", "show", "{dev}.json"], "{dev}.json: "),
]


@pytest.mark.slow
@pytest.mark.parametrize("device", ["link", "node"])
@pytest.mark.parametrize(("argv", "start"), DEVICE_CASES)
def test_an_input_that_is_a_device_is_refused_without_reading_it(
    work: Path, device: str, argv: list[str], start: str
) -> None:
    for suffix in (".yaml", ".csv", ".json"):
        path = work / f"{device}{suffix}"
        if device == "link":  # /dev/zero's path read as an input, never written
            path.symlink_to("/dev/zero")
        elif os.geteuid() == 0:  # a character device like /dev/zero, made in the test's folder
            os.mknod(path, 0o400 | stat.S_IFCHR, os.makedev(1, 5))
        else:
            pytest.skip("making a device node needs root")
    began = time.perf_counter()
    # in a child with 3 GB of address space and a timeout: reading /dev/zero would never end
    result = lobbysim_under_limit([a.replace("{dev}", device) for a in argv], work, timeout=60)
    line = one_line_error(result).removeprefix("lobbysim: error: ")
    assert line.startswith(start.replace("{dev}", device)), line
    assert line.endswith("is a device, not a regular file; give a file"), line
    assert time.perf_counter() - began < 30
    assert not (work / "x.yaml").exists() and not (work / "outputs").exists()


# --- the size of a study ------------------------------------------------------------------------


def _tune(work: Path, capsys: pytest.CaptureFixture[str], *extra: str, **space: object) -> str:
    (work / "big.yaml").write_text(yaml.safe_dump({**SPACE, **space}))
    began = time.perf_counter()
    argv = ["tune", "one_visit", "--space", "big.yaml", "--out", "never", "--jobs", "1", *extra]
    assert main([*argv, "--quiet"]) == 2
    assert time.perf_counter() - began < 20  # refused before anything runs
    assert not (work / "never").exists() and not (work / "outputs").exists()
    return _err_line(capsys)


def test_a_study_of_too_many_trials_is_refused_with_its_size_and_time(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _tune(work, capsys, trials=1_000_000_000)
    assert line.startswith(
        "big.yaml: trials: 1,000,000,000 would run about 4,000,000,008 simulations "
        "(1,000,000,000 trials x up to 4 replications + 2 x 4 fresh-seed runs), ~"
    ), line
    assert " years on 1 worker at about " in line and " s a simulation (a rough estimate)" in line
    assert line.endswith(
        f"; the limit is {MAX_STUDY_SIMULATIONS:,}; to run it on purpose, raise the limit with "
        "--max-simulations N"
    ), line
    # written 1e9 (YAML 1.2 reads it as a number): the same whole number, refused the same way
    (work / "e.yaml").write_text(yaml.safe_dump(SPACE).replace("trials: 6", "trials: 1e9"))
    assert main(["tune", "one_visit", "--space", "e.yaml", "--out", "never", "--jobs", "1"]) == 2
    assert _err_line(capsys).replace("e.yaml", "big.yaml") == line


def test_a_study_of_too_many_replications_names_them(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _tune(work, capsys, trials=30, replications=[3, 5000])
    assert line.startswith(
        "big.yaml: replications: 5,000 would run about 150,008 simulations (30 trials x up to "
        "5,000 replications + 2 x 4 fresh-seed runs), ~"
    ), line
    assert _tune(work, capsys, replications=[3, 1_000_000_000]) == (
        "big.yaml: replications: at most 10,000 replications a trial, got 1,000,000,000; "
        "intervals narrow with the square root of the replications"
    )
    assert _tune(work, capsys, evaluate=1_000_000_000) == (
        "big.yaml: evaluate: expected a whole number <= 10,000, got 1,000,000,000"
    )
    assert _tune(work, capsys, seed=2**40) == (
        "big.yaml: seed: expected a whole number <= 4,294,967,295, got 1,099,511,627,776"
    )
    assert (
        _tune(work, capsys, trials=2.5) == "big.yaml: trials: expected a whole number >= 1, got 2.5"
    )


def test_the_limit_is_an_option_both_ways(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the small study plans 6 x 4 + 2 x 4 = 32 simulations: refused under a limit of 20
    line = _tune(work, capsys, "--max-simulations", "20")
    assert line.startswith("big.yaml: trials: 6 would run about 32 simulations (6 trials x up to 4")
    assert "; the limit is 20; " in line
    from lobbysim.commands.tune import load_study
    from lobbysim.tuning.study import size_problem

    scenario, space = load_study("one_visit", {**SPACE, "trials": 1_000_000_000})
    assert size_problem(scenario, space) is not None
    assert size_problem(scenario, space, limit=4_000_000_008) is None  # raised on purpose
    with pytest.raises(SystemExit, match=r"^2$"):  # argparse's error
        main(["tune", "one_visit", "--space", "big.yaml", "--max-simulations", "0"])
    assert "--max-simulations: expected a whole number >= 1, got '0'" in capsys.readouterr().err


def test_calibrate_refuses_too_many_refinements_before_reading_the_log(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the log does not exist: reading it first would be another error
    argv = ["calibrate", "no_log.csv", "--to", "x.yaml", "--refine", "1e9"]
    assert main(argv) == 2
    assert _err_line(capsys) == (
        "--refine: 1,000,000,000 would run about 1,000,000,001 simulations (1,000,000,000 of "
        "the log's whole span to refine the fit, and one to compare the result with the log); "
        f"the limit is {MAX_STUDY_SIMULATIONS:,}; to run it on purpose, raise the limit with "
        "--max-simulations N"
    )
    assert main([*argv[:-1], "20", "--max-simulations", "10"]) == 2
    assert _err_line(capsys).startswith("--refine: 20 would run about 21 simulations (")
    with pytest.raises(SystemExit, match=r"^2$"):  # argparse's error
        main([*argv[:-1], "2.5"])
    assert "argument --refine: expected a whole number, got '2.5'" in capsys.readouterr().err
    assert main([*argv[:-1], "-1"]) == 2
    assert _err_line(capsys) == "--refine: expected a whole number >= 0, got -1"
    assert not (work / "x.yaml").exists() and not (work / "outputs").exists()


def test_the_library_functions_keep_the_same_limits(work: Path) -> None:
    import lobbysim.api as api
    from lobbysim.scenario import ScenarioError
    from lobbysim.tuning.folder import TuneError

    with pytest.raises(ScenarioError, match=r"^refine: 1,000,000,000 would run about "):
        api.calibrate("no_log.csv", refine=1_000_000_000)
    with pytest.raises(TuneError, match=r"^space: trials: 1,000,000,000 would run about "):
        api.tune("one_visit", {**SPACE, "trials": 1_000_000_000}, out=work / "never")
    assert not (work / "never").exists()


# --- numbers too long in a scenario -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "horizon",
            "9" * 5000,
            "horizon: the number 999999999999... (5,000 digits) at line 2 is too long to read as "
            "a number",
        ),
        (
            "horizon",
            "1" + "0" * 400,
            "horizon: the number of about 401 digits is too large (the largest is about 1.8e308)",
        ),
        (
            "arrivals",
            "{name: poisson, rate: 1" + "0" * 400 + "}",
            "arrivals: arrival model 'poisson': rate must be a finite number, got a number of "
            "401 digits",
        ),
        (
            "matchmaker",
            "{policy: draw_chance, threshold: [[0, 0.0], [1, " + "7" * 5000 + "]]}",
            "the number 777777777777... (5,000 digits) at line 2 is too long to read as a number",
        ),
    ],
)
def test_a_number_too_long_in_a_scenario_is_one_line_naming_it(
    work: Path, capsys: pytest.CaptureFixture[str], field: str, value: str, expected: str
) -> None:
    lines = [line for line in TINY.splitlines() if not line.startswith(f"{field}:")]
    (work / "long.yaml").write_text("\n".join([lines[0], f"{field}: {value}", *lines[1:]]) + "\n")
    assert main(["validate", "long.yaml"]) == 2
    assert _err_line(capsys) == f"long.yaml: {expected}"
