"""What a run is expected to cost, step by step: the prior of the time-left estimate.

:class:`lobbysim.running.time_left.RemainingTime` estimates the time left of a stage of runs from
the
wall time their steps take (a run reports its simulated time in :data:`PROGRESS_STEPS` equal
steps). For a step no run has measured yet, it needs the step's expected work relative to the
others: :func:`run_cost` gives it as the players expected in the lobby over the step, from the
scenario alone (no random draw, no simulation), since a step's wall cost grows with the players
waiting and playing in it, which follow the arrivals (a time-of-day profile: a quiet night, a
busy evening).

The players in the lobby follow the fluid model of a queue with ample service
(``dN/dt = arrivals(t) - N / session``): visits arrive at the expected rate of the scenario's
arrival model (``poisson``: ``rate``; ``time_of_day``: its hourly ``rates``; ``none``: none) and
of its player base's visit model (``daily``: ``base.size * per_day`` a day shaped by its
``profile``, in each region's time zone with a world; newcomers at ``newcomers_per_day``), and
each stays ``session_games_mean * game.length`` minutes. An arrival or visit model it does not
know counts as steady. Every minute also costs a twentieth of the mean load (the matchmaker's
passes run in an empty lobby too).

Steps are classed so that the estimate shares what it measured where the cost is the same: the
steps before a switch (``matchmaker.switch_at``) run the status quo whatever the policy
compared, so they are one class for every policy; the steps after it (or of a run without a
switch) are the policy's own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from lobbysim.running.time_left import TaskCost
from lobbysim.scenario import Scenario
from lobbysim.scenario.specs import spec_label
from lobbysim.sim.lobby import PROGRESS_STEPS

MINUTES_PER_DAY = 1440.0
DEFAULT_SESSION_GAMES = 10.0
"""Games a session, where the scenario does not say (the population's default)."""
FLOOR = 0.05
"""The cost of a minute of an empty lobby, as a share of the mean load."""


def _hourly(values: object, hour: np.ndarray) -> np.ndarray | None:
    """Return ``values[hour]`` of a profile of 24 numbers (None if it is not one)."""
    if not isinstance(values, list | tuple) or len(values) != 24:
        return None
    try:
        profile = np.array([float(v) for v in values])
    except (TypeError, ValueError):
        return None
    if not np.all(np.isfinite(profile)) or profile.sum() <= 0:
        return None
    return profile[hour]


def _number(params: Mapping[str, object], key: str, default: float) -> float:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return float(value)


def arrival_rate(scenario: Scenario, minutes: np.ndarray) -> np.ndarray:
    """Return the expected visits to the lobby a minute at ``minutes`` (see the module)."""
    rate = np.zeros_like(minutes, dtype=float)
    unknown = False
    spec = scenario.arrivals
    if spec.name == "poisson":
        rate += _number(spec.params, "rate", 1.0)
    elif spec.name == "time_of_day":
        start = _number(spec.params, "start_hour", 0.0)
        hour = (np.floor(start + minutes / 60.0).astype(np.int64)) % 24
        hourly = _hourly(spec.params.get("rates"), hour)
        if hourly is None:
            unknown = True
        else:
            rate += hourly
    elif spec.name != "none":
        unknown = True
    base = scenario.base
    if base is not None:
        visits = base.visits
        per_day = _number(visits.params, "per_day", 1.0) if visits.name == "daily" else 1.0
        start = _number(visits.params, "start_hour", 0.0)
        regions = [(1.0, 0.0)]
        if scenario.world is not None:
            regions = [(r.share, r.utc_offset_hours) for r in scenario.world.regions]
        shape = np.zeros_like(minutes, dtype=float)
        weights = sum(share for share, _ in regions) or 1.0
        for share, offset in regions:
            hour = (np.floor(start + offset + minutes / 60.0).astype(np.int64)) % 24
            profile = visits.params.get("profile") if visits.name == "daily" else None
            hourly = _hourly(profile, hour)
            mean = 1.0
            if hourly is not None:
                mean = float(np.mean(np.asarray(profile, dtype=float)))
            level = np.ones_like(minutes) if hourly is None else hourly / mean
            shape += share / weights * level
        rate += (base.size * per_day + base.newcomers_per_day) / MINUTES_PER_DAY * shape
    if unknown:  # steady, at the known part's mean (or 1 a minute)
        known = float(np.mean(rate)) if rate.size else 0.0
        rate += known if known > 0 else 1.0
    return rate


def session_minutes(scenario: Scenario) -> float:
    """Return the minutes a visit stays: its games times their length (at least a minute; the
    horizon where sessions have no end)."""
    if "session_games_mean" in scenario.population and (
        scenario.population["session_games_mean"] is None
    ):
        return max(float(scenario.horizon), 1.0)
    games = _number(scenario.population, "session_games_mean", DEFAULT_SESSION_GAMES)
    return max(games * float(scenario.game.length), 1.0)


def step_work(scenario: Scenario, steps: int = PROGRESS_STEPS) -> np.ndarray:
    """Return the expected work of each of ``steps`` equal steps of a run of ``scenario``: the
    player-minutes of its lobby, plus :data:`FLOOR` of the mean a minute (see the module)."""
    horizon = float(scenario.horizon)
    per_step = 10
    dt = horizon / (steps * per_step)
    minutes = (np.arange(steps * per_step) + 0.5) * dt
    rate = arrival_rate(scenario, minutes)
    stay = session_minutes(scenario)
    keep = math.exp(-dt / stay)
    load = np.empty_like(rate)
    players = 0.0
    for k, arriving in enumerate(rate):  # the exact solution over a step of constant arrivals
        players = players * keep + arriving * stay * (1.0 - keep)
        load[k] = players
    mean = float(np.mean(load)) if load.size else 0.0
    load = load + (FLOOR * mean if mean > 0 else 1.0)
    return load.reshape(steps, per_step).sum(axis=1) * dt


def run_cost(
    scenario: Scenario, label: str, *, cell: str = "", steps: int = PROGRESS_STEPS
) -> TaskCost:
    """Return the expected cost of a run of ``scenario`` under the policy ``label``, step by step
    (:class:`lobbysim.running.time_left.TaskCost`), classed as the module says; ``cell`` tells apart
    the runs of different settings (a sweep's cells)."""
    work = step_work(scenario, steps)
    switch = scenario.matchmaker.switch_at
    status_quo = scenario.matchmaker.status_quo
    own = f"{cell}{label}"
    before = f"{cell}before the switch, {spec_label(status_quo)}" if status_quo else own
    ends = (np.arange(steps) + 1) * float(scenario.horizon) / steps
    classes = tuple(before if switch is not None and end <= switch + 1e-9 else own for end in ends)
    return TaskCost(tuple(float(w) for w in work), classes, own)


def experiment_costs(scenarios: Mapping[str, Scenario], replications: int) -> list[TaskCost]:
    """Return the costs of an experiment's runs in the order they run: replication by
    replication, each policy's (``scenarios``, by label) in turn (one cost object per policy)."""
    costs = {label: run_cost(scenario, label) for label, scenario in scenarios.items()}
    return [costs[label] for _ in range(replications) for label in scenarios]


def whole_costs(scenarios: Sequence[tuple[str, Scenario]]) -> list[TaskCost]:
    """Return one-step costs of runs followed only as they end (``(class, scenario)`` each, in
    order): a run's expected work, all of it one step of its class."""
    cache: dict[str, TaskCost] = {}  # a class is one scenario
    out = []
    for kind, scenario in scenarios:
        if kind not in cache:
            cache[kind] = TaskCost.whole(kind, float(np.sum(step_work(scenario))))
        out.append(cache[kind])
    return out
