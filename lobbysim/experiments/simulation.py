"""The Python API of a lobby run: ``simulate(scenario, seed) -> SimulationResult``.

It builds one :class:`lobbysim.sim.LobbySimulation` on the scenario's random streams, runs it to the
horizon and turns its records into pandas frames (``games``, ``participants``, ``waits``,
``ratings``) and a metrics dict (:mod:`lobbysim.metrics`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from lobbysim.metrics import compute_metrics, tenure_metrics, veteran_kendall_taus
from lobbysim.scenario import Scenario, load_scenario
from lobbysim.sim.lobby import LobbySimulation
from lobbysim.sim.recorder import player_row
from lobbysim.streams import Streams

GAME_COLUMNS = [
    "game_id",
    "mode",
    "start",
    "end",
    "draw_prob_true",
    "skill_gap_true",
    "quality_predicted",
    "stronger_side_won",
    "winner",
]
PARTICIPANT_COLUMNS = [
    "game_id",
    "player_id",
    "team",
    "joined",
    "left",
    "minutes",
    "score",
    "registered",
    "quit",
]
WAIT_COLUMNS = ["player_id", "enqueued", "left_queue", "outcome", "wait"]
RATING_COLUMNS = ["time", "rater", "player_id", "rating", "variance"]
PLAYER_COLUMNS = ["player_id", "skill", "mu0", "var0", "registered", "games", "wins", "state"]


@dataclass
class SimulationResult:
    """The frames and metrics of one run.

    Attributes:
        scenario, seed: what was run.
        games: one row per finished game.
        participants: one row per player stint in a game.
        waits: one row per queueing spell; ``outcome`` is ``matched``, ``abandoned`` or
            ``still_waiting`` (then ``left_queue`` is NaN and ``wait`` runs to the horizon).
        ratings: every rater's rating (and variance, NaN without one) of the players in the
            lobby (waiting or playing), sampled every ``records.ratings_every`` minutes, and of
            every player seen, at the horizon.
        players: one row per player: true skill, the prior belief (``mu0``, ``var0``) every
            rater started from, registered, games, wins, final state. With the games and
            participants, the priors make any run's ratings replayable from its records.
        metrics: see :mod:`lobbysim.metrics`.
        records_dir: with streamed records, the folder of their CSV files (the frames above
            are then None).
    """

    scenario: Scenario
    seed: int
    games: pd.DataFrame | None
    participants: pd.DataFrame | None
    waits: pd.DataFrame | None
    ratings: pd.DataFrame | None
    players: pd.DataFrame | None
    metrics: dict[str, float]
    records_dir: Path | None = None


def simulate(
    scenario: Scenario | str | Path,
    seed: int | None = None,
    *,
    records_dir: str | Path | None = None,
) -> SimulationResult:
    """Run one replication of ``scenario`` (an object or a YAML path) with ``seed``.

    Args:
        scenario: the scenario, or the path of a YAML file.
        seed: the master seed (default: the scenario's own). The same scenario and seed give
            identical frames.
        records_dir: with ``records.stream``, the folder the record CSV files are written to
            (``games.csv``, ``participants.csv``, ``waits.csv``, ``ratings.csv``,
            ``players.csv``); required then, and the result's frames are left unloaded (None):
            read the files with pandas. The metrics are computed from the files.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    seed = scenario.seed if seed is None else seed
    if not scenario.records.stream:
        sim = LobbySimulation(scenario, Streams(seed))
        with sim.tuned_gc():
            sim.run()
            return collect(sim, seed)
    if records_dir is None:
        raise ValueError("records.stream is set: simulate() needs records_dir to write them to")
    sink = CsvSink(Path(records_dir))
    sim = LobbySimulation(scenario, Streams(seed), sink=sink)
    with sim.tuned_gc():
        sim.run()
        return collect_streamed(sim, seed, sink)


class CsvSink:
    """Appends streamed record rows to one CSV file per kind in ``folder``."""

    COLUMNS: ClassVar[dict[str, list[str]]] = {
        "games": GAME_COLUMNS,
        "participants": PARTICIPANT_COLUMNS,
        "waits": WAIT_COLUMNS,
        "ratings": RATING_COLUMNS,
        "players": PLAYER_COLUMNS,
    }

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        for kind, columns in self.COLUMNS.items():
            pd.DataFrame(columns=columns).to_csv(self.path(kind), index=False)

    def path(self, kind: str) -> Path:
        """Return the CSV file of a record kind."""
        return self.folder / f"{kind}.csv"

    def __call__(self, kind: str, rows: list[tuple[Any, ...]]) -> None:
        text = _csv_text(rows, len(self.COLUMNS[kind]))
        if text is not None:
            with self.path(kind).open("a", encoding="utf-8", newline="") as file:
                file.write(text)
            return
        frame = pd.DataFrame.from_records(rows, columns=self.COLUMNS[kind])
        frame.to_csv(self.path(kind), mode="a", header=False, index=False)


_NONE = type(None)
_FLOAT_KINDS = ({float}, {float, int}, {int, _NONE}, {float, _NONE}, {float, int, _NONE})
_CSV_SPECIAL = frozenset(',"\r\n')


def _csv_text(rows: list[tuple[Any, ...]], n_columns: int) -> str | None:
    """Return the CSV lines pandas' ``DataFrame.from_records(rows).to_csv(header=False,
    index=False)`` writes for ``rows``, byte for byte, or ``None`` if a column holds values this
    shortcut does not format the way pandas would (the caller then asks pandas).

    pandas infers one dtype per column from the Python types in it; the cases handled are the
    ones the records hold: ints (``str``), bools (``True``/``False``), plain strings, and
    float64 columns (floats, or ints mixed with floats or ``None``), written as the shortest
    round-trip ``repr`` of the float, as numpy's ``astype(str)`` does, with ``None``/NaN as the
    empty field; object columns of bools or strings with ``None`` give an empty field for
    ``None``. This is several times faster than building a frame for every flush.
    """
    if not rows or any(len(row) != n_columns for row in rows):
        return None
    columns: list[list[str]] = []
    for values in zip(*rows, strict=True):
        kinds = set(map(type, values))
        if kinds <= {int} or kinds <= {bool}:
            columns.append(list(map(str, values)))
        elif kinds == {float}:
            fields = list(map(float.__repr__, values))
            if "nan" in fields:
                fields = ["" if field == "nan" else field for field in fields]
            columns.append(fields)
        elif kinds in _FLOAT_KINDS:
            columns.append(["" if v is None or v != v else repr(float(v)) for v in values])
        elif kinds <= {str, _NONE} or kinds <= {bool, _NONE}:
            if any(v == "" or not _CSV_SPECIAL.isdisjoint(v) for v in values if type(v) is str):
                return None
            columns.append(["" if v is None else str(v) for v in values])
        else:
            return None
    return "\n".join(map(",".join, zip(*columns, strict=True))) + "\n"


def _final_rows(sim: LobbySimulation) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Return the rows of players still waiting, and of every player not yet written out."""
    horizon = float(sim.env.now)
    waiting = [
        (w.pid, w.since, math.nan, "still_waiting", horizon - w.since) for w in sim.pool.values()
    ]
    players = [player_row(p) for p in sim.players if p is not None]
    return waiting, players


def collect(sim: LobbySimulation, seed: int) -> SimulationResult:
    """Turn a finished simulation's in-memory records into a :class:`SimulationResult`."""
    sim.sample_ratings(everyone=True)
    records = sim.records
    games = pd.DataFrame.from_records(records.games, columns=GAME_COLUMNS)
    games = games.astype({"stronger_side_won": "boolean"})
    participants = pd.DataFrame.from_records(records.participants, columns=PARTICIPANT_COLUMNS)
    waiting, player_rows = _final_rows(sim)
    waits = pd.DataFrame.from_records(records.waits + waiting, columns=WAIT_COLUMNS)
    ratings = pd.DataFrame.from_records(records.ratings, columns=RATING_COLUMNS)
    players = pd.DataFrame.from_records(player_rows, columns=PLAYER_COLUMNS)
    metrics = _metrics(sim, games, participants, waits, players)
    return SimulationResult(
        sim.scenario, seed, games, participants, waits, ratings, players, metrics
    )


def collect_streamed(sim: LobbySimulation, seed: int, sink: CsvSink) -> SimulationResult:
    """Write a streamed run's last records, then compute its metrics from the files."""
    sim.sample_ratings(everyone=True)
    sim.apply_pending()
    waiting, player_rows = _final_rows(sim)
    sim.records.waits.extend(waiting)
    sim.records.players.extend(player_rows)
    sim.records.flush(force=True)
    # Only the columns the metrics need are read back.
    games = pd.read_csv(
        sink.path("games"),
        usecols=[
            "game_id",
            "start",
            "draw_prob_true",
            "skill_gap_true",
            "stronger_side_won",
            "winner",
        ],
        dtype={"stronger_side_won": "boolean"},
    )
    # The metrics by tenure (with a base) also need who waited and when each seat was taken.
    by_tenure = sim.scenario.base is not None
    participants = pd.read_csv(
        sink.path("participants"),
        usecols=["game_id", "player_id", "team", *(["joined"] if by_tenure else [])],
    )
    waits = pd.read_csv(
        sink.path("waits"),
        usecols=[*(["player_id"] if by_tenure else []), "enqueued", "outcome", "wait"],
    )
    players = pd.read_csv(sink.path("players"), usecols=["player_id", "skill", "registered"])
    players = players.sort_values("player_id", ignore_index=True)
    metrics = _metrics(sim, games, participants, waits, players)
    result = SimulationResult(sim.scenario, seed, None, None, None, None, None, metrics)
    result.records_dir = sink.folder
    return result


def _metrics(
    sim: LobbySimulation,
    games: pd.DataFrame,
    participants: pd.DataFrame,
    waits: pd.DataFrame,
    players: pd.DataFrame,
) -> dict[str, float]:
    """Return the metrics of a finished run (:mod:`lobbysim.metrics`).

    They count from the scenario's ``metrics_start``. The metrics by tenure are added only for
    a scenario with a player base, and the retention metrics only for a base with a retention
    model, so a run without them has exactly the metrics it always had.
    """
    ids = players.player_id.to_numpy(dtype=np.int64)
    if not np.array_equal(ids, np.arange(len(ids))):
        raise RuntimeError("player records are incomplete")
    final = {name: rater.means(ids) for name, rater in sim.raters}
    scenario = sim.scenario
    skills = players.skill.to_numpy()
    registered = players.registered.to_numpy(dtype=bool)
    metrics = compute_metrics(
        games,
        participants,
        waits,
        final_ratings=final,
        skill_scale={name: bool(rater.skill_scale) for name, rater in sim.raters},
        skills=skills,
        registered=registered,
        warmup=scenario.metrics_start,
        horizon=float(sim.env.now),
    )
    if scenario.base is not None:
        start = scenario.metrics_start
        metrics |= tenure_metrics(
            games,
            participants,
            waits,
            start=start,
            newcomer_games=scenario.base.newcomer_games,
        )
        metrics |= veteran_kendall_taus(games, participants, final, skills, registered, start=start)
    if sim.base is not None and sim.base.retention is not None:
        metrics |= sim.base.retention.metrics(float(sim.env.now))
    return metrics
