"""FlexMatch's rule language as lobbysim reads it, one rule at a time.

The tables and limits the import (:mod:`lobbysim.flexmatch.read`) and the export
(:mod:`lobbysim.flexmatch.export`) share: the largest match and the largest small match,
the rule types, the party aggregations both ways and the property each lobbysim kind's limit
comes from. :class:`RuleReader` holds a rule set's reading state and its problems (each naming
its JSON path) and reads one FlexMatch rule into one lobbysim rule: ``batchDistance``,
``distance``, ``comparison``, ``collection`` and ``latency``, with their property expressions.
The module docstring of :mod:`lobbysim.flexmatch` has the mapping.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from lobbysim.registry import did_you_mean
from lobbysim.validation import digit_count, is_number, is_whole

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
#: FlexMatch's ``partyAggregation`` -> a lobbysim rule's ``party``, and back.
PARTY_IN = {"avg": "average", "min": "min", "max": "max"}
PARTY_OUT = {v: k for k, v in PARTY_IN.items()}
#: The FlexMatch property a lobbysim kind's limit comes from, and limit = factor * property.
LIMIT_PROPERTY = {
    "skill_distance": ("maxDistance", 1.0),
    "mean_distance": ("maxDistance", 1.0),
    "team_balance": ("maxDistance", 2.0),
    "latency": ("maxLatency", 1.0),
    "overlap": ("minCount", 1.0),
    "contains": ("minCount", 1.0),
    "reference_overlap": ("minCount", 1.0),
    "compare": ("referenceValue", 1.0),
}
#: The counting kinds' property with ``op: <=`` (a maximum count).
MAX_COUNT = ("maxCount", 1.0)

# Property expressions, read with their spaces removed.
_ATTR = (
    r"teams\[\*\]\.players\.attributes\[['\"]?(?P<a>[^\]'\"]+)['\"]?\]"
    r"(?:\[['\"]?(?P<k>[^\]'\"]+)['\"]?\])?"
)
_TEAM_AVG = re.compile(rf"avg\({_ATTR}\)")
_ALL_AVG = re.compile(rf"avg\(flatten\({_ATTR}\)\)")
_ALL_MAX = re.compile(rf"max\(flatten\({_ATTR}\)\)")
_ALL_MIN = re.compile(rf"min\(flatten\({_ATTR}\)\)")
_FLAT = re.compile(rf"flatten\({_ATTR}\)")
# one named team's players' values, and their average (a rule set of one team names it)
_NAMED = (
    r"teams\[['\"]?(?P<t>[^\]*'\"]+)['\"]?\]\.players\.attributes\[['\"]?(?P<a>[^\]'\"]+)['\"]?\]"
    r"(?:\[['\"]?(?P<k>[^\]'\"]+)['\"]?\])?"
)
_NAMED_EACH = re.compile(_NAMED)
_NAMED_AVG = re.compile(rf"avg\({_NAMED}\)")
_PLAIN = re.compile(_ATTR)
_TEAM_COUNT = re.compile(r"count\(teams\[[^\]]*\]\.players\)")


class LongNumber:
    """A JSON number too long to be read as one: an integer of more digits than Python converts
    (4,300), or a number beyond a float's range (``1e400``).
    :func:`lobbysim.flexmatch.json_text.load_json` keeps it as its text, so that the field holding
    it is named (:meth:`RuleReader.number`) rather than the whole file refused by a conversion
    error."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        if len(self.text) <= 20:
            return self.text
        return f"{self.text[:12]}... ({sum(c.isdigit() for c in self.text):,} digits)"


def _too_long(value: Any) -> str | None:
    """Return the problem with a number too long to read, without its field (None if it is
    not one): a :class:`LongNumber`, or an integer beyond a float's range."""
    if isinstance(value, LongNumber):
        if len(value.text) <= 20:  # 1e400: short, but beyond a float
            return f"the number {value!r} is too large to read (the largest is about 1.8e308)"
        return f"the number {value!r} is too long to read as a number"
    if is_whole(value):
        try:
            float(value)
        except OverflowError:  # beyond a float; its text may be beyond str() too
            digits = digit_count(value)
            return f"the number of about {digits:,} digits is too long to read as a number"
    return None


