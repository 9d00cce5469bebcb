"""Arrival models: when players (or groups of players) come to the lobby (docs/model.md, 4, 6).

An arrival model is a small plug-in with one verb, ``sample(rng, start, end)``, returning every
arrival in the window ``[start, end)`` of simulated minutes. It may declare a capability too:
``expected_arrivals(horizon)``, the players it brings (:class:`ExpectedArrivals`), by which a
run is sized before it starts (:func:`expected_arrivals`). The simulator asks for fixed windows in
turn (e.g. every 60 minutes), so long runs stream, and checks each answer with
:func:`check_arrivals` (Ciw-style: the engine validates what a plug-in returns and names the plug-in
in the error). Models are frozen dataclasses whose init fields are their parameters, validated in
``__post_init__``; ``ARRIVALS.create(name, params)`` builds a built-in (``"poisson"``,
``"time_of_day"``, ``"bursts"``, ``"trace"``, ``"cohort"``, ``"none"``) or a user class
(``"package.module:Class"``) alike.

Models never import SimPy and draw only from the generator they are given.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from lobbysim.registry import PluginError, PluginRef, Registry
from lobbysim.validation import input_file_problem, real_parameter

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

MINUTES_PER_HOUR = 60.0
HOURS_PER_DAY = 24
# Players (or groups) per minute: a billion a week, far beyond any game; a larger rate is a
# mistake that would only exhaust memory (numpy's Poisson sampler refuses above ~1e19 anyway).
MAX_RATE = 100_000.0
#: The largest trace file read: 100 MB, some 8 million arrivals of a dozen bytes a row.
MAX_TRACE_BYTES = 100_000_000


@dataclass(frozen=True)
class Arrivals:
    """The arrivals of one window, as parallel arrays.

    Attributes:
        times: arrival times in simulated minutes, sorted, inside the window ``[start, end)``.
        sizes: the number of players arriving together at each time (>= 1); all ones unless the
            model produces groups.
    """

    times: FloatArray
    sizes: IntArray

    @classmethod
    def of(cls, times: ArrayLike, sizes: ArrayLike | None = None) -> Arrivals:
        """Build arrivals from array-likes; ``sizes`` defaults to one player per arrival."""
        try:
            t = _as_numbers("times", times, np.float64)
            s = (
                np.ones(t.shape, np.int64)
                if sizes is None
                else _as_numbers("sizes", sizes, np.int64)
            )
        except ValueError as exc:
            raise ValueError(f"Arrivals.of() got {exc}") from None
        return cls(t, s)

    @classmethod
    def empty(cls) -> Arrivals:
        """Return a window without arrivals."""
        return cls(np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.times.shape[0])

    @property
    def n_players(self) -> int:
        """Return the number of players arriving (the sum of the group sizes)."""
        return int(self.sizes.sum())


@runtime_checkable
class ArrivalModel(Protocol):
    """Produces the arrivals of a window of simulated minutes.

    Class attribute ``name`` is the registry key. ``sample`` must return every arrival in
    ``[start, end)``; the simulator calls it for consecutive windows with the same generator.
    """

    name: ClassVar[str]

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Return the arrivals in ``[start, end)``, drawing only from ``rng``."""
        ...


ARRIVALS: Registry[ArrivalModel] = Registry("arrival model", required=("sample",))


@dataclass(frozen=True)
class ExpectedArrivals:
    """The players an arrival model expects to bring, as a model declares them (a capability,
    :func:`expected_arrivals`): what a run of it is sized by (:mod:`lobbysim.scenario.sizing`).

    Attributes:
        per_minute: the mean players a minute over the run (>= 0; a group counts its players).
        peak_per_minute: the most players a minute at any time (>= 0; default ``per_minute``).
        at_once: players arriving together at one moment, besides (a cohort; >= 0).
        parameter: the model's parameter that sets them, for messages (``"rate"``; the scenario
            field is then ``arrivals.rate``), or ``""``.
    """

    per_minute: float = 0.0
    peak_per_minute: float | None = None
    at_once: float = 0.0
    parameter: str = ""

    def __post_init__(self) -> None:
        if self.peak_per_minute is None:
            _frozen_set(self, "peak_per_minute", self.per_minute)
        for name in ("per_minute", "peak_per_minute", "at_once"):
            _frozen_set(self, name, real_parameter(name, getattr(self, name), ge=0.0))
        if not isinstance(self.parameter, str):
            raise ValueError(f"parameter must be text, got {self.parameter!r}")


