"""The FlexMatch rule types read beyond distances and latency: ``comparison``, ``collection``,
``compound`` and the sorts ``absoluteSort`` and ``distanceSort``.

:class:`RuleTypes` extends :class:`lobbysim.flexmatch.rules.RuleReader` (the reading state,
the numbers, the attributes, the distance rules) with them; :mod:`lobbysim.flexmatch.read`
reads a whole rule set with it. The mapping is in the package docstring
(:mod:`lobbysim.flexmatch`):

* ``comparison`` without ``referenceValue``: ``=``/``!=`` on a string, ``equal``/``distinct``;
  ``=`` on a number, ``skill_distance`` of limit 0; ``!=`` on a number (or a string_number_map's
  key), ``distinct`` (every player's own value, ``partyAggregation`` left at ``avg`` as on a
  string). With a constant ``referenceValue``:
  ``compare`` (each ticket's number by ``partyAggregation``, or each player's string, against
  it; ``referenceValue`` is what expansions relax). The ``EqualTeamSizes`` idiom,
  ``count(teams[a].players) = count(teams[b].players)``, is ``team_sizes`` of limit 0 where the
  two teams have one fixed size (it always holds there).
* ``collection`` on ``flatten(teams[*].players.attributes[X])``: ``intersection`` ->
  ``overlap``, ``contains`` (a constant value) -> ``contains``, ``reference_intersection_count``
  (a constant list) -> ``reference_overlap``; ``minCount`` a minimum, ``maxCount`` a maximum
  (``op: <=``; with both, a second rule ``NAME.max``); ``partyAggregation`` ``union`` (the
  default) or ``intersection``.
* ``compound``: its ``statement``, written canonically (``and(A, B)``).
* ``absoluteSort``, ``distanceSort``: ``absolute_sort``, ``distance_sort`` with ``direction``,
  ``attribute``, ``map_key`` and ``party``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lobbysim.flexmatch.rules import RuleReader, quoted
from lobbysim.scenario.compound import format_statement, parse_statement

_SET_INTERSECTION = re.compile(
    r"set_intersection\(flatten\(teams\[\*\]\.players\.attributes\[['\"]?(?P<a>[^\]'\"]+)['\"]?\]\)\)"
)
_TEAM_AVERAGE = re.compile(r"avg\(teams\[\*\]\.players\.attributes\[[^\]]+\](\[[^\]]+\])?\)")
_COUNTS = {f: f"{f}(count(teams[*].players))" for f in ("max", "min")}
_TEAM_COUNT = re.compile(r"count\(teams\[(?P<t>[^\]*,]+)\]\.players\)")
_ANY_COUNT = re.compile(r"count\(teams\[[^\]]*\]\.players\)")
_OPERATIONS = ("=", "!=", "<", "<=", ">", ">=")
_SORT_KINDS = {"absoluteSort": "absolute_sort", "distanceSort": "distance_sort"}


def _is_expression(value: Any) -> bool:
    """Whether a ``referenceValue`` text is a property expression, not a constant string."""
    return isinstance(value, str) and bool(re.search(r"[()\[\]]", value))


class RuleTypes(RuleReader):
    """:class:`RuleReader` with the comparison, collection, compound and sort rule types."""

    def __init__(self, data: Mapping[str, Any], mapping: Mapping[str, Any] | None) -> None:
        super().__init__(data, mapping)
        #: the teams' names (``quantity`` names them NAME_1, NAME_2, ...), and their sizes
        self.team_names: list[str] = []
        #: a second lobbysim rule a FlexMatch rule reads into (a collection's maxCount when
        #: it has a minCount too), appended after it
        self.pending: list[dict[str, Any]] = []
        #: the lobbysim rule an expansion of (FlexMatch rule, property) relaxes, where it is
        #: not the rule of that name
        self.aliases: dict[tuple[str, str], str] = {}
        #: the lobbysim names a FlexMatch rule read into (a compound names them all)
        self.read_as: dict[str, list[str]] = {}

    # --- comparison ------------------------------------------------------------------------

    def rule_comparison(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        measured = raw.get("measurements")
        texts = measured if isinstance(measured, list) else [measured]
        texts = [*texts, raw.get("referenceValue")]
        if any(isinstance(m, str) and _ANY_COUNT.search("".join(m.split())) for m in texts):
            return self.team_size_comparison(raw, where)
        operation = raw.get("operation")
        if operation not in _OPERATIONS:
            self.problem(
                f"{where}.operation: expected one of {', '.join(_OPERATIONS)}, got "
                f"{quoted(operation)}"
            )
            return None
        if "referenceValue" in raw:
            return self.reference_comparison(raw, where, operation)
        flat = self.flat_attribute(raw, where)
        if flat is None:
            return None
        if flat[1] is not None or self.declared.get(flat[0], (0, ""))[1] == "number":
            return self.number_comparison(raw, where, flat)
        name = self.attribute(flat[0], f"{where}.measurements", ("string",))
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
        self, raw: Mapping[str, Any], where: str, flat: tuple[str, str | None]
    ) -> dict[str, Any] | None:
        """``=`` between players on a number: every ticket's value (aggregated by
        ``partyAggregation``) the same, a ``skill_distance`` of limit 0, which no expansion
        relaxes. ``!=``: every value different, ``distinct`` on the number (as on a string,
        each player's own value counts, a party's members' with the whole match, so
        ``partyAggregation`` may only be ``avg``, FlexMatch's default); nothing relaxes it."""
        column = self.number_of(flat[0], flat[1], f"{where}.measurements")
        operation = raw.get("operation")
        if operation == "!=":
            if raw.get("partyAggregation", "avg") != "avg":
                self.problem(
                    f"{where}.partyAggregation: lobbysim's distinct compares every player's own "
                    "value (a party's members' too), aggregating none; expected avg (the "
                    f"default) or none, got {quoted(raw['partyAggregation'])}"
                )
                return None
            if column is None:
                return None
            self.limit_property[str(raw.get("name"))] = (None, 1.0)
            return {"kind": "distinct", **column}
        if operation != "=":
            self.problem(
                f"{where}.operation: {quoted(operation)} on a number attribute: without a "
                "referenceValue FlexMatch compares players with '=' or '!='"
            )
            return None
        party = self.party(raw, where)
        if column is None or party is None:
            return None
        self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return {"kind": "skill_distance", **column, "limit": 0.0, "party": party}

    def reference_comparison(
        self, raw: Mapping[str, Any], where: str, operation: str
    ) -> dict[str, Any] | None:
        """A comparison with a constant ``referenceValue``: ``compare``."""
        reference = raw.get("referenceValue")
        if _is_expression(reference):
            self.problem(
                f"{where}.referenceValue: {reference!r} is computed from the match; lobbysim's "
                "compare rule holds each ticket's value against a constant (a number, or a "
                "string of a string attribute), and no lobbysim rule compares a player's value "
                "with a figure of the others'"
            )
            return None
        measured = self.expression(raw, "measurements", where)
        if measured is None:
            return None
        if re.match(r"(avg|min|max|sum|median|stddev|count)\(", measured):
            self.problem(
                f"{where}.measurements: {measured!r} against a constant bounds a figure of the "
                "whole match, which no lobbysim rule does (lobbysim's compare bounds each "
                "ticket's value: flatten(teams[*].players.attributes[X]))"
            )
            return None
        flat = self.flat_attribute(raw, where)
        if flat is None:
            return None
        name, key = flat
        if key is None and self.declared.get(name, (0, ""))[1] == "string":
            if operation not in ("=", "!="):
                self.problem(
                    f"{where}.operation: a string attribute compares with '=' or '!=', got "
                    f"{operation!r}"
                )
                return None
            if not isinstance(reference, str) or "partyAggregation" in raw:
                what = "partyAggregation" if isinstance(reference, str) else "referenceValue"
                self.problem(
                    f"{where}.{what}: a string attribute compares each player's value with a "
                    f"string (not aggregated), got {quoted(raw.get(what))}"
                )
                return None
            self.limit_property[str(raw.get("name"))] = (None, 1.0)
            return {"kind": "compare", "attribute": name, "op": operation, "value": reference}
        column = self.number_of(name, key, f"{where}.measurements")
        limit = self.number(reference, f"{where}.referenceValue")
        party = self.party(raw, where)
        if column is None or limit is None or party is None:
            return None
        if operation in ("=", "!="):  # no direction to relax
            self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return {"kind": "compare", **column, "op": operation, "limit": limit, "party": party}

    def team_size_comparison(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        """The ``EqualTeamSizes`` idiom: ``count(teams[a].players) = count(teams[b].players)``,
        kept as ``team_sizes`` (limit 0) where two teams have one fixed size."""
        measured = self.expression(raw, "measurements", where)
        reference = raw.get("referenceValue")
        if measured is None:
            return None
        a = _TEAM_COUNT.fullmatch(measured)
        b = (
            _TEAM_COUNT.fullmatch("".join(reference.split()))
            if isinstance(reference, str)
            else None
        )
        idiom = a and b and raw.get("operation") == "=" and a["t"] != b["t"]
        if not idiom:
            self.problem(
                f"{where}.measurements: a comparison of team sizes reads only as "
                "count(teams[a].players) = count(teams[b].players), two teams' sizes equal; "
                f"got {measured!r} {raw.get('operation')} {quoted(reference)}"
            )
            return None
        assert a is not None and b is not None
        unknown = [t for t in (a["t"], b["t"]) if t not in self.team_names]
        if self.game and unknown:  # (teams refused: their names are not all known)
            self.problem(
                f"{where}.measurements: {unknown[0]!r} names no team of the rule set "
                f"({', '.join(self.team_names)})"
            )
            return None
        if self.game and self.game.get("mode") not in ("team", "1v1"):
            self.problem(
                f"{where}.measurements: equal team sizes need two teams; the rule set's teams "
                f"make a {self.game.get('mode')} game"
            )
            return None
        self.unsupported(raw, where, {"partyAggregation": "team sizes are not aggregated"})
        self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return {"kind": "team_sizes", "limit": 0.0}

    # --- distance from a constant ----------------------------------------------------------

    def rule_distance(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        reference = raw.get("referenceValue")
        measured = raw.get("measurements")
        measured = measured[0] if isinstance(measured, list) and len(measured) == 1 else measured
        if (
            isinstance(reference, str)
            and isinstance(measured, str)
            and _TEAM_AVERAGE.fullmatch("".join(measured.split()))
            and self.game.get("mode") == "ffa"
            and len(self.team_names) > 1
        ):
            self.ffa_team_averages(where)
            return None
        sizes = (_COUNTS["max"], _COUNTS["min"])
        if isinstance(reference, str) and isinstance(measured, str):
            pair = ("".join(measured.split()), "".join(reference.split()))
            if pair in (sizes, sizes[::-1]):
                return self.team_size_distance(raw, where)
        if isinstance(reference, str) or reference is None:
            return super().rule_distance(raw, where)
        return self.constant_distance(raw, where, reference)

    def team_size_distance(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        """``max(count(teams[*].players))`` within ``maxDistance`` of ``min(...)``: the teams'
        sizes differ by at most d, ``team_sizes`` of limit d (two teams of one size: it always
        holds)."""
        if self.unsupported(
            raw,
            where,
            {
                "minDistance": "teams' sizes at least a distance apart "
                "never hold for lobbysim's teams of one size",
                "partyAggregation": "team sizes are not aggregated",
            },
        ):
            return None
        if "maxDistance" not in raw:
            self.problem(f"{where}.maxDistance: a distance rule needs one")
            return None
        limit = self.number(raw["maxDistance"], f"{where}.maxDistance", minimum=0)
        if limit is None:
            return None
        if self.game and self.game.get("mode") not in ("team", "1v1"):
            self.problem(
                f"{where}.measurements: team sizes need two teams; the rule set's teams make a "
                f"{self.game.get('mode')} game"
            )
            return None
        self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return {"kind": "team_sizes", "limit": limit}

    def ffa_team_averages(self, where: str) -> None:
        """Team averages against the match's in a free-for-all: refused, saying what it is."""
        if len(self.team_names) == 1:
            what = (
                "with one team its average is the match's, so the rule always holds and "
                "constrains nothing; remove it"
            )
        else:
            what = (
                "with teams of one player it holds each player within maxDistance of the "
                "match's average, which no lobbysim rule bounds"
            )
        self.problem(
            f"{where}.measurements: team averages need two teams of several players, or two of "
            f"one player; the rule set's teams make a ffa game: {what}"
        )

    def constant_distance(
        self, raw: Mapping[str, Any], where: str, reference: Any
    ) -> dict[str, Any] | None:
        """A distance of each ticket's value from a constant ``referenceValue``: ``compare``
        with op ``within`` (``maxDistance``) or ``beyond`` (``minDistance``; with both, a
        second rule ``NAME.min``)."""
        measured = self.expression(raw, "measurements", where)
        if measured is None:
            return None
        if re.match(r"(avg|min|max|sum|median|stddev|count)\(", measured):
            self.problem(
                f"{where}.measurements: {measured!r} from a constant bounds a figure of the "
                "whole match, which no lobbysim rule does (lobbysim bounds each ticket's "
                "distance: flatten(teams[*].players.attributes[X]))"
            )
            return None
        flat = self.flat_attribute(raw, where)
        center = self.number(reference, f"{where}.referenceValue")
        party = self.party(raw, where)
        if flat is None or center is None or party is None:
            return None
        column = self.number_of(flat[0], flat[1], f"{where}.measurements")
        bounds = [key for key in ("maxDistance", "minDistance") if key in raw]
        if not bounds:
            self.problem(
                f"{where}.maxDistance: a distance rule needs a maxDistance or a minDistance"
            )
            return None
        limits = [self.number(raw[k], f"{where}.{k}", minimum=0) for k in bounds]
        if column is None or None in limits:
            return None
        name = str(raw.get("name"))
        out = []
        for key, limit in zip(bounds, limits, strict=True):
            op = "within" if key == "maxDistance" else "beyond"
            one = {"kind": "compare", **column, "op": op, "center": center, "limit": limit}
            out.append(one | {"party": party})
        self.limit_property[name] = (bounds[0], 1.0)
        if len(out) == 2:
            out[1]["name"] = f"{name}.min"
            self.aliases[(name, "minDistance")] = out[1]["name"]
            self.pending.append({**out[1], "clock": self.clock})
            self.read_as[name] = [name, out[1]["name"]]
        return out[0]

    # --- collection ------------------------------------------------------------------------

    def rule_collection(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        operation = raw.get("operation")
        kinds = {
            "intersection": "overlap",
            "contains": "contains",
            "reference_intersection_count": "reference_overlap",
        }
        if operation not in kinds:
            self.problem(
                f"{where}.operation: expected intersection, contains or "
                f"reference_intersection_count, got {quoted(operation)}"
            )
            return None
        kind = kinds[operation]
        flat = self.flat_attribute(raw, where)
        if flat is None:
            return None
        if flat[1] is not None:
            self.problem(f"{where}.measurements: a collection rule reads a string_list")
            return None
        name = self.attribute(flat[0], f"{where}.measurements", ("string_list",))
        rule: dict[str, Any] = {"kind": kind, "attribute": name}
        party = raw.get("partyAggregation", "union")
        if party not in ("union", "intersection"):
            self.problem(
                f"{where}.partyAggregation: a collection pools a party's lists by union (the "
                f"default) or intersection, got {quoted(party)}"
            )
            return None
        if party == "union":  # lobbysim's default is every member's list (intersection)
            rule["party"] = "union"
        reference = raw.get("referenceValue")
        if kind == "overlap" and "referenceValue" in raw:
            self.problem(
                f"{where}.referenceValue: an intersection has none (it intersects the lists)"
            )
            return None
        if kind == "contains":
            if not isinstance(reference, str) or _is_expression(reference):
                self.problem(
                    f"{where}.referenceValue: contains looks for one constant value, got "
                    f"{quoted(reference)}"
                )
                return None
            rule["value"] = reference
        common = (
            _SET_INTERSECTION.fullmatch("".join(reference.split()))
            if isinstance(reference, str)
            else None
        )
        if kind == "reference_overlap" and common:  # the values every player's list holds
            other = self.attribute(common["a"], f"{where}.referenceValue", ("string_list",))
            if other is None:
                return None
            rule["reference"] = other
        elif (
            kind == "reference_overlap"
            and isinstance(reference, str)
            and "players[playerId]" in reference
        ):
            self.problem(
                f"{where}.referenceValue: {reference!r} lists the players' ids; lobbysim's players "
                "have no ids a rule set names (a block list has no lobbysim form)"
            )
            return None
        elif kind == "reference_overlap":
            if not (
                isinstance(reference, list)
                and reference
                and all(isinstance(v, str) for v in reference)
            ):
                self.problem(
                    f"{where}.referenceValue: lobbysim reads a constant list of strings here, "
                    f"got {quoted(reference)}, or the values common to every player's list of "
                    "another attribute, set_intersection(flatten(teams[*].players.attributes[Y]))"
                )
                return None
            rule["values"] = list(reference)
        return self.counts(raw, where, rule, name)

    def counts(
        self, raw: Mapping[str, Any], where: str, rule: dict[str, Any], name: str | None
    ) -> dict[str, Any] | None:
        """Return a collection rule with its ``minCount`` (a minimum), or its ``maxCount``
        (``op: <=``); with both, the maximum is a second rule ``NAME.max`` (pending)."""
        bounds = [key for key in ("minCount", "maxCount") if key in raw]
        if not bounds:
            self.problem(f"{where}.minCount: a collection rule needs a minCount or a maxCount")
            return None
        counts = [self.number(raw[k], f"{where}.{k}", whole=True, minimum=0) for k in bounds]
        if name is None or None in counts:
            return None
        rule_name = str(raw.get("name"))
        out = []
        for key, count in zip(bounds, counts, strict=True):
            one = {**rule, "limit": count}
            if key == "maxCount":
                one["op"] = "<="
                if len(bounds) == 2:
                    one["name"] = f"{rule_name}.max"
                    self.aliases[(rule_name, "maxCount")] = one["name"]
            out.append(one)
        if len(out) == 2:
            self.pending.append({**out[1], "clock": self.clock})
            self.read_as[rule_name] = [rule_name, f"{rule_name}.max"]
        return out[0]

    # --- compound and sorts ----------------------------------------------------------------

    def rule_compound(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        statement = raw.get("statement")
        if not isinstance(statement, str):
            self.problem(
                f"{where}.statement: expected a statement such as and(A, B), got "
                f"{quoted(statement)}"
            )
            return None
        try:
            tree, names = parse_statement(statement)
        except ValueError as exc:
            self.problem(f"{where}.statement: {statement!r}: {exc}")
            return None
        earlier: dict[str, str] = {}
        for rule in self.data.get("rules", [])[: int(where[6:-1])]:
            if isinstance(rule, Mapping) and isinstance(rule.get("name"), str):
                earlier[rule["name"]] = str(rule.get("type"))
        for name in names:
            if name not in earlier:
                self.problem(f"{where}.statement: {name!r} names no rule listed before it")
                return None
            if earlier[name] in ("batchDistance", "absoluteSort", "distanceSort"):
                self.problem(
                    f"{where}.statement: {name!r} is a {earlier[name]} rule, which FlexMatch "
                    "does not allow in a compound rule"
                )
                return None

        def rename(node: Any) -> Any:
            if isinstance(node, str):
                both = self.read_as.get(node)
                return ("and", both) if both else node
            return (node[0], [rename(c) for c in node[1]])

        self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return {"kind": "compound", "statement": format_statement(rename(tree))}

    def rule_sort(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        direction = raw.get("sortDirection", "ascending")
        if direction not in ("ascending", "descending"):
            self.problem(
                f"{where}.sortDirection: expected ascending or descending, got {quoted(direction)}"
            )
            return None
        name = self.attribute(
            raw.get("sortAttribute"), f"{where}.sortAttribute", ("number", "string_number_map")
        )
        party = self.party(raw, where)
        if name is None or party is None:
            return None
        rule: dict[str, Any] = {
            "kind": _SORT_KINDS[str(raw.get("type"))],
            "attribute": name,
            "direction": direction,
            "party": party,
        }
        is_map = self.declared[name][1] == "string_number_map"
        map_key = raw.get("mapKey")
        if is_map and map_key not in ("minValue", "maxValue"):
            self.problem(
                f"{where}.mapKey: a sort on the string_number_map {name!r} takes minValue or "
                f"maxValue, got {quoted(map_key)}"
            )
            return None
        if not is_map and "mapKey" in raw:
            self.problem(
                f"{where}.mapKey: only for a string_number_map attribute ({name!r} is a number)"
            )
            return None
        if is_map:
            rule["map_key"] = map_key
        self.limit_property[str(raw.get("name"))] = (None, 1.0)
        return rule

    def rule_absoluteSort(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        return self.rule_sort(raw, where)

    def rule_distanceSort(self, raw: Mapping[str, Any], where: str) -> dict[str, Any] | None:
        return self.rule_sort(raw, where)
