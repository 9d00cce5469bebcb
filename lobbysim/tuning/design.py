"""A study's starting design: the scenario's own setting, then settings that fill the space.

A search that starts from independent random draws spends a small budget on settings that may
sit side by side; the design spreads them instead (:mod:`lobbysim.tuning.study` races it):

* the design's ``n`` settings are a Latin hypercube (:class:`scipy.stats.qmc.LatinHypercube`,
  seeded by the study's seed): each dimension's range, cut into ``n`` equal slices, has one draw
  in each slice (a level or a choice is the slice of [0, 1) it covers, a stepped or whole range
  its nearest allowed value), so every level of every dimension is tried about equally;
* a space whose every dimension has finitely many values (choices, levels, whole numbers,
  stepped ranges) and at most :data:`MAX_ENUMERATED` settings is also enumerated: after the
  design's settings, the others follow farthest-first (each next the one farthest from those
  before it: ranks scaled to [0, 1] on ordered dimensions, 0 or 1 between two choices; ties
  broken by the study's seed), the order in which a study with budget left tries them.

Either way the scenario's own (shipped) setting comes first where the space allows it, so the
answer can always be measured against it on equal terms, and no setting appears twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.tuning.dimensions import Choices, Range
from lobbysim.tuning.space import Space, apply

#: The most settings a finite space may have to be enumerated (and ordered farthest-first).
MAX_ENUMERATED = 4096


def setting_key(drawn: Mapping[str, Any]) -> str:
    """Return a setting's identity (its draws, as JSON with sorted names)."""
    return json.dumps(drawn, sort_keys=True, default=repr)


def shipped_draw(scenario: Scenario, space: Space) -> dict[str, Any] | None:
    """Return the draw that gives the scenario's own setting, or None when the space cannot
    (a value outside a range, not among the choices, or a shape's schedule)."""
    data = scenario.to_dict()
    drawn: dict[str, Any] = {}
    for p in space.parameters:
        if not p.names():
            continue
        found, value = _lookup(data, p.path)
        if p.shape:
            parts = _expansion_parts(value) if found else None
            if parts is None:
                return None
            for key, dim in p.parts.items():
                if isinstance(dim, Range):
                    if not dim.low <= parts[key] <= dim.high:
                        return None
                    drawn[f"{p.path}.{key}"] = parts[key]
                elif not _same(dim, parts[key]):
                    return None
            continue
        dim = p.dimension
        if not found:
            return None
        if isinstance(dim, Choices):
            matches = [v for v in dim.values if _same(v, value)]
            if not matches:
                return None
            drawn[p.path] = matches[0]
        elif isinstance(dim, Range):
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            options = dim.values()
            if options is not None:
                near = [v for v in options if math.isclose(v, value, rel_tol=1e-9, abs_tol=1e-12)]
                if not near:
                    return None
                drawn[p.path] = near[0]
            elif dim.low <= value <= dim.high:
                drawn[p.path] = int(value) if dim.integer else float(value)
            else:
                return None
    try:
        if apply(scenario, space.values(drawn)) != scenario:
            return None
    except (ScenarioError, KeyError):
        return None
    return drawn


def _expansion_parts(value: Any) -> dict[str, float] | None:
    """Return the ``start``, ``step``, ``every`` and ``limit`` that write a schedule of
    ``[minutes waited, value]`` steps (:func:`lobbysim.tuning.space.expansion` checks them),
    or None for a schedule of one step or one that is not a list of pairs."""
    try:
        steps = [(float(t), float(v)) for t, v in value]
    except (TypeError, ValueError):
        return None
    if len(steps) < 2:
        return None
    return {
        "start": steps[0][1],
        "step": round(abs(steps[1][1] - steps[0][1]), 6),
        "every": round(steps[1][0] - steps[0][0], 6),
        "limit": steps[-1][1],
    }


