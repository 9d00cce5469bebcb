"""Parameter sweeps: every combination of some scenario settings, resumable, on any executor.

A sweep takes a scenario and a grid, field paths mapped to values
(``matchmaker.tick: [0.25, 1]``, ``arrivals.rate: [2, 4, 8]``). Every combination is a *cell*;
each cell runs for every policy and R replications, on the same replication seeds everywhere
(common random numbers: replication r of every cell and policy sees the same stream seeds).

**Loss-free and resumable.** Each run (a cell, a policy and a replication seed) is identified by
the SHA-256 of its resolved scenario (without the fields that cannot change its result: name,
description, replications, master seed and the sweep itself), its seed and
:data:`lobbysim.RESULTS_VERSION` (bumped whenever results change, so versions never mix).
As soon as a run finishes, its metrics are written to ``runs/<key>.json`` in the sweep's folder:
to a temporary name first, flushed to disk and renamed, so a file either is complete or does not
exist. A run that raises, or whose worker dies, is written to ``failed/<key>.json`` with its cell
and seed and the sweep goes on. Running the same sweep again skips every run with a result and
retries the failed ones; killing the process at any moment loses only the runs in flight.

**Executors.** ``local`` (default): a process pool of ``jobs`` workers, at most ``jobs`` runs in
flight, so that when a worker dies only those runs are suspects; they are then re-run one by one
to find the culprit, and the rest of the sweep goes on. ``dask``: an existing Dask distributed
cluster (``scheduler="tcp://host:port"``); ``dask-local``: a ``distributed.LocalCluster`` of
``jobs`` single-threaded worker processes started for the sweep. Dask is an optional extra
(``pip install 'lobbysim[dask]'``). The workers of a remote cluster need lobbysim (and any
plug-in module the scenario names) installed.

**Outputs** (in the sweep's folder, rewritten atomically at the end of every invocation):
``sweep.yaml`` (the base scenario with its grid, policies and replications: ``lobbysim sweep
sweep.yaml`` repeats it), ``results.csv`` (one row per successful run: ``cell``, the grid keys,
``policy, replication, seed`` and every metric, in a fixed order, so an interrupted and resumed
sweep gives the same bytes as an uninterrupted one), ``failures.csv`` and the trade-off report of
:mod:`lobbysim.reporting.sweep`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import itertools
import json
import os
import shutil
import socket
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from lobbysim import RESULTS_VERSION, __version__
from lobbysim.experiment import replication_seeds, with_policy
from lobbysim.metrics import metric_names
from lobbysim.outputs import creation_problem
from lobbysim.parallel import stopping_on_error
from lobbysim.policies import POLICIES
from lobbysim.registry import PluginError
from lobbysim.runs import RunError, check_scenario, load_run_scenario
from lobbysim.scenario import (
    Scenario,
    ScenarioError,
    SweepConfig,
    folder_label,
    set_path,
)
from lobbysim.validation import check_run_options
from lobbysim.yaml_input import YamlInputError, load_yaml

EXECUTORS = ("local", "dask", "dask-local")
DASK_MISSING = (
    "the dask executors need Dask distributed, which is not installed; "
    "install it with: pip install 'lobbysim[dask]'"
)
MANIFEST = "sweep.json"  # written when a sweep folder is created; identifies its sweep
# A short hash of this host's name, in temporary file names (see ``_abandoned``).
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
# Fields that cannot change one run's result: left out of the run's key.
_NOT_IN_KEY = ("name", "description", "replications", "seed", "sweep")


class SweepError(ValueError):
    """A problem with a sweep's definition or arguments; one line per problem."""


@dataclass(frozen=True)
class Cell:
    """One combination of grid values.

    Attributes:
        number: 1-based, in the order of the Cartesian product (the last key varies fastest).
        values: the grid key paths mapped to this cell's values.
    """

    number: int
    values: Mapping[str, Any]

    def label(self) -> str:
        """Return ``key=value, ...`` for messages."""
        return ", ".join(f"{k}={table_value(v)}" for k, v in self.values.items())

    def table_values(self) -> dict[str, Any]:
        """Return the values as table cells: lists and mappings as compact text."""
        return {k: table_value(v) for k, v in self.values.items()}


