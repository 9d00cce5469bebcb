"""Files: a full disk or an output that cannot be written is one line naming the path, exit status
2, no temporary folder left (in memory, streamed through the record writer process or by worker
processes, and in a sweep); and ``load_run`` verifies what it reads (a manifest of rows, sizes and
checksums written with the files; a row cut short, a file that is not UTF-8 or a missing value
named with its file and line, with or without a manifest)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import lobbysim
from lobbysim.cli.main import main
from lobbysim.commands.run import run
from lobbysim.experiments import store
from lobbysim.records import writer as record_writer
from lobbysim.records.files import RecordFileError
from lobbysim.records.outputs import OutputFileError, storage_problem
from tests.hardening import helpers

# the small lobby of tests/helpers.py, run a little longer
SMALL = helpers.SMALL.replace("horizon: 40\nwarmup: 5\n", "horizon: 120\nwarmup: 10\n")
STREAMED = SMALL.replace("horizon: 120", "horizon: 600").replace(
    "records: {ratings_every: 20}", "records: {ratings_every: 20, stream: true}"
)
COMPARE = ["--policies", "draw_chance,fifo", "-q"]
FREE = 32 * 1024  # bytes left free on the full disk: the run starts, its records do not fit


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "small.yaml").write_text(SMALL)
    (tmp_path / "streamed.yaml").write_text(STREAMED)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def full_disk(work: Path) -> Iterator[Path]:
    """A real, nearly full file system: a 1 MB tmpfs with all but ``FREE`` bytes taken."""
    disk = work / "disk"
    disk.mkdir()
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        with open(disk / "ballast", "wb") as fh:
            fh.write(b"\0" * (free - FREE))
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _one_line(err: str, *parts: str) -> None:
    assert err.count("\n") == 1 and err.startswith("lobbysim: error: "), err
    assert "Traceback" not in err, err
    for part in parts:
        assert part in err, err


@pytest.mark.parametrize(
    ("scenario", "jobs", "writer"),
    [
        ("small.yaml", "1", False),  # records in memory, written at the end
        ("streamed.yaml", "1", True),  # streamed through the record writer process
        ("streamed.yaml", "2", False),  # streamed by the worker processes
    ],
    ids=["in-memory", "streamed-writer-process", "streamed-workers"],
)
def test_a_full_disk_is_one_line_naming_the_file_and_leaves_nothing(
    full_disk: Path,
    scenario: str,
    jobs: str,
    writer: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = []
    real_sink = record_writer.BackgroundSink.__init__

    def counted(self: record_writer.BackgroundSink, *args: object) -> None:
        started.append(self)
        real_sink(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(record_writer, "background_writer_available", lambda: writer)
    monkeypatch.setattr(record_writer.BackgroundSink, "__init__", counted)
    out = full_disk / "o"
    assert main(["compare", scenario, *COMPARE, "--jobs", jobs, "--out", str(out)]) == 2
    _one_line(capsys.readouterr().err, f"{out}{os.sep}", "no space left on the device")
    assert [p.name for p in full_disk.iterdir()] == ["ballast"]  # no folder, no temporary one
    assert bool(started) == writer


@pytest.mark.parametrize(
    ("number", "says"),
    [
        (errno.ENOSPC, "no space left on the device"),
        (errno.EDQUOT, "disk quota exceeded"),
        (errno.EACCES, "permission denied"),
        (errno.EROFS, "read-only file system"),
    ],
)
def test_storage_errors_are_one_line_naming_the_output_exit_2(
    work: Path,
    number: int,
    says: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Simulated (the lowest write of the tables raises as a full disk's write() does, naming no
    file): the output folder is named."""

    def fail(self: pd.DataFrame, *args: object, **kwargs: object) -> None:
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(pd.DataFrame, "to_csv", fail)
    assert main(["run", "small.yaml", "--jobs", "1", "-q", "--out", "o"]) == 2
    _one_line(capsys.readouterr().err, f"lobbysim: error: o: {says}")
    assert not list(work.glob("o*"))


