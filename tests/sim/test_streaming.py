"""Streamed records: the same rows and metrics as in memory, written to CSV as the run goes."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario


def scenario(stream: bool) -> Scenario:
    return Scenario.from_dict(
        {
            "horizon": 240,
            "warmup": 30,
            "arrivals": {"name": "poisson", "rate": 3.0},
            "game": {"mode": "ffa", "ffa_size": 4, "length": 12, "quit_rate": 0.03},
            "population": {
                "patience_mean": 2.0,
                "session_games_mean": 3,
                "registered_fraction": 0.8,
            },
            "records": {"ratings_every": 30, "stream": stream, "flush_rows": 100},
        }
    )


def test_streamed_records_equal_the_in_memory_ones(tmp_path: Path) -> None:
    kept = simulate(scenario(False), seed=5)
    streamed = simulate(scenario(True), seed=5, records_dir=tmp_path / "records")
    assert streamed.games is None and streamed.records_dir == tmp_path / "records"
    for name, value in kept.metrics.items():
        other = streamed.metrics[name]
        assert other == pytest.approx(value) or (math.isnan(value) and math.isnan(other)), name
    keys = {
        "games": ["game_id"],
        "participants": ["game_id", "player_id"],
        "waits": ["player_id", "enqueued"],
        "players": ["player_id"],
        "ratings": ["time", "rater", "player_id"],
    }
    for kind, key in keys.items():
        written = pd.read_csv(tmp_path / "records" / f"{kind}.csv")
        assert len(written) > 100  # more than one flush
        in_memory = getattr(kept, kind)
        a = written.sort_values(key, ignore_index=True).to_csv(index=False)
        b = (
            pd.read_csv(pd.io.common.StringIO(in_memory.to_csv(index=False)))
            .sort_values(key, ignore_index=True)
            .to_csv(index=False)
        )
        assert a == b, kind


def test_streaming_needs_a_folder() -> None:
    with pytest.raises(ValueError, match="needs records_dir"):
        simulate(scenario(True), seed=1)


def test_a_writer_process_is_fed_small_batches(tmp_path: Path) -> None:
    """A writer process takes rows in batches of at most its ``batch_rows`` (so that little is
    left to write when the run ends); an in-process sink in batches of ``flush_rows``."""
    from lobbysim.records.writer import WRITER_BATCH_ROWS, open_sink
    from lobbysim.sim import LobbySimulation
    from lobbysim.streams import Streams

    big = Scenario.from_dict({**scenario(True).to_dict(), "records": {"stream": True}})
    assert big.records.flush_rows > WRITER_BATCH_ROWS
    background = open_sink(tmp_path / "a", "csv", background=True)
    inline = open_sink(tmp_path / "b", "csv", background=False)
    try:
        sizes = {
            name: LobbySimulation(big, Streams(1), sink=sink).recorder.records.flush_rows
            for name, sink in (("background", background), ("inline", inline))
        }
    finally:
        background.close()
    assert sizes == {"background": WRITER_BATCH_ROWS, "inline": big.records.flush_rows}
    few = Scenario.from_dict({**big.to_dict(), "records": {"stream": True, "flush_rows": 100}})
    sink = open_sink(tmp_path / "c", "csv", background=True)
    try:
        assert LobbySimulation(few, Streams(1), sink=sink).recorder.records.flush_rows == 100
    finally:
        sink.close()
