"""The time left of a stage of runs: what each run costs step by step, laid on the workers.

A stage of runs (a comparison's replications, a sweep's cells) shows its time left
(:mod:`lobbysim.running.progress`) from a :class:`RemainingTime`, which knows what each run is
expected to
cost step by step (:class:`TaskCost`) and how many workers run them. Why the runs need more than
the time elapsed divided by the share done: their steps are not equally costly (a lobby is busier
in the evening; after a switch the compared policy costs more or less than the status quo did;
policies differ; a run's set-up and its metrics take time no simulated minute accounts for), on a
pool of workers the last runs leave workers idle, so that a count of runs finished jumps while the
time does not, and the machine's other work takes its share of the cores. :class:`RemainingTime`
measures the CPU seconds of every step of every run, predicts each step still to come from the
same step of runs of the same kind (a replication of the same policy; before a switch, any policy:
all run the status quo), else from the CPU seconds per unit of expected work of its kind, else of
any step, the expected work being given per step by the caller
(:func:`lobbysim.experiments.costs.run_cost`: the players expected in the lobby); then it lays the
runs still to come on the workers in order, each on the first to be free, at the CPU share
measured of as many runs as then run, and says when the last one ends.
``scripts/progress_accuracy.py`` measures the estimate against the true time left on the bundled
scenarios.

The estimate never changes what is computed: the runner only reports to it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Load = tuple[float, float, dict[int, list[float]]]
"""The CPU share of a stage's tasks recently, how many ran, the CPU and wall seconds by how many
ran (:meth:`RemainingTime._load`)."""


SETUP_SHARE = 0.01
"""A run's set-up (building the lobby), before anything is measured: this share of its steps."""
STRENGTHS = (1.0, 3.0, 0.5)
"""How much a rate measured is drawn toward the broader one (:meth:`RemainingTime._predict`), as
work: that of the segment (same segment, any task), of 3 average steps (the class), of half the
segment (the same segment of the class)."""
SHARE_WINDOW = 0.25
"""The CPU share tasks get is measured over this last part of a stage's time ..."""
MIN_SHARE_WINDOW = 5.0
"""... and at least these last seconds."""
SHARE_PRIOR = 1.0
"""The seconds of running tasks after which the share measured with as many running outweighs
the share expected of them."""
FINISH_SHARE = 0.12
"""A run's end (its records and metrics, and their way back from a worker), before any run has
ended: this share of its steps (the bundled scenarios' take 10% to 30%)."""


@dataclass(frozen=True)
class TaskCost:
    """What one task of a stage (a run) is expected to cost, step by step.

    A task is its set-up, ``len(weights)`` steps (a run's simulated time in equal parts, as it
    reports them: :func:`lobbysim.running.workers.task_progress`) and its end (a run's metrics).

    Attributes:
        weights: the expected work of each step, in any unit shared by the stage's tasks (a
            run's: the players expected in its lobby, :func:`lobbysim.experiments.costs.run_cost`).
        classes: each step's class: steps of one class cost alike per unit of work, in every
            task of the stage (a run's steps before a switch: one class for every policy).
        kind: the class of the task's set-up and end.
    """

    weights: tuple[float, ...]
    classes: tuple[str, ...]
    kind: str = ""

    def __post_init__(self) -> None:
        if len(self.weights) != len(self.classes) or not self.weights:
            raise ValueError("a task needs one class per step, and a step")

    @classmethod
    def whole(cls, kind: str, work: float = 1.0) -> TaskCost:
        """Return a task of one step of ``work``, of class ``kind`` (a run not followed step by
        step)."""
        return cls((work,), (kind,), kind)


