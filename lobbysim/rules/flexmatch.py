"""Amazon GameLift FlexMatch rule sets (rule language 1.0) in and out of a scenario's rule set.

:func:`read_flexmatch` reads a FlexMatch rule set (a JSON file or its parsed data) and a mapping
that binds its player attributes to the simulation, and translates it into lobbysim's scenario
data: a ``matchmaker.rules`` list, the ``attributes`` the rules read and the ``game`` section
the teams describe (:meth:`FlexMatchImport.fragment`). A scenario names a rule set with
``matchmaker.rules: {flexmatch: FILE, attributes: {NAME: BINDING, ...}}`` (FILE relative to the
scenario file's folder; :func:`expand_scenario_data` does the translation before the scenario is
built). :func:`export_flexmatch` is the inverse: a scenario's rule set as a FlexMatch rule set,
which reads back into the same rules (it checks so before it returns).

Anything lobbysim cannot read exactly is an error naming its JSON path, prefixed with the file
(``rules.json: rules[2].type: 'xyz' is not a FlexMatch rule type``), never silently ignored; the
labels FlexMatch itself ignores in matching (the rule set's, the teams' and the rules' ``name``
and ``description``, a player attribute's ``default``) are read and not used.

**Mapping FlexMatch -> lobbysim** (``X`` a player attribute; ``d`` a number):

======================================================  ==========================================
FlexMatch                                               lobbysim
======================================================  ==========================================
``teams``: two teams of one player                      ``game.mode: 1v1``
two teams of ``n`` (or one team, ``quantity: 2``)       ``game.mode: team``, ``team_size: n``
one team of ``n >= 2``, or ``n >= 3`` teams of one      ``game.mode: ffa``, ``ffa_size: n``
``playerAttributes`` ``number``/``string``/             ``attributes.X`` of that ``type``, drawn
``string_list``                                         or bound by the mapping (below)
``batchDistance`` on a number ``X``, ``maxDistance d``  ``skill_distance`` on X, ``limit d``,
                                                        ``party`` = ``partyAggregation``
                                                        (``avg`` -> ``average``, ``min``, ``max``)
``batchDistance`` on a string ``X``                     ``equal`` on X
``distance``: measurements                              ``team_balance`` on X, ``team: average``,
``avg(teams[*].players.attributes[X])``, reference      ``limit 2d`` (both teams' averages within
``avg(flatten(teams[*].players.attributes[X]))``,       d of the overall average <=> the two
``maxDistance d`` (two teams)                           averages differ by at most 2d, teams being
                                                        of one size; the export halves it)
``distance``: ``max(flatten(...[X]))`` against          ``skill_distance`` on X, ``limit d``,
``min(flatten(...[X]))``, ``maxDistance d``             ``party`` = ``partyAggregation``
``comparison`` ``=`` / ``!=`` on                        ``equal`` / ``distinct`` on X
``flatten(teams[*].players.attributes[X])``, a
string, no ``referenceValue``
``collection`` ``intersection`` on                      ``overlap`` on X, ``limit n``
``flatten(...[X])``, a string_list, ``minCount n``,
``partyAggregation: intersection``
``latency`` ``maxLatency d``                            ``latency``, ``limit d`` ms, ``party`` =
                                                        ``partyAggregation`` (default ``avg``)
``expansions``: ``target rules[NAME].P``, steps         that rule's ``expansions``:
``waitTimeSeconds s``, ``value v``                      ``[s / 60 minutes, v]`` (``2v`` for
                                                        team_balance); ``P`` the property the
                                                        limit comes from (``maxDistance``,
                                                        ``maxLatency``, ``minCount``)
``algorithm.expansionAgeSelection`` ``newest``          every rule's ``clock: newest`` (``oldest``)
(FlexMatch's default) / ``oldest``
``algorithm.strategy`` ``exhaustiveSearch``             ``matchmaker.algorithm: exact`` (unless
(``balanced``: a free-for-all of 41-200 only)           the scenario sets its own)
======================================================  ==========================================

lobbysim's ``exact`` search is its own matchmaker's search with every rule a hard constraint;
FlexMatch's batching (``batchingPreference``) decides which tickets are tried together, not
which matches are allowed, so only its defaults are read (``random``; ``largestPopulation``
with ``balanced``). ``balanced`` spreads players over teams to even out ``balancedAttribute``
with no limit: with one team (a free-for-all) it has nothing to spread, so it is read there and
refused with two teams. A FlexMatch rule set of more than 40 players is a large match: strategy
``balanced`` and only ``batchDistance`` and ``latency`` rules, as FlexMatch requires.

**The mapping** (``matchmaker.rules.attributes``, or ``mapping`` here) binds every attribute a
rule reads: a number ``{source: rating|skill, scale, offset}`` (the value is ``offset + scale *
x``, x the driving rater's mean or true skill) or ``{source: drawn, mean, sd}``; a string or
string_list ``{values: {VALUE: share, ...}}`` (FlexMatch has no distributions). Limits stay in
the FlexMatch attribute's units, so nothing is rescaled. An attribute named ``rating`` is
lobbysim's built-in (the driving rater's mean, unscaled): bind it ``{source: rating}``. A
latency rule reads the players' latencies to the data centres of the scenario's ``world``.
FlexMatch's defaults are not used: every simulated player has every attribute.

**Unsupported** (each an error naming its path): ``string_number_map`` attributes; teams whose
``minPlayers`` differ from ``maxPlayers`` (lobbysim's games have fixed sizes), uneven teams,
more than two teams with more than one player each; the sort rules ``absoluteSort`` and
``distanceSort`` (they order candidates and constrain nothing; lobbysim's search has no such
order); ``compound`` rules (lobbysim's rules all hold together; there is no or/not/xor);
``distance`` rules of other forms (a constant ``referenceValue``, ``minDistance``);
``comparison`` rules with a ``referenceValue`` (a bound on each player's value) or on a number;
``collection`` operations ``contains`` and ``reference_intersection_count``, ``maxCount``, and
``partyAggregation: union`` (FlexMatch's default: it pools a party's lists before intersecting,
where lobbysim's ``overlap`` intersects every player's list); ``latency``'s ``maxDistance`` and
``distanceReference`` (they bound a ticket's latency above the match's lowest or average one,
where lobbysim's ``delta_ping`` bounds it above the player's own best data centre); expansions
of team sizes or of a property no limit comes from; ``batchingPreference`` ``sorted`` or
``fastestRegion``, ``sortByAttributes``, a ``backfillPriority`` other than ``normal``.

The export refuses, naming ``matchmaker.rules[i]``, what FlexMatch cannot say: the kinds
``match_quality``, ``party_parity``, ``count`` and ``delta_ping``, ``team_balance`` on a team
sum, minimum or maximum, the clocks ``average`` and ``own``, two clocks in one rule set,
``optional_after``, weights other than 1, infinite limits.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from lobbysim.registry import did_you_mean
from lobbysim.scenario.rules import RATING, AttributeConfig, RuleConfig
from lobbysim.validation import ScenarioError, input_file_problem, is_number

MAX_BYTES = 1_000_000  # a rule set is a few kilobytes
MAX_DEPTH = 50
#: The largest match FlexMatch builds, and the largest of a small-match rule set.
MAX_PLAYERS = 200
SMALL_MATCH = 40

RULE_TYPES = (
    "batchDistance",
    "distance",
    "comparison",
    "collection",
    "latency",
    "absoluteSort",
    "distanceSort",
    "compound",
)
_UNSUPPORTED_TYPES = {
    "absoluteSort": "a sort rule orders the candidates around the seed ticket and constrains "
    "nothing; lobbysim's search has no candidate order",
    "distanceSort": "a sort rule orders the candidates around the seed ticket and constrains "
    "nothing; lobbysim's search has no candidate order",
    "compound": "its statement combines rules with and/or/not/xor; lobbysim's rules all hold "
    "together and cannot be combined otherwise",
}
_COMMON = ("name", "type", "description")
_PROPERTIES = {
    "batchDistance": ("batchAttribute", "maxDistance", "partyAggregation"),
    "distance": (
        "measurements",
        "referenceValue",
        "maxDistance",
        "minDistance",
        "partyAggregation",
    ),
    "comparison": ("measurements", "referenceValue", "operation", "partyAggregation"),
    "collection": (
        "measurements",
        "referenceValue",
        "operation",
        "maxCount",
        "minCount",
        "partyAggregation",
    ),
    "latency": ("maxLatency", "maxDistance", "distanceReference", "partyAggregation"),
    "absoluteSort": ("sortDirection", "sortAttribute", "mapKey", "partyAggregation"),
    "distanceSort": ("sortDirection", "sortAttribute", "mapKey", "partyAggregation"),
    "compound": ("statement",),
}
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
_PARTY_IN = {"avg": "average", "min": "min", "max": "max"}
_PARTY_OUT = {v: k for k, v in _PARTY_IN.items()}
#: The FlexMatch property a lobbysim kind's limit comes from, and limit = factor * property.
_LIMIT_PROPERTY = {
    "skill_distance": ("maxDistance", 1.0),
    "team_balance": ("maxDistance", 2.0),
    "latency": ("maxLatency", 1.0),
    "overlap": ("minCount", 1.0),
}
_BINDING_EXAMPLE = {
    "number": "{source: rating, scale: 100, offset: 1500}",
    "string": "{values: {a: 0.5, b: 0.5}}",
    "string_list": "{values: {a: 0.6, b: 0.4}}",
}

# Property expressions, read with their spaces removed.
_ATTR = r"teams\[\*\]\.players\.attributes\[['\"]?(?P<a>[^\]'\"]+)['\"]?\]"
_TEAM_AVG = re.compile(rf"avg\({_ATTR}\)")
_ALL_AVG = re.compile(rf"avg\(flatten\({_ATTR}\)\)")
_ALL_MAX = re.compile(rf"max\(flatten\({_ATTR}\)\)")
_ALL_MIN = re.compile(rf"min\(flatten\({_ATTR}\)\)")
_FLAT = re.compile(rf"flatten\({_ATTR}\)")
_TARGET = re.compile(r"(?P<where>rules|teams)\[(?P<name>[^\]]+)\]\.(?P<prop>\w+)")


@dataclass(frozen=True)
class FlexMatchImport:
    """A FlexMatch rule set as lobbysim reads it (plain scenario data).

    Attributes:
        source: the file (or label) it was read from, as errors name it.
        name: the rule set's ``name`` (a label), if any.
        game: the ``game`` fields its teams give: ``mode`` and ``team_size`` or ``ffa_size``.
        rules: the ``matchmaker.rules`` list, each rule as plain data.
        attributes: the bound attributes, by name, as plain ``attributes`` data.
        unbound: the attributes a rule reads that the mapping does not bind, by name, with
            their type (only when read without a mapping, e.g. ``lobbysim rules show``).
        algorithm: the ``matchmaker.algorithm``.
        clock: every rule's clock (``algorithm.expansionAgeSelection``).
        declared: every declared player attribute, by name, with its type (one no rule reads
            and the mapping does not bind is left out of :attr:`attributes`).
    """

    source: str
    name: str | None
    game: dict[str, Any]
    rules: tuple[dict[str, Any], ...]
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    unbound: dict[str, str] = field(default_factory=dict)
    algorithm: str = "exact"
    clock: str = "newest"
    declared: dict[str, str] = field(default_factory=dict)

    def fragment(self) -> dict[str, Any]:
        """Return the scenario data the rule set gives: ``matchmaker.rules`` and
        ``algorithm``, ``game`` and (when any) ``attributes``."""
        data: dict[str, Any] = {
            "matchmaker": {"rules": [dict(r) for r in self.rules], "algorithm": self.algorithm},
            "game": dict(self.game),
        }
        if self.attributes:
            data["attributes"] = {k: dict(v) for k, v in self.attributes.items()}
        return data


# --- reading the JSON -----------------------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} is given twice in one object; remove one")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level)
    return level


def load_json(path: str | Path) -> Any:
    """Return the data of a FlexMatch rule set's JSON file.

    Raises:
        ScenarioError: one line naming the file: it cannot be read, is not a regular file, is
            larger than :data:`MAX_BYTES`, is not UTF-8, is not JSON (with the line and column),
            gives a key twice, nests deeper than :data:`MAX_DEPTH` or uses NaN or Infinity.
    """
    problem = input_file_problem(path, MAX_BYTES)
    if problem is not None:
        raise ScenarioError(f"{path}: {problem}")
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise ScenarioError(f"{path}: longer than {MAX_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ScenarioError(
            f"{path}: not UTF-8 text: the byte 0x{raw[exc.start]:02x} at line {line} "
            f"(byte {exc.start + 1}); save the file as UTF-8"
        ) from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"{path}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except ValueError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep") from None
    if _depth(data) > MAX_DEPTH:
        raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep")
    return data


# --- FlexMatch -> lobbysim ------------------------------------------------------------------------


def _label(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else repr(value)


class _Reader:
    """Reads one rule set, collecting every problem (each naming its JSON path)."""

    def __init__(self, data: Mapping[str, Any], mapping: Mapping[str, Any] | None) -> None:
        self.data = data
        self.mapping = mapping
        self.problems: list[str] = []
        self.declared: dict[str, tuple[int, str]] = {}  # name -> (index, type)
        self.game: dict[str, Any] = {}
        self.players = 0
        self.rules: list[dict[str, Any] | None] = []
        self.balanced = False
        self.clock = "newest"

    def problem(self, line: str) -> None:
        self.problems.append(line)

    def number(
        self, value: Any, where: str, *, whole: bool = False, minimum: float | None = None
    ) -> float | None:
        """Return a finite number (a number or a numeric text, as FlexMatch reads both)."""
        number: float | None = None
        if is_number(value):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                number = None
        if number is None or not math.isfinite(number):
            self.problem(f"{where}: expected a number, got {_label(value)}")
            return None
        if whole and not number.is_integer():
            self.problem(f"{where}: expected a whole number, got {_label(value)}")
            return None
        if minimum is not None and number < minimum:
            self.problem(f"{where}: expected a number >= {minimum:g}, got {_label(value)}")
            return None
        return number

    def keys(self, obj: Mapping[str, Any], allowed: tuple[str, ...], where: str, what: str) -> None:
        for key in obj:
            if key not in allowed:
                self.problem(
                    f"{where}{'.' if where else ''}{key}: not a property of {what}"
                    + did_you_mean(str(key), list(allowed))
                )

    # --- sections --------------------------------------------------------------------------

    def read(self) -> None:
        data = self.data
        self.keys(data, _TOP, "", "a FlexMatch rule set")
        version = data.get("ruleLanguageVersion")
        if version != "1.0":
            self.problem(
                f"ruleLanguageVersion: lobbysim reads FlexMatch rule language 1.0, got "
                f"{_label(version) if 'ruleLanguageVersion' in data else 'none'}"
            )
        self.read_attributes(data.get("playerAttributes", []))
        self.read_teams(data.get("teams"))
        self.read_algorithm(data.get("algorithm", {}))
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            self.problem(f"rules: expected a list of rules, got {_label(rules)}")
            rules = []
        for i, raw in enumerate(rules):
            self.rules.append(self.read_rule(i, raw))
        names = [r.get("name") for r in rules if isinstance(r, Mapping)]
        for i, name in enumerate(names):
            if name is not None and names.index(name) != i:
                self.problem(f"rules[{i}].name: {name!r} names two rules")
        self.read_expansions(data.get("expansions", []))

    def read_attributes(self, attributes: Any) -> None:
        if not isinstance(attributes, list):
            self.problem(f"playerAttributes: expected a list, got {_label(attributes)}")
            return
        for i, raw in enumerate(attributes):
            where = f"playerAttributes[{i}]"
            if not isinstance(raw, Mapping):
                self.problem(f"{where}: expected an object, got {_label(raw)}")
                continue
            self.keys(raw, ("name", "type", "default"), where, "a player attribute")
            name, kind = raw.get("name"), raw.get("type")
            if not isinstance(name, str) or not name:
                self.problem(f"{where}.name: expected a name, got {_label(name)}")
                continue
            if name in self.declared:
                self.problem(f"{where}.name: {name!r} is declared twice")
                continue
            if kind not in _TYPES:
                self.problem(
                    f"{where}.type: expected one of {', '.join(_TYPES)}, got {_label(kind)}"
                    + did_you_mean(str(kind), list(_TYPES))
                )
                continue
            if kind == "string_number_map":
                self.problem(
                    f"{where}.type: 'string_number_map' is not supported by lobbysim (no "
                    f"rule of lobbysim's reads a map of numbers) ({name!r})"
                )
                continue
            self.declared[name] = (i, kind)

    def read_teams(self, teams: Any) -> None:
        if not isinstance(teams, list) or not teams:
            self.problem(f"teams: expected a non-empty list of teams, got {_label(teams)}")
            return
        sizes: list[int] = []
        for i, raw in enumerate(teams):
            where = f"teams[{i}]"
            if not isinstance(raw, Mapping):
                self.problem(f"{where}: expected an object, got {_label(raw)}")
                return
            self.keys(raw, ("name", "minPlayers", "maxPlayers", "quantity"), where, "a team")
            low = self.number(raw.get("minPlayers"), f"{where}.minPlayers", whole=True, minimum=1)
            high = self.number(raw.get("maxPlayers"), f"{where}.maxPlayers", whole=True, minimum=1)
            quantity = self.number(
                raw.get("quantity", 1), f"{where}.quantity", whole=True, minimum=1
            )
            if low is None or high is None or quantity is None:
                return
            if low != high:
                self.problem(
                    f"{where}.minPlayers: {low:g} differs from maxPlayers {high:g}; lobbysim's "
                    "games have fixed sizes (give minPlayers = maxPlayers)"
                )
                return
            sizes += [int(high)] * int(quantity)
        self.players = sum(sizes)
        if self.players > MAX_PLAYERS:
            self.problem(f"teams: {self.players} players; a FlexMatch match holds at most 200")
            return
        if len(sizes) == 1:
            if sizes[0] < 2:
                self.problem("teams[0].maxPlayers: a game of one player is not a game")
                return
            self.game = {"mode": "ffa", "ffa_size": sizes[0]}
        elif all(s == 1 for s in sizes):
            self.game = (
                {"mode": "1v1"} if len(sizes) == 2 else {"mode": "ffa", "ffa_size": len(sizes)}
            )
        elif len(sizes) == 2 and sizes[0] == sizes[1]:
            self.game = {"mode": "team", "team_size": sizes[0]}
        elif len(sizes) == 2:
            self.problem(
                f"teams: uneven teams of {sizes[0]} and {sizes[1]} players; lobbysim's team "
                "games are two teams of one size"
            )
        else:
            self.problem(
                f"teams: {len(sizes)} teams of {', '.join(map(str, sizes))} players; lobbysim "
                "plays 1v1, two teams of one size, or a free-for-all (one team)"
            )

    def read_algorithm(self, algorithm: Any) -> None:
        self.clock = "newest"
        if not isinstance(algorithm, Mapping):
            self.problem(f"algorithm: expected an object, got {_label(algorithm)}")
            return
        self.keys(algorithm, _ALGORITHM, "algorithm", "a FlexMatch algorithm")
        age = algorithm.get("expansionAgeSelection", "newest")
        if age in ("newest", "oldest"):
            self.clock = age
        else:
            self.problem(
                f"algorithm.expansionAgeSelection: expected newest or oldest, got {_label(age)}"
            )
        strategy = algorithm.get("strategy", "exhaustiveSearch")
        large = self.players > SMALL_MATCH
        if strategy == "balanced":
            self.balanced = True
            if self.game and self.game.get("mode") != "ffa":
                self.problem(
                    "algorithm.strategy: 'balanced' with two teams is not supported by lobbysim "
                    "(it spreads the players over the teams to even out balancedAttribute with "
                    "no limit, which no lobbysim rule states)"
                )
            elif self.game and not large:
                self.problem(
                    f"algorithm.strategy: FlexMatch's 'balanced' is for matches of 41 to 200 "
                    f"players; this one has {self.players} (use exhaustiveSearch)"
                )
            attribute = algorithm.get("balancedAttribute")
            if attribute not in self.declared or self.declared[attribute][1] != "number":
                self.problem(
                    "algorithm.balancedAttribute: the balanced strategy needs a declared number "
                    f"attribute, got {_label(attribute)}"
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
                f"algorithm.strategy: expected exhaustiveSearch or balanced, got {_label(strategy)}"
            )
        default = "largestPopulation" if strategy == "balanced" else "random"
        batching = algorithm.get("batchingPreference", default)
        if batching != default:
            self.problem(
                f"algorithm.batchingPreference: {_label(batching)} is not supported by lobbysim "
                f"(only {default!r}, the default: how FlexMatch batches tickets decides which are "
                "tried together, which lobbysim's search does not mimic)"
            )
        if algorithm.get("sortByAttributes", []) not in ([], None):
            self.problem(
                "algorithm.sortByAttributes: not supported by lobbysim (it sorts the ticket pool "
                "before batching; lobbysim's search has no such order)"
            )
        backfill = algorithm.get("backfillPriority", "normal")
        if backfill != "normal":
            self.problem(
                f"algorithm.backfillPriority: {_label(backfill)} is not supported by lobbysim "
                "(only 'normal': lobbysim back-fills seats by game.backfill)"
            )

    # --- rules -----------------------------------------------------------------------------

    def attribute(self, name: Any, where: str, wanted: tuple[str, ...]) -> str | None:
        """Return the declared attribute ``name`` if its type is one of ``wanted``."""
        if not isinstance(name, str) or name not in self.declared:
            self.problem(
                f"{where}: {_label(name)} is not a declared playerAttribute"
                + did_you_mean(str(name), list(self.declared))
            )
            return None
        kind = self.declared[name][1]
        if kind not in wanted:
            self.problem(
                f"{where}: {name!r} is a {kind} attribute; this rule reads a "
                f"{' or '.join(wanted)} attribute in lobbysim"
            )
            return None
        return name

    def flat_attribute(self, raw: Mapping[str, Any], where: str) -> str | None:
        """Return the attribute X of ``measurements: ["flatten(teams[*].players.attributes[X])"]``
        (None, with the problem noted, for any other form)."""
        measured = self.expression(raw, "measurements", where)
        if measured is None:
            return None
        flat = _FLAT.fullmatch(measured)
        if not flat:
            self.problem(
                f"{where}.measurements: {measured!r} is not a form lobbysim reads: "
                "flatten(teams[*].players.attributes[X])"
            )
            return None
        return str(flat["a"])

    def expression(self, raw: Mapping[str, Any], key: str, where: str) -> str | None:
        value = raw.get(key)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if not isinstance(value, str):
            self.problem(f"{where}.{key}: expected one property expression, got {_label(value)}")
            return None
        return "".join(value.split())

    def party(self, raw: Mapping[str, Any], where: str) -> str | None:
        value = raw.get("partyAggregation", "avg")
        if value not in _PARTY_IN:
            self.problem(f"{where}.partyAggregation: expected avg, min or max, got {_label(value)}")
            return None
        return _PARTY_IN[value]

    def unsupported(self, raw: Mapping[str, Any], where: str, keys: dict[str, str]) -> bool:
        bad = [key for key in keys if key in raw]
        for key in bad:
            self.problem(f"{where}.{key}: not supported by lobbysim ({keys[key]})")
        return bool(bad)

    def read_rule(self, i: int, raw: Any) -> dict[str, Any] | None:
        where = f"rules[{i}]"
        if not isinstance(raw, Mapping):
            self.problem(f"{where}: expected an object, got {_label(raw)}")
            return None
        kind = raw.get("type")
        if kind not in RULE_TYPES:
            self.problem(
                f"{where}.type: {_label(kind)} is not a FlexMatch rule type"
                + did_you_mean(str(kind), list(RULE_TYPES))
            )
            return None
        if kind in _UNSUPPORTED_TYPES:
            self.problem(
                f"{where}.type: {kind!r} is not supported by lobbysim ({_UNSUPPORTED_TYPES[kind]})"
            )
            return None
        self.keys(raw, _COMMON + _PROPERTIES[kind], where, f"a FlexMatch {kind} rule")
        name = raw.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,59}", name):
            self.problem(
                f"{where}.name: lobbysim names a rule with a letter or _, then letters, digits, "
                f"_, . and - (at most 60), got {_label(name)}"
            )
            return None
        if self.players > SMALL_MATCH and kind not in ("batchDistance", "latency"):
            self.problem(
                f"{where}.type: a FlexMatch large match (more than {SMALL_MATCH} players) allows "
                f"only batchDistance and latency rules, got {kind!r}"
            )
            return None
        rule = getattr(self, f"rule_{kind}")(raw, where)
        if rule is None:
            return None
        return {"name": name, **rule, "clock": self.clock}

    def rule_batchDistance(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        name = self.attribute(
            raw.get("batchAttribute"), f"{where}.batchAttribute", ("number", "string")
        )
        if name is None:
            return None
        if self.declared[name][1] == "string":
            if self.unsupported(
                raw,
                where,
                {
                    "maxDistance": "a batchDistance on a string attribute batches equal values; "
                    "it has no distance",
                    "partyAggregation": "a string attribute's values are not aggregated",
                },
            ):
                return None
            return {"kind": "equal", "attribute": name}
        if "maxDistance" not in raw:
            self.problem(f"{where}.maxDistance: a batchDistance on a number attribute needs one")
            return None
        limit = self.number(raw["maxDistance"], f"{where}.maxDistance", minimum=0)
        party = self.party(raw, where)
        if limit is None or party is None:
            return None
        return {"kind": "skill_distance", "attribute": name, "limit": limit, "party": party}

    def rule_distance(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        if self.unsupported(
            raw, where, {"minDistance": "lobbysim's limits are maxima between players"}
        ):
            return None
        measured = self.expression(raw, "measurements", where)
        reference = raw.get("referenceValue")
        if measured is None:
            return None
        if not isinstance(reference, str):
            self.problem(
                f"{where}.referenceValue: a distance from a constant ({_label(reference)}) is "
                "not supported by lobbysim (a bound on each player's value); lobbysim reads "
                "avg(flatten(teams[*].players.attributes[X])) against the team averages, or "
                "min(flatten(...)) against max(flatten(...))"
            )
            return None
        reference = "".join(reference.split())
        if "maxDistance" not in raw:
            self.problem(f"{where}.maxDistance: a distance rule needs one")
            return None
        distance = self.number(raw["maxDistance"], f"{where}.maxDistance", minimum=0)
        team, overall = _TEAM_AVG.fullmatch(measured), _ALL_AVG.fullmatch(reference)
        if team and overall and team["a"] == overall["a"]:
            name = self.attribute(team["a"], f"{where}.measurements", ("number",))
            if name is None or distance is None:
                return None
            if self.game and self.game.get("mode") != "team":
                self.problem(
                    f"{where}.measurements: team averages need two teams of several players; "
                    f"the rule set's teams make a {self.game.get('mode')} game"
                )
                return None
            if raw.get("partyAggregation", "avg") != "avg":
                self.problem(
                    f"{where}.partyAggregation: a distance between team averages averages every "
                    f"player; got {_label(raw['partyAggregation'])}"
                )
                return None
            return {
                "kind": "team_balance",
                "attribute": name,
                "limit": 2.0 * distance,
                "team": "average",
            }
        spread = (_ALL_MAX.fullmatch(measured), _ALL_MIN.fullmatch(reference))
        spread_back = (_ALL_MIN.fullmatch(measured), _ALL_MAX.fullmatch(reference))
        for high, low in (spread, spread_back):
            if high and low and high["a"] == low["a"]:
                name = self.attribute(high["a"], f"{where}.measurements", ("number",))
                party = self.party(raw, where)
                if name is None or distance is None or party is None:
                    return None
                return {
                    "kind": "skill_distance",
                    "attribute": name,
                    "limit": distance,
                    "party": party,
                }
        self.problem(
            f"{where}.measurements: {measured!r} against {reference!r} is not a form lobbysim "
            "reads: avg(teams[*].players.attributes[X]) against "
            "avg(flatten(teams[*].players.attributes[X])) (team_balance), or "
            "max(flatten(...[X])) against min(flatten(...[X])) (skill_distance)"
        )
        return None

    def rule_comparison(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        if self.unsupported(
            raw,
            where,
            {
                "referenceValue": "a comparison with a reference value bounds each player's "
                "value by a constant, which no lobbysim rule does"
            },
        ):
            return None
        flat = self.flat_attribute(raw, where)
        if flat is None:
            return None
        name = self.attribute(flat, f"{where}.measurements", ("string",))
        operation = raw.get("operation")
        if operation not in ("=", "!="):
            self.problem(
                f"{where}.operation: without a referenceValue FlexMatch compares players with "
                f"'=' or '!=', got {_label(operation)}"
            )
            return None
        if raw.get("partyAggregation", "avg") != "avg":
            self.problem(
                f"{where}.partyAggregation: a string attribute's values are not aggregated, got "
                f"{_label(raw['partyAggregation'])}"
            )
            return None
        if name is None:
            return None
        return {"kind": "equal" if operation == "=" else "distinct", "attribute": name}

    def rule_collection(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        if self.unsupported(
            raw,
            where,
            {
                "referenceValue": "lobbysim intersects the players' lists with one another, "
                "not with a reference list",
                "maxCount": "lobbysim's overlap is a minimum of values in common",
            },
        ):
            return None
        operation = raw.get("operation")
        if operation != "intersection":
            self.problem(
                f"{where}.operation: {_label(operation)} is not supported by lobbysim (only "
                "'intersection': the players' lists have at least minCount values in common)"
            )
            return None
        flat = self.flat_attribute(raw, where)
        if flat is None:
            return None
        name = self.attribute(flat, f"{where}.measurements", ("string_list",))
        party = raw.get("partyAggregation", "union")
        if party != "intersection":
            self.problem(
                f"{where}.partyAggregation: {_label(party)} is not supported by lobbysim (a "
                "union pools a party's lists before the intersection; lobbysim's overlap "
                "intersects every player's list, which is FlexMatch's 'intersection': set it)"
            )
            return None
        if "minCount" not in raw:
            self.problem(f"{where}.minCount: an intersection rule needs one")
            return None
        count = self.number(raw["minCount"], f"{where}.minCount", whole=True, minimum=0)
        if name is None or count is None:
            return None
        return {"kind": "overlap", "attribute": name, "limit": count}

    def rule_latency(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        if self.unsupported(
            raw,
            where,
            {
                "maxDistance": "it bounds a ticket's latency above the match's lowest or "
                "average latency at the location; lobbysim's delta_ping bounds it above the "
                "player's own best data centre",
                "distanceReference": "it goes with maxDistance",
            },
        ):
            return None
        if "maxLatency" not in raw:
            self.problem(f"{where}.maxLatency: lobbysim reads a latency rule's maxLatency")
            return None
        limit = self.number(raw["maxLatency"], f"{where}.maxLatency", minimum=0)
        party = self.party(raw, where)
        if limit is None or party is None:
            return None
        return {"kind": "latency", "limit": limit, "party": party}

    # --- expansions ------------------------------------------------------------------------

    def read_expansions(self, expansions: Any) -> None:
        if not isinstance(expansions, list):
            self.problem(f"expansions: expected a list, got {_label(expansions)}")
            return
        by_name = {r["name"]: r for r in self.rules if r is not None}
        names = [r.get("name") for r in self.data.get("rules", []) if isinstance(r, Mapping)]
        seen: dict[str, int] = {}
        for k, raw in enumerate(expansions):
            where = f"expansions[{k}]"
            if not isinstance(raw, Mapping):
                self.problem(f"{where}: expected an object, got {_label(raw)}")
                continue
            self.keys(raw, ("target", "steps"), where, "an expansion")
            target = raw.get("target")
            match = _TARGET.fullmatch(target) if isinstance(target, str) else None
            if match is None:
                self.problem(f"{where}.target: expected rules[NAME].PROPERTY, got {_label(target)}")
                continue
            if match["where"] == "teams":
                self.problem(
                    f"{where}.target: {target!r}: expanding a team's size is not supported by "
                    "lobbysim (its games have fixed sizes)"
                )
                continue
            name = match["name"]
            if name not in names:
                self.problem(
                    f"{where}.target: {target!r} names no rule of the rule set"
                    + did_you_mean(name, [str(n) for n in names])
                )
                continue
            rule = by_name.get(name)
            if rule is None:
                continue  # the rule itself was reported
            prop, factor = _LIMIT_PROPERTY.get(rule["kind"], (None, 1.0))
            if match["prop"] != prop:
                hint = f"only its {prop}" if prop else "none of its properties"
                self.problem(
                    f"{where}.target: {target!r}: lobbysim expands {hint} (the rule is read as "
                    f"a {rule['kind']} rule)"
                )
                continue
            if name in seen:
                self.problem(
                    f"{where}.target: {target!r} is expanded twice (expansions[{seen[name]}])"
                )
                continue
            seen[name] = k
            rule["expansions"] = self.read_steps(raw.get("steps"), where, rule, factor)

    def read_steps(
        self, steps: Any, where: str, rule: dict[str, Any], factor: float
    ) -> list[list[float]]:
        if not isinstance(steps, list) or not steps:
            self.problem(f"{where}.steps: expected a non-empty list of steps, got {_label(steps)}")
            return []
        out: list[list[float]] = []
        at_least = rule["kind"] == "overlap"
        previous = (0.0, rule["limit"])
        for j, step in enumerate(steps):
            here = f"{where}.steps[{j}]"
            if not isinstance(step, Mapping):
                self.problem(f"{here}: expected an object, got {_label(step)}")
                return []
            self.keys(step, ("waitTimeSeconds", "value"), here, "an expansion step")
            seconds = self.number(step.get("waitTimeSeconds"), f"{here}.waitTimeSeconds")
            value = self.number(
                step.get("value"), f"{here}.value", minimum=0, whole=rule["kind"] == "overlap"
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
            r["attribute"] for r in self.rules if r is not None and r.get("attribute") is not None
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
        rules.append(rule)
    name = data.get("name")
    return FlexMatchImport(
        source=label,
        name=name if isinstance(name, str) else None,
        game=dict(reader.game),
        rules=tuple(rules),
        attributes=bound,
        unbound=unbound,
        algorithm="exact",
        clock=reader.clock,
        declared={name: kind for name, (_, kind) in reader.declared.items()},
    )


# --- in a scenario --------------------------------------------------------------------------------


def resolve_rule_files(data: Any, folder: Path) -> Any:
    """Return scenario data whose relative ``matchmaker.rules.flexmatch`` file is named from
    ``folder`` (the scenario file's) instead of the current folder."""
    mm = data.get("matchmaker") if isinstance(data, Mapping) else None
    rules = mm.get("rules") if isinstance(mm, Mapping) else None
    file = rules.get("flexmatch") if isinstance(rules, Mapping) else None
    if not isinstance(file, str) or Path(file).is_absolute():
        return data
    assert isinstance(mm, Mapping) and isinstance(rules, Mapping)
    return {**data, "matchmaker": {**mm, "rules": {**rules, "flexmatch": str(folder / file)}}}


def expand_scenario_data(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return scenario data with a FlexMatch rule set (``matchmaker.rules: {flexmatch: FILE,
    attributes: {...}}``) translated into plain ``matchmaker.rules``, ``attributes`` and
    ``game`` fields; other data is returned as it is.

    The game section the teams give fills in the scenario's, and must agree with what it sets;
    the attributes join the scenario's own ``attributes:`` (a name bound twice is an error);
    ``matchmaker.algorithm`` is ``exact`` unless the scenario sets one.

    Raises:
        ScenarioError: the rule set's problems, or a disagreement with the scenario's fields.
    """
    mm = data.get("matchmaker")
    rules = mm.get("rules") if isinstance(mm, Mapping) else None
    if not isinstance(rules, Mapping):
        return data
    assert isinstance(mm, Mapping)
    unknown = [k for k in rules if k not in ("flexmatch", "attributes")]
    problems = [
        f"matchmaker.rules.{k}: unknown field of a FlexMatch rule set's reference (flexmatch: "
        "FILE, attributes: BINDINGS)" + did_you_mean(str(k), ["flexmatch", "attributes"])
        for k in unknown
    ]
    file = rules.get("flexmatch")
    if not isinstance(file, str) or not file:
        problems.append(
            "matchmaker.rules: a mapping names a FlexMatch rule set, {flexmatch: FILE, "
            f"attributes: {{NAME: BINDING}}}} (or give a list of rules), got {dict(rules)!r}"
        )
    if problems or not isinstance(file, str):
        raise ScenarioError(problems)
    imported = read_flexmatch(Path(file), rules.get("attributes") or {}, label=file)
    out = dict(data)
    out["matchmaker"] = {
        **mm,
        "rules": [dict(r) for r in imported.rules],
        "algorithm": mm.get("algorithm", imported.algorithm),
    }
    game = data.get("game", {})
    if isinstance(game, Mapping):
        merged = dict(game)
        shown = ", ".join(f"{k} {v}" for k, v in imported.game.items())
        for key in ("mode", "team_size", "ffa_size"):
            mine, theirs = game.get(key), imported.game.get(key)
            if mine is None or mine == theirs:
                if theirs is not None:
                    merged[key] = theirs
                continue
            problems.append(
                f"game.{key}: {mine!r} disagrees with the FlexMatch rule set {file}'s teams "
                f"({shown})"
            )
        out["game"] = merged
    if imported.attributes:
        own = data.get("attributes") or {}
        if isinstance(own, Mapping):
            for name in imported.attributes:
                if name in own:
                    problems.append(
                        f"attributes.{name}: also bound by matchmaker.rules.attributes.{name}; "
                        "bind it once"
                    )
            out["attributes"] = {**own, **imported.attributes}
    if problems:
        raise ScenarioError(problems)
    return out


# --- lobbysim -> FlexMatch ------------------------------------------------------------------------


def _number(value: float, where: str, problems: list[str]) -> float | int:
    if not math.isfinite(value):
        problems.append(f"{where}: FlexMatch has no infinite limits, got {value!r}")
        return 0
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _seconds(minutes: float) -> float | int:
    """Return ``minutes`` in seconds, as a whole number when that reads back exactly."""
    seconds = minutes * 60.0
    for candidate in (round(seconds), round(seconds, 6)):
        if candidate / 60.0 == minutes:
            return int(candidate) if float(candidate).is_integer() else candidate
    return seconds


def _reads_rating(rule: RuleConfig) -> bool:
    return rule.kind in ("skill_distance", "team_balance") and rule.attribute in (None, RATING)


def export_bindings(scenario: Any) -> dict[str, dict[str, Any]]:
    """Return the mapping (``matchmaker.rules.attributes``) that binds the attributes of
    :func:`export_flexmatch`'s rule set as the scenario has them."""
    out: dict[str, dict[str, Any]] = {}
    for name, attribute in (scenario.attributes or {}).items():
        if attribute.type == "number":
            if attribute.source == "drawn":
                out[name] = {"source": "drawn", "mean": attribute.mean, "sd": attribute.sd}
            else:
                out[name] = {
                    "source": attribute.source,
                    "scale": attribute.scale,
                    "offset": attribute.offset,
                }
        else:
            out[name] = {"values": dict(attribute.values)}
    if any(_reads_rating(r) for r in scenario.matchmaker.rules or ()):
        out[RATING] = {"source": "rating"}
    return out


def _default(attribute: AttributeConfig) -> Any:
    if attribute.type == "number":
        value = attribute.mean if attribute.source == "drawn" else attribute.offset
        return int(value) if float(value).is_integer() else value
    likeliest = max(attribute.values, key=lambda v: attribute.values[v])
    return likeliest if attribute.type == "string" else [likeliest]


def _expression(attribute: str, form: str) -> str:
    players = f"teams[*].players.attributes[{attribute}]"
    return {
        "team_avg": f"avg({players})",
        "all_avg": f"avg(flatten({players}))",
        "flat": f"flatten({players})",
    }[form]


def _export_rule(
    i: int, rule: RuleConfig, attributes: Mapping[str, AttributeConfig], problems: list[str]
) -> dict[str, Any] | None:
    where = f"matchmaker.rules[{i}]"
    kind, name = rule.kind, rule.name
    attribute = rule.attribute if rule.attribute is not None else RATING
    limit = _number(rule.limit, f"{where}.limit", problems) if rule.limit is not None else None
    if kind == "skill_distance":
        return {
            "name": name,
            "type": "batchDistance",
            "batchAttribute": attribute,
            "maxDistance": limit,
            "partyAggregation": _PARTY_OUT[rule.party],
        }
    if kind == "equal":
        return {"name": name, "type": "batchDistance", "batchAttribute": attribute}
    if kind == "team_balance":
        if rule.team != "average":
            problems.append(
                f"{where}.team: FlexMatch's distance rule compares team averages; a team "
                f"{rule.team} has no FlexMatch form"
            )
            return None
        assert rule.limit is not None
        return {
            "name": name,
            "type": "distance",
            "measurements": [_expression(attribute, "team_avg")],
            "referenceValue": _expression(attribute, "all_avg"),
            "maxDistance": _number(rule.limit / 2.0, f"{where}.limit", problems),
        }
    if kind == "distinct":
        return {
            "name": name,
            "type": "comparison",
            "measurements": [_expression(attribute, "flat")],
            "operation": "!=",
        }
    if kind == "overlap":
        return {
            "name": name,
            "type": "collection",
            "operation": "intersection",
            "measurements": [_expression(attribute, "flat")],
            "minCount": limit,
            "partyAggregation": "intersection",
        }
    if kind == "latency":
        return {
            "name": name,
            "type": "latency",
            "maxLatency": limit,
            "partyAggregation": _PARTY_OUT[rule.party],
        }
    reasons = {
        "match_quality": "FlexMatch knows no rater's match quality",
        "party_parity": "FlexMatch has no rule on the parties' spread over the teams",
        "count": "FlexMatch has no rule counting a value's players per team",
        "delta_ping": "FlexMatch's latency maxDistance bounds a ticket's latency above the "
        "match's lowest or average one, not above the player's own best data centre",
    }
    problems.append(
        f"{where}.kind: a {kind} rule has no FlexMatch form ({reasons.get(kind, 'unknown kind')})"
    )
    return None


def export_flexmatch(scenario: Any) -> dict[str, Any]:
    """Return the scenario's rule set as a FlexMatch rule set (rule language 1.0), a JSON
    document as a dict (see the module docstring for the mapping).

    Reading it back with :func:`read_flexmatch` and :func:`export_bindings` gives the
    scenario's rules, attributes and game; this is checked before it returns.

    Raises:
        ScenarioError: what FlexMatch cannot say, one line each naming the scenario's field
            (``matchmaker.rules[2].kind: ...``).
    """
    rules: tuple[RuleConfig, ...] | None = scenario.matchmaker.rules
    if rules is None:
        raise ScenarioError(
            "matchmaker.rules: the scenario has no rule set to export (its matchmaker uses the "
            "threshold alone)"
        )
    attributes: Mapping[str, AttributeConfig] = scenario.attributes or {}
    problems: list[str] = []
    game = scenario.game
    if game.mode == "ffa":
        players = game.ffa_size
        teams = [{"name": "players", "minPlayers": players, "maxPlayers": players}]
    else:
        size = 1 if game.mode == "1v1" else game.team_size
        players = 2 * size
        teams = [
            {"name": "red", "minPlayers": size, "maxPlayers": size},
            {"name": "blue", "minPlayers": size, "maxPlayers": size},
        ]
        if game.mode == "team" and size == 1:
            problems.append(
                "game.team_size: two teams of one player are a 1v1 game in FlexMatch's terms "
                "(they read back as game.mode 1v1); use mode 1v1"
            )
    large = players > SMALL_MATCH
    if players > MAX_PLAYERS:
        problems.append(f"game: {players} players; a FlexMatch match holds at most 200")
    if large and game.mode != "ffa":
        problems.append(
            f"game.mode: a FlexMatch match of more than {SMALL_MATCH} players balances its teams "
            "(strategy balanced) with no limit, which lobbysim cannot read back; only a "
            "free-for-all exports as a large match"
        )
    clocks = [r.clock for r in rules if r.clock in ("newest", "oldest")]
    clock = clocks[0] if clocks else "newest"
    first = next((i for i, r in enumerate(rules) if r.clock == clock), 0)
    out_rules: list[dict[str, Any]] = []
    expansions: list[dict[str, Any]] = []
    for i, rule in enumerate(rules):
        where = f"matchmaker.rules[{i}]"
        if rule.clock not in ("newest", "oldest"):
            problems.append(
                f"{where}.clock: FlexMatch's expansions run on the newest or the oldest ticket's "
                f"wait (algorithm.expansionAgeSelection), got {rule.clock!r}"
            )
        elif rule.clock != clock:
            problems.append(
                f"{where}.clock: FlexMatch has one clock for every rule "
                f"(algorithm.expansionAgeSelection); matchmaker.rules[{first}] has {clock!r}, this "
                f"rule {rule.clock!r}"
            )
        if rule.optional_after is not None:
            problems.append(
                f"{where}.optional_after: FlexMatch's rules never become optional (an expansion "
                "may relax the limit instead)"
            )
        if rule.weight != 1.0:
            problems.append(
                f"{where}.weight: FlexMatch has no rule weights (seed_greedy's ranking), got "
                f"{rule.weight!r}"
            )
        if large and rule.kind not in ("skill_distance", "equal", "latency"):
            problems.append(
                f"{where}.kind: a FlexMatch large match (more than {SMALL_MATCH} players) allows "
                f"only batchDistance and latency rules (lobbysim's skill_distance, equal and "
                f"latency), got {rule.kind}"
            )
            continue
        exported = _export_rule(i, rule, attributes, problems)
        if exported is None:
            continue
        out_rules.append(exported)
        if rule.expansions:
            prop, factor = _LIMIT_PROPERTY[rule.kind]
            expansions.append(
                {
                    "target": f"rules[{rule.name}].{prop}",
                    "steps": [
                        {
                            "waitTimeSeconds": _seconds(wait),
                            "value": _number(value / factor, f"{where}.expansions", problems),
                        }
                        for wait, value in rule.expansions
                    ],
                }
            )
    declared = [
        {"name": name, "type": a.type, "default": _default(a)} for name, a in attributes.items()
    ]
    numbers = [name for name, a in attributes.items() if a.type == "number"]
    if any(_reads_rating(r) for r in rules) or (large and not numbers):
        declared.append({"name": RATING, "type": "number", "default": 0})
    algorithm: dict[str, Any] = {"strategy": "exhaustiveSearch"}
    if large:
        spread = [r.attribute or RATING for r in rules if r.kind == "skill_distance"]
        balanced = spread[0] if spread else numbers[0] if numbers else RATING
        algorithm = {
            "strategy": "balanced",
            "balancedAttribute": balanced,
            "batchingPreference": "largestPopulation",
        }
    algorithm["expansionAgeSelection"] = clock
    document: dict[str, Any] = {
        "name": scenario.name,
        "ruleLanguageVersion": "1.0",
        "playerAttributes": declared,
        "algorithm": algorithm,
        "teams": teams,
        "rules": out_rules,
    }
    if expansions:
        document["expansions"] = expansions
    if problems:
        raise ScenarioError(problems)
    _check_round_trip(scenario, document)
    return document


def _check_round_trip(scenario: Any, document: dict[str, Any]) -> None:
    """Raise a ScenarioError naming the first field the document does not read back into."""
    from lobbysim.scenario.parse import build

    try:
        imported = read_flexmatch(document, export_bindings(scenario), label="the export")
    except ScenarioError as exc:
        raise ScenarioError([f"the export does not read back: {p}" for p in exc.problems]) from None
    problems: list[str] = []
    for i, (rule, data) in enumerate(zip(scenario.matchmaker.rules, imported.rules, strict=True)):
        back = build(RuleConfig, data, f"matchmaker.rules[{i}]")
        for f in fields(RuleConfig):
            mine, theirs = getattr(rule, f.name), getattr(back, f.name)
            if f.name == "attribute" and _reads_rating(rule):
                mine = mine or RATING
            if mine != theirs:
                problems.append(
                    f"matchmaker.rules[{i}].{f.name}: {mine!r} has no FlexMatch form (it reads "
                    f"back as {theirs!r})"
                )
                break
    back_game = {"mode": scenario.game.mode}
    if scenario.game.mode == "team":
        back_game["team_size"] = scenario.game.team_size
    elif scenario.game.mode == "ffa":
        back_game["ffa_size"] = scenario.game.ffa_size
    if imported.game != back_game:
        problems.append(f"game: {back_game} reads back as {imported.game}")
    if problems:
        raise ScenarioError(problems)
