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

**Executors** (:mod:`lobbysim.experiments.executors`): ``local`` (a process pool, default),
``dask`` (an existing Dask cluster) or ``dask-local`` (a LocalCluster started for the sweep).
The definition of a sweep and its run keys are in :mod:`lobbysim.experiments.sweeps`, the store
in :mod:`lobbysim.experiments.store`; this module is the ``sweep`` command: it builds a sweep from
a scenario file and a grid, runs what is missing and writes the tables and the report.

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
import itertools
import math
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from lobbysim.commands.run_scenario import RunError, check_scenario
from lobbysim.experiments.costs import whole_costs
from lobbysim.experiments.executors import EXECUTORS, DaskSession, run_local
from lobbysim.experiments.replications import replication_seeds, with_policy
from lobbysim.experiments.store import RunStore, check_folder, claim_folder, tmp_name, write_text
from lobbysim.experiments.sweeps import (
    Cell,
    Sweep,
    SweepError,
    SweepOutcome,
    SweepRun,
    run_key,
)
from lobbysim.records.files import format_problem
from lobbysim.registry import PluginError
from lobbysim.running.progress import ProgressLike, as_progress
from lobbysim.running.time_left import RemainingTime
from lobbysim.scenario import (
    PluginSpec,
    Scenario,
    ScenarioError,
    SweepConfig,
    set_path,
)
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.loading import REFERENCE_KEYS, TEAM_KEYS, key_in, load_run_scenario
from lobbysim.scenario.plugin_fields import policy_problems
from lobbysim.scenario.specs import resolve_policies, spec_label, split_specs
from lobbysim.stats.metrics import metric_names
from lobbysim.validation import check_run_options
from lobbysim.yaml_input import YamlInputError, load_yaml


