"""Record files: CSV by default or Parquet, streamed or written at the end, read back exactly.

Parquet tests need pyarrow (the test extra installs it); without it they are skipped, and the
error a run gives without it is tested by hiding pyarrow.
"""

from __future__ import annotations

import importlib.util
import math
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lobbysim.cli.main import main
from lobbysim.experiments.simulation import SimulationResult, simulate
from lobbysim.records.files import CsvSink, csv_rows, csv_text, record_frame, write_frames
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS, record_schema
from lobbysim.records.writer import BackgroundSink, open_sink
from lobbysim.scenario import Scenario, load_scenario

HAVE_PYARROW = importlib.util.find_spec("pyarrow") is not None
NEEDS_PYARROW = pytest.mark.skipif(not HAVE_PYARROW, reason="needs pyarrow")
FORMATS = [
    "csv",
    pytest.param("parquet", marks=pytest.mark.skipif(not HAVE_PYARROW, reason="needs pyarrow")),
]
#: The columns that identify a row of each kind (streamed rows come in another order).
KEYS = {
    "games": ["game_id"],
    "participants": ["game_id", "player_id"],
    "waits": ["player_id", "enqueued"],
    "ratings": ["time", "rater", "player_id"],
    "players": ["player_id"],
}
#: A team game with few points: draws (no winner) among won games; a free-for-all: no teams.
MODES = {
    "team": {"mode": "team", "team_size": 2, "score_rate": 0.1},
    "ffa": {"mode": "ffa", "ffa_size": 4},
}


def scenario(mode: str, fmt: str, stream: bool = False) -> Scenario:
    return Scenario.from_dict(
        {
            "horizon": 150,
            "warmup": 10,
            "arrivals": {"name": "poisson", "rate": 3.0},
            "game": {**MODES[mode], "length": 8, "quit_rate": 0.03},
            "population": {
                "patience_mean": 2.0,
                "session_games_mean": 3,
                "registered_fraction": 0.8,
            },
            "records": {"ratings_every": 30, "stream": stream, "flush_rows": 100, "format": fmt},
        }
    )


def frames(result: SimulationResult) -> dict[str, pd.DataFrame]:
    return {kind: getattr(result, kind) for kind in RECORD_COLUMNS}


def test_the_in_memory_frames_have_the_schemas_dtypes() -> None:
    team = frames(simulate(scenario("team", "csv"), seed=5))
    schema = record_schema(teams=True)  # a team game's records: the schema's and TEAM_COLUMNS
    for kind, frame in team.items():
        assert list(frame.columns) == list(schema[kind])
    games = team["games"]
    # a nullable integer holding both: winners and drawn games (pandas alone makes it float)
    assert games.winner.dtype == "Int64" and games.winner.isna().any()
    assert games.winner.dropna().isin([0, 1]).all()
    assert games.stronger_side_won.dtype == "boolean"
    assert team["participants"].team.dtype == "Int64"
    assert team["participants"].player_id.dtype == "int64"
    assert team["players"].registered.dtype == "bool"
    ffa = frames(simulate(scenario("ffa", "csv"), seed=5))
    assert ffa["participants"].team.dtype == "Int64" and ffa["participants"].team.isna().all()
    assert ffa["games"].winner.dtype == "Int64" and ffa["games"].winner.isna().all()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_written_records_read_back_equal_the_in_memory_frames(
    mode: str, fmt: str, tmp_path: Path
) -> None:
    kept = frames(simulate(scenario(mode, fmt), seed=5))
    write_frames(kept, tmp_path, fmt)
    expected = sorted([*(f"{k}.{fmt}" for k in kept), "manifest.json"])
    assert sorted(p.name for p in tmp_path.iterdir()) == expected
    back = read_records(tmp_path)
    assert list(back) == list(RECORD_COLUMNS)
    for kind, frame in kept.items():
        assert len(frame) > 0, kind
        pd.testing.assert_frame_equal(back[kind], frame, check_dtype=True, check_exact=True)


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_streamed_records_equal_the_in_memory_frames_and_metrics(
    mode: str, fmt: str, tmp_path: Path
) -> None:
    kept = simulate(scenario(mode, fmt), seed=5)
    streamed = simulate(scenario(mode, fmt, stream=True), seed=5, records_dir=tmp_path)
    assert streamed.games is None and streamed.records_dir == tmp_path
    files = sorted(p.suffix for p in tmp_path.iterdir() if p.name != "manifest.json")
    assert files == [f".{fmt}"] * len(RECORD_COLUMNS)
    # the metrics are computed from the files: exactly those of the run kept in memory
    assert streamed.metrics.keys() == kept.metrics.keys()
    for name, value in kept.metrics.items():
        other = streamed.metrics[name]
        assert other == value or (math.isnan(value) and math.isnan(other)), name
    back = read_records(tmp_path, fmt=fmt)
    for kind, frame in frames(kept).items():
        assert len(back[kind]) > 100, kind  # more than one flush
        a = back[kind].sort_values(KEYS[kind], ignore_index=True)
        b = frame.sort_values(KEYS[kind], ignore_index=True)
        pd.testing.assert_frame_equal(a, b, check_dtype=True, check_exact=True)