def test_a_full_disk_stops_a_sweep_with_one_line_and_no_temporary_file(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    argv = ["sweep", "small.yaml", "--grid", "matchmaker.tick=0.5,1", "-q", "--out", "s"]
    with monkeypatch.context() as patch:
        patch.setattr(store.os, "fsync", full)
        assert main([*argv, "--jobs", "2"]) == 2
    _one_line(capsys.readouterr().err, "error: s/runs/", ".json: no space left on the device")
    assert not list((work / "s").rglob(".tmp-*"))
    assert main([*argv, "--jobs", "1"]) == 0  # resumed once there is space


def test_the_record_writer_process_reports_the_error_number_and_file(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    (blocked / "games.csv").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as caught:
        record_writer.open_sink(blocked, "csv", background=True)
    assert caught.value.errno == errno.EISDIR
    assert caught.value.filename == str(blocked / "games.csv")
    full = OSError(errno.ENOSPC, "No space left on device", str(blocked / "games.csv"))
    expected = f"{blocked / 'games.csv'}: no space left on the device (the disk is full)"
    assert storage_problem(full) == expected


# --- load_run verifies what it reads -------------------------------------------------------------


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A finished comparison's folder, records in memory, and one with streamed records."""
    root = tmp_path_factory.mktemp("folders")
    (root / "small.yaml").write_text(SMALL)
    (root / "streamed.yaml").write_text(STREAMED.replace("horizon: 600", "horizon: 120"))
    made = {}
    for name in ("small", "streamed"):
        made[name], _ = run(
            root / f"{name}.yaml",
            policies=["draw_chance", "fifo"],
            out=root / name,
            jobs=1,
            report=False,
            progress=False,
        )
    return made


def _copy(folder: Path, tmp_path: Path, manifests: bool = True) -> Path:
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    if not manifests:  # as written before manifests
        for manifest in copy.rglob("manifest.json"):
            manifest.unlink()
    return copy


def _cut(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def test_an_intact_folder_loads_with_or_without_its_manifests(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    for name, folder in folders.items():
        assert (folder / "manifest.json").is_file()
        where = ["draw_chance"] if name == "small" else ["draw_chance", "rep-1"]
        assert (folder / "records" / Path(*where) / "manifest.json").is_file()
        loaded = lobbysim.load_run(folder)
        old = lobbysim.load_run(_copy(folder, tmp_path / name, manifests=False))
        pd.testing.assert_frame_equal(loaded.summary, old.summary)
        for kind in ("games", "waits", "players"):
            frame = loaded.records("fifo", kind)
            assert len(frame) > 0
            pd.testing.assert_frame_equal(frame, old.records("fifo", kind))


@pytest.mark.parametrize("manifests", [True, False], ids=["manifest", "no-manifest"])
def test_a_records_file_cut_mid_row_is_named_with_its_line(
    folders: dict[str, Path], tmp_path: Path, manifests: bool
) -> None:
    folder = _copy(folders["small"], tmp_path, manifests)
    games = folder / "records" / "draw_chance" / "games.csv"
    lines = games.read_bytes().count(b"\n")
    _cut(games, games.stat().st_size - 30)  # the last row loses its end
    loaded = lobbysim.load_run(folder)
    with pytest.raises(ValueError, match=rf"games\.csv: .*line {lines} is cut short"):
        loaded.records("draw_chance", "games")


def test_whole_rows_lost_are_found_by_the_manifest(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    folder = _copy(folders["streamed"], tmp_path)
    waits = folder / "records" / "fifo" / "rep-1" / "waits.csv"
    text = waits.read_bytes()
    _cut(waits, text.rindex(b"\n", 0, len(text) - 1) + 1)  # the last row, cleanly
    with pytest.raises(RecordFileError, match=r"rep-1/waits\.csv: cut short since it was written"):
        lobbysim.load_run(folder).records("fifo", "waits")


@pytest.mark.parametrize("manifests", [True, False], ids=["manifest", "no-manifest"])
def test_a_truncated_summary_is_named(
    folders: dict[str, Path], tmp_path: Path, manifests: bool
) -> None:
    folder = _copy(folders["small"], tmp_path, manifests)
    summary = folder / "summary.csv"
    _cut(summary, summary.stat().st_size // 2)
    with pytest.raises(ValueError, match=r"summary\.csv: .*line \d+ is cut short"):
        lobbysim.load_run(folder)
    if manifests:  # a clean cut at a line end is caught too
        text = (folders["small"] / "summary.csv").read_bytes()
        summary.write_bytes(text[: text.index(b"\n", len(text) // 2) + 1])
        with pytest.raises(OutputFileError, match=r"summary\.csv: cut short since it was written"):
            lobbysim.load_run(folder)


@pytest.mark.parametrize("manifests", [True, False], ids=["manifest", "no-manifest"])
@pytest.mark.parametrize("name", ["records/draw_chance/waits.csv", "replications.csv"])
def test_a_file_that_is_not_utf8_is_named_with_its_line(
    folders: dict[str, Path], tmp_path: Path, manifests: bool, name: str
) -> None:
    folder = _copy(folders["small"], tmp_path, manifests)
    path = folder / name
    data = bytearray(path.read_bytes())
    at = data.index(b"\n", data.index(b"\n") + 1) + 3  # the third line's third byte
    data[at] = 0xFF  # the same size: only decoding finds it (the records have no checksum)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as caught:
        lobbysim.load_run(folder).records("draw_chance", "waits")
    message = str(caught.value)
    assert not isinstance(caught.value, UnicodeDecodeError)
    assert str(path) in message
    if not (manifests and name == "replications.csv"):  # a table's checksum speaks first
        assert "line 3 is not UTF-8 (byte 0xff at column 3)" in message


def test_a_missing_value_where_every_row_has_one_is_named_with_its_line(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    folder = _copy(folders["small"], tmp_path, manifests=False)
    games = folder / "records" / "draw_chance" / "games.csv"
    lines = games.read_text().splitlines(keepends=True)
    fields = lines[4].split(",")
    fields[3] = ""  # the game's end
    lines[4] = ",".join(fields)
    games.write_text("".join(lines))
    with pytest.raises(RecordFileError, match=r"games\.csv: line 5 has no end"):
        lobbysim.load_run(folder).records("draw_chance", "games")
    replications = folder / "replications.csv"
    lines = replications.read_text().splitlines(keepends=True)
    lines[1] = "," + lines[1].split(",", 1)[1]  # no policy
    replications.write_text("".join(lines))
    with pytest.raises(OutputFileError, match=r"replications\.csv: line 2 has no policy"):
        lobbysim.load_run(folder)
