"""Visit models: when the registered players of a persistent base come back (docs/model.md, 7).

A scenario with a ``base:`` section (:class:`lobbysim.scenario.BaseConfig`) keeps its players
from visit to visit. Each member has a visit *rate* (visits per day, drawn once when they join)
and, after each visit ends, the time of their next visit is drawn from the visit model; newcomers
join the base at times drawn from the same model. A visit model is a small plug-in with three
verbs, all vectorised and drawing only from the generator they are given:

* ``rates(rng, n)``: the visit rates (per day, > 0) of ``n`` players joining the base;
* ``next_visits(rng, now, rates)``: each player's next visit after ``now`` (minutes);
* ``joins(rng, start, end, per_day)``: the times newcomers join in ``[start, end)`` at an
  average of ``per_day`` a day.

It may declare a capability too: ``mean_visits_per_day()``, a member's mean visits a day, by
which a run's records are sized before it starts (:func:`mean_visits_per_day`).

The built-in ``daily`` model is a Poisson visit process per player whose intensity follows a
time-of-day profile: player i visits at the rate ``rate_i * w(h) / mean(w)`` per day at clock
hour h, so ``rate_i`` is their average visits per day whatever the profile's shape. The rates are
Gamma-distributed across players (shape ``shape``, mean ``per_day``; ``shape: .inf`` gives every
player the same rate), so some members play daily and others weekly, as in a real game. A visit
drawn for a time while the player is still online cannot happen: the next visit is drawn when a
visit ends, from that moment (a renewal process), so a member is never in two places at once.

The engine checks what a model returns (:func:`check_times`) and names the model in the error
(a verb that raises or calls ``sys.exit`` too, on one line:
:class:`~lobbysim.registry.PluginRef`);
``VISITS.create(name, params)`` builds a built-in or a user class (``"package.module:Class"``).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from lobbysim.registry import PluginError, PluginRef, Registry
from lobbysim.validation import real_parameter

FloatArray = NDArray[np.float64]

MINUTES_PER_DAY = 1440.0
HOURS_PER_DAY = 24
#: Visits per player per day: more is a mistake (one every 9 seconds) that would never end.
MAX_VISITS_PER_DAY = 10_000.0


@runtime_checkable
class VisitModel(Protocol):
    """When the members of a player base visit, and when newcomers join."""

    name: ClassVar[str]

    def rates(self, rng: np.random.Generator, n: int) -> FloatArray:
        """Return the visit rates (visits per day, > 0) of ``n`` players joining the base."""
        ...

    def next_visits(self, rng: np.random.Generator, now: float, rates: FloatArray) -> FloatArray:
        """Return each player's next visit time (minutes, > ``now``) given their rates."""
        ...

    def joins(
        self, rng: np.random.Generator, start: float, end: float, per_day: float
    ) -> FloatArray:
        """Return the sorted times in ``[start, end)`` at which newcomers join the base."""
        ...


VISITS: Registry[VisitModel] = Registry("visit model", required=("rates", "next_visits", "joins"))


def mean_visits_per_day(model: object, name: str = "") -> float | None:
    """Return the mean visits a member makes a day as ``model`` declares it, or None.

    A model declares it (a capability) with a method ``mean_visits_per_day()`` returning a
    number >= 0 (or None where it cannot say); ``daily`` does (its ``per_day``). A run's records
    are sized by it (:mod:`lobbysim.scenario.sizing`); a model without the method is not
    counted (None).

    Raises:
        PluginError: the method raised, or returned something other than a finite number >= 0
            or None, naming the model (``name``, default its class).
    """
    method = getattr(model, "mean_visits_per_day", None)
    if method is None:
        return None
    name = name or getattr(model, "name", type(model).__qualname__)
    plugin = PluginRef("base.visits", "visit model", name)
    declared = plugin.call("mean_visits_per_day()", method)
    if declared is None:
        return None
    try:
        return real_parameter("mean_visits_per_day()", declared, ge=0.0)
    except ValueError as exc:
        raise plugin.failure("mean_visits_per_day()", exc) from None


