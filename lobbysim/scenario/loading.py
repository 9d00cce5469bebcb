"""A scenario file loaded for a run: read with its ``--set`` overrides, and when it breaks the
schema, every problem of its plug-ins reported with the schema's, at once, one line each (user
classes checked by reference, without importing them, unless asked).

``lobbysim run``, ``compare``, ``sweep``, ``tune``, ``validate`` and the Python API load a
scenario with :func:`load_run_scenario`; the checks that build the lobby itself are the
commands' (:mod:`lobbysim.commands.run_scenario`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lobbysim.players.population import Population
from lobbysim.raters import RATERS
from lobbysim.registry import PluginError
from lobbysim.scenario.files import read_scenario_data
from lobbysim.scenario.model import GameRules, Scenario
from lobbysim.scenario.parse import parse_override, plugin_spec, set_path
from lobbysim.scenario.plugin_fields import plugin_fields, value_at
from lobbysim.scenario.plugins import plugin_problem
from lobbysim.validation import ScenarioError

#: The fields of a FlexMatch rule set's reference (``matchmaker.rules: {flexmatch: FILE,
#: attributes: {NAME: BINDING}}``): a ``--set`` of one applies to the file's data, before the rule
#: set is read, as do the game's fields its teams must agree with (:data:`TEAM_KEYS`); every other
#: ``--set`` applies to the scenario read, defaults and rules included.
REFERENCE_KEYS = ("matchmaker.rules.flexmatch", "matchmaker.rules.attributes")
TEAM_KEYS = ("game.mode", "game.team_size", "game.ffa_size", "game.teams")


def load_run_scenario(
    path: str | Path,
    sets: Sequence[str] = (),
    *,
    values: Mapping[str, Any] | None = None,
    import_plugins: bool = True,
) -> Scenario:
    """Load a scenario file and apply ``--set`` overrides; errors name the file and field.

    ``--set matchmaker.rules.flexmatch=FILE`` (a path from the current folder) runs the scenario
    under another FlexMatch rule set, in place of its own rules, and
    ``matchmaker.rules.attributes.NAME=BINDING`` binds that set's attributes
    (:data:`REFERENCE_KEYS`; with them, ``game.team_size`` and the like apply first too, so that
    the game agrees with the set's teams); other overrides apply to the scenario the file gives,
    so that its defaults and its rules (by name: ``matchmaker.rules.LowPing.limit``, or for a rule
    read from a FlexMatch file in the file's units, ``matchmaker.rules.LowPing.maxLatency``) are
    there to override. ``values`` are more overrides, already read (a sweep's grid cell: ``--grid``
    in errors), applied after ``sets``.

    When the file breaks the schema, the problems of its plug-ins (unknown names, bad
    parameters) are reported with the schema's, so that every problem comes out at once (user
    classes checked without importing them unless ``import_plugins``: :func:`plugin_problems`).
    """
    pairs = [(*parse_override(item), "--set") for item in sets]
    pairs += [(key, value, "--grid") for key, value in (values or {}).items()]
    data = read_scenario_data(path)
    ahead: list[tuple[str, Any, str]] = []
    if any(key_in(key, REFERENCE_KEYS) for key, _, _ in pairs):
        ahead = [pair for pair in pairs if key_in(pair[0], REFERENCE_KEYS + TEAM_KEYS)]
        data = _with_reference(data, ahead)
    where = f"{path} (with --set)" if ahead else str(path)
    scenario = _from_data(data, where, import_plugins)
    rest = [pair for pair in pairs if pair not in ahead]
    if not rest:
        return scenario
    # on the resolved scenario, so that the defaults are there to override
    data = scenario.to_dict()
    for key, value, what in rest:
        set_path(data, key, value, what)
    return _from_data(data, f"{path} (with --set)", import_plugins)


def key_in(key: str, fields: Sequence[str]) -> bool:
    """Whether the field path ``key`` is one of ``fields`` or inside one."""
    key = key.strip()
    return any(key == field or key.startswith(field + ".") for field in fields)


def _with_reference(
    data: Mapping[str, Any], pairs: Sequence[tuple[str, Any, str]]
) -> dict[str, Any]:
    """Return scenario file data with ``pairs`` (overrides of the rule set's reference) applied:
    a scenario with rules of its own (a list) or none gets a reference in their place."""
    out = dict(data)
    mm = out.get("matchmaker")
    mm = dict(mm) if isinstance(mm, Mapping) else {}
    rules = mm.get("rules")
    mm["rules"] = dict(rules) if isinstance(rules, Mapping) else {}
    out["matchmaker"] = mm
    for key, value, what in pairs:
        set_path(out, key, value, what)
    return out


def _from_data(data: Mapping[str, Any], where: str, import_plugins: bool = True) -> Scenario:
    try:
        return Scenario.from_dict(data)
    except ScenarioError as exc:
        problems = exc.problems + plugin_problems(data, import_plugins=import_plugins)
        raise ScenarioError([f"{where}: {problem}" for problem in problems]) from None


def plugin_problems(data: Mapping[str, Any], *, import_plugins: bool = True) -> list[str]:
    """Return the problems of every plug-in named in scenario data (one line each).

    Works on plain data, even when the rest of the scenario is invalid; a plug-in field that is
    missing (its default is valid) or malformed (the schema reports it) is skipped. Without
    ``import_plugins``, a user class is not imported (which would run its module's code): only
    its reference is checked (:func:`lobbysim.scenario.references.reference_problem`).
    """
    problems = []
    # raters get the game's beta2 unless they set their own, as in the lobby (an invalid one is
    # the schema's problem: the default stands in)
    beta2 = value_at(data, "game", "beta2")
    if isinstance(beta2, bool) or not isinstance(beta2, int | float) or not 0 < beta2 < math.inf:
        beta2 = GameRules.beta2
    for registry, field_name, value in plugin_fields(data):
        if value is None:
            continue
        defaults = {"beta2": beta2} if registry is RATERS else None
        try:
            spec = plugin_spec(value, field_name)
        except ScenarioError:
            continue  # malformed: the schema's problem
        problem = plugin_problem(
            registry, spec, field_name, import_plugins=import_plugins, defaults=defaults
        )
        if problem is not None:
            problems.append(problem)
    population = value_at(data, "population")
    if isinstance(population, Mapping):
        try:
            Population.from_params(population)
        except PluginError as exc:
            problems.append(str(exc))
    return problems
