"""A run's records exported as a match log and read back (lobbysim/calibration/export.py, read.py),
and ``lobbysim log export`` / ``log check`` (lobbysim/commands/log.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lobbysim
from lobbysim.calibration.export import records_to_log, write_log
from lobbysim.calibration.mapping import LogError
from lobbysim.calibration.matchlog import SKIP_REASONS, MatchLog, check_seats
from lobbysim.calibration.read import read_log
from lobbysim.commands.log import add_log_parser, export_log
from lobbysim.experiments import SimulationResult, simulate
from lobbysim.records.outputs import OutputTargetError
from lobbysim.scenario.inputs import as_scenario
from lobbysim.validation import ScenarioError

#: Small runs of each mode: a persistent 1v1 base, back-filled teams, a free-for-all, and a
#: world with parties (regions, party ids, one drawn team game).
RUNS = {
    "quickstart": {"horizon": 600, "warmup": 0, "base.size": 100},
    "team_4v4": {"horizon": 240, "warmup": 0},
    "mechwarrior_ffa": {"horizon": 120, "warmup": 0},
    "global_5v5": {"horizon": 120, "warmup": 0, "matchmaker.switch_at": None},
}


@pytest.fixture(scope="module", params=list(RUNS))
def run(request: pytest.FixtureRequest) -> SimulationResult:
    return simulate(as_scenario(request.param, RUNS[request.param]))


def seats_by_record(log: MatchLog) -> pd.DataFrame:
    """Return the log's seats with the run's ids (game_id, player_id) back."""
    seats = log.seats.copy()
    seats["game_id"] = np.asarray(log.match_ids)[seats["match"].to_numpy()]
    seats["player_id"] = np.asarray(log.player_ids)[seats["player"].to_numpy()]
    return seats


def expected_seats(result: SimulationResult) -> pd.DataFrame:
    """Return each seat's game times, side and place as the records say."""
    games, seats = result.games, result.participants
    assert games is not None and seats is not None
    seats = seats.merge(games[["game_id", "mode", "start", "end", "winner"]], on="game_id")
    seats["order"] = seats.groupby("game_id").cumcount()
    if (seats["mode"] == "ffa").all():
        seats["side_"] = seats["order"]
        seats["rank_"] = seats.groupby("game_id")["score"].rank(method="min", ascending=False)
        seats["rank_"] = seats["rank_"].astype(np.int64) - 1
    else:
        seats["side_"] = seats["team"].astype(np.int64)
        lost = seats["winner"].notna() & (seats["team"] != seats["winner"])
        seats["rank_"] = lost.astype(np.int64)
    return seats


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_run_exported_and_read_back_is_its_records(
    run: SimulationResult, suffix: str, tmp_path: Path
) -> None:
    if suffix == "parquet":
        pytest.importorskip("pyarrow")
    log_frame = records_to_log(run.games, run.participants, run.players, waits=run.waits)
    path = write_log(log_frame, tmp_path / f"log.{suffix}")
    log = read_log(path)
    assert log.skipped == dict.fromkeys(SKIP_REASONS, 0)
    assert check_seats(log.seats) == []
    assert log.origin is None and log.sorted_input
    expected = expected_seats(run)
    assert len(log.seats) == len(expected)
    assert log.matches == expected["game_id"].nunique() == len(run.games)
    assert log.players == expected["player_id"].nunique()
    merged = seats_by_record(log).merge(
        expected, on=["game_id", "player_id"], how="outer", validate="one_to_one", indicator=True
    )
    assert (merged["_merge"] == "both").all()  # every seat, and only those
    assert (merged["start_x"] == merged["start_y"]).all()  # exactly: floats round-trip
    assert (merged["end_x"] == merged["end_y"]).all()
    assert (merged["side"] == merged["side_"]).all()
    assert (merged["rank"] == merged["rank_"]).all()
    assert log.match_ids.tolist() == sorted(
        log.match_ids.tolist(),
        key=lambda g: (float(run.games.set_index("game_id").at[g, "start"]), g),
    )
    # the optional columns, where the run has them
    assert log.has("queue_time")
    waits = run.waits
    matched = waits[waits["outcome"] == "matched"]
    queue = merged.merge(
        matched, left_on=["player_id", "joined"], right_on=["player_id", "left_queue"]
    )
    assert len(queue) == len(merged) and (queue["queue_time"] == queue["wait"]).all()
    world = "region" in run.participants.columns
    assert log.has("region") == world and log.has("party") == world
    if world:
        assert (merged["region_x"].astype(str) == merged["region_y"].astype(str)).all()
        solo = merged["party_id"].isna().to_numpy()
        assert ((merged["party"] == -1).to_numpy() == solo).all()
        pairs = merged.loc[~solo, ["party", "party_id"]].drop_duplicates()
        assert pairs["party"].is_unique and pairs["party_id"].is_unique  # the same grouping


