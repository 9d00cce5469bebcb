"""Checks of user-given values, shared by the scenario, the plug-ins and the command line.

Two shapes, one vocabulary:

* **problem functions** (:func:`finite`, :func:`positive`, :func:`non_negative`, :func:`whole`)
  return ``None`` when a value is fine, or one line naming the field, the value and what was
  expected; :func:`check` raises every problem of a level at once as a :class:`ScenarioError`.
  The scenario's sections use them, so a file's problems come out together.
* **parameter functions** (:func:`real_parameter`, :func:`whole_parameter`) return the value
  converted, or raise ``ValueError`` naming it: a plug-in's ``__post_init__`` uses them, and the
  registry turns the error into a :class:`lobbysim.registry.PluginError` naming the plug-in.

Booleans are never numbers here (YAML's ``yes`` must not become 1), and NaN and infinities are
never finite values.
"""

from __future__ import annotations

import math
import numbers

MAX_REPLICATIONS = 10_000


class ScenarioError(ValueError):
    """Problems in a scenario, one line each, naming the field path, the value and what was
    expected. ``problems`` lists them; ``str()`` joins them with newlines."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def is_number(value: object) -> bool:
    """Return whether ``value`` is a real number (not a bool; NaN and infinities included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_whole(value: object) -> bool:
    """Return whether ``value`` is a whole number (an integer, not a bool)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check(*problems: str | None) -> None:
    """Raise every problem found at once (None means that check passed)."""
    found = [p for p in problems if p is not None]
    if found:
        raise ScenarioError(found)


def finite(name: str, value: float) -> str | None:
    """Return a problem unless ``value`` is finite."""
    return None if math.isfinite(value) else f"{name}: expected a finite number, got {value!r}"


def positive(name: str, value: float) -> str | None:
    """Return a problem unless ``value`` is a finite number > 0."""
    if math.isfinite(value) and value > 0:
        return None
    return f"{name}: expected a number > 0, got {value!r}"


def non_negative(name: str, value: float) -> str | None:
    """Return a problem unless ``value`` is a finite number >= 0."""
    if math.isfinite(value) and value >= 0:
        return None
    return f"{name}: expected a number >= 0, got {value!r}"


def whole(name: str, value: object, minimum: int) -> str | None:
    """Return a problem unless ``value`` is a whole number >= ``minimum``."""
    if is_whole(value) and value >= minimum:  # type: ignore[operator]
        return None
    return f"{name}: expected a whole number >= {minimum}, got {value!r}"


def real_parameter(
    name: str,
    value: object,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> float:
    """Return a plug-in parameter as a float, or raise ValueError naming it and the value.

    ``gt``/``ge``/``lt``/``le`` are optional bounds (strict or not); booleans, non-numbers, NaN and
    infinities are rejected.
    """
    if not is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    x = float(value)  # type: ignore[arg-type]
    if gt is not None and not x > gt:
        raise ValueError(f"{name} must be > {gt:g}, got {value!r}")
    if ge is not None and not x >= ge:
        raise ValueError(f"{name} must be >= {ge:g}, got {value!r}")
    if lt is not None and not x < lt:
        raise ValueError(f"{name} must be < {lt:g}, got {value!r}")
    if le is not None and not x <= le:
        raise ValueError(f"{name} must be <= {le:g}, got {value!r}")
    return x


def whole_parameter(name: str, value: object, *, minimum: int | None = None) -> int:
    """Return a plug-in parameter as an int, or raise ValueError naming it and the value."""
    if not is_whole(value) or (minimum is not None and value < minimum):  # type: ignore[operator]
        at_least = "" if minimum is None else f" >= {minimum}"
        raise ValueError(f"{name} must be a whole number{at_least}, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def check_run_options(
    *, seed: object = None, replications: object = None, jobs: object = None
) -> None:
    """Check the options every command that runs scenarios shares (None: not given).

    Raises:
        ScenarioError: one line per bad option, naming it (``--seed: ...``).
    """
    check(
        None if seed is None else whole("--seed", seed, 0),
        None if replications is None else replications_problem("--replications", replications),
        None if jobs is None else whole("--jobs", jobs, 1),
    )


def replications_problem(where: str, value: object) -> str | None:
    """Return what is wrong with a number of replications, if anything."""
    problem = whole(where, value, 1)
    if problem is None and isinstance(value, numbers.Integral) and int(value) > MAX_REPLICATIONS:
        return (
            f"{where}: at most {MAX_REPLICATIONS:,} replications, got {value:,}; intervals "
            "narrow with the square root of the replications, so a few dozen usually suffice"
        )
    return problem
