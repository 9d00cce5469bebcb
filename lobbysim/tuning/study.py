"""A tuning study: the fairest setting within a budget, found by simulation on common seeds.

The optimiser is Optuna's TPE sampler with constraints (:func:`optuna.samplers.TPESampler`,
``constraints_func``): it models good and bad regions of the space from the trials so far,
handles numbers, whole numbers and choices alike, needs nothing heavier than numpy, and is
deterministic for a given seed and history. That last property makes a study resumable: the
study is replayed from its seed, every run whose result is in the folder's store is read
instead of run (:mod:`lobbysim.tuning.folder`), and so a killed study, run again, proposes the
same trials and reaches the same answer. (Bayesian optimisation with Gaussian processes, as in
Ax/BoTorch, models noisy constraints more finely but needs PyTorch.)

**Common random numbers.** Replication r of every trial runs on the same seed (the scenario's
replication seeds), so two trials differ only by their settings, and the paired difference of
two trials over their shared seeds is much sharper than their separate intervals.

**Racing.** Each trial first gets ``first`` replications. It is *promoted* to ``most`` when it
may be the best: the optimistic end of its 95% interval keeps every constraint, and its paired
difference from the best trial so far over their shared seeds leaves it a chance of being
better (the better end of the difference's 50% interval is on the better side of 0,
:data:`RACE_CONFIDENCE`). Before there is a best, the study needs a feasible trial first: of
the candidates whose means keep every constraint, the one with the best mean objective is
promoted (or, if none does, the one closest to keeping them). Promotions are
decided batch by batch against the best before the batch, so the decisions do not depend on the
order in which parallel runs finish.

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
from scipy import stats

from lobbysim.experiments.executors import DaskSession, run_local
from lobbysim.experiments.replications import paired_differences, replication_seeds
from lobbysim.experiments.store import RunStore
from lobbysim.experiments.sweeps import Cell, SweepRun, run_key
from lobbysim.running.progress import ProgressLike, as_progress
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.tuning.folder import StudyRuns, TuneError, check_study_folder, claim_study_folder
from lobbysim.tuning.space import Choices, Range, Space, apply
from lobbysim.tuning.trials import Trial, feasible, progress_line, trials_table, violation
from lobbysim.validation import MAX_STUDY_SIMULATIONS, study_size_problem

TUNED = "tuned"
OWN = "scenario"

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
    key, value, _ = max(fields, key=lambda f: (f[2], f[1]))
    detail = (
        f"{space.trials:,} trials x up to {space.most:,} replications + 2 x {space.evaluate:,} "
        "fresh-seed runs"
    )
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


def _better(space: Space, a: float, b: float) -> bool:
    return a < b if space.minimize else a > b


#: The two-sided level of the racing interval: a candidate is promoted while the better end of
#: the 50% interval of its paired difference from its rival (the mean less one quartile of the
#: t distribution's spread) is on the better side of 0. With the 2 or 3 replications of a first
#: rung a 95% interval would promote nearly everything; the final answer does not rest on
#: this choice (it is measured on fresh seeds).
RACE_CONFIDENCE = 0.5


def _may_beat(space: Space, trial: Trial, best: Trial) -> bool:
    """Whether the paired difference from ``best`` over shared seeds leaves it a chance of being
    better (:data:`RACE_CONFIDENCE`)."""
    shared = sorted(set(trial.runs) & set(best.runs))
    a = np.array([trial.runs[r].get(space.objective, math.nan) for r in shared], dtype=float)
    b = np.array([best.runs[r].get(space.objective, math.nan) for r in shared], dtype=float)
    d = (a - b) if space.minimize else (b - a)  # positive: worse than the rival
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return False
    half = stats.t.ppf(0.5 + RACE_CONFIDENCE / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return bool(d.mean() - half < 0)


def _suggest(trial: Any, space: Space) -> dict[str, Any]:
    drawn: dict[str, Any] = {}
    for name, dim in space.dimensions().items():
        if isinstance(dim, Choices) and dim.ordered:  # levels: their ranks, in order
            drawn[name] = dim.values[trial.suggest_int(name, 0, len(dim.values) - 1)]
        elif isinstance(dim, Choices):
            index = trial.suggest_categorical(name, list(range(len(dim.values))))
            drawn[name] = dim.values[index]
        elif isinstance(dim, Range) and dim.integer:
            drawn[name] = trial.suggest_int(name, int(dim.low), int(dim.high))
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
    try:
        import optuna
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
        trials = _search(optuna, scenario, space, seeds, runs, note)
        searched = runs.count
        best = _best(space, trials)
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


def _search(
    optuna: Any,
    scenario: Scenario,
    space: Space,
    seeds: Sequence[int],
    runs: StudyRuns,
    note: Callable[[str], None] | None,
) -> list[Trial]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constraints_func is marked experimental
        sampler = optuna.samplers.TPESampler(
            seed=space.seed,
            n_startup_trials=max(4, min(10, space.trials // 3)),
            constraints_func=lambda t: t.user_attrs.get("constraints", [0.0]),
            multivariate=True,
        )
        study = optuna.create_study(
            direction="minimize" if space.minimize else "maximize", sampler=sampler
        )
    trials: list[Trial] = []
    best: Trial | None = None
    while len(trials) < space.trials:
        asked: list[tuple[Any, Trial]] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(min(space.batch, space.trials - len(trials))):
                handle = study.ask()
                drawn = _rounded(_suggest(handle, space))
                asked.append(
                    (handle, Trial(len(trials) + len(asked) + 1, drawn, space.values(drawn)))
                )
        batch = [t for _, t in asked]
        scenarios = {}
        for t in batch:
            try:
                scenarios[t.number] = apply(scenario, t.values)
            except ScenarioError as exc:
                t.error = "; ".join(exc.problems)
        _replicate(batch, scenarios, range(space.first), seeds, runs)
        promote = _promotions(space, batch, best)
        for t in promote:
            t.promoted = True
        _replicate(promote, scenarios, range(space.first, space.most), seeds, runs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for handle, t in asked:
                if t.error is not None:
                    study.tell(handle, state=optuna.trial.TrialState.FAIL)
                    continue
                value = t.estimate(space.objective).mean
                handle.set_user_attr(
                    "constraints",
                    [c.violation(t.estimate(c.metric).mean) for c in space.constraints] or [0.0],
                )
                if math.isfinite(value):
                    study.tell(handle, value)
                else:
                    study.tell(handle, state=optuna.trial.TrialState.FAIL)
        trials += batch
        best = _best(space, trials)
        if note is not None:
            note(progress_line(space, trials, best))
    return trials


def _promotions(space: Space, batch: Sequence[Trial], best: Trial | None) -> list[Trial]:
    """Return the trials of a batch that earn ``most`` replications (racing).

    A candidate must keep every constraint at the optimistic end of its interval. With a best
    trial so far, a candidate is promoted unless its paired difference from the best over their
    shared seeds shows it worse (:func:`_may_beat`). Before there is one, the study first needs a
    feasible trial: of the candidates whose means keep every constraint the one with the best
    mean objective is promoted, or, if none does, the one whose means come closest (the least
    summed relative violation).
    """
    candidates = [t for t in batch if t.error is None and feasible(space, t, optimistic=True)]
    if not candidates:
        return []
    if best is not None:
        return [t for t in candidates if _may_beat(space, t, best)]
    likely = [t for t in candidates if _mean_violation(space, t) <= 0]
    if likely:

        def key(t: Trial) -> float:
            value = t.estimate(space.objective).mean
            return value if space.minimize else -value

        return [min(likely, key=key)]
    return [min(candidates, key=lambda t: _mean_violation(space, t))]


def _mean_violation(space: Space, trial: Trial) -> float:
    """Return the summed violations of the constraints by the trial's means, each relative to
    its bound's size (0: the means keep every constraint)."""
    total = 0.0
    for c in space.constraints:
        mean = trial.estimate(c.metric).mean
        if not math.isfinite(mean):
            return math.inf
        total += max(0.0, c.violation(mean)) / max(abs(c.bound), 1e-12)
    return total


def _replicate(
    batch: Sequence[Trial],
    scenarios: Mapping[int, Scenario],
    replications: range,
    seeds: Sequence[int],
    runs: StudyRuns,
) -> None:
    planned = [
        SweepRun(
            run_key(scenarios[t.number], seeds[r]),
            Cell(t.number, t.values),
            TUNED,
            r + 1,
            seeds[r],
            scenarios[t.number],
        )
        for t in batch
        if t.error is None
        for r in replications
    ]
    got = runs.metrics(planned)
    by_trial = {t.number: t for t in batch}
    for run in planned:
        trial = by_trial[run.cell.number]
        result = got[run.key]
        if isinstance(result, str):
            trial.error = f"replication {run.replication} (seed {run.seed}) failed: " + (
                result.strip().splitlines()[-1] if result.strip() else "no message"
            )
        else:
            trial.runs[run.replication] = result


def _best(space: Space, trials: Sequence[Trial]) -> Trial | None:
    best = None
    for t in trials:
        if len(t.runs) < space.most or not feasible(space, t):
            continue
        value = t.estimate(space.objective).mean
        if best is None or _better(space, value, best.estimate(space.objective).mean):
            best = t
    return best


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
