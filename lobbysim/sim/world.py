"""Where players are: regions, data centres, each player's latencies, and the latency rules.

A scenario's ``world`` (:class:`~lobbysim.scenario.WorldConfig`) declares data centres and the
regions players come from. :class:`World` gives every player, when they are registered (a guest
as they arrive, a base member as they join), a region, drawn by the regions' shares from the
stream ``regions``, and a latency to every data centre, drawn by the latency model
(:mod:`lobbysim.players.latency`) from the stream ``latency``; a base member keeps both across
visits.
Nothing is drawn from any other stream, so a scenario without a world runs exactly as before.

**Limits.** ``matchmaker.max_latency_ms`` and ``matchmaker.max_delta_ping_ms`` are step
schedules over a player's own wait (:class:`LatencyLimit`): the most latency the player may have
to the game's data centre, and the most above their best data centre. A game may start only in a
data centre within every seat's limits at that moment; of those, the host is the one with the
lowest worst-seat latency (``world.host: lowest_mean``: the lowest mean), ties to the first
listed. The matchmaker applies the limits to every pair it considers (the pool's quality is
``-inf`` for a pair with no such data centre, so it never clears a threshold, in every assignment
and in group formation), to every group it forms (a group with no such data centre does not
start) and to every back-filled seat (the game's own data centre).

**Metrics** (from the metrics' start): ``latency_ms_mean`` and ``latency_ms_p90`` over seats
(back-filled ones too), ``delta_ping_ms_mean``, ``cross_region_share`` (games whose players at
the start come from more than one region), and per region ``queue_time_mean@<region>``,
``abandonment_rate@<region>`` and ``skill_gap_true_mean@<region>`` (a game's true skill gap
counted once per seat of a player from the region), and ``queue_time_peak@<region>`` and
``queue_time_quiet@<region>``: the mean queue time in the region's six busiest and six quietest
local hours of the day (a region's quiet hours are where a latency limit hurts).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from lobbysim.players.latency import LatencyModel, check_latency_output
from lobbysim.policies.assignment import QualityFn
from lobbysim.registry import PluginRef
from lobbysim.scenario import WorldConfig
from lobbysim.sim.entities import FloatArray, IdArray
from lobbysim.sim.rules import LATENCY_KINDS, Rule
from lobbysim.streams import Streams

IntArray = NDArray[np.intp]
MINUTES_PER_HOUR = 60.0


class LatencyLimit:
    """A limit in ms as a step function of a player's wait (minutes): the ms of the last step
    whose wait is at most the player's."""

    __slots__ = ("_limits", "_steps", "_wait_array", "_waits")

    def __init__(self, steps: Sequence[tuple[float, float]]) -> None:
        self._steps = tuple((float(w), float(ms)) for w, ms in steps)
        self._waits = [w for w, _ in self._steps]
        self._wait_array = np.array(self._waits)
        self._limits = np.array([ms for _, ms in self._steps])

    def at(self, waited: FloatArray) -> FloatArray:
        """Return the limits of players who have waited ``waited`` minutes."""
        index = np.searchsorted(self._wait_array, np.asarray(waited), side="right") - 1
        result: FloatArray = self._limits[np.maximum(index, 0)]
        return result

    def at_one(self, waited: float) -> float:
        """:meth:`at` of one wait."""
        return self._steps[max(bisect.bisect_right(self._waits, waited) - 1, 0)][1]


