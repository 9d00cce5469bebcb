"""Running independent tasks in worker processes, with progress, in a fixed result order.

Replications, policy comparisons and the paper study's blocks are independent: :func:`run_tasks`
runs them in this process (``jobs == 1``) or on a local process pool, reports progress as tasks
finish, and returns the results in task order, so that the outcome never depends on the number of
workers or on which worker finished first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def run_tasks(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    """Return ``[fn(task) for task in tasks]``, computed on ``jobs`` worker processes.

    Args:
        fn: a picklable (module-level) function.
        tasks: its arguments, one task each.
        jobs: worker processes; 1 runs everything in this process.
        progress: called as ``progress(done, total)`` each time a task finishes.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    total = len(tasks)
    if jobs == 1 or total <= 1:
        results = []
        for i, task in enumerate(tasks):
            results.append(fn(task))
            if progress is not None:
                progress(i + 1, total)
        return results
    with ProcessPoolExecutor(max_workers=min(jobs, total)) as pool, stopping_on_error(pool):
        futures = [pool.submit(fn, task) for task in tasks]
        for i, _ in enumerate(as_completed(futures)):
            if progress is not None:
                progress(i + 1, total)
        return [future.result() for future in futures]


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
