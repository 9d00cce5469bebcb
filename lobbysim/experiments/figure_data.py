"""What the run report's figures take of each replication: small parts, computed from its records.

The report of ``lobbysim run`` and ``compare`` (:mod:`lobbysim.reporting.run_figures`) draws its
figures over every replication of each policy. Of a replication's record frames each figure
needs only a little, its *part* (:func:`part`), keyed by :data:`Key` (a part's name, then its
arguments):

- ``("queue_waits",)``: the queue times of the matched spells that began after the warm-up,
  sorted (the empirical CDF of the queue times pools them over the replications);
- ``("draw_probability",)`` and ``("abandonment",)``: the mean true draw probability of the games
  and the abandoned share of the decided spells in each of :data:`TIME_BINS` bins of time
  (:func:`time_edges`);
- ``("rating_error", rater, statistic)``: a rater's RMSE (``"rmse"``) or Kendall's tau
  (``"tau"``) against true skill at each rating sample (:func:`rating_error_per_time`);
- ``("fairness",)``: the true skills of every player, and of those with enough decided games
  their skills and distances of the win ratio from 0.5 (the skill bands are quantiles over all
  the replications' players);
- ``("convergence", rater)``: a rater's error by games played
  (:func:`lobbysim.stats.metrics.rating_error_by_tenure`), with a player base;
- ``("region_hours", region, utc_offset_hours)``: a region's mean matched queue time and its
  spells by local hour of the day, with a world.

A part is None where the replication has not the records it needs (its frames dropped, say),
as a figure then leaves the replication out. The parts are a few kilobytes per replication, but
for the queue times and the skills: 8 bytes per matched spell and 8 to 24 per player.

``lobbysim run`` and ``compare`` reduce each replication to the parts its report draws
(:func:`report_keys`) in the worker that ran it, from its frames or, streamed, from its record
files, and drop the frames (:func:`~lobbysim.experiments.replications.run_experiment` with
``keep="report"``), so that a comparison's memory does not grow with its replications. A result
that kept its frames (the Python API's) gets the same parts from them when its report is drawn,
one replication at a time: the figures are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.experiments.simulation import SimulationResult, schema_of
from lobbysim.raters import RATERS
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS
from lobbysim.scenario import Scenario
from lobbysim.stats.metrics import (
    LOBBY_STATES,
    rating_error_by_tenure,
    rating_kendall_tau,
    rating_rmse,
    win_ratio_distance,
)

Key = tuple[Any, ...]
"""A part's key: its name, then its arguments (a rater, a statistic, a region and its offset)."""

TIME_BINS = 30
"""Bins of simulated time in the over-time figures, over the shown window: from the metrics'
start (the end of the warm-up, or the policy switch) to the horizon."""

QUEUE_WAITS = "queue_waits"
DRAW_PROBABILITY = "draw_probability"
ABANDONMENT = "abandonment"
RATING_ERROR = "rating_error"
FAIRNESS = "fairness"
CONVERGENCE = "convergence"
REGION_HOURS = "region_hours"

STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "rmse": rating_rmse,
    "tau": rating_kendall_tau,
}
"""The statistics of a rater's ratings against true skill, by a ``rating_error`` key's name."""

NO_REGIONS = ()
"""The ``region_hours`` part of a replication whose records have no regions."""

HOURS = 24
MINUTES_PER_HOUR = 60.0

#: The record kinds each part reads (a part is None if one of them is missing).
KINDS: dict[str, tuple[str, ...]] = {
    QUEUE_WAITS: ("waits",),
    DRAW_PROBABILITY: ("games",),
    ABANDONMENT: ("waits",),
    RATING_ERROR: ("ratings", "players"),
    FAIRNESS: ("players",),
    CONVERGENCE: ("ratings", "games", "participants", "players"),
    REGION_HOURS: ("waits",),
}

#: The columns the parts read of each kind, where they are read back from record files (those
#: a run's records have: ``region`` only with a world).
COLUMNS: dict[str, tuple[str, ...]] = {
    "games": ("game_id", "start", "end", "draw_prob_true"),
    "participants": ("game_id", "player_id"),
    "waits": ("enqueued", "outcome", "wait", "region"),
    "ratings": ("time", "player_id", "rater", "rating"),
    "players": ("player_id", "skill", "registered", "games", "wins", "state"),
}

# --------------------------------------------------------------------------------------------
# The computations shared with the figures


def shown_from(scenario: Scenario) -> float:
    """Return where the over-time figures start: the metrics' start (the end of the warm-up,
    or the policy switch if later), unless that leaves no time to show."""
    start = float(scenario.metrics_start)
    return start if start < float(scenario.horizon) else 0.0


