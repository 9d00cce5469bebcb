"""An independent checker of FlexMatch rules over a run's records (a test helper module).

Written from the Amazon GameLift FlexMatch developer guide's rule-set reference, not from
lobbysim's import (:mod:`lobbysim.flexmatch` is never imported here): it reads the FlexMatch JSON
itself, and a run's records (games, participants with the rule columns of
:func:`lobbysim.records.rows.rule_columns`, waits), and returns every violation of every rule
in every game, when the game formed and at each back-fill.

**What a rule means** (the guide's reading, a ticket being a solo player or a whole party, its
value of a number attribute its players' combined by the rule's ``partyAggregation``, ``avg``
by default):

* ``batchDistance`` on a number: the largest and smallest ticket values differ by at most
  ``maxDistance``; on a string: every player has the same value.
* ``distance``: ``avg(teams[*].players.attributes[X])`` against
  ``avg(flatten(teams[*].players.attributes[X]))``: every team's average within ``maxDistance``
  of the match's (``minDistance``: at least); ``max(flatten(...[X]))`` against
  ``min(flatten(...[X]))``: the largest ticket value within ``maxDistance`` of the smallest;
  ``max(count(teams[*].players))`` against ``min(count(teams[*].players))``: the largest
  team's number of players less the smallest's (every team counted, an empty one too).
* ``comparison`` with no ``referenceValue``, on ``flatten(teams[*].players.attributes[X])``:
  ``=`` every value the same (a number: every ticket's), ``!=`` every player's different.
* ``comparison`` with a constant ``referenceValue``, on ``teams[T].players.attributes[X]``
  (``T`` a team's name, or ``*`` for every team; in ``flatten(...)`` or not): every ticket's
  value (a number: its players' combined by ``partyAggregation``; a string: each player's)
  stands in ``operation`` (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``; a string only ``=``
  and ``!=``) to the reference. ``count(teams[A].players)`` against ``count(teams[B].players)``:
  the two teams' numbers of players stand in ``operation``.
* ``collection`` (a ticket's list is its players' lists combined by ``partyAggregation``:
  ``union``, the default, or ``intersection``), each count at least ``minCount`` and at most
  ``maxCount``: ``intersection`` on ``flatten(teams[*].players.attributes[X])``, the number of
  values common to every ticket's list; ``contains`` (``referenceValue`` a string) on
  ``flatten(teams[T].players.attributes[X])``, the number of lists holding the reference (the
  guide does not say whether a party counts once or per player: records with a party ticket
  are refused); ``reference_intersection_count`` on ``flatten(teams[T]...[X])``, for each
  ticket's list, the number of its values in the reference, which is a list of strings or
  ``set_intersection(flatten(teams[*].players.attributes[Y]))``, the values common to every
  ticket's list of ``Y``.
* ``compound``: its ``statement`` combines rules defined before it with ``and``, ``or`` (each
  of two or more arguments), ``xor`` (exactly one argument true) and ``not`` (one argument),
  each rule read as holding or not at the match's age; a rule a compound statement names is
  checked only through it (else an ``or`` could never let a match break one of its parts). A
  ``batchDistance``, sort or compound rule may not be named in one, and a compound rule has
  no expansions (the guide).
* a team named in a property expression: the teams of the records are the rule set's team
  definitions in order, one with ``quantity`` q > 1 giving q teams named ``<name>_1`` ...
  ``<name>_q``; a game of one team definition has every seat in it (a free-for-all's records
  have no team).
* ``latency``: every ticket's latency to the match's location (its players' combined by
  ``partyAggregation``) at most ``maxLatency``; with ``maxDistance`` (``distanceReference:
  min``) each ticket's latency there exceeds its best by at most that.
* ``absoluteSort`` / ``distanceSort`` order candidates and bar no match: nothing to check.
* the teams: at formation each team has between its ``minPlayers`` and ``maxPlayers``.

**The clock.** A limit is the rule's value, or that of the last expansion step whose
``waitTimeSeconds`` the match's age has reached, the age being the youngest ticket's
(``expansionAgeSelection: newest``, the default) or the oldest's (``oldest``); a ticket's age is
its wait when the match formed (the queue spell of each of its players that ended when the seat
was taken: the waits records, ``left_queue == joined``; a party's the longest of its players').

**Back-fill** (FlexMatch matches a back-fill ticket, carrying the players in the match, through
the same rule set): a seat taken after the start (``joined > start``) must keep every rule with
the players seated at that moment (those before it, in record order, still seated); the seated
players are one ticket whose age counts from ``seat_opened`` (which must be the moment a quit
opened a seat of that team), the new player's ticket its own wait; each seated player's values
stay those of their own seat. Team sizes are not checked at a back-fill beyond ``maxPlayers``.
Records without a ``seat_opened`` column (lobbysim writes none under a rule set whose rules
read nothing) are read only if nothing relaxes (no rule but sorts, no team expansion): a
back-fill's clock is then no matter.

A rule type, property or expression not read here raises :class:`NotUnderstood`: never a silent
pass. Comparisons allow a relative slack of 1e-9 (the engine's and the guide's forms of a limit
may round differently).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

#: A record column of a seat's value of attribute X.
ATTR = "attr_{}"
#: The relative slack of every comparison with a limit.
SLACK = 1e-9

_FLAT = r"flatten\(teams\[\*\]\.players\.attributes\[(\w[\w.-]*)\]\)"
_TEAMS = r"teams\[\*\]\.players\.attributes\[(\w[\w.-]*)\]"
#: ``teams[T].players.attributes[X]`` in ``flatten(...)`` or not: T (a name or ``*``) and X.
_TEAM_ATTR = re.compile(
    r"(?:flatten\()?teams\[(\*|[^\[\]*]+)\]\.players\.attributes\[(\w[\w.-]*)\]\)?"
)
_COUNT = re.compile(r"count\(teams\[([^\[\]*]+)\]\.players\)")
_COMMON = re.compile(rf"set_intersection\({_FLAT}\)")
_SORTS = ("absoluteSort", "distanceSort")
_KNOWN = {
    "batchDistance": {"batchAttribute", "maxDistance", "partyAggregation"},
    "distance": {
        "measurements",
        "referenceValue",
        "maxDistance",
        "minDistance",
        "partyAggregation",
    },
    "comparison": {"measurements", "referenceValue", "operation", "partyAggregation"},
    "collection": {
        "measurements",
        "referenceValue",
        "operation",
        "minCount",
        "maxCount",
        "partyAggregation",
    },
    "latency": {"maxLatency", "maxDistance", "distanceReference", "partyAggregation"},
    "compound": {"statement"},
}
#: The properties of each rule type whose value is a limit (an expansion may target them).
_LIMITS = {
    "batchDistance": ("maxDistance",),
    "distance": ("maxDistance", "minDistance"),
    "collection": ("minCount", "maxCount"),
    "latency": ("maxLatency", "maxDistance"),
}
_OPERATIONS = ("=", "!=", "<", "<=", ">", ">=")
_LABELS = {"name", "type", "description"}


class NotUnderstood(ValueError):
    """A rule set holds something this checker does not read (it says what, never passes)."""


@dataclass(frozen=True)
class Violation:
    """A rule a game broke: when (``formed`` or ``backfill``, at minute ``time``), the value
    measured and the limit in force then."""

    game_id: int
    rule: str
    value: float
    limit: float
    when: str
    time: float


@dataclass
class Report:
    """What a check found: the violations, and how many matches and back-fills it checked."""

    violations: list[Violation] = field(default_factory=list)
    games: int = 0
    backfills: int = 0
    rules_checked: int = 0


@dataclass(frozen=True)
class _Rule:
    """One FlexMatch rule as read: its type, what it measures, and its limit by age."""

    name: str
    kind: str
    attribute: str | None
    data: Mapping[str, Any]
    prop: str | None  # the property whose value is the limit
    steps: tuple[tuple[float, float], ...]  # (waitTimeSeconds, value), the first at 0
    #: Every limit property the rule gives, with its steps (``steps`` is ``prop``'s).
    limits: Mapping[str, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    #: The team a comparison or collection measures (None: every team).
    team: str | None = None
    #: A comparison's or collection's reference: ``("value", v)`` a constant, ``("count",
    #: B)`` the players of team B, ``("list", values)``, ``("common", Y)`` the values common
    #: to every ticket's list of Y; None: none.
    reference: tuple[str, Any] | None = None
    #: A compound rule's statement as a tree: a rule's name, or ``(operator, [trees])``.
    statement: Any = None

    def limit(self, age_seconds: float) -> float:
        """Return the limit in force for a match ``age_seconds`` old."""
        return _stepped(self.steps, age_seconds)

    def limit_of(self, prop: str, age_seconds: float) -> float | None:
        """Return the value of limit property ``prop`` in force at ``age_seconds`` (None: the
        rule does not give it)."""
        steps = self.limits.get(prop)
        return None if steps is None else _stepped(steps, age_seconds)

    @property
    def columns(self) -> list[str]:
        """The attributes whose record columns the rule reads."""
        out = [] if self.attribute is None else [self.attribute.split("#")[0]]
        if self.reference is not None and self.reference[0] == "common":
            out.append(str(self.reference[1]))
        return out


def _stepped(steps: Sequence[tuple[float, float]], age_seconds: float) -> float:
    """Return the value of the last step whose wait ``age_seconds`` has reached."""
    value = steps[0][1]
    for wait, step in steps[1:]:
        if age_seconds >= wait * (1 - SLACK) - SLACK:
            value = step
    return value


def read_rule_set(source: str | Path | Mapping[str, Any]) -> tuple[list[_Rule], str, list[Any]]:
    """Read a FlexMatch rule set: its rules, its age selection, its teams.

    Raises:
        NotUnderstood: a rule type, property or expression this checker does not read.
    """
    data: Mapping[str, Any]
    if isinstance(source, Mapping):
        data = source
    else:
        data = json.loads(_without_comments(Path(source).read_text(encoding="utf-8")))
    algorithm = data.get("algorithm") or {}
    age = algorithm.get("expansionAgeSelection", "newest")
    if age not in ("newest", "oldest"):
        raise NotUnderstood(f"algorithm.expansionAgeSelection {age!r}")
    expansions: dict[str, list[tuple[float, float]]] = {}
    for k, expansion in enumerate(data.get("expansions") or []):
        target = str(expansion.get("target", ""))
        match = re.fullmatch(r"(rules|teams)\[([^\]]+)\]\.(\w+)", target)
        if match is None:
            raise NotUnderstood(f"expansions[{k}].target {target!r}")
        steps = [(float(s["waitTimeSeconds"]), float(s["value"])) for s in expansion["steps"]]
        expansions[target] = sorted(steps)
    rules: list[_Rule] = []
    for entry in data.get("rules") or []:
        rules.append(_read_rule(entry, expansions, {r.name: r for r in rules}))
    teams = [dict(team) for team in data.get("teams") or []]
    for team in teams:
        for prop in ("minPlayers", "maxPlayers"):
            target = f"teams[{team['name']}].{prop}"
            team.setdefault("_steps", {})[prop] = (
                (0.0, float(team[prop])),
                *expansions.pop(target, []),
            )
    unused = [t for t in expansions if not t.startswith("rules[")]
    if unused:
        raise NotUnderstood(f"expansion target {unused[0]!r}")
    return rules, age, teams


def _without_comments(text: str) -> str:
    """Return JSON text with its ``//`` and ``/* */`` comments (outside strings) blanked."""
    out: list[str] = []
    k, n = 0, len(text)
    in_string = False
    while k < n:
        c = text[k]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[k + 1 : k + 2])
                k += 2
                continue
            in_string = c != '"'
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", k):
            end = text.find("\n", k)
            k = n if end < 0 else end
            continue
        elif text.startswith("/*", k):
            end = text.find("*/", k + 2)
            out.append(" ")
            k = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        k += 1
    return "".join(out)


