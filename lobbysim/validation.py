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

Two checks bound what a run may take before anything is read or allocated:
:func:`input_file_problem` looks at a file a user names (a scenario, a trace, a plug-in) with
``os.stat`` alone, so that a device (``/dev/zero``), a pipe or a huge file is refused without
reading a byte; :func:`memory_budget` is the memory a run may plan to use, against which
the commands set an estimate (:mod:`lobbysim.scenario.sizing` for a scenario,
:func:`lobbysim.commands.paper.study_memory` for the paper's study). A study that runs many
simulations (``tune``, ``calibrate``) is bounded by their number before any runs:
:data:`MAX_STUDY_SIMULATIONS`, checked by :func:`study_size_problem`.
"""

from __future__ import annotations

import math
import numbers
import os
import stat
from pathlib import Path

MAX_REPLICATIONS = 10_000
#: The largest performance-noise or dynamics variance on the skill scale (``game.beta2``, a
#: Gaussian rater's ``beta2`` and ``tau2``): a standard deviation of 10,000 skill points, 5,000
#: times the default skill sd of 2. The raters square and sum these (``2 beta2 + var``, its
#: square root, its reciprocal); far beyond it every rating change is lost in rounding and, near
#: 1e308, the sums overflow to infinity and the ratings to NaN.
MAX_SKILL_VARIANCE = 1e8


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
    try:
        x = float(value) if is_number(value) else math.nan  # type: ignore[arg-type]
    except OverflowError:  # an integer beyond a float
        x = math.inf
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {_short(value)}")
    if gt is not None and not x > gt:
        raise ValueError(f"{name} must be > {gt:g}, got {value!r}")
    if ge is not None and not x >= ge:
        raise ValueError(f"{name} must be >= {ge:g}, got {value!r}")
    if lt is not None and not x < lt:
        raise ValueError(f"{name} must be < {lt:g}, got {value!r}")
    if le is not None and not x <= le:
        raise ValueError(f"{name} must be <= {le:g}, got {value!r}")
    return x


def _short(value: object) -> str:
    """Return ``repr(value)``, an integer of over 30 digits shortened to its digit count."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"a number of {digit_count(value):,} digits"
    return repr(value)


def digit_count(value: int) -> int:
    """Return the decimal digits of an integer, without writing it out (``str()`` refuses one
    of over 4,300 digits); at most one more than the true count."""
    return math.floor(abs(value).bit_length() * math.log10(2)) + 1


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


def input_file_problem(path: str | Path, max_bytes: int) -> str | None:
    """Return why the file ``path`` cannot be read as input, without opening it, or None.

    Only ``os.stat`` is called (it follows symbolic links): a missing file, a folder, anything
    but a regular file (a device such as ``/dev/zero``, a pipe, a socket: reading one could
    block or never end) and a file larger than ``max_bytes`` are refused. A reader should still
    read at most ``max_bytes + 1`` bytes, in case the file grows in between.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        return f"cannot read the file: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "a pipe"
            if stat.S_ISFIFO(info.st_mode)
            else "a socket"
            if stat.S_ISSOCK(info.st_mode)
            else "a device"
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
            else "not a regular file"
        )
        return f"is {kind}, not a regular file; give a file"
    if info.st_size > max_bytes:
        return f"longer than {max_bytes:,} bytes ({info.st_size:,})"
    return None


def read_input_text(path: str | Path, max_bytes: int, *, encoding: str = "utf-8") -> str:
    """Return the text of the input file ``path``: checked by :func:`input_file_problem`, at
    most ``max_bytes + 1`` bytes read (should the file grow after the check), decoded.

    Raises:
        ValueError: why not, in one line without the path (the caller names the file): the
            check's problem, an unreadable or too long file, or text that is not UTF-8 (the
            line and byte of the first bad byte).
    """
    problem = input_file_problem(path, max_bytes)
    if problem is not None:
        raise ValueError(problem)
    try:
        with open(path, "rb") as file:
            raw = file.read(max_bytes + 1)
    except OSError as exc:
        raise ValueError(f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise ValueError(f"longer than {max_bytes:,} bytes")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"not UTF-8 text: the byte 0x{raw[exc.start]:02x} at line {line} "
            f"(byte {exc.start + 1}); save the file as UTF-8"
        ) from None


#: The most simulations a study may plan unless its ``--max-simulations`` raises the limit:
#: ``lobbysim tune`` plans its trials times the most replications a trial gets plus the
#: fresh-seed evaluation (the best setting and the scenario as it is), ``lobbysim calibrate`` its
#: ``--refine`` simulations and the comparison run. The default study of ``tune`` plans 280.
MAX_STUDY_SIMULATIONS = 10_000


def study_size_problem(
    where: str,
    value: int,
    simulations: int,
    limit: int,
    *,
    detail: str = "",
    seconds: float | None = None,
    workers: int = 1,
) -> str | None:
    """Return the line refusing a study that plans more than ``limit`` simulations, or None.

    Args:
        where: the option or field that sets the size (``--refine``, ``space.yaml: trials``).
        value: its value.
        simulations: the simulations the study would plan.
        limit: the limit (:data:`MAX_STUDY_SIMULATIONS`, or ``--max-simulations``).
        detail: how the simulations add up, in brackets after their number.
        seconds: a simulation's estimated CPU seconds, if known: the line then gives the study's
            time on ``workers`` workers.
    """
    if simulations <= limit:
        return None
    time = ""
    if seconds is not None and math.isfinite(seconds) and seconds > 0:
        workers = max(1, workers)
        each = f"{seconds:.2g} s" if seconds < 60 else format_duration(seconds)
        time = (
            f", ~{format_duration(simulations * seconds / workers)} on {workers} "
            f"worker{'s' if workers > 1 else ''} at about {each} a simulation (a rough estimate)"
        )
    return (
        f"{where}: {value:,} would run about {simulations:,} simulations"
        f"{f' ({detail})' if detail else ''}{time}; the limit is {limit:,}; to run it on "
        "purpose, raise the limit with --max-simulations N"
    )


def format_duration(seconds: float) -> str:
    """Return a duration for humans: ``"40 seconds"``, ``"3.5 hours"``, ``"12,000 years"``."""
    for unit, scale in (
        ("years", 365.25 * 86400),
        ("days", 86400.0),
        ("hours", 3600.0),
        ("minutes", 60.0),
    ):
        if seconds >= 2 * scale:
            value = seconds / scale
            return f"{value:.2g} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{seconds:.2g} seconds" if seconds < 10 else f"{seconds:.0f} seconds"


#: The memory budget when the machine's cannot be read (no ``os.sysconf``): 16 GiB.
FALLBACK_MEMORY = 16 * 2**30


def memory_budget() -> tuple[int, str]:
    """Return the bytes of memory a run may plan to use, and where that limit comes from.

    The smallest of: the machine's physical memory (``SC_PHYS_PAGES * SC_PAGE_SIZE``; a fixed
    16 GiB where that cannot be read), the process's address-space limit (``ulimit -v``,
    ``RLIMIT_AS``) and a Linux control group's ``memory.max`` (a container's limit). Total
    memory, not the memory free now: a check that depends on what else runs at the moment
    would pass and fail by turns.
    """
    try:
        budget = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        where = "this machine's memory"
    except (AttributeError, ValueError, OSError):
        budget, where = FALLBACK_MEMORY, "the default limit"
    if budget <= 0:
        budget, where = FALLBACK_MEMORY, "the default limit"
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and 0 < soft < budget:
            budget, where = soft, "this process's address-space limit, ulimit -v"
    except (ImportError, OSError, ValueError):
        pass
    try:
        text = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
        if text.isdigit() and 0 < int(text) < budget:
            budget, where = int(text), "this container's memory limit, cgroup memory.max"
    except (OSError, ValueError):
        pass
    return budget, where


def format_bytes(size: float) -> str:
    """Return a size in bytes for humans: ``"480 GB"``, ``"3.2 TB"``, ``"950 MB"`` (powers of
    1000, two or three significant digits)."""
    for unit, scale in (("EB", 1e18), ("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if size >= scale:
            value = size / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"
    return f"{size / 1e3:.3g} kB"