def test_the_exported_columns_by_mode(run: SimulationResult) -> None:
    log = records_to_log(run.games, run.participants, waits=run.waits)
    mode = str(run.games["mode"].iat[0])
    assert list(log.columns[:5]) == ["match_id", "player_id", "start", "end", "team"]
    assert ("score" in log.columns) == (mode == "ffa") != ("result" in log.columns)
    if mode != "ffa":
        draws = int(run.games["winner"].isna().sum())
        per_game = log.groupby("match_id")["result"].agg(set)
        assert int(per_game.map(lambda r: r == {"draw"}).sum()) == draws
        assert set(per_game[per_game.map(lambda r: r != {"draw"})].map(frozenset)) == {
            frozenset({"win", "loss"})
        }
    assert log["start"].is_monotonic_increasing
    no_waits = records_to_log(run.games, run.participants)
    assert "queue_time" not in no_waits.columns


def test_queue_times_are_left_out_without_a_clean_join(run: SimulationResult) -> None:
    waits = run.waits.copy()
    waits.loc[waits.index[waits["outcome"] == "matched"][0], "left_queue"] += 1e-6
    assert "queue_time" not in records_to_log(run.games, run.participants, waits=waits).columns


def test_export_refuses_frames_that_are_not_records() -> None:
    games = pd.DataFrame({"game_id": [1], "mode": ["1v1"], "start": [0.0], "end": [1.0]})
    seats = pd.DataFrame(
        {"game_id": [2], "player_id": [1], "team": [0], "joined": [0.0], "score": [1.0]}
    )
    with pytest.raises(ValueError, match=r"^games: no column 'winner'; the frame has: game_id"):
        records_to_log(games, seats)
    games["winner"] = pd.array([0], dtype="Int64")
    with pytest.raises(ValueError, match=r"^participants: game_id 2 is not in games$"):
        records_to_log(games, seats)


def test_write_log_is_atomic_and_checks_its_path(tmp_path: Path) -> None:
    frame = pd.DataFrame({"match_id": [1], "player_id": [2]})
    with pytest.raises(LogError, match=r"log\.txt: expected a \.csv, \.csv\.gz or \.parquet"):
        write_log(frame, tmp_path / "log.txt")
    with pytest.raises(
        OutputTargetError, match=r"--out: the folder .*nowhere does not exist \(make it first\)$"
    ):
        write_log(frame, tmp_path / "nowhere" / "log.csv")
    out = write_log(frame, tmp_path / "log.csv.gz")
    assert pd.read_csv(out).equals(frame)
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv.gz"]  # no temporary file left

    class Broken(pd.DataFrame):
        def to_csv(self, *args: object, **kwargs: object) -> None:  # type: ignore[override]
            Path(str(args[0])).write_text("half")
            raise OSError(28, "No space left on device")

    with pytest.raises(OutputTargetError, match=r"log\.csv\.gz exists already"):
        write_log(frame, tmp_path / "log.csv.gz")
    with pytest.raises(OSError, match="No space left"):
        write_log(Broken(frame), tmp_path / "log.csv.gz", force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv.gz"]
    assert pd.read_csv(out).equals(frame)  # as it was


# --- the command -----------------------------------------------------------------------------


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="lobbysim")
    add_log_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run"
    lobbysim.compare(
        "one_visit",
        ["draw_chance", "fifo"],
        replications=2,
        overrides={"horizon": 60, "warmup": 10},
        out=out,
        report=False,
        progress=False,
    )
    return out


