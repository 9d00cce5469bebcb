"""Hostile and mistaken input, and interruptions: one line naming the field and the value, exit 2,
no traceback, nothing written outside ``outputs/`` or ``--out``, nothing half-written, nothing
overwritten."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lobbysim import RESULTS_VERSION
from lobbysim.cli.main import main
from lobbysim.commands.sweep import build_sweep
from lobbysim.experiments import store, sweeps
from lobbysim.experiments.store import RunStore
from lobbysim.experiments.sweeps import run_key
from lobbysim.scenario import load_scenario
from lobbysim.yaml_input import MAX_BYTES, YamlInputError, load_yaml
from tests.hardening.helpers import SMALL

PLUGINS = """\
from dataclasses import dataclass
from typing import ClassVar

from lobbysim.players.arrivals import Poisson


@dataclass(frozen=True)
class Moody(Poisson):
    name: ClassVar[str] = "moody"
    mood: str = "fine"

    def __post_init__(self):
        if self.mood == "grumpy":
            raise RuntimeError("cannot start grumpy")
        super().__post_init__()

    def sample(self, rng, start, end):
        if self.mood == "broken":
            raise KeyError("no such hour")
        return super().sample(rng, start, end)
"""

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder inside ``tmp_path`` holding the scenario and a plug-in file.

    Progress lines are held back (a slow step prints one every 10 s, as on a busy machine), so
    that what a test reads from a command is that command's answer."""
    monkeypatch.setenv("LOBBYSIM_PROGRESS_EVERY", "3600")
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "small.yaml").write_text(SMALL)
    (folder / "moody.py").write_text(PLUGINS)
    monkeypatch.chdir(folder)
    return folder


def _tree(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if "__pycache__" not in p.parts}


