"""A JSON Schema of scenario files, generated from the scenario's model (``lobbysim schema``).

:func:`scenario_schema` walks the sections' type hints as :func:`lobbysim.scenario.parse.build`
reads them: ``float`` is a number, ``int`` an integer, ``bool`` true or false, ``str`` text,
``X | None`` X or null, ``tuple[X, ...]`` a list of X, ``tuple[X, Y]`` a list of two,
``Mapping[str, X]`` a mapping of X, a section (a dataclass) an object without other keys (the
parser rejects unknown fields), and a :class:`~lobbysim.scenario.plugin_spec.PluginSpec` a name
or a mapping with a ``name`` (its other keys are the plug-in's own parameters, checked when the
plug-in is built, so the schema leaves them open). Each property's ``description`` is its entry
in the ``Attributes:`` (or ``Args:``) section of its class's docstring; ``default`` is the
field's default where it is plain data.

What the type hints do not say is wired by explicit tables here, never guessed: the fixed sets of
text values the validation accepts (:data:`ENUMS`, each a module constant that the validation
itself uses), lists that may not be empty (:data:`NON_EMPTY`), fields the validation requires
(:data:`REQUIRED`), and fields whose shape is not their type hint's (:func:`_override`:
``population`` is :class:`~lobbysim.players.population.Population`'s parameters,
``compare.policies``
are policies, ``matchmaker.rules`` may also name a FlexMatch rule set).

The schema is draft 2020-12, written with only keywords that editors still on draft 7 (the YAML
language server behind VS Code's YAML extension) read the same way: a list of two numbers is
``items`` with ``minItems`` and ``maxItems``, never ``prefixItems`` with ``items: false`` (which
draft 7 reads as "no item allowed"); nothing sits beside a ``$ref`` but a description and a
default.

Ranges (``tick > 0``), cross-field rules (a ``team_size`` only in mode ``team``, shares summing
to 1, a rule's attribute of the right type) and a plug-in's own parameters are not in the
schema: ``lobbysim validate`` checks them.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
import types
import typing
from collections.abc import Mapping
from typing import Any

from lobbysim.players.population import PRIOR_KINDS, Population
from lobbysim.records.rows import MODES, RECORD_FORMATS
from lobbysim.scenario.attributes import ATTRIBUTE_TYPES, NUMBER_SOURCES, AttributeConfig
from lobbysim.scenario.file_limits import FILE_PROPERTIES, FileLimit
from lobbysim.scenario.matchmaker import BATCHINGS, MatchmakerConfig
from lobbysim.scenario.model import (
    CompareConfig,
    GameRules,
    RecordsConfig,
    Scenario,
    SweepConfig,
)
from lobbysim.scenario.parties import SKILL_RULES, PartiesConfig
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.scenario.rules import (
    AGGREGATIONS,
    ALGORITHMS,
    CLOCKS,
    RULE_KINDS,
    TEAM_AGGREGATIONS,
    RuleConfig,
)
from lobbysim.scenario.teams import CLOCKS as TEAM_CLOCKS
from lobbysim.scenario.teams import TeamConfig
from lobbysim.scenario.world import HOST_RULES, WorldConfig

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The schema's file name beside the bundled scenarios, which name it in their modeline.
SCHEMA_FILE = "scenario.schema.json"
#: The comment line naming the schema for editors (the YAML language server's modeline).
MODELINE = f"# yaml-language-server: $schema={SCHEMA_FILE}"

#: Text fields restricted to a fixed set of values: (section, field) -> the constant the
#: validation checks them against (the mode's list in ``GameRules`` equals ``records.MODES``).
ENUMS: dict[tuple[type, str], tuple[str, ...]] = {
    (GameRules, "mode"): MODES,
    (MatchmakerConfig, "algorithm"): ALGORITHMS,
    (MatchmakerConfig, "batching"): BATCHINGS,
    (RecordsConfig, "format"): RECORD_FORMATS,
    (WorldConfig, "host"): HOST_RULES,
    (PartiesConfig, "skill"): SKILL_RULES,
    (RuleConfig, "kind"): RULE_KINDS,
    (RuleConfig, "clock"): CLOCKS,
    (TeamConfig, "clock"): TEAM_CLOCKS,
    (RuleConfig, "party"): AGGREGATIONS,
    (RuleConfig, "team"): TEAM_AGGREGATIONS,
    (FileLimit, "property"): FILE_PROPERTIES,
    (AttributeConfig, "type"): ATTRIBUTE_TYPES,
    (AttributeConfig, "source"): NUMBER_SOURCES,
    (Population, "prior"): PRIOR_KINDS,
}

#: Lists the validation refuses when empty: (section, field).
NON_EMPTY: tuple[tuple[type, str], ...] = (
    (MatchmakerConfig, "threshold"),
    (MatchmakerConfig, "max_latency_ms"),
    (MatchmakerConfig, "max_delta_ping_ms"),
    (CompareConfig, "policies"),
    (WorldConfig, "data_centres"),
    (WorldConfig, "regions"),
    (PartiesConfig, "sizes"),
    (PartiesConfig, "parity"),
)

#: Fields with a default that the validation nonetheless requires (a rule needs a name and a
#: kind); fields without a default are required anyway.
REQUIRED: tuple[tuple[type, str], ...] = ((RuleConfig, "name"), (RuleConfig, "kind"))

#: Descriptions of fields whose class docstring has no entry for them (yet): (section, field).
#: A test fails when the docstring gains the entry, so that this table only ever fills a gap.
FALLBACK_DESCRIPTIONS: dict[tuple[type, str], str] = {}

_SECTION_HEADER = re.compile(r"^(\s*)(Attributes|Args):\s*$")
_ENTRY = re.compile(r"^(?P<names>\w+(?:,\s*\w+)*):\s*(?P<text>.*)$")
_ROLE = re.compile(r":(?P<role>[a-z]+):`(?P<short>~?)(?P<target>[^`]+)`")


def scenario_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a scenario file."""
    defs: dict[str, Any] = {}
    top = _section(Scenario, defs)
    schema: dict[str, Any] = {
        "$schema": DIALECT,
        "title": "lobbysim scenario",
        **top,
        "$defs": {name: defs[name] for name in sorted(defs)},
    }
    return schema