def check_times(
    model_name: str, what: str, values: object, n: int, after: float, before: float = math.inf
) -> FloatArray:
    """Return a model's answer as a float array, or raise naming the model and what is wrong.

    Args:
        model_name: the model, for the message.
        what: the verb that answered (``next_visits``, ``rates``, ``joins``).
        values: its answer.
        n: the expected length (``-1``: any length, and the values must be sorted).
        after: every value must be greater than this (``>=`` for ``joins``).
        before: every value must be below this.
    """
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise PluginError(
            f"visit model '{model_name}': {what} returned {type(values).__name__}, "
            "expected an array of numbers"
        ) from None
    if n == 1 and arr.size == 1:  # one member's next visit, asked at every visit's end: quickly
        value = float(arr[0])
        if math.isfinite(value) and value > after:
            return arr
    problem = None
    if n >= 0 and arr.size != n:
        problem = f"{arr.size} values for {n} players"
    elif not np.isfinite(arr).all():
        problem = f"a value that is not finite ({arr[~np.isfinite(arr)][0]})"
    elif n < 0 and (arr.size and (arr[0] < after or arr[-1] >= before)):
        problem = f"a time outside [{after:g}, {before:g})"
    elif n < 0 and np.any(np.diff(arr) < 0):
        problem = "times that are not sorted"
    elif n >= 0 and np.any(arr <= after):
        problem = f"a value <= {after:g} ({arr[arr <= after][0]:g})"
    if problem is not None:
        raise PluginError(f"visit model '{model_name}': {what} returned {problem}")
    return arr


def _profile_weights(profile: object) -> FloatArray:
    """Return the 24 hourly weights of a profile (empty: flat), normalised to mean 1."""
    values = tuple(profile) if isinstance(profile, list | tuple) else profile
    if not isinstance(values, tuple):
        raise ValueError(f"profile must be a list of 24 hourly weights, got {profile!r}")
    if not values:
        return np.ones(HOURS_PER_DAY)
    if len(values) != HOURS_PER_DAY:
        raise ValueError(f"profile must have 24 hourly weights, got {len(values)}")
    weights = np.array(
        [real_parameter(f"profile[{h}]", w, ge=0.0) for h, w in enumerate(values)], dtype=float
    )
    if weights.sum() <= 0.0:
        raise ValueError("profile must have a positive weight in some hour")
    return weights / weights.mean()


