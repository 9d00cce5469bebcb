"""``lobbysim tune``: the best setting of a scenario within constraints, found by simulation.

Loads the scenario and the space (:mod:`lobbysim.tuning.space`), runs or resumes the study
(:mod:`lobbysim.tuning.study`) in its folder and writes, beside the run store:

* ``trials.csv``: one row per trial (settings, replications, promoted, objective with its 95%
  interval, each constraint's metric and its pessimistic interval end, feasible, error);
* ``evaluation.csv`` (the best trial and the scenario as it is on fresh seeds, one row per run)
  and ``differences.csv`` (their paired differences, tuned minus scenario);
* ``tuned.yaml``: the scenario with the best settings, which ``lobbysim run`` runs as it is,
  written only where the fresh seeds keep every constraint (else ``closest.yaml``, the same
  scenario under a header saying which constraint the fresh seeds do not keep), and, where it
  has a rule set FlexMatch can hold, ``tuned_flexmatch.json``: that rule set as
  ``lobbysim rules export --flexmatch`` writes it;
* ``scenario.yaml`` and ``space.yaml``: what was tuned, and how;
* ``report.html`` and ``report.md`` (:mod:`lobbysim.reporting.tune`).

The folder defaults to ``outputs/<name>-tune-<hash of the scenario and the space>``: running the
same study again resumes it, reading every finished run from its store. Nothing is overwritten
or removed: where the folder holds an earlier answer this run does not give (a study finished
by an earlier version), nothing is written and one line names the file
(:func:`clobber_problem`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from lobbysim.commands.run_scenario import check_scenario
from lobbysim.commands.sweep import check_executor
from lobbysim.experiments.store import tmp_name, write_text
from lobbysim.running.progress import ProgressLike, as_progress
from lobbysim.scenario import Scenario
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.loading import load_run_scenario
from lobbysim.tuning.folder import TuneError, check_study_folder, study_folder_name
from lobbysim.tuning.space import Space, load_space
from lobbysim.tuning.study import StudyResult, check_size, run_study
from lobbysim.validation import MAX_STUDY_SIMULATIONS


def load_study(
    path: str | Path | Scenario,
    space: str | os.PathLike[str] | Mapping[str, Any],
    *,
    sets: Sequence[str] = (),
    seed: int | None = None,
) -> tuple[Scenario, Space]:
    """Return the scenario (with ``--set`` overrides and ``seed``) and its checked space.

    Raises:
        ScenarioError, PluginError, RunError, SpaceError: one line per problem.
    """
    if isinstance(path, Scenario):
        scenario = as_scenario(path, list(sets)) if sets else path
    else:
        scenario = load_run_scenario(path, sets)
    if seed is not None:
        scenario = scenario.replace(seed=seed)
    check_scenario(scenario, held_runs=0)
    return scenario, load_space(space, scenario)


def default_folder(scenario: Scenario, space: Space, base: Path = Path("outputs")) -> Path:
    """Return the default folder: the same for the same study, so running it again resumes."""
    return base / study_folder_name(scenario, space)


def tune(
    scenario: Scenario,
    space: Space,
    folder: Path,
    *,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: ProgressLike = None,
    note: Callable[[str], None] | None = None,
    report: bool = True,
    max_simulations: int = MAX_STUDY_SIMULATIONS,
) -> StudyResult:
    """Run (or resume) the study in ``folder``, then write its tables, tuned scenario and
    report (see the module docstring). A study that may run more than ``max_simulations``
    simulations is refused first (:func:`lobbysim.tuning.study.size_problem`)."""
    check_executor(executor, scheduler)
    check_size(scenario, space, max_simulations, jobs=jobs, executor=executor)
    check_study_folder(scenario, space, folder)
    display = as_progress(progress)
    result = run_study(
        scenario,
        space,
        folder,
        executor=executor,
        jobs=jobs,
        scheduler=scheduler,
        progress=display,
        note=note,
        max_simulations=max_simulations,
    )
    with display.stage("tune tables and report", "steps", 2) as update:
        write_outputs(scenario, result, folder)
        update(1)
        if report:
            _write_report(scenario, result, folder)
        update(2)
    return result


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def planned_outputs(scenario: Scenario, result: StudyResult) -> dict[str, str]:
    """Return the study's tables and scenarios, by file name, as :func:`write_outputs` writes
    them."""
    out = {
        "trials.csv": result.table().to_csv(index=False),
        "scenario.yaml": _yaml(scenario.to_dict()),
        "space.yaml": _yaml(result.space.to_dict()),
    }
    if result.tuned is None:
        return out
    out["evaluation.csv"] = result.evaluation.to_csv(index=False)
    out["differences.csv"] = result.differences.to_csv(index=False)
    tuned = result.tuned.replace(name=f"{scenario.name}_tuned")
    number = result.best.number if result.best is not None else "?"
    header = (
        f"# {scenario.name} tuned by lobbysim tune (trial {number} of the study in this "
        "folder; report.html has the evidence)\n"
    )
    if result.kept:
        out[TUNED_FILE] = header + _yaml(tuned.to_dict())
        flexmatch = _flexmatch(tuned)
        if flexmatch is not None:
            out[FLEXMATCH_FILE] = flexmatch
    else:
        missed = "; ".join(c for c, ok in result.held().items() if not ok)
        header += (
            f"# NOT tuned: the fresh seeds do not keep {missed} at the pessimistic end of "
            "the 95% interval; this is the closest setting the study found\n"
        )
        out[CLOSEST_FILE] = header + _yaml(tuned.to_dict())
    return out


#: The files a study's answer is written in: a rerun that would change or not write one of
#: them, where the folder holds it, writes nothing (:func:`clobber_problem`).
ANSWER_FILES = (
    "tuned.yaml",
    "closest.yaml",
    "tuned_flexmatch.json",
    "evaluation.csv",
    "differences.csv",
    "trials.csv",
    "scenario.yaml",
    "space.yaml",
)


def clobber_problem(folder: Path, planned: Mapping[str, str], answer: str) -> str | None:
    """Return the line refusing to write ``planned`` into ``folder`` where the folder holds an
    answer file (:data:`ANSWER_FILES`, of an earlier run of the study, by an earlier version)
    that they would change or leave beside a different answer, or None (a new folder, or the
    same answer again). ``answer`` says what this run found."""
    for name in ANSWER_FILES:
        path = folder / name
        if not path.exists() and not path.is_symlink():
            continue
        try:
            same = path.is_file() and path.read_text(encoding="utf-8") == planned.get(name)
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            return (
                f"--out: {path} holds an earlier answer of this study that this run does not "
                f"give ({answer}); nothing written, the earlier files are left as they are: "
                "give a new --out, or move the earlier answer files away, and run again (the "
                "finished runs are kept in the folder's store and read back)"
            )
    return None


def write_outputs(scenario: Scenario, result: StudyResult, folder: Path) -> None:
    """Write the study's tables and scenarios into ``folder``, each file whole or not at all.

    Raises:
        TuneError: the folder holds an earlier answer this run would change or leave beside a
            different one (:func:`clobber_problem`); nothing is written or removed.
    """
    planned = planned_outputs(scenario, result)
    if result.tuned is None:
        answer = "no feasible setting"
    elif TUNED_FILE in planned:
        answer = f"{TUNED_FILE}: trial {result.best.number if result.best else '?'}"
    else:
        answer = f"{CLOSEST_FILE}: the fresh seeds do not keep every constraint"
    problem = clobber_problem(folder, planned, answer)
    if problem is not None:
        raise TuneError(problem)
    for name, text in planned.items():
        write_text(folder / name, text)


#: The tuned scenario, written only where the fresh seeds keep every constraint.
TUNED_FILE = "tuned.yaml"
#: The best setting found when the fresh seeds do not keep every constraint.
CLOSEST_FILE = "closest.yaml"
#: The tuned rule set as a FlexMatch rule set, where the scenario has a rule set FlexMatch holds.
FLEXMATCH_FILE = "tuned_flexmatch.json"


def _flexmatch(tuned: Scenario) -> str | None:
    """Return the tuned scenario's rule set as FlexMatch JSON (``lobbysim rules export
    --flexmatch``), or None when it has no rule set or one FlexMatch cannot say."""
    if not tuned.matchmaker.rules:
        return None
    from lobbysim.flexmatch.export import export_flexmatch
    from lobbysim.scenario import ScenarioError

    try:
        document = export_flexmatch(tuned)
    except ScenarioError:
        return None
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def _write_report(scenario: Scenario, result: StudyResult, folder: Path) -> None:
    from lobbysim.reporting.tune import write_tune_report

    tmp = tmp_name(folder / "report")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        written = [*write_tune_report(result, tmp, f"Tuning: {scenario.name}")]
        written += [p for p in tmp.glob("*.png")]
        for path in written:
            os.replace(path, folder / path.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