def quoted(value: Any) -> str:
    """Return ``value`` as a problem shows it: a text quoted, anything else as JSON (a number
    too long to write out, shortened)."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, LongNumber):
        return repr(value)
    if _too_long(value) is not None:
        return "a number too long to write out"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # not JSON data (a rule set given as Python data)
        text = repr(value)
        return text if len(text) <= 60 else f"{text[:57]}..."


class RuleReader:
    """The state of one rule set's reading, its problems (each naming its JSON path), and the
    reading of its rules one at a time (:mod:`lobbysim.flexmatch.read` reads the sections
    around them: the attributes, the teams, the algorithm, the expansions, the mapping)."""

    def __init__(self, data: Mapping[str, Any], mapping: Mapping[str, Any] | None) -> None:
        self.data = data
        self.mapping = mapping
        self.problems: list[str] = []
        self.declared: dict[str, tuple[int, str]] = {}  # name -> (index, type)
        self.game: dict[str, Any] = {}
        #: the teams as read (name, min_players, max_players, quantity), and the ``game.teams``
        #: entries by FlexMatch name (when the game is written as teams)
        self.team_names: list[str] = []  # (quantity names them NAME_1, NAME_2, ...)
        self.team_list: list[dict[str, Any]] = []
        self.team_configs: dict[str, dict[str, Any]] = {}
        #: what the reading notes without refusing (``lobbysim rules show`` prints them)
        self.notes: list[str] = []
        self.players = 0
        self.rules: list[dict[str, Any] | None] = []
        self.balanced = False
        self.clock = "newest"
        self.batching = "none"  # matchmaker.batching (fastestRegion: fastest_region)
        self.batch_sort: tuple[str, ...] = ()  # matchmaker.batch_sort
        #: the FlexMatch property a rule's limit comes from and its factor, where they are not
        #: its kind's (:data:`LIMIT_PROPERTY`), by rule name (None: no property expands it)
        self.limit_property: dict[str, tuple[str | None, float]] = {}

    def problem(self, line: str) -> None:
        self.problems.append(line)

    def number(
        self, value: Any, where: str, *, whole: bool = False, minimum: float | None = None
    ) -> float | None:
        """Return a finite number: a JSON number, not a text (``"200"``), a boolean, or a
        number too long to read (each a problem naming ``where``, the field's JSON path)."""
        long = _too_long(value)
        if long is not None:
            self.problem(f"{where}: {long}")
            return None
        if isinstance(value, str):
            self.problem(
                f"{where}: expected a number, got the text {quoted(value)} (write a number "
                "without quotes)"
            )
            return None
        number = float(value) if is_number(value) else None
        if number is None or not math.isfinite(number):
            self.problem(f"{where}: expected a number, got {quoted(value)}")
            return None
        if whole and not number.is_integer():
            self.problem(f"{where}: expected a whole number, got {quoted(value)}")
            return None
        if minimum is not None and number < minimum:
            self.problem(f"{where}: expected a number >= {minimum:g}, got {quoted(value)}")
            return None
        return number

    def keys(self, obj: Mapping[str, Any], allowed: tuple[str, ...], where: str, what: str) -> None:
        for key in obj:
            if key not in allowed:
                self.problem(
                    f"{where}{'.' if where else ''}{key}: not a property of {what}"
                    + did_you_mean(str(key), list(allowed))
                )

    # --- rules -----------------------------------------------------------------------------

    def attribute(self, name: Any, where: str, wanted: tuple[str, ...]) -> str | None:
        """Return the declared attribute ``name`` if its type is one of ``wanted``."""
        if not isinstance(name, str) or name not in self.declared:
            self.problem(
                f"{where}: {quoted(name)} is not a declared playerAttribute"
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

    def flat_attribute(self, raw: Mapping[str, Any], where: str) -> tuple[str, str | None] | None:
        """Return the attribute X (and the map's key K, if any) of ``measurements:
        ["flatten(teams[*].players.attributes[X])"]`` (or ``...[X][K]``, or without the
        ``flatten``, every player's value the same), None, with the problem noted, for any
        other form."""
        measured = self.expression(raw, "measurements", where)
        if measured is None:
            return None
        flat = _FLAT.fullmatch(measured) or _PLAIN.fullmatch(measured)
        if not flat:
            named = re.match(r"(?:flatten\()?teams\[([^\]*]+)\]", measured)
            why = (
                f" (it names the team {named[1]!r}; lobbysim's teams are interchangeable, split "
                "by the search, so a rule on one named team has no lobbysim form)"
                if named
                else ""
            )
            self.problem(
                f"{where}.measurements: {measured!r} is not a form lobbysim reads: "
                f"flatten(teams[*].players.attributes[X]){why}"
            )
            return None
        return str(flat["a"]), flat["k"]

    def number_of(self, name: Any, key: Any, where: str) -> dict[str, Any] | None:
        """Return the number column a rule reads: ``{attribute: X}`` of a number attribute, or
        ``{attribute: X, key: K}`` of a string_number_map's key (None, the problem noted)."""
        if key is None:
            found = self.attribute(name, where, ("number",))
            return None if found is None else {"attribute": found}
        found = self.attribute(name, where, ("string_number_map",))
        return None if found is None else {"attribute": found, "key": str(key)}

    def expression(self, raw: Mapping[str, Any], key: str, where: str) -> str | None:
        value = raw.get(key)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if not isinstance(value, str):
            self.problem(f"{where}.{key}: expected one property expression, got {quoted(value)}")
            return None
        return "".join(value.split())

    def party(self, raw: Mapping[str, Any], where: str) -> str | None:
        value = raw.get("partyAggregation", "avg")
        if value not in PARTY_IN:
            self.problem(f"{where}.partyAggregation: expected avg, min or max, got {quoted(value)}")
            return None
        return PARTY_IN[value]

    def unsupported(self, raw: Mapping[str, Any], where: str, keys: dict[str, str]) -> bool:
        bad = [key for key in keys if key in raw]
        for key in bad:
            self.problem(f"{where}.{key}: not supported by lobbysim ({keys[key]})")
        return bool(bad)

    def read_rule(self, i: int, raw: Any) -> dict[str, Any] | None:
        where = f"rules[{i}]"
        if not isinstance(raw, Mapping):
            self.problem(f"{where}: expected an object, got {quoted(raw)}")
            return None
        kind = raw.get("type")
        if kind not in RULE_TYPES:
            self.problem(
                f"{where}.type: {quoted(kind)} is not a FlexMatch rule type"
                + did_you_mean(str(kind), list(RULE_TYPES))
            )
            return None
        self.keys(raw, _COMMON + _PROPERTIES[kind], where, f"a FlexMatch {kind} rule")
        name = raw.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,59}", name):
            self.problem(
                f"{where}.name: lobbysim names a rule with a letter or _, then letters, digits, "
                f"_, . and - (at most 60), got {quoted(name)}"
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
            raw,
            where,
            {
                "minDistance": "no lobbysim rule keeps team averages or players at least a "
                "distance apart (a minimum distance from a constant referenceValue reads)"
            },
        ):
            return None
        measured = self.expression(raw, "measurements", where)
        reference = raw.get("referenceValue")
        if measured is None:
            return None
        if not isinstance(reference, str):
            self.problem(
                f"{where}.referenceValue: a distance from a constant ({quoted(reference)}) is "
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
        if team and overall and (team["a"], team["k"]) == (overall["a"], overall["k"]):
            column = self.number_of(team["a"], team["k"], f"{where}.measurements")
            if column is None or distance is None:
                return None
            if self.game.get("mode") == "1v1":
                # two teams of one: each player within d of the pair's mean, |a - b| <= 2d
                party = self.party(raw, where)
                if party is None:
                    return None
                self.limit_property[str(raw.get("name"))] = ("maxDistance", 2.0)
                return {
                    "kind": "skill_distance",
                    **column,
                    "limit": 2.0 * distance,
                    "party": party,
                }
            one_team = self.game.get("mode") == "ffa" and len(self.team_names) == 1
            if one_team:
                self.notes.append(
                    f"{where}: with one team, the team's average is the match's: the rule "
                    "always holds (kept, as team_balance, so that the rule set writes back whole)"
                )
            elif self.game and self.game.get("mode") != "team":
                self.problem(
                    f"{where}.measurements: team averages need two teams of several players, or "
                    f"two of one player; the rule set's teams make a {self.game.get('mode')} game"
                )
                return None
            if raw.get("partyAggregation", "avg") != "avg":
                self.problem(
                    f"{where}.partyAggregation: a distance between team averages averages every "
                    f"player; got {quoted(raw['partyAggregation'])}"
                )
                return None
            return {
                "kind": "team_balance",
                **column,
                "limit": 2.0 * distance,
                "team": "average",
            }
        spread = (_ALL_MAX.fullmatch(measured), _ALL_MIN.fullmatch(reference))
        spread_back = (_ALL_MIN.fullmatch(measured), _ALL_MAX.fullmatch(reference))
        for high, low in (spread, spread_back):
            if high and low and (high["a"], high["k"]) == (low["a"], low["k"]):
                column = self.number_of(high["a"], high["k"], f"{where}.measurements")
                party = self.party(raw, where)
                if column is None or distance is None or party is None:
                    return None
                return {
                    "kind": "skill_distance",
                    **column,
                    "limit": distance,
                    "party": party,
                }
        each = self.mean_distance(raw, where, measured, reference, distance)
        if each is not None:
            return each or None
        self.problem(
            f"{where}.measurements: {measured!r} against {reference!r} is not a form lobbysim "
            "reads: avg(teams[*].players.attributes[X]) against "
            "avg(flatten(teams[*].players.attributes[X])) (team_balance), or "
            "max(flatten(...[X])) against min(flatten(...[X])) (skill_distance)"
        )
        return None

    def mean_distance(
        self,
        raw: Mapping[str, Any],
        where: str,
        measured: str,
        reference: str,
        distance: float | None,
    ) -> dict[str, Any] | None:
        """Each player's value within ``maxDistance`` of the players' average:
        ``flatten(teams[*].players.attributes[X])`` against ``avg(flatten(...[X]))``, or, in a
        rule set of one team ``T``, ``teams[T].players.attributes[X]`` against
        ``avg(teams[T].players.attributes[X])``: ``mean_distance`` (None: not this form; {}:
        this form, with its problems reported)."""
        flat, overall = _FLAT.fullmatch(measured), _ALL_AVG.fullmatch(reference)
        named, named_avg = _NAMED_EACH.fullmatch(measured), _NAMED_AVG.fullmatch(reference)
        if flat and overall and (flat["a"], flat["k"]) == (overall["a"], overall["k"]):
            a, k = flat["a"], flat["k"]
        elif (
            named
            and named_avg
            and (named["t"], named["a"], named["k"])
            == (named_avg["t"], named_avg["a"], named_avg["k"])
            and self.team_names == [named["t"]]
        ):
            a, k = named["a"], named["k"]
        else:
            return None
        column = self.number_of(a, k, f"{where}.measurements")
        party = self.party(raw, where)
        if column is None or distance is None or party is None:
            return {}
        return {"kind": "mean_distance", **column, "limit": distance, "party": party}

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
