"""The run store of a sweep folder: one file per finished run, written so that none is half-written.

As soon as a run finishes, its metrics are written to ``runs/<key>.json`` in the sweep's folder:
to a temporary name first, flushed to disk and renamed, so a file either is complete or does not
exist. A run that raises, or whose worker dies, is written to ``failed/<key>.json`` with its cell
and seed. A sweep folder holds a manifest (``sweep.json``) written when it is created: a folder
is used only when it is new, empty, or a folder of the same sweep. Temporary files (and the
report's temporary folder) carry this host and the writer's pid, so a starting sweep removes only
those of writers that are dead (a sweep killed outright leaves them; its workers die with it:
:func:`lobbysim.running.workers.die_with_parent`). A write that fails (a full disk) removes its
temporary file and names the file it was writing.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lobbysim import RESULTS_VERSION, __version__
from lobbysim.experiments.sweeps import Sweep, SweepError, SweepRun
from lobbysim.records.outputs import HOST, creation_problem
from lobbysim.running.workers import process_alive

MANIFEST = "sweep.json"  # written when a sweep folder is created; identifies its sweep


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
    write_text(folder / MANIFEST, json.dumps(record, indent=1) + "\n")


def tmp_name(target: Path) -> Path:
    """Return the temporary name a file is written under before it is renamed to ``target``."""
    return target.with_name(f".tmp-{HOST}-{os.getpid()}-{target.name}")


def abandoned(tmp: Path) -> bool:
    """Whether a temporary file's writer is gone: a process of this host that has ended.

    Another process's file, still being written (a second invocation of the same sweep), and
    files of other hosts sharing the folder are left alone; a left-over one is ignored anyway.
    """
    parts = tmp.name.split("-", 3)
    if len(parts) != 4 or parts[1] != HOST or not parts[2].isdigit():
        return False
    return int(parts[2]) != os.getpid() and not process_alive(int(parts[2]))


class RunStore:
    """The per-run result files of a sweep folder: ``runs/`` and ``failed/``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.done_dir = folder / "runs"
        self.failed_dir = folder / "failed"
        self.done_dir.mkdir(parents=True, exist_ok=True)
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        for leftover in itertools.chain(
            folder.glob(".tmp-*"), self.done_dir.glob(".tmp-*"), self.failed_dir.glob(".tmp-*")
        ):
            if abandoned(leftover):  # a killed writer's partial file (or report folder)
                if leftover.is_dir():
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
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
        tmp = tmp_name(target)
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(record, fh, sort_keys=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException as exc:
            _give_up(tmp, target, exc)
            raise
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


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so it is whole or as it was."""
    tmp = tmp_name(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException as exc:
        _give_up(tmp, path, exc)
        raise


def _give_up(tmp: Path, target: Path, exc: BaseException) -> None:
    """Remove the temporary file of a failed write; name ``target`` in an error that names the
    temporary file or no file (a full disk: ``write()`` says no file)."""
    tmp.unlink(missing_ok=True)
    if isinstance(exc, OSError) and exc.filename in (None, str(tmp)):
        exc.filename = str(target)