def _fails_cleanly(
    argv: list[str], message: str, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``argv`` exits 2 with ``message`` on one line and leaves ``root`` as it was."""
    before = _tree(root)
    capsys.readouterr()  # what earlier commands printed (a slow step's progress line) is theirs
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert _tree(root) == before


# --- 1. a name is a label, not a path -------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "compare", "sweep"])
@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("../../escaped", "got '../../escaped'"),
        ("{tmp}/absolute", "got '/"),  # shortened if the temporary folder's path is long
        ("n" * 300, "... (300 characters)"),
    ],
)
def test_a_scenario_name_cannot_be_a_path(
    command: str,
    name: str,
    shown: str,
    work: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [command, "small.yaml", "--set", f"name={name.format(tmp=tmp_path)}"]
    if command == "compare":
        argv += ["--policies", "random,draw_chance"]
    if command == "sweep":
        argv += ["--grid", "matchmaker.tick=0.5,1"]
    before = _tree(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "name: expected a label of at most 80 characters" in err and shown in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert _tree(tmp_path) == before  # ../../escaped would be tmp_path's parent: see below
    assert not list(tmp_path.parent.glob("escaped*"))


def test_a_name_with_spaces_gives_a_safe_default_folder(work: Path) -> None:
    assert main(["run", "small.yaml", "--set", "name=Evening peak (EU)", "--jobs", "1"]) == 0
    (folder,) = (work / "outputs").iterdir()
    assert folder.name.startswith("Evening-peak-EU-")
    assert load_scenario(folder / "scenario.yaml").name == "Evening peak (EU)"


# --- 2. a sweep never writes into a folder that is not its own ------------------------------------


GRID = ["--grid", "matchmaker.tick=0.5,1"]


def test_a_sweep_refuses_a_folder_of_other_files(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = work / "mydata"
    mine.mkdir()
    (mine / "results.csv").write_text("my own results\n")
    argv = ["sweep", "small.yaml", *GRID, "--out", "mydata", "--jobs", "1"]
    _fails_cleanly(argv, "mydata holds other files and is not a sweep folder", work, capsys)
    assert (mine / "results.csv").read_text() == "my own results\n"


@pytest.mark.slow
def test_a_sweep_refuses_another_sweeps_folder_and_resumes_its_own(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sweep", "small.yaml", *GRID, "--out", "s", "--jobs", "1"]
    assert main(argv) == 0
    assert json.loads((work / "s" / "sweep.json").read_text())["sweep"]
    results = (work / "s" / "results.csv").read_bytes()
    other = ["sweep", "small.yaml", "--grid", "matchmaker.tick=0.25,2", "--out", "s"]
    _fails_cleanly([*other, "--jobs", "1"], "s holds another sweep", work, capsys)
    _fails_cleanly([*argv, "--seed", "9"], "s holds another sweep", work, capsys)
    assert (work / "s" / "results.csv").read_bytes() == results
    assert main([*argv, "--replications", "2"]) == 0  # the same sweep, more replications


def test_a_starting_sweep_keeps_the_temporary_files_of_live_writers(work: Path) -> None:
    runs = work / "f" / "runs"
    runs.mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    live = store.tmp_name(runs / "a.json")  # this process: alive
    gone = runs / live.name.replace(f"-{os.getpid()}-", f"-{dead.stdout.strip()}-")
    elsewhere = runs / live.name.replace(f"-{store.HOST}-", "-0badc0de-")
    for path in (live, gone, elsewhere):
        path.write_text("{")
    RunStore(work / "f")
    assert live.exists() and elsewhere.exists() and not gone.exists()


# --- 3. silent wrong results become errors --------------------------------------------------------


def test_an_empty_trace_a_comment_only_file_and_a_repeated_key_are_errors(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "empty.csv").write_text("time,size\n")
    trace = "arrivals={name: trace, path: empty.csv}"
    _fails_cleanly(
        ["run", "small.yaml", "--set", trace],
        "trace file 'empty.csv' has a header but no arrivals",
        work,
        capsys,
    )
    (work / "comments.yaml").write_text("# name: small\n# horizon: 40\n")
    _fails_cleanly(
        ["run", "comments.yaml"], "comments.yaml: the file holds no fields", work, capsys
    )
    (work / "twice.yaml").write_text(SMALL + "horizon: 60\n")
    _fails_cleanly(
        ["run", "twice.yaml"], "the key 'horizon' is given twice (lines 2 and 13)", work, capsys
    )


# --- 4. hostile YAML fails fast -------------------------------------------------------------------


def test_hostile_yaml_fails_fast_with_one_line(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        "laughs.yaml": (LAUGHS, "more than 100,000 values once its aliases are expanded"),
        "deep.yaml": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 50 levels"),
        "huge.yaml": ("a: 1\n" + "#" * (MAX_BYTES + 10) + "\n", "longer than 1,000,000 bytes"),
        "self.yaml": ("a: &x [1, *x]\n", "an alias refers to the collection that contains it"),
    }
    for name, (text, message) in cases.items():
        (work / name).write_text(text)
        start = time.perf_counter()
        _fails_cleanly(["run", name], f"{name}: {message}", work, capsys)
        assert time.perf_counter() - start < 5.0


def test_yaml_reads_exponents_as_numbers_and_keeps_aliases_and_merges() -> None:
    data = load_yaml(
        "a: 5e-1\nb: 1e3\nc: -2E+4\nd: '1e3'\ne: &s [1, 2]\nf: *s\ng: {<<: {x: 1}, x: 2}"
    )
    assert data == {
        "a": 0.5,
        "b": 1000.0,
        "c": -20000.0,
        "d": "1e3",
        "e": [1, 2],
        "f": [1, 2],
        "g": {"x": 2},
    }
    with pytest.raises(YamlInputError, match=r"the key 'a' is given twice \(lines 1 and 1\)"):
        load_yaml("{a: 1, a: 2}")


# --- 5. what used to be a traceback ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "matchmaker.threshold=[[0, 2]]"], "min_quality must be in [0, 1], got 2.0"),
        (
            ["--set", "matchmaker.threshold=[[0, .nan]]"],
            "expected finite numbers, got [[0.0, nan]]",
        ),
        (["--set", "matchmaker.threshold=[]"], "matchmaker.threshold: expected a non-empty list"),
        (["--set", "matchmaker.threshold=[[0, true]]"], "pairs of numbers, got [[0, True]]"),
        (["--set", "arrivals.rate=1.0e+300"], "rate must be <= 100000, got 1e+300"),
        (["--set", "horizon=1e300"], "horizon: at most 5,256,000 minutes (10 years), got 1e+300"),
        (["--set", "matchmaker.tick=1e-9"], "matchmaker.tick: 1e-09 minutes gives 4e+10 steps"),
        (["--replications", "1000000000"], "--replications: at most 10,000 replications"),
        (["--out", "/proc/lobbysim-x"], "--out: cannot create /proc/lobbysim-x"),
        (
            ["--set", "arrivals={name: 'moody.py:Moody', rate: 1, mood: grumpy}"],
            "arrival model 'moody.py:Moody' failed to start: RuntimeError: cannot start grumpy",
        ),
        (
            ["--set", "arrivals={name: 'moody.py:Moody', rate: 1, mood: broken}"],
            "the arrival model 'moody' failed in sample(rng, 0, 40): KeyError: 'no such hour'",
        ),
        (
            ["--set", "matchmaker.policy=lobbysim.raters:BayesianRater"],
            "'lobbysim.raters:BayesianRater' is not a policy: it lacks score",
        ),
    ],
)
def test_bad_values_and_plugins_are_one_line_errors(
    argv: list[str], message: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fails_cleanly(["run", "small.yaml", "--jobs", "1", *argv], message, work.parent, capsys)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("matchmaker.threshold=[[0, 2]]", "min_quality must be in [0, 1], got 2.0"),
        ("matchmaker.threshold=[[0, .nan]]", "expected finite numbers"),
        ("matchmaker.threshold=[]", "matchmaker.threshold: expected a non-empty list"),
    ],
)
def test_bad_grid_values_are_errors_before_anything_runs(
    grid: str, message: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sweep", "small.yaml", "--grid", grid, "--jobs", "1"]
    before = _tree(work)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert _tree(work) == before


def test_a_file_that_is_not_utf8_is_named_with_the_byte(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "latin1.yaml").write_bytes(b"name: caf\xe9\nhorizon: 40\n")
    _fails_cleanly(
        ["run", "latin1.yaml"], "latin1.yaml: not UTF-8 text: the byte 0xe9 at line 1", work, capsys
    )


@pytest.mark.slow
def test_exponents_are_numbers_in_files_and_options(work: Path) -> None:
    (work / "exp.yaml").write_text(SMALL.replace("horizon: 40", "horizon: 4e1"))
    assert load_scenario(work / "exp.yaml").horizon == 40.0
    assert main(["run", "exp.yaml", "--set", "matchmaker.tick=5e-1", "--out", "o"]) == 0
    assert load_scenario(work / "o" / "scenario.yaml").matchmaker.tick == 0.5


def _cli(*args: str) -> list[str]:
    program = "import sys; from lobbysim.cli.main import main; sys.exit(main())"
    return [sys.executable, "-c", program, *args]


@pytest.mark.slow
def test_a_closed_pipe_is_one_line_not_a_traceback(work: Path) -> None:
    command = shlex.join(_cli("run", "small.yaml", "--jobs", "1", "--out", "o"))
    done = subprocess.run(
        f"{command} | true; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        cwd=work,
        check=False,
    )
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    # ``true`` may exit before or after lobbysim prints: a clean exit or the one-line error
    assert (done.returncode, done.stderr) in {
        (0, ""),
        (2, "lobbysim: error: standard output was closed (broken pipe)\n"),
    }
    assert (work / "o" / "report.html").exists()


# --- 6. SIGTERM is handled like Ctrl-C ------------------------------------------------------------


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in text:
            found.append(int(status.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state  # a zombie has ended


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
def test_sigterm_stops_the_workers_and_leaves_no_folder(work: Path) -> None:
    # far longer than the test waits (4 runs of 300000 minutes take about 100 s on 2 quiet cores),
    # so that the run is mid-way when the signal arrives; 3000000 would fail the memory check
    (work / "long.yaml").write_text(SMALL.replace("horizon: 40", "horizon: 300000"))
    process = subprocess.Popen(
        _cli("run", "long.yaml", "--jobs", "2", "--replications", "4", "--out", "o"),
        cwd=work,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.2)
        workers = _children(process.pid)
    assert list(work.glob("o.tmp-*")), "the run never started"
    assert process.poll() is None, "the run ended before the signal"
    process.send_signal(signal.SIGTERM)
    _, err = _communicate(process)
    assert process.returncode == 143
    assert "lobbysim: terminated" in err and "Traceback" not in err
    time.sleep(0.5)
    assert not [pid for pid in workers if _alive(pid)]
    assert not (work / "o").exists() and not list(work.glob("o.tmp-*"))


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
def test_sigterm_stops_a_streamed_run_and_its_record_writer(work: Path) -> None:
    """One replication streams its records through a writer process (lobbysim.records.files):
    SIGTERM ends both, with the run's one line and no folder left."""
    streamed = SMALL.replace("horizon: 40", "horizon: 3000000").replace(
        "records: {ratings_every: 20}", "records: {ratings_every: 20, stream: true}"
    )
    (work / "long.yaml").write_text(streamed)
    process = subprocess.Popen(
        _cli("run", "long.yaml", "--jobs", "1", "--out", "o"),
        cwd=work,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    writers: list[int] = []
    while time.monotonic() < deadline and not writers:
        time.sleep(0.2)
        writers = _children(process.pid)
    assert writers, "no record writer started"
    process.send_signal(signal.SIGTERM)
    _, err = _communicate(process)
    assert process.returncode == 143, err
    assert "lobbysim: terminated" in err and "Traceback" not in err
    time.sleep(0.5)
    assert not [pid for pid in writers if _alive(pid)]
    assert not (work / "o").exists() and not list(work.glob("o.tmp-*"))


# --- 11. sweep results are keyed on the results version -------------------------------------------


def test_sweep_results_are_keyed_on_the_results_version(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = build_sweep(work / "small.yaml", grid=["matchmaker.tick=0.5"])
    (run,) = built.runs
    assert run_key(run.scenario, run.seed) == run.key
    monkeypatch.setattr(sweeps, "RESULTS_VERSION", RESULTS_VERSION + 1)
    assert run_key(run.scenario, run.seed) != run.key


def _communicate(process: subprocess.Popen[str]) -> tuple[str, str]:
    """``process.communicate`` within 60 s; a process still running then is killed (with its
    children, which die with it), so that a failing test leaves nothing behind."""
    try:
        return process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
