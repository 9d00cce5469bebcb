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
#: FlexMatch's ``partyAggregation`` -> a lobbysim rule's ``party``, and back.
PARTY_IN = {"avg": "average", "min": "min", "max": "max"}
PARTY_OUT = {v: k for k, v in PARTY_IN.items()}
#: The FlexMatch property a lobbysim kind's limit comes from, and limit = factor * property.
LIMIT_PROPERTY = {
    "skill_distance": ("maxDistance", 1.0),
    "team_balance": ("maxDistance", 2.0),
    "latency": ("maxLatency", 1.0),
    "overlap": ("minCount", 1.0),
}

# Property expressions, read with their spaces removed.
_ATTR = r"teams\[\*\]\.players\.attributes\[['\"]?(?P<a>[^\]'\"]+)['\"]?\]"
_TEAM_AVG = re.compile(rf"avg\({_ATTR}\)")
_ALL_AVG = re.compile(rf"avg\(flatten\({_ATTR}\)\)")
_ALL_MAX = re.compile(rf"max\(flatten\({_ATTR}\)\)")
_ALL_MIN = re.compile(rf"min\(flatten\({_ATTR}\)\)")
_FLAT = re.compile(rf"flatten\({_ATTR}\)")
_TEAM_COUNT = re.compile(r"count\(teams\[[^\]]*\]\.players\)")


class LongNumber:
    """A JSON number too long to be read as one: an integer of more digits than Python converts
    (4,300), or a number beyond a float's range (``1e400``). :func:`lobbysim.flexmatch.
    flexmatch_read.load_json` keeps it as its text, so that the field holding it is named
    (:meth:`RuleReader.number`) rather than the whole file refused by a conversion error."""

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
        self.players = 0
        self.rules: list[dict[str, Any] | None] = []
        self.balanced = False
        self.clock = "newest"
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
            raw, where, {"minDistance": "lobbysim's limits are maxima between players"}
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
        if team and overall and team["a"] == overall["a"]:
            name = self.attribute(team["a"], f"{where}.measurements", ("number",))
            if name is None or distance is None:
                return None
            if self.game.get("mode") == "1v1":
                # two teams of one: each player within d of the pair's mean, |a - b| <= 2d
                party = self.party(raw, where)
                if party is None:
                    return None
                self.limit_property[str(raw.get("name"))] = ("maxDistance", 2.0)
                return {
                    "kind": "skill_distance",
                    "attribute": name,
                    "limit": 2.0 * distance,
                    "party": party,
                }
            if self.game and self.game.get("mode") != "team":
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
        measured = raw.get("measurements")
        texts = measured if isinstance(measured, list) else [measured]
        texts = [*texts, raw.get("referenceValue")]
        if any(isinstance(m, str) and _TEAM_COUNT.search("".join(m.split())) for m in texts):
            # the EqualTeamSizes idiom: count(teams[a].players) = count(teams[b].players)
            self.problem(
                f"{where}.measurements: a comparison of team sizes (count(teams[...].players)) "
                "is not supported by lobbysim: its teams have fixed sizes, where such a rule "
                "always holds, and it does not model teams of a range of sizes yet"
            )
            return None
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
        if self.declared.get(flat, (0, ""))[1] == "number":
            return self.number_comparison(raw, where, flat)
        name = self.attribute(flat, f"{where}.measurements", ("string",))
        operation = raw.get("operation")
        if operation not in ("=", "!="):
            self.problem(
                f"{where}.operation: without a referenceValue FlexMatch compares players with "
                f"'=' or '!=', got {quoted(operation)}"
            )
            return None
        if raw.get("partyAggregation", "avg") != "avg":
            self.problem(
                f"{where}.partyAggregation: a string attribute's values are not aggregated, got "
                f"{quoted(raw['partyAggregation'])}"
            )
            return None
        if name is None:
            return None
        return {"kind": "equal" if operation == "=" else "distinct", "attribute": name}

    def number_comparison(
        self, raw: Mapping[str, Any], where: str, flat: str
    ) -> dict[str, Any] | None:
        """``=`` on a number attribute: every ticket's value (aggregated by
        ``partyAggregation``) the same, a ``skill_distance`` of limit 0, which no expansion
        relaxes; ``!=`` (every value different) has no lobbysim kind."""
        name = self.attribute(flat, f"{where}.measurements", ("number",))
        operation = raw.get("operation")
        if operation != "=":
            reason = (
                "every player's value different is no lobbysim rule on a number"
                if operation == "!="
                else "without a referenceValue FlexMatch compares players with '=' or '!='"
            )
            self.problem(f"{where}.operation: {quoted(operation)} on a number attribute: {reason}")
            return None
        party = self.party(raw, where)
        if name is None or party is None:
            return None
        self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return {"kind": "skill_distance", "attribute": name, "limit": 0.0, "party": party}

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
                f"{where}.operation: {quoted(operation)} is not supported by lobbysim (only "
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
                f"{where}.partyAggregation: {quoted(party)} is not supported by lobbysim (a "
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
