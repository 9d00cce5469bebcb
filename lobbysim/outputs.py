"""Output folders written atomically: complete or absent, never half-written.

Everything is written into a sibling temporary folder ``<out>.tmp-<pid>`` that is renamed to
``out`` when complete and removed on any error or interruption (Ctrl-C included), so a folder that
looks complete is complete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path


def out_folder_problem(out: Path) -> str | None:
    """Return why ``out`` cannot receive a run's outputs, or None if it can (new or empty)."""
    if out.exists():
        if not out.is_dir():
            return f"{out} exists and is not a folder"
        if any(out.iterdir()):
            return f"{out} exists and is not empty; refusing to write into it"
    return creation_problem(out)


def creation_problem(folder: Path) -> str | None:
    """Return why ``folder`` (or files in it) cannot be created here, or None if they can.

    Tried for real, as permissions alone do not tell (``/proc`` looks writable to root): a
    temporary folder is made and removed in the nearest existing parent, and nothing is left.
    """
    parent = folder
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot create {folder}: {parent} is not a folder"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".lobbysim-probe-", dir=parent))
    except OSError as exc:
        return f"cannot create {folder}: {parent} does not take new folders ({exc.strerror})"
    return None


def timestamped(base: Path, name: str, now: datetime | None = None) -> Path:
    """Return ``base/<name>-<UTC time>``, the default output folder of a run."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return base / f"{name}-{stamp}"


def write_atomically(out: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a fresh temporary folder, then rename it to ``out``.

    Raises:
        FileExistsError: if ``out`` became non-empty meanwhile.
    """
    created = [p for p in (out.parent, *out.parent.parents) if not p.exists()]
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        write(tmp)
        problem = out_folder_problem(out)  # still new or empty after the run
        if problem is not None:
            raise FileExistsError(problem)
        if out.exists():
            out.rmdir()  # empty; os.replace onto a directory is not portable
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for folder in created:  # innermost first; only if still empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return out
