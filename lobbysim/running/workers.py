"""Running independent tasks in worker processes, with progress, in a fixed result order.

Replications, policy comparisons and the paper study's blocks are independent: :func:`run_tasks`
runs them in this process (``jobs == 1``) or on a local process pool, reports progress as tasks
finish, and returns the results in task order, so that the outcome never depends on the number of
workers or on which worker finished first.

With ``partial=True`` a task may also report how far it is (:func:`task_progress`, a fraction),
in this process or from a worker (through a queue read by a thread here), and the progress
callback then gets the finished tasks plus the fractions of those in flight. A
:class:`lobbysim.running.time_left.RemainingTime` given as ``estimate`` hears when each task starts,
how far it is and when it ends, and estimates the time left from that.

Workers die with the process that started them (:func:`die_with_parent`, run as every pool's
worker initializer): if the command is killed outright (SIGKILL, the OOM killer, a CI timeout),
its workers end too, instead of running on, holding memory, with nobody to hand a result to.
A task that runs a lobby collects the garbage it leaves as it ends (:func:`collecting`), so that
a worker's memory does not grow with the tasks it has run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, TypeVar

from lobbysim.running.time_left import RemainingTime

T = TypeVar("T")
R = TypeVar("R")

#: Where :func:`task_progress` reports to, while a task runs with ``partial=True``.
_report: Callable[[float], None] | None = None
#: In a worker process of a partial run: the queue to the parent.
_queue: Any = None


#: A task that took at least this many seconds collects its garbage as it ends (:func:`collecting`):
#: a full collection takes up to a tenth of a second or so, little beside such a task.
COLLECT_AFTER_SECONDS = 1.0


@contextmanager
def collecting(after: float = COLLECT_AFTER_SECONDS) -> Iterator[None]:
    """Collect the garbage the block leaves (a full ``gc.collect()``) if it took ``after``
    seconds or more.

    A simulated lobby leaves reference cycles, freed only by the collector, whose full
    collections come now and then: over the runs of a worker process, the garbage of earlier
    runs piles up and the worker's memory grows with the runs it has run (measured over 7 runs
    of a base of 40,000 members: a worker's peak 304 MB, against 238 MB collected). Collected
    as each run ends, it stays that of one run. A short block is not worth a collection.
    """
    start = time.perf_counter()
    try:
        yield
    finally:
        if time.perf_counter() - start >= after:
            gc.collect()


def task_progress(fraction: float) -> None:
    """Report that the running task is ``fraction`` (0 to 1) done; nothing if nobody listens."""
    report = _report
    if report is not None:
        report(min(max(float(fraction), 0.0), 1.0))


#: Seconds between two looks of a worker's watchdog at its parent (:func:`die_with_parent`).
PARENT_POLL_SECONDS = 0.2
#: The exit status of a process that ends because its parent has gone.
ORPHAN_EXIT = 70
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host is running (a zombie has ended).

    Where that cannot be told (Windows), a process is taken as alive, so that nothing of it is
    removed.
    """
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but not ours to signal
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")


def die_with_parent(parent: int, *, deathsig: bool = True) -> None:
    """Make this process end when the process ``parent`` (the one that started it) ends.

    Two ways, so that a worker never outlives a command killed outright: on Linux, the kernel
    sends this process SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``, unless
    ``deathsig`` is false); everywhere, a daemon thread looks every
    :data:`PARENT_POLL_SECONDS` whether the parent is still there and ends the process
    (``os._exit``) when it is not. A parent gone already ends it at once.

    Call it first thing in a worker process (a pool's initializer), from the thread that will
    run; ``parent`` is the pid of the process that created the pool, passed to the worker.
    """
    direct = os.getppid() == parent  # started by it (fork, spawn), not by a fork server
    if deathsig and direct and sys.platform.startswith("linux"):
        _set_deathsig(signal.SIGKILL)
    if not _parent_alive(parent, direct):  # gone before the death signal was asked for
        os._exit(ORPHAN_EXIT)
    watchdog = threading.Thread(
        target=_watch_parent, args=(parent, direct), name="lobbysim-parent-watch", daemon=True
    )
    watchdog.start()


def _set_deathsig(signum: int) -> None:
    """Ask Linux to send this process ``signum`` when its parent dies; nothing if it cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
    except (OSError, AttributeError):  # no libc or no prctl: the watchdog alone
        pass


def _parent_alive(parent: int, direct: bool) -> bool:
    """Whether the process ``parent`` is still there (``direct``: it is this one's parent)."""
    if os.name == "posix":
        if direct:  # an orphan is adopted by another process: its parent pid changes
            return os.getppid() == parent
        return process_alive(parent)
    process = multiprocessing.parent_process()  # Windows: its handle tells
    return process is None or process.is_alive()


def _watch_parent(parent: int, direct: bool) -> None:
    while _parent_alive(parent, direct):
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(ORPHAN_EXIT)


def _init_worker(parent: int, channel: Any = None) -> None:
    """A pool worker's initializer: die with the parent; keep the progress queue, if any."""
    global _queue
    die_with_parent(parent)
    _queue = channel


def worker_pool(workers: int, channel: Any = None) -> ProcessPoolExecutor:
    """Return a process pool of ``workers`` whose workers die with this process
    (:func:`die_with_parent`); ``channel``: the queue :func:`task_progress` reports to."""
    return ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(os.getpid(), channel)
    )


