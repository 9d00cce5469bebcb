"""A tuning study's definition: the search space, the objective and the constraints.

A space file (YAML) says what ``lobbysim tune`` may change, what it optimises and what it must
hold::

    objective: {minimize: skill_gap_true_mean}
    constraints:                     # each held at the pessimistic end of its 95% interval
      - queue_time_mean <= 0.4       # minutes
      - abandonment_rate <= 0.06
    parameters:
      matchmaker.threshold:          # a schedule given by a few numbers
        shape: expansion             # [[0, start], [every, start - step], ...] down to limit
        start: [0.2, 0.8]
        step: [0.05, 0.4]
        every: [0.25, 3.0]
        limit: 0.0
      matchmaker.tick: [0.25, 1.0]                     # a number in a range
      matchmaker.assignment.block_size: {int: [4, 10]} # a whole number
      matchmaker.policy: {choices: [point_estimate, draw_chance]}
    trials: 24           # candidates proposed in all
    batch: 4             # proposed at once, run in parallel
    replications: [3, 10]  # each trial's first rung, and the most a promising one gets
    evaluate: 20         # fresh replications the best candidate is re-evaluated on
    seed: 1              # the optimiser's seed

A parameter is a range ``[low, high]`` (a number; ``{low, high, log: true}`` on a log scale),
``{int: [low, high]}``, ``{choices: [...]}`` (unordered: the sampler sees categories),
``{levels: [...]}`` (ordered, as listed: a tick of 0.25, 0.5, 1, 2 minutes; the sampler sees
their ranks), a fixed value, or a ``shape``. The ``expansion``
shape writes a schedule of ``[minutes waited, value]`` steps (a threshold's, or a rule's
``expansions``): the value starts at ``start`` and moves by ``step`` toward ``limit`` every
``every`` minutes, the last step at ``limit``; each of the four is a range or a fixed number. On
a rule's expansions (``matchmaker.rules.LowPing.expansions``; a rule is named by its ``name``)
the first step is the rule's ``limit`` and the later ones its ``expansions``.
Each field path is a scenario field, checked by building the scenario at the space's corners
(every choice among them), its plug-ins included, before any run starts.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.scenario.loading import plugin_problems
from lobbysim.scenario.parse import set_path
from lobbysim.stats.metrics import metric_names
from lobbysim.tuning.dimensions import Choices, Dimension, Range, count_of, read_dimension
from lobbysim.validation import MAX_REPLICATIONS, read_input_text
from lobbysim.yaml_input import MAX_BYTES, YamlInputError, load_yaml


class SpaceError(ValueError):
    """A problem with a space file; one line per problem, each naming its field."""


#: The shape fields of an ``expansion`` schedule.
EXPANSION_FIELDS = ("start", "step", "every", "limit")
#: The most steps an expansion schedule writes (a tiny step over a long way would be absurd).
MAX_STEPS = 50
#: The largest optimiser's seed (Optuna's sampler seeds numpy's, which takes 32 bits).
MAX_SEED = 2**32 - 1
_CONSTRAINT = re.compile(r"^\s*([A-Za-z0-9_.@\-]+)\s*(<=|>=)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Parameter:
    """One scenario field the study sets.

    Attributes:
        path: the dotted scenario field (``matchmaker.tick``).
        dimension: a :class:`Range` or :class:`Choices` (searched), or a fixed value; for an
            ``expansion`` shape, None (its parts are in ``parts``).
        parts: the shape's fields (``start``, ``step``, ``every``, ``limit``) and their
            dimensions.
    """

    path: str
    dimension: Dimension = None
    parts: Mapping[str, Dimension] = field(default_factory=dict)

    @property
    def shape(self) -> bool:
        return bool(self.parts)

    def names(self) -> list[str]:
        """Return the names of the searched dimensions (``path``, or ``path.start``, ...)."""
        if self.shape:
            return [f"{self.path}.{k}" for k, d in self.parts.items() if _searched(d)]
        return [self.path] if _searched(self.dimension) else []

    def assignments(self, drawn: Mapping[str, Any]) -> dict[str, Any]:
        """Return the scenario fields this parameter sets from the drawn dimensions: its own
        field; for an expansion of a rule (a path ending in ``.expansions``), the first step's
        value as the rule's ``limit`` and the later steps as its ``expansions``."""
        value = self.value(drawn)
        if self.shape and self.path.endswith(".expansions"):
            rule = self.path.rsplit(".", 1)[0]
            return {f"{rule}.limit": value[0][1], self.path: value[1:]}
        return {self.path: value}

    def value(self, drawn: Mapping[str, Any]) -> Any:
        """Return the field's value from the drawn dimensions (by :meth:`names`)."""
        if not self.shape:
            return drawn[self.path] if _searched(self.dimension) else self.dimension
        got: dict[str, Any] = {
            k: (drawn[f"{self.path}.{k}"] if _searched(d) else d) for k, d in self.parts.items()
        }
        return expansion(**{k: float(v) for k, v in got.items()})


