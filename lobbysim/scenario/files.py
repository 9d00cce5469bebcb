"""A scenario file read: its YAML, and the plug-in files and FlexMatch rule sets it names found
from its folder (:func:`read_scenario_data`), then checked into a scenario (:func:`load_scenario`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lobbysim.scenario.bundled import find_scenario, resolve_plugin_files
from lobbysim.scenario.model import Scenario
from lobbysim.validation import ScenarioError
from lobbysim.yaml_input import YamlInputError, read_yaml_file


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario from a YAML file; every problem names the file."""
    data = read_scenario_data(path)
    try:
        return Scenario.from_dict(data)
    except ScenarioError as exc:
        raise ScenarioError([f"{path}: {problem}" for problem in exc.problems]) from None


def read_scenario_data(path: str | Path) -> dict[str, Any]:
    """Read a scenario file's YAML as plain data (not yet validated).

    ``path`` is a file, or the name of a bundled scenario (``quickstart``) when no such file
    exists (:func:`lobbysim.scenario.bundled.find_scenario`). A plug-in file the scenario names
    that is not found from the current folder is looked up from the scenario file's folder
    (:func:`lobbysim.scenario.bundled.resolve_plugin_files`), and so is a FlexMatch rule set
    (``matchmaker.rules.flexmatch``: :func:`lobbysim.flexmatch.expand.resolve_rule_files`).

    Raises:
        ScenarioError: a bare name that is neither a file nor a bundled scenario; the file cannot
            be read, is too large or not UTF-8, has a YAML syntax error (with its line and
            column), a duplicate key or an alias chain (see :mod:`lobbysim.yaml_input`), holds no
            fields, or is not a mapping.
    """
    file = find_scenario(path)
    path = Path(path)
    try:
        data = read_yaml_file(file)
    except YamlInputError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    if data is None:
        raise ScenarioError(
            f"{path}: the file holds no fields (it is empty or only comments); "
            "write at least one field, e.g. 'name: my_lobby'"
        )
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{path}: expected a mapping of fields at the top level")
    from lobbysim.flexmatch.expand import resolve_rule_files

    return dict(resolve_rule_files(resolve_plugin_files(dict(data), file.parent), file.parent))
