"""Output folders written atomically: complete or absent, never half-written; verified when read.

Everything is written into a sibling temporary folder ``<out>.tmp-<pid>`` that is renamed to
``out`` when complete and removed on any error or interruption (Ctrl-C included), so a folder that
looks complete is complete. A run killed outright (SIGKILL, the OOM killer) cannot remove its
temporary folder: the next run to the same ``out`` removes the temporary folders of runs of this
host that have ended (:func:`remove_stale_temporaries`), and says so if it cannot.

Before the rename, a manifest (``manifest.json``) is written with the size and SHA-256 of every
file at the folder's top, and the number of rows of each CSV file; record folders hold one of
their own, written with the records (:mod:`lobbysim.records.files`). Reading a folder back checks
its files against it (:func:`verify_file`), and, with or without one, that a CSV file does not
end mid-row (:func:`csv_problem`), so that a cut or damaged file is named, with its line, instead
of loading with missing values; so is a file that is not UTF-8 (:func:`decode_problem`).

A full disk or an output that cannot be written (ENOSPC, EDQUOT, EACCES, EROFS) is reported as
one line naming the path (:func:`storage_problem`); the temporary folder is removed.

A single file a user names (``schema --out``, ``rules export --out``, ``log export --out``,
``calibrate --to``, the files ``init`` copies) follows one rule, :func:`write_output_file`: the
target is checked before any work starts (:func:`output_file_problem`: a missing folder, a
folder, a symbolic link, a device, a pipe or a socket are refused; an existing file too, unless
``--force`` replaces it, a regular file only); the file is written to a temporary file in the
target's folder and moved into place only if the target still does not exist (a hard link, which
fails on an existing name) or, with ``force``, is still a regular file. A link is never
followed or replaced.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import itertools
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lobbysim.running.workers import process_alive

#: The manifest of an output folder: its files' sizes, row counts and (at the top) SHA-256.
MANIFEST = "manifest.json"
#: A short hash of this host's name: temporary names carry it, so that a folder shared between
#: hosts never loses another host's live temporary files.
HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
#: Inside a temporary output folder while it is written: the host and pid of its writer.
WRITER_MARK = ".lobbysim-writer"

#: The errors of the storage an output goes to: reported as one line (:func:`storage_problem`).
STORAGE_ERRORS: dict[int, str] = {
    errno.ENOSPC: "no space left on the device (the disk is full)",
    errno.EACCES: "permission denied",
    errno.EROFS: "read-only file system",
}
if hasattr(errno, "EDQUOT"):
    STORAGE_ERRORS[errno.EDQUOT] = "disk quota exceeded"


class OutputFileError(ValueError):
    """A file of an output folder is cut, changed or unreadable; the message names it."""


class OutputTargetError(ValueError):
    """A file a user named as an output cannot take it (:func:`output_file_problem`); one line
    naming the option and the path, exit status 2."""


def out_folder_problem(out: Path) -> str | None:
    """Return why ``out`` cannot receive a run's outputs, or None if it can (new or empty; a
    symbolic link is never followed)."""
    if out.is_symlink():
        return f"{out} is a symbolic link: not followed (name a new or empty folder)"
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


def storage_problem(exc: BaseException) -> str | None:
    """Return one line for an error of the storage (a full disk, a quota, an output that cannot
    be written: ENOSPC, EDQUOT, EACCES, EROFS) naming its path, or None for any other error."""
    if not isinstance(exc, OSError) or exc.errno not in STORAGE_ERRORS:
        return None
    where = exc.filename if exc.filename is not None else "the output"
    return f"{os.fsdecode(where)}: {STORAGE_ERRORS[exc.errno]}"


def _temporaries(out: Path) -> list[tuple[Path, int]]:
    """Return the temporary folders ``<out>.tmp-<pid>`` next to ``out``, with their pids."""
    prefix = f"{out.name}.tmp-"
    found = []
    for path in out.parent.glob(glob.escape(prefix) + "*"):
        pid = path.name[len(prefix) :]
        if pid.isdigit() and path.is_dir():
            found.append((path, int(pid)))
    return found


def remove_stale_temporaries(out: Path) -> list[str]:
    """Remove the temporary folders of runs to ``out`` that ended without removing them.

    A temporary folder ``<out>.tmp-<pid>`` is stale when its writer, a process of this host
    (:data:`WRITER_MARK`, or no mark: an older lobbysim), is no longer running (a kill -9, the
    OOM killer). Those of live processes and of other hosts are left alone.

    Returns:
        One line per stale folder that could not be removed, saying so (nothing is raised).
    """
    problems = []
    for path, pid in _temporaries(out):
        if pid != os.getpid() and process_alive(pid):
            continue
        try:
            host = json.loads((path / WRITER_MARK).read_text(encoding="utf-8")).get("host", HOST)
        except (OSError, ValueError, AttributeError):
            host = HOST
        if host != HOST:
            continue
        try:
            shutil.rmtree(path)
        except OSError as exc:
            problems.append(
                f"{path}: the temporary folder of an ended run could not be removed "
                f"({exc.strerror}); remove it by hand"
            )
    return problems


def warn(line: str) -> None:
    """Print a warning line on standard error, as the command line does."""
    print(f"lobbysim: warning: {line}", file=sys.stderr, flush=True)


def write_atomically(out: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a fresh temporary folder, write its manifest, then rename it to
    ``out``.

    Stale temporary folders of earlier runs to ``out`` are removed first
    (:func:`remove_stale_temporaries`; a warning line for one that cannot be).

    Raises:
        FileExistsError: if ``out`` became non-empty meanwhile.
        OSError: a full disk or an output that cannot be written, naming the file (its name
            in ``out``) or ``out`` where the error does not say (:func:`storage_problem`).
    """
    for line in remove_stale_temporaries(out):
        warn(line)
    created = [p for p in (out.parent, *out.parent.parents) if not p.exists()]
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        mark = tmp / WRITER_MARK
        mark.write_text(json.dumps({"host": HOST, "pid": os.getpid()}), encoding="utf-8")
        write(tmp)
        mark.unlink()
        write_manifest(tmp, top_level_entries(tmp))
        problem = out_folder_problem(out)  # still new or empty after the run
        if problem is not None:
            raise FileExistsError(problem)
        if out.exists():
            out.rmdir()  # empty; os.replace onto a directory is not portable
        os.replace(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        for folder in created:  # innermost first; only if still empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        if isinstance(exc, OSError) and storage_problem(exc) is not None:
            named = _named(exc, tmp, out)
            if named is not exc:
                raise named from exc
        raise
    return out


def _named(exc: OSError, tmp: Path, out: Path) -> OSError:
    """Return ``exc`` naming the file in ``out`` it was about (``out`` if it names none)."""
    name = os.fsdecode(exc.filename) if exc.filename is not None else None
    if name is None:
        where = str(out)
    elif name == str(tmp) or name.startswith(str(tmp) + os.sep):
        where = str(out) + name[len(str(tmp)) :]
    else:
        return exc
    return OSError(exc.errno, exc.strerror, where)


# --- single output files ------------------------------------------------------------------------

#: The errors of :func:`os.link` on a file system without hard links: the target is then placed
#: by a rename after a last check (a file made in between by another process is lost).
_NO_HARD_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, errno.EOPNOTSUPP}
_TEMPORARY_NUMBERS = itertools.count()