def _read_rule(
    rule: Mapping[str, Any],
    expansions: dict[str, list[tuple[float, float]]],
    before: Mapping[str, _Rule],
) -> _Rule:
    """Read one rule (``before``: the rules defined before it, by name)."""
    name, kind = str(rule.get("name")), str(rule.get("type"))
    if kind in _SORTS:
        return _Rule(name, kind, None, rule, None, ((0.0, math.nan),))
    known = _KNOWN.get(kind)
    if known is None:
        raise NotUnderstood(f"rule {name!r}: type {kind!r} is not read by the checker")
    extra = set(rule) - known - _LABELS
    if extra:
        raise NotUnderstood(f"rule {name!r}: property {sorted(extra)[0]!r} is not read")
    if kind == "compound":
        for target in expansions:
            if target.startswith(f"rules[{name}]."):
                raise NotUnderstood(f"expansion target {target!r}: a compound rule has none")
        tree = _statement(name, str(rule.get("statement", "")), before)
        return _Rule(name, kind, None, rule, None, ((0.0, math.nan),), statement=tree)
    attribute = None
    prop: str | None = None
    team: str | None = None
    reference: tuple[str, Any] | None = None
    if kind == "batchDistance":
        attribute = str(rule["batchAttribute"])
        prop = "maxDistance" if "maxDistance" in rule else None
    elif kind == "distance":
        measured = _one(rule.get("measurements")).replace(" ", "")
        if measured == "max(count(teams[*].players))":  # the largest team less the smallest
            if (
                str(rule.get("referenceValue", "")).replace(" ", "")
                != "min(count(teams[*].players))"
            ):
                raise NotUnderstood(
                    f"rule {name!r}: distance of {measured!r} from {rule.get('referenceValue')!r}"
                )
            reference = ("sizes", None)
        else:
            attribute = _distance_attribute(name, rule)
        prop = "maxDistance" if "maxDistance" in rule else "minDistance"
    elif kind == "comparison":
        attribute, team, reference = _comparison(name, rule)
    elif kind == "collection":
        attribute, team, reference = _collection(name, rule)
        if rule.get("partyAggregation", "union") not in ("union", "intersection"):
            raise NotUnderstood(f"rule {name!r}: partyAggregation {rule['partyAggregation']!r}")
        prop = "minCount" if "minCount" in rule else "maxCount" if "maxCount" in rule else None
    else:  # latency
        if "maxDistance" in rule and rule.get("distanceReference", "min") != "min":
            raise NotUnderstood(f"rule {name!r}: distanceReference")
        prop = "maxLatency" if "maxLatency" in rule else "maxDistance"
    if kind != "latency" and rule.get("partyAggregation", "avg") not in (
        "avg",
        "min",
        "max",
        "union",
        "intersection",
    ):
        raise NotUnderstood(f"rule {name!r}: partyAggregation {rule['partyAggregation']!r}")
    limits: dict[str, tuple[tuple[float, float], ...]] = {}
    for each in _LIMITS.get(kind, ()):
        if each in rule:
            limits[each] = ((0.0, float(rule[each])), *expansions.pop(f"rules[{name}].{each}", []))
    for target in list(expansions):
        if target.startswith(f"rules[{name}]."):
            raise NotUnderstood(f"expansion target {target!r}")
    steps = ((0.0, math.nan),) if prop is None else limits[prop]
    return _Rule(name, kind, attribute, rule, prop, steps, limits, team, reference)


