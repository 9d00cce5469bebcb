"""The time-left estimate of a stage of runs (:class:`lobbysim.running.time_left.RemainingTime`).

A fake clock drives stages whose true durations are known: runs whose steps are not equally
costly (an evening peak, a dearer policy after a switch), runs on two workers that leave one
idle at the end, a pool that says only when its runs end. Once a fifth of the stage's time has
passed, every estimate is within 25% of the true time left; the estimate shown before (the time
elapsed times the share of runs left over the share done) is not.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from lobbysim.experiments.costs import experiment_costs, run_cost, step_work
from lobbysim.experiments.replications import policy_scenarios
from lobbysim.running.progress import Progress
from lobbysim.running.time_left import RemainingTime, TaskCost
from lobbysim.scenario.loading import load_run_scenario

STEPS = 100
TOLERANCE = 0.25
POLICIES = ["draw_chance", "uniform_random", "oracle"]


class Clock:
    """A fake monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Trace:
    """What a stage's estimates were, against the truth: one row per event."""

    times: list[float]
    estimates: list[float | None]
    before: list[float | None]  # the estimate shown before: elapsed * (1 - share) / share
    end: float

    def errors(self, estimates: Sequence[float | None], min_left: float = 0.0) -> list[float]:
        """The relative errors of ``estimates`` made once a fifth of the time had passed."""
        out = []
        for t, estimate in zip(self.times, estimates, strict=True):
            true = self.end - t
            if t < self.end / 5 or true <= min_left:
                continue
            out.append(np.inf if estimate is None else (estimate - true) / true)
        return out

    def worst(self, min_left: float = 0.0) -> float:
        return max(map(abs, self.errors(self.estimates, min_left)))

    def worst_before(self, min_left: float = 0.0) -> float:
        return max(map(abs, self.errors(self.before, min_left)))


def run_stage(
    durations: Sequence[Sequence[float]],
    costs: Sequence[TaskCost],
    workers: int,
    *,
    steps: bool = True,
    setup: float = 0.0,
    finish: float = 0.0,
    cores: int = 2,
    busy: float = 0.0,
    dt: float = 0.002,
) -> Trace:
    """Run tasks in order on ``workers`` (each on the first free), task i's step k needing
    ``durations[i][k]`` CPU seconds after a ``setup`` and before a ``finish``, on a machine of
    ``cores`` of which other work takes ``busy`` (the running tasks share the rest, at most a
    core each); tell a :class:`RemainingTime` as a pool does (the CPU seconds with each step;
    ``steps=False``: only as each task ends) and record its estimate after every event."""
    clock = Clock()
    estimate = RemainingTime(clock, cores=cores)
    estimate.plan(costs, workers)
    n = len(durations)
    # per task: the CPU seconds at which it reports each step, and when it is done
    marks = [setup + np.cumsum(d) for d in durations]
    needs = [setup + float(np.sum(d)) + finish for d in durations]
    used = [0.0] * n
    reported = [0] * n
    queue = list(range(n))
    running: list[int] = []
    progress = [0.0] * n
    trace = Trace([], [], [], 0.0)
    rows: list[tuple[float, float]] = []  # (time, share of runs done) of each event

    def record() -> None:
        trace.times.append(clock.now)
        trace.estimates.append(estimate.left())
        rows.append((clock.now, sum(progress) / n))

    while queue or running:
        while len(running) < workers and queue:
            i = queue.pop(0)
            running.append(i)
            if steps:
                estimate.start(i, 0.0)
                record()
        share = min(1.0, (cores - busy) / len(running))
        clock.now += dt
        for i in list(running):
            used[i] += share * dt
            while reported[i] < len(marks[i]) and used[i] >= marks[i][reported[i]]:
                reported[i] += 1
                progress[i] = reported[i] / len(marks[i]) * 0.999
                if steps:
                    estimate.reach(i, reported[i] / len(marks[i]), used[i])
                    record()
            if used[i] >= needs[i]:
                running.remove(i)
                progress[i] = 1.0
                estimate.finish(i)
                record()
    trace.end = clock.now
    for t, share in rows:
        trace.before.append(t * (1 - share) / share if 0 < share < 1 else None)
    return trace


def flat_cost(kind: str = "run", steps: int = STEPS) -> TaskCost:
    return TaskCost((1.0,) * steps, (kind,) * steps, kind)


# --- the estimator ----------------------------------------------------------------------------


def test_nothing_is_estimated_before_a_step_is_measured() -> None:
    clock = Clock()
    estimate = RemainingTime(clock)
    assert estimate.left() is None  # not planned
    estimate.plan([flat_cost()] * 3, 2)
    estimate.start(0)
    clock.now = 5.0
    assert estimate.left() is None
    estimate.reach(0, 0.01)
    assert estimate.left() is not None


