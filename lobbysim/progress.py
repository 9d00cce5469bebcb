"""Progress of long work: a bar on a terminal or in a notebook, a plain line now and then in a log.

A :class:`Progress` opens one *stage* per piece of long work (the runs of a comparison, the
simulated minutes of one replication, a sweep's set-up, the report's figures); a stage is a
callback ``update(done, total)`` that the work calls as it goes. How a stage shows depends on
where the output goes:

* a terminal (standard error is a TTY): a tqdm bar;
* a Jupyter notebook (``notebook=True``, as the Python API asks): a bar of ``tqdm.auto``, a
  widget where ipywidgets is installed;
* anything else, such as a log file or a CI job: a plain line every
  :data:`DEFAULT_EVERY` seconds (or ``$LOBBYSIM_PROGRESS_EVERY``), and one at the end of a stage
  that printed any; work shorter than that prints nothing;
* ``enabled=False`` (``--quiet``, ``progress=False``): nothing.

The time left: a stage of runs gets it from a :class:`RemainingTime` (``estimate=``), which
knows what each run is expected to cost step by step and how many workers run them; any other
stage divides the time elapsed by the share done. Why the runs need more: their steps are not
equally costly (a lobby is busier in the evening; after a switch the compared policy costs more
or less than the status quo did; policies differ; a run's set-up and its metrics take time no
simulated minute accounts for), on a pool of workers the last runs leave workers idle, so that a
count of runs finished jumps while the time does not, and the machine's other work takes its
share of the cores. :class:`RemainingTime` measures the CPU seconds of every step of every run,
predicts each step still to come from the same step of runs of the same kind (a replication of
the same policy; before a switch, any policy: all run the status quo), else from the CPU seconds
per unit of expected work of its kind, else of any step, the expected work being given per step
by the caller (:func:`lobbysim.experiments.costs.run_cost`: the players expected in the lobby);
then it lays the runs still to come on the workers in order, each on the first to be free, at
the CPU share measured of as many runs as then run, and says when the last one ends.
``scripts/progress_accuracy.py`` measures the estimate against the true time left on the bundled
scenarios.

Progress never changes what is computed: the work only calls the stage's callback.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TextIO, Union

#: Seconds between two plain progress lines when the output is not a terminal.
DEFAULT_EVERY = 10.0
EVERY_VARIABLE = "LOBBYSIM_PROGRESS_EVERY"
#: Seconds between two redraws of a bar.
REDRAW = 0.1

Update = Callable[..., None]
"""A stage's callback: ``update(done, total=None)``."""

ProgressLike = Union["Progress", Callable[[int, int], None], bool, None]
"""What a function taking ``progress`` accepts (:func:`as_progress`)."""

Load = tuple[float, float, dict[int, list[float]]]
"""The CPU share of a stage's tasks recently, how many ran, the CPU and wall seconds by how many
ran (:meth:`RemainingTime._load`)."""

Estimate = Callable[[], float | None]
"""The seconds left of a stage, or None while nothing is known (:meth:`RemainingTime.left`)."""