def expected_arrivals(model: object, horizon: float, name: str = "") -> ExpectedArrivals | None:
    """Return what ``model`` declares it brings over a run of ``horizon`` minutes, or None.

    A model declares it with a method ``expected_arrivals(horizon)`` returning an
    :class:`ExpectedArrivals` (or None where it cannot say); the built-ins but ``trace`` do. A
    model without the method is not counted (None).

    Raises:
        PluginError: the method raised, or returned something else, naming the model
            (``name``, default its class).
    """
    method = getattr(model, "expected_arrivals", None)
    if method is None:
        return None
    name = name or getattr(model, "name", type(model).__qualname__)
    plugin = PluginRef("arrivals", "arrival model", name)
    declared = plugin.call(f"expected_arrivals({horizon:g})", method, horizon)
    if declared is not None and not isinstance(declared, ExpectedArrivals):
        raise PluginError(
            f"arrivals: the arrival model '{name}' returned {type(declared).__name__} from "
            "expected_arrivals, not ExpectedArrivals or None"
        )
    return declared


def _as_numbers(what: str, values: object, dtype: type[np.generic]) -> NDArray[Any]:
    """Return ``values`` as a 1-d array of ``dtype``, or raise ValueError saying what is wrong.

    Any real dtype converts to float64; only whole numbers convert to int64.
    """
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{what} of shape {array.shape}; expected a 1-d array")
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{what} of dtype {array.dtype}; expected numbers")
    if dtype is np.int64 and array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (array != np.round(array))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{what} with the non-integer {array[i].item()!r} at position {i}")
    return array.astype(dtype, copy=False)


def check_arrivals(model_name: str, arrivals: object, start: float, end: float) -> Arrivals:
    """Check what an arrival model returned for the window ``[start, end)``.

    Numeric arrays of another dtype (integer times, integral float sizes) are coerced; anything
    else that breaks the contract of :class:`Arrivals` is rejected.

    Args:
        model_name: the model's name, used in the error message.
        arrivals: the model's return value.
        start, end: the window that was asked for.

    Returns:
        The arrivals with ``float64`` times and ``int64`` sizes.

    Raises:
        PluginError: naming the model and the problem: not an ``Arrivals``, non-numeric or
            non-1-d arrays, mismatched lengths, NaN or infinite times, times outside the window,
            unsorted times, or group sizes below 1.
    """
    if not isinstance(arrivals, Arrivals):
        raise PluginError(
            f"arrival model '{model_name}' returned {type(arrivals).__name__}, not Arrivals"
        )
    prefix = f"arrival model '{model_name}'"
    try:
        times = _as_numbers("times", arrivals.times, np.float64)
        sizes = _as_numbers("sizes", arrivals.sizes, np.int64)
    except ValueError as exc:
        raise PluginError(f"{prefix} returned {exc}") from None
    if times.shape != sizes.shape:
        raise PluginError(f"{prefix} returned {times.shape[0]} times but {sizes.shape[0]} sizes")
    if not np.isfinite(times).all():
        i = int(np.argmax(~np.isfinite(times)))
        raise PluginError(f"{prefix} returned the time {times[i].item()!r} at position {i}")
    outside = (times < start) | (times >= end)
    if outside.any():
        i = int(np.argmax(outside))
        raise PluginError(
            f"{prefix} returned the time {times[i].item()!r} at position {i}, "
            f"outside the window [{float(start)!r}, {float(end)!r})"
        )
    descending = np.diff(times) < 0
    if descending.any():
        i = int(np.argmax(descending))
        raise PluginError(
            f"{prefix} returned unsorted times: {times[i].item()!r} at position {i} "
            f"comes before {times[i + 1].item()!r}"
        )
    if (sizes < 1).any():
        i = int(np.argmax(sizes < 1))
        raise PluginError(
            f"{prefix} returned the group size {sizes[i].item()!r} at position {i} (< 1)"
        )
    return Arrivals(times, sizes)


