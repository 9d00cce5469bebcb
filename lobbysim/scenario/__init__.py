"""The scenario: a typed, immutable description of one simulated lobby, and its plain-data forms.

:mod:`lobbysim.scenario.model` holds the scenario and its sections (every field has a default,
each section checks its own ranges), the matchmaker's in :mod:`lobbysim.scenario.matchmaker`;
:mod:`lobbysim.scenario.parse` reads them from YAML files, plain data and
``key.path=value`` overrides by their type hints, and writes them back as plain data;
:mod:`lobbysim.scenario.bundled` finds the scenarios shipped with the package by name.
"""

from lobbysim.scenario.bundled import bundled_scenarios, find_scenario
from lobbysim.scenario.files import load_scenario, read_scenario_data
from lobbysim.scenario.matchmaker import MatchmakerConfig
from lobbysim.scenario.model import (
    MAX_HORIZON,
    MAX_NAME,
    MAX_RATING_SAMPLES,
    MAX_TICKS,
    BaseConfig,
    CompareConfig,
    GameRules,
    RatersConfig,
    RecordsConfig,
    Scenario,
    SweepConfig,
    folder_label,
    name_problem,
    to_data,
)
from lobbysim.scenario.parse import apply_overrides, plugin_spec, set_path
from lobbysim.scenario.parties import PartiesConfig
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.scenario.world import RegionConfig, WorldConfig
from lobbysim.validation import MAX_REPLICATIONS, ScenarioError, replications_problem

__all__ = [
    "MAX_HORIZON",
    "MAX_NAME",
    "MAX_RATING_SAMPLES",
    "MAX_REPLICATIONS",
    "MAX_TICKS",
    "BaseConfig",
    "CompareConfig",
    "GameRules",
    "MatchmakerConfig",
    "PartiesConfig",
    "PluginSpec",
    "RatersConfig",
    "RecordsConfig",
    "RegionConfig",
    "Scenario",
    "ScenarioError",
    "SweepConfig",
    "WorldConfig",
    "apply_overrides",
    "bundled_scenarios",
    "find_scenario",
    "folder_label",
    "load_scenario",
    "name_problem",
    "plugin_spec",
    "read_scenario_data",
    "replications_problem",
    "set_path",
    "to_data",
]