def parse_grid_option(item: str) -> tuple[str, tuple[Any, ...]]:
    """Parse ``--grid key.path=v1,v2,...``; each value is read as YAML (``[1, 2]`` is a list)."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise SweepError(f"--grid: expected key.path=v1,v2,..., got {item!r}")
    values = []
    for text in split_specs(raw):
        try:
            values.append(load_yaml(text))
        except YamlInputError as exc:
            raise SweepError(f"--grid {key}: cannot read the value {text!r}: {exc}") from None
    if len(set(map(repr, values))) != len(values):
        raise SweepError(f"--grid {key}: a value is repeated in {raw!r}")
    return key, tuple(values)


def build_sweep(
    path: str | Path | Scenario,
    *,
    grid: Sequence[str] | Mapping[str, Any] = (),
    policies: Sequence[str | PluginSpec | Mapping[str, Any]] = (),
    replications: int | None = None,
    seed: int | None = None,
    sets: Sequence[str] = (),
    progress: ProgressLike = None,
) -> Sweep:
    """Load a scenario and expand its sweep into runs, checking every cell first.

    Args:
        path: the scenario file, a bundled scenario's name, or a :class:`Scenario`.
        grid: ``key.path=v1,v2`` options, or a mapping of field paths (dotted, or nested
            mappings) to lists of values; if given it replaces the file's ``sweep.grid``.
        policies: the policies, names or specs with parameters (:mod:`lobbysim.scenario.specs`;
            default: the file's ``sweep.policies``, else its own policy). Each goes by its label
            in the tables; the scenario's own policy is each cell's own.
        replications: per cell and policy (default: the scenario's).
        seed: replaces the scenario's master seed.
        sets: ``key.path=value`` overrides applied before the grid.
        progress: a :class:`lobbysim.running.progress.Progress`: the cells being checked.

    Raises:
        SweepError, ScenarioError, PluginError: every problem found, one line each.
    """
    check_run_options(seed=seed, replications=replications)
    reload: Callable[[Mapping[str, Any]], Scenario] | None = None
    if isinstance(path, Scenario):
        base = as_scenario(path, list(sets)) if sets else path
        path = f"scenario {path.name!r}"
    else:
        base = load_run_scenario(path, sets)
        file = path

        def reload(values: Mapping[str, Any]) -> Scenario:
            # a cell's rule set (matchmaker.rules.flexmatch) is read from the file's data
            loaded = load_run_scenario(file, sets, values=values).replace(sweep=None)
            return loaded if seed is None else loaded.replace(seed=seed)

    if seed is not None:
        base = base.replace(seed=seed)
    config = base.sweep or SweepConfig()
    grid_map = _grid(path, grid, config)
    where = "--policies" if policies else "sweep.policies"
    own = base.matchmaker.policy
    try:
        specs = resolve_policies(own, policies or config.policies or [own], where)
    except ScenarioError as exc:
        raise SweepError(str(exc)) from None
    problems = policy_problems(specs, where)
    if problems:
        raise SweepError("\n".join(problems))
    labelled = {spec_label(spec): spec for spec in specs}
    names = list(labelled)
    replications = base.replications if replications is None else replications
    base = base.replace(sweep=None)
    with as_progress(progress).stage("sweep set-up", "cells") as update:
        cells, scenarios = _cells(path, base, grid_map, labelled, update, reload)
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


def _grid(
    path: str | Path, grid: Sequence[str] | Mapping[str, Any], config: SweepConfig
) -> dict[str, tuple[Any, ...]]:
    """Return the grid: the ``--grid`` options (or a mapping) if any, else the file's; refuse an
    empty one."""
    grid_map: dict[str, tuple[Any, ...]] = dict(config.grid)
    if isinstance(grid, Mapping):
        grid_map = grid_mapping(grid) if grid else grid_map
    elif grid:
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
    return grid_map


def grid_mapping(grid: Mapping[str, Any], prefix: str = "") -> dict[str, tuple[Any, ...]]:
    """Return a grid given as a mapping: field paths, dotted or as nested mappings, to
    non-empty lists of values (``{"matchmaker": {"tick": [0.25, 1]}, "arrivals.rate": [2, 4]}``).

    Raises:
        SweepError: a key that is not a field name, or values that are not a non-empty list.
    """
    out: dict[str, tuple[Any, ...]] = {}
    for key, values in grid.items():
        if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
            raise SweepError(f"grid: expected field paths as keys, got {key!r}")
        path = f"{prefix}{key}"
        if isinstance(values, Mapping):
            out.update(grid_mapping(values, f"{path}."))
            continue
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise SweepError(f"grid {path}: expected a non-empty list of values, got {values!r}")
        if len(set(map(repr, values))) != len(values):
            raise SweepError(f"grid {path}: a value is repeated in {list(values)!r}")
        out[path] = tuple(values)
    return out


def _cells(
    path: str | Path,
    base: Scenario,
    grid_map: Mapping[str, Sequence[Any]],
    specs: Mapping[str, PluginSpec],
    progress: Callable[..., None],
    reload: Callable[[Mapping[str, Any]], Scenario] | None = None,
) -> tuple[list[Cell], dict[tuple[int, str], Scenario]]:
    """Return the cells of the grid and each cell's scenario per policy (by label), every cell
    checked; ``progress(done, total)`` after each cell. A cell that sets a FlexMatch rule set's
    reference (``matchmaker.rules.flexmatch``, with the game's team fields) starts from
    ``reload(those values)``, the scenario file read with them, instead of ``base``.

    Raises:
        SweepError: one line per problem, each naming its cell (a records format that cannot be
            written here: one line for the sweep).
    """
    unwritable = format_problem(base.records.format)
    if unwritable is not None and base.records.format not in grid_map.get("records.format", ()):
        raise SweepError(f"{path}: {unwritable}")
    base_data = base.to_dict()
    own = base.matchmaker.policy
    total = math.prod(len(values) for values in grid_map.values())
    cells: list[Cell] = []
    scenarios: dict[tuple[int, str], Scenario] = {}
    problems: list[str] = []
    for number, combo in enumerate(itertools.product(*grid_map.values()), start=1):
        cell = Cell(number, dict(zip(grid_map, combo, strict=True)))
        cells.append(cell)
        data = copy.deepcopy(base_data)
        values = cell.values
        try:
            if any(key_in(key, REFERENCE_KEYS) for key in values):
                if reload is None:
                    raise ScenarioError(
                        "--grid matchmaker.rules.flexmatch: a grid over rule sets needs the "
                        "scenario's file"
                    )
                ahead = {k: v for k, v in values.items() if key_in(k, REFERENCE_KEYS + TEAM_KEYS)}
                data = reload(ahead).to_dict()
                values = {k: v for k, v in values.items() if k not in ahead}
            for key, value in values.items():
                set_path(data, key, value, "--grid")
            scenario = Scenario.from_dict(data)
            # the scenario's own policy is the cell's (a grid may set its parameters), unless
            # the grid replaces it with another policy
            same = scenario.matchmaker.policy.name == own.name
            variants = {
                label: scenario if same and spec == own else with_policy(scenario, spec)
                for label, spec in specs.items()
            }
            scenarios.update({(number, label): s for label, s in variants.items()})
            check_scenario(scenario, variants=variants, held_runs=0)  # a sweep keeps metrics
        except (RunError, ScenarioError, PluginError) as exc:
            problems += [f"cell {number} ({cell.label()}): {line}" for line in str(exc).split("\n")]
        progress(number, total)
    if problems:
        raise SweepError("\n".join(f"{path}: {line}" for line in problems))
    return cells, scenarios


#: The protocols of a Dask scheduler's address (``tcp://`` when none is given).
SCHEDULER_PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")
_SCHEDULER_FORM = "expected tcp://host:port, e.g. tcp://localhost:8786"


def scheduler_problem(address: str) -> str | None:
    """Return what is wrong with a Dask scheduler address, without connecting, or None.

    An address is ``[protocol://]host:port`` (the protocol one of :data:`SCHEDULER_PROTOCOLS`,
    ``tcp`` by default; an IPv6 host in brackets, ``tcp://[::1]:8786``), as Dask reads it; a
    missing port, host or a port outside 1..65535 is one line naming the address.
    """
    from urllib.parse import urlsplit

    text = address.strip()
    protocol = text.partition("://")[0] if "://" in text else "tcp"
    if protocol not in SCHEDULER_PROTOCOLS:
        return (
            f"--scheduler: {address!r} has the protocol '{protocol}', not one of "
            f"{', '.join(SCHEDULER_PROTOCOLS)}; {_SCHEDULER_FORM}"
        )
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port
    except ValueError:
        return f"--scheduler: {address!r} has no valid port (1 to 65535); {_SCHEDULER_FORM}"
    if not parts.hostname:
        return f"--scheduler: {address!r} has no host; {_SCHEDULER_FORM}"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return f"--scheduler: {address!r} is not host:port; {_SCHEDULER_FORM}"
    if port is None:
        return f"--scheduler: {address!r} has no port; {_SCHEDULER_FORM}"
    if not 0 < port < 65536:
        return f"--scheduler: {address!r} has no valid port (1 to 65535); {_SCHEDULER_FORM}"
    return None


def check_executor(executor: str, scheduler: str | None) -> None:
    """Check ``--executor`` and ``--scheduler`` before anything runs or connects.

    Raises:
        SweepError: an unknown executor, ``dask`` without a scheduler, a scheduler for another
            executor, or a scheduler address that is not ``[protocol://]host:port``.
    """
    if executor not in EXECUTORS:
        raise SweepError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "dask" and not scheduler:
        raise SweepError("--executor dask needs --scheduler tcp://host:port")
    if scheduler and executor != "dask":
        raise SweepError(f"--scheduler is for --executor dask, not {executor}")
    problem = scheduler_problem(scheduler) if scheduler else None
    if problem is not None:
        raise SweepError(problem)


def run_sweep(
    sweep: Sweep,
    folder: Path,
    *,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: ProgressLike = None,
    write_report: bool = True,
) -> SweepOutcome:
    """Run every run of ``sweep`` that ``folder`` has no result for, then write the tables.

    Args:
        sweep: from :func:`build_sweep`.
        folder: the sweep's folder (created if needed; an existing one is resumed).
        executor: ``local``, ``dask`` (needs ``scheduler``) or ``dask-local``.
        jobs: local worker processes, or the LocalCluster's workers.
        scheduler: a Dask scheduler address, for ``executor="dask"``.
        progress: a :class:`lobbysim.running.progress.Progress` (the runs, then the tables and the
            report), or a callback ``progress(done, total)`` of the runs (runs already there
            count as done).
        write_report: also write the trade-off report.
    """
    display = as_progress(progress)
    check_executor(executor, scheduler)
    check_run_options(jobs=jobs)
    check_folder(sweep, folder)
    with contextlib.ExitStack() as stack:
        session = None
        if executor != "local":
            session = stack.enter_context(DaskSession(scheduler, jobs))
        claim_folder(sweep, folder)
        store = RunStore(folder)
        write_text(folder / "sweep.yaml", yaml.safe_dump(sweep.definition(), sort_keys=False))
        done = store.done_keys()
        todo = [_with_records(run, folder) for run in sweep.runs if run.key not in done]
        skipped = len(sweep.runs) - len(todo)
        counts = {"ran": 0, "failed": 0}
        total = len(sweep.runs)
        # the time left, from the runs of this invocation (not those already done): each run
        # as its cell's and policy's expected work, heard as it ends
        estimate = RemainingTime()
        kinds = [(f"cell {run.cell.number}: {run.policy}", run.scenario) for run in todo]
        workers = jobs if session is None else session.worker_count(jobs)
        estimate.plan(whole_costs(kinds), workers)
        order: dict[str, list[int]] = {}
        for index, run in enumerate(todo):
            order.setdefault(run.key, []).append(index)
        stage = display.stage("sweep", "runs", total, estimate=estimate.left)
        progress = stack.enter_context(stage)
        progress(skipped, total)

        def on_done(run: SweepRun, metrics: Mapping[str, float] | None, error: str | None) -> None:
            store.write(run, metrics, error)
            counts["failed" if error is not None else "ran"] += 1
            if order.get(run.key):
                estimate.finish(order[run.key].pop(0))
            progress(skipped + counts["ran"] + counts["failed"], total)

        if session is not None:
            session.run(todo, on_done)
        elif todo:
            run_local(todo, jobs, on_done)
    with display.stage("sweep tables and report", "steps", 2) as update:
        results, failures = collect(sweep, store)
        update(1)
        _write_tables(sweep, folder, results, failures, write_report)
        update(2)
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


def _scenario_line(sweep: Sweep) -> str:
    return (
        f"{len(sweep.cells)} cells x {len(sweep.policies)} policies x "
        f"{sweep.replications} replications, common random numbers; {sweep.base.game.mode}, "
        f"{sweep.base.horizon:g} minutes"
    )


def _write_tables(
    sweep: Sweep, folder: Path, results: pd.DataFrame, failures: pd.DataFrame, report: bool
) -> None:
    write_text(folder / "results.csv", results.to_csv(index=False))
    write_text(folder / "failures.csv", failures.to_csv(index=False))
    if not report:
        return
    from lobbysim.reporting.sweep import write_sweep_report

    tmp = tmp_name(folder / "report")  # removed by the next sweep if this one is killed
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
            tick=float(sweep.base.matchmaker.tick),
        )
        for path in written:
            os.replace(path, folder / path.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def default_folder(sweep: Sweep, base: Path = Path("outputs")) -> Path:
    """Return the default folder: the same for the same sweep, so re-running resumes it."""
    return base / sweep.folder_name()
