"""A tuning study: the fairest setting within a budget, found by simulation on common seeds.

In a finite space a model of the runs (:mod:`lobbysim.tuning.model`) chooses each setting; in a
larger one the optimiser is Optuna's TPE sampler with constraints
(:func:`optuna.samplers.TPESampler`, ``constraints_func``): it models good and bad regions of
the space from the trials so far, handles numbers, whole numbers and choices alike, needs
nothing heavier than numpy. Both are deterministic for a given seed and history. That makes a
study resumable: the study is replayed from its seed, every run whose result is in the folder's
store is read instead of run (:mod:`lobbysim.tuning.folder`), and so a killed study, run again,
proposes the same trials and reaches the same answer. (Bayesian optimisation with Gaussian
processes, as in Ax/BoTorch, models noisy constraints more finely but needs PyTorch.)

**The search** spends at most the space's ``budget`` of distinct simulations (by default
``trials`` x ``most``), in three stages:

1. *a design* (:mod:`lobbysim.tuning.design`): the scenario's own setting, where the space
   allows it, and a Latin hypercube over the space: in a finite space (every dimension finite,
   at most :data:`lobbysim.tuning.design.MAX_ENUMERATED` settings) :data:`MODEL_DESIGN`
   settings in all, else as many as leave room to race a third of them
   (:func:`lobbysim.tuning.racing.design_size`), each run ``first`` times;
2. *racing* (:mod:`lobbysim.tuning.racing`) on a model of every run
   (:mod:`lobbysim.tuning.model`, with common random numbers: replication r of every setting
   sees the same arrivals): one more replication at a time to the candidates most likely to end
   feasible and better than the best, by their expected gain per run still needed; in a finite
   space the candidates include every setting not tried yet, so the model chooses each new
   setting, and starts one under a 5% chance only when none has 5% (the budget is spent);
3. in a space too large to enumerate, *new settings* while the budget can replicate one fully:
   the untried neighbours of the lead first (:func:`lobbysim.tuning.design.neighbours`, where
   every dimension is finite), then TPE (Optuna's sampler, told every trial's result); each
   races as above. A setting proposed again is told its result and not run.

No (setting, seed) runs twice in a study: one run store, keyed by the run, serves the search
and the evaluation (:class:`lobbysim.tuning.folder.StudyRuns`).

**Feasible with confidence.** A trial is feasible when the pessimistic end of each constraint's
95% interval keeps it (:func:`lobbysim.tuning.trials.feasible`); the best trial is the feasible
trial with ``most`` replications and the best mean objective.

**An honest answer.** The best trial is then run again, with the scenario as it is, on
``evaluate`` fresh seeds (replication seeds ``most`` onward, which no trial ran on), and the
answer is their paired difference, so the winner's curse of choosing on the same noise that
measured it does not flatter it.
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.experiments.executors import DaskSession, run_local
from lobbysim.experiments.replications import paired_differences, replication_seeds
from lobbysim.experiments.store import RunStore
from lobbysim.experiments.sweeps import Cell, SweepRun, run_key
from lobbysim.running.progress import ProgressLike, as_progress
from lobbysim.scenario import Scenario
from lobbysim.tuning.design import MAX_ENUMERATED, design, neighbours, setting_key
from lobbysim.tuning.dimensions import Choices, Range
from lobbysim.tuning.folder import StudyRuns, TuneError, check_study_folder, claim_study_folder
from lobbysim.tuning.racing import TUNED, Race, best_trial, design_size, pooled_spread, rank
from lobbysim.tuning.space import Space, apply
from lobbysim.tuning.trials import (
    Interval,
    Trial,
    feasible,
    progress_line,
    trials_table,
    violation,
)
from lobbysim.validation import MAX_STUDY_SIMULATIONS, study_size_problem

OWN = "scenario"

#: The settings of a finite space's design (the scenario's own and one drawn to fill the space):
#: the model (:mod:`lobbysim.tuning.model`) chooses every later one.
MODEL_DESIGN = 2

OPTUNA_MISSING = (
    "lobbysim tune needs Optuna, which is not installed; install it with: "
    "pip install 'lobbysim[tune]'"
)


#: CPU seconds a simulation takes per unit of its expected work (the player-minutes of its
#: lobby, :func:`lobbysim.experiments.costs.step_work`), for the estimate of a study's time
#: before anything runs: the bundled scenarios take 0.5e-5 to 2.2e-5 on one core of the
#: development machine, so the estimate is good to a factor of 2 or 3 either way.
SECONDS_PER_WORK = 1.2e-5


def simulation_seconds(scenario: Scenario) -> float:
    """Return the CPU seconds a run of ``scenario`` is expected to take (a rough estimate:
    :data:`SECONDS_PER_WORK`)."""
    from lobbysim.experiments.costs import step_work

    return SECONDS_PER_WORK * float(np.sum(step_work(scenario)))


def size_problem(
    scenario: Scenario,
    space: Space,
    limit: int = MAX_STUDY_SIMULATIONS,
    workers: int = 1,
) -> str | None:
    """Return the line refusing a study that may run more than ``limit`` simulations
    (:meth:`Space.simulations`), naming the field that makes it so large, with the
    simulations and their estimated time on ``workers`` workers; None if it is within."""
    simulations = space.simulations()
    if simulations <= limit:
        return None
    fields = [
        ("trials", space.trials, space.trials * space.most),
        ("replications", space.most, space.trials * space.most),
        ("evaluate", space.evaluate, 2 * space.evaluate),
    ]
    detail = (
        f"{space.trials:,} trials x up to {space.most:,} replications + 2 x {space.evaluate:,} "
        "fresh-seed runs"
    )
    if space.budget is not None:
        fields = [("budget", space.budget, space.budget), fields[2]]
        detail = f"a search of {space.budget:,} + 2 x {space.evaluate:,} fresh-seed runs"
    key, value, _ = max(fields, key=lambda f: (f[2], f[1]))
    return study_size_problem(
        f"{space.source}: {key}",
        value,
        simulations,
        limit,
        detail=detail,
        seconds=simulation_seconds(scenario),
        workers=workers,
    )


@dataclass
class StudyResult:
    """What a study found.

    Attributes:
        space: the study's definition.
        trials: every trial, in order.
        best: the best feasible trial (None: no trial was feasible).
        closest: with no feasible trial, the one nearest to feasibility.
        evaluation: the best trial and the scenario as it is on fresh seeds, one row per
            policy label (``tuned``, ``scenario``) and replication (empty without a best).
        differences: their paired differences, tuned minus scenario (empty without a best).
        simulations: distinct runs the search needed (first rungs and promotions; a setting
            proposed twice runs once on each seed).
        evaluations: distinct runs the final re-evaluation added (none for the tuned setting
            when it is the scenario's own).
        tuned: the scenario with the best trial's settings (None without a best).
        shipped: whether the best trial's settings are the scenario's own (the shipped
            setting is the best found; its evaluation is one set of runs).
    """

    space: Space
    trials: list[Trial]
    best: Trial | None
    closest: Trial | None
    evaluation: pd.DataFrame
    differences: pd.DataFrame
    simulations: int
    evaluations: int
    tuned: Scenario | None
    shipped: bool = False

    def table(self) -> pd.DataFrame:
        """Return one row per trial (``trials.csv``)."""
        return trials_table(self.space, self.trials)

    def fresh(self, metric: str) -> list[float]:
        """Return the tuned setting's values of ``metric`` on the fresh seeds."""
        if self.evaluation.empty or metric not in self.evaluation.columns:
            return []
        rows = self.evaluation[self.evaluation["policy"] == TUNED]
        return [float(v) for v in rows[metric]]

    def held(self) -> dict[str, bool]:
        """Return, per constraint (its text), whether the fresh seeds keep it at the
        pessimistic end of its 95% interval (empty without a best)."""
        out = {}
        for c in self.space.constraints:
            values = self.fresh(c.metric)
            if not values:
                continue
            e = Interval.of(values)
            end = e.high if c.op == "<=" else e.low
            out[c.text()] = math.isfinite(end) and c.violation(end) <= 0
        return out

    @property
    def kept(self) -> bool:
        """Whether there is a best setting and the fresh seeds keep every constraint."""
        return self.best is not None and all(self.held().values())

    @property
    def tried(self) -> int:
        """Return the distinct settings the search tried (a setting proposed twice once)."""
        return len({setting_key(t.drawn) for t in self.trials})

    @property
    def exhausted(self) -> bool:
        """Whether every trial was shown infeasible: it failed, or ran ``most`` replications,
        or two or more of them miss a constraint at the optimistic end of its interval."""
        for t in self.trials:
            if t.error is not None or len(t.runs) >= self.space.most:
                continue
            if len(t.runs) >= 2 and not feasible(self.space, t, optimistic=True):
                continue
            return False
        return True

    @property
    def size(self) -> int | None:
        """Return how many settings the space allows (None: a continuous dimension)."""
        return self.space.size()


def _suggest(trial: Any, space: Space) -> dict[str, Any]:
    drawn: dict[str, Any] = {}
    for name, dim in space.dimensions().items():
        if isinstance(dim, Choices) and dim.ordered:  # levels: their ranks, in order
            drawn[name] = dim.values[trial.suggest_int(name, 0, len(dim.values) - 1)]
        elif isinstance(dim, Choices):
            index = trial.suggest_categorical(name, list(range(len(dim.values))))
            drawn[name] = dim.values[index]
        elif isinstance(dim, Range) and dim.integer:
            step = int(dim.step) if dim.step is not None else 1
            drawn[name] = trial.suggest_int(name, int(dim.low), int(dim.high), step=step)
        elif dim.step is not None:  # a stepped range: the sampler draws on its grid
            value = trial.suggest_float(name, dim.low, dim.high, step=dim.step)
            drawn[name] = float(f"{value:.12g}")
        else:
            drawn[name] = trial.suggest_float(name, dim.low, dim.high, log=dim.log)
    return drawn


def check_size(
    scenario: Scenario,
    space: Space,
    limit: int = MAX_STUDY_SIMULATIONS,
    *,
    jobs: int = 1,
    executor: str = "local",
) -> None:
    """Raise TuneError if the study may run more than ``limit`` simulations
    (:func:`size_problem`; its time estimated on ``jobs`` workers, at most the CPUs here unless
    the runs go to a Dask cluster)."""
    workers = jobs if executor == "dask" else min(jobs, os.cpu_count() or 1)
    problem = size_problem(scenario, space, limit, workers)
    if problem is not None:
        raise TuneError(problem)


def _rounded(drawn: Mapping[str, Any]) -> dict[str, Any]:
    """Return the draw with floats to 4 significant digits: settings a designer would type."""
    return {k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in drawn.items()}


def run_study(
    scenario: Scenario,
    space: Space,
    folder: Path,
    *,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: ProgressLike = None,
    note: Callable[[str], None] | None = None,
    max_simulations: int = MAX_STUDY_SIMULATIONS,
) -> StudyResult:
    """Run (or resume) a study in ``folder`` and return what it found (see the module docstring).

    Args:
        scenario: the scenario to tune (its own settings are the reference of the answer).
        space: the study (:func:`lobbysim.tuning.space.load_space`).
        folder: the study's folder: new, empty, or this study's (resumed).
        executor: ``local`` (a process pool of ``jobs``), ``dask`` (``scheduler``'s cluster) or
            ``dask-local`` (a LocalCluster of ``jobs`` workers).
        progress: the runs, as in ``lobbysim sweep``.
        note: called with a line after each batch of trials (trials done, best so far, feasible
            share).
        max_simulations: the most simulations the study may plan (:meth:`Space.simulations`);
            a larger study is refused before anything runs (:func:`size_problem`).

    Raises:
        TuneError: a study larger than ``max_simulations``, a folder that is not this study's,
            Optuna not installed.
    """
    check_size(scenario, space, max_simulations, jobs=jobs, executor=executor)
    try:  # before the folder is claimed
        import optuna  # noqa: F401
    except ImportError:
        raise TuneError(OPTUNA_MISSING) from None
    check_study_folder(scenario, space, folder)
    seeds = replication_seeds(scenario.seed, space.most + space.evaluate)
    display = as_progress(progress)
    with contextlib.ExitStack() as stack:
        session = None
        if executor != "local":
            session = stack.enter_context(DaskSession(scheduler, jobs))
        claim_study_folder(scenario, space, folder)
        store = RunStore(folder)
        update = stack.enter_context(display.stage("tune", "runs"))
        finished = [0]

        def tick() -> None:
            finished[0] += 1
            update(finished[0])

        def execute(todo: Sequence[SweepRun], on_done: Any) -> None:
            if session is not None:
                session.run(todo, on_done)
            else:
                run_local(todo, jobs, on_done)

        runs = StudyRuns(store, execute, tick)
        race = search(scenario, space, seeds, runs, note)
        trials = race.trials
        searched = runs.count
        best = best_trial(space, trials)
        closest = None
        evaluation = pd.DataFrame()
        differences = pd.DataFrame()
        tuned = None
        if best is None:
            candidates = [t for t in trials if t.error is None and t.runs]
            closest = min(candidates, key=lambda t: violation(space, t), default=None)
        else:
            tuned = apply(scenario, best.values)
            evaluation = _evaluate(scenario, tuned, space, seeds[space.most :], runs)
            metrics = [space.objective, *dict.fromkeys(c.metric for c in space.constraints)]
            differences = paired_differences(evaluation[["policy", "replication", *metrics]], OWN)
    return StudyResult(
        space,
        trials,
        best,
        closest,
        evaluation,
        differences,
        searched,
        runs.count - searched,
        tuned,
        shipped=tuned is not None and tuned == scenario,
    )


def search(
    scenario: Scenario,
    space: Space,
    seeds: Sequence[int],
    runs: StudyRuns,
    note: Callable[[str], None] | None = None,
) -> Race:
    """Run a study's search (see the module docstring) on ``runs`` (a run store and the executor
    that fills it) with replication r of every setting on ``seeds[r - 1]``, and return its race:
    its trials and their runs. :func:`run_study` calls it before the fresh-seed evaluation;
    ``benchmarks/bench_tune_grid.py`` calls it with an executor that reads a committed grid.

    Raises:
        TuneError: Optuna not installed.
    """
    try:
        import optuna
    except ImportError:
        raise TuneError(OPTUNA_MISSING) from None
    return _search(optuna, scenario, space, seeds, runs, note)


def _search(
    optuna: Any,
    scenario: Scenario,
    space: Space,
    seeds: Sequence[int],
    runs: StudyRuns,
    note: Callable[[str], None] | None,
) -> Race:
    """Run the search (see the module docstring) and return its race: the design, raced on the
    model with every untried setting of a finite space as a candidate, or, in a larger space,
    the design raced, then TPE's proposals, within the search's budget."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng(space.seed)
    settings = space.size()
    finite = settings is not None and settings <= MAX_ENUMERATED
    startup = settings if finite else max(4, min(10, space.trials // 3))
    size = design_size(space, min(space.trials, startup or 1))
    if finite:  # the model chooses the rest
        size = min(size, MODEL_DESIGN)
    drawn, _ = design(scenario, space, size, rng)
    if finite:
        race = Race(scenario, space, seeds, runs)
        for d in drawn:
            race.add(d)
        race.run(list(race.trials), space.first)
        _note(note, space, race)
        race.chase(design(scenario, space, settings or 0, rng)[0])
        _note(note, space, race)
        return race
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constraints_func is marked experimental
        sampler = optuna.samplers.TPESampler(
            seed=space.seed,
            n_startup_trials=len(drawn),
            constraints_func=lambda t: t.user_attrs.get("constraints", [0.0]),
            multivariate=True,
        )
        study = optuna.create_study(
            direction="minimize" if space.minimize else "maximize", sampler=sampler
        )
    race = Race(scenario, space, seeds, runs)
    handles: dict[int, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in drawn:
            study.enqueue_trial(_params(space, d))
            handle = study.ask()
            t = race.add(_rounded(_suggest(handle, space)))
            handles[t.number] = handle
    race.run(list(race.trials), space.first)
    _note(note, space, race)
    race.chase()
    _note(note, space, race)
    for t in race.trials:
        _tell(optuna, study, handles.pop(t.number), space, t)
    untried: list[dict[str, Any]] = []  # a space too large to enumerate: TPE's proposals only
    while len(race.trials) < space.trials and race.left() >= space.most:
        room = min(space.batch, space.trials - len(race.trials), race.left() // space.most)
        asked = _around(optuna, study, space, race, rng, room) or _propose(
            optuna, study, space, race, untried, room
        )
        if not asked:
            break
        batch = [race.add(proposal) for _, proposal in asked]
        race.run(batch, space.first)
        race.chase()
        for (handle, _), t in zip(asked, batch, strict=True):
            _tell(optuna, study, handle, space, t)
        _note(note, space, race)
    return race


def _around(
    optuna: Any, study: Any, space: Space, race: Race, rng: np.random.Generator, room: int
) -> list[tuple[Any, dict[str, Any]]]:
    """Return up to ``room`` untried neighbours (:func:`lobbysim.tuning.design.neighbours`) of
    the lead, the best trial (or, before there is one, the trial ranked first by
    :func:`lobbysim.tuning.racing.rank`), in an order drawn from ``rng``, as the sampler's
    trials (enqueued, so TPE is told their results); none in a continuous space."""
    lead = best_trial(space, race.trials)
    if lead is None:
        pooled = pooled_spread(space, race.trials)
        ran = [t for t in race.trials if t.error is None and t.runs]
        lead = min(ran, key=lambda t: rank(space, t, pooled), default=None)
    near = None if lead is None else neighbours(space, lead.drawn)
    if not near:
        return []
    fresh = [d for d in near if race.known(d) is None]
    fresh = [fresh[i] for i in rng.permutation(len(fresh))][:room]
    asked = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in fresh:
            study.enqueue_trial(_params(space, d))
            handle = study.ask()
            asked.append((handle, _rounded(_suggest(handle, space))))
    return asked


def _propose(
    optuna: Any, study: Any, space: Space, race: Race, untried: Sequence[dict[str, Any]], room: int
) -> list[tuple[Any, dict[str, Any]]]:
    """Return up to ``room`` new settings from the sampler, with their trials' handles. A
    proposal of a setting tried already (or already in this batch) is told that setting's
    result, or failed within the batch, and not run; after :data:`MAX_REPEATS` of them in a row
    the next untried setting of the design is taken instead (none left: fewer are returned)."""
    asked: list[tuple[Any, dict[str, Any]]] = []
    keys: set[str] = set()
    repeats = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(asked) < room:
            handle = study.ask()
            proposal = _rounded(_suggest(handle, space))
            key = setting_key(proposal)
            known = race.known(proposal)
            if known is None and key not in keys:
                asked.append((handle, proposal))
                keys.add(key)
                repeats = 0
                continue
            if known is not None:  # the sampler learns its result again
                _tell(optuna, study, handle, space, known)
            else:
                study.tell(handle, state=optuna.trial.TrialState.FAIL)
            repeats += 1
            if repeats < MAX_REPEATS:
                continue
            fresh = [d for d in untried if race.known(d) is None and setting_key(d) not in keys]
            if not fresh:
                break
            study.enqueue_trial(_params(space, fresh[0]))
            handle = study.ask()
            proposal = _rounded(_suggest(handle, space))
            asked.append((handle, proposal))
            keys.add(setting_key(proposal))
            repeats = 0
    return asked


#: Proposals in a row that repeat a tried setting before the search takes the next untried
#: setting of the design in their place (or, in a space without one, stops).
MAX_REPEATS = 20


def _note(note: Callable[[str], None] | None, space: Space, race: Race) -> None:
    if note is not None:
        best = best_trial(space, race.trials)
        note(progress_line(space, race.trials, best, race.runs.count))


def _tell(optuna: Any, study: Any, handle: Any, space: Space, t: Trial) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if t.error is not None or not t.runs:
            study.tell(handle, state=optuna.trial.TrialState.FAIL)
            return
        value = t.estimate(space.objective).mean
        handle.set_user_attr(
            "constraints",
            [c.violation(t.estimate(c.metric).mean) for c in space.constraints] or [0.0],
        )
        if math.isfinite(value):
            study.tell(handle, value)
        else:
            study.tell(handle, state=optuna.trial.TrialState.FAIL)


def _params(space: Space, drawn: Mapping[str, Any]) -> dict[str, Any]:
    """Return a draw as the sampler's parameters (levels by rank, choices by index)."""
    out: dict[str, Any] = {}
    for name, dim in space.dimensions().items():
        if isinstance(dim, Choices):
            out[name] = next(i for i, v in enumerate(dim.values) if _same_value(v, drawn[name]))
        else:
            out[name] = drawn[name]
    return out


def _same_value(a: Any, b: Any) -> bool:
    return setting_key({"v": a}) == setting_key({"v": b})


def _evaluate(
    scenario: Scenario, tuned: Scenario, space: Space, fresh: Sequence[int], runs: StudyRuns
) -> pd.DataFrame:
    planned = [
        SweepRun(run_key(s, seed), Cell(0, {}), label, i + space.most + 1, seed, s)
        for label, s in ((TUNED, tuned), (OWN, scenario))
        for i, seed in enumerate(fresh)
    ]
    got = runs.metrics(planned)
    rows = []
    for run in planned:
        result = got[run.key]
        if isinstance(result, str):
            raise TuneError(
                f"the re-evaluation's run {run.policy}, seed {run.seed} failed: "
                + (result.strip().splitlines()[-1] if result.strip() else "no message")
            )
        rows.append({"policy": run.policy, "replication": run.replication, **result})
    return pd.DataFrame(rows)
