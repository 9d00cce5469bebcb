"""No orphan processes: a command killed outright (SIGKILL: the OOM killer, a CI timeout) takes its
worker processes and record writer with it, and the next run to the same ``--out`` removes what it
left behind (its temporary folder, a sweep's temporary files) and works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.records import outputs
from lobbysim.records.outputs import HOST, remove_stale_temporaries
from lobbysim.running.workers import process_alive
from tests.hardening.helpers import SMALL

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists() or os.name != "posix", reason="needs /proc (Linux)"
)

GONE_WITHIN = 5.0  # seconds


def _cli(*args: str) -> list[str]:
    program = "import sys; from lobbysim.cli.main import main; sys.exit(main())"
    return [sys.executable, "-c", program, *args]


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in text and "\nState:\tZ" not in text:
            found.append(int(status.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state  # a zombie has ended


def _start(work: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``lobbysim ARGS`` in its own session (as a shell would a job)."""
    return subprocess.Popen(
        _cli(*args),
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _kill_when_workers_run(process: subprocess.Popen[bytes], workers: int) -> list[int]:
    """Wait until ``process`` has ``workers`` children, SIGKILL it, return the children."""
    deadline = time.monotonic() + 60
    children: list[int] = []
    while time.monotonic() < deadline and len(children) < workers:
        time.sleep(0.1)
        children = _children(process.pid)
        assert process.poll() is None, "the command ended before it was killed"
    assert len(children) >= workers, f"found {children}"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return children


def _gone(pids: list[int]) -> list[int]:
    """Return the pids still alive ``GONE_WITHIN`` seconds from now (sooner if none is)."""
    deadline = time.monotonic() + GONE_WITHIN
    alive = [pid for pid in pids if _alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if _alive(pid)]
    for pid in alive:  # leave nothing behind on failure
        os.kill(pid, signal.SIGKILL)
    return alive


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "small.yaml").write_text(SMALL)
    # minutes of work on 2 cores (about 25 s per run), so still running when killed
    (tmp_path / "long.yaml").write_text(SMALL.replace("horizon: 40", "horizon: 300000"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
def test_a_killed_compare_takes_its_workers_along_and_the_next_run_cleans_up(
    work: Path,
) -> None:
    process = _start(
        work, "compare", "long.yaml", "--policies", "draw_chance,fifo", "--jobs", "2",
        "--replications", "2", "-q", "--out", "o",
    )  # fmt: skip
    workers = _kill_when_workers_run(process, 2)
    assert _gone(workers) == [], "worker processes outlived the killed command"
    assert (work / f"o.tmp-{process.pid}").is_dir()  # what a kill -9 cannot clean up
    # the next run to the same --out works, and removes the dead run's temporary folder
    argv = ["compare", "small.yaml", "--policies", "draw_chance,fifo", "--jobs", "1", "-q"]
    assert main([*argv, "--out", "o"]) == 0
    assert (work / "o" / "summary.csv").is_file()
    assert not list(work.glob("o.tmp-*"))


@pytest.mark.slow
def test_a_killed_sweep_takes_its_workers_along_and_resumes(work: Path) -> None:
    (work / "sweep.yaml").write_text(
        SMALL.replace("horizon: 40", "horizon: 600").replace("rate: 1.5", "rate: 4")
    )
    argv = ["sweep", "sweep.yaml", "--grid", "matchmaker.tick=0.25,0.5,1", "--replications", "3"]
    argv += ["--policies", "draw_chance,fifo", "--jobs", "2", "-q", "--out", "s"]
    process = _start(work, *argv)
    runs = work / "s" / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(runs.glob("[!.]*.json"))) < 2:
        time.sleep(0.05)
    workers = _kill_when_workers_run(process, 2)
    assert _gone(workers) == [], "worker processes outlived the killed sweep"
    done = len(list(runs.glob("[!.]*.json")))
    assert 2 <= done < 18
    # what a sweep killed while writing leaves: a run's and a table's temporary file, and the
    # report's temporary folder
    pid = process.pid
    (runs / f".tmp-{HOST}-{pid}-x.json").write_text("{")
    (work / "s" / f".tmp-{HOST}-{pid}-results.csv").write_text("cell")
    (work / "s" / f".tmp-{HOST}-{pid}-report").mkdir()
    # the same sweep again: it skips the finished runs, runs the rest, leaves nothing temporary
    assert main(argv) == 0
    assert len(list(runs.glob("[!.]*.json"))) == 18
    assert not [p for p in (work / "s").rglob(".tmp-*")]
    assert len((work / "s" / "results.csv").read_text().splitlines()) == 1 + 18


@pytest.mark.slow
def test_a_killed_streamed_run_takes_its_record_writer_along(work: Path) -> None:
    streamed = SMALL.replace("horizon: 40", "horizon: 300000").replace(
        "records: {ratings_every: 20}", "records: {ratings_every: 20, stream: true}"
    )
    (work / "streamed.yaml").write_text(streamed)
    process = _start(work, "run", "streamed.yaml", "--jobs", "1", "-q", "--out", "o")
    writers = _kill_when_workers_run(process, 1)
    assert _gone(writers) == [], "the record writer outlived the killed run"
    assert main(["run", "small.yaml", "--jobs", "1", "-q", "--out", "o"]) == 0
    assert not list(work.glob("o.tmp-*"))


WATCHED = """import multiprocessing, os, sys, time
from lobbysim.running.workers import die_with_parent

def child(parent):
    die_with_parent(parent, deathsig=False)  # the portable watchdog alone
    time.sleep(60)

if __name__ == "__main__":
    worker = multiprocessing.get_context(sys.argv[1]).Process(target=child, args=(os.getpid(),))
    worker.start()
    print(worker.pid, flush=True)
    time.sleep(60)
"""


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_the_watchdog_alone_ends_a_worker_whose_parent_was_killed(work: Path, method: str) -> None:
    """Without Linux's death signal (other systems), the watchdog thread ends an orphan."""
    (work / "watched.py").write_text(WATCHED)
    parent = subprocess.Popen(
        [sys.executable, "watched.py", method], cwd=work, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(0.5)
    assert _alive(child)
    parent.kill()
    parent.wait()
    parent.stdout.close()
    assert _gone([child]) == [], "the orphan kept running"


def test_stale_temporary_folders_of_ended_runs_are_removed_and_live_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    out = tmp_path / "o"
    dead = tmp_path / f"o.tmp-{ended.pid}"
    live = tmp_path / f"o.tmp-{os.getppid()}"  # a running process: its folder is kept
    elsewhere = tmp_path / f"o.tmp-{ended.pid + 1}"  # of another host sharing the folder
    other = tmp_path / f"other.tmp-{ended.pid}"  # another output's
    for folder in (dead, live, elsewhere, other):
        folder.mkdir()
        (folder / "summary.csv").write_text("policy\n")
    (elsewhere / ".lobbysim-writer").write_text('{"host": "0badc0de", "pid": 1}')
    assert not process_alive(ended.pid) and process_alive(os.getppid())
    assert remove_stale_temporaries(out) == []
    assert not dead.exists() and live.exists() and elsewhere.exists() and other.exists()
    # one that cannot be removed is reported, not fatal: the run goes on
    dead.mkdir()

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(outputs.shutil, "rmtree", refuse)
    (line,) = remove_stale_temporaries(out)
    assert str(dead) in line and "Permission denied" in line and "remove it by hand" in line
    assert dead.exists()
