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

The time left: a stage of runs gets it from a
:class:`~lobbysim.running.time_left.RemainingTime` (``estimate=``), which knows what each run is
expected to cost step by step and how many workers run them (:mod:`lobbysim.running.time_left`); any
other stage divides the time elapsed by the share done.

Progress never changes what is computed: the work only calls the stage's callback.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
            # a process without threads may fork its record writer (lobbysim.records.writer)
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