def test_a_run_busy_in_the_evening() -> None:
    """One run of a day whose steps cost as its lobby is busy: 20 times more in the evening
    than at night. The steps' expected work says so (:func:`step_work`), and the estimate
    follows it; a count of simulated minutes does not."""
    scenario = load_run_scenario("evening_peak")
    work = step_work(scenario, STEPS)
    assert work.max() > 10 * work.min()
    # the true cost: the expected work, give or take 30% step by step
    rng = np.random.default_rng(1)
    seconds = work / work.sum() * 60.0 * rng.uniform(0.7, 1.3, STEPS)
    cost = run_cost(scenario, "draw_chance")
    trace = run_stage([seconds], [cost], 1, finish=6.0)  # its records and metrics
    assert trace.worst() <= TOLERANCE
    assert trace.worst_before() > 2 * TOLERANCE


def test_the_last_runs_leave_a_worker_idle() -> None:
    """Nine equal runs on two workers finish in pairs, the last alone: a count of runs done
    says 'nearly there' while a whole run is still to go; the estimate lays the runs left on
    the workers."""
    rng = np.random.default_rng(2)
    durations = [rng.uniform(0.9, 1.1) * np.full(STEPS, 0.1) for _ in range(9)]
    trace = run_stage(durations, [flat_cost()] * 9, 2, finish=0.5)
    assert trace.worst() <= TOLERANCE
    assert trace.worst_before() > TOLERANCE


def test_three_runs_on_two_workers() -> None:
    """``lobbysim run`` of three replications on two workers: the third runs alone."""
    durations = [np.full(STEPS, 0.4)] * 3
    trace = run_stage(durations, [flat_cost()] * 3, 2, setup=0.05, finish=0.4)
    assert trace.worst() <= TOLERANCE
    assert trace.worst_before() >= 0.4  # it said half the time left


def test_a_machine_busy_with_other_work() -> None:
    """Three runs on two workers of a two-core machine whose other work takes a core: each run
    gets half a core while two run, a whole one alone. The CPU seconds the runs report say how
    much of the machine they get, and the estimate expects the last run, alone, to go faster."""
    durations = [np.full(STEPS, 0.01)] * 3
    costs = [flat_cost()] * 3
    trace = run_stage(durations, costs, 2, setup=0.01, finish=0.1, busy=1.0)
    assert trace.worst(min_left=0.2) <= TOLERANCE
    assert trace.worst_before(min_left=0.2) > TOLERANCE


def test_more_workers_than_cores() -> None:
    """``--jobs 8`` on two cores, nine runs: eight share the cores, the ninth has one alone (the
    user's "44 s left" with 106 s to go)."""
    durations = [np.full(STEPS, 0.01)] * 9
    trace = run_stage(durations, [flat_cost()] * 9, 8, finish=0.1)
    assert trace.worst(min_left=0.2) <= TOLERANCE
    assert trace.worst_before(min_left=0.2) > 2 * TOLERANCE


def test_a_dearer_policy_after_the_switch() -> None:
    """``lobbysim compare live_game``: three policies, three replications each, a week of
    burn-in under the status quo and three days after the switch, each step costing as its
    lobby is busy, give or take 30%; after the switch draw_chance costs as much as the status
    quo, uniform_random 0.6 times and oracle 1.5 times (as measured on this scenario). The steps
    before the switch are measured once for all policies, the steps after it for each. (A policy
    whose cost after the switch is unlike any measured before it cannot be foreseen.)"""
    scenario = load_run_scenario("live_game")
    policies = ["draw_chance", "uniform_random", "oracle"]
    scenarios = policy_scenarios(scenario, policies)
    costs = experiment_costs(scenarios, 3)  # replication by replication, as they run
    work = np.array(costs[0].weights)
    switch = int(STEPS * 10080 / 14400)
    rng = np.random.default_rng(3)
    durations = []
    for _ in range(3):
        for after in (1.0, 0.6, 1.5):
            seconds = 0.05 * work / work.mean() * rng.uniform(0.7, 1.3, STEPS)
            seconds[switch:] *= after
            durations.append(seconds)
    trace = run_stage(durations, costs, 2, setup=0.05, finish=0.4)
    assert trace.worst() <= TOLERANCE
    assert trace.worst_before() > TOLERANCE


@pytest.mark.parametrize("by_replication", [True, False])
def test_policies_of_very_different_costs(by_replication: bool) -> None:
    """``lobbysim compare quickstart``: ten replications of draw_chance, uniform_random (a fifth
    of draw_chance's cost) and oracle (two fifths). Run replication by replication, as
    :func:`~lobbysim.experiments.replications.run_experiment` does, every policy's cost is
    measured early; run policy by policy, the estimate can only expect the later policies to
    cost what the first did."""
    scenarios = policy_scenarios(load_run_scenario("quickstart"), POLICIES)
    costs = experiment_costs(scenarios, 10)
    work = np.array(costs[0].weights)
    if by_replication:
        runs = [(p, r) for r in range(10) for p in range(3)]
    else:
        runs = [(p, r) for p in range(3) for r in range(10)]
        costs = [costs[p] for p, _ in runs]
    rng = np.random.default_rng(4)
    factors = (1.0, 0.2, 0.4)
    durations = [
        0.005 * factors[p] * work / work.mean() * rng.uniform(0.7, 1.3, STEPS) for p, _ in runs
    ]
    trace = run_stage(durations, costs, 2, finish=0.05)
    assert (trace.worst(min_left=0.2) <= TOLERANCE) == by_replication


