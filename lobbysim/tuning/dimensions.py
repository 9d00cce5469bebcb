"""A searched dimension of a tuning space, and how a space file writes one.

A parameter is a range ``[low, high]`` (a number; ``{low, high, log: true}`` on a log scale;
``{low, high, step}`` only the values ``low``, ``low + step``, ... ``high``),
``{int: [low, high]}`` (whole numbers; ``{int: [low, high], step: 2}`` every second one),
``{choices: [...]}`` (unordered: the sampler sees categories), ``{levels: [...]}`` (ordered, as
listed: the sampler sees their ranks) or a fixed value (:mod:`lobbysim.tuning.space` reads the
rest of the file).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Range:
    """A number drawn from [low, high]; whole numbers with ``integer``; ``log`` scale; with
    ``step``, only ``low``, ``low + step``, ... ``high`` (a finite set of values)."""

    low: float
    high: float
    integer: bool = False
    log: bool = False
    step: float | None = None

    def values(self) -> tuple[float | int, ...] | None:
        """Return every value the range allows, in order, where they are finitely many (whole
        numbers, or a step); None for a continuous range."""
        if self.step is None and not self.integer:
            return None
        step = self.step if self.step is not None else 1
        count = round((self.high - self.low) / step) + 1
        if self.integer:
            return tuple(int(self.low) + k * int(step) for k in range(count))
        return tuple(float(f"{self.low + k * step:.12g}") for k in range(count))


@dataclass(frozen=True)
class Choices:
    """One of a list of values: unordered (``choices``, the sampler sees categories) or, with
    ``ordered``, levels in their order (``levels``, the sampler sees their ranks)."""

    values: tuple[Any, ...]
    ordered: bool = False


Dimension = Range | Choices | float | int | str | bool | None
"""A searched dimension, or a fixed value."""


def count_of(value: Any) -> int | None:
    """Return a whole number given as an integer or a float without a fraction (``1e3``, as
    YAML 1.2 reads it), else None (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def read_dimension(spec: Any, where: str, problems: list[str]) -> Dimension:
    if isinstance(spec, list):
        if len(spec) != 2 or not all(_number(v) for v in spec):
            problems.append(f"{where}: expected a range [LOW, HIGH] of numbers, got {spec!r}")
            return None
        return _range(float(spec[0]), float(spec[1]), False, False, where, problems, spec)
    if isinstance(spec, Mapping):
        keys = set(spec)
        if keys in ({"choices"}, {"levels"}):
            (key,) = keys
            values = spec[key]
            if not isinstance(values, list) or len(values) < 2:
                problems.append(
                    f"{where}.{key}: expected a list of 2 or more values, got {values!r}"
                )
                return None
            twice = sorted({repr(v) for v in values if values.count(v) > 1})
            if twice:
                problems.append(f"{where}.{key}: each value once, got {', '.join(twice)} twice")
                return None
            return Choices(tuple(values), ordered=key == "levels")
        if keys in ({"int"}, {"int", "step"}):
            pair = spec["int"]
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            ):
                problems.append(f"{where}.int: expected [LOW, HIGH] whole numbers, got {pair!r}")
                return None
            got = _range(pair[0], pair[1], True, False, where, problems, spec)
            return _stepped(got, spec, where, problems)
        if keys <= {"low", "high", "log", "step"} and {"low", "high"} <= keys:
            if not (_number(spec["low"]) and _number(spec["high"])):
                problems.append(f"{where}: low and high must be numbers, got {dict(spec)!r}")
                return None
            log = bool(spec.get("log", False))
            if log and not float(spec["low"]) > 0:
                problems.append(f"{where}: a log range needs low > 0, got {spec['low']!r}")
                return None
            if log and "step" in spec:
                problems.append(f"{where}: a log range takes no step, got {dict(spec)!r}")
                return None
            got = _range(float(spec["low"]), float(spec["high"]), False, log, where, problems, spec)
            return _stepped(got, spec, where, problems)
        problems.append(
            f"{where}: expected [LOW, HIGH], {{int: [LOW, HIGH], step}}, {{low, high, step}}, "
            "{low, high, log}, "
            f"{{choices: [...]}}, {{levels: [...]}}, {{shape: expansion, ...}} or a fixed value, "
            f"got {dict(spec)!r}"
        )
        return None
    return spec


#: The most values a stepped range may allow.
MAX_STEPPED = 10_000


def _stepped(
    got: Range | None, spec: Mapping[str, Any], where: str, problems: list[str]
) -> Range | None:
    """Return the range with its ``step`` (a positive number, a whole one for whole numbers,
    that divides HIGH - LOW into at most :data:`MAX_STEPPED` steps), or None with a problem."""
    if got is None or "step" not in spec:
        return got
    step = spec["step"]
    kind = "a whole number" if got.integer else "a number"
    if not _number(step) or not step > 0 or (got.integer and count_of(step) is None):
        problems.append(f"{where}.step: expected {kind} above 0, got {step!r}")
        return None
    count = (got.high - got.low) / float(step)
    if abs(count - round(count)) > 1e-9 * max(1.0, count):
        problems.append(
            f"{where}.step: {step!r} does not divide the range [{_g(got.low)}, {_g(got.high)}] "
            "into whole steps"
        )
        return None
    if round(count) + 1 > MAX_STEPPED:
        problems.append(
            f"{where}.step: {step!r} makes {round(count) + 1:,} values; at most {MAX_STEPPED:,}"
        )
        return None
    return replace(got, step=int(step) if got.integer else float(step))


def _g(value: float) -> str:
    return f"{value:g}"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _range(
    low: float, high: float, integer: bool, log: bool, where: str, problems: list[str], spec: Any
) -> Range | None:
    if not low < high:
        problems.append(f"{where}: empty range {spec!r} (expected LOW < HIGH)")
        return None
    return Range(low, high, integer, log)