def test_read_records_reads_only_the_columns_and_kinds_asked(tmp_path: Path) -> None:
    kept = frames(simulate(scenario("team", "csv"), seed=5))
    write_frames(kept, tmp_path, "csv")
    back = read_records(tmp_path, ["games", "players"], columns={"games": ["winner", "game_id"]})
    assert list(back) == ["games", "players"]
    assert list(back["games"].columns) == ["game_id", "winner"]  # in the schema's order
    pd.testing.assert_frame_equal(back["games"], kept["games"][["game_id", "winner"]])
    pd.testing.assert_frame_equal(back["players"], kept["players"])
    (tmp_path / "waits.csv").unlink()
    assert "waits" not in read_records(tmp_path)
    with pytest.raises(KeyError, match="no column 'winer'"):
        read_records(tmp_path, columns={"games": ["winer"]})


SPECIAL_FLOATS = [0.0, -0.0, 1e16, 1e-5, 5e-324, math.inf, -math.inf, math.nan, 1 / 3, 1e22]
PLAIN_TEXTS = ["matched", "NA", "nan", "None", " x "]  # written as they are
TEXTS = [*PLAIN_TEXTS, "with, comma", 'with "quotes"', "two\nlines", ""]  # some need quotes


def random_value(rng: random.Random, dtype: str) -> Any:
    """A value the records could hold in a column of ``dtype``, including odd ones."""
    if dtype == "float64":
        return rng.choice(
            [
                rng.gauss(0, 1) * 10 ** rng.randint(-20, 20),
                rng.randint(-5, 10**12),  # an int in a float column, as at time 0
                None,
                *SPECIAL_FLOATS,
            ]
        )
    if dtype == "int64":
        return rng.choice([rng.randint(-5, 2**62), 0, True])
    if dtype == "Int64":
        return rng.choice([rng.randint(0, 1), None, math.nan, 1.0])
    if dtype == "bool":
        return rng.random() < 0.5
    if dtype == "boolean":
        return rng.choice([True, False, None])
    return rng.choice(TEXTS)


def random_rows(rng: random.Random, kind: str, n: int) -> list[tuple[Any, ...]]:
    dtypes = list(RECORD_COLUMNS[kind].values())
    # half the chunks hold values of their column's type and text needing no quotes (written
    # column by column), the others odd values too (some through the csv module)
    odd = rng.random() < 0.5
    rows = []
    for _ in range(n):
        row = []
        for dtype in dtypes:
            value = random_value(rng, dtype)
            if not odd:
                value = rng.choice(PLAIN_TEXTS) if dtype == "str" else typed(dtype, value)
            row.append(value)
        rows.append(tuple(row))
    return rows