def sample_window(
    model: ArrivalModel, rng: np.random.Generator, start: float, end: float
) -> Arrivals:
    """Ask ``model`` for the arrivals in ``[start, end)`` and check them with ``check_arrivals``."""
    _check_window(start, end)
    name = getattr(model, "name", type(model).__qualname__)
    plugin = PluginRef("arrivals", "arrival model", name)
    arrivals = plugin.call(f"sample(rng, {start:g}, {end:g})", model.sample, rng, start, end)
    return check_arrivals(name, arrivals, start, end)


# --- parameter and window validation shared by the built-ins ------------------------------------


def _check_window(start: float, end: float) -> None:
    if not (math.isfinite(start) and math.isfinite(end) and start <= end):
        raise ValueError(f"the window [{float(start)!r}, {float(end)!r}) is not a finite interval")


def _uniform_times(rng: np.random.Generator, n: int, start: float, end: float) -> FloatArray:
    """Return ``n`` sorted uniform times in ``[start, end)``."""
    times = start + (end - start) * np.sort(rng.random(n))
    # start + width * u can round up to ``end`` when start is large; keep the window half-open.
    return np.minimum(times, np.nextafter(end, -math.inf))


def _frozen_set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


# --- built-in models ------------------------------------------------------------------------------


@ARRIVALS.register
@dataclass(frozen=True)
class NoArrivals:
    """No arrivals: for a scenario whose players all come from its player base (``base:``)."""

    name: ClassVar[str] = "none"

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Return no arrivals (draws nothing)."""
        _check_window(start, end)
        return Arrivals.empty()

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        """Return no players (:class:`ExpectedArrivals`)."""
        return ExpectedArrivals()


@ARRIVALS.register
@dataclass(frozen=True)
class Poisson:
    """Homogeneous Poisson arrivals of single players.

    Args:
        rate: players per minute (> 0).
    """

    name: ClassVar[str] = "poisson"

    rate: float

    def __post_init__(self) -> None:
        _frozen_set(self, "rate", real_parameter("rate", self.rate, gt=0.0, le=MAX_RATE))

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Draw the count ~ Poisson(rate * (end - start)), then that many sorted uniform times."""
        _check_window(start, end)
        n = int(rng.poisson(self.rate * (end - start)))
        return Arrivals.of(_uniform_times(rng, n, start, end))

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        """Return ``rate`` players a minute (:class:`ExpectedArrivals`)."""
        return ExpectedArrivals(self.rate, self.rate, 0.0, "rate")