def output_file_problem(path: Path, *, force: bool = False) -> str | None:
    """Return why the file ``path`` cannot be written as an output, or None if it can.

    Refused: a symbolic link (never followed nor replaced), a folder, anything else that is not
    a regular file (a device, a pipe, a socket), an existing file unless ``force``, and a
    folder that does not exist or does not take new files (tried for real, as permissions
    alone do not tell).
    """
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"{path}: cannot look at it ({exc.strerror or exc})"
    if mode is not None:
        if stat.S_ISLNK(mode):
            return f"{path} is a symbolic link: not followed or replaced (name another file)"
        if stat.S_ISDIR(mode):
            return f"{path} is a folder: name the file to write"
        if not stat.S_ISREG(mode):
            return f"{path} is not a regular file (a device, a pipe or a socket): not written"
        if not force:
            return f"{path} exists already: not overwritten (give --force to replace it)"
    folder = path.parent
    if not folder.exists():
        return f"the folder {folder} does not exist (make it first)"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    try:
        _remove_temporary(_new_temporary(path))
    except OSError as exc:
        return f"cannot write in {folder}: {exc.strerror or exc}"
    return None


def write_output_file(
    path: str | os.PathLike[str],
    write: Callable[[Path], object],
    *,
    force: bool = False,
    option: str = "--out",
) -> Path:
    """Write the output file ``path`` by ``write(tmp)`` on a temporary file in its folder, then
    move it into place; return ``path``.

    The target is checked first (:func:`output_file_problem`) and again when the file is
    placed: without ``force`` it is linked into place, which fails if a file of that name was
    made meanwhile; with ``force`` it replaces the target only if that is (still) a regular
    file. The temporary file is removed on any error or interruption.

    Raises:
        OutputTargetError: ``option``, then why the target cannot take the file, in one line.
        OSError: the file cannot be written (a full disk: :func:`storage_problem`).
    """
    target = Path(path)
    problem = output_file_problem(target, force=force)
    if problem is not None:
        raise OutputTargetError(f"{option}: {problem}")
    tmp = _new_temporary(target)
    try:
        write(tmp)
        if force:
            problem = output_file_problem(target, force=True)
            if problem is not None:
                raise OutputTargetError(f"{option}: {problem}")
            os.replace(tmp, target)
        else:
            _link_new(tmp, target, option)
    finally:
        _remove_temporary(tmp)
    return target


def write_output_text(
    path: str | os.PathLike[str], text: str, *, force: bool = False, option: str = "--out"
) -> Path:
    """Write ``text`` (UTF-8) as the output file ``path`` (:func:`write_output_file`)."""
    return write_output_file(
        path, lambda tmp: tmp.write_text(text, encoding="utf-8"), force=force, option=option
    )


