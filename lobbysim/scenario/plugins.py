"""A scenario's plug-ins built from their specs: one plug-in, naming its scenario field in any
error (:func:`build_plugin`), the raters with the game's ``beta2`` (:func:`build_raters`), and
the check of one plug-in before a run, importing a user class or only looking at its reference
(:func:`plugin_problem`).

The lobby's :class:`~lobbysim.sim.components.Components` builds every plug-in of a run with these,
and the checks of a scenario file (:mod:`lobbysim.scenario.loading`) build them the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lobbysim.raters import RATERS, Rater
from lobbysim.registry import PluginError, declared_parameters
from lobbysim.scenario.model import Scenario
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.scenario.references import is_user_class, reference_problem


def build_plugin(
    registry: Any,
    spec: PluginSpec,
    field_name: str,
    defaults: Mapping[str, Any] | None = None,
) -> Any:
    """Instantiate a plug-in, naming the scenario field in any error.

    Args:
        registry: the plug-in family's registry.
        spec: the plug-in's name and parameters.
        field_name: the scenario field, for messages.
        defaults: values for parameters that ``spec`` does not set, each given only to a class
            that declares that parameter (the lobby gives its raters the game's ``beta2``).
    """
    try:
        params = dict(spec.params)
        if defaults:
            declared = declared_parameters(registry.get(spec.name))
            params = {**{k: v for k, v in defaults.items() if k in declared}, **params}
        return registry.create(spec.name, params)
    except PluginError as exc:
        raise PluginError(f"{field_name}: {exc}") from None


def plugin_problem(
    registry: Any,
    spec: PluginSpec,
    field_name: str,
    *,
    import_plugins: bool,
    defaults: Mapping[str, Any] | None = None,
) -> str | None:
    """Return what is wrong with one plug-in of a scenario, in one line naming its field, or None.

    A bundled plug-in is built with its parameters (:func:`build_plugin`), so a typo in one is
    found before a run. A user class (``file.py:Class``, ``module:Class``) is built only with
    ``import_plugins`` (importing runs its module's code); otherwise only its reference is
    checked (:func:`lobbysim.scenario.references.reference_problem`).
    """
    if not import_plugins and is_user_class(spec.name):
        problem = reference_problem(spec.name)
        return None if problem is None else f"{field_name}: {problem}"
    try:
        build_plugin(registry, spec, field_name, defaults)
    except PluginError as exc:
        return str(exc)
    return None


def build_raters(scenario: Scenario) -> list[Rater]:
    """Return the driving rater then the shadow raters of ``scenario``, each built.

    A rater that declares ``beta2`` assumes the game's true one unless its spec sets its own (a
    deliberate model mismatch).
    """
    defaults = {"beta2": scenario.game.beta2}
    driver = build_plugin(RATERS, scenario.raters.driver, "raters.driver", defaults)
    shadows = [
        build_plugin(RATERS, spec, f"raters.shadows[{i}]", defaults)
        for i, spec in enumerate(scenario.raters.shadows)
    ]
    return [driver, *shadows]
