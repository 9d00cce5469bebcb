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
  ``min(flatten(...[X]))``: the largest ticket value within ``maxDistance`` of the smallest.
* ``comparison`` with no ``referenceValue``, on ``flatten(teams[*].players.attributes[X])``:
  ``=`` every value the same (a number: every ticket's), ``!=`` every player's different.
* ``collection`` ``intersection`` on ``flatten(teams[*].players.attributes[X])``: the values
  common to every ticket's list (a ticket's list its players' ``union``, the default, or
  ``intersection``) number at least ``minCount`` and at most ``maxCount``.
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
    "comparison": {"measurements", "operation", "partyAggregation"},
    "collection": {"measurements", "operation", "minCount", "maxCount", "partyAggregation"},
    "latency": {"maxLatency", "maxDistance", "distanceReference", "partyAggregation"},
}
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

    def limit(self, age_seconds: float) -> float:
        """Return the limit in force for a match ``age_seconds`` old."""
        value = self.steps[0][1]
        for wait, step in self.steps[1:]:
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
    rules = [_read_rule(r, expansions) for r in data.get("rules") or []]
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


def _read_rule(rule: Mapping[str, Any], expansions: dict[str, list[tuple[float, float]]]) -> _Rule:
    name, kind = str(rule.get("name")), str(rule.get("type"))
    if kind in _SORTS:
        return _Rule(name, kind, None, rule, None, ((0.0, math.nan),))
    known = _KNOWN.get(kind)
    if known is None:
        raise NotUnderstood(f"rule {name!r}: type {kind!r} is not read by the checker")
    extra = set(rule) - known - _LABELS
    if extra:
        raise NotUnderstood(f"rule {name!r}: property {sorted(extra)[0]!r} is not read")
    attribute = None
    prop: str | None = None
    if kind == "batchDistance":
        attribute = str(rule["batchAttribute"])
        prop = "maxDistance" if "maxDistance" in rule else None
    elif kind == "distance":
        attribute = _distance_attribute(name, rule)
        prop = "maxDistance" if "maxDistance" in rule else "minDistance"
    elif kind == "comparison":
        if rule.get("operation") not in ("=", "!="):
            raise NotUnderstood(f"rule {name!r}: operation {rule.get('operation')!r}")
        attribute = _flat_attribute(name, rule["measurements"])
    elif kind == "collection":
        if rule.get("operation") != "intersection":
            raise NotUnderstood(f"rule {name!r}: collection operation {rule.get('operation')!r}")
        attribute = _flat_attribute(name, rule["measurements"])
        if rule.get("partyAggregation", "union") not in ("union", "intersection"):
            raise NotUnderstood(f"rule {name!r}: partyAggregation {rule['partyAggregation']!r}")
        # with both, both are checked; only minCount's expansions are read
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
    base = math.nan if prop is None else float(rule[prop])
    steps = ((0.0, base), *expansions.pop(f"rules[{name}].{prop}", []))
    for target in list(expansions):
        if target.startswith(f"rules[{name}]."):
            raise NotUnderstood(f"expansion target {target!r}")
    return _Rule(name, kind, attribute, rule, prop, steps)


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
    for rule in rules:
        if rule.attribute is not None:
            column = ATTR.format(rule.attribute.split("#")[0])
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
    report = Report()
    for game_id, rows in sorted(by_game.items()):
        start = float(starts[game_id])
        formed = [r for r in rows if r["joined"] == start]
        report.games += 1
        ages = [max(r["_waited"] for r in t) for t in _tickets(formed)]
        age = (min(ages) if age_selection == "newest" else max(ages)) * 60.0
        _check_teams(formed, teams, age, game_id, start, report)
        for rule in rules:
            _check(rule, formed, age, game_id, "formed", start, report)
        for k, seat in enumerate(rows):
            t = float(seat["joined"])
            if t == start:
                continue
            report.backfills += 1
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
            for team_def, size in _team_sizes(match, teams):
                high = _team_limit(team_def, "maxPlayers", chosen)
                if size > high:
                    report.violations.append(
                        Violation(game_id, f"team {team_def['name']}", size, high, "backfill", t)
                    )
            for rule in rules:
                _check(rule, match, chosen, game_id, "backfill", t, report)
    return report


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
    limit = rule.limit(age)
    data = rule.data
    how = str(data.get("partyAggregation", "avg"))
    broke: tuple[float, float] | None = None
    column = ATTR.format((rule.attribute or "").split("#")[0])
    tickets = _tickets(seats)
    if rule.kind == "batchDistance" or (rule.attribute or "").endswith("#spread"):
        values = [[s[column] for s in t] for t in tickets]
        if isinstance(values[0][0], str):
            distinct = len({v for vs in values for v in vs})
            if distinct > 1:
                broke = (float(distinct), 1.0)
        else:
            each = [_aggregate(v, how) for v in values]
            spread = max(each) - min(each)
            if _over(spread, limit):
                broke = (spread, limit)
    elif rule.kind == "distance":  # every team's average against the match's
        sides: dict[Any, list[float]] = {}
        for t in tickets:
            value = _aggregate([s[column] for s in t], how)
            for s in t:
                sides.setdefault(s["team"], []).append(value)
        every = [v for vs in sides.values() for v in vs]
        overall = math.fsum(every) / len(every)
        for values in sides.values():
            gap = abs(math.fsum(values) / len(values) - overall)
            if rule.prop == "maxDistance" and _over(gap, limit):
                broke = (gap, limit)
            if rule.prop == "minDistance" and _under(gap, limit):
                broke = (gap, limit)
    elif rule.kind == "comparison":
        values = [s[column] for s in seats]
        if not isinstance(values[0], str) and data["operation"] == "=":
            values = [_aggregate([s[column] for s in t], how) for t in tickets]
        distinct = len(set(values))
        if data["operation"] == "=" and distinct > 1:
            broke = (float(distinct), 1.0)
        if data["operation"] == "!=" and distinct < len(values):
            broke = (float(distinct), float(len(values)))
    elif rule.kind == "collection":
        how = str(data.get("partyAggregation", "union"))
        lists = []
        for t in tickets:
            sets = [set(json.loads(s[column])) for s in t]
            lists.append(set.intersection(*sets) if how == "intersection" else set.union(*sets))
        common = len(set.intersection(*lists))
        low = limit if rule.prop == "minCount" else -math.inf
        high = float(data["maxCount"]) if "maxCount" in data else math.inf
        if rule.prop == "maxCount":
            high = limit
        if common < low or common > high:
            broke = (float(common), low if common < low else high)
    else:  # latency
        worst = -math.inf
        for t in tickets:
            lat = [float(s["latency_ms"]) for s in t]
            if rule.prop == "maxDistance":
                lat = [x - float(s["best_latency_ms"]) for x, s in zip(lat, t, strict=True)]
            worst = max(worst, _aggregate(lat, str(data.get("partyAggregation", "avg"))))
        if _over(worst, limit):
            broke = (worst, limit)
    if broke is not None:
        report.violations.append(Violation(game_id, rule.name, broke[0], broke[1], when, time))


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