def test_log_export_writes_a_runs_records(
    run_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fifo.csv"
    args = parse(["log", "export", str(run_folder), "--out", str(out), "--policy", "fifo"])
    assert args.handler(args) == 0
    frames = lobbysim.load_run(run_folder).records("fifo")
    assert isinstance(frames, dict)
    expected = records_to_log(frames["games"], frames["participants"], waits=frames["waits"])
    written = pd.read_csv(out)
    # to 12 significant digits: the CSV reader of pandas before 2.2 reads a float's last
    # digits off (0.0020632802301534 for 0.0020632802301534525); the current pandas is exact
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-12, atol=0)
    line = capsys.readouterr().out.strip()
    assert line == (
        f"wrote {out}: {len(expected):,} seats of {expected['match_id'].nunique():,} matches "
        "(with queue_time)"
    )
    args = parse(["log", "check", str(out)])
    assert args.handler(args) == 0
    lines = capsys.readouterr().out.splitlines()
    log = read_log(out)
    assert lines[0] == (
        f"{out}: {len(log.seats):,} seats in {log.matches:,} matches of {log.players:,} players "
        f"({log.matches:,} with 2 sides; mean side size 1)"
    )
    assert lines[-2:] == ["optional columns: queue_time", "no rows skipped"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--policy", "nobody"], "policy: 'nobody' is not in this run"),
        (["--replication", "2"], "replication: only the first replication's records are kept"),
        (["--out", "{tmp}/log.json"], "log.json: expected a .csv, .csv.gz or .parquet file name"),
        (["--out", "{tmp}/no/log.csv"], "--out: the folder {tmp}/no does not exist"),
    ],
)
def test_log_export_errors_are_one_line(
    run_folder: Path, tmp_path: Path, argv: list[str], expected: str
) -> None:
    argv = [a.format(tmp=tmp_path) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "log.csv")]
    args = parse(["log", "export", str(run_folder), *argv])
    with pytest.raises(ScenarioError) as info:
        args.handler(args)
    assert len(info.value.problems) == 1 and "\n" not in str(info.value)
    assert expected.format(tmp=tmp_path) in str(info.value)
    assert not (tmp_path / "log.csv").exists()


def test_log_export_of_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"is not the folder of a finished lobbysim run"):
        export_log(tmp_path, tmp_path / "log.csv")


def test_log_check_of_a_hostile_log_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_bytes(b"match_id,player_id,start,end,team,result\n1,\xff,0,1,0,win\n")
    args = parse(["log", "check", str(path)])
    with pytest.raises(ScenarioError) as info:
        args.handler(args)
    assert str(info.value) == f"{path}: line 2 is not UTF-8 (byte 0xff at column 3)"


def test_log_export_replaces_a_file_only_with_force(run_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "log.csv"
    out.write_text("mine", encoding="utf-8")
    args = parse(["log", "export", str(run_folder), "--out", str(out)])
    with pytest.raises(ScenarioError, match=r"--out: .*log\.csv exists already: not overwritten"):
        args.handler(args)
    assert out.read_text(encoding="utf-8") == "mine"
    args = parse(["log", "export", str(run_folder), "--out", str(out), "--force"])
    assert args.handler(args) == 0
    assert pd.read_csv(out).columns[0] == "match_id"
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv"]  # no temporary left
