"""A FlexMatch rule set read into lobbysim's scenario data (FlexMatch -> lobbysim).

:func:`~lobbysim.flexmatch.json_text.load_json` reads the JSON file (bounded, strict);
:func:`read_flexmatch` reads the rule
set's sections (the player attributes, the teams, the algorithm, the rules through
:class:`lobbysim.flexmatch.rules.RuleReader`, the expansions) and binds its attributes
with the mapping, into a :class:`FlexMatchImport`. The module docstring of
:mod:`lobbysim.flexmatch` has the mapping and what is not supported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lobbysim.flexmatch.json_text import load_json
from lobbysim.flexmatch.rules import (
    LIMIT_PROPERTY,
    MAX_COUNT,
    SMALL_MATCH,
    quoted,
)
from lobbysim.flexmatch.teams import TeamsReader
from lobbysim.registry import did_you_mean
from lobbysim.scenario.attributes import RATING, AttributeConfig
from lobbysim.scenario.rules import limit_is_minimum
from lobbysim.validation import ScenarioError

_TOP = (
    "name",
    "ruleLanguageVersion",
    "playerAttributes",
    "algorithm",
    "teams",
    "rules",
    "expansions",
)
_ALGORITHM = (
    "strategy",
    "batchingPreference",
    "sortByAttributes",
    "expansionAgeSelection",
    "backfillPriority",
    "balancedAttribute",
)
_TYPES = ("number", "string", "string_list", "string_number_map")
_BINDING_EXAMPLE = {
    "number": "{source: rating, scale: 100, offset: 1500}",
    "string": "{values: {a: 0.5, b: 0.5}}",
    "string_list": "{values: {a: 0.6, b: 0.4}}",
    "string_number_map": "{values: {KEY: mean, ...}, sd: 10}",
}
_TARGET = re.compile(r"(?P<where>rules|teams)\[(?P<name>[^\]]+)\]\.(?P<prop>\w+)")


@dataclass(frozen=True)
class FlexMatchImport:
    """A FlexMatch rule set as lobbysim reads it (plain scenario data).

    Attributes:
        source: the file (or label) it was read from, as errors name it.
        name: the rule set's ``name`` (a label), if any.
        game: the ``game`` fields its teams give: ``mode`` and ``team_size`` or ``ffa_size``,
            or ``teams`` (ranges, uneven teams, more than two, expansions of a minimum).
        rules: the ``matchmaker.rules`` list, each rule as plain data.
        attributes: the bound attributes, by name, as plain ``attributes`` data.
        unbound: the attributes a rule reads that the mapping does not bind, by name, with
            their type (only when read without a mapping, e.g. ``lobbysim rules show``).
        algorithm: the ``matchmaker.algorithm``: ``flexmatch``, FlexMatch's builder.
        batching: the ``matchmaker.batching``: ``fastest_region``, ``largest_population``
            (the ``balanced`` strategy's default) or ``sorted`` for a ``batchingPreference``
            of ``fastestRegion``, ``largestPopulation`` or ``sorted``; ``none`` for
            ``random``.
        batch_sort: the ``matchmaker.batch_sort``: the ``balancedAttribute`` with
            ``largest_population``, the ``sortByAttributes`` with ``sorted``.
        clock: every rule's clock (``algorithm.expansionAgeSelection``).
        declared: every declared player attribute, by name, with its type (one no rule reads
            and the mapping does not bind is left out of :attr:`attributes`).
        split_expansions: the objects of ``expansions`` that wrote several expansions into
            one (``target`` and ``steps`` given k times, alternately), each as its index in
            the file's list and k; they were read as k expansions in the order written
            (:mod:`lobbysim.flexmatch.json_text`), and ``lobbysim rules show`` notes them.
        notes: what the reading notes without refusing, one line each, naming the JSON path
            (``lobbysim rules show`` prints them).
    """

    source: str
    name: str | None
    game: dict[str, Any]
    rules: tuple[dict[str, Any], ...]
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    unbound: dict[str, str] = field(default_factory=dict)
    algorithm: str = "flexmatch"
    batching: str = "none"
    batch_sort: tuple[str, ...] = ()
    clock: str = "newest"
    declared: dict[str, str] = field(default_factory=dict)
    split_expansions: tuple[tuple[int, int], ...] = ()
    notes: tuple[str, ...] = ()

    def fragment(self) -> dict[str, Any]:
        """Return the scenario data the rule set gives: ``matchmaker.rules`` and
        ``algorithm`` (and ``batching`` if not ``none``), ``game`` and (when any)
        ``attributes``."""
        data: dict[str, Any] = {
            "matchmaker": {"rules": [dict(r) for r in self.rules], "algorithm": self.algorithm},
            "game": dict(self.game),
        }
        if self.batching != "none":
            data["matchmaker"]["batching"] = self.batching
        if self.batch_sort:
            data["matchmaker"]["batch_sort"] = list(self.batch_sort)
        if self.attributes:
            data["attributes"] = {k: dict(v) for k, v in self.attributes.items()}
        return data


# --- FlexMatch -> lobbysim ------------------------------------------------------------------------


class _Reader(TeamsReader):
    """Reads one rule set, collecting every problem (each naming its JSON path)."""

    # --- sections --------------------------------------------------------------------------

    def read(self) -> None:
        data = self.data
        self.keys(data, _TOP, "", "a FlexMatch rule set")
        version = data.get("ruleLanguageVersion")
        if version != "1.0":
            self.problem(
                f"ruleLanguageVersion: lobbysim reads FlexMatch rule language 1.0, got "
                f"{quoted(version) if 'ruleLanguageVersion' in data else 'none'}"
            )
        self.read_attributes(data.get("playerAttributes", []))
        self.read_teams(data.get("teams"))
        self.read_algorithm(data.get("algorithm", {}))
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            self.problem(f"rules: expected a list of rules, got {quoted(rules)}")
            rules = []
        for i, raw in enumerate(rules):
            self.rules.append(self.read_rule(i, raw))
            self.rules += self.pending  # a second rule the FlexMatch rule reads into
            self.pending = []
        names = [r.get("name") for r in rules if isinstance(r, Mapping)]
        for i, name in enumerate(names):
            if name is not None and names.index(name) != i:
                self.problem(f"rules[{i}].name: {name!r} names two rules")
        self.read_expansions(data.get("expansions", []))

    def read_attributes(self, attributes: Any) -> None:
        if not isinstance(attributes, list):
            self.problem(f"playerAttributes: expected a list, got {quoted(attributes)}")
            return
        for i, raw in enumerate(attributes):
            where = f"playerAttributes[{i}]"
            if not isinstance(raw, Mapping):
                self.problem(f"{where}: expected an object, got {quoted(raw)}")
                continue
            self.keys(raw, ("name", "type", "default"), where, "a player attribute")
            name, kind = raw.get("name"), raw.get("type")
            if not isinstance(name, str) or not name:
                self.problem(f"{where}.name: expected a name, got {quoted(name)}")
                continue
            if name in self.declared:
                self.problem(f"{where}.name: {name!r} is declared twice")
                continue
            if kind not in _TYPES:
                self.problem(
                    f"{where}.type: expected one of {', '.join(_TYPES)}, got {quoted(kind)}"
                    + did_you_mean(str(kind), list(_TYPES))
                )
                continue
            if kind == "number" and "default" in raw:
                self.number(raw["default"], f"{where}.default")
            self.declared[name] = (i, kind)

    def units(self, rule: Mapping[str, Any]) -> tuple[str | None, float]:
        """Return the FlexMatch property a rule's limit comes from and the factor from its
        value to lobbysim's limit (None: no property; the second rule of two, ``NAME.max`` or
        ``NAME.min``, has ``maxCount`` or ``minDistance``)."""
        name = str(rule["name"])
        if name.endswith(".max") and name[:-4] in self.read_as:
            return MAX_COUNT
        if name.endswith(".min") and (name[:-4], "minDistance") in self.aliases:
            return ("minDistance", 1.0)
        own = LIMIT_PROPERTY.get(rule["kind"], (None, 1.0))
        if rule.get("op") == "<=" and rule["kind"] != "compare":
            own = MAX_COUNT  # a maximum count
        return self.limit_property.get(name, own)

    def read_algorithm(self, algorithm: Any) -> None:
        self.clock = "newest"
        if not isinstance(algorithm, Mapping):
            self.problem(f"algorithm: expected an object, got {quoted(algorithm)}")
            return
        self.keys(algorithm, _ALGORITHM, "algorithm", "a FlexMatch algorithm")
        age = algorithm.get("expansionAgeSelection", "newest")
        if age in ("newest", "oldest"):
            self.clock = age
        else:
            self.problem(
                f"algorithm.expansionAgeSelection: expected newest or oldest, got {quoted(age)}"
            )
        strategy = algorithm.get("strategy", "exhaustiveSearch")
        large = self.players > SMALL_MATCH
        if strategy == "balanced":
            # with two teams, FlexMatch spreads the players to even out balancedAttribute;
            # lobbysim's split evens out the teams' driving-rater means (the same thing when
            # the attribute is bound to the rating)
            self.balanced = True
            if self.game and not large:
                self.notes.append(
                    f"algorithm.strategy: FlexMatch documents 'balanced' for matches of 41 to 200 "
                    f"players; this one has at most {self.players}: read as FlexMatch's builder "
                    "(lobbysim's split balances the teams either way)"
                )
            attribute = algorithm.get("balancedAttribute")
            if attribute not in self.declared or self.declared[attribute][1] != "number":
                self.problem(
                    "algorithm.balancedAttribute: the balanced strategy needs a declared number "
                    f"attribute, got {quoted(attribute)}"
                )
        elif strategy == "exhaustiveSearch":
            if large:
                self.problem(
                    f"algorithm.strategy: a FlexMatch match of more than {SMALL_MATCH} players "
                    f"({self.players}) needs strategy 'balanced', got 'exhaustiveSearch'"
                )
            if "balancedAttribute" in algorithm:
                self.problem("algorithm.balancedAttribute: only for strategy 'balanced'")
        else:
            self.problem(
                f"algorithm.strategy: expected exhaustiveSearch or balanced, got {quoted(strategy)}"
            )
        default = "largestPopulation" if strategy == "balanced" else "random"
        batching = algorithm.get("batchingPreference", default)
        attribute = algorithm.get("balancedAttribute")
        if batching == "fastestRegion":  # FlexMatch's builder batches by the fastest region
            self.batching = "fastest_region"
        elif batching == "largestPopulation" and strategy == "balanced":
            # the pool sorted on the balancing attribute before it is cut into batches
            self.batching = "largest_population"
            if isinstance(attribute, str):
                self.batch_sort = (attribute,)
        elif batching == "sorted":
            self.batching = "sorted"
        elif batching != "random":
            self.problem(
                "algorithm.batchingPreference: expected "
                + (
                    "random, sorted or fastestRegion"
                    if strategy != "balanced"
                    else "largestPopulation, sorted, random or fastestRegion"
                )
                + f", got {quoted(batching)}"
                + (
                    " (largestPopulation is the balanced strategy's)"
                    if batching == "largestPopulation"
                    else ""
                )
            )
        self.read_sort_attributes(algorithm.get("sortByAttributes"), batching)
        backfill = algorithm.get("backfillPriority", "normal")
        if backfill != "normal":
            self.problem(
                f"algorithm.backfillPriority: {quoted(backfill)} is not supported by lobbysim "
                "(only 'normal': lobbysim back-fills seats by game.backfill)"
            )

    def read_sort_attributes(self, names: Any, batching: Any) -> None:
        """Read ``algorithm.sortByAttributes``: the declared number or string attributes a
        ``sorted`` batching sorts the pool on (each later one breaking the earlier's ties)."""
        where = "algorithm.sortByAttributes"
        if batching != "sorted":
            if names not in (None, []):
                self.problem(f"{where}: only with batchingPreference 'sorted'")
            return
        if not isinstance(names, list) or not names:
            self.problem(
                f"{where}: batchingPreference 'sorted' needs a non-empty list of declared "
                f"attributes, got {quoted(names)}"
            )
            return
        out = []
        for k, name in enumerate(names):
            kind = self.declared.get(name, (0, None))[1] if isinstance(name, str) else None
            if kind not in ("number", "string"):
                self.problem(
                    f"{where}[{k}]: expected a declared number or string attribute, got "
                    f"{quoted(name)}" + (f" (a {kind})" if kind is not None else "")
                )
                continue
            out.append(name)
        self.batch_sort = tuple(out)

    # --- expansions ------------------------------------------------------------------------

    def read_expansions(self, expansions: Any) -> None:
        from lobbysim.flexmatch.json_text import SplitExpansion

        #: the objects that wrote several expansions into one: their index in the file's
        #: expansions list, and how many (each read as an expansion of its own)
        self.split: dict[int, int] = {}
        if not isinstance(expansions, list):
            self.problem(f"expansions: expected a list, got {quoted(expansions)}")
            return
        by_name = {r["name"]: r for r in self.rules if r is not None}
        names = [r.get("name") for r in self.data.get("rules", []) if isinstance(r, Mapping)]
        seen: dict[str, str] = {}
        index = -1  # the object's index in the file (a split object's expansions share it)
        for raw in expansions:
            split = isinstance(raw, SplitExpansion)
            index += 0 if split and raw.part > 1 else 1
            where = f"expansions[{index}]"  # a split object's: its target says which part
            if split:
                self.split[index] = raw.of
            if not isinstance(raw, Mapping):
                self.problem(f"{where}: expected an object, got {quoted(raw)}")
                continue
            self.keys(raw, ("target", "steps"), where, "an expansion")
            target = raw.get("target")
            match = _TARGET.fullmatch(target) if isinstance(target, str) else None
            if match is None:
                self.problem(f"{where}.target: expected rules[NAME].PROPERTY, got {quoted(target)}")
                continue
            if match["where"] == "teams":
                self.team_expansion(match["name"], match["prop"], raw.get("steps"), where)
                continue
            name = match["name"]
            if name not in names:
                self.problem(
                    f"{where}.target: {target!r} names no rule of the rule set"
                    + did_you_mean(name, [str(n) for n in names])
                )
                continue
            rule = by_name.get(self.aliases.get((name, match["prop"]), name))
            if rule is None:
                continue  # the rule itself was reported
            prop, factor = self.units(rule)
            if match["prop"] != prop:
                hint = f"only its {prop}" if prop else "none of its properties"
                self.problem(
                    f"{where}.target: {target!r}: lobbysim expands {hint} (the rule is read as "
                    f"a {rule['kind']} rule)"
                )
                continue
            if rule["name"] in seen:
                self.problem(f"{where}.target: {target!r} is expanded twice ({seen[rule['name']]})")
                continue
            seen[rule["name"]] = where
            rule["expansions"] = self.read_steps(raw.get("steps"), where, rule, factor)

    def read_steps(
        self, steps: Any, where: str, rule: dict[str, Any], factor: float
    ) -> list[list[float]]:
        if not isinstance(steps, list) or not steps:
            self.problem(f"{where}.steps: expected a non-empty list of steps, got {quoted(steps)}")
            return []
        out: list[list[float]] = []
        at_least = limit_is_minimum(rule["kind"], rule.get("op"))
        counting = rule["kind"] in ("overlap", "contains", "reference_overlap")
        previous = (0.0, rule["limit"])
        for j, step in enumerate(steps):
            here = f"{where}.steps[{j}]"
            if not isinstance(step, Mapping):
                self.problem(f"{here}: expected an object, got {quoted(step)}")
                return []
            self.keys(step, ("waitTimeSeconds", "value"), here, "an expansion step")
            seconds = self.number(step.get("waitTimeSeconds"), f"{here}.waitTimeSeconds")
            value = self.number(
                step.get("value"),
                f"{here}.value",
                minimum=None if rule["kind"] == "compare" else 0,
                whole=counting,
            )
            if seconds is None or value is None:
                return []
            if seconds <= previous[0]:
                self.problem(
                    f"{here}.waitTimeSeconds: the waits increase from step to step (and start "
                    f"above 0), got {seconds:g} after {previous[0]:g}"
                )
                return []
            limit = factor * value
            if (limit > previous[1]) if at_least else (limit < previous[1]):
                self.problem(
                    f"{here}.value: {value:g} tightens rule {rule['name']!r}; lobbysim's limits "
                    "only relax as players wait"
                )
                return []
            out.append([seconds / 60.0, limit])
            previous = (seconds, limit)
        return out

    # --- the mapping -----------------------------------------------------------------------

    def bind(self, source: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        """Return the bound attributes and the unbound ones a rule reads."""
        from lobbysim.scenario.parse import build

        read = {
            r[key]
            for r in self.rules
            for key in ("attribute", "reference")
            if r is not None and r.get(key) is not None
        }
        bindings = self.mapping if self.mapping is not None else {}
        if not isinstance(bindings, Mapping):
            self.problem(f"matchmaker.rules.attributes: expected a mapping, got {bindings!r}")
            return {}, {}
        bound: dict[str, dict[str, Any]] = {}
        unbound: dict[str, str] = {}
        for name, binding in bindings.items():
            where = f"matchmaker.rules.attributes.{name}"
            if name not in self.declared:
                self.problem(
                    f"{where}: not a playerAttribute of {source}"
                    + did_you_mean(str(name), list(self.declared))
                )
                continue
            kind = self.declared[name][1]
            if not isinstance(binding, Mapping):
                self.problem(f"{where}: expected a binding such as {_BINDING_EXAMPLE[kind]}")
                continue
            if binding.get("type", kind) != kind:
                self.problem(f"{where}.type: the rule set declares {name!r} a {kind}")
                continue
            data = {**binding, "type": kind}
            if name == RATING:
                if kind != "number" or dict(binding) not in (
                    {"source": "rating"},
                    {"source": "rating", "type": "number"},
                ):
                    self.problem(
                        f"{where}: {RATING!r} is lobbysim's own attribute, the driving rater's "
                        "mean unscaled: bind it as {source: rating}, or rename the attribute in "
                        "the rule set to bind it on a scale"
                    )
                continue
            try:
                config = build(AttributeConfig, data, where)
            except ScenarioError as exc:
                self.problems.extend(exc.problems)
                continue
            found = config.problems(where)
            if found:
                self.problems.extend(found)
                continue
            bound[name] = data
        for name in sorted(read, key=lambda n: self.declared[n][0]):
            if name in bindings:
                continue
            index, kind = self.declared[name]
            if self.mapping is None:
                unbound[name] = kind
                continue
            example = "{source: rating}" if name == RATING else _BINDING_EXAMPLE[kind]
            self.problem(
                f"matchmaker.rules.attributes.{name}: the rules read playerAttributes[{index}] "
                f"{name!r} (a {kind}); bind it to the simulation, e.g. {name}: {example}"
            )
        return bound, unbound


def read_flexmatch(
    source: str | Path | Mapping[str, Any],
    mapping: Mapping[str, Any] | None = None,
    *,
    label: str | None = None,
) -> FlexMatchImport:
    """Read a FlexMatch rule set into lobbysim's scenario data (see the module docstring).

    Args:
        source: the rule set's JSON file, or its parsed data.
        mapping: the bindings of its player attributes (``matchmaker.rules.attributes``):
            every attribute a rule reads needs one. None reads it without bindings, listing the
            attributes the rules read in :attr:`FlexMatchImport.unbound` (``rules show``).
        label: the name errors give the rule set (default: the file, or ``flexmatch``).

    Raises:
        ScenarioError: every problem, one line each, naming the JSON path (or the mapping's
            field) and prefixed with the file.
    """
    if isinstance(source, Mapping):
        data: Any = source
        label = label or "flexmatch"
    else:
        label = label or str(source)
        data = load_json(source)
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{label}: expected a FlexMatch rule set (a JSON object)")
    reader = _Reader(data, mapping)
    reader.read()
    bound, unbound = reader.bind(label)
    if reader.problems:
        raise ScenarioError([f"{label}: {p}" for p in reader.problems])
    rules = []
    for rule in reader.rules:
        assert rule is not None  # a rule that could not be read is a problem
        prop, factor = reader.units(rule)
        if prop is not None and rule.get("limit") is not None:
            rule = {**rule, "read_from": {"property": prop, "factor": factor}}
        rules.append(rule)
    name = data.get("name")
    return FlexMatchImport(
        source=label,
        name=name if isinstance(name, str) else None,
        game=dict(reader.game),
        rules=tuple(rules),
        attributes=bound,
        unbound=unbound,
        batching=reader.batching,
        batch_sort=reader.batch_sort,
        clock=reader.clock,
        declared={name: kind for name, (_, kind) in reader.declared.items()},
        split_expansions=tuple(sorted(reader.split.items())),
        notes=tuple(reader.notes),
    )
