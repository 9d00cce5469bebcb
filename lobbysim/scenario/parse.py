"""Scenarios from plain data: ``key.path=value`` overrides, type-driven checks.

:func:`build` turns a mapping into a section of the scenario by the section's real type hints
(``float``, ``int``, ``bool``, ``str``, ``X | None``, ``tuple[X, ...]``, ``Mapping[str, X]``, a
nested section, a :class:`~lobbysim.scenario.plugin_spec.PluginSpec`), reporting every problem of
the file at once with its field path. A field whose metadata holds ``expected`` (e.g. the
threshold schedule) reports any malformed value with that description instead of its parts.
:func:`lobbysim.scenario.model.to_data` is the inverse: what it returns, :func:`build` reads back
to an equal scenario. A scenario file is read by :mod:`lobbysim.scenario.files`.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from lobbysim.registry import did_you_mean
from lobbysim.scenario.file_limits import in_rule_units
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.validation import ScenarioError, digit_count, is_number, is_whole
from lobbysim.yaml_input import YamlInputError, load_yaml

_NONE = type(None)


# --- plain data -> scenario -----------------------------------------------------------------------


def build(cls: type, data: Any, path: str) -> Any:
    """Build the section ``cls`` from a mapping, reporting every problem found (not the first)."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{path or 'scenario'}: expected a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    problems: list[str] = []
    failed_scalars = False
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in fields:
            problems.append(f"{where}: unknown field" + did_you_mean(str(key), list(fields)))
            continue
        expected = fields[key].metadata.get("expected")
        try:
            kwargs[key] = _convert(hints[key], value, where)
        except ScenarioError as exc:
            found = exc.problems
            if expected is not None:
                found = [f"{where}: expected {expected}, got {value!r}"]
            problems.extend(found)
            failed_scalars = failed_scalars or not _is_section(hints[key])
    # Range and cross-field checks run too, unless a plain field of this level failed (its
    # default would stand in and could give a misleading complaint).
    if not failed_scalars:
        try:
            built = cls(**kwargs)
        except ScenarioError as exc:
            problems.extend(exc.problems)
        except (TypeError, ValueError) as exc:
            problems.append(f"{path or 'scenario'}: {exc}")
        else:
            if not problems:
                return built
    raise ScenarioError(problems)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _optional(hint: Any) -> Any:
    """Return X for ``X | None``, else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not _NONE]
        if len(args) == 1 and len(typing.get_args(hint)) == 2:
            return args[0]
    return None


def _is_section(hint: Any) -> bool:
    inner = _optional(hint) or hint
    return dataclasses.is_dataclass(inner) and inner is not PluginSpec


def plugin_spec(value: Any, where: str) -> PluginSpec:
    """Return the plug-in named by ``value`` (a name or a mapping with ``name``)."""
    if isinstance(value, str):
        return PluginSpec(value)
    if isinstance(value, Mapping):
        if "name" not in value:
            raise ScenarioError(f"{where}: a plug-in needs a 'name'")
        params = {k: v for k, v in value.items() if k != "name"}
        return PluginSpec(str(value["name"]), params)
    raise ScenarioError(f"{where}: expected a plug-in name or a mapping with 'name', got {value!r}")


_SCALARS: dict[Any, tuple[Any, str]] = {
    float: (is_number, "a number"),
    int: (is_whole, "a whole number"),
    bool: (lambda v: isinstance(v, bool), "true or false"),
    str: (lambda v: isinstance(v, str), "text"),
}


def _convert(hint: Any, value: Any, where: str) -> Any:
    """Return ``value`` converted to the type ``hint``, or raise ScenarioError naming ``where``."""
    if hint is Any:
        return value
    inner = _optional(hint)
    if inner is not None:
        return None if value is None else _convert(inner, value, where)
    if hint is PluginSpec:
        return plugin_spec(value, where)
    if dataclasses.is_dataclass(hint):
        return build(hint, value, where)  # type: ignore[arg-type]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ScenarioError(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ScenarioError(f"{where}: expected {len(args)} values, got {value!r}")
        return tuple(
            _convert(a, v, f"{where}[{i}]")
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if origin in (Mapping, dict):
        if not isinstance(value, Mapping):
            raise ScenarioError(f"{where}: expected a mapping, got {value!r}")
        value_hint = args[1] if args else Any
        return {str(k): _convert(value_hint, v, f"{where}.{k}") for k, v in value.items()}
    accepts, noun = _SCALARS[hint]
    if not accepts(value):
        raise ScenarioError(f"{where}: expected {noun}, got {value!r}")
    if hint is not float:
        return value
    try:
        return float(value)
    except OverflowError:  # an integer of over 308 digits
        raise ScenarioError(
            f"{where}: the number of about {digit_count(value):,} digits is too large (the "
            "largest is about 1.8e308)"
        ) from None


# --- overrides --------------------------------------------------------


def apply_overrides(data: dict[str, Any], items: Sequence[str], what: str = "--set") -> None:
    """Apply ``key.path=value`` overrides (values read as YAML) to scenario data, in place."""
    for item in items:
        set_path(data, *parse_override(item, what), what)


def parse_override(item: str, what: str = "--set") -> tuple[str, Any]:
    """Return the field path and the value (read as YAML) of a ``key.path=value`` override."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ScenarioError(f"{what}: expected key.path=value, got {item!r}")
    try:
        return key, load_yaml(raw)
    except YamlInputError as exc:
        raise ScenarioError(f"{what} {key}: cannot read the value {raw!r}: {exc}") from None


def set_path(data: dict[str, Any], key: str, value: Any, what: str) -> None:
    """Set the field ``key`` (a dotted path) of scenario data to ``value``, in place.

    A plug-in given by name is expanded to a mapping on the way, so ``arrivals.rate`` works on
    ``arrivals: poisson``. In a list of named mappings (a rule set), a part names the element:
    ``matchmaker.rules.LowPing.limit``; a rule read from a FlexMatch file also takes its limit
    in the file's units, ``matchmaker.rules.LowPing.maxLatency``
    (:func:`lobbysim.scenario.file_limits.in_rule_units`). ``what`` names the option in the
    error (e.g. ``--set``).
    """
    key, value = in_rule_units(data, key, value, what)
    parts = key.split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            node = _named(node, part, key, ".".join(parts[:i]), what)
            continue
        child = node.get(part)
        if isinstance(child, str):  # a plug-in given by name: expand to a mapping
            child = {"name": child}
        elif child is None:
            child = {}
        elif not isinstance(child, dict | list):
            where = ".".join(parts[: i + 1])
            raise ScenarioError(f"{what} {key}: {where} is {child!r}, not a section")
        node[part] = child
        node = child
    if isinstance(node, list):
        element = _named(node, parts[-1], key, ".".join(parts[:-1]), what)
        node[node.index(element)] = value
        return
    node[parts[-1]] = value


def _named(items: list[Any], name: str, key: str, where: str, what: str) -> dict[str, Any]:
    """Return the element of a list of named mappings called ``name``."""
    for item in items:
        if isinstance(item, dict) and item.get("name") == name:
            return item
    names = [str(item.get("name")) for item in items if isinstance(item, dict) and "name" in item]
    if not names:
        raise ScenarioError(f"{what} {key}: {where} is a list, not a section")
    raise ScenarioError(
        f"{what} {key}: {where} has no element named {name!r} (it has {', '.join(names)})"
    )