def _call_reporting(fn: Callable[[T], R], index: int, task: T) -> R:
    """Run ``fn(task)`` in a worker with :func:`task_progress` sent to the parent's queue as
    ``(index, fraction, CPU seconds used)``, after ``(index, None, 0.0)``: the task starts."""
    global _report
    channel = _queue
    start = time.process_time()
    _report = (
        None
        if channel is None
        else (lambda f: channel.put((index, f, time.process_time() - start)))
    )
    if channel is not None:
        channel.put((index, None, 0.0))
    try:
        return fn(task)
    finally:
        _report = None


def run_tasks(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    *,
    partial: bool = False,
    estimate: RemainingTime | None = None,
) -> list[R]:
    """Return ``[fn(task) for task in tasks]``, computed on ``jobs`` worker processes.

    Args:
        fn: a picklable (module-level) function.
        tasks: its arguments, one task each.
        jobs: worker processes; 1 runs everything in this process.
        progress: called as ``progress(done, total)`` each time a task finishes.
        partial: also call ``progress`` as tasks report their own progress
            (:func:`task_progress`); ``done`` is then a float: the finished tasks plus the
            fractions of those running.
        estimate: told when each task starts, how far it is (with ``partial``) and when it
            ends (planned by the caller, with the tasks in this order).
    """
    global _report
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    total = len(tasks)
    partial = partial and progress is not None
    if jobs == 1 or total <= 1:
        results = []
        for i, task in enumerate(tasks):
            start = time.process_time()
            if estimate is not None:
                estimate.start(i, 0.0)
            if partial and progress is not None:
                _report = lambda f, i=i, c=start: _reached(  # noqa: E731
                    estimate, progress, i, f, total, time.process_time() - c
                )
            try:
                results.append(fn(task))
            finally:
                _report = None
            if estimate is not None:
                estimate.finish(i)
            if progress is not None:
                progress(i + 1, total)
        return results
    if partial and progress is not None:
        return _run_reporting(fn, tasks, min(jobs, total), progress, estimate)
    with worker_pool(min(jobs, total)) as pool, stopping_on_error(pool):
        futures = {pool.submit(fn, task): i for i, task in enumerate(tasks)}
        for done, future in enumerate(as_completed(futures), start=1):
            if estimate is not None:
                estimate.finish(futures[future])
            if progress is not None:
                progress(done, total)
        return [future.result() for future in futures]


def _reached(
    estimate: RemainingTime | None,
    progress: Callable[[Any, int], None],
    index: int,
    fraction: float,
    total: int,
    cpu: float,
) -> None:
    """Tell ``estimate`` and ``progress`` that task ``index`` (in this process) is at
    ``fraction``, having used ``cpu`` seconds."""
    if estimate is not None:
        estimate.reach(index, fraction, cpu)
    progress(index + fraction, total)


def _run_reporting(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    workers: int,
    progress: Callable[[Any, int], None],
    estimate: RemainingTime | None = None,
) -> list[R]:
    """:func:`run_tasks` on a pool whose tasks report their fractions through a queue."""
    total = len(tasks)
    channel: Any = multiprocessing.Queue()
    lock = threading.Lock()
    running: dict[int, float] = {}
    finished: set[int] = set()
    stop = threading.Event()

    def show() -> None:
        progress(len(finished) + sum(running.values()), total)

    def drain() -> None:
        while not stop.is_set():
            try:
                index, fraction, cpu = channel.get(timeout=0.2)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):  # the queue broke (workers killed)
                return
            with lock:
                if index in finished:
                    continue
                if fraction is None:  # the task starts
                    if estimate is not None:
                        estimate.start(index, cpu)
                    continue
                if estimate is not None:
                    estimate.reach(index, fraction, cpu)
                running[index] = fraction
                show()

    reader = threading.Thread(target=drain, name="lobbysim-progress", daemon=True)
    reader.start()
    pool = worker_pool(workers, channel)
    try:
        with pool, stopping_on_error(pool):
            futures: dict[Future[R], int] = {
                pool.submit(_call_reporting, fn, i, task): i for i, task in enumerate(tasks)
            }
            for future in as_completed(futures):
                with lock:
                    finished.add(futures[future])
                    running.pop(futures[future], None)
                    if estimate is not None:
                        estimate.finish(futures[future])
                    show()
            return [future.result() for future in futures]
    finally:
        stop.set()
        reader.join(timeout=1.0)
        channel.cancel_join_thread()
        channel.close()


@contextmanager
def stopping_on_error(pool: ProcessPoolExecutor) -> Iterator[None]:
    """Kill ``pool``'s workers if the block raises (Ctrl-C, SIGTERM, a failed task).

    Leaving the pool's ``with`` block otherwise waits for every task submitted, so an interrupted
    command would go on computing, or leave its workers running if killed meanwhile.
    """
    try:
        yield
    except BaseException:
        # ProcessPoolExecutor has no public way to stop running tasks before Python 3.14
        # (terminate_workers); its worker processes are in ``_processes``.
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
