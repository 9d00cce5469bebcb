"""lobbysim from Python, shaped for a notebook: ``import lobbysim`` and go.

Every function takes the scenario as a YAML file's path, a bundled scenario's name
(``"quickstart"``), plain data (a dict, as in a YAML file) or a :class:`Scenario`, and overrides
as nested dicts (``{"matchmaker": {"tick": 1.0}}``), dotted keys (``{"matchmaker.tick": 1.0}``)
or, in :func:`simulate` and :func:`load_scenario`, keyword arguments (``horizon=120``;
``matchmaker__tick=1.0`` for a dotted path), merged onto the scenario as ``--set`` does
(:mod:`lobbysim.scenario.inputs`)::

    import lobbysim

    run = lobbysim.simulate("quickstart", seed=1, horizon=120)       # one replication
    run.metrics["draw_prob_true_mean"], run.games.head()
    result = lobbysim.compare(
        "quickstart", ["draw_chance", "knowledge_gradient(gamma=0.95)"], replications=3
    )
    result                                    # the headline, as `lobbysim compare` prints it
    result.summary, result.differences, result.replications          # pandas frames
    folder = lobbysim.load_run("outputs/quickstart-...")              # a finished run's folder

* :func:`simulate`: one replication, a :class:`~lobbysim.experiments.SimulationResult` (record
  frames and metrics).
* :func:`compare`: replications of several policies on common random numbers, an
  :class:`~lobbysim.experiments.ExperimentResult` (``summary``, ``differences``, ``metrics``);
  with ``out`` or ``report=True`` it also writes the folder and report of ``lobbysim compare``.
  Policies are names or specs with parameters (:mod:`lobbysim.scenario.specs`); by default the
  scenario's ``compare:`` section, else its own policy and the bounds, as the command does.
* :func:`sweep`: a grid of settings (a dict of field paths to lists of values) for several
  policies, resumable, as ``lobbysim sweep``: a :class:`~lobbysim.experiments.sweeps.SweepOutcome`.
* :func:`load_scenario`: the scenario itself, checked; :func:`load_run`: a run folder written by
  ``lobbysim run`` or ``compare`` (or :func:`compare`) read back as a :class:`RunFolder`.

A result shows as its answer, not its frames: at the prompt a few lines (a run's key metrics;
a comparison's headline, as ``lobbysim compare`` prints it), in a notebook a small HTML view
(the headline and the key metrics' means with 95% intervals). ``replications`` is the
per-replication table everywhere (:func:`compare`'s result and :func:`load_run`'s folder);
``metrics`` is kept (on a comparison the same frame; on :func:`simulate`'s result the dict of the
run's metrics, ``metrics_series`` as a pandas Series, ``metrics_table`` with units). The results
are the notebook views of :mod:`lobbysim.reporting.notebook`. The examples in the functions'
docstrings run as tests (tests/reporting/test_notebook_api.py).

Progress (:mod:`lobbysim.running.progress`) shows as a widget bar in a Jupyter notebook
(``tqdm.auto``),
a bar on a terminal and a plain line every 10 s otherwise; ``progress=False`` turns it off. It
never changes a result.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lobbysim.commands.run import AUTO, auto_rule, run_in_memory
from lobbysim.commands.run import run as run_command
from lobbysim.commands.run_folder import RunFolder, load_run
from lobbysim.commands.run_scenario import RunError, api_rule_variants, compare_policies
from lobbysim.commands.sweep import build_sweep, default_folder, run_sweep
from lobbysim.experiments.costs import run_cost
from lobbysim.experiments.sequential import Rule
from lobbysim.experiments.simulation import simulate as simulate_one
from lobbysim.experiments.sweeps import SweepOutcome
from lobbysim.reporting.notebook import (
    NotebookExperimentResult,
    NotebookSimulationResult,
)
from lobbysim.running.progress import CallbackProgress, Progress
from lobbysim.running.time_left import RemainingTime
from lobbysim.scenario import PluginSpec, Scenario
from lobbysim.scenario.inputs import Overrides, as_scenario
from lobbysim.scenario.loading import load_run_scenario
from lobbysim.scenario.specs import spec_label, split_specs
from lobbysim.validation import MAX_REPLICATIONS, MAX_STUDY_SIMULATIONS, ScenarioError, is_whole

__all__ = [
    "RunFolder",
    "Scenario",
    "compare",
    "load_run",
    "load_scenario",
    "simulate",
    "sweep",
]

PolicyList = str | Sequence[str | PluginSpec | Mapping[str, Any]] | None
ProgressOption = bool | Progress | Callable[[int, int], None] | None


def _display(progress: ProgressOption) -> Progress:
    """Return the progress display the ``progress`` argument asks for."""
    if progress is None or progress is True:
        return Progress(notebook=True)
    if progress is False:
        return Progress(enabled=False)
    if isinstance(progress, Progress):
        return progress
    if callable(progress):
        return CallbackProgress(progress)
    raise TypeError(
        "progress: expected True, False, None or a lobbysim.running.progress.Progress, "
        f"got {progress!r}"
    )


def _whole(name: str, value: Any, low: int, high: int | None = None) -> None:
    """Refuse ``value`` unless it is a whole number in [low, high] (None passes)."""
    if value is None:
        return
    if not is_whole(value):
        raise TypeError(f"{name}: expected a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"from {low} to {high:,}"
        raise ValueError(f"{name}: expected a whole number {bound}, got {value!r}")


def _merged(overrides: Overrides, overrides_kw: Mapping[str, Any]) -> Overrides:
    """Return ``overrides`` with keyword overrides (``a__b=1`` for ``a.b``) merged after them."""
    if not overrides_kw:
        return overrides
    keywords = {key.replace("__", "."): value for key, value in overrides_kw.items()}
    if overrides is None:
        return keywords
    if isinstance(overrides, Mapping):
        return {**overrides, **keywords}
    raise TypeError(
        "overrides: give keyword overrides with a mapping of overrides, not a list of texts"
    )


def load_scenario(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    *,
    overrides: Overrides = None,
    **overrides_kw: Any,
) -> Scenario:
    """Return a scenario, checked, with overrides merged onto it.

    Args:
        scenario: a YAML file's path, a bundled scenario's name (``"quickstart"``), plain data
            or a :class:`Scenario`.
        overrides: nested dicts or dotted keys (``{"matchmaker": {"tick": 1.0}}``), or
            ``key.path=value`` texts.
        overrides_kw: more overrides as keywords: ``horizon=120``, ``matchmaker__tick=1.0``.

    Raises:
        TypeError: ``scenario`` or ``overrides`` of the wrong type, naming the argument.
        lobbysim.scenario.ScenarioError: a ValueError, one line per problem of the scenario.

    Example:
        >>> import lobbysim
        >>> scenario = lobbysim.load_scenario(
        ...     "one_visit", horizon=60, warmup=10, matchmaker__tick=1.0
        ... )
        >>> scenario.name, scenario.horizon, scenario.matchmaker.tick
        ('one_visit', 60.0, 1.0)
        >>> nested = {"horizon": 60, "warmup": 10, "matchmaker": {"tick": 1.0}}
        >>> lobbysim.load_scenario("one_visit", overrides=nested) == scenario
        True
        >>> lobbysim.load_scenario(scenario.to_dict()) == scenario
        True
    """
    merged = _merged(overrides, overrides_kw)
    if isinstance(scenario, str | os.PathLike):
        return as_scenario(load_run_scenario(Path(scenario)), merged, source=str(scenario))
    return as_scenario(scenario, merged)


def simulate(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    seed: int | None = None,
    *,
    overrides: Overrides = None,
    progress: ProgressOption = None,
    records_dir: str | os.PathLike[str] | None = None,
    **overrides_kw: Any,
) -> NotebookSimulationResult:
    """Run one replication and return its record frames and metrics.

    Args:
        scenario: see :func:`load_scenario`.
        seed: the master seed (default: the scenario's); the same scenario and seed give
            identical frames, the same as ``lobbysim.experiments.simulate`` gives.
        overrides, overrides_kw: see :func:`load_scenario` (``horizon=120`` shortens the run).
        progress: None or True: simulated minutes as a bar (a widget in a notebook) or, when
            standard error is not a terminal, a line every 10 s; False: nothing.
        records_dir: where a scenario with ``records.stream`` writes its record files.

    Returns:
        A :class:`~lobbysim.experiments.SimulationResult`: ``games``, ``participants``,
        ``waits``, ``ratings`` and ``players`` frames and the ``metrics`` dict; its notebook
        view (:class:`~lobbysim.reporting.notebook.NotebookSimulationResult`) shows the key
        metrics and has ``metrics_series`` (the dict as a Series) and ``metrics_table`` (with
        units and which way each metric is better).

    Example:
        >>> import lobbysim
        >>> run = lobbysim.simulate("one_visit", seed=1, horizon=60, warmup=10, progress=False)
        >>> run  # doctest: +ELLIPSIS
        SimulationResult: one_visit, seed 1, 60 min simulated
          frames (rows): games ..., participants ..., waits ..., ratings ..., players ...
          key metrics (all ... in .metrics): queue_time_mean=..., queue_time_p90=...
        >>> bool(run.metrics_series["games_per_hour"] == run.metrics["games_per_hour"])
        True
        >>> run.metrics_table.loc["queue_time_mean", ["unit", "better"]].tolist()
        ['min', 'lower']
        >>> run.games.columns[:3].tolist(), len(run.games) > 0
        (['game_id', 'mode', 'start'], True)
    """
    chosen = load_scenario(scenario, overrides=overrides, **overrides_kw)
    _whole("seed", seed, 0)
    display = _display(progress)
    if chosen.records.stream and records_dir is None:
        raise ValueError(
            "records_dir: the scenario streams its records (records.stream: true); give "
            "records_dir, the folder to write them to"
        )
    estimate = RemainingTime()
    estimate.plan([run_cost(chosen, spec_label(chosen.matchmaker.policy))])
    stage = display.stage(f"simulate {chosen.name}", "min", chosen.horizon, estimate=estimate.left)
    with stage as update:
        started = time.process_time()

        def advance(now: float, horizon: float) -> None:
            fraction = now / horizon if horizon > 0 else 1.0
            estimate.reach(0, fraction, time.process_time() - started)
            update(now, horizon)

        folder = None if records_dir is None else Path(records_dir)
        estimate.start(0, 0.0)
        result = simulate_one(chosen, seed, records_dir=folder, progress=advance)
    return NotebookSimulationResult.of(result)


def _policy_list(policies: PolicyList) -> list[str | PluginSpec | Mapping[str, Any]]:
    """Return ``policies`` as a list: a text is split on its top-level commas."""
    if policies is None:
        return []
    if isinstance(policies, str):
        return list(split_specs(policies))
    if isinstance(policies, Mapping | PluginSpec) or not isinstance(policies, Sequence):
        raise TypeError(
            "policies: expected a list of policies (names, 'name(key=value, ...)' specs, "
            f"mappings with a name) or one comma-separated text, got {policies!r}"
        )
    return list(policies)


def compare(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    policies: PolicyList = None,
    *,
    replications: int | str | None = None,
    seed: int | None = None,
    jobs: int = 1,
    out: str | os.PathLike[str] | None = None,
    report: bool | None = None,
    progress: ProgressOption = None,
    overrides: Overrides = None,
    precision: float | None = None,
    max_replications: int | None = None,
    rules: str | Sequence[str | os.PathLike[str]] | None = None,
) -> NotebookExperimentResult:
    """Compare policies, or FlexMatch rule sets, on common random numbers, as ``lobbysim
    compare`` does.

    Args:
        scenario: see :func:`load_scenario`.
        policies: names or specs with parameters (``"knowledge_gradient(gamma=0.95)"``),
            mappings (``{"name": "knowledge_gradient", "gamma": 0.95}``), or one
            comma-separated text; the first is the reference of the paired differences. Each
            goes by its label, the spec's text, in the frames. Default: the scenario's
            ``compare:`` section, else its own policy and the bounds ``uniform_random`` and
            ``oracle`` (those its lobby can run), said in a line on standard error.
        replications: per policy (default: the scenario's); ``"auto"``: the scenario's (at
            least 5), then more until the headline's 95% intervals are as precise as
            ``precision`` asks, at most ``max_replications``
            (:mod:`lobbysim.experiments.sequential`); the result's ``precision`` says where
            and why it stopped (:class:`~lobbysim.experiments.sequential.Precision`), and is
            the same as that many replications run at once.
        precision: with ``"auto"``: the largest half-width of a headline metric's interval as
            a share of its mean, and of a captured share's (default 0.1).
        max_replications: with ``"auto"``: the cap (default 50).
        seed: the master seed (default: the scenario's).
        jobs: worker processes (the results do not depend on it).
        out: also write the folder ``lobbysim compare`` writes (tables, records, report), here
            (new or empty).
        report: with ``out``, write the report too (default); True without ``out`` writes the
            folder under ``outputs/`` as the command does; False without ``out``: nothing.
        progress: as in :func:`simulate`: the runs, counted with their fractions.
        overrides: see :func:`load_scenario`.
        rules: FlexMatch rule-set files (or one comma-separated text) to compare instead of
            policies, as ``lobbysim compare --rules`` does: the scenario (a file's path or a
            bundled name) read with each as its rule set, in place of its rules, with its own
            policy; each goes by its file's stem, the first is the reference, the result's
            ``kind`` is ``"rule set"``. Not with ``policies``.

    Returns:
        An :class:`~lobbysim.experiments.ExperimentResult`: ``summary`` (per policy and
        metric, the mean with a 95% interval), ``differences`` (each policy minus the first,
        paired) and ``replications`` (every replication; ``metrics`` is the same frame),
        ``runs`` (the frames of each) and ``folder`` (the folder written with ``out`` or
        ``report=True``, which :func:`load_run` reads back; None without). Its notebook view
        (:class:`~lobbysim.reporting.notebook.NotebookExperimentResult`) shows the headline
        ``lobbysim compare`` prints (all of it: ``print(result.headline)``) and, in a notebook,
        the key metrics' means with their 95% intervals.

    Example:
        >>> import lobbysim
        >>> result = lobbysim.compare(
        ...     "one_visit",
        ...     ["draw_chance", "fifo"],
        ...     replications=2,
        ...     overrides={"horizon": 60, "warmup": 10},
        ...     progress=False,
        ... )
        >>> result  # doctest: +ELLIPSIS
        ExperimentResult: one_visit: 2 policies x 2 replications: draw_chance (baseline), fifo
        Headline: each policy minus draw_chance, paired over 2 replications per policy, ...
          mean queue time (lower is better): ...
        ...
          tables: .summary (... rows), .differences (...), .replications (= .metrics, ...
        >>> result.replications is result.metrics
        True
        >>> result.summary.query("metric == 'games_per_hour'")[["policy", "n"]]
        ... # doctest: +ELLIPSIS
                 policy  n
        ...  draw_chance  2
        ...         fifo  2
    """
    variants = api_rule_variants(scenario, rules, policies, overrides, seed)
    if variants is not None:
        chosen = next(iter(variants.scenarios.values()))
    else:
        chosen = load_scenario(scenario, overrides=overrides)
    auto = replications == AUTO
    if not auto:
        _whole("replications", replications, 1, MAX_REPLICATIONS)
        if precision is not None or max_replications is not None:
            raise ValueError(
                "precision, max_replications: only with replications='auto', got replications="
                f"{replications!r}"
            )
    _whole("seed", seed, 0)
    _whole("jobs", jobs, 1)
    display = _display(progress)
    if seed is not None:
        chosen = chosen.replace(seed=seed)
    rule: Rule | None = None
    headline: list[str] = []
    if auto:
        try:
            rule, headline = auto_rule(chosen, precision, max_replications, where="")
        except RunError as exc:
            raise ValueError(str(exc)) from None
    given = _policy_list(policies)
    specs: list[PluginSpec] = []
    if variants is None:
        specs, why = compare_policies(chosen, given, "policies")
        if not given:
            display.note(why)
    if out is not None or report:
        folder, result = run_command(
            chosen,
            replications=replications,
            precision=precision,
            max_replications=max_replications,
            policies=specs,
            variants=variants,
            out=None if out is None else Path(out),
            jobs=jobs,
            progress=display,
            report=report is not False,
            note=display.note,
        )
        display.note(f"wrote {folder}")
        return NotebookExperimentResult.of(result, folder=folder)
    if chosen.records.stream:
        raise ValueError(
            "out: the scenario streams its records (records.stream: true); give out, the "
            "folder to write them to"
        )
    count = None if isinstance(replications, str) else replications
    result = run_in_memory(
        chosen, specs, variants, count, rule, headline, jobs=jobs, progress=display
    )
    return NotebookExperimentResult.of(result)


def sweep(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    grid: Mapping[str, Any] | None = None,
    policies: PolicyList = None,
    *,
    replications: int | None = None,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    jobs: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    report: bool = True,
    progress: ProgressOption = None,
    overrides: Overrides = None,
) -> SweepOutcome:
    """Run a parameter sweep, as ``lobbysim sweep`` does, and return its tables.

    Args:
        scenario: see :func:`load_scenario`.
        grid: field paths to lists of values, ``{"matchmaker.tick": [0.25, 1.0],
            "arrivals.rate": [2, 4]}`` (nested dicts work too); default: the scenario's
            ``sweep:`` section.
        policies: as in :func:`compare` (default: the ``sweep:`` section's, else the
            scenario's own policy).
        replications, seed, jobs: as in :func:`compare`.
        out: the sweep's folder (default ``outputs/<name>-sweep-<hash>``); running the same
            sweep into it again resumes it.
        executor, scheduler: ``local``, ``dask`` (with a scheduler address) or ``dask-local``.
        report: write the trade-off report too.
        progress: as in :func:`simulate`: the set-up's cells, then the runs.
        overrides: see :func:`load_scenario`.

    Returns:
        A :class:`~lobbysim.experiments.sweeps.SweepOutcome`: ``results`` (one row per run),
        ``failures``, ``folder`` and the counts of runs done now and before.

    Example:
        >>> import tempfile, lobbysim
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     outcome = lobbysim.sweep(
        ...         "one_visit",
        ...         {"matchmaker.tick": [0.5, 1.0]},
        ...         ["draw_chance"],
        ...         replications=1,
        ...         out=folder,
        ...         report=False,
        ...         progress=False,
        ...         overrides={"horizon": 60, "warmup": 10},
        ...     )
        >>> len(outcome.results), len(outcome.failures)
        (2, 0)
    """
    chosen = load_scenario(scenario, overrides=overrides)
    _whole("replications", replications, 1, MAX_REPLICATIONS)
    _whole("seed", seed, 0)
    _whole("jobs", jobs, 1)
    if grid is not None and not isinstance(grid, Mapping):
        raise TypeError(f"grid: expected a mapping of field paths to lists of values, got {grid!r}")
    display = _display(progress)
    definition = build_sweep(
        chosen,
        grid=grid or {},
        policies=_policy_list(policies),
        replications=replications,
        seed=seed,
        progress=display,
    )
    folder = Path(out) if out is not None else default_folder(definition)
    return run_sweep(
        definition,
        folder,
        executor=executor,
        jobs=jobs,
        scheduler=scheduler,
        progress=display,
        write_report=report,
    )


def tune(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    space: str | os.PathLike[str] | Mapping[str, Any],
    *,
    out: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    jobs: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    report: bool = True,
    progress: ProgressOption = None,
    overrides: Overrides = None,
    max_simulations: int = MAX_STUDY_SIMULATIONS,
) -> Any:
    """Find the best setting of some scenario fields within constraints, as ``lobbysim tune``
    does (docs/tune.md): Optuna's constrained TPE on common random numbers, racing, the best
    re-evaluated on fresh seeds against the scenario as it is.

    Args:
        scenario: see :func:`load_scenario`.
        space: the study: a YAML file's path or its data (``objective``, ``constraints``,
            ``parameters``, ``trials``, ``batch``, ``replications``, ``evaluate``, ``seed``).
        out: the study's folder (default ``outputs/<name>-tune-<hash>``); the same study run
            into it again resumes it.
        seed, jobs, executor, scheduler, progress, overrides: as in :func:`sweep`.
        report: write the report too.
        max_simulations: the most simulations the study may plan (its trials times the most
            replications a trial gets, plus the fresh-seed evaluation); a larger study is
            refused (``TuneError``) before anything runs.

    Returns:
        A :class:`~lobbysim.tuning.study.StudyResult`: ``trials``, ``best`` (None when no trial
        was feasible; then ``closest``), ``differences`` (tuned minus the scenario, on fresh
        seeds), ``tuned`` (the scenario with the best setting) and ``table()``.

    Example:
        >>> import tempfile, lobbysim
        >>> study = {
        ...     "objective": {"minimize": "skill_gap_true_mean"},
        ...     "constraints": ["queue_time_mean <= 1.0"],
        ...     "parameters": {"matchmaker.tick": [0.25, 1.0]},
        ...     "trials": 2, "batch": 2, "replications": [2, 2], "evaluate": 2,
        ... }
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     found = lobbysim.tune(
        ...         "one_visit", study, out=folder, report=False, progress=False,
        ...         overrides={"horizon": 60, "warmup": 10},
        ...     )
        >>> len(found.trials), found.simulations, found.evaluations, found.shipped
        (2, 4, 2, True)

        The best is the scenario's own tick, so its fresh-seed runs are the scenario's: two
        distinct evaluation runs, not four.
    """
    from lobbysim.commands.tune import default_folder as tune_folder
    from lobbysim.commands.tune import load_study
    from lobbysim.commands.tune import tune as tune_command

    chosen = load_scenario(scenario, overrides=overrides)
    _whole("seed", seed, 0)
    _whole("jobs", jobs, 1)
    _whole("max_simulations", max_simulations, 0)
    loaded, study = load_study(chosen, space, seed=seed)
    folder = Path(out) if out is not None else tune_folder(loaded, study)
    return tune_command(
        loaded,
        study,
        folder,
        executor=executor,
        jobs=jobs,
        scheduler=scheduler,
        progress=_display(progress),
        report=report,
        max_simulations=max_simulations,
    )


def calibrate(
    log: str | os.PathLike[str] | Any,
    *,
    template: str | os.PathLike[str] | Mapping[str, Any] | Scenario | None = None,
    mapping: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    refine: int = 3,
    seed: int = 1,
    max_simulations: int = MAX_STUDY_SIMULATIONS,
) -> Any:
    """Fit a scenario to a match log, as ``lobbysim calibrate`` does (docs/calibrate.md).

    Args:
        log: a match log's path (CSV, gzipped CSV or Parquet) or a
            :class:`~lobbysim.calibration.matchlog.MatchLog`.
        template: the scenario whose other fields (matchmaker, raters, patience) the result
            keeps; see :func:`load_scenario` (default: lobbysim's defaults).
        mapping: a column mapping (a YAML file's path or its data) for a log read from a path.
        refine: simulations refining the visit rate, games per visit and skill spread (0: none).
        seed: the first refinement simulation's seed.
        max_simulations: the most simulations it may run (``refine`` and one comparison); more
            are refused (``ScenarioError``) before the log is read.

    Returns:
        A :class:`~lobbysim.calibration.run.Calibration`: ``scenario`` (the calibrated scenario),
        ``fit`` (every estimate, with the base's standard errors), ``refined`` and
        ``simulated`` (the calibrated scenario's own log, for comparison).

    Example:
        >>> import lobbysim
        >>> from lobbysim.calibration.matchlog import from_records
        >>> run = lobbysim.simulate("quickstart", seed=2, horizon=720, warmup=0, progress=False)
        >>> log = from_records(run.games, run.participants)  # a run's games as a match log
        >>> fitted = lobbysim.calibrate(log, template="quickstart", refine=0)
        >>> fitted.scenario.game.mode, fitted.scenario.base.visits.name
        ('1v1', 'daily')
    """
    from lobbysim.calibration.matchlog import MatchLog
    from lobbysim.calibration.read import read_log
    from lobbysim.calibration.run import calibrate as calibrate_log
    from lobbysim.calibration.run import refine_problem

    _whole("refine", refine, 0)
    _whole("seed", seed, 0)
    _whole("max_simulations", max_simulations, 0)
    problem = refine_problem(refine, max_simulations, "refine")
    if problem is not None:
        raise ScenarioError(problem)
    matches = log if isinstance(log, MatchLog) else read_log(log, mapping)
    base = load_scenario(template) if template is not None else None
    return calibrate_log(matches, base, refine=refine, seed=seed, max_simulations=max_simulations)
