"""A scenario's plug-ins as plain data: every plug-in field of scenario data with its registry
(:func:`plugin_fields`), the user classes among them (:func:`user_plugins`), and the policy specs
the policy registry refuses (:func:`policy_problems`).

All of it works on plain data, even when the rest of the scenario is invalid, so that the
problems of a file's plug-ins can be reported with its schema's; building the plug-ins as a run
does is the engine's (:mod:`lobbysim.sim.components`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lobbysim.players.arrivals import ARRIVALS
from lobbysim.players.latency import LATENCY
from lobbysim.players.retention import RETENTION
from lobbysim.players.visits import VISITS
from lobbysim.policies import POLICIES
from lobbysim.policies.assignment import ASSIGNMENTS
from lobbysim.raters import RATERS
from lobbysim.registry import PluginError, Registry
from lobbysim.scenario.parse import plugin_spec
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.scenario.references import is_user_class
from lobbysim.scenario.specs import spec_label
from lobbysim.validation import ScenarioError


def value_at(data: Mapping[str, Any], *path: str) -> Any:
    """Return the value at ``path`` in nested mappings, or None where it is missing."""
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def plugin_fields(data: Mapping[str, Any]) -> list[tuple[Registry[Any], str, Any]]:
    """Return ``(registry, field, value)`` of every plug-in field of scenario data (the value
    None where the field is missing)."""
    fields: list[tuple[Registry[Any], str, Any]] = [
        (ARRIVALS, "arrivals", value_at(data, "arrivals")),
        (POLICIES, "matchmaker.policy", value_at(data, "matchmaker", "policy")),
        (POLICIES, "matchmaker.status_quo", value_at(data, "matchmaker", "status_quo")),
        (ASSIGNMENTS, "matchmaker.assignment", value_at(data, "matchmaker", "assignment")),
        (RATERS, "raters.driver", value_at(data, "raters", "driver")),
        (VISITS, "base.visits", value_at(data, "base", "visits")),
        (RETENTION, "base.retention", value_at(data, "base", "retention")),
        (LATENCY, "world.latency", value_at(data, "world", "latency")),
    ]
    shadows = value_at(data, "raters", "shadows")
    if isinstance(shadows, list | tuple):
        fields += [(RATERS, f"raters.shadows[{i}]", v) for i, v in enumerate(shadows)]
    return fields


def user_plugins(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return ``(field, name)`` of every user class (``module:Class``, ``file.py:Class``) that
    scenario data names as a plug-in."""
    found = []
    for _, field_name, value in plugin_fields(data):
        try:
            spec = plugin_spec(value, field_name) if value is not None else None
        except ScenarioError:
            continue
        if spec is not None and is_user_class(spec.name):
            found.append((field_name, spec.name))
    return found


def policy_problems(specs: Sequence[PluginSpec], where: str) -> list[str]:
    """Return one line per policy spec the registry refuses: an unknown policy (with a "did
    you mean"), an unknown parameter or a value the policy rejects; a spec with parameters is
    named in its line."""
    problems = []
    for spec in specs:
        try:
            POLICIES.create(spec.name, spec.params)
        except PluginError as exc:
            named = f"{spec_label(spec)}: " if spec.params else ""
            problems.append(f"{where}: {named}{exc}")
    return problems