def typed(dtype: str, value: Any) -> Any:
    """The value as the recorder would give it: of its column's Python type."""
    if dtype == "float64":
        return math.nan if value is None else float(value)
    if dtype == "int64":
        return int(value)
    if dtype == "Int64":
        return None if value is None or value != value else int(value)
    return value


@pytest.mark.slow
def test_the_csv_sink_writes_what_pandas_writes_and_reads_back_exactly(tmp_path: Path) -> None:
    rng = random.Random(5)
    for trial in range(40):
        folder = tmp_path / str(trial)
        sink = CsvSink(folder)
        written: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in RECORD_COLUMNS}
        for _ in range(3):
            kind = rng.choice(list(RECORD_COLUMNS))
            rows = random_rows(rng, kind, rng.randint(1, 40))
            sink(kind, rows)
            written[kind] += rows
        back = read_records(folder)
        for kind, rows in written.items():
            expected = record_frame(kind, rows)
            text = sink.path(kind).read_text(encoding="utf-8")
            assert text == expected.to_csv(index=False), (trial, kind, rows)
            pd.testing.assert_frame_equal(back[kind], expected, check_exact=True)


def test_csv_text_formats_each_column_as_pandas_does() -> None:
    games = [
        (1, "1v1", 0, 1.5, 0.1, 1e-05, 1e16, True, 1),  # an int start: written as a float
        (2, "ffa", 1.0, 2.0, math.nan, -0.0, math.inf, None, None),  # missing: empty fields
    ]
    assert csv_text("games", games) == (
        "1,1v1,0.0,1.5,0.1,1e-05,1e+16,True,1\n2,ffa,1.0,2.0,,-0.0,inf,,\n"
    )
    quoted = [(1, 0.5, 1.0, 'a "b", c', 0.5)]  # through the csv module, quoted as pandas does
    assert csv_text("waits", quoted) == '1,0.5,1.0,"a ""b"", c",0.5\n'
    assert csv_text("waits", []) == ""


def test_csv_rows_are_the_rows_themselves_when_no_value_needs_converting() -> None:
    rows = [
        (1, "1v1", 0.5, 1.5, 0.1, 0.2, 0.3, True, 1),
        (2, "ffa", 1.0, 2.0, 0.1, 0.2, 0.3, None, None),
    ]
    assert csv_rows("games", rows) is rows
    converted = [(1, 0, 2.0, "matched", math.nan)]  # an int time, NaN: converted
    assert list(csv_rows("waits", converted)) == [(1, 0.0, 2.0, "matched", None)]
    with pytest.raises(ValueError, match="games records have 9 columns"):
        csv_rows("games", [(1, 2)])


@pytest.mark.skipif(not HAVE_PYARROW, reason="needs pyarrow")
def test_the_parquet_sink_reads_back_exactly(tmp_path: Path) -> None:
    rng = random.Random(6)
    sink = open_sink(tmp_path, "parquet")
    written: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in RECORD_COLUMNS}
    for _ in range(12):
        kind = rng.choice(list(RECORD_COLUMNS))
        rows = random_rows(rng, kind, rng.randint(1, 40))
        sink(kind, rows)
        written[kind] += rows
    sink.close()
    sink.close()  # again: nothing
    back = read_records(tmp_path)
    for kind, rows in written.items():
        pd.testing.assert_frame_equal(back[kind], record_frame(kind, rows), check_exact=True)


@pytest.mark.parametrize("fmt", ["csv", pytest.param("parquet", marks=NEEDS_PYARROW)])
def test_the_background_writer_writes_what_the_sink_writes(tmp_path: Path, fmt: str) -> None:
    """The writer process gets the rows down a pipe and writes the same files, byte for byte."""
    rng = random.Random(7)
    batches = []
    for _ in range(30):
        kind = rng.choice(list(RECORD_COLUMNS))
        batches.append((kind, random_rows(rng, kind, rng.randint(1, 400))))
    sinks = {
        "inline": open_sink(tmp_path / "inline", fmt, background=False),
        "background": open_sink(tmp_path / "background", fmt, background=True),
    }
    assert isinstance(sinks["background"], BackgroundSink)
    assert not isinstance(sinks["inline"], BackgroundSink)
    for sink in sinks.values():
        for kind, rows in batches:
            sink(kind, rows)
        sink.close()
        sink.close()  # again: nothing
    for kind in RECORD_COLUMNS:
        inline = sinks["inline"].path(kind).read_bytes()
        assert sinks["background"].path(kind).read_bytes() == inline, kind
        if fmt == "csv":
            assert inline.count(b"\n") > 1