@dataclass(frozen=True)
class Constraint:
    """``metric <= bound`` or ``metric >= bound``, held at the pessimistic interval end."""

    metric: str
    op: str
    bound: float

    def text(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"

    def violation(self, value: float) -> float:
        """Return how far ``value`` is on the wrong side of the bound (0 or less: held)."""
        return value - self.bound if self.op == "<=" else self.bound - value


@dataclass(frozen=True)
class Space:
    """A study's definition (see the module docstring)."""

    parameters: tuple[Parameter, ...]
    objective: str
    minimize: bool
    constraints: tuple[Constraint, ...] = ()
    trials: int = 24
    batch: int = 4
    first: int = 3
    most: int = 10
    evaluate: int = 20
    seed: int = 1
    #: the most distinct simulations the search may run (None: ``trials`` x ``most``)
    budget: int | None = None
    #: where the space was read from, as problems name it (a file, or ``space`` for data)
    source: str = field(default="space", compare=False)

    @property
    def search_budget(self) -> int:
        """Return the most distinct simulations the search may run: ``budget``, or every trial
        promoted to ``most`` replications."""
        return self.budget if self.budget is not None else self.trials * self.most

    def simulations(self) -> int:
        """Return the most simulations the study may run: the search's budget, then the best
        setting and the scenario as it is on ``evaluate`` fresh seeds each."""
        return self.search_budget + 2 * self.evaluate

    def settings(self, limit: int) -> list[dict[str, Any]] | None:
        """Return every setting the space allows (draws by name, the first dimension varying
        slowest), where every dimension has finitely many values and they number at most
        ``limit``; else None."""
        values = []
        total = 1
        for dim in self.dimensions().values():
            options = dim.values if isinstance(dim, Choices) else dim.values()
            if options is None:
                return None
            values.append(options)
            total *= len(options)
            if total > limit:
                return None
        names = list(self.dimensions())
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]

    def size(self) -> int | None:
        """Return how many settings the space allows (None: a continuous dimension)."""
        total = 1
        for dim in self.dimensions().values():
            options = dim.values if isinstance(dim, Choices) else dim.values()
            if options is None:
                return None
            total *= len(options)
        return total

    def names(self) -> list[str]:
        """Return every searched dimension's name, in the file's order."""
        return [name for p in self.parameters for name in p.names()]

    def dimensions(self) -> dict[str, Range | Choices]:
        """Return every searched dimension by name."""
        out: dict[str, Range | Choices] = {}
        for p in self.parameters:
            items = p.parts.items() if p.shape else [("", p.dimension)]
            for key, dim in items:
                if isinstance(dim, Range | Choices):
                    out[f"{p.path}.{key}" if key else p.path] = dim
        return out

    def values(self, drawn: Mapping[str, Any]) -> dict[str, Any]:
        """Return the scenario fields set by one draw (field path -> value)."""
        out: dict[str, Any] = {}
        for p in self.parameters:
            out.update(p.assignments(drawn))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the space as data (for the study's identity)."""
        return {
            "parameters": {p.path: _dimension_data(p) for p in self.parameters},
            "objective": {("minimize" if self.minimize else "maximize"): self.objective},
            "constraints": [c.text() for c in self.constraints],
            "trials": self.trials,
            "batch": self.batch,
            "replications": [self.first, self.most],
            "evaluate": self.evaluate,
            "seed": self.seed,
            **({} if self.budget is None else {"budget": self.budget}),
        }


def expansion(start: float, step: float, every: float, limit: float) -> list[list[float]]:
    """Return the schedule ``[[0, start], [every, start ± step], ..., [k every, limit]]``.

    The value moves from ``start`` toward ``limit`` by ``step`` every ``every`` minutes (down
    when ``limit`` is below ``start``, up otherwise); the last step is ``limit`` itself. Values
    are rounded to 6 decimals so that a schedule reads as written.
    """
    if start == limit:
        return [[0.0, _round(start)]]
    sign = -1.0 if limit < start else 1.0
    steps = min(MAX_STEPS, max(1, math.ceil(abs(limit - start) / step - 1e-9)))
    out = []
    for k in range(steps + 1):
        value = start + sign * step * k
        if k == steps or (value - limit) * sign >= 0:
            out.append([_round(every * k), _round(limit)])
            break
        out.append([_round(every * k), _round(value)])
    return out


def _round(value: float) -> float:
    return float(round(value, 6))


def _searched(dim: Dimension) -> bool:
    return isinstance(dim, Range | Choices)


def _dimension_data(p: Parameter) -> Any:
    def one(d: Dimension) -> Any:
        if isinstance(d, Range):
            step = {} if d.step is None else {"step": int(d.step) if d.integer else d.step}
            if d.integer:
                return {"int": [int(d.low), int(d.high)], **step}
            if d.log:
                return {"low": d.low, "high": d.high, "log": True}
            return {"low": d.low, "high": d.high, **step} if step else [d.low, d.high]
        if isinstance(d, Choices):
            return {"levels" if d.ordered else "choices": list(d.values)}
        return d

    if p.shape:
        return {"shape": "expansion", **{k: one(d) for k, d in p.parts.items()}}
    return one(p.dimension)


# --------------------------------------------------------------------------------------------
# Reading a space file


def load_space(path: str | os.PathLike[str] | Mapping[str, Any], scenario: Scenario) -> Space:
    """Read a space (a YAML file's path, or its data) and check it against ``scenario``.

    Raises:
        SpaceError: one line per problem, each naming the field and the value.
    """
    if isinstance(path, Mapping):
        data: Any = dict(path)
        where = "space"
    else:
        where = str(path)
        if not os.path.lexists(path):
            raise SpaceError(f"--space: {path}: no such file")
        try:  # a pipe, a device or a folder is refused before it is opened
            text = read_input_text(Path(path), MAX_BYTES)
        except ValueError as exc:
            raise SpaceError(f"--space: {path}: {exc}") from None
        try:
            data = load_yaml(text)
        except YamlInputError as exc:
            raise SpaceError(f"{where}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SpaceError(f"{where}: expected a mapping of space fields, got {data!r}")
    problems: list[str] = []
    space = _parse(data, scenario, problems)
    if problems or space is None:
        raise SpaceError("\n".join(f"{where}: {p}" for p in problems))
    return replace(space, source=where)


KNOWN = {"parameters", "objective", "constraints", "trials", "batch", "replications"}
KNOWN |= {"evaluate", "seed", "budget"}


def _parse(data: Mapping[str, Any], scenario: Scenario, problems: list[str]) -> Space | None:
    for key in data:
        if key not in KNOWN:
            problems.append(f"{key}: unknown field{_did_you_mean(str(key), KNOWN)}")
    raters = [scenario.raters.driver.name, *(s.name for s in scenario.raters.shadows)]
    metrics = metric_names(
        raters, base=scenario.base is not None, teams=scenario.game.mode == "team"
    )
    objective, minimize = _objective(data.get("objective"), metrics, problems)
    constraints = _constraints(data.get("constraints", []), metrics, problems)
    parameters = _parameters(data.get("parameters"), problems)
    budget = _whole(data, "budget", None, 1, problems)
    trials = _whole(data, "trials", budget or 24, 1, problems)
    batch = _whole(data, "batch", 4, 1, problems)
    evaluate = _whole(data, "evaluate", 20, 2, problems, MAX_REPLICATIONS)
    seed = _whole(data, "seed", 1, 0, problems, MAX_SEED)
    first, most = _rungs(data.get("replications", [3, 10]), problems)
    if problems:
        return None
    space = Space(
        tuple(parameters),
        objective,
        minimize,
        tuple(constraints),
        trials=trials,
        batch=batch,
        first=first,
        most=most,
        evaluate=evaluate,
        seed=seed,
        budget=budget,
    )
    if budget is not None and budget < most:
        problems.append(
            f"budget: {budget:,} simulations cannot give one setting its {most} replications "
            "(replications[1]); give at least that"
        )
        return None
    if not space.names():
        problems.append("parameters: nothing to search (every parameter is a fixed value)")
        return None
    _check_fields(space, scenario, problems)
    return space


def _did_you_mean(word: str, options: Sequence[str] | set[str]) -> str:
    close = difflib.get_close_matches(word, sorted(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _metric(name: Any, where: str, metrics: Sequence[str], problems: list[str]) -> str:
    if not isinstance(name, str) or name not in metrics:
        problems.append(f"{where}: unknown metric {name!r}{_did_you_mean(str(name), metrics)}")
    return str(name)


def _objective(value: Any, metrics: Sequence[str], problems: list[str]) -> tuple[str, bool]:
    form = "expected {minimize: METRIC} or {maximize: METRIC}"
    if value is None:
        problems.append(f"objective: missing ({form})")
        return "", True
    if not isinstance(value, Mapping) or len(value) != 1:
        problems.append(f"objective: {form}, got {value!r}")
        return "", True
    ((direction, name),) = value.items()
    if direction not in ("minimize", "maximize"):
        problems.append(f"objective: {form}, got {direction!r}")
        return "", True
    return _metric(name, f"objective.{direction}", metrics, problems), direction == "minimize"


def _constraints(value: Any, metrics: Sequence[str], problems: list[str]) -> list[Constraint]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(
            f"constraints: expected a list like ['queue_time_p90 <= 1.0'], got {value!r}"
        )
        return []
    out = []
    for i, item in enumerate(value):
        where = f"constraints[{i}]"
        match = _CONSTRAINT.match(str(item)) if isinstance(item, str) else None
        if match is None:
            problems.append(
                f"{where}: expected 'METRIC <= NUMBER' or 'METRIC >= NUMBER', got {item!r}"
            )
            continue
        name, op, bound = match.groups()
        try:
            number = float(bound)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            problems.append(f"{where}: the bound {bound!r} is not a finite number")
            continue
        out.append(Constraint(_metric(name, where, metrics, problems), op, number))
    return out


def _whole(
    data: Mapping[str, Any],
    key: str,
    default: Any,
    low: int,
    problems: list[str],
    high: int | None = None,
) -> Any:
    value = data.get(key, default)
    if value is None and default is None:
        return None
    count = count_of(value)
    if count is None or count < low:
        problems.append(f"{key}: expected a whole number >= {low}, got {value!r}")
        return default
    if high is not None and count > high:
        problems.append(f"{key}: expected a whole number <= {high:,}, got {count:,}")
        return default
    return count


def _rungs(value: Any, problems: list[str]) -> tuple[int, int]:
    pair = value if isinstance(value, list) and len(value) == 2 else [None, None]
    first, most = (count_of(v) for v in pair)
    if first is None or most is None or not 1 <= first <= most or most < 2:
        problems.append(
            "replications: expected [FIRST, MOST], whole numbers with 1 <= FIRST <= MOST and "
            "MOST >= 2 "
            f"(each trial's first rung and the most a promising one gets), got {value!r}"
        )
        return 3, 10
    if most > MAX_REPLICATIONS:
        problems.append(
            f"replications: at most {MAX_REPLICATIONS:,} replications a trial, got {most:,}; "
            "intervals narrow with the square root of the replications"
        )
        return 3, 10
    return first, most


def _parameters(value: Any, problems: list[str]) -> list[Parameter]:
    if not isinstance(value, Mapping) or not value:
        problems.append(
            f"parameters: expected a mapping of scenario fields to ranges, got {value!r}"
        )
        return []
    out = []
    for path, spec in value.items():
        where = f"parameters.{path}"
        if isinstance(spec, Mapping) and "shape" in spec:
            out.append(_shape(str(path), spec, where, problems))
        else:
            out.append(Parameter(str(path), read_dimension(spec, where, problems)))
    return out


def _shape(path: str, spec: Mapping[str, Any], where: str, problems: list[str]) -> Parameter:
    if spec["shape"] != "expansion":
        problems.append(f"{where}.shape: unknown shape {spec['shape']!r} (expected 'expansion')")
        return Parameter(path)
    parts: dict[str, Dimension] = {}
    for key in spec:
        if key != "shape" and key not in EXPANSION_FIELDS:
            problems.append(
                f"{where}.{key}: unknown field of an expansion "
                f"(expected {', '.join(EXPANSION_FIELDS)})"
            )
    for key in EXPANSION_FIELDS:
        if key not in spec:
            problems.append(
                f"{where}.{key}: missing (an expansion needs {', '.join(EXPANSION_FIELDS)})"
            )
            continue
        dim = read_dimension(spec[key], f"{where}.{key}", problems)
        if isinstance(dim, Choices | str | bool) or dim is None:
            problems.append(f"{where}.{key}: expected a number or a range, got {spec[key]!r}")
            continue
        positive = key in ("step", "every")
        low = dim.low if isinstance(dim, Range) else float(dim)
        if positive and not low > 0:
            problems.append(f"{where}.{key}: must be above 0, got {spec[key]!r}")
        parts[key] = dim
    return Parameter(path, parts=parts)


def _corners(space: Space) -> list[dict[str, Any]]:
    """Return draws at the low and the high end of every dimension (choices: each value)."""
    dims = space.dimensions()
    width = max((len(d.values) for d in dims.values() if isinstance(d, Choices)), default=2)
    out = []
    for i in range(width):
        draw: dict[str, Any] = {}
        for name, d in dims.items():
            if isinstance(d, Choices):
                draw[name] = d.values[i % len(d.values)]
            else:
                end = d.low if i % 2 == 0 else d.high
                draw[name] = int(end) if d.integer else end
        out.append(draw)
    return out


def apply(scenario: Scenario, values: Mapping[str, Any], where: str = "parameters") -> Scenario:
    """Return ``scenario`` with the fields ``values`` (path -> value) set.

    Raises:
        ScenarioError: a field that does not exist or a value the scenario refuses.
    """
    data = copy.deepcopy(scenario.to_dict())
    for path, value in values.items():
        set_path(data, path, value, where)
    return Scenario.from_dict(data)


def _check_fields(space: Space, scenario: Scenario, problems: list[str]) -> None:
    """Build the scenario at every corner of the space (every choice among them), its
    plug-ins too (an unknown policy among the choices, a plug-in's parameter out of range), so
    that what a trial could not run is refused before any run starts."""
    seen: set[str] = set()
    for draw in _corners(space):
        try:
            lines = plugin_problems(apply(scenario, space.values(draw)).to_dict())
        except ScenarioError as exc:
            lines = exc.problems
        for line in lines:
            if line not in seen:
                seen.add(line)
                problems.append(f"parameters: {line} (at {_draw_text(draw)})")


def _draw_text(draw: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in draw.items())