class RemainingTime:
    """The seconds left of a stage of tasks run in order on a number of workers.

    The stage's runner plans the tasks (:meth:`plan`) and reports as each starts, reaches a step
    and ends (:meth:`start`, :meth:`reach`, :meth:`finish`; from any thread), with the CPU
    seconds the task has used where it can; :meth:`left` returns the estimate.

    Work is counted in CPU seconds, which the machine's other work does not stretch: a segment
    measured without them (a task's end; a pool that does not report them) counts as its wall
    time at the CPU share a task had meanwhile. Each segment still to come (a task's set-up, each
    step, its end) is predicted as its work (the caller's expectation) times the CPU seconds per
    unit of work measured: of all steps (or set-ups, or ends); then of the same segment in any
    task (after a switch, another policy: the lobby as the switch left it); of its class (a run
    of the same policy, or before a switch any run); of the same segment in the other tasks of
    its class (same scenario, other seed): each narrower measure drawn toward the broader one by
    how much work it has measured (:meth:`_predict`).

    The CPU share a task gets depends on how many run: as measured with as many running,
    recently (over the last :data:`SHARE_WINDOW` of the stage); until that is measured, between
    two bounds of what the machine does: the CPU seconds a second the tasks got together
    recently, shared by as many as run, at most a core each (of ``cores``: the other work on the
    machine takes what it took), and the cores shared fairly by as many as run and the other
    work, counted as the busy processes that would leave the tasks the share they had. So more
    workers than cores run each at a fraction of one (both bounds agree), and the last task,
    alone beside other work, runs faster than it did beside another. (On a machine with other
    work, both bounds come true: a lone task gets from 0.7 to 1 core where two got 0.5 each,
    as its other work waits or not.) The tasks not yet started are laid in order on the workers,
    each on the first to be free, the running ones advancing at the share of as many as run, and
    the estimate is when the last one ends; a running task has its segments still to come less
    what it has done since its last report. Until a step has been measured there is none
    (None).

    A task reported ended or reaching a step without having been reported started (a pool that
    says only when its tasks end) is taken to have started when a worker was free for it: the
    next task in order starts as soon as fewer than ``workers`` run.

    Args:
        clock: seconds, monotonic (a fake one in tests).
        cores: the processors the tasks share (default: those this process may use).
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, *, cores: int | None = None
    ) -> None:
        self.clock = clock
        self.cores = max(int(cores if cores is not None else _cores()), 1)
        self.lock = threading.RLock()
        self.tasks: list[TaskCost] = []
        self.workers = 1
        self.planned = False

    def plan(self, tasks: Sequence[TaskCost], workers: int = 1) -> None:
        """Set the stage's tasks, in the order they will start, and its number of workers."""
        with self.lock:
            self.tasks = list(tasks)
            self.workers = max(min(int(workers), len(self.tasks)), 1)
            self.planned = True
            n = len(self.tasks)
            self._segments = [self._segments_of(task) for task in self.tasks]
            self._step_work = [float(sum(t.weights)) / len(t.weights) for t in self.tasks]
            self._start = self.clock()
            #: segments done of each task (None: not started), when the last one ended and the
            #: task's CPU seconds then (None: not reported), whether its start was inferred
            self._done: list[int | None] = [None] * n
            self._since = [0.0] * n
            self._cpu: list[float | None] = [None] * n
            self._inferred = [False] * n
            self._free_since = self._start  # when a worker was last free (inferred starts)
            self._next = 0  # the first task, in order, never started
            # CPU seconds and work measured: of one segment of a class, of a class, of one
            # segment of any class, of a part
            self._by_segment: dict[tuple[str, int], list[float]] = {}
            self._by_class: dict[str, list[float]] = {}
            self._by_index: dict[int, list[float]] = {}
            self._by_part: dict[str, list[float]] = {}
            #: the shares measured: (when, tasks running, CPU seconds, wall seconds), and their
            #: sums of CPU seconds, wall seconds and tasks x wall seconds
            self._shares: deque[tuple[float, int, float, float]] = deque()
            self._sums = [0.0, 0.0, 0.0]
            self._by_running: dict[int, list[float]] = {}  # CPU and wall seconds, by tasks
            #: the CPU seconds a task running all along has had (the shares integrated), when
            #: last brought up to date and how many tasks ran since; at each task's last report
            self._worked, self._worked_at, self._worked_by = 0.0, self._start, 0
            self._worked_since = [0.0] * n

    @staticmethod
    def _segments_of(task: TaskCost) -> tuple[list[float], list[str], list[str]]:
        """Return a task's segments: their work, classes and parts (set-up, steps, end)."""
        total = float(sum(task.weights))
        weights = [SETUP_SHARE * total, *map(float, task.weights), FINISH_SHARE * total]
        steps = len(task.weights)
        classes = [f"set-up {task.kind}", *task.classes, f"end {task.kind}"]
        parts = ["set-up", *["step"] * steps, "end"]
        return weights, classes, parts

    def _end(self, i: int) -> int:
        return len(self._segments[i][0])

    def _running(self) -> list[int]:
        return [k for k, d in enumerate(self._done) if d is not None and d < self._end(k)]

    # ------------------------------------------------------------------------------ events
    def start(self, i: int, cpu: float | None = None) -> None:
        """Task ``i`` starts (its set-up), having used ``cpu`` seconds (0, or None: unknown)."""
        with self.lock:
            if not self.planned:
                return
            done = self._done[i]
            if done is None or (self._inferred[i] and done == 0):
                self._started(i, self.clock(), cpu, inferred=False)

    def reach(self, i: int, fraction: float, cpu: float | None = None) -> None:
        """Task ``i`` has done ``fraction`` (0 to 1) of its steps (0: its set-up is over),
        having used ``cpu`` seconds of processor time since it started (None: unknown)."""
        with self.lock:
            if not self.planned:
                return
            steps = self._end(i) - 2
            self._advance(i, 1 + round(min(max(fraction, 0.0), 1.0) * steps), cpu)

    def finish(self, i: int) -> None:
        """Task ``i`` has ended."""
        with self.lock:
            if not self.planned:
                return
            self._advance(i, self._end(i), None)
            self._free_since = self.clock()

    def _catch_up(self) -> float:
        """Bring the CPU seconds a task running all along has had up to now; return them."""
        now = self.clock()
        if now > self._worked_at:
            self._worked += (now - self._worked_at) * self._share(self._worked_by)
            self._worked_at = now
        return self._worked

    def _started(self, i: int, at: float, cpu: float | None, *, inferred: bool) -> None:
        self._catch_up()
        self._done[i], self._since[i], self._cpu[i] = 0, at, cpu
        self._worked_since[i] = self._worked - (self._worked_at - at) * self._share(self._worked_by)
        self._inferred[i] = inferred
        while self._next < len(self.tasks) and self._done[self._next] is not None:
            self._next += 1
        if not inferred:  # a start reported: another task's inferred one may be wrong
            running = self._running()
            guesses = [k for k in running if self._inferred[k] and self._done[k] == 0]
            for k in reversed(guesses[: max(len(running) - self.workers, 0)]):
                self._done[k] = None
                self._next = min(self._next, k)
        self._worked_by = len(self._running())

    def _infer_starts(self) -> None:
        """Start the next tasks in order while fewer than ``workers`` run (see the class)."""
        running = len(self._running())
        while running < self.workers and self._next < len(self.tasks):
            self._started(self._next, self._free_since, None, inferred=True)
            running += 1

    def _advance(self, i: int, target: int, cpu: float | None) -> None:
        now = self.clock()
        if self._done[i] is None:
            self._infer_starts()
            if self._done[i] is None:  # not next in order: started now, unmeasured
                self._started(i, now, None, inferred=False)
                self._done[i], self._cpu[i] = target, cpu
                return
        done = self._done[i]
        assert done is not None
        if target <= done:
            return
        worked = self._catch_up()
        wall = now - self._since[i]
        before = self._cpu[i]
        used = None if cpu is None or before is None else max(cpu - before, 0.0)
        if used is not None and wall > 0:
            tasks = max(self._worked_by, 1)
            self._shares.append((now, tasks, used, wall))
            self._add_share(tasks, used, wall)
        if used is None:  # as CPU seconds: the wall time at the shares tasks had meanwhile
            used = max(worked - self._worked_since[i], 0.0)
        self._measure(i, done, target, used)
        self._done[i], self._since[i], self._cpu[i] = target, now, cpu
        self._worked_since[i] = worked
        self._inferred[i] = False
        self._worked_by = len(self._running())

    def _measure(self, i: int, first: int, end: int, seconds: float) -> None:
        """Record that segments ``first`` to ``end - 1`` of task ``i`` took ``seconds``."""
        weights, classes, parts = self._segments[i]
        if end - first == 1:
            shares = [1.0]
        else:  # several at once: shared by their predictions (else by their work)
            guesses = [self._predict(i, s) for s in range(first, end)]
            if any(g is None for g in guesses):
                guesses = [weights[s] for s in range(first, end)]
            whole = sum(g for g in guesses if g is not None)
            shares = [(g or 0.0) / whole if whole > 0 else 1.0 / (end - first) for g in guesses]
        for s, share in zip(range(first, end), shares, strict=True):
            seconds_s, work = seconds * share, weights[s]
            keys: list[tuple[dict[Any, list[float]], Any]] = [
                (self._by_class, classes[s]),
                (self._by_part, parts[s]),
            ]
            if end - first == 1:
                keys += [(self._by_segment, (classes[s], s)), (self._by_index, s)]
            for table, key in keys:
                entry = table.setdefault(key, [0.0, 0.0])
                entry[0] += seconds_s
                entry[1] += work

    # ---------------------------------------------------------------------------- estimate
    def _add_share(self, tasks: int, cpu: float, wall: float, sign: float = 1.0) -> None:
        cpu_sum, wall_sum, weighted = self._sums
        self._sums = [cpu_sum + sign * cpu, wall_sum + sign * wall, weighted + sign * tasks * wall]
        entry = self._by_running.setdefault(tasks, [0.0, 0.0])
        entry[0] += sign * cpu
        entry[1] += sign * wall

    def _load(self) -> Load | None:
        """Return the CPU share the tasks got over the recent window, how many ran then on
        average and the CPU and wall seconds by how many ran (None before any was measured),
        dropping what is older than the window."""
        now = self.clock()
        since = now - max(SHARE_WINDOW * (now - self._start), MIN_SHARE_WINDOW)
        while self._shares and self._shares[0][0] < since:
            _, tasks, cpu, wall = self._shares.popleft()
            self._add_share(tasks, cpu, wall, -1.0)
        if not self._shares:  # no rounding left over
            self._sums, self._by_running = [0.0, 0.0, 0.0], {}
        cpu, wall, weighted = self._sums
        if wall <= 0 or cpu <= 0:
            return None
        return cpu / wall, weighted / wall, self._by_running

    def _share(self, running: int, load: Load | None = None) -> float:
        """Return the CPU seconds a second each of ``running`` tasks is expected to get (see the
        class), from ``load`` (:meth:`_load`)."""
        load = self._load() if load is None else load
        if load is None:
            return 1.0
        share, tasks, by_running = load
        k = max(running, 1)
        most = min(max(share, 1.0), float(self.cores))
        alone = min(most, share * tasks / k)  # the CPU they got, shared by k
        others = max(self.cores / share - tasks, 0.0)
        fair = min(most, self.cores / (k + others))  # the other work as busy processes
        cpu, wall = by_running.get(k, (0.0, 0.0))
        return (max(cpu, 0.0) + SHARE_PRIOR * (alone + fair) / 2) / (max(wall, 0.0) + SHARE_PRIOR)

    def _predict(self, i: int, s: int) -> float | None:
        """Return the CPU seconds segment ``s`` of task ``i`` is expected to take (None: no
        idea).

        Its work times a rate (seconds per unit of work): that of every step measured, or of its
        part's segments (set-up, end) if any; then, from the broadest to the narrowest, the rate
        measured of the same segment in any task, of its class, and of the same segment in its
        class, each drawn toward the rate before it as if that had been measured over
        :data:`STRENGTHS` more work (a class measured over one step is not trusted for all of
        its steps)."""
        weights, classes, parts = self._segments[i]
        rate = None
        for entry in (self._by_part.get("step"), self._by_part.get(parts[s])):
            if entry is not None and entry[1] > 0:
                rate = entry[0] / entry[1]
        if rate is None:
            return None
        work, step = weights[s], self._step_work[i]
        for entry, strength in (
            (self._by_index.get(s), STRENGTHS[0] * work),
            (self._by_class.get(classes[s]), STRENGTHS[1] * step),
            (self._by_segment.get((classes[s], s)), STRENGTHS[2] * work),
        ):
            if entry is not None and entry[1] + strength > 0:
                rate = (entry[0] + strength * rate) / (entry[1] + strength)
        return work * rate

    def _rest(self, i: int, first: int) -> float:
        """Return the CPU seconds segments ``first`` onwards of task ``i`` are expected to take."""
        return sum(self._predict(i, s) or 0.0 for s in range(first, self._end(i)))

    def left(self) -> float | None:
        """Return the seconds until the last task ends, or None before any step is measured."""
        with self.lock:
            if not self.planned or "step" not in self._by_part:
                return None
            self._infer_starts()
            worked = self._catch_up()
            running = self._running()
            load = self._load()
            # the CPU seconds each busy worker has left of its task, less what it did since
            busy = [
                max(self._rest(i, self._done[i] or 0) - (worked - self._worked_since[i]), 0.0)
                for i in running
            ]
            totals: dict[int, float] = {}  # tasks of one cost object cost alike
            queued = []
            for i, done in enumerate(self._done):
                if done is None:
                    key = id(self.tasks[i])
                    if key not in totals:
                        totals[key] = self._rest(i, 0)
                    queued.append(totals[key])
            return self._lay_out(busy, queued, load)

    def _lay_out(self, busy: list[float], queued: list[float], load: Load | None) -> float:
        """Return when the last task ends: the busy workers' ``busy`` CPU seconds and the
        ``queued`` tasks', in order, each on the first worker free, every running task
        advancing at the share of as many as run."""
        queue = list(reversed(queued))
        busy = list(busy)
        while len(busy) < self.workers and queue:
            busy.append(queue.pop())
        elapsed = 0.0
        while busy:
            rate = self._share(len(busy), load)
            step = min(busy) / rate
            elapsed += step
            busy = [left - step * rate for left in busy]
            ended = [k for k, left in enumerate(busy) if left <= 1e-12]
            for k in ended:
                busy[k] = queue.pop() if queue else -1.0
            busy = [left for left in busy if left >= 0]
        return elapsed


def _cores() -> int:
    """Return the processors this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return len(affinity(0)) or 1
        except OSError:
            pass
    return os.cpu_count() or 1