def table_value(value: Any) -> Any:
    """Return a grid value as a table cell: scalars as they are, lists and mappings as text."""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, separators=(", ", ": "))
    return value


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: a cell, a policy and a replication.

    Attributes:
        key: the SHA-256 (hex) of the resolved scenario, the seed and the results version.
        cell: the cell.
        policy: the policy's name.
        replication: 1-based replication number; ``seed`` is its seed.
        scenario: the resolved scenario of this cell and policy.
        records_dir: where a scenario with ``records.stream`` writes its records.
    """

    key: str
    cell: Cell
    policy: str
    replication: int
    seed: int
    scenario: Scenario = field(repr=False)
    records_dir: Path | None = None


@dataclass(frozen=True)
class Sweep:
    """A sweep's definition, expanded into its runs."""

    base: Scenario
    grid: Mapping[str, tuple[Any, ...]]
    policies: tuple[str, ...]
    replications: int
    cells: tuple[Cell, ...]
    runs: tuple[SweepRun, ...] = field(repr=False)

    @property
    def grid_keys(self) -> list[str]:
        """Return the swept field paths, in grid order."""
        return list(self.grid)

    def definition(self) -> dict[str, Any]:
        """Return the sweep as scenario data with a ``sweep:`` section (for ``sweep.yaml``)."""
        data = self.base.to_dict()
        data["replications"] = self.replications
        data["sweep"] = {
            "grid": {k: list(v) for k, v in self.grid.items()},
            "policies": list(self.policies),
        }
        return data

    def identity(self) -> str:
        """Return the SHA-256 of the definition without the replications: a sweep folder's
        manifest holds it, so that more replications of the same sweep resume the folder."""
        data = self.definition()
        data.pop("replications")
        return _digest(data)

    def folder_name(self) -> str:
        """Return ``<name>-sweep-<8 hex>``, the same for the same sweep (any replications)."""
        return f"{folder_label(self.base.name)}-sweep-{self.identity()[:8]}"


@dataclass
class SweepOutcome:
    """What one invocation of a sweep did.

    Attributes:
        folder: the sweep's folder.
        total: the sweep's runs.
        skipped: runs whose result was already there.
        ran: runs finished by this invocation.
        failed: runs that failed in this invocation (listed in ``failures``).
        results, failures: the tables written to ``results.csv`` and ``failures.csv``.
    """

    folder: Path
    total: int
    skipped: int
    ran: int
    failed: int
    results: pd.DataFrame
    failures: pd.DataFrame


# --- the definition -------------------------------------------------------------------------------


