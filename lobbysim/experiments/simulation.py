"""The Python API of a lobby run: ``simulate(scenario, seed) -> SimulationResult``.

It builds one :class:`lobbysim.sim.LobbySimulation` on the scenario's random streams, runs it to the
horizon and turns its records into pandas frames (``games``, ``participants``, ``waits``,
``ratings``, ``players``, typed by :data:`lobbysim.records.rows.RECORD_COLUMNS`) and a metrics dict
(:mod:`lobbysim.stats.metrics`). With ``records.stream`` the records go to files in the scenario's
``records.format`` instead (CSV by default, or Parquet: :mod:`lobbysim.records.files`).
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.records.files import RecordFileSink, record_frame
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS, TEAM_COLUMNS, record_schema
from lobbysim.records.writer import open_sink
from lobbysim.scenario import Scenario
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.metrics import FAIR_BAND
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.lobby import LobbySimulation
from lobbysim.sim.rule_columns import scenario_rule_attributes
from lobbysim.stats.metrics import (
    compute_metrics,
    team_metrics,
    tenure_metrics,
    veteran_kendall_taus,
)
from lobbysim.streams import Streams

# The columns of each record kind (the schema with their dtypes:
# lobbysim.records.rows.RECORD_COLUMNS).
GAME_COLUMNS = list(RECORD_COLUMNS["games"])
PARTICIPANT_COLUMNS = list(RECORD_COLUMNS["participants"])
WAIT_COLUMNS = list(RECORD_COLUMNS["waits"])
RATING_COLUMNS = list(RECORD_COLUMNS["ratings"])
PLAYER_COLUMNS = list(RECORD_COLUMNS["players"])


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
        metrics: see :mod:`lobbysim.stats.metrics`.
        records_dir: with streamed records, the folder of their files (the frames above are
            then None; :func:`lobbysim.records.reader.read_records` reads them back).

    Shown, it is a few lines (what was run, the frames' sizes, :meth:`key_metrics`), and in a
    notebook a small table of the key metrics; ``metrics_series`` is ``metrics`` as a pandas
    Series. :func:`lobbysim.simulate` returns its notebook view,
    :class:`lobbysim.reporting.notebook.NotebookSimulationResult`, which adds the units.
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

    #: The metrics shown first (those the run has), then the driving rater's Kendall's tau.
    KEY_METRICS = (
        "queue_time_mean",
        "queue_time_p90",
        "abandonment_rate",
        "games_per_hour",
        "draw_prob_true_mean",
        "skill_gap_true_mean",
        "team_gap_true_mean",
        "fair_band_share",
    )

    def key_metrics(self) -> list[str]:
        """Return the names of the key metrics the run has (:data:`KEY_METRICS`, then the
        driving rater's Kendall's tau)."""
        driver = f"{self.scenario.raters.driver.name}.kendall_tau"
        return [m for m in (*self.KEY_METRICS, driver) if m in self.metrics]

    @property
    def metrics_series(self) -> pd.Series:
        """Return ``metrics`` as a float Series indexed by metric name (index ``metric``)."""
        series = pd.Series(self.metrics, dtype=float, name="value")
        series.index.name = "metric"
        return series

    def describe(self) -> str:
        """Return the first line of the repr: the scenario, seed and horizon."""
        horizon = f"{self.scenario.horizon:g} min"
        return f"SimulationResult: {self.scenario.name}, seed {self.seed}, {horizon} simulated"

    def __repr__(self) -> str:
        kinds = ("games", "participants", "waits", "ratings", "players")
        if self.records_dir is not None:
            frames = f"records streamed to {self.records_dir}"
        else:
            sizes = [(k, getattr(self, k)) for k in kinds]
            frames = ", ".join(f"{k} {len(f):,}" for k, f in sizes if f is not None)
            frames = f"frames (rows): {frames}"
        values = ", ".join(f"{m}={self.metrics[m]:.3g}" for m in self.key_metrics())
        key = f"  key metrics (all {len(self.metrics)} in .metrics): {values}"
        lines = [
            self.describe(),
            f"  {frames}",
            *textwrap.wrap(key, 100, subsequent_indent="    ", break_on_hyphens=False),
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Return the notebook's view: what was run and a table of the key metrics."""
        table = self.metrics_series[self.key_metrics()].to_frame().to_html()
        return f"<p>{html.escape(self.describe())}</p>\n{table}"


