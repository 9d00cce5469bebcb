"""Reading match logs (lobbysim/calibration/read.py): layouts, mappings, units, hostile input."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lobbysim.calibration.mapping import LogError, read_mapping
from lobbysim.calibration.matchlog import SKIP_REASONS, check_seats
from lobbysim.calibration.read import _order, read_log

DATA = Path(__file__).resolve().parent / "data"
HEADER = "match_id,player_id,start,end,team,result\n"


def write(tmp_path: Path, text: str, name: str = "log.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def skipped(**counts: int) -> dict[str, int]:
    """Every reason, zero but for ``counts``."""
    assert set(counts) <= set(SKIP_REASONS)
    return {reason: counts.get(reason, 0) for reason in SKIP_REASONS}


def error(path: Path, mapping: object = None, **kwargs: object) -> str:
    with pytest.raises(LogError) as info:
        read_log(path, mapping, **kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message
    return message


# --- the default layout ---------------------------------------------------------------------


def test_a_clean_log_reads_into_the_normalised_seats(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + "7,ann,0,10,blue,WIN\n7,bob,0,10,red,Loss\n"
        + "8,bob,12,20,red,0.5\n8,cy,12,20,blue,draw\n"
        + "9,cy,30,45,red,1\n9,ann,30,45,blue,0\n",
    )
    log = read_log(path)
    assert check_seats(log.seats) == []
    assert log.seats.to_dict("list") == {
        "match": [0, 0, 1, 1, 2, 2],
        "player": [0, 1, 2, 1, 0, 2],
        "start": [0.0, 0.0, 12.0, 12.0, 30.0, 30.0],
        "end": [10.0, 10.0, 20.0, 20.0, 45.0, 45.0],
        "side": [0, 1, 0, 1, 0, 1],  # blue before red
        "rank": [0, 1, 0, 0, 1, 0],
    }
    assert log.match_ids.tolist() == [7, 8, 9]  # whole numbers written plainly: int64
    assert log.match_ids.dtype == np.int64
    assert log.player_ids.tolist() == ["ann", "bob", "cy"]
    assert log.skipped == skipped()
    assert log.origin is None and log.sorted_input
    assert log.span_minutes == 45.0


def test_score_and_rank_columns_give_places_with_ties(tmp_path: Path) -> None:
    scores = write(
        tmp_path,
        "match_id,player_id,start,duration,side,score\n"
        + "m,a,0,5,0,10\nm,b,0,5,0,2\nm,c,0,5,1,12\nm,d,0,5,2,3\nm,e,0,5,2,9\n",
    )
    log = read_log(scores)
    # side scores: 12, 12, 12 -> all tied at 0 place
    assert log.seats["rank"].tolist() == [0, 0, 0, 0, 0]
    assert log.seats["end"].tolist() == [5.0] * 5
    scores.write_text(
        "match_id,player_id,start,end,side,score\n" + "m,a,0,5,x,10\nm,b,0,5,y,12.5\nm,c,0,5,z,10\n"
    )
    assert read_log(scores).seats["rank"].tolist() == [1, 0, 1]
    ranks = write(
        tmp_path,
        "match_id,player_id,start,end,team,rank\n" + "m,a,0,5,1,2\nm,b,0,5,2,4\nm,c,0,5,3,2\n",
        "ranks.csv",
    )
    assert read_log(ranks).seats["rank"].tolist() == [0, 2, 0]


def test_a_free_for_all_without_a_side_column(tmp_path: Path) -> None:
    path = write(tmp_path, "match_id,player_id,start,end,score\nm,a,0,5,3\nm,b,0,5,7\nm,c,0,5,3\n")
    message = error(path)
    assert message == (
        f"{path}: no column 'team' or 'side'; the file has: match_id, player_id, start, end, score"
    )
    log = read_log(path, {"free_for_all": True})
    assert log.seats[["player", "side", "rank"]].to_dict("list") == {
        "player": [0, 1, 2],
        "side": [0, 1, 2],
        "rank": [1, 0, 1],
    }


def test_optional_columns_and_units(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "game,who,begin,secs,team,result,region,party_id,queue_time\n"
        + "g,a,60,600,0,win,NA,p1,30\ng,b,60,600,0,win,NA,p1,45\n"
        + "g,c,60,600,1,loss,EU,,\ng,d,60,600,1,loss,,,6\n",
    )
    mapping = {
        "columns": {"match_id": "game", "player_id": "who", "start": "begin", "duration": "secs"},
        "time_unit": "seconds",
    }
    log = read_log(path, mapping)
    seats = log.seats
    assert check_seats(seats) == []
    assert seats["start"].tolist() == [1.0] * 4 and seats["end"].tolist() == [11.0] * 4
    assert seats["region"].tolist()[:3] == ["NA", "NA", "EU"]  # "NA" is North America
    assert seats["region"].isna().tolist() == [False, False, False, True]
    assert str(seats["region"].dtype) == "string"
    assert seats["party"].tolist() == [0, 0, -1, -1]
    assert seats["queue_time"].tolist()[:2] == [0.5, 0.75]
    assert np.isnan(seats["queue_time"].iat[2]) and seats["queue_time"].iat[3] == 0.1
    mapping["queue_time_unit"] = "minutes"
    assert read_log(path, mapping).seats["queue_time"].tolist()[:2] == [30.0, 45.0]


def test_timestamps_give_minutes_since_the_earliest_start(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + "b,x,2024-03-01T10:30:00+01:00,2024-03-01T09:45:00Z,0,win\n"
        + "b,y,2024-03-01T10:30:00+01:00,2024-03-01T09:45:00Z,1,loss\n"
        + "a,x,2024-03-01 09:00:00,2024-03-01 09:20:30,0,loss\n"
        + "a,y,2024-03-01 09:00:00,2024-03-01 09:20:30,1,win\n",
    )
    log = read_log(path)
    assert log.origin == pd.Timestamp("2024-03-01T09:00:00Z")
    assert log.match_ids.tolist() == ["a", "b"]
    assert log.seats["start"].tolist() == [0.0, 0.0, 30.0, 30.0]
    assert log.seats["end"].tolist() == [20.5, 20.5, 45.0, 45.0]
    assert not log.sorted_input  # b came first
    assert log.hours_of_day().tolist() == [9.0, 9.0, 9.5, 9.5]
    epoch = write(
        tmp_path,
        HEADER + "m,x,1709283600000,1709284200000,0,win\nm,y,1709283600000,1709284200000,1,loss\n",
        "epoch.csv",
    )
    message = error(epoch)
    assert "column 'start': 1709283600000 is 1.71e+12 minutes from minute 0" in message
    assert message.endswith("Say times: epoch (with time_unit) or times: relative in the mapping")
    log = read_log(epoch, {"times": "epoch", "time_unit": "milliseconds"})
    assert log.origin == pd.Timestamp("2024-03-01T09:00:00Z")
    assert log.seats["end"].tolist() == [10.0, 10.0]


def test_a_timestamp_past_2262_or_before_1677_skips_its_row(tmp_path: Path) -> None:
    # pandas reads ISO text to microseconds; times on the nanosecond axis end in 2262, and a
    # subtraction of a nanosecond epoch made one far timestamp an OutOfBoundsDatetime traceback
    good = "2024-03-01T09:00:00Z,2024-03-01T09:10:00Z"
    path = write(
        tmp_path,
        HEADER
        + f"a,x,{good},0,win\na,y,{good},1,loss\n"
        + "b,x,2300-01-01T00:00:00Z,2300-01-01T00:10:00Z,0,win\n"
        + f"b,y,{good},1,loss\n"
        + "c,x,1500-01-01T00:00:00Z,1500-01-01T00:10:00Z,0,win\n"
        + "c,y,2024-03-01T09:00:00Z,9999-12-31T23:59:59Z,1,loss\n",
    )
    log = read_log(path)
    assert log.skipped == skipped(bad_time=3, one_side=1)
    assert log.matches == 1 and log.origin == pd.Timestamp("2024-03-01T09:00:00Z")
    assert "3 a time that cannot be read (or a timestamp outside 1677-2262)" in log.skipped_text()


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("1e13", "10000000000600"),  # year 318,857
        ("-1e15", "-999999999999400"),  # before the first year pandas' seconds can hold
        ("1e30", "1e30"),
        ("1709283600", "1e300"),  # an end beyond, its start fine
    ],
)
def test_an_epoch_number_beyond_the_timestamps_skips_its_row(
    tmp_path: Path, start: str, end: str
) -> None:
    path = write(
        tmp_path,
        HEADER
        + "a,x,1709283600,1709284200,0,win\na,y,1709283600,1709284200,1,loss\n"
        + f"b,x,{start},{end},0,win\nb,y,{start},{end},1,loss\n",
    )
    log = read_log(path, {"times": "epoch", "time_unit": "seconds"})
    assert log.skipped == skipped(bad_time=2)
    assert log.origin == pd.Timestamp("2024-03-01T09:00:00Z")
    durations = write(
        tmp_path,
        "match_id,player_id,start,duration,team,result\n"
        + "a,x,1709283600,600,0,win\na,y,1709283600,600,1,loss\n"
        + "b,x,9223372000,1e12,0,win\nb,y,9223372000,1e12,1,loss\n",  # its end past 2262
        "durations.csv",
    )
    log = read_log(durations, {"times": "epoch", "time_unit": "seconds"})
    assert log.skipped == skipped(bad_time=2) and log.matches == 1


def test_a_parquet_timestamp_past_2262_skips_its_row(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    stamps = ["2024-01-01 00:00", "2024-01-01 00:00", "2300-01-01 00:00", "2024-01-01 00:30"]
    frame = pd.DataFrame(
        {
            "match_id": [10, 10, 11, 11],
            "player_id": ["a", "b", "a", "b"],
            # microseconds from NumPy: pandas before 2.2 parses strings to nanoseconds only
            "start": pd.Series(np.array(stamps, dtype="datetime64[us]")),
            "end": pd.Series(np.array(stamps, dtype="datetime64[us]") + np.timedelta64(10, "m")),
            "team": [0, 1, 1, 0],
            "result": [1.0, 0.0, 0.5, 0.5],
        }
    )
    path = tmp_path / "log.parquet"
    frame.to_parquet(path)
    log = read_log(path)
    assert log.skipped == skipped(bad_time=1, one_side=1)
    assert log.matches == 1 and log.origin == pd.Timestamp("2024-01-01T00:00:00Z")


def test_rows_out_of_time_order_are_sorted(tmp_path: Path) -> None:
    rows = ["m3,a,20,30,0,win", "m3,b,20,30,1,loss", "m1,a,0,9,0,win", "m1,c,0,9,1,loss"]
    rows += ["m2,b,5,15,0,loss", "m2,c,5,15,1,win"]
    shuffled = read_log(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    ordered = read_log(write(tmp_path, HEADER + "\n".join(rows[2:] + rows[:2]) + "\n", "o.csv"))
    assert not shuffled.sorted_input and ordered.sorted_input
    assert shuffled.seats.equals(ordered.seats)
    assert shuffled.match_ids.tolist() == ordered.match_ids.tolist() == ["m1", "m2", "m3"]
    assert shuffled.player_ids.tolist() == ["a", "c", "b"]


# --- hostile logs ---------------------------------------------------------------------------


def test_a_missing_column_is_named_with_the_files_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "match_id,start,end,team,result\n1,0,1,0,win\n")
    assert error(path) == (
        f"{path}: no column 'player_id'; the file has: match_id, start, end, team, result"
    )
    path = write(tmp_path, "match_id,player_id,start,team,result\n1,a,0,0,win\n", "b.csv")
    assert error(path).startswith(f"{path}: no column 'end' or 'duration'; the file has: ")
    path = write(tmp_path, "match_id,player_id,start,end,team\n1,a,0,1,0\n", "c.csv")
    assert "no column 'result' or 'score' or 'rank'" in error(path)
    assert error(path, {"columns": {"score": "points"}}) == (
        f"{path}: no column 'points' (columns: score); the file has: match_id, player_id, "
        "start, end, team"
    )


def test_a_file_that_is_not_utf8_names_the_line_and_byte(tmp_path: Path) -> None:
    body = (HEADER + "1,a,0,1,0,win\n1,b,0,1,1,loss\n").encode() + b"2,J\xf6rg,5,6,0,win\n"
    path = tmp_path / "log.csv"
    path.write_bytes(body)
    assert error(path) == f"{path}: line 4 is not UTF-8 (byte 0xf6 at column 4)"
    zipped = tmp_path / "log.csv.gz"
    zipped.write_bytes(gzip.compress(body))
    assert error(zipped) == f"{zipped}: line 4 is not UTF-8 (byte 0xf6 at column 4)"
    assert read_log(path, {"encoding": "latin-1"}).player_ids.tolist() == ["a", "b"]


def test_every_reason_a_row_is_skipped_is_counted(tmp_path: Path) -> None:
    rows = [
        "ok,a,0,10,0,win",  # a good 1v1
        "ok,b,0,10,1,loss",
        "empty,a,0,10,0,win",
        "empty,,0,10,1,loss",  # missing_value; its match is left with one side
        "time,a,0,10,0,win",
        "time,b,noon,10,1,loss",  # bad_time, and one_side
        "res,a,0,10,0,win",
        "res,b,0,10,1,maybe",  # bad_result, and one_side
        "back,a,10,5,0,win",  # end_before_start (both rows)
        "back,b,10,5,1,loss",
        "both,a,20,30,0,win",  # player_on_both_sides: the whole match (3 rows)
        "both,a,20,30,1,loss",
        "both,b,20,30,1,loss",
        "dup,a,40,50,0,win",
        "dup,b,40,50,1,loss",
        "dup,b,40,50,1,loss",  # duplicate_seat: the repeat
        "moved,a,60,70,0,win",  # inconsistent_match: the whole match
        "moved,b,61,70,1,loss",
        "solo,a,80,90,0,win",  # one_side
        "solo,c,80,90,0,win",
        "split,a,90,95,0,win",  # inconsistent_result: one side says win and loss
        "split,b,90,95,0,loss",
        "split,c,90,95,1,loss",
        "twowins,a,95,99,0,win",  # inconsistent_result: no loser
        "twowins,b,95,99,1,win",
    ]
    path = write(tmp_path, HEADER + "\n".join(rows) + "\n")
    log = read_log(path)
    assert log.skipped == skipped(
        missing_value=1,
        bad_time=1,
        bad_result=1,
        end_before_start=2,
        player_on_both_sides=3,
        duplicate_seat=1,
        inconsistent_match=2,
        inconsistent_result=5,
        one_side=5,
    )
    assert sum(log.skipped.values()) + len(log.seats) == len(rows)
    assert log.match_ids.tolist() == ["ok", "dup"]
    assert log.seats["player"].tolist() == [0, 1, 0, 1]
    assert check_seats(log.seats) == []
    assert log.skipped_text().startswith("21 rows skipped: 1 a required value is empty, ")


def test_the_checks_across_chunks_match_one_chunk(tmp_path: Path) -> None:
    rows = ["m1,a,0,10,0,win", "m2,c,1,11,0,draw", "m1,b,0,10,1,loss", "m2,d,1,11,1,draw"]
    rows += ["m1,b,0,10,1,loss", "m3,a,5,6,0,win", "m2,c,1,11,0,draw", "m3,b,5,7,1,loss"]
    path = write(tmp_path, HEADER + "\n".join(rows) + "\n")
    whole = read_log(path)
    assert whole.skipped == skipped(duplicate_seat=2, inconsistent_match=2)
    for chunk_rows in (1, 2, 3):
        chunked = read_log(path, chunk_rows=chunk_rows)
        assert chunked.seats.equals(whole.seats)
        assert chunked.skipped == whole.skipped
        assert chunked.player_ids.tolist() == whole.player_ids.tolist()


def test_excluded_rows_are_counted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "match_id,player_id,start,end,team,result,kind\n"
        + "1,a,0,1,0,win,ranked\n1,b,0,1,1,loss,ranked\n2,a,2,3,0,win,custom\n"
        + "2,b,2,3,1,loss,custom\n",
    )
    log = read_log(path, {"exclude": {"kind": ["custom", "bots"]}})
    assert log.skipped == skipped(excluded=2) and log.matches == 1
    assert error(path, {"exclude": {"mode": ["x"]}}).startswith(
        f"{path}: no column 'mode' (exclude); the file has: "
    )


def test_a_log_with_nothing_left_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "1,a,5,1,0,win\n1,b,5,1,1,loss\n2,c,0,1,0,win\n")
    assert error(path) == (
        f"{path}: no match left to read: 3 rows skipped: 2 the match ends before it starts, "
        "1 a match with fewer than two sides (the whole match)"
    )
    assert error(write(tmp_path, HEADER, "empty.csv")).endswith("the log has no rows")
    assert error(write(tmp_path, "", "nothing.csv")).endswith("the file is empty (no header line)")


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    text = tmp_path / "log.txt"
    assert error(text) == f"{text}: expected a .csv, .csv.gz or .parquet file"
    missing = tmp_path / "gone.csv"
    assert error(missing) == f"{missing}: cannot read the file: No such file or directory"
    path = write(tmp_path, HEADER + "1,a,0,1,0,win\n1,Doe, Jo,0,1,1,loss\n")
    assert error(path) == (
        f"{path}: cannot be read as CSV: Error tokenizing data. C error: Expected 6 fields in "
        "line 3, saw 7"
    )
    path.write_text(HEADER + "1,Doe, Jo,0,1,1,loss\n1,a,0,1,0,win\n")
    assert error(path) == (
        f"{path}: cannot be read as CSV: a row has more fields than the header (an unquoted comma?)"
    )
    fake = write(tmp_path, "not parquet at all", "log.parquet")
    pytest.importorskip("pyarrow")
    assert error(fake).startswith(f"{fake}: cannot be read as Parquet: ")


def test_parquet_without_pyarrow_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = write(tmp_path, "x", "log.parquet")
    assert error(path) == (
        f"{path}: reading Parquet needs pyarrow, which is not installed: "
        "pip install 'lobbysim[parquet]'"
    )


def test_parquet_reads_as_csv_does(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {
            "match_id": [10, 10, 11, 11],
            "player_id": ["a", "b", "a", "b"],
            "start": pd.to_datetime(["2024-01-01 00:00"] * 2 + ["2024-01-01 00:30"] * 2),
            "end": pd.to_datetime(["2024-01-01 00:10"] * 2 + ["2024-01-01 00:45"] * 2),
            "team": [0, 1, 1, 0],
            "result": [1.0, 0.0, 0.5, 0.5],
            "region": pd.Categorical(["eu", "eu", "", "na"]),
        }
    )
    path = tmp_path / "log.parquet"
    frame.to_parquet(path)
    log = read_log(path, chunk_rows=3)
    assert log.origin == pd.Timestamp("2024-01-01T00:00:00Z")
    assert log.seats[["match", "player", "start", "end", "side", "rank"]].to_dict("list") == {
        "match": [0, 0, 1, 1],
        "player": [0, 1, 1, 0],
        "start": [0.0, 0.0, 30.0, 30.0],
        "end": [10.0, 10.0, 45.0, 45.0],
        "side": [0, 1, 0, 1],
        "rank": [0, 1, 0, 0],
    }
    assert log.match_ids.tolist() == [10, 11]
    assert log.seats["region"].tolist()[:3] == ["eu", "eu", "na"]
    assert log.seats["region"].isna().tolist() == [False, False, False, True]  # "" is empty


# --- the games_1v1 layout: Lichess's export -------------------------------------------------


def test_the_lichess_mapping_reads_a_hand_made_export() -> None:
    log = read_log(DATA / "lichess_games.csv", "lichess")
    assert check_seats(log.seats) == []
    assert log.origin == pd.Timestamp(1504210000000, unit="ms", tz="UTC")
    # Fx000001 is given twice (its repeat: one row skipped); Fx000005's two rows differ;
    # Fx000007 pits a player against himself
    assert log.skipped == skipped(duplicate_seat=1, inconsistent_match=2, player_on_both_sides=1)
    assert log.match_ids.tolist() == ["Fx000001", "Fx000002", "Fx000003", "Fx000006"]
    seats = log.seats
    assert seats["side"].tolist() == [0, 1] * 4
    # white wins, black wins, a draw ("draw"), a draw (empty)
    assert seats["rank"].tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    assert seats["start"].tolist()[:4] == [0.0, 0.0, 1.0, 1.0]
    assert seats["end"].iat[0] == pytest.approx(2.5)
    assert log.player_ids.tolist() == ["pawn_a", "rook_b", "queen_c"]


def test_games_1v1_with_the_winners_id_and_seconds(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "game,p,q,won_by,t,len\n1,ann,bob,bob,0,300\n2,bob,cy,,400,60\n3,cy,ann,dan,500,60\n",
    )
    mapping = {
        "layout": "games_1v1",
        "columns": {
            "match_id": "game",
            "player_0": "p",
            "player_1": "q",
            "winner": "won_by",
            "start": "t",
            "duration": "len",
        },
        "sides": "players",
        "time_unit": "seconds",
    }
    log = read_log(path, mapping)
    assert log.skipped == skipped(bad_result=1)  # dan did not play game 3
    assert log.seats["rank"].tolist() == [1, 0, 0, 0]
    assert log.seats["end"].tolist() == [5.0, 5.0, 460 / 60, 460 / 60]


# --- column mappings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        ({"colums": {}}, "mapping: unknown key 'colums'; the keys are layout, columns, "),
        ({"layout": "games"}, "mapping: layout: expected one of seats, games_1v1, got 'games'"),
        ({"time_unit": "hours"}, "mapping: time_unit: expected one of minutes, seconds, "),
        ({"columns": {"winner": "w"}}, "mapping: columns: unknown role 'winner' for layout "),
        ({"columns": {"end": "e", "duration": "d"}}, "mapping: columns: give one of end, "),
        ({"sides": ["w", "b"]}, "mapping: sides: only with layout: games_1v1"),
        ({"results": {"win": [True]}}, "mapping: results: win: expected text, got True (quote"),
        ({"layout": "games_1v1", "sides": ["w"]}, "mapping: sides: expected two different"),
    ],
)
def test_a_wrong_mapping_is_one_line(mapping: dict[str, object], expected: str) -> None:
    with pytest.raises(LogError) as info:
        read_mapping(mapping)
    assert str(info.value).startswith(expected)


def test_a_mapping_file_and_extra_result_words(tmp_path: Path) -> None:
    columns = write(
        tmp_path,
        "columns:\n  team: faction\n  result: outcome\nresults:\n  win: [victoire]\n"
        "  loss: [défaite]\n",
        "columns.yaml",
    )
    path = write(
        tmp_path,
        "match_id,player_id,start,end,faction,outcome\n1,a,0,1,x,victoire\n1,b,0,1,y,DÉFAITE\n",
    )
    assert read_log(path, columns).seats["rank"].tolist() == [0, 1]
    bad = write(tmp_path, "layout: [1\n", "bad.yaml")
    message = error(path, bad)
    assert message.startswith(f"{bad}: YAML syntax error at line 2")


def test_a_byte_order_mark_and_crlf_line_ends_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + (HEADER + "1,a,0,1,0,win\n1,b,0,1,1,loss\n").replace("\n", "\r\n").encode()
    )
    log = read_log(path)
    assert log.player_ids.tolist() == ["a", "b"] and log.seats["rank"].tolist() == [0, 1]


def test_the_sort_of_codes_falls_back_to_lexsort_when_keys_do_not_fit() -> None:
    rng = np.random.default_rng(3)
    small = [rng.integers(0, 5, 1000) for _ in range(3)]
    huge = [key * 2**40 for key in small]  # 2^120 combined: lexsort
    for keys in (small, huge):
        assert (_order(*keys) == np.lexsort(keys[::-1])).all()