def _every() -> float:
    text = os.environ.get(EVERY_VARIABLE, "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_EVERY
    return value if math.isfinite(value) and value >= 0 else DEFAULT_EVERY


def _whole_if_integral(value: float | None) -> float | None:
    """Return ``value`` as an int when it is a whole number (a bar shows 30, not 30.0)."""
    if value is None or not math.isfinite(value) or value != int(value):
        return value
    return int(value)


def _number(value: float, decimals: int) -> str:
    rounded = round(float(value), decimals)
    return f"{rounded:,.{decimals}f}" if rounded != int(rounded) else f"{int(rounded):,}"


class Progress:
    """Where and how to show the progress of long work (see the module docstring).

    Args:
        enabled: False shows nothing.
        notebook: use ``tqdm.auto``, a widget in a Jupyter notebook.
        file: where bars and lines go (default: standard error at the time of each stage).
        every: seconds between plain lines (default :data:`DEFAULT_EVERY`, or the environment
            variable ``LOBBYSIM_PROGRESS_EVERY``).
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        notebook: bool = False,
        file: TextIO | None = None,
        every: float | None = None,
    ) -> None:
        self.enabled = enabled
        self.notebook = notebook
        self.file = file
        self.every = every

    @property
    def fine(self) -> bool:
        """Whether progress inside a run (simulated time) is wanted, not only whole runs."""
        return self.enabled

    def _mode(self, file: TextIO) -> str:
        if not self.enabled:
            return "off"
        if self.notebook and _in_notebook():
            return "notebook"
        isatty = getattr(file, "isatty", None)
        return "bar" if callable(isatty) and isatty() else "lines"

    @contextmanager
    def stage(
        self,
        desc: str,
        unit: str,
        total: float | None = None,
        *,
        decimals: int = 0,
        estimate: Estimate | None = None,
    ) -> Iterator[Update]:
        """Open a stage; yield its ``update(done, total=None)`` callback (thread-safe).

        Args:
            desc: what is being done (``compare``, ``simulate quickstart``, ``report``).
            unit: what is counted, plural (``runs``, ``min``, ``cells``, ``steps``).
            total: how many there are, if known now (``update`` may give it later).
            decimals: decimals shown of ``done`` (1 for runs counted with their fractions).
            estimate: the seconds left (:meth:`RemainingTime.left`), asked each time the stage
                is shown; without it, the time elapsed times the share left over the share done.
        """
        file = self.file if self.file is not None else sys.stderr
        mode = self._mode(file)
        if mode == "off":
            yield _ignore
            return
        if mode == "lines":
            every = _every() if self.every is None else self.every
            lines = _Lines(desc, unit, total, decimals, file, every, estimate)
            try:
                yield lines.update
            finally:
                lines.close()
            return
        bar = _Bar(
            desc, unit, total, decimals, file, notebook=mode == "notebook", estimate=estimate
        )
        try:
            yield bar.update
        finally:
            bar.close()

    def note(self, text: str) -> None:
        """Show one line of information (unless disabled)."""
        if self.enabled:
            file = self.file if self.file is not None else sys.stderr
            print(text, file=file, flush=True)


class CallbackProgress(Progress):
    """A plain ``progress(done, total)`` callback as a :class:`Progress`: it gets the runs of a
    command's main stage (whole runs, as integers); the other stages show nothing."""

    def __init__(self, callback: Callable[[int, int], None]) -> None:
        super().__init__(enabled=True)
        self.callback = callback

    @property
    def fine(self) -> bool:
        return False

    @contextmanager
    def stage(
        self,
        desc: str,
        unit: str,
        total: float | None = None,
        *,
        decimals: int = 0,
        estimate: Estimate | None = None,
    ) -> Iterator[Update]:
        if unit != "runs":
            yield _ignore
            return
        state = {"total": total}

        def update(done: float, total: float | None = None) -> None:
            state["total"] = state["total"] if total is None else total
            self.callback(int(done), int(state["total"] or 0))

        yield update

    def note(self, text: str) -> None:
        return None


def as_progress(value: Progress | Callable[[int, int], None] | bool | None) -> Progress:
    """Return ``value`` as a :class:`Progress`: None or False show nothing, True the default
    (bar on a terminal, lines otherwise), a callable gets the runs (:class:`CallbackProgress`)."""
    if isinstance(value, Progress):
        return value
    if value is None or value is False:
        return Progress(enabled=False)
    if value is True:
        return Progress()
    if callable(value):
        return CallbackProgress(value)
    raise TypeError(f"progress: expected True, False, None or a Progress, got {value!r}")


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
    reports them: :func:`lobbysim.parallel.task_progress`) and its end (a run's metrics).

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


def _ignore(done: float, total: float | None = None) -> None:
    return None


def _in_notebook() -> bool:
    """Return whether this is a Jupyter kernel (the test ``tqdm.auto`` makes)."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class _Lines:
    """A stage shown as a plain line every ``every`` seconds, and one at the end if any."""

    def __init__(
        self,
        desc: str,
        unit: str,
        total: float | None,
        decimals: int,
        file: TextIO,
        every: float,
        estimate: Estimate | None = None,
    ) -> None:
        self.desc, self.unit, self.total, self.decimals = desc, unit, total, decimals
        self.file, self.every, self.estimate = file, every, estimate
        self.start = self.last = time.monotonic()
        self.done = 0.0
        self.printed: float | None = None  # the count of the last line printed, as shown
        self.lock = threading.Lock()

    def line(self, now: float) -> str:
        elapsed = now - self.start
        total = self.total
        count = _number(self.done, self.decimals)
        if not total:
            return f"{self.desc}: {count} {self.unit}, {elapsed:.0f} s elapsed"
        share = min(round(self.done, self.decimals) / total, 1.0)
        text = (
            f"{self.desc}: {count}/{_number(total, 0)} {self.unit} ({share:.0%}), "
            f"{elapsed:.0f} s elapsed"
        )
        if share < 1:
            left = _left(self.estimate, elapsed, self.done / total)
            if left is not None:
                text += f", about {left:.0f} s left"
        return text

    def update(self, done: float, total: float | None = None) -> None:
        with self.lock:
            self.done = float(done)
            if total is not None:
                self.total = total
            now = time.monotonic()
            if now - self.last >= self.every:
                self.last = now
                self.printed = round(self.done, self.decimals)
                print(self.line(now), file=self.file, flush=True)

    def close(self) -> None:
        with self.lock:
            if self.printed is not None and self.printed != round(self.done, self.decimals):
                print(self.line(time.monotonic()), file=self.file, flush=True)


def _left(estimate: Estimate | None, elapsed: float, share: float) -> float | None:
    """Return the seconds left: the stage's ``estimate``, else the time elapsed scaled by the
    share left over the share done (None before anything is done)."""
    if estimate is not None:
        return estimate()
    return elapsed * (1 - share) / share if 0 < share < 1 else None


class _Bar:
    """A stage shown as a tqdm bar (``tqdm.auto`` in a notebook), redrawn at most every
    :data:`REDRAW` seconds, its count rounded to ``decimals``."""

    def __init__(
        self,
        desc: str,
        unit: str,
        total: float | None,
        decimals: int,
        file: TextIO,
        *,
        notebook: bool,
        estimate: Estimate | None = None,
    ) -> None:
        from tqdm import tqdm

        total = _whole_if_integral(total)
        self.bar: Any = None
        # with an estimate, the bar shows it as the time left (tqdm's own divides the time by
        # the count done)
        options: dict[str, Any] = {"desc": desc, "unit": unit, "total": total, "file": file}
        if estimate is not None:
            options["bar_format"] = ESTIMATED_BAR
        if notebook:
            from tqdm.auto import tqdm as auto

            try:  # a widget; without ipywidgets, tqdm.auto is the text bar
                self.bar = _estimating(auto, estimate)(leave=True, **options)
            except ImportError:
                self.bar = None
        if self.bar is None:
            # no monitor thread (tqdm's default starts one): the bar is redrawn by update(), and
            # a process without threads may fork its record writer (lobbysim.record_files)
            self.bar = _estimating(_without_monitor(tqdm), estimate)(leave=True, **options)
        self.decimals = decimals
        self.last = 0.0
        self.lock = threading.Lock()

    def update(self, done: float, total: float | None = None) -> None:
        with self.lock:
            bar = self.bar
            total = _whole_if_integral(total)
            if total is not None and bar.total != total:
                bar.total = total
            value = round(float(done), self.decimals)
            bar.n = int(value) if value == int(value) else value
            now = time.monotonic()
            if now - self.last >= REDRAW or (bar.total is not None and value >= bar.total):
                self.last = now
                bar.refresh()

    def close(self) -> None:
        with self.lock:
            self.bar.refresh()
            self.bar.close()


def _without_monitor(bar: type) -> Any:
    """Return the bar class ``bar`` (tqdm) without its monitor thread (``monitor_interval = 0``)."""
    return type("Bar", (bar,), {"monitor_interval": 0})


ESTIMATED_BAR = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{left}{postfix}]"
"""The format of a bar with an estimate: tqdm's, with ``left`` for tqdm's ``remaining``."""


def _estimating(bar: Any, estimate: Estimate | None) -> Any:
    """Return the bar class ``bar`` (tqdm) filling ``{left}`` of :data:`ESTIMATED_BAR` from
    ``estimate`` (``bar`` itself without one)."""
    if estimate is None:
        return bar

    def format_dict(self: Any) -> dict[str, Any]:
        values = dict(bar.format_dict.fget(self))
        left = estimate()
        values["left"] = "?" if left is None else bar.format_interval(max(left, 0.0))
        return values

    return type("EstimatingBar", (bar,), {"format_dict": property(format_dict)})
