"""A tuning study's folder: the study's identity (its scenario, space and results version),
the folder claimed with its manifest or refused when it holds something else, and the runs of
the study read from the folder's run store or run and written to it, so that a killed study, run
again in the same folder, resumes (:mod:`lobbysim.tuning.study`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from lobbysim import RESULTS_VERSION, __version__
from lobbysim.experiments.store import RunStore, write_text
from lobbysim.experiments.sweeps import NOT_IN_KEY, SweepRun, digest
from lobbysim.records.outputs import creation_problem
from lobbysim.scenario import Scenario
from lobbysim.tuning.space import Space

MANIFEST = "tune.json"


class TuneError(ValueError):
    """A problem with a study's folder or its options; one line per problem."""


def study_identity(scenario: Scenario, space: Space) -> str:
    """Return the study's identity: a digest of its scenario (with its seed, without the fields
    that are not in a run's key), its space and the results version."""
    data = {k: v for k, v in scenario.to_dict().items() if k not in NOT_IN_KEY}
    data["seed"] = scenario.seed
    return digest({"scenario": data, "space": space.to_dict(), "results": RESULTS_VERSION})


def study_folder_name(scenario: Scenario, space: Space) -> str:
    """Return ``<name>-tune-<8 hex>``, the same for the same study (so it resumes)."""
    from lobbysim.scenario import folder_label

    return f"{folder_label(scenario.name)}-tune-{study_identity(scenario, space)[:8]}"


def check_study_folder(scenario: Scenario, space: Space, folder: Path) -> None:
    """Raise TuneError, touching nothing, unless ``folder`` is new, empty or this study's."""
    if folder.exists():
        if not folder.is_dir():
            raise TuneError(f"--out: {folder} exists and is not a folder")
        manifest = folder / MANIFEST
        if manifest.is_file():
            try:
                found = json.loads(manifest.read_text(encoding="utf-8")).get("study")
            except (OSError, ValueError, AttributeError):
                found = None
            if found == study_identity(scenario, space):
                return
            raise TuneError(
                f"--out: {folder} holds another study (a different scenario or space); give a "
                "new folder"
            )
        if any(folder.iterdir()):
            raise TuneError(
                f"--out: {folder} holds other files and is not a study folder (no "
                f"{MANIFEST}); give a new or empty folder"
            )
        return
    problem = creation_problem(folder)
    if problem is not None:
        raise TuneError(f"--out: {problem}")


def claim_study_folder(scenario: Scenario, space: Space, folder: Path) -> None:
    """Make ``folder`` this study's, writing its manifest, unless it already is."""
    if (folder / MANIFEST).is_file():
        return
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "study": study_identity(scenario, space),
        "name": scenario.name,
        "lobbysim": __version__,
        "results_version": RESULTS_VERSION,
    }
    write_text(folder / MANIFEST, json.dumps(record, indent=1) + "\n")


class StudyRuns:
    """Runs a list of runs not yet in the store, on the chosen executor; reads results.

    One store serves the search and the evaluation alike, keyed by the run (its scenario and
    seed): a setting proposed twice, or the best trial that is the scenario's own setting, is
    run once on each seed, and :attr:`count` is the study's distinct runs."""

    def __init__(self, store: RunStore, execute: Callable[..., None], update: Callable[[], None]):
        self.store = store
        self.execute = execute
        self.update = update
        self.keys: set[str] = set()  # the distinct runs needed (read from the store or run)

    @property
    def count(self) -> int:
        """Return the distinct runs the study has needed so far (run now, or earlier in a study
        resumed from its folder)."""
        return len(self.keys)

    def metrics(self, runs: Sequence[SweepRun]) -> dict[str, dict[str, float] | str]:
        """Return each run's metrics (by key), or its error text; a run whose key is in the
        store, or given twice, is run once."""
        self.keys.update(r.key for r in runs)
        done = self.store.done_keys()
        todo = list({r.key: r for r in runs if r.key not in done}.values())

        def on_done(run: SweepRun, metrics: Mapping[str, float] | None, error: str | None) -> None:
            self.store.write(run, metrics, error)
            self.update()

        if todo:
            self.execute(todo, on_done)
        out: dict[str, dict[str, float] | str] = {}
        for run in runs:
            record = self.store.read(run.key)
            if record is not None:
                out[run.key] = {k: float(v) for k, v in record["metrics"].items()}
            else:
                failed = self.store.read(run.key, failed=True)
                out[run.key] = str((failed or {}).get("error", "the run did not finish"))
        return out