def _lookup(data: Any, path: str) -> tuple[bool, Any]:
    for part in path.split("."):
        if not isinstance(data, Mapping) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _same(a: Any, b: Any) -> bool:
    """Whether two values are the same setting (numbers by value, lists item by item)."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


def design(
    scenario: Scenario, space: Space, size: int, rng: np.random.Generator
) -> tuple[list[dict[str, Any]], bool]:
    """Return the design's first ``size`` settings (fewer where the space has fewer), the
    scenario's own first where the space allows it, and whether they are every setting the
    space allows (an enumeration tried whole)."""
    shipped = shipped_draw(scenario, space)
    settings = space.settings(MAX_ENUMERATED)
    start = [shipped] if shipped is not None else []
    drawn = start + latin_hypercube(space, max(0, size - len(start)), rng)
    if settings is not None:  # the hypercube's settings first, then the rest farthest-first
        ordered = farthest_first(space, settings, drawn, rng)
        return ordered[:size], size >= len(ordered)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for d in drawn:
        key = setting_key(d)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out[:size], False


def _coordinates(space: Space, drawn: Mapping[str, Any]) -> list[tuple[bool, float]]:
    """Return a setting's position per dimension: (categorical, value), ordered values scaled
    to [0, 1], a choice by its index."""
    out = []
    for name, dim in space.dimensions().items():
        value = drawn[name]
        if isinstance(dim, Choices):
            index = next(i for i, v in enumerate(dim.values) if _same(v, value))
            if dim.ordered:
                out.append((False, index / max(1, len(dim.values) - 1)))
            else:
                out.append((True, float(index)))
        elif dim.log:
            out.append((False, math.log(value / dim.low) / math.log(dim.high / dim.low)))
        else:
            out.append((False, (value - dim.low) / (dim.high - dim.low)))
    return out


def _distance(a: Sequence[tuple[bool, float]], b: Sequence[tuple[bool, float]]) -> float:
    total = 0.0
    for (categorical, x), (_, y) in zip(a, b, strict=True):
        total += (0.0 if x == y else 1.0) if categorical else (x - y) ** 2
    return math.sqrt(total)


def farthest_first(
    space: Space,
    settings: Sequence[dict[str, Any]],
    start: Sequence[dict[str, Any]],
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Return every setting once, ``start`` first, each next the farthest from those before it
    (the least distance to any of them the largest; ties broken at random by ``rng``)."""
    points = [_coordinates(space, s) for s in settings]
    keys = [setting_key(s) for s in settings]
    chosen: list[int] = []
    for s in start:
        key = setting_key(s)
        if key in keys and keys.index(key) not in chosen:
            chosen.append(keys.index(key))
    if not chosen:
        chosen.append(int(rng.integers(len(settings))))
    nearest = np.full(len(settings), np.inf)
    for i in chosen:
        nearest = np.minimum(nearest, [_distance(points[i], q) for q in points])
    while len(chosen) < len(settings):
        left = [i for i in range(len(settings)) if i not in set(chosen)]
        far = max(nearest[i] for i in left)
        ties = [i for i in left if nearest[i] >= far - 1e-12]
        pick = ties[int(rng.integers(len(ties)))]
        chosen.append(pick)
        nearest = np.minimum(nearest, [_distance(points[pick], q) for q in points])
    return [dict(settings[i]) for i in chosen]


def latin_hypercube(space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Return ``n`` draws of a Latin hypercube over the space's dimensions (a stepped or whole
    range to its nearest allowed value, a choice by its slice of [0, 1))."""
    if n <= 0:
        return []
    from scipy.stats import qmc

    dims = space.dimensions()
    # seed= (not rng=, which SciPy 1.15 added): a Generator is used as it is either way
    unit = qmc.LatinHypercube(d=len(dims), seed=rng).random(n)
    out = []
    for row in unit:
        drawn: dict[str, Any] = {}
        for u, (name, dim) in zip(row, dims.items(), strict=True):
            if isinstance(dim, Choices):
                drawn[name] = dim.values[min(len(dim.values) - 1, int(u * len(dim.values)))]
                continue
            options = dim.values()
            if options is not None:
                drawn[name] = options[min(len(options) - 1, int(u * len(options)))]
            else:
                span = dim.high - dim.low
                x = dim.low * (dim.high / dim.low) ** u if dim.log else dim.low + u * span
                drawn[name] = min(dim.high, max(dim.low, float(f"{x:.4g}")))
        out.append(drawn)
    return out


def neighbours(space: Space, drawn: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """Return the settings one step from ``drawn`` on one dimension (the next level or
    allowed value on each side of an ordered one; every other choice of an unordered one), in
    the space's order of dimensions; None where a dimension is continuous."""
    out = []
    for name, dim in space.dimensions().items():
        ordered = not isinstance(dim, Choices) or dim.ordered
        options = dim.values if isinstance(dim, Choices) else dim.values()
        if options is None:
            return None
        index = next((i for i, v in enumerate(options) if _same(v, drawn[name])), None)
        if index is None:
            continue
        near = [index - 1, index + 1] if ordered else range(len(options))
        for j in near:
            if 0 <= j < len(options) and j != index:
                out.append({**drawn, name: options[j]})
    return out