def _comparison(name: str, rule: Mapping[str, Any]) -> tuple[str | None, str | None, Any]:
    """Read a comparison rule: its attribute, the team it measures, its reference."""
    operation = rule.get("operation")
    if operation not in _OPERATIONS:
        raise NotUnderstood(f"rule {name!r}: operation {operation!r}")
    if "referenceValue" not in rule:  # across players: every value the same, or each other
        if operation not in ("=", "!="):
            raise NotUnderstood(f"rule {name!r}: operation {operation!r} with no referenceValue")
        return _flat_attribute(name, rule["measurements"]), None, None
    measured = _one(rule["measurements"]).replace(" ", "")
    value = rule["referenceValue"]
    count = _COUNT.fullmatch(measured)
    if count is not None:
        other = _COUNT.fullmatch(value.replace(" ", "")) if isinstance(value, str) else None
        if other is None:
            raise NotUnderstood(f"rule {name!r}: {measured!r} against referenceValue {value!r}")
        return None, count[1], ("count", other[1])
    match = _TEAM_ATTR.fullmatch(measured)
    if match is None:
        raise NotUnderstood(f"rule {name!r}: measurements {rule['measurements']!r}")
    team = None if match[1] == "*" else match[1]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise NotUnderstood(f"rule {name!r}: referenceValue {value!r}")
    if isinstance(value, str) and re.search(r"[(\[]", value):
        raise NotUnderstood(f"rule {name!r}: referenceValue {value!r} (an expression)")
    if isinstance(value, str) and operation not in ("=", "!="):
        raise NotUnderstood(f"rule {name!r}: operation {operation!r} on the string {value!r}")
    return match[2], team, ("value", value)


