"""A scenario from whatever a caller has at hand, with overrides merged onto it.

:func:`as_scenario` takes a YAML file's path, a bundled scenario's name (``"quickstart"``), plain
data (a dict, as :meth:`Scenario.from_dict` reads) or a :class:`Scenario`, and merges overrides
onto it. Overrides are nested mappings (``{"matchmaker": {"tick": 1.0}}``), dotted keys
(``{"matchmaker.tick": 1.0}``), both, or ``key.path=value`` texts (as ``--set`` takes); they are
set on the resolved scenario's plain data with :func:`lobbysim.scenario.parse.set_path`, the
mechanism of ``--set``, and the result is validated again, every problem reported at once.

A nested mapping merges field by field, except that a mapping with a ``name`` different from the
plug-in in place replaces it whole (``{"arrivals": {"name": "cohort", "size": 50}}`` does not
keep the old model's ``rate``); a list replaces a list.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lobbysim.scenario.files import load_scenario
from lobbysim.scenario.model import Scenario
from lobbysim.scenario.parse import apply_overrides, set_path
from lobbysim.validation import ScenarioError

Overrides = Mapping[str, Any] | Sequence[str] | None


def _at(data: Mapping[str, Any], parts: Sequence[str]) -> Any:
    """Return the value at a dotted path of plain data (a plug-in name counts as its mapping)."""
    node: Any = data
    for part in parts:
        if isinstance(node, str):
            node = {"name": node}
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _flatten(
    data: Mapping[str, Any], overrides: Mapping[Any, Any], prefix: str, what: str
) -> list[tuple[str, Any]]:
    """Return ``(dotted key, value)`` pairs of nested overrides, in order (see the module doc)."""
    pairs: list[tuple[str, Any]] = []
    for key, value in overrides.items():
        if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
            raise ScenarioError(f"{what}: expected field names as keys, got {key!r}")
        path = f"{prefix}{key}"
        current = _at(data, path.split("."))
        replaces = (
            isinstance(value, Mapping)
            and "name" in value
            and (not isinstance(current, Mapping | str) or _name(current) != value["name"])
        )
        if isinstance(value, Mapping) and not replaces:
            pairs += _flatten(data, value, f"{path}.", what)
        else:
            pairs.append((path, _plain(value)))
    return pairs


def _name(node: Mapping[str, Any] | str) -> Any:
    return node if isinstance(node, str) else node.get("name")


def _plain(value: Any) -> Any:
    """Return ``value`` with mappings as dicts and tuples as lists, as YAML would give them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def merge_overrides(data: dict[str, Any], overrides: Overrides, what: str = "overrides") -> None:
    """Merge overrides onto scenario data, in place (see the module docstring).

    Raises:
        ScenarioError: a key that is not a field name, a ``key=value`` text without ``=``, or a
            path through a field that is not a section; naming ``what``.
        TypeError: overrides that are neither a mapping nor a list of ``key=value`` texts.
    """
    if overrides is None:
        return
    if isinstance(overrides, Mapping):
        for key, value in _flatten(data, overrides, "", what):
            set_path(data, key, value, what)
        return
    if isinstance(overrides, str) or not all(isinstance(item, str) for item in overrides):
        raise TypeError(
            f"{what}: expected a mapping of fields (nested or dotted keys) or a list of "
            f"'key.path=value' texts, got {overrides!r}"
        )
    apply_overrides(data, list(overrides), what)


def as_scenario(
    value: Any, overrides: Overrides = None, *, what: str = "scenario", source: str | None = None
) -> Scenario:
    """Return the scenario ``value`` names, with ``overrides`` merged onto it.

    Args:
        value: a :class:`Scenario`, a YAML file's path (``str`` or path-like), a bundled
            scenario's name, or plain data (a mapping).
        overrides: see :func:`merge_overrides`.
        what: the argument's name, for messages.
        source: where a :class:`Scenario` came from (a file), for messages.

    Raises:
        TypeError: ``value`` is none of those (naming ``what``).
        ScenarioError: the file or data is not a valid scenario, or the overrides make it
            invalid; one line per problem, naming where it came from.
    """
    if isinstance(value, Scenario):
        scenario, where = value, source or f"{what} {value.name!r}"
    elif isinstance(value, str | os.PathLike):
        scenario, where = load_scenario(Path(value)), str(value)
    elif isinstance(value, Mapping):
        where = f"{what} (a dict)"
        try:
            scenario = Scenario.from_dict(value)
        except ScenarioError as exc:
            raise ScenarioError([f"{where}: {p}" for p in exc.problems]) from None
    else:
        raise TypeError(
            f"{what}: expected a scenario file's path, a bundled scenario's name, a dict or a "
            f"Scenario, got {type(value).__name__}"
        )
    if not overrides:
        return scenario
    data = scenario.to_dict()
    merge_overrides(data, overrides)
    try:
        return Scenario.from_dict(data)
    except ScenarioError as exc:
        raise ScenarioError([f"{where} (with overrides): {p}" for p in exc.problems]) from None