@ARRIVALS.register
@dataclass(frozen=True)
class TimeOfDay:
    """Non-homogeneous Poisson arrivals with a piecewise-constant daily profile, by thinning.

    The rate during clock hour h is ``rates[h]``; the profile repeats every 24 hours. Candidates
    are drawn at the largest rate and each is kept with probability rate(t) / max(rates).

    Args:
        rates: 24 hourly rates in players per minute, each >= 0 and at least one > 0 (a list or
            tuple; stored as a tuple).
        start_hour: the clock hour at simulation minute 0, in [0, 24).
    """

    name: ClassVar[str] = "time_of_day"

    rates: Sequence[float]
    start_hour: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.rates, str | bytes) or not isinstance(self.rates, Sequence):
            raise ValueError(f"rates must be a list of {HOURS_PER_DAY} numbers, got {self.rates!r}")
        if len(self.rates) != HOURS_PER_DAY:
            raise ValueError(
                f"rates must have {HOURS_PER_DAY} hourly values, got {len(self.rates)}: "
                f"{list(self.rates)!r}"
            )
        rates = tuple(
            real_parameter(f"rates[{h}]", r, ge=0.0, le=MAX_RATE) for h, r in enumerate(self.rates)
        )
        if max(rates) <= 0.0:
            raise ValueError(f"rates must have at least one hour > 0, got {list(self.rates)!r}")
        _frozen_set(self, "rates", rates)
        start_hour = real_parameter("start_hour", self.start_hour, ge=0.0, lt=float(HOURS_PER_DAY))
        _frozen_set(self, "start_hour", start_hour)

    def rate_at(self, t: ArrayLike) -> FloatArray:
        """Return the arrival rate (players per minute) at simulation minutes ``t``."""
        clock_minutes = self.start_hour * MINUTES_PER_HOUR + np.asarray(t, dtype=np.float64)
        # floor first, then mod: an exact integer hour in [0, 24) whatever the rounding.
        hours = (np.floor(clock_minutes / MINUTES_PER_HOUR) % HOURS_PER_DAY).astype(np.intp)
        return np.asarray(self.rates, dtype=np.float64)[hours]

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Thin Poisson candidates at the peak rate down to the hourly profile."""
        _check_window(start, end)
        peak = max(self.rates)
        n = int(rng.poisson(peak * (end - start)))
        candidates = _uniform_times(rng, n, start, end)
        keep = rng.random(n) < self.rate_at(candidates) / peak
        return Arrivals.of(candidates[keep])

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        """Return the mean and the largest hourly rate (:class:`ExpectedArrivals`)."""
        rates = [float(r) for r in self.rates]
        return ExpectedArrivals(sum(rates) / len(rates), max(rates), 0.0, "rates")


@ARRIVALS.register
@dataclass(frozen=True)
class Bursts:
    """Groups arriving together as a Poisson process; size = min(1 + Poisson(mean_size - 1), max).

    Args:
        rate: groups per minute (> 0).
        mean_size: the mean group size before the cap (>= 1, and not above ``max_size``).
        max_size: the largest group (a whole number >= 1).
    """

    name: ClassVar[str] = "bursts"

    rate: float
    mean_size: float = 3.0
    max_size: int = 8

    def __post_init__(self) -> None:
        _frozen_set(self, "rate", real_parameter("rate", self.rate, gt=0.0, le=MAX_RATE))
        _frozen_set(self, "mean_size", real_parameter("mean_size", self.mean_size, ge=1.0))
        if (
            isinstance(self.max_size, bool)
            or not isinstance(self.max_size, numbers.Integral)
            or self.max_size < 1
        ):
            raise ValueError(f"max_size must be a whole number >= 1, got {self.max_size!r}")
        _frozen_set(self, "max_size", int(self.max_size))
        if self.mean_size > self.max_size:
            raise ValueError(
                f"mean_size must not exceed max_size ({self.max_size}), got {self.mean_size!r}"
            )

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Draw the group arrival times as a Poisson process, then one size per group."""
        _check_window(start, end)
        n = int(rng.poisson(self.rate * (end - start)))
        times = _uniform_times(rng, n, start, end)
        sizes = np.minimum(1 + rng.poisson(self.mean_size - 1.0, n), self.max_size)
        return Arrivals.of(times, sizes)

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        """Return ``rate * mean_size`` players a minute (:class:`ExpectedArrivals`; the cap
        ``max_size`` left out, so it errs high)."""
        players = self.rate * self.mean_size
        return ExpectedArrivals(players, players, 0.0, "rate")