def _collection(name: str, rule: Mapping[str, Any]) -> tuple[str, str | None, Any]:
    """Read a collection rule: its attribute, the team it measures, its reference."""
    operation = rule.get("operation")
    value = rule.get("referenceValue")
    if operation == "intersection":
        if "referenceValue" in rule:
            raise NotUnderstood(f"rule {name!r}: referenceValue of an intersection")
        return _flat_attribute(name, rule["measurements"]), None, None
    if operation not in ("contains", "reference_intersection_count"):
        raise NotUnderstood(f"rule {name!r}: collection operation {operation!r}")
    if "minCount" not in rule and "maxCount" not in rule:
        raise NotUnderstood(f"rule {name!r}: {operation} with neither minCount nor maxCount")
    measured = _one(rule["measurements"]).replace(" ", "")
    match = _TEAM_ATTR.fullmatch(measured)
    if match is None or not measured.startswith("flatten("):
        raise NotUnderstood(f"rule {name!r}: measurements {rule['measurements']!r}")
    team = None if match[1] == "*" else match[1]
    if operation == "contains":
        if not isinstance(value, str) or re.search(r"[(\[]", value):
            raise NotUnderstood(f"rule {name!r}: contains referenceValue {value!r}")
        return match[2], team, ("value", value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return match[2], team, ("list", frozenset(value))
    common = _COMMON.fullmatch(value.replace(" ", "")) if isinstance(value, str) else None
    if common is None:
        raise NotUnderstood(f"rule {name!r}: reference_intersection_count of {value!r}")
    return match[2], team, ("common", common[1])


def _statement(name: str, text: str, before: Mapping[str, _Rule]) -> Any:
    """Parse a compound rule's statement into a tree of rule names (each defined before it,
    not a batchDistance, sort or compound rule) and operators."""
    tokens = re.findall(r"[A-Za-z_][\w.-]*|[(),]|\S", text)
    k = 0

    def expression() -> Any:
        nonlocal k
        if k >= len(tokens):
            raise NotUnderstood(f"rule {name!r}: compound statement {text!r} ends too soon")
        token = tokens[k]
        k += 1
        if k < len(tokens) and tokens[k] == "(":
            if token not in ("and", "or", "xor", "not"):
                raise NotUnderstood(f"rule {name!r}: compound operator {token!r}")
            k += 1
            args = [expression()]
            while k < len(tokens) and tokens[k] == ",":
                k += 1
                args.append(expression())
            if k >= len(tokens) or tokens[k] != ")":
                raise NotUnderstood(f"rule {name!r}: compound statement {text!r}")
            k += 1
            if (token == "not") != (len(args) == 1):
                raise NotUnderstood(f"rule {name!r}: {token} of {len(args)} arguments")
            return (token, args)
        rule = before.get(token)
        if rule is None:
            raise NotUnderstood(
                f"rule {name!r}: compound statement names {token!r}, no rule defined before it"
            )
        if rule.kind in ("batchDistance", "compound", *_SORTS):
            raise NotUnderstood(
                f"rule {name!r}: compound statement names the {rule.kind} {token!r}"
            )
        return token

    tree = expression()
    if k != len(tokens):
        raise NotUnderstood(f"rule {name!r}: compound statement {text!r}")
    return tree


def _named(tree: Any) -> set[str]:
    """The rule names a compound statement's tree holds."""
    if isinstance(tree, str):
        return {tree}
    return set().union(*(_named(t) for t in tree[1]))


def _one(measurements: Any) -> str:
    if isinstance(measurements, list):
        if len(measurements) != 1:
            raise NotUnderstood(f"measurements {measurements!r}")
        return str(measurements[0])
    return str(measurements)


def _flat_attribute(name: str, measurements: Any) -> str:
    match = re.fullmatch(_FLAT, _one(measurements).replace(" ", ""))
    if match is None:
        raise NotUnderstood(f"rule {name!r}: measurements {measurements!r}")
    return match.group(1)


def _distance_attribute(name: str, rule: Mapping[str, Any]) -> str:
    measured = _one(rule.get("measurements")).replace(" ", "")
    reference = str(rule.get("referenceValue", "")).replace(" ", "")
    team_avg = re.fullmatch(rf"avg\({_TEAMS}\)", measured)
    if team_avg and reference == f"avg(flatten(teams[*].players.attributes[{team_avg[1]}]))":
        return team_avg[1] + "#teams"
    spread = re.fullmatch(rf"max\({_FLAT}\)", measured)
    if spread and reference == f"min(flatten(teams[*].players.attributes[{spread[1]}]))":
        return spread[1] + "#spread"
    raise NotUnderstood(f"rule {name!r}: distance of {measured!r} from {reference!r}")


# ---------------------------------------------------------------------- the records

#: A seat: one participants record as a dict, with ``_waited``, its ticket's queue spell.
Seat = dict[str, Any]


def check_run(
    rule_set: str | Path | Mapping[str, Any],
    games: pd.DataFrame,
    participants: pd.DataFrame,
    waits: pd.DataFrame,
) -> Report:
    """Check every game of a run's records against a FlexMatch rule set (see the module
    docstring); return the violations and how much was checked.

    Raises:
        NotUnderstood: the rule set holds something this checker does not read, or the
            records lack a column a rule needs, or a seat has no queue spell ending when it
            was taken.
    """
    rules, age_selection, teams = read_rule_set(rule_set)
    by_name = {rule.name: rule for rule in rules}
    parts = set().union(*(_named(r.statement) for r in rules if r.kind == "compound"))
    for rule in rules:
        for attribute in rule.columns:
            column = ATTR.format(attribute)
            if column not in participants.columns:
                raise NotUnderstood(f"rule {rule.name!r}: the records have no column {column!r}")
        if rule.kind == "latency" and "latency_ms" not in participants.columns:
            raise NotUnderstood(f"rule {rule.name!r}: the records have no latency_ms")
    ended = waits.dropna(subset=["left_queue"])
    spells = dict(
        zip(
            zip(ended["player_id"].tolist(), ended["left_queue"].tolist(), strict=True),
            ended["wait"].tolist(),
            strict=True,
        )
    )
    starts = dict(zip(games["game_id"].tolist(), games["start"].tolist(), strict=True))
    by_game: dict[int, list[Seat]] = {}
    for row in participants.to_dict("records"):
        row = {k: (None if _missing(v) else v) for k, v in row.items()}
        key = (row["player_id"], row["joined"])
        if key not in spells:
            raise NotUnderstood(
                f"player {key[0]}'s seat taken at {key[1]} has no queue spell ending then"
            )
        row["_waited"] = spells[key]
        by_game.setdefault(int(row["game_id"]), []).append(row)
    # without a seat_opened column a back-fill's clock is unknown: that is no matter only if
    # nothing relaxes (no rule but sorts, no team expansion), else the records cannot be read
    clockless = "seat_opened" not in participants.columns
    relaxes = any(r.kind not in _SORTS for r in rules) or any(
        len(steps) > 1 for team in teams for steps in team["_steps"].values()
    )
    report = Report()
    for game_id, rows in sorted(by_game.items()):
        start = float(starts[game_id])
        formed = [r for r in rows if r["joined"] == start]
        report.games += 1
        ages = [max(r["_waited"] for r in t) for t in _tickets(formed)]
        age = (min(ages) if age_selection == "newest" else max(ages)) * 60.0
        _check_teams(formed, teams, age, game_id, start, report)
        for rule in rules:
            if rule.name not in parts:  # a compound rule's parts hold only through it
                _check(rule, by_name, teams, formed, age, game_id, "formed", start, report)
        for k, seat in enumerate(rows):
            t = float(seat["joined"])
            if t == start:
                continue
            report.backfills += 1
            if clockless and relaxes:
                raise NotUnderstood(
                    f"game {game_id}: a back-fill at {t}, and the records have no seat_opened"
                )
            if clockless:  # nothing relaxes: the back-fill's clock is not needed
                match = [r for r in rows[:k] if r["left"] > t] + [seat]
                _check_backfill(match, rules, parts, by_name, teams, 0.0, game_id, t, report)
                continue
            opened = seat.get("seat_opened")
            quits = [
                r for r in rows if r["quit"] and r["left"] == opened and (r["team"] == seat["team"])
            ]
            if opened is None or not quits or not opened <= t:
                report.violations.append(
                    Violation(
                        game_id,
                        "seat_opened",
                        math.nan if opened is None else opened,
                        t,
                        "backfill",
                        t,
                    )
                )
                continue
            match = [r for r in rows[:k] if r["left"] > t] + [seat]
            ticket_ages = [t - opened, float(seat["_waited"])]
            chosen = (min(ticket_ages) if age_selection == "newest" else max(ticket_ages)) * 60.0
            _check_backfill(match, rules, parts, by_name, teams, chosen, game_id, t, report)
    return report


def _check_backfill(
    match: list[Seat],
    rules: list[_Rule],
    parts: set[str],
    by_name: Mapping[str, _Rule],
    teams: list[Any],
    chosen: float,
    game_id: int,
    t: float,
    report: Report,
) -> None:
    """Check the match a back-fill at minute ``t`` makes, ``chosen`` seconds old."""
    for team_def, size in _team_sizes(match, teams):
        high = _team_limit(team_def, "maxPlayers", chosen)
        if size > high:
            report.violations.append(
                Violation(game_id, f"team {team_def['name']}", size, high, "backfill", t)
            )
    for rule in rules:
        if rule.name not in parts:
            _check(rule, by_name, teams, match, chosen, game_id, "backfill", t, report)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _tickets(seats: list[Seat]) -> list[list[Seat]]:
    """The tickets among ``seats``: a party's players together, each solo player alone."""
    out: list[list[Seat]] = []
    parties: dict[Any, list[Seat]] = {}
    for seat in seats:
        party = seat.get("party_id")
        if party is None:
            out.append([seat])
        elif party in parties:
            parties[party].append(seat)
        else:
            parties[party] = [seat]
            out.append(parties[party])
    return out


def _aggregate(values: Sequence[float], how: str) -> float:
    if how == "min":
        return min(values)
    if how == "max":
        return max(values)
    return math.fsum(values) / len(values)


def _over(value: float, limit: float) -> bool:
    return value > limit + SLACK * max(1.0, abs(limit))


def _under(value: float, limit: float) -> bool:
    return value < limit - SLACK * max(1.0, abs(limit))


def _check(
    rule: _Rule,
    by_name: Mapping[str, _Rule],
    teams: list[Any],
    seats: list[Seat],
    age: float,
    game_id: int,
    when: str,
    time: float,
    report: Report,
) -> None:
    """Check one rule over the players of a match ``age`` seconds old (its clock's)."""
    if rule.kind in _SORTS:
        return
    report.rules_checked += 1
    if rule.kind == "compound":
        broke = None if _holds(rule.statement, by_name, teams, seats, age) else (0.0, 1.0)
    else:
        broke = _breach(rule, teams, seats, age)
    if broke is not None:
        report.violations.append(Violation(game_id, rule.name, broke[0], broke[1], when, time))


def _holds(
    tree: Any, by_name: Mapping[str, _Rule], teams: list[Any], seats: list[Seat], age: float
) -> bool:
    """Whether a compound statement's tree holds over the players of a match ``age`` old."""
    if isinstance(tree, str):
        return _breach(by_name[tree], teams, seats, age) is None
    operator, args = tree
    values = [_holds(arg, by_name, teams, seats, age) for arg in args]
    if operator == "and":
        return all(values)
    if operator == "or":
        return any(values)
    if operator == "xor":
        return sum(values) == 1
    return not values[0]  # not


def _breach(
    rule: _Rule, teams: list[Any], seats: list[Seat], age: float
) -> tuple[float, float] | None:
    """Return how a rule is broken by the players of a match ``age`` seconds old (the value
    measured and the limit in force), or None if it holds."""
    limit = rule.limit(age)
    data = rule.data
    how = str(data.get("partyAggregation", "avg"))
    column = ATTR.format((rule.attribute or "").split("#")[0])
    tickets = _tickets(seats)
    if rule.kind == "batchDistance" or (rule.attribute or "").endswith("#spread"):
        values = [[s[column] for s in t] for t in tickets]
        if isinstance(values[0][0], str):
            distinct = len({v for vs in values for v in vs})
            if distinct > 1:
                return (float(distinct), 1.0)
        else:
            each = [_aggregate(v, how) for v in values]
            spread = max(each) - min(each)
            if _over(spread, limit):
                return (spread, limit)
    elif rule.kind == "distance" and rule.reference is not None:  # the teams' sizes
        sizes = [size for _, size in _team_sizes(seats, teams)]
        gap = float(max(sizes) - min(sizes))
        if rule.prop == "maxDistance" and _over(gap, limit):
            return (gap, limit)
        if rule.prop == "minDistance" and _under(gap, limit):
            return (gap, limit)
    elif rule.kind == "distance":  # every team's average against the match's
        sides: dict[Any, list[float]] = {}
        for t in tickets:
            value = _aggregate([s[column] for s in t], how)
            for s in t:
                sides.setdefault(s["team"], []).append(value)
        every = [v for vs in sides.values() for v in vs]
        overall = math.fsum(every) / len(every)
        for side in sides.values():
            gap = abs(math.fsum(side) / len(side) - overall)
            if rule.prop == "maxDistance" and _over(gap, limit):
                return (gap, limit)
            if rule.prop == "minDistance" and _under(gap, limit):
                return (gap, limit)
    elif rule.kind == "comparison":
        return _comparison_breach(rule, teams, seats, column, how)
    elif rule.kind == "collection":
        return _collection_breach(rule, teams, seats, column, age)
    else:  # latency
        worst = -math.inf
        for t in tickets:
            lat = [float(s["latency_ms"]) for s in t]
            if rule.prop == "maxDistance":
                lat = [x - float(s["best_latency_ms"]) for x, s in zip(lat, t, strict=True)]
            worst = max(worst, _aggregate(lat, how))
        if _over(worst, limit):
            return (worst, limit)
    return None


def _comparison_breach(
    rule: _Rule, teams: list[Any], seats: list[Seat], column: str, how: str
) -> tuple[float, float] | None:
    """:func:`_breach` of a comparison rule."""
    operation = str(rule.data["operation"])
    if rule.reference is None:  # across players
        values = [s[column] for s in seats]
        if not isinstance(values[0], str) and operation == "=":
            values = [_aggregate([s[column] for s in t], how) for t in _tickets(seats)]
        distinct = len(set(values))
        if operation == "=" and distinct > 1:
            return (float(distinct), 1.0)
        if operation == "!=" and distinct < len(values):
            return (float(distinct), float(len(values)))
        return None
    kind, reference = rule.reference
    if kind == "count":
        assert rule.team is not None
        a = float(len(_team_seats(seats, teams, rule.team)))
        b = float(len(_team_seats(seats, teams, str(reference))))
        return None if _stands(a, operation, b) else (a, b)
    chosen = _team_seats(seats, teams, rule.team)
    for ticket in _tickets(chosen):
        values = [s[column] for s in ticket]
        if isinstance(values[0], str) or isinstance(reference, str):
            if not all(isinstance(v, str) for v in values) or not isinstance(reference, str):
                raise NotUnderstood(
                    f"rule {rule.name!r}: {column} {values[0]!r} against {reference!r}"
                )
            failing = [v for v in values if (v == reference) != (operation == "=")]
            if failing:
                return (float(len(failing)), 0.0)
            continue
        value = _aggregate([float(v) for v in values], how)
        if not _stands(value, operation, float(reference)):
            return (value, float(reference))
    return None


def _stands(a: float, operation: str, b: float) -> bool:
    """Whether ``a operation b`` holds (within the slack)."""
    equal = not _over(a, b) and not _under(a, b)
    return {
        "=": equal,
        "!=": not equal,
        "<": _under(a, b),
        "<=": not _over(a, b),
        ">": _over(a, b),
        ">=": not _under(a, b),
    }[operation]


def _collection_breach(
    rule: _Rule, teams: list[Any], seats: list[Seat], column: str, age: float
) -> tuple[float, float] | None:
    """:func:`_breach` of a collection rule: each count within ``minCount`` and ``maxCount``."""
    how = str(rule.data.get("partyAggregation", "union"))
    low = rule.limit_of("minCount", age)
    high = rule.limit_of("maxCount", age)
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    chosen = _team_seats(seats, teams, rule.team)
    lists = [_ticket_list(t, column, how) for t in _tickets(chosen)]
    operation = rule.data["operation"]
    if operation == "intersection":
        counts = [len(set.intersection(*lists))]
    elif operation == "contains":
        if any(len(t) > 1 for t in _tickets(chosen)):
            raise NotUnderstood(
                f"rule {rule.name!r}: how a party's ticket counts in 'contains' is not read"
            )
        assert rule.reference is not None
        counts = [sum(rule.reference[1] in values for values in lists)]
    else:  # reference_intersection_count: each list against the reference
        assert rule.reference is not None
        kind, reference = rule.reference
        if kind == "common":
            other = ATTR.format(reference)
            common = set.intersection(*(_ticket_list(t, other, how) for t in _tickets(seats)))
        else:
            common = set(reference)
        counts = [len(values & common) for values in lists]
    for count in counts:
        if count < low:
            return (float(count), low)
        if count > high:
            return (float(count), high)
    return None


def _ticket_list(ticket: list[Seat], column: str, how: str) -> set[str]:
    """A ticket's list of a string_list column: its players' ``union`` or ``intersection``."""
    sets = [set(json.loads(s[column])) for s in ticket]
    return set.intersection(*sets) if how == "intersection" else set.union(*sets)


def _team_seats(seats: list[Seat], teams: list[Any], name: str | None) -> list[Seat]:
    """The seats of the team ``name`` (None or ``*``: every seat; see the module docstring)."""
    if name is None or name == "*":
        return seats
    names: list[str] = []
    for team in teams:
        quantity = int(team.get("quantity", 1))
        base = str(team["name"])
        names += [base] if quantity == 1 else [f"{base}_{k + 1}" for k in range(quantity)]
    if name not in names:
        raise NotUnderstood(f"team {name!r}: the rule set's teams are {names}")
    if len(names) == 1:
        return seats
    index = names.index(name)
    return [s for s in seats if (s["team"] or 0) == index]


def _team_sizes(seats: list[Seat], teams: list[Any]) -> Iterable[tuple[Any, int]]:
    """Each team of the rule set (``quantity`` copies of a definition) with its players."""
    defs = [t for t in teams for _ in range(int(t.get("quantity", 1)))]
    if len(defs) == 1:
        yield defs[0], len(seats)
        return
    for k, team_def in enumerate(defs):
        yield team_def, sum(1 for s in seats if s["team"] == k)


def _team_limit(team: Any, prop: str, age: float) -> float:
    value = team["_steps"][prop][0][1]
    for wait, step in team["_steps"][prop][1:]:
        if age >= wait * (1 - SLACK) - SLACK:
            value = step
    return float(value)


def _check_teams(
    seats: list[Seat], teams: list[Any], age: float, game_id: int, time: float, report: Report
) -> None:
    """Check each team's size when the game formed (its limits on the match's clock)."""
    for team, size in _team_sizes(seats, teams):
        low = _team_limit(team, "minPlayers", age)
        high = _team_limit(team, "maxPlayers", age)
        if size < low or size > high:
            limit = low if size < low else high
            report.violations.append(
                Violation(game_id, f"team {team['name']}", size, limit, "formed", time)
            )