def test_the_background_writer_reports_what_went_wrong(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    (blocked / "games.csv").mkdir(parents=True)  # a folder where a file must go
    with pytest.raises(OSError, match=r"writing the records: IsADirectoryError: .*games\.csv"):
        open_sink(blocked, "csv", background=True)
    gone = tmp_path / "gone"
    sink = open_sink(gone, "csv", background=True)
    sink("waits", [(1, 0.0, 1.0, "matched", 1.0)])
    sink.close()
    sink = open_sink(gone, "csv", background=True)
    shutil.rmtree(gone)  # the folder goes while the run streams into it
    with pytest.raises(OSError, match="writing the records: FileNotFoundError"):
        for _ in range(50):
            sink("waits", [(1, 0.0, 1.0, "matched", 1.0)])
            time.sleep(0.01)
        sink.close()
    sink.close()  # closed already: nothing


SMALL = """\
name: small
horizon: 60
warmup: 10
seed: 3
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 8}
records: {ratings_every: 30}
"""


def test_a_run_writes_csv_records_by_default(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    out = tmp_path / "out"
    assert main(["run", str(path), "--replications", "1", "--out", str(out), "--jobs", "1"]) == 0
    names = sorted(p.name for p in (out / "records" / "draw_chance").iterdir())
    assert names == sorted([*(f"{kind}.csv" for kind in RECORD_COLUMNS), "manifest.json"])
    assert "format" not in load_scenario(out / "scenario.yaml").to_dict()["records"]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_PYARROW, reason="needs pyarrow")
def test_records_format_parquet_from_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    out = tmp_path / "out"
    args = ["--replications", "1", "--jobs", "1", "--records-format", "parquet"]
    assert (
        main(["compare", str(path), "--policies", "draw_chance,fifo", "--out", str(out), *args])
        == 0
    )
    for policy in ("draw_chance", "fifo"):
        names = sorted(p.name for p in (out / "records" / policy).iterdir())
        assert names == sorted([*(f"{kind}.parquet" for kind in RECORD_COLUMNS), "manifest.json"])
    # the folder's scenario repeats the run as it was
    assert load_scenario(out / "scenario.yaml").records.format == "parquet"
    back = read_records(out / "records" / "draw_chance")
    assert list(back) == list(RECORD_COLUMNS) and len(back["games"]) > 0
    assert back["games"].winner.dtype == "Int64" and back["games"].game_id.dtype == "int64"


def hide_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)  # import pyarrow now raises ImportError


