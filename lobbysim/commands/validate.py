"""``lobbysim validate`` and ``lobbysim plugins``: their text. ``validate`` prints one line per
problem of each scenario file (loaded and checked as a run would:
:mod:`lobbysim.commands.run_scenario`; the policies of its ``compare:`` and ``sweep:`` sections
too), its warnings, the user classes it checks by reference only, and with ``--verbose`` the
fast plan; ``plugins`` lists every registered plug-in with its parameters and what it does, and
points to docs/plugins.md.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lobbysim.commands.run_scenario import check_scenario, scenario_warnings
from lobbysim.players.arrivals import ARRIVALS
from lobbysim.players.latency import LATENCY
from lobbysim.players.retention import RETENTION
from lobbysim.players.visits import VISITS
from lobbysim.policies import POLICIES
from lobbysim.policies.assignment import ASSIGNMENTS
from lobbysim.raters import RATERS
from lobbysim.registry import PluginError, Registry, declared_parameters
from lobbysim.scenario import Scenario, ScenarioError, read_scenario_data
from lobbysim.scenario.loading import load_run_scenario
from lobbysim.scenario.plugin_fields import user_plugins
from lobbysim.scenario.plugins import plugin_problem
from lobbysim.scenario.specs import policy_spec
from lobbysim.sim.components import Components


def validate_warnings(paths: Sequence[str | Path], *, import_plugins: bool = True) -> list[str]:
    """Return the warnings of the given (valid) scenario files, each prefixed by its path
    (without ``import_plugins``, none for a file naming a user class: its warnings need it)."""
    lines = []
    for path in paths:
        scenario = load_run_scenario(path, import_plugins=import_plugins)
        if import_plugins or not user_plugins(scenario.to_dict()):
            lines += [f"{path}: {line}" for line in scenario_warnings(scenario)]
    return lines


def plugins_not_imported(path: str | Path) -> list[str]:
    """Return the user classes a scenario file names (``field 'name'``), which ``validate``
    without ``--import-plugins`` checks by reference only."""
    data = read_scenario_data(path)
    return [f"{field} '{name}'" for field, name in user_plugins(data)]


def section_policy_problems(scenario: Scenario, *, import_plugins: bool = False) -> list[str]:
    """Return the problems of the policies the ``compare:`` and ``sweep:`` sections name (one
    line each): each bundled policy is built with its parameters, so that a typo in one
    (``knowledge_gradient(gama=0.95)``) is found now, not when ``compare`` or ``sweep`` starts;
    a user class is checked by reference only unless ``import_plugins``."""
    named: list[tuple[str, Any]] = []
    if scenario.compare is not None:
        named += [(f"compare.policies[{i}]", p) for i, p in enumerate(scenario.compare.policies)]
    if scenario.sweep is not None:
        named += [(f"sweep.policies[{i}]", p) for i, p in enumerate(scenario.sweep.policies)]
    problems = []
    for where, value in named:
        try:
            spec = policy_spec(value, where)
        except ScenarioError as exc:
            problems.append(str(exc))
            continue
        problem = plugin_problem(POLICIES, spec, where, import_plugins=import_plugins)
        if problem is not None:
            problems.append(problem)
    return problems


def validate(paths: Sequence[str | Path], *, import_plugins: bool = False) -> list[str]:
    """Return one line per problem in the given scenario files (empty: all valid).

    Nothing is run, and without ``import_plugins`` no user class is imported either (importing
    runs the module's code): a ``file.py:Class`` or ``module:Class`` plug-in is checked by
    reference only (:mod:`lobbysim.scenario.references`), and a scenario naming one is not
    built. The bundled plug-ins are known without importing anything, so their parameters are
    checked either way, those of the ``compare:`` and ``sweep:`` sections' policies too
    (:func:`section_policy_problems`). ``import_plugins`` imports and checks the user classes
    as ``run`` does.
    """
    problems = []
    for path in paths:
        try:
            scenario = load_run_scenario(path, import_plugins=import_plugins)
            found = section_policy_problems(scenario, import_plugins=import_plugins)
            try:
                check_scenario(scenario, import_plugins=import_plugins)
            except PluginError as exc:
                found[:0] = str(exc).splitlines()
            if found:
                raise PluginError("\n".join(found))
        except (ScenarioError, PluginError) as exc:
            for text in str(exc).splitlines():
                problems.append(text if text.startswith(str(path)) else f"{path}: {text}")
    return problems


def fast_plan_lines(path: str | Path, *, import_plugins: bool = False) -> list[str]:
    """Return the fast plan of a valid scenario file, one line per kernel: on or off, and why
    (:class:`~lobbysim.sim.fast.plan.FastPlan`); one line saying why not where its user
    plug-ins are not imported."""
    scenario = load_run_scenario(path, import_plugins=import_plugins)
    if not import_plugins and user_plugins(scenario.to_dict()):
        return ["fast plan: not decided (it needs the plug-ins imported: --import-plugins)"]
    plan = Components.build(scenario).plan(scenario)
    return ["fast plan (the speed kernels of a run):", *plan.describe()]


PLUGINS_DOC = "docs/plugins.md"
"""The page on writing plug-ins, which ``lobbysim plugins`` points to."""

PLUGINS_DOC_URL = "https://github.com/lobbysim/lobbysim/blob/main/docs/plugins.md"
"""Where :data:`PLUGINS_DOC` is read online (the project's homepage in pyproject.toml)."""


def plugins_text() -> str:
    """Return every registered plug-in of every family, for humans: per plug-in its name with
    its parameters and their defaults, then on a line of its own what it does (its docstring's
    first line, :func:`description`); last, where writing one's own is documented."""
    lines: list[str] = []
    families: list[tuple[str, Registry[Any]]] = [
        ("arrival models (arrivals)", ARRIVALS),
        ("policies (matchmaker.policy)", POLICIES),
        ("assignment strategies (matchmaker.assignment)", ASSIGNMENTS),
        ("raters (raters.driver, raters.shadows)", RATERS),
        ("visit models (base.visits)", VISITS),
        ("retention models (base.retention)", RETENTION),
        ("latency models (world.latency)", LATENCY),
    ]
    for title, registry in families:
        lines.append(f"{title}:")
        for name, cls in registry:
            parameters = _parameters(cls)
            lines.append(f"  {name}: {parameters}" if parameters else f"  {name}")
            lines.append(f"      {description(cls)}")
    lines.append("game modes (game.mode):")
    lines.append("  1v1, team (game.team_size), ffa (game.ffa_size)")
    lines.append('user classes: "file.py:Class" or "package.module:Class" wherever a name goes')
    lines.append(f"writing one: {PLUGINS_DOC} ({PLUGINS_DOC_URL})")
    return "\n".join(lines)


def description(cls: type) -> str:
    """Return the first line of a plug-in class's own docstring, without reST's double
    backquotes ("" without one)."""
    doc = cls.__dict__.get("__doc__") or ""
    lines = inspect.cleandoc(doc).splitlines()
    return lines[0].strip().replace("``", "") if lines else ""


def _parameters(cls: type) -> str:
    params = []
    for name, f in declared_parameters(cls).items():
        if name.startswith("_"):
            continue
        if f.default is not dataclasses.MISSING:
            params.append(f"{name}={f.default!r}")
        elif f.default_factory is not dataclasses.MISSING:
            params.append(f"{name}={f.default_factory()!r}")
        else:
            params.append(f"{name} (required)")
    return ", ".join(params)