@ARRIVALS.register
@dataclass(frozen=True)
class Trace:
    """Replays recorded arrival times from a CSV file; draws no random numbers.

    The CSV has a header row, a column ``time`` (minutes since the start of the simulation, before
    ``time_scale``) and optionally a column ``size`` (players arriving together, default 1). The
    file is read and checked once, when the model is created; unsorted rows are sorted by time.
    It must be a regular file of at most :data:`MAX_TRACE_BYTES` (a device or a pipe is refused
    unread).

    Args:
        path: the CSV file.
        time_scale: multiplies every time (> 0), e.g. ``1/60`` for a trace in seconds.
    """

    name: ClassVar[str] = "trace"

    path: str
    time_scale: float = 1.0
    _times: FloatArray = field(init=False, repr=False, compare=False)
    _sizes: IntArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.path, str | Path):
            raise ValueError(f"path must be a file path, got {self.path!r}")
        _frozen_set(self, "path", str(self.path))
        _frozen_set(self, "time_scale", real_parameter("time_scale", self.time_scale, gt=0.0))
        times, sizes = _read_trace(Path(self.path))
        order = np.argsort(times, kind="stable")
        times = times[order] * self.time_scale
        sizes = sizes[order]
        times.flags.writeable = False
        sizes.flags.writeable = False
        _frozen_set(self, "_times", times)
        _frozen_set(self, "_sizes", sizes)

    @property
    def times(self) -> FloatArray:
        """Return every arrival time of the trace (minutes, sorted, read-only)."""
        return self._times

    @property
    def sizes(self) -> IntArray:
        """Return the group size of every arrival of the trace (read-only)."""
        return self._sizes

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Return the recorded arrivals in ``[start, end)`` (``rng`` is not used)."""
        _check_window(start, end)
        lo, hi = np.searchsorted(self._times, [start, end], side="left")
        return Arrivals(self._times[lo:hi], self._sizes[lo:hi])


@ARRIVALS.register
@dataclass(frozen=True)
class Cohort:
    """A fixed cohort of players arriving together at one moment; draws no random numbers.

    With ``population.session_games_mean: null`` and no patience, the cohort stays for the whole
    run: the paper's study, where every opponent is always available.

    Args:
        size: players in the cohort (a whole number >= 1).
        at: the arrival time in minutes (>= 0).
    """

    name: ClassVar[str] = "cohort"

    size: int
    at: float = 0.0

    def __post_init__(self) -> None:
        if (
            isinstance(self.size, bool)
            or not isinstance(self.size, numbers.Integral)
            or self.size < 1
        ):
            raise ValueError(f"size must be a whole number >= 1, got {self.size!r}")
        _frozen_set(self, "size", int(self.size))
        _frozen_set(self, "at", real_parameter("at", self.at, ge=0.0))

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        """Return the cohort if its time is in ``[start, end)`` (``rng`` is not used)."""
        _check_window(start, end)
        if start <= self.at < end:
            return Arrivals.of([self.at], [self.size])
        return Arrivals.empty()

    def expected_arrivals(self, horizon: float) -> ExpectedArrivals:
        """Return ``size`` players at once (:class:`ExpectedArrivals`)."""
        return ExpectedArrivals(0.0, 0.0, float(self.size), "size")


def _plain(value: object) -> object:
    """Return a NumPy scalar as the Python value, for readable error messages."""
    return value.item() if isinstance(value, np.generic) else value


def _read_trace(path: Path) -> tuple[FloatArray, IntArray]:
    """Read and check the ``time`` and optional ``size`` columns of a trace CSV."""
    if not path.exists():
        raise ValueError(f"path: trace file '{path}' does not exist")
    problem = input_file_problem(path, MAX_TRACE_BYTES)  # a device, a pipe, too large: unread
    if problem is not None:
        raise ValueError(f"path: trace file '{path}': {problem}")
    try:
        table = pd.read_csv(path, skipinitialspace=True)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"path: cannot read trace file '{path}' as CSV: {exc}") from None
    table.columns = [str(c).strip() for c in table.columns]
    if "time" not in table.columns:
        found = ", ".join(repr(c) for c in table.columns) or "none"
        raise ValueError(f"trace file '{path}' has no column 'time'; its columns: {found}")
    if table.empty:
        raise ValueError(f"trace file '{path}' has a header but no arrivals; give at least one row")
    raw_times = table["time"]
    times = pd.to_numeric(raw_times, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(times) | (times < 0)
    if bad.any():
        row = int(np.argmax(bad))
        value = _plain(raw_times.iloc[row])
        raise ValueError(
            f"trace file '{path}': data row {row + 1} has the time {value!r}; "
            "times must be finite numbers >= 0"
        )
    if "size" not in table.columns:
        return times, np.ones(times.shape, dtype=np.int64)
    raw_sizes = table["size"]
    sizes = pd.to_numeric(raw_sizes, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(sizes) | (sizes < 1) | (sizes != np.round(sizes))
    if bad.any():
        row = int(np.argmax(bad))
        value = _plain(raw_sizes.iloc[row])
        raise ValueError(
            f"trace file '{path}': data row {row + 1} has the size {value!r}; "
            "sizes must be whole numbers >= 1"
        )
    return times, sizes.astype(np.int64)