class World:
    """The regions and latencies of a run's players, and the latency limits (see the module
    docstring).

    Args:
        config: the scenario's world.
        model: the latency model.
        streams: the run's random streams (``regions``, ``latency``).
        max_latency, max_delta_ping: the limits (None: none).
        metrics_start: when the metrics start.
        host_rules: a rule set's rules (:class:`~lobbysim.sim.rules.Rule`, of
            ``matchmaker.rules``); its latency rules narrow where a game is hosted
            (:meth:`host`). Empty: none.
    """

    def __init__(
        self,
        config: WorldConfig,
        model: LatencyModel,
        streams: Streams,
        max_latency: LatencyLimit | None = None,
        max_delta_ping: LatencyLimit | None = None,
        metrics_start: float = 0.0,
        host_rules: Sequence[Rule] = (),
    ) -> None:
        self.config = config
        self.region_names = config.region_names
        self.data_centres = config.data_centres
        self._shares = np.array([r.share for r in config.regions])
        self._shares = self._shares / self._shares.sum()
        #: Each region's time zone, in minutes from UTC.
        self.offsets = [r.utc_offset_hours * MINUTES_PER_HOUR for r in config.regions]
        self._model = model
        self._plugin = PluginRef("world.latency", "latency model", config.latency.name)
        self._region_rng = streams.get("regions")
        self._latency_rng = streams.get("latency")
        self.max_latency = max_latency
        self.max_delta_ping = max_delta_ping
        #: Whether a limit applies (else every data centre is open to everyone).
        self.limits = max_latency is not None or max_delta_ping is not None
        self._mean_host = config.host == "lowest_mean"
        k = len(self.data_centres)
        self._n = 0
        self._region = np.zeros(1024, dtype=np.intp)
        self._latency = np.zeros((1024, k))
        self._best = np.zeros(1024)
        self._start = metrics_start
        self._seat_latency: list[float] = []
        self._seat_delta: list[float] = []
        self._games = 0
        self._cross = 0
        self._duel_hosts: dict[int, int] = {}  # 1v1 games' data centres, until recorded
        # a rule set's latency rules: a game is best hosted where they hold for every player
        # (:mod:`lobbysim.sim.rule_pass`); if nowhere, the limits alone decide
        self._host_rules = [r for r in host_rules if r.kind in LATENCY_KINDS]

    # ------------------------------------------------------------------ the players
    def register(self, ids: IdArray, parties: Sequence[int] | None = None) -> None:
        """Draw the region and latencies of new players ``ids`` (the next ids, in order).

        ``parties``: the sizes of the parties the players come in, in id order (a party's
        members share one region, drawn once); None: each player on their own.
        """
        n = len(ids)
        if n == 0:
            return
        first = int(ids[0])
        if first != self._n or int(ids[-1]) != first + n - 1:
            raise RuntimeError("players are registered with the world in id order")
        count = n if parties is None else len(parties)
        regions = self._region_rng.choice(len(self.region_names), size=count, p=self._shares)
        regions = regions.astype(np.intp)
        if parties is not None:
            if sum(parties) != n:
                raise RuntimeError(f"parties of {sum(parties)} players for {n} players")
            regions = np.repeat(regions, parties)
        raw = self._plugin.call(
            "latencies(rng, regions, region_names, data_centres)",
            self._model.latencies,
            self._latency_rng,
            regions,
            self.region_names,
            self.data_centres,
        )
        try:
            latency = check_latency_output(raw, n, len(self.data_centres))
        except ValueError as exc:
            raise self._plugin.failure("latencies(...)", exc) from None
        end = first + n
        if end > len(self._region):
            size = max(end, 2 * len(self._region))
            self._region = np.resize(self._region, size)
            grown = np.zeros((size, len(self.data_centres)))
            grown[: self._n] = self._latency[: self._n]
            self._latency = grown
            self._best = np.resize(self._best, size)
        self._region[first:end] = regions
        self._latency[first:end] = latency
        self._best[first:end] = latency.min(axis=1)
        self._n = end

    def region_of(self, pids: IdArray) -> IntArray:
        """Return the region index of each player."""
        return self._region[np.asarray(pids, dtype=np.intp)]

    def latencies_of(self, pids: IdArray) -> FloatArray:
        """Return each player's latencies to every data centre, ms (rows: players)."""
        return self._latency[np.asarray(pids, dtype=np.intp)]

    def region_name(self, pid: int) -> str:
        """Return the name of a player's region."""
        return self.region_names[int(self._region[pid])]

    def latency_of(self, pid: int, data_centre: int) -> float:
        """Return a player's latency to a data centre, ms."""
        return float(self._latency[pid, data_centre])

    def offset_of(self, pid: int) -> float:
        """Return the time zone of a player's region, minutes from UTC."""
        return self.offsets[int(self._region[pid])]

    # ---------------------------------------------------------------------- the limits
    def _open(self, pids: IdArray, waited: FloatArray) -> NDArray[np.bool_]:
        """Return, per player (rows) and data centre (columns), whether it is within the
        player's limits now."""
        lat = self._latency[pids]
        ok = np.ones(lat.shape, dtype=bool)
        if self.max_latency is not None:
            ok &= lat <= self.max_latency.at(waited)[:, None]
        if self.max_delta_ping is not None:
            delta = lat - self._best[pids][:, None]
            ok &= delta <= self.max_delta_ping.at(waited)[:, None]
        return ok

    def open_matrix(self, pids: IdArray, waited: FloatArray) -> NDArray[np.bool_]:
        """Return, per player (rows) and data centre (columns), whether the data centre is
        within the player's limits after waiting ``waited`` minutes."""
        return self._open(np.asarray(pids, dtype=np.intp), np.asarray(waited))

    def mask(self, quality: QualityFn, ids: IdArray, waited: FloatArray) -> QualityFn:
        """Return the pool's quality with ``-inf`` for a pair that no data centre serves within
        both players' limits (pool indices; ``ids`` and ``waited`` in pool order)."""
        pids = np.asarray(ids, dtype=np.intp)
        open_ = self._open(pids, np.asarray(waited))

        def within(i: IntArray, j: IntArray) -> FloatArray:
            values = quality(i, j)
            served = (open_[i] & open_[j]).any(axis=-1)
            result: FloatArray = np.where(served, values, -np.inf)
            return result

        return within

    def host(self, pids: Sequence[int], waited: Sequence[float]) -> int:
        """Return the data centre a game of these players is hosted in: of those within every
        seat's limits, the lowest worst-seat (or mean) latency; -1 if none is."""
        index = np.asarray(pids, dtype=np.intp)
        lat = self._latency[index]
        cost = lat.mean(axis=0) if self._mean_host else lat.max(axis=0)
        if self.limits:
            cost = np.where(
                self._open(index, np.asarray(waited, dtype=float)).all(axis=0), cost, np.inf
            )
        if self._host_rules:  # those keeping the rules for every player, if any
            kept = np.where(self._keep_rules(lat, waited), cost, np.inf)
            cost = kept if np.isfinite(kept).any() else cost
        best = int(np.argmin(cost))
        return best if math.isfinite(cost[best]) else -1

    def _keep_rules(self, lat: FloatArray, waited: Sequence[float]) -> NDArray[np.bool_]:
        """Return which data centres keep every latency rule of :attr:`_host_rules` for a game
        of players with latencies ``lat`` (rows) who have waited ``waited``."""
        ok = np.ones(lat.shape[1], dtype=bool)
        waits = list(waited)
        for rule in self._host_rules:
            limits = rule.limits(waits)
            if limits is None:
                continue
            x = lat - lat.min(axis=1)[:, None] if rule.kind == "delta_ping" else lat
            ok &= (x <= np.asarray(limits)[:, None]).all(axis=0)
        return ok

    def can_seat(self, data_centre: int, pids: IdArray, waited: FloatArray) -> NDArray[np.bool_]:
        """Return which players may take a seat of a game hosted in ``data_centre`` now."""
        if not self.limits:
            return np.ones(len(pids), dtype=bool)
        return self._open(np.asarray(pids, dtype=np.intp), np.asarray(waited))[:, data_centre]

    def can_take(self, pid: int, data_centre: int, waited: float) -> bool:
        """:meth:`can_seat` of one player, on floats."""
        latency = float(self._latency[pid, data_centre])
        if self.max_latency is not None and not latency <= self.max_latency.at_one(waited):
            return False
        if self.max_delta_ping is None:
            return True
        return latency - float(self._best[pid]) <= self.max_delta_ping.at_one(waited)

    # ------------------------------------------------------------------------ tallies
    def host_duel(self, game_id: int, data_centre: int) -> None:
        """Note where a 1v1 game is hosted, until its record asks (:meth:`duel_host`)."""
        self._duel_hosts[game_id] = data_centre

    def duel_host(self, game_id: int) -> int:
        """Return (and forget) where a 1v1 game was hosted."""
        return self._duel_hosts.pop(game_id)

    def seated(self, pid: int, data_centre: int, now: float) -> None:
        """Note a seat taken in a game hosted in ``data_centre`` (at its start or back-filled)."""
        if now < self._start:
            return
        latency = float(self._latency[pid, data_centre])
        self._seat_latency.append(latency)
        self._seat_delta.append(latency - float(self._best[pid]))

    def started(self, pids: Sequence[int], now: float) -> None:
        """Note a game starting with these players (for the share of cross-region games)."""
        if now < self._start:
            return
        regions = self._region[np.asarray(pids, dtype=np.intp)]
        self._games += 1
        self._cross += bool((regions != regions[0]).any())

    def metrics(
        self, waits: pd.DataFrame, games: pd.DataFrame, participants: pd.DataFrame
    ) -> dict[str, float]:
        """Return the world's metrics (see the module docstring) from its tallies and the run's
        records (waits, games and participants from the metrics' start)."""
        out: dict[str, float] = {}
        seats = np.array(self._seat_latency)
        out["latency_ms_mean"] = float(seats.mean()) if seats.size else math.nan
        out["latency_ms_p90"] = float(np.percentile(seats, 90)) if seats.size else math.nan
        delta = np.array(self._seat_delta)
        out["delta_ping_ms_mean"] = float(delta.mean()) if delta.size else math.nan
        out["cross_region_share"] = self._cross / self._games if self._games else math.nan
        start = self._start
        w = waits[waits.enqueued >= start]
        w_region = self.region_of(w.player_id.to_numpy())
        g = games[games.start >= start]
        p = participants[participants.game_id.isin(g.game_id)]
        gap = p.game_id.map(g.set_index("game_id").skill_gap_true).to_numpy(dtype=float)
        p_region = self.region_of(p.player_id.to_numpy())
        for r, name in enumerate(self.region_names):
            mine = w[w_region == r]
            matched = mine.wait[mine.outcome == "matched"].to_numpy()
            abandoned = int((mine.outcome == "abandoned").sum())
            decided = matched.size + abandoned
            out[f"queue_time_mean@{name}"] = float(matched.mean()) if matched.size else math.nan
            out[f"abandonment_rate@{name}"] = abandoned / decided if decided else math.nan
            gaps = gap[p_region == r]
            gaps = gaps[~np.isnan(gaps)]
            out[f"skill_gap_true_mean@{name}"] = float(gaps.mean()) if gaps.size else math.nan
            out |= _peak_and_quiet(mine, self.offsets[r], name)
        return out