def parse_grid_option(item: str) -> tuple[str, tuple[Any, ...]]:
    """Parse ``--grid key.path=v1,v2,...``; each value is read as YAML (``[1, 2]`` is a list)."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise SweepError(f"--grid: expected key.path=v1,v2,..., got {item!r}")
    values = []
    for text in _split_top_level(raw):
        try:
            values.append(load_yaml(text))
        except YamlInputError as exc:
            raise SweepError(f"--grid {key}: cannot read the value {text!r}: {exc}") from None
    if len(set(map(repr, values))) != len(values):
        raise SweepError(f"--grid {key}: a value is repeated in {raw!r}")
    return key, tuple(values)


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets or braces."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_key(scenario: Scenario, seed: int) -> str:
    """Return the key of one run: the hash of what determines its result."""
    data = {k: v for k, v in scenario.to_dict().items() if k not in _NOT_IN_KEY}
    return _digest({"scenario": data, "seed": int(seed), "results_version": RESULTS_VERSION})


def build_sweep(
    path: str | Path,
    *,
    grid: Sequence[str] = (),
    policies: Sequence[str] = (),
    replications: int | None = None,
    seed: int | None = None,
    sets: Sequence[str] = (),
) -> Sweep:
    """Load a scenario and expand its sweep into runs, checking every cell first.

    Args:
        path: the scenario file.
        grid: ``key.path=v1,v2`` options; if given they replace the file's ``sweep.grid``.
        policies: the policies (default: the file's ``sweep.policies``, else its own policy).
        replications: per cell and policy (default: the scenario's).
        seed: replaces the scenario's master seed.
        sets: ``key.path=value`` overrides applied before the grid.

    Raises:
        SweepError, ScenarioError, PluginError: every problem found, one line each.
    """
    check_run_options(seed=seed, replications=replications)
    base = load_run_scenario(path, sets)
    if seed is not None:
        base = base.replace(seed=seed)
    config = base.sweep or SweepConfig()
    grid_map: dict[str, tuple[Any, ...]] = dict(config.grid)
    if grid:
        grid_map = {}
        for item in grid:
            key, values = parse_grid_option(item)
            if key in grid_map:
                raise SweepError(f"--grid {key}: given twice")
            grid_map[key] = values
    if not grid_map:
        raise SweepError(
            f"{path}: nothing to sweep: give --grid key.path=v1,v2,... or a sweep: section "
            "with a grid"
        )
    names = list(dict.fromkeys(policies or config.policies or [base.matchmaker.policy.name]))
    for name in names:
        try:
            POLICIES.get(name)
        except PluginError as exc:
            raise SweepError(f"--policies: {exc}") from None
    replications = base.replications if replications is None else replications
    base = base.replace(sweep=None)
    base_data = base.to_dict()

    cells: list[Cell] = []
    scenarios: dict[tuple[int, str], Scenario] = {}
    problems: list[str] = []
    for number, combo in enumerate(itertools.product(*grid_map.values()), start=1):
        cell = Cell(number, dict(zip(grid_map, combo, strict=True)))
        cells.append(cell)
        data = copy.deepcopy(base_data)
        try:
            for key, value in cell.values.items():
                set_path(data, key, value, "--grid")
            scenario = Scenario.from_dict(data)
            for name in names:
                same = name == scenario.matchmaker.policy.name
                scenarios[(number, name)] = scenario if same else with_policy(scenario, name)
            check_scenario(scenario, names)
        except (RunError, ScenarioError, PluginError) as exc:
            problems += [f"cell {number} ({cell.label()}): {line}" for line in str(exc).split("\n")]
    if problems:
        raise SweepError("\n".join(f"{path}: {line}" for line in problems))

    seeds = replication_seeds(base.seed, replications)
    runs = [
        SweepRun(
            run_key(scenarios[(cell.number, name)], seeds[r]),
            cell,
            name,
            r + 1,
            seeds[r],
            scenarios[(cell.number, name)],
        )
        for cell in cells
        for name in names
        for r in range(replications)
    ]
    return Sweep(base, grid_map, tuple(names), replications, tuple(cells), tuple(runs))


# --- running one run ------------------------------------------------------------------------------


def run_one(run: SweepRun) -> dict[str, float]:
    """Run one sweep run and return its metrics (in a worker process)."""
    from lobbysim.simulation import simulate

    return dict(simulate(run.scenario, run.seed, records_dir=run.records_dir).metrics)


def _error_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip()


# --- the store -----------------------------------------------------------------------------------


def check_folder(sweep: Sweep, folder: Path) -> None:
    """Raise SweepError, touching nothing, unless ``folder`` can be this sweep's folder.

    A sweep folder is new, empty, or holds the manifest (``sweep.json``) of the same sweep
    (:meth:`Sweep.identity`): so a folder of other files, or of another sweep, is never written
    into. :func:`claim_folder` then creates it and writes the manifest.
    """
    if folder.exists():
        if not folder.is_dir():
            raise SweepError(f"--out: {folder} exists and is not a folder")
        manifest = folder / MANIFEST
        if manifest.is_file():
            try:
                found = json.loads(manifest.read_text(encoding="utf-8")).get("sweep")
            except (OSError, ValueError, AttributeError):
                found = None
            if found == sweep.identity():
                return
            raise SweepError(
                f"--out: {folder} holds another sweep (a different scenario, grid, policies or "
                "seed); give a new folder, or repeat that sweep with its own sweep.yaml"
            )
        if any(folder.iterdir()):
            raise SweepError(
                f"--out: {folder} holds other files and is not a sweep folder (no {MANIFEST}); "
                "give a new or empty folder"
            )
    else:
        problem = creation_problem(folder)
        if problem is not None:
            raise SweepError(f"--out: {problem}")


def claim_folder(sweep: Sweep, folder: Path) -> None:
    """Create ``folder`` (checked by :func:`check_folder`) with the sweep's manifest."""
    if (folder / MANIFEST).is_file():
        return
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "sweep": sweep.identity(),
        "name": sweep.base.name,
        "lobbysim": __version__,
        "results_version": RESULTS_VERSION,
    }
    _write_text(folder / MANIFEST, json.dumps(record, indent=1) + "\n")


def _tmp_name(target: Path) -> Path:
    """Return the temporary name a file is written under before it is renamed to ``target``."""
    return target.with_name(f".tmp-{_HOST}-{os.getpid()}-{target.name}")


def _abandoned(tmp: Path) -> bool:
    """Whether a temporary file's writer is gone: a process of this host that has ended.

    Another process's file, still being written (a second invocation of the same sweep), and
    files of other hosts sharing the folder are left alone; a left-over one is ignored anyway.
    """
    parts = tmp.name.split("-", 3)
    if len(parts) != 4 or parts[1] != _HOST or not parts[2].isdigit():
        return False
    try:
        os.kill(int(parts[2]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, but not ours to signal
        return False
    return False


class RunStore:
    """The per-run result files of a sweep folder: ``runs/`` and ``failed/``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.done_dir = folder / "runs"
        self.failed_dir = folder / "failed"
        self.done_dir.mkdir(parents=True, exist_ok=True)
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        for leftover in itertools.chain(
            self.done_dir.glob(".tmp-*"), self.failed_dir.glob(".tmp-*")
        ):
            if _abandoned(leftover):  # a killed writer's partial file
                leftover.unlink(missing_ok=True)

    def done_keys(self) -> set[str]:
        """Return the keys of every finished run (not a killed writer's ``.tmp-`` file)."""
        return {p.stem for p in self.done_dir.glob("[!.]*.json")}

    def write(self, run: SweepRun, metrics: Mapping[str, float] | None, error: str | None) -> None:
        """Write a run's result (or its failure) atomically and durably."""
        record = {
            "key": run.key,
            "cell": run.cell.number,
            "grid": dict(run.cell.values),
            "policy": run.policy,
            "replication": run.replication,
            "seed": run.seed,
        }
        if error is None:
            record["metrics"] = dict(metrics or {})
            target = self.done_dir / f"{run.key}.json"
        else:
            record["error"] = error
            target = self.failed_dir / f"{run.key}.json"
        tmp = _tmp_name(target)
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(record, fh, sort_keys=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        if error is None:
            (self.failed_dir / target.name).unlink(missing_ok=True)

    def read(self, key: str, failed: bool = False) -> dict[str, Any] | None:
        """Return a run's record, or None if there is none."""
        path = (self.failed_dir if failed else self.done_dir) / f"{key}.json"
        if not path.exists():
            return None
        with open(path, encoding="utf-8") as fh:
            record: dict[str, Any] = json.load(fh)
        return record


# --- executors -----------------------------------------------------------------------------------

OnDone = Callable[[SweepRun, Mapping[str, float] | None, str | None], None]


def run_local(runs: Sequence[SweepRun], jobs: int, on_done: OnDone) -> None:
    """Run on a local process pool, at most ``jobs`` in flight; isolate a worker's death."""
    if jobs == 1:
        for run in runs:
            try:
                metrics = run_one(run)
            except Exception as exc:  # reported with its cell and seed
                on_done(run, None, _error_text(exc))
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
    with ProcessPoolExecutor(max_workers=jobs) as pool, stopping_on_error(pool):
        flight: dict[Future[dict[str, float]], SweepRun] = {}
        while pending or flight:
            while pending and len(flight) < jobs:
                following = pending[-1]
                try:
                    future = pool.submit(run_one, following)
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
                    on_done(run, None, _error_text(exc))
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
                    dashboard_address=None,
                    silence_logs=50,
                )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise SweepError(f"--scheduler: cannot reach {scheduler}: {exc}") from None

    def __enter__(self) -> DaskSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def run(self, runs: Sequence[SweepRun], on_done: OnDone) -> None:
        """Run on the cluster, calling ``on_done`` here as each run finishes."""
        from distributed import as_completed

        futures = {
            self.client.submit(run_one, run, key=f"lobbysim-run-{run.key}", pure=False): run
            for run in runs
        }
        for future in as_completed(futures):
            run = futures[future]
            if future.status == "finished":
                on_done(run, future.result(), None)
            else:
                error = future.exception()
                on_done(run, None, _error_text(error) if error is not None else future.status)
            future.release()


# --- the sweep ---------------------------------------------------------------------------------


def run_sweep(
    sweep: Sweep,
    folder: Path,
    *,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    write_report: bool = True,
) -> SweepOutcome:
    """Run every run of ``sweep`` that ``folder`` has no result for, then write the tables.

    Args:
        sweep: from :func:`build_sweep`.
        folder: the sweep's folder (created if needed; an existing one is resumed).
        executor: ``local``, ``dask`` (needs ``scheduler``) or ``dask-local``.
        jobs: local worker processes, or the LocalCluster's workers.
        scheduler: a Dask scheduler address, for ``executor="dask"``.
        progress: called as ``progress(done, total)`` (runs already there count as done).
        write_report: also write the trade-off report.
    """
    if executor not in EXECUTORS:
        raise SweepError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "dask" and not scheduler:
        raise SweepError("--executor dask needs --scheduler tcp://host:port")
    if scheduler and executor != "dask":
        raise SweepError(f"--scheduler is for --executor dask, not {executor}")
    check_run_options(jobs=jobs)
    check_folder(sweep, folder)
    with contextlib.ExitStack() as stack:
        session = None
        if executor != "local":
            session = stack.enter_context(DaskSession(scheduler, jobs))
        claim_folder(sweep, folder)
        store = RunStore(folder)
        _write_text(folder / "sweep.yaml", yaml.safe_dump(sweep.definition(), sort_keys=False))
        done = store.done_keys()
        todo = [_with_records(run, folder) for run in sweep.runs if run.key not in done]
        skipped = len(sweep.runs) - len(todo)
        counts = {"ran": 0, "failed": 0}
        total = len(sweep.runs)
        if progress is not None:
            progress(skipped, total)

        def on_done(run: SweepRun, metrics: Mapping[str, float] | None, error: str | None) -> None:
            store.write(run, metrics, error)
            counts["failed" if error is not None else "ran"] += 1
            if progress is not None:
                progress(skipped + counts["ran"] + counts["failed"], total)

        if session is not None:
            session.run(todo, on_done)
        elif todo:
            run_local(todo, jobs, on_done)
    results, failures = collect(sweep, store)
    _write_tables(sweep, folder, results, failures, write_report)
    return SweepOutcome(folder, total, skipped, counts["ran"], counts["failed"], results, failures)


def _with_records(run: SweepRun, folder: Path) -> SweepRun:
    """Give a run of a streaming scenario its records folder: ``records/<key>``."""
    if not run.scenario.records.stream:
        return run
    return dataclasses.replace(run, records_dir=(folder / "records" / run.key).resolve())


def collect(sweep: Sweep, store: RunStore) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the results and failures tables of ``sweep`` from the store, in sweep order."""
    rows, failed = [], []
    for run in sweep.runs:
        ids = {"cell": run.cell.number, **run.cell.table_values()}
        record = store.read(run.key)
        if record is not None:
            rows.append(
                {
                    **ids,
                    "policy": run.policy,
                    "replication": run.replication,
                    "seed": run.seed,
                    **record["metrics"],
                }
            )
            continue
        record = store.read(run.key, failed=True)
        if record is not None:
            failed.append(
                {
                    **ids,
                    "policy": run.policy,
                    "replication": run.replication,
                    "seed": run.seed,
                    "error": record["error"],
                }
            )
    id_columns = ["cell", *sweep.grid_keys, "policy", "replication", "seed"]
    metric_order = _metric_order(sweep, rows)
    results = pd.DataFrame(rows, columns=[*id_columns, *metric_order])
    failures = pd.DataFrame(failed, columns=[*id_columns, "error"])
    return results, failures


def _metric_order(sweep: Sweep, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Return the metric columns: lobbysim's order, then any others in first-seen order."""
    raters = [sweep.base.raters.driver.name, *(s.name for s in sweep.base.raters.shadows)]
    known = metric_names(raters)
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen[key] = None
    ids = {"cell", *sweep.grid_keys, "policy", "replication", "seed"}
    extra = [k for k in seen if k not in ids and k not in known]
    return [m for m in known if m in seen] + extra


def _write_text(path: Path, text: str) -> None:
    tmp = _tmp_name(path)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_tables(
    sweep: Sweep, folder: Path, results: pd.DataFrame, failures: pd.DataFrame, report: bool
) -> None:
    _write_text(folder / "results.csv", results.to_csv(index=False))
    _write_text(folder / "failures.csv", failures.to_csv(index=False))
    if not report:
        return
    from lobbysim.reporting.sweep import write_sweep_report

    tmp = folder / f".report-tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        written = write_sweep_report(
            results,
            failures,
            sweep.grid_keys,
            tmp,
            title=f"Sweep: {sweep.base.name}",
            driver=sweep.base.raters.driver.name,
            scenario_line=_scenario_line(sweep),
        )
        for path in written:
            os.replace(path, folder / path.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _scenario_line(sweep: Sweep) -> str:
    return (
        f"{len(sweep.cells)} cells x {len(sweep.policies)} policies x "
        f"{sweep.replications} replications, common random numbers; {sweep.base.game.mode}, "
        f"{sweep.base.horizon:g} minutes"
    )


def default_folder(sweep: Sweep, base: Path = Path("outputs")) -> Path:
    """Return the default folder: the same for the same sweep, so re-running resumes it."""
    return base / sweep.folder_name()