def simulate(
    scenario: Scenario | str | Path | Mapping[str, Any],
    seed: int | None = None,
    *,
    records_dir: str | Path | None = None,
    progress: Callable[[float, float], None] | None = None,
    plan: FastPlan | None = None,
) -> SimulationResult:
    """Run one replication of ``scenario`` with ``seed``.

    Args:
        scenario: the scenario, the path of a YAML file, a bundled scenario's name or plain
            data (:func:`lobbysim.scenario.inputs.as_scenario`).
        seed: the master seed (default: the scenario's own). The same scenario and seed give
            identical frames.
        records_dir: with ``records.stream``, the folder the record files are written to, one
            per kind in the scenario's ``records.format`` (``games.csv``, ``participants.csv``,
            ``waits.csv``, ``ratings.csv``, ``players.csv``, or ``.parquet``); required then,
            and the result's frames are left unloaded (None): read the files with
            :func:`lobbysim.records.reader.read_records`. The metrics are computed from the files.
        progress: called as ``progress(now, horizon)`` in simulated minutes, a hundred times
            over the run (:meth:`LobbySimulation.run`); it changes no result.
        plan: the speed kernels allowed (:class:`~lobbysim.sim.fast.plan.FastPlan`; ``off()``:
            none), for tests; every kernel gives the same result as its general path.
    """
    if not isinstance(scenario, Scenario):
        scenario = as_scenario(scenario)
    seed = scenario.seed if seed is None else seed
    if not scenario.records.stream:
        sim = LobbySimulation(scenario, Streams(seed), plan=plan)
        with sim.tuned():
            sim.run(progress=progress)
            return collect(sim, seed)
    if records_dir is None:
        raise ValueError("records.stream is set: simulate() needs records_dir to write them to")
    sink = open_sink(Path(records_dir), scenario.records.format, schema=schema_of(scenario))
    try:
        sim = LobbySimulation(scenario, Streams(seed), sink=sink, plan=plan)
        with sim.tuned():
            sim.run(progress=progress)
            return collect_streamed(sim, seed, sink)
    except BaseException:  # Ctrl-C, SIGTERM or an error: the files are not a run's
        sink.abort()
        raise
    finally:
        sink.close()  # closed already where the run ended


def schema_of(scenario: Scenario) -> dict[str, dict[str, str]]:
    """Return the columns of a scenario's records (:func:`lobbysim.records.rows.record_schema`)."""
    return record_schema(
        world=scenario.world is not None,
        parties=scenario.parties is not None,
        teams=scenario.game.mode == "team",
        rules=scenario_rule_attributes(scenario),
    )


def _final_rows(sim: LobbySimulation) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Return the rows of players still waiting, and of every player not yet written out."""
    recorder = sim.recorder
    waiting = recorder.still_waiting(list(sim.pool.values()), float(sim.env.now))
    return waiting, recorder.player_rows([p for p in sim.players if p is not None])


def collect(sim: LobbySimulation, seed: int) -> SimulationResult:
    """Turn a finished simulation's in-memory records into a :class:`SimulationResult`."""
    sim.sample_ratings(everyone=True)
    records = sim.records
    schema = schema_of(sim.scenario)
    games = record_frame("games", records.games, schema["games"])
    participants = record_frame("participants", records.participants, schema["participants"])
    waiting, player_rows = _final_rows(sim)
    waits = record_frame("waits", records.waits + waiting, schema["waits"])
    ratings = record_frame("ratings", records.ratings)
    players = record_frame("players", player_rows, schema["players"])
    metrics = _metrics(sim, games, participants, waits, players)
    return SimulationResult(
        sim.scenario, seed, games, participants, waits, ratings, players, metrics
    )


def collect_streamed(sim: LobbySimulation, seed: int, sink: RecordFileSink) -> SimulationResult:
    """Write a streamed run's last records, close the sink, then compute its metrics from the
    files (read back with the schema's dtypes, every float exactly as it was written)."""
    sim.sample_ratings(everyone=True)
    sim.apply_pending()
    waiting, player_rows = _final_rows(sim)
    sim.records.waits.extend(waiting)
    sim.records.players.extend(player_rows)
    sim.records.flush(force=True)
    sink.close()
    # Only the columns the metrics need are read back; the metrics by tenure (with a base) also
    # need who waited and when each seat was taken.
    by_tenure = sim.scenario.base is not None
    # the world's metrics by region and the parties' by party need who waited
    by_player = by_tenure or sim.scenario.world is not None or sim.scenario.parties is not None
    teams = list(TEAM_COLUMNS["games"]) if sim.scenario.game.mode == "team" else []
    columns = {
        "games": [
            "game_id",
            "start",
            "draw_prob_true",
            "skill_gap_true",
            "stronger_side_won",
            "winner",
            *teams,  # the team metrics'
        ],
        "participants": ["game_id", "player_id", "team", *(["joined"] if by_tenure else [])],
        "waits": [*(["player_id"] if by_player else []), "enqueued", "outcome", "wait"],
        "players": ["player_id", "skill", "registered"],
    }
    frames = read_records(sink.folder, columns, columns=columns, fmt=sink.format)
    games, participants, waits = frames["games"], frames["participants"], frames["waits"]
    players = frames["players"].sort_values("player_id", ignore_index=True)
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
    """Return the metrics of a finished run (:mod:`lobbysim.stats.metrics`).

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
    if scenario.game.mode == "team":
        band = FAIR_BAND if scenario.metrics is None else scenario.metrics.fair_band
        metrics |= team_metrics(games, scenario.metrics_start, band)
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
    if sim.world is not None:
        metrics |= sim.world.metrics(waits, games, participants)
    if sim.parties is not None:
        metrics |= sim.parties.metrics(waits)
    if sim.rule_pass is not None:
        metrics |= sim.rule_pass.metrics()
    return metrics