@pytest.mark.parametrize(
    ("command", "how"),
    [
        (["run"], ["--records-format", "parquet"]),
        (["run"], ["--set", "records.format=parquet"]),
        (["compare", "--policies", "fifo,random"], ["--records-format", "parquet"]),
        (["sweep", "--grid", "game.length=6,8"], ["--records-format", "parquet"]),
    ],
)
def test_parquet_without_pyarrow_is_one_line_exit_2_and_no_folder(
    command: list[str],
    how: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hide_pyarrow(monkeypatch)
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    out = tmp_path / "out"
    args = [command[0], str(path), *command[1:], "--out", str(out), "--jobs", "1", *how]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "records.format" in err[0] and "pip install 'lobbysim[parquet]'" in err[0], err
    assert not out.exists() and not list(tmp_path.glob("out*"))
    with pytest.raises(ImportError, match=r"lobbysim\[parquet\]"):
        simulate(scenario("ffa", "parquet", stream=True), seed=1, records_dir=tmp_path / "r")


def test_records_format_is_checked_and_left_out_of_the_plain_data_at_its_default() -> None:
    from lobbysim.validation import ScenarioError

    with pytest.raises(ScenarioError, match="did you mean 'parquet'"):
        Scenario.from_dict({"records": {"format": "parket"}})
    # csv: the plain data (and a sweep's run keys) as before the field existed
    assert "format" not in Scenario().to_dict()["records"]
    parquet = Scenario.from_dict({"records": {"format": "parquet"}})
    assert parquet.to_dict()["records"]["format"] == "parquet"
    assert Scenario.from_dict(parquet.to_dict()) == parquet


def test_a_writer_left_open_does_not_hold_up_the_exit(tmp_path: Path) -> None:
    """A script that never closes its background sink still exits, its files complete.

    multiprocessing waits for its children at exit, and the writer (which ignores SIGTERM)
    waits for rows until its pipe closes: the sink closes itself at exit first.
    """
    script = (
        "from pathlib import Path\n"
        "from lobbysim.records.writer import open_sink\n"
        f"sink = open_sink(Path({str(tmp_path)!r}), 'csv', background=True)\n"
        "sink('waits', [(1, 0.0, 1.0, 'matched', 1.0)])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=60, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "waits.csv").read_text().splitlines()[1:] == ["1,0.0,1.0,matched,1.0"]


def test_a_batch_cut_by_a_signal_does_not_hang_the_stop(tmp_path: Path) -> None:
    """SIGTERM can cut a batch half-sent down the writer's pipe (a signal handler raising inside
    a write): the writer then waits for the rest of it forever, and a stop that waited for the
    writer to finish hung (CI saw it once in six). abort() stops the writer at once, and leaves
    no manifest, so the files never load as a run."""
    import os
    import struct

    sink = open_sink(tmp_path, "csv", background=True)
    assert isinstance(sink, BackgroundSink)
    sink("waits", [(1, 0.0, 1.0, "matched", 1.0)])
    # the length header of a 1,000-byte message and 10 bytes of it, as a cut send leaves them
    os.write(sink._conn.fileno(), struct.pack("!i", 1000) + b"x" * 10)
    started = time.monotonic()
    sink.abort()
    assert time.monotonic() - started < 10
    assert not sink._process.is_alive()
    assert not (tmp_path / "manifest.json").exists()
    sink.close()  # after abort: nothing to do
    with pytest.raises(OSError, match="closed"):
        sink("waits", [(2, 0.0, 1.0, "matched", 1.0)])


def test_an_in_process_sink_aborted_writes_no_manifest(tmp_path: Path) -> None:
    sink = open_sink(tmp_path, "csv", background=False)
    sink("waits", [(1, 0.0, 1.0, "matched", 1.0)])
    sink.abort()
    assert (tmp_path / "waits.csv").exists() and not (tmp_path / "manifest.json").exists()


def test_the_fast_record_makers_make_the_dataclasses_objects() -> None:
    """make_seat and make_result return what Seat(...) and GameResult(...) return: equal,
    of the same type, hashing alike and still frozen."""
    import dataclasses

    from lobbysim.records.rows import GameResult, Seat, make_result, make_seat

    rng = random.Random(11)
    for _ in range(200):
        fields = (
            rng.randrange(10**9),
            rng.choice([None, 0, 1]),
            rng.random(),
            rng.random() * 100,
            float(rng.randrange(50)),
            rng.random() < 0.5,
            rng.random() < 0.1,
            rng.gauss(0.0, 5.0),
        )
        seat, fast = Seat(*fields), make_seat(*fields)
        assert type(fast) is Seat and fast == seat and hash(fast) == hash(seat)
        assert dataclasses.astuple(fast) == fields
        game = (rng.randrange(10**6), rng.choice(["1v1", "team", "ffa"]), 1.0, 2.5)
        result = GameResult(*game, (seat, seat), rng.choice([None, 0, 1]))
        made = make_result(*game, (fast, fast), result.winner)
        assert type(made) is GameResult and made == result and hash(made) == hash(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.score = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.winner = 0  # type: ignore[misc]