def schema_text() -> str:
    """Return :func:`scenario_schema` as the JSON text ``lobbysim schema`` prints (newline-ended),
    which is also the bundled ``scenario.schema.json``."""
    return json.dumps(scenario_schema(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --- docstrings -----------------------------------------------------------------------------------


def plain_text(text: str) -> str:
    """Return docstring text for an editor: reST roles and double back-quotes as plain code."""
    text = _ROLE.sub(_role, text)
    return " ".join(text.replace("``", "`").split())


def _role(match: re.Match[str]) -> str:
    """A reST cross-reference as code: a module by its full name, anything else by its own."""
    target = match.group("target")
    if match.group("role") != "mod" or match.group("short"):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def field_descriptions(cls: type) -> dict[str, str]:
    """Return the description of each field from the ``Attributes:`` (or ``Args:``) section of
    ``cls``'s docstring: ``name: text`` entries (``a, b: text`` describes both), continued on
    more indented lines."""
    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    out: dict[str, str] = {}
    inside: int | None = None  # the header's indentation, inside the section
    names: list[str] = []
    parts: list[str] = []
    entry_indent = 0

    def flush() -> None:
        for name in names:
            out[name] = plain_text(" ".join(parts))

    for line in lines:
        header = _SECTION_HEADER.match(line)
        if header:
            flush()
            inside, names, parts = len(header.group(1)), [], []
            continue
        if inside is None or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= inside:  # the section ended
            flush()
            inside, names, parts = None, [], []
            continue
        entry = _ENTRY.match(line.strip())
        if entry and (not names or indent <= entry_indent):
            flush()
            names = [n.strip() for n in entry.group("names").split(",")]
            parts = [entry.group("text")]
            entry_indent = indent
        else:
            parts.append(line.strip())
    flush()
    return out


def class_description(cls: type) -> str:
    """Return the docstring of ``cls`` before its ``Attributes:`` section, on one line a
    paragraph."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    body = re.split(r"^\s*(?:Attributes|Args):\s*$", doc, maxsplit=1, flags=re.M)[0]
    return "\n\n".join(plain_text(p) for p in body.split("\n\n") if p.strip())


# --- type hints -----------------------------------------------------------------------------------


def _section(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    """Return the schema of the section ``cls`` (a dataclass), adding what it refers to to
    ``defs``."""
    hints = typing.get_type_hints(cls)
    described = field_descriptions(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        prop = _override(cls, f.name, defs)
        if prop is None:
            prop = _type_schema(hints[f.name], defs)
        if (cls, f.name) in ENUMS:
            prop = _with_enum(prop, ENUMS[cls, f.name])
        if (cls, f.name) in NON_EMPTY:
            prop = _non_empty(prop)
        description = described.get(f.name) or FALLBACK_DESCRIPTIONS.get((cls, f.name), "")
        section = _section_class(hints[f.name])
        if section is not None and description.startswith("see "):
            description = class_description(section)  # "game, matchmaker: see their classes"
        entry: dict[str, Any] = {"description": description, **prop}
        default = _default(f)
        required_field = (cls, f.name) in REQUIRED
        if default is not _NO_DEFAULT and not required_field and _accepts_default(entry, default):
            entry["default"] = default
        properties[f.name] = entry
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if no_default or required_field:
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "description": class_description(cls)}
    schema["properties"] = properties
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _ref(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    """Return a reference to the section ``cls``, defining it in ``defs`` on first use."""
    name = cls.__name__
    if name not in defs:
        defs[name] = {}  # a placeholder against recursion
        defs[name] = _section(cls, defs)
    return {"$ref": f"#/$defs/{name}"}


def _plugin(defs: dict[str, Any]) -> dict[str, Any]:
    if "PluginSpec" not in defs:
        defs["PluginSpec"] = {
            "description": "A plug-in: a registered name (`poisson`), a user class "
            "(`package.module:Class` or `path/to/file.py:Class`), or a mapping with its `name` "
            "and the plug-in's own parameters (checked when the plug-in is built).",
            "oneOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "properties": {
                        "name": {
                            "type": "string",
                            "minLength": 1,
                            "description": "the plug-in's registered name or user class",
                        }
                    },
                    "required": ["name"],
                    "additionalProperties": True,
                },
            ],
        }
    return {"$ref": "#/$defs/PluginSpec"}


def _type_schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """Return the schema of a value of type ``hint``, as :func:`~lobbysim.scenario.parse.build`
    accepts it."""
    if hint is Any:
        return {}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1 and len(args) == 2:
            inner = _type_schema(options[0], defs)
            if set(inner) == {"type"} and isinstance(inner["type"], str):
                return {"type": [inner["type"], "null"]}
            return {"anyOf": [inner, {"type": "null"}]}
        raise TypeError(f"no schema for the type {hint!r}")
    if origin is typing.Literal:
        return {"enum": list(args)}
    if hint is PluginSpec:
        return _plugin(defs)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _ref(hint, defs)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0], defs)}
        # Exactly len(args) items. Not "prefixItems" with "items": false, which editors on
        # draft 7 (the YAML language server) read as "no item allowed" (a pair of numbers, as
        # every step schedule is, needs no prefixItems at all).
        items = [_type_schema(a, defs) for a in args]
        size = {"minItems": len(args), "maxItems": len(args)}
        if all(item == items[0] for item in items):
            return {"type": "array", "items": items[0], **size}
        return {"type": "array", "prefixItems": items, **size}
    if origin in (Mapping, dict):
        value = _type_schema(args[1], defs) if args else {}
        return {"type": "object", "additionalProperties": value}
    scalars = {float: "number", int: "integer", bool: "boolean", str: "string"}
    if hint in scalars:
        return {"type": scalars[hint]}
    raise TypeError(f"no schema for the type {hint!r}")


def _override(cls: type, name: str, defs: dict[str, Any]) -> dict[str, Any] | None:
    """Return the schema of a field whose accepted shape is not its type hint's, else None."""
    if (cls, name) == (Scenario, "population"):
        return _ref(Population, defs)  # a Mapping[str, Any] read by Population.from_params
    if (cls, name) == (CompareConfig, "policies"):
        return {"type": "array", "items": _plugin(defs)}  # name(key=value, ...) is a name too
    if (cls, name) == (SweepConfig, "grid"):
        return {"type": "object", "additionalProperties": {"type": "array", "minItems": 1}}
    if (cls, name) == (MatchmakerConfig, "rules"):
        rules = {"type": "array", "items": _ref(RuleConfig, defs)}
        flexmatch = {
            "type": "object",
            "description": "a FlexMatch rule set (lobbysim.flexmatch) read into rules, "
            "attributes and the game's teams",
            "properties": {
                "flexmatch": {
                    "type": "string",
                    "minLength": 1,
                    "description": "the FlexMatch rule set's JSON file (relative to the "
                    "current folder, else to the scenario file's)",
                },
                "attributes": {
                    "type": "object",
                    "description": "the bindings of the player attributes its rules read, by "
                    "name: a number {source: rating|skill, scale, offset} or {source: drawn, "
                    "mean, sd}; a string or string_list {values: {VALUE: share, ...}}",
                    "additionalProperties": _ref(AttributeConfig, defs),
                },
            },
            "required": ["flexmatch"],
            "additionalProperties": False,
        }
        return {"oneOf": [rules, flexmatch, {"type": "null"}]}
    return None


def _section_class(hint: Any) -> type | None:
    """Return the section class of ``hint`` (``X`` or ``X | None``), else None."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    inner = args[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) else hint
    if len(args) <= 1 and dataclasses.is_dataclass(inner) and isinstance(inner, type):
        return None if inner is PluginSpec else inner
    return None


def _with_enum(prop: dict[str, Any], values: tuple[str, ...]) -> dict[str, Any]:
    if prop.get("type") != "string" and "enum" not in prop:
        raise TypeError(f"an enum of a field that is not text: {prop!r}")
    return {"type": "string", "enum": list(values)}


def _non_empty(prop: dict[str, Any]) -> dict[str, Any]:
    """Return ``prop`` with its list (or its nullable list's) at least one item long."""
    if prop.get("type") == "array":
        return {**prop, "minItems": max(1, prop.get("minItems", 0))}
    if "anyOf" in prop:
        return {**prop, "anyOf": [_non_empty(p) for p in prop["anyOf"]]}
    if prop.get("type") == "null":
        return prop
    raise TypeError(f"a non-empty field that is not a list: {prop!r}")


_NO_DEFAULT = object()


def _default(f: dataclasses.Field[Any]) -> Any:
    """Return the field's default as plain data, or ``_NO_DEFAULT`` if it has none or it is not
    plain (a whole section)."""
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return _NO_DEFAULT
    return _plain(value)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NO_DEFAULT
    if isinstance(value, PluginSpec):
        params = {k: _plain(v) for k, v in value.params.items()}
        if any(v is _NO_DEFAULT for v in params.values()):
            return _NO_DEFAULT
        return {"name": value.name, **params} if params else value.name
    if isinstance(value, tuple | list):
        items = [_plain(v) for v in value]
        return _NO_DEFAULT if any(v is _NO_DEFAULT for v in items) else items
    if isinstance(value, Mapping):
        pairs = {str(k): _plain(v) for k, v in value.items()}
        return _NO_DEFAULT if any(v is _NO_DEFAULT for v in pairs.values()) else pairs
    return _NO_DEFAULT


def _accepts_default(prop: dict[str, Any], default: Any) -> bool:
    """Whether a default is one the property accepts: not a rule's ``kind: ""`` (which stands
    for "give one") nor an empty list where one is needed (``world.regions: []``)."""
    if "enum" in prop and default not in prop["enum"]:
        return False
    return not (isinstance(default, list) and len(default) < prop.get("minItems", 0))