def test_a_pool_that_says_only_when_runs_end() -> None:
    """A sweep's runs (whole, of two cells, one twice as costly as the other) on two workers
    where only their ends are heard: starts are inferred (a run starts when a worker is free)."""
    cheap, dear = TaskCost.whole("cell 1", 1.0), TaskCost.whole("cell 2", 2.0)
    costs = [cheap] * 6 + [dear] * 6
    durations = [np.array([1.0])] * 6 + [np.array([2.0])] * 6
    trace = run_stage(durations, costs, 2, steps=False)
    assert trace.worst() <= TOLERANCE
    assert trace.worst_before() > TOLERANCE


def test_a_start_heard_late_corrects_an_inferred_one() -> None:
    clock = Clock()
    estimate = RemainingTime(clock)
    estimate.plan([flat_cost(steps=1)] * 3, 1)
    estimate.start(0)
    clock.now = 1.0
    estimate.finish(0)
    clock.now = 1.2
    assert estimate.left() == pytest.approx(1.8)  # task 1 taken to have started at 1.0
    clock.now = 1.5
    estimate.start(1)  # ... it started at 1.5
    clock.now = 2.5
    estimate.finish(1)
    # each task took 1 s (not 1.5): the one left takes 1 s
    assert estimate.left() == pytest.approx(1.0)


def test_progress_after_a_run_ended_is_ignored() -> None:
    clock = Clock()
    estimate = RemainingTime(clock)
    estimate.plan([flat_cost(steps=2)] * 2, 1)
    estimate.start(0)
    clock.now = 1.0
    estimate.reach(0, 0.5)
    clock.now = 2.0
    estimate.finish(0)
    left = estimate.left()
    estimate.reach(0, 1.0)  # the pool's queue said so late
    assert estimate.left() == left == pytest.approx(2.0)  # the next task takes as long


# --- the expected work of a run -----------------------------------------------------------------


def test_the_steps_before_a_switch_are_one_class_for_every_policy() -> None:
    scenario = load_run_scenario("live_game")
    scenarios = policy_scenarios(scenario, ["draw_chance", "uniform_random", "oracle"])
    costs = experiment_costs(scenarios, 2)  # replication by replication
    assert len(costs) == 6 and costs[0] is costs[3] and costs[0] is not costs[1]
    switch = 70  # day 7 of 10
    for cost in costs:
        assert len(set(cost.classes[:switch])) == 1
        assert cost.classes[switch - 1] == costs[0].classes[0]
    assert len({cost.classes[-1] for cost in costs}) == 3
    # a day has the same work as the next (a base visiting daily)
    work = np.array(costs[0].weights)
    assert work[20:30].sum() == pytest.approx(work[30:40].sum(), rel=0.05)


def test_a_lobby_fills_from_empty() -> None:
    work = step_work(load_run_scenario("quickstart"), STEPS)
    assert work[0] < 0.3 * work[-1]
    assert work[-10:].std() < 0.01 * work[-10:].mean()


# --- the display --------------------------------------------------------------------------------


def test_a_line_shows_the_estimate() -> None:
    out = io.StringIO()
    with Progress(file=out, every=0.0).stage("compare", "runs", 9, estimate=lambda: 42.0) as up:
        up(1)
    assert out.getvalue().startswith("compare: 1/9 runs (11%), 0 s elapsed, about 42 s left")


def test_a_line_without_an_estimate_yet() -> None:
    out = io.StringIO()
    with Progress(file=out, every=0.0).stage("compare", "runs", 9, estimate=lambda: None) as up:
        up(1)
    assert "left" not in out.getvalue()


def test_the_last_line_is_not_repeated() -> None:
    out = io.StringIO()
    with Progress(file=out, every=0.0).stage("compare", "runs", 2, decimals=1) as up:
        up(1.99999)  # shown as 2/2
        up.__self__.every = 1e9  # type: ignore[attr-defined]
        up(2)  # not shown now, nor at the end: the line says so already
    lines = out.getvalue().splitlines()
    assert lines == ["compare: 2/2 runs (100%), 0 s elapsed"]


def test_a_bar_shows_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with Progress().stage("compare", "runs", 9, estimate=lambda: 75.0) as update:
        update(3)
    assert "3/9" in terminal.getvalue() and "<01:15" in terminal.getvalue()
