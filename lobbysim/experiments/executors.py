"""Where a sweep's runs execute: a local process pool or a Dask cluster.

``local`` (default): a process pool of ``jobs`` workers, at most ``jobs`` runs in flight, so that
when a worker dies only those runs are suspects; they are then re-run one by one to find the
culprit, and the rest of the sweep goes on. ``dask``: an existing Dask distributed cluster
(``scheduler="tcp://host:port"``); ``dask-local``: a ``distributed.LocalCluster`` of ``jobs``
single-threaded worker processes started for the sweep. Dask is an optional extra
(``pip install 'lobbysim[dask]'``). The workers of a remote cluster need lobbysim (and any plug-in
module the scenario names) installed. Each finished run is handed to ``on_done(run, metrics,
error)`` at once, so the caller stores it before the next one finishes. A full disk or an
output that cannot be written (:func:`lobbysim.records.outputs.storage_problem`) is not a run's
failure:
it stops the sweep (every run would fail the same way), which the next invocation resumes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from lobbysim.experiments.sweeps import SweepError, SweepRun, error_text, run_one
from lobbysim.records.outputs import storage_problem
from lobbysim.running.workers import collecting, stopping_on_error, worker_pool

EXECUTORS = ("local", "dask", "dask-local")
DASK_MISSING = (
    "the dask executors need Dask distributed, which is not installed; "
    "install it with: pip install 'lobbysim[dask]'"
)
#: Called as each run finishes: ``on_done(run, metrics, None)`` or ``on_done(run, None, error)``.
OnDone = Callable[[SweepRun, Mapping[str, float] | None, str | None], None]


def run_collected(run: SweepRun) -> dict[str, float]:
    """Return :func:`~lobbysim.experiments.sweeps.run_one`'s metrics of ``run`` (in a worker:
    a run keeps nothing else), and collect the garbage its lobby leaves
    (:func:`lobbysim.running.workers.collecting`), so that a worker's memory does not grow with the
    runs it has run."""
    with collecting():
        return run_one(run)


def run_local(runs: Sequence[SweepRun], jobs: int, on_done: OnDone) -> None:
    """Run on a local process pool, at most ``jobs`` in flight; isolate a worker's death."""
    if jobs == 1:
        for run in runs:
            try:
                metrics = run_collected(run)
            except Exception as exc:  # reported with its cell and seed
                if storage_problem(exc) is not None:
                    raise
                on_done(run, None, error_text(exc))
            else:
                on_done(run, metrics, None)
        return
    pending = list(reversed(runs))  # pop() from the end keeps the sweep's order
    suspects: list[SweepRun] = []
    while pending:
        suspects = _pool_pass(pending, jobs, on_done)
        # A worker died: any run then in flight may be the cause; run each alone to find it.
        for run in suspects:
            if _pool_pass([run], 1, on_done):
                on_done(run, None, "the worker process running it died (e.g. killed or crashed)")


def _pool_pass(pending: list[SweepRun], jobs: int, on_done: OnDone) -> list[SweepRun]:
    """Run from ``pending`` until it is empty or the pool breaks; return the runs in flight then."""
    with worker_pool(jobs) as pool, stopping_on_error(pool):
        flight: dict[Future[dict[str, float]], SweepRun] = {}
        while pending or flight:
            while pending and len(flight) < jobs:
                following = pending[-1]
                try:
                    future = pool.submit(run_collected, following)
                except BrokenProcessPool:  # a worker died since the last check
                    return list(flight.values())
                flight[future] = pending.pop()
            finished, _ = wait(flight, return_when=FIRST_COMPLETED)
            broken = False
            for future in finished:
                run = flight.pop(future)
                try:
                    metrics = future.result()
                except BrokenProcessPool:
                    broken = True
                    flight[future] = run  # a suspect: re-run alone by the caller
                except Exception as exc:  # reported with its cell and seed
                    if storage_problem(exc) is not None:
                        raise
                    on_done(run, None, error_text(exc))
                else:
                    on_done(run, metrics, None)
            if broken:
                return list(flight.values())
    return []


class DaskSession:
    """A Dask client: to ``scheduler``'s cluster, or to a LocalCluster of ``jobs`` workers.

    Connecting is the first thing a Dask sweep does, so that an unreachable scheduler is reported
    before anything is written. Use as a context manager; it closes what it opened.
    """

    def __init__(self, scheduler: str | None, jobs: int) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise SweepError(DASK_MISSING) from None
        self.cluster: Any = None
        if scheduler is None:
            # One run per worker at a time (no run queued behind another on a worker, where
            # the worker's death would make it a suspect too); a run that kills its worker is
            # retried once, then reported (KilledWorker).
            settings = {
                "distributed.scheduler.allowed-failures": 1,
                "distributed.scheduler.worker-saturation": 1.0,
            }
            with dask.config.set(settings):
                self.cluster = LocalCluster(
                    n_workers=jobs,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # a free port: never a clash with another cluster
                    silence_logs=50,
                )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise SweepError(f"--scheduler: cannot reach {scheduler}: {exc}") from None

    def worker_count(self, default: int) -> int:
        """Return the cluster's workers now (``default`` if the scheduler does not say)."""
        try:
            workers = self.client.scheduler_info().get("workers", {})
        except Exception:  # only an estimate of the time left hangs on it
            return default
        return max(len(workers), 1) if workers else default

    def __enter__(self) -> DaskSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def run(self, runs: Sequence[SweepRun], on_done: OnDone) -> None:
        """Run on the cluster, calling ``on_done`` here as each run finishes.

        A run given up with ``KilledWorker`` (workers died while it was on them) may only have
        been near the run that killed them: on a loaded machine the scheduler can still place
        a run on a worker that is dying, and a finished run's result can be lost with a worker
        that dies before it is gathered. Each such run is then run again alone, and reported
        only if it fails again, as the local pool isolates a worker's death.
        """
        from distributed.scheduler import KilledWorker

        suspects = self._run_all(runs, "", on_done, KilledWorker if len(runs) > 1 else None)
        for run in suspects:
            self._run_all([run], "-alone", on_done, None)

    def _run_all(
        self, runs: Sequence[SweepRun], suffix: str, on_done: OnDone, suspect: type | None
    ) -> list[SweepRun]:
        """Submit ``runs`` and report each as it completes; return, unreported, those that
        failed with the ``suspect`` error."""
        from distributed import as_completed

        futures = {
            self.client.submit(
                run_collected, run, key=f"lobbysim-run-{run.key}{suffix}", pure=False
            ): run
            for run in runs
        }
        suspects: list[SweepRun] = []
        for future in as_completed(futures):
            run = futures[future]
            error: BaseException | None
            if future.status == "finished":
                try:  # its result may be lost with a worker that dies before it is gathered
                    metrics = future.result()
                except (Exception, asyncio.CancelledError) as exc:
                    error = exc
                else:
                    on_done(run, metrics, None)
                    future.release()
                    continue
            else:
                error = future.exception()
            # the cluster's failures, not the run's: a killed worker, a lost or cancelled result
            cluster = error is None or isinstance(
                error, (asyncio.CancelledError, concurrent.futures.CancelledError)
            )
            if error is not None and storage_problem(error) is not None:
                raise error
            if suspect is not None and (cluster or isinstance(error, suspect)):
                suspects.append(run)
            else:
                on_done(run, None, error_text(error) if error is not None else future.status)
            future.release()
        return [run for run in runs if run in suspects]  # in the sweep's order