def time_edges(scenario: Scenario) -> np.ndarray:
    """Return the edges of the over-time figures' bins: from :func:`shown_from` to the horizon."""
    return np.linspace(shown_from(scenario), float(scenario.horizon), TIME_BINS + 1)


def binned_means(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Return the mean of ``values`` per bin of ``times`` (NaN for an empty bin); times outside
    the edges are left out."""
    bins = len(edges) - 1
    keep = np.isfinite(times) & np.isfinite(values) & (times >= edges[0]) & (times <= edges[-1])
    index = np.clip(np.searchsorted(edges, times[keep], side="right") - 1, 0, bins - 1)
    sums = np.bincount(index, weights=values[keep], minlength=bins)
    counts = np.bincount(index, minlength=bins).astype(float)
    means = np.full(bins, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return means


def rating_error_per_time(
    ratings: pd.DataFrame,
    players: pd.DataFrame,
    rater: str,
    horizon: float,
    statistic: Callable[[np.ndarray, np.ndarray], float],
) -> pd.Series:
    """Return per sample time the statistic of one rater's ratings against true skill.

    Only registered players count; the sample at the horizon (of every player seen) is cut
    down to the players still in the lobby, like the periodic samples.
    """
    columns = [c for c in ("player_id", "skill", "registered", "state") if c in players.columns]
    merged = ratings[ratings["rater"] == rater].merge(players[columns], on="player_id", how="inner")
    if "registered" in merged.columns:
        merged = merged[merged["registered"].astype(bool)]
    if "state" in merged.columns:
        last = merged["time"] >= horizon
        merged = merged[~last | merged["state"].isin(LOBBY_STATES)]
    out = {
        float(time): statistic(
            group["rating"].to_numpy(dtype=float), group["skill"].to_numpy(dtype=float)
        )
        for time, group in merged.groupby("time", sort=True)
    }
    return pd.Series(out, dtype=float)


def local_hours(enqueued: np.ndarray, utc_offset_hours: float) -> np.ndarray:
    """Return the local hour of the day (0-23) at which each spell began, in a time zone
    ``utc_offset_hours`` from the simulation's clock (minute 0 is midnight UTC)."""
    minutes = (np.asarray(enqueued, dtype=float) + utc_offset_hours * MINUTES_PER_HOUR) % 1440.0
    return (minutes // MINUTES_PER_HOUR).astype(int) % HOURS


def rater_on_skill_scale(name: str) -> bool | None:
    """Return whether the rater ``name``'s ratings live on the true-skill scale, as the rater
    registry says; None if it cannot be looked up."""
    try:
        return bool(RATERS.get(name).skill_scale)
    except (ValueError, KeyError, AttributeError):
        return None


# --------------------------------------------------------------------------------------------
# The parts


def _queue_waits(scenario: Scenario, waits: pd.DataFrame) -> np.ndarray | None:
    if waits.empty:
        return None
    chosen = waits[(waits["enqueued"] >= float(scenario.warmup)) & (waits["outcome"] == "matched")]
    values = np.sort(chosen["wait"].to_numpy(dtype=float))
    return values[np.isfinite(values)]


def _draw_probability(scenario: Scenario, games: pd.DataFrame) -> np.ndarray | None:
    if games.empty:
        return None
    start = games["start"].to_numpy(dtype=float)
    draw = games["draw_prob_true"].to_numpy(dtype=float)
    return binned_means(start, draw, time_edges(scenario))


def _abandonment(scenario: Scenario, waits: pd.DataFrame) -> np.ndarray | None:
    decided = waits[waits["outcome"].isin(("matched", "abandoned"))]
    if decided.empty:
        return None
    abandoned = (decided["outcome"] == "abandoned").to_numpy(dtype=float)
    enqueued = decided["enqueued"].to_numpy(dtype=float)
    return binned_means(enqueued, abandoned, time_edges(scenario))


def _fairness(players: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    if players.empty:
        return None
    skill = players["skill"].to_numpy(dtype=float)
    distance = win_ratio_distance(players["wins"], players["games"])
    enough = np.isfinite(distance)
    return skill, skill[enough], distance[enough]


def _region_hours(
    scenario: Scenario, waits: pd.DataFrame, region: str, offset: float
) -> tuple[np.ndarray, np.ndarray] | tuple[()]:
    if "region" not in waits.columns:
        return NO_REGIONS
    mine = waits[(waits["region"] == region) & (waits["enqueued"] >= scenario.metrics_start)]
    hour = local_hours(mine["enqueued"].to_numpy(), offset)
    counts = np.bincount(hour, minlength=HOURS)
    matched = (mine["outcome"] == "matched").to_numpy()
    wait = mine["wait"].to_numpy(dtype=float)
    sums = np.bincount(hour[matched], weights=wait[matched], minlength=HOURS)
    n = np.bincount(hour[matched], minlength=HOURS).astype(float)
    means = np.full(HOURS, np.nan)
    np.divide(sums, n, out=means, where=n > 0)
    return means, counts


def part(key: Key, scenario: Scenario, frames: Mapping[str, pd.DataFrame | None]) -> Any:
    """Return one replication's part ``key`` (module docstring) from its record frames by kind
    (None if one it needs is missing); ``scenario``: the replication's."""
    name, *args = key
    needed = [frames.get(kind) for kind in KINDS[name]]
    if any(frame is None for frame in needed):
        return None
    if name == QUEUE_WAITS:
        return _queue_waits(scenario, *needed)
    if name == DRAW_PROBABILITY:
        return _draw_probability(scenario, *needed)
    if name == ABANDONMENT:
        return _abandonment(scenario, *needed)
    if name == RATING_ERROR:
        rater, statistic = args
        ratings, players = needed
        horizon = float(scenario.horizon)
        return rating_error_per_time(ratings, players, rater, horizon, STATISTICS[statistic])
    if name == FAIRNESS:
        return _fairness(*needed)
    if name == CONVERGENCE:
        (rater,) = args
        ratings, games, participants, players = needed
        return rating_error_by_tenure(
            ratings,
            games,
            participants,
            players,
            rater,
            start=scenario.metrics_start,
            horizon=float(scenario.horizon),
        )
    if name == REGION_HOURS:
        region, offset = args
        (waits,) = needed
        return _region_hours(scenario, waits, region, offset)
    raise KeyError(f"no figure part {name!r}")


def report_keys(scenario: Scenario, on_scale: bool | None = None) -> list[Key]:
    """Return the keys of the parts the run report draws of a replication of ``scenario``.

    ``on_scale``: whether the driving rater is on the skill scale (its error is then an RMSE,
    else Kendall's tau, and only then is its convergence curve drawn); None: both statistics,
    for a report to choose from (:func:`rater_on_skill_scale` cannot tell).
    """
    driver = scenario.raters.driver.name
    statistics = {True: ["rmse"], False: ["tau"], None: ["rmse", "tau"]}[on_scale]
    keys: list[Key] = [(QUEUE_WAITS,), (DRAW_PROBABILITY,)]
    keys += [(RATING_ERROR, driver, s) for s in statistics]
    keys += [(FAIRNESS,), (ABANDONMENT,)]
    if scenario.base is not None and on_scale is not False:
        keys.append((CONVERGENCE, driver))
    if scenario.world is not None:
        keys += [(REGION_HOURS, r.name, r.utc_offset_hours) for r in scenario.world.regions]
    return keys


@dataclass
class FigureData:
    """One replication's parts (module docstring), by key."""

    parts: dict[Key, Any] = field(default_factory=dict)

    def __contains__(self, key: object) -> bool:
        return key in self.parts

    def __getitem__(self, key: Key) -> Any:
        return self.parts[key]

    @property
    def nbytes(self) -> int:
        """Return the bytes of the parts' arrays and frames (what the replication keeps)."""
        return sum(_nbytes(value) for value in self.parts.values())


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=True).sum())
    if isinstance(value, pd.Series):
        return int(value.memory_usage(index=True, deep=True))
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return 0


def record_frames(
    run: SimulationResult, kinds: Iterable[str], *, only_needed: bool = False
) -> dict[str, pd.DataFrame | None]:
    """Return a run's record frames of ``kinds``: those it holds, else read back from its
    record files if it streamed them (only the columns the parts read, with ``only_needed``),
    else None."""
    frames: dict[str, pd.DataFrame | None] = {}
    unread = []
    for kind in kinds:
        frames[kind] = getattr(run, kind, None)
        if frames[kind] is None and run.records_dir is not None:
            unread.append(kind)
    if unread:
        assert run.records_dir is not None
        columns = None
        if only_needed:
            schema = schema_of(run.scenario)
            columns = {k: [c for c in COLUMNS[k] if c in schema[k]] for k in unread}
        read = read_records(
            run.records_dir, unread, columns=columns, fmt=run.scenario.records.format
        )
        frames.update({kind: read.get(kind) for kind in unread})
    return frames


def figure_data(run: SimulationResult, keys: Sequence[Key] | None = None) -> FigureData:
    """Return the parts ``keys`` of a run (default: those its report draws, :func:`report_keys`)
    from its record frames, or from its record files if it streamed them (each kind read once,
    only the columns the parts need)."""
    scenario = run.scenario
    if keys is None:
        keys = report_keys(scenario, rater_on_skill_scale(scenario.raters.driver.name))
    kinds = [kind for kind in RECORD_COLUMNS if any(kind in KINDS[key[0]] for key in keys)]
    frames = record_frames(run, kinds, only_needed=True)
    return FigureData({key: part(key, scenario, frames) for key in keys})