#: The hours of the day counted as a region's peak and as its quiet hours.
PEAK_HOURS = 6


def _peak_and_quiet(waits: pd.DataFrame, offset: float, region: str) -> dict[str, float]:
    """Return a region's mean queue time in its busiest and its quietest hours of the day.

    The hours are local (the region's time zone) and found from the run itself: the
    :data:`PEAK_HOURS` hours of the day in which the region's players queued most often, and
    the :data:`PEAK_HOURS` in which they queued least (ties to the earlier hour), over every
    day of the metrics' window.
    """
    hour = (((waits.enqueued.to_numpy() + offset) % 1440.0) // 60.0).astype(int) % 24
    counts = np.bincount(hour, minlength=24)
    order = np.argsort(counts, kind="stable")
    matched = (waits.outcome == "matched").to_numpy()
    wait = waits.wait.to_numpy()
    out = {}
    for label, hours in (("quiet", order[:PEAK_HOURS]), ("peak", order[::-1][:PEAK_HOURS])):
        chosen = matched & np.isin(hour, hours)
        key = f"queue_time_{label}@{region}"
        out[key] = float(wait[chosen].mean()) if chosen.any() else math.nan
    return out


def world_metric_names(region_names: Sequence[str]) -> list[str]:
    """Return the world's metric names, in report order."""
    names = ["latency_ms_mean", "latency_ms_p90", "delta_ping_ms_mean", "cross_region_share"]
    for metric in (
        "queue_time_mean",
        "queue_time_peak",
        "queue_time_quiet",
        "abandonment_rate",
        "skill_gap_true_mean",
    ):
        names += [f"{metric}@{region}" for region in region_names]
    return names