def _new_temporary(target: Path) -> Path:
    """Create an empty temporary file next to ``target`` (a new name, the umask's mode)."""
    while True:
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{next(_TEMPORARY_NUMBERS)}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


def _remove_temporary(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        tmp.unlink()


def _link_new(tmp: Path, target: Path, option: str) -> None:
    """Give ``tmp``'s file the name ``target`` only if no file has it (no clobbering, even of a
    file made since the check)."""
    try:
        os.link(tmp, target, follow_symlinks=False)
        return
    except FileExistsError:
        raise OutputTargetError(
            f"{option}: {target} was made while lobbysim wrote it: not overwritten"
        ) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    problem = output_file_problem(target)
    if problem is not None:
        raise OutputTargetError(f"{option}: {problem}")
    os.rename(tmp, target)


# --- manifests -----------------------------------------------------------------------------------


def file_digest(path: Path) -> str:
    """Return the SHA-256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def csv_rows(path: Path) -> int:
    """Return the rows of a CSV file below its header: its lines less one (no quoted line
    breaks in lobbysim's tables)."""
    lines = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
    return max(lines - 1, 0)


def top_level_entries(folder: Path) -> dict[str, dict[str, Any]]:
    """Return the manifest entries of the files at ``folder``'s top: size, SHA-256, and rows
    for a CSV file."""
    entries: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name == MANIFEST:
            continue
        entry: dict[str, Any] = {"bytes": path.stat().st_size, "sha256": file_digest(path)}
        if path.suffix == ".csv":
            entry["rows"] = csv_rows(path)
        entries[path.name] = entry
    return entries


def write_manifest(folder: Path, files: Mapping[str, Mapping[str, Any]]) -> None:
    """Write ``folder``'s manifest: per file its ``bytes``, and its ``rows`` and ``sha256`` if
    given."""
    from lobbysim import __version__

    record = {"lobbysim": __version__, "files": {name: dict(e) for name, e in files.items()}}
    path = folder / MANIFEST
    tmp = path.with_name(f".tmp-{HOST}-{os.getpid()}-{MANIFEST}")
    try:
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_manifest(folder: Path) -> None:
    """Remove ``folder``'s manifest, if any (its files are about to be rewritten)."""
    (folder / MANIFEST).unlink(missing_ok=True)


def read_manifest(folder: Path) -> dict[str, dict[str, Any]] | None:
    """Return the file entries of ``folder``'s manifest, or None if it has none (a folder
    written before manifests, or by a writer that did not finish).

    Raises:
        OutputFileError: the manifest itself cannot be read.
    """
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
        if not isinstance(files, dict):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutputFileError(f"{path}: the manifest cannot be read ({exc})") from None
    return files


def verify_file(path: Path, manifest: Mapping[str, Mapping[str, Any]] | None) -> None:
    """Check ``path`` against its manifest entry (size, and SHA-256 where recorded; a file the
    manifest does not list is not checked against it), and a CSV file for a last row cut short
    (:func:`csv_problem`).

    Raises:
        OutputFileError: naming the file (and the line, where one is at fault).
    """
    entry = None if manifest is None else manifest.get(path.name)
    if entry is not None:
        if not path.is_file():
            raise OutputFileError(f"{path}: missing; the folder's {MANIFEST} lists it")
        size = path.stat().st_size
        expected = entry.get("bytes")
        if expected is not None and size != expected:
            cut = csv_problem(path) if path.suffix == ".csv" else None
            how = "cut short" if size < expected else "changed"
            raise OutputFileError(
                f"{path}: {how} since it was written: {size} bytes, {expected} when written "
                f"({MANIFEST})" + (f"; {cut}" if cut else "")
            )
        if "sha256" in entry and file_digest(path) != entry["sha256"]:
            raise OutputFileError(
                f"{path}: changed since it was written: its SHA-256 is not the one in {MANIFEST}"
            )
    if path.suffix == ".csv":
        problem = csv_problem(path)
        if problem is not None:
            raise OutputFileError(f"{path}: {problem}")


def csv_problem(path: Path) -> str | None:
    """Return the line of a CSV file that is cut short (a last line without its line end: the
    file ends mid-row), or None."""
    size = path.stat().st_size
    if not size:
        return None
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return None
        fh.seek(0)
        lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
    return f"line {lines + 1} is cut short (the file ends mid-row, without a line end)"


def utf8_problem(path: Path) -> str | None:
    """Return the first line of ``path`` that is not UTF-8, with the byte, or None."""
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, start=1):  # no UTF-8 character holds a line end
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (
                    f"line {number} is not UTF-8 (byte 0x{line[exc.start]:02x} at column "
                    f"{exc.start + 1})"
                )
    return None


def decode_problem(path: Path, exc: UnicodeDecodeError) -> OutputFileError:
    """Return the error naming ``path`` and its first line that is not UTF-8 (``exc``: the
    error reading it)."""
    where = utf8_problem(path) or f"not UTF-8 ({exc.reason})"
    return OutputFileError(f"{path}: {where}")