@VISITS.register
@dataclass(frozen=True)
class Daily:
    """Poisson visits at a per-player rate per day, shaped by a time-of-day profile.

    Attributes:
        per_day: the mean visit rate of a member, in visits per day (> 0).
        shape: the Gamma shape of the rates across members (> 0; ``.inf``: all equal). With the
            default 2, a quarter of the members visit less than half as often as the mean.
        profile: 24 relative weights for the clock hours 00:00 to 23:00 (empty: flat).
        start_hour: the clock hour at simulated minute 0.
    """

    name: ClassVar[str] = "daily"
    per_day: float = 1.0
    shape: float = 2.0
    profile: tuple[float, ...] = ()
    start_hour: float = 0.0
    _cumulative: FloatArray = field(init=False, repr=False, compare=False)
    _cumulative_list: list[float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        per_day = real_parameter("per_day", self.per_day, gt=0.0)
        if per_day > MAX_VISITS_PER_DAY:
            raise ValueError(f"per_day must be at most {MAX_VISITS_PER_DAY:,.0f}, got {per_day}")
        put("per_day", per_day)
        shape = self.shape
        if not (isinstance(shape, int | float) and not isinstance(shape, bool) and shape > 0):
            raise ValueError(f"shape must be a number > 0 (.inf: equal rates), got {shape!r}")
        put("shape", float(shape))
        weights = _profile_weights(self.profile)
        put("profile", tuple(float(w) for w in self.profile))
        put("start_hour", real_parameter("start_hour", self.start_hour, ge=0.0, lt=24.0))
        # The integrated intensity of a unit rate over one day, at the hour boundaries, in days.
        put("_cumulative", np.concatenate([[0.0], np.cumsum(weights) / HOURS_PER_DAY]))
        put("_cumulative_list", self._cumulative.tolist())

    # ------------------------------------------------------------------ the clock's warping
    def _day_time(self, minutes: FloatArray) -> FloatArray:
        """Return the integrated unit intensity from minute 0 to ``minutes`` (in days)."""
        hours = np.asarray(minutes, dtype=float) / 60.0 + self.start_hour
        days, within = np.divmod(hours, HOURS_PER_DAY)
        hour = np.minimum(within.astype(np.int64), HOURS_PER_DAY - 1)
        frac = within - hour
        cum = self._cumulative
        offset = cum[hour] + (cum[hour + 1] - cum[hour]) * frac
        return days + offset - self._start_offset()

    def _start_offset(self) -> float:
        hour = int(self.start_hour)
        cum = self._cumulative
        return float(cum[hour] + (cum[hour + 1] - cum[hour]) * (self.start_hour - hour))

    def _minutes(self, day_time: FloatArray) -> FloatArray:
        """Invert :meth:`_day_time`: the minute at which the integrated intensity is reached."""
        total = np.asarray(day_time, dtype=float) + self._start_offset()
        days, within = np.divmod(total, 1.0)
        cum = self._cumulative
        hour = np.clip(np.searchsorted(cum, within, side="right") - 1, 0, HOURS_PER_DAY - 1)
        # Skip hours of weight zero: their cumulative does not rise.
        width = cum[hour + 1] - cum[hour]
        frac = np.divide(within - cum[hour], width, out=np.zeros_like(within), where=width > 0)
        hours = days * HOURS_PER_DAY + hour + np.clip(frac, 0.0, 1.0) - self.start_hour
        return hours * 60.0

    def _next_one(self, now: float, gap: float) -> float:
        """:meth:`next_visits` of one member (finite ``now`` and ``gap``), bit for bit.

        Every step is the one of :meth:`_day_time` and :meth:`_minutes` on a float: ``divmod``
        is numpy's (both follow C's ``fmod`` with the same corrections), ``bisect_right`` is
        ``searchsorted(side="right")``, and sums and products round alike (tested).
        """
        cum = self._cumulative_list
        # _day_time(now)
        days, within = divmod(now / 60.0 + self.start_hour, float(HOURS_PER_DAY))
        hour = min(int(within), HOURS_PER_DAY - 1)
        offset = cum[hour] + (cum[hour + 1] - cum[hour]) * (within - hour)
        start_offset = self._start_offset()
        day_time = days + offset - start_offset + gap
        # _minutes(day_time)
        days, within = divmod(day_time + start_offset, 1.0)
        hour = min(max(bisect.bisect_right(cum, within) - 1, 0), HOURS_PER_DAY - 1)
        width = cum[hour + 1] - cum[hour]
        frac = (within - cum[hour]) / width if width > 0 else 0.0
        hours = days * HOURS_PER_DAY + hour + min(max(frac, 0.0), 1.0) - self.start_hour
        return max(hours * 60.0, math.nextafter(now, math.inf))

    # ------------------------------------------------------------------ the verbs
    def mean_visits_per_day(self) -> float:
        """Return ``per_day``, a member's mean visits a day (the capability of
        :func:`mean_visits_per_day`)."""
        return self.per_day

    def rates(self, rng: np.random.Generator, n: int) -> FloatArray:
        """Return Gamma(shape, per_day / shape) rates; draws n gammas even with ``shape: .inf``."""
        if math.isinf(self.shape):
            rng.standard_gamma(1.0, n)
            return np.full(n, self.per_day)
        return rng.standard_gamma(self.shape, n) * (self.per_day / self.shape)

    def next_visits(self, rng: np.random.Generator, now: float, rates: FloatArray) -> FloatArray:
        """Return ``now`` plus an exponential gap in profile-warped time at each player's rate.

        One member at a time (the player base asks so whenever a visit ends) takes
        :meth:`_next_one`, the same arithmetic on floats, without numpy's cost per call.
        """
        rates = np.asarray(rates, dtype=float)
        gaps = rng.standard_exponential(rates.shape) / rates
        if gaps.size == 1:
            gap = float(gaps.reshape(-1)[0])
            if math.isfinite(gap) and math.isfinite(now):
                return np.full(rates.shape, self._next_one(now, gap))
        times = self._minutes(self._day_time(np.full(rates.shape, now)) + gaps)
        # Rounding can put a tiny gap at or before now; a visit is always strictly later.
        return np.maximum(times, np.nextafter(now, math.inf))

    def joins(
        self, rng: np.random.Generator, start: float, end: float, per_day: float
    ) -> FloatArray:
        """Return the Poisson(per_day, profile-shaped) join times in ``[start, end)``."""
        lo, hi = self._day_time(np.array([start, end]))
        n = rng.poisson(per_day * (hi - lo))
        marks = np.sort(rng.uniform(lo, hi, n))
        times = np.clip(self._minutes(marks), start, np.nextafter(end, -math.inf))
        return np.sort(times)
