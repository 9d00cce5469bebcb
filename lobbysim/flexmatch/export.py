"""A scenario's rule set written as a FlexMatch rule set (lobbysim -> FlexMatch).

:func:`export_flexmatch` writes the rules, the attributes they read and the game's teams as a
FlexMatch rule set (rule language 1.0), refusing what FlexMatch cannot say, and checks that it
reads back (:func:`lobbysim.flexmatch.read.read_flexmatch`) into the same rules;
:func:`export_bindings` is the mapping that reads it back. The module docstring of
:mod:`lobbysim.flexmatch` has the mapping and what the export refuses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.flexmatch.rules import (
    LIMIT_PROPERTY,
    MAX_COUNT,
    MAX_PLAYERS,
    PARTY_OUT,
    SMALL_MATCH,
)
from lobbysim.scenario.attributes import RATING, AttributeConfig
from lobbysim.scenario.compound import compound_children
from lobbysim.scenario.model import GameRules
from lobbysim.scenario.rules import LIST_KINDS, SORT_KINDS, RuleConfig, list_party
from lobbysim.scenario.teams import TeamConfig
from lobbysim.validation import ScenarioError


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
    numbers = ("skill_distance", "team_balance", "mean_distance", *SORT_KINDS)
    number_compare = rule.kind == "compare" and rule.value is None
    if rule.kind == "distinct":  # a string attribute is never named rating
        return rule.attribute == RATING
    return (rule.kind in numbers or number_compare) and rule.attribute in (None, RATING)


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
        elif attribute.type == "string_number_map":
            out[name] = {"values": dict(attribute.values), "sd": attribute.sd}
        else:
            out[name] = {"values": dict(attribute.values)}
    if any(_reads_rating(r) for r in scenario.matchmaker.rules or ()):
        out[RATING] = {"source": "rating"}
    return out


def _default(attribute: AttributeConfig) -> Any:
    if attribute.type == "number":
        value = attribute.mean if attribute.source == "drawn" else attribute.offset
        return int(value) if float(value).is_integer() else value
    if attribute.type == "string_number_map":
        return {k: int(v) if float(v).is_integer() else v for k, v in attribute.values.items()}
    likeliest = max(attribute.values, key=lambda v: attribute.values[v])
    return likeliest if attribute.type == "string" else [likeliest]


def _expression(attribute: str, form: str, key: str | None = None) -> str:
    players = f"teams[*].players.attributes[{attribute}]" + (f"[{key}]" if key else "")
    return {
        "team_avg": f"avg({players})",
        "all_avg": f"avg(flatten({players}))",
        "all_max": f"max(flatten({players}))",
        "all_min": f"min(flatten({players}))",
        "flat": f"flatten({players})",
    }[form]


def _export_rule(
    i: int, rule: RuleConfig, attributes: Mapping[str, AttributeConfig], problems: list[str]
) -> dict[str, Any] | None:
    where = f"matchmaker.rules[{i}]"
    kind, name = rule.kind, rule.name
    attribute = rule.attribute if rule.attribute is not None else RATING
    limit = _number(rule.limit, f"{where}.limit", problems) if rule.limit is not None else None
    if kind == "team_sizes" and rule.limit:  # the sizes within d of each other
        return {
            "name": name,
            "type": "distance",
            "measurements": ["max(count(teams[*].players))"],
            "referenceValue": "min(count(teams[*].players))",
            "maxDistance": limit,
        }
    if kind in _MORE:
        return _export_more(rule, attribute, limit)
    if kind == "skill_distance" and rule.key is not None:  # a map's key: no batchAttribute
        return {
            "name": name,
            "type": "distance",
            "measurements": [_expression(attribute, "all_max", rule.key)],
            "referenceValue": _expression(attribute, "all_min", rule.key),
            "maxDistance": limit,
            "partyAggregation": PARTY_OUT[rule.party],
        }
    if kind == "mean_distance":  # each player's value from the players' average
        return {
            "name": name,
            "type": "distance",
            "measurements": [_expression(attribute, "flat", rule.key)],
            "referenceValue": _expression(attribute, "all_avg", rule.key),
            "maxDistance": limit,
            "partyAggregation": PARTY_OUT[rule.party],
        }
    if kind == "skill_distance":
        return {
            "name": name,
            "type": "batchDistance",
            "batchAttribute": attribute,
            "maxDistance": limit,
            "partyAggregation": PARTY_OUT[rule.party],
        }
    number = rule.attribute == RATING or (
        attributes.get(attribute) is not None
        and attributes[attribute].type in ("number", "string_number_map")
    )
    if kind == "equal" and number:
        problems.append(
            f"{where}.kind: an equal rule on a number has no FlexMatch form of its own "
            "(FlexMatch's '=' between players on a number reads as skill_distance with limit "
            "0, each ticket's value by party; write that instead)"
        )
        return None
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
            "measurements": [_expression(attribute, "team_avg", rule.key)],
            "referenceValue": _expression(attribute, "all_avg", rule.key),
            "maxDistance": _number(rule.limit / 2.0, f"{where}.limit", problems),
        }
    if kind == "distinct":  # a string, or a number (each player's own value either way)
        return {
            "name": name,
            "type": "comparison",
            "measurements": [_expression(attribute, "flat", rule.key)],
            "operation": "!=",
        }
    if kind == "latency":
        return {
            "name": name,
            "type": "latency",
            "maxLatency": limit,
            "partyAggregation": PARTY_OUT[rule.party],
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


_MORE = ("compare", "team_sizes", "compound", *LIST_KINDS, *SORT_KINDS)
_COLLECTIONS = {
    "overlap": "intersection",
    "contains": "contains",
    "reference_overlap": "reference_intersection_count",
}


def _export_more(rule: RuleConfig, attribute: str, limit: Any) -> dict[str, Any]:
    """The kinds FlexMatch's comparison, collection, compound and sort rules read into."""
    kind = rule.kind
    out: dict[str, Any] = {"name": rule.name}
    if kind == "compare" and rule.center is not None:  # a distance from a constant
        out["type"] = "distance"
        out["measurements"] = [_expression(attribute, "flat", rule.key)]
        out["referenceValue"] = int(rule.center) if rule.center.is_integer() else rule.center
        out["maxDistance" if rule.op == "within" else "minDistance"] = limit
        out["partyAggregation"] = PARTY_OUT[rule.party]
    elif kind == "compare":
        out["type"] = "comparison"
        out["measurements"] = [_expression(attribute, "flat", rule.key)]
        out["referenceValue"] = rule.value if rule.value is not None else limit
        out["operation"] = rule.op
        if rule.value is None:
            out["partyAggregation"] = PARTY_OUT[rule.party]
    elif kind == "team_sizes":  # the EqualTeamSizes idiom, on the export's teams
        out["type"] = "comparison"
        out["measurements"] = ["count(teams[red].players)"]
        out["referenceValue"] = "count(teams[blue].players)"
        out["operation"] = "="
    elif kind == "compound":
        out["type"] = "compound"
        out["statement"] = rule.statement
    elif kind in SORT_KINDS:
        out["type"] = "absoluteSort" if kind == "absolute_sort" else "distanceSort"
        out["sortDirection"] = rule.direction or "ascending"
        out["sortAttribute"] = attribute
        if rule.map_key is not None:
            out["mapKey"] = rule.map_key
        out["partyAggregation"] = PARTY_OUT[rule.party]
    else:
        out["type"] = "collection"
        out["operation"] = _COLLECTIONS[kind]
        out["measurements"] = [_expression(attribute, "flat")]
        if kind == "contains":
            out["referenceValue"] = rule.value
        if kind == "reference_overlap" and rule.reference is not None:
            out["referenceValue"] = f"set_intersection({_expression(rule.reference, 'flat')})"
        elif kind == "reference_overlap":
            out["referenceValue"] = list(rule.values)
        out["maxCount" if rule.op == "<=" else "minCount"] = limit
        out["partyAggregation"] = list_party(rule.party)
    return out


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
    team_expansions: list[dict[str, Any]] = []
    if game.teams:  # teams given one by one
        teams, team_expansions = _teams(game.teams)
        players = game.seats
    elif game.mode == "ffa":
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
    team_clocks = [t.clock for t in game.teams if t.expansions]
    clocks = [r.clock for r in rules if r.clock in ("newest", "oldest")] + team_clocks
    clock = clocks[0] if clocks else "newest"
    for k, team in enumerate(game.teams):
        if team.expansions and team.clock != clock:
            problems.append(
                f"game.teams[{k}].clock: FlexMatch has one clock for every expansion "
                f"(algorithm.expansionAgeSelection): {clock!r} here, got {team.clock!r}"
            )
    first = next((i for i, r in enumerate(rules) if r.clock == clock), 0)
    out_rules: list[dict[str, Any]] = []
    children = compound_children(rules)
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
        if exported is not None and rule.name in children and exported["type"] == "batchDistance":
            # FlexMatch allows no batchDistance in a compound: a spread within maxDistance as a
            # distance of the largest value from the smallest; every value equal as comparison
            column = exported["batchAttribute"]
            if "maxDistance" in exported:
                exported = {
                    "name": rule.name,
                    "type": "distance",
                    "measurements": [_expression(column, "all_max", rule.key)],
                    "referenceValue": _expression(column, "all_min", rule.key),
                    "maxDistance": exported["maxDistance"],
                    "partyAggregation": exported.get("partyAggregation", "avg"),
                }
            else:
                exported = {
                    "name": rule.name,
                    "type": "comparison",
                    "measurements": [_expression(column, "flat", rule.key)],
                    "operation": "=",
                }
        if exported is None:
            continue
        out_rules.append(exported)
        if rule.expansions:
            prop, factor = LIMIT_PROPERTY[rule.kind]
            if rule.kind in LIST_KINDS and rule.op == "<=":
                prop, factor = MAX_COUNT
            if rule.kind == "compare" and rule.center is not None:
                prop = "maxDistance" if rule.op == "within" else "minDistance"
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
    if game.teams:  # the EqualTeamSizes idiom names the game's own two teams
        _name_teams(out_rules, rules, game.teams)
    declared = [
        {"name": name, "type": a.type, "default": _default(a)} for name, a in attributes.items()
    ]
    numbers = [name for name, a in attributes.items() if a.type == "number"]
    if any(_reads_rating(r) for r in rules) or (large and not numbers):
        declared.append({"name": RATING, "type": "number", "default": 0})
    mm = scenario.matchmaker
    algorithm: dict[str, Any] = {"strategy": "exhaustiveSearch"}
    if large or mm.batching == "largest_population":
        spread = [r.attribute or RATING for r in rules if r.kind == "skill_distance"]
        balanced = spread[0] if spread else numbers[0] if numbers else RATING
        if mm.batching == "largest_population":  # the pool sorted on it: its batch_sort
            balanced = mm.batch_sort[0]
        algorithm = {
            "strategy": "balanced",
            "balancedAttribute": balanced,
            "batchingPreference": "largestPopulation",
        }
    if mm.batching == "fastest_region":
        algorithm["batchingPreference"] = "fastestRegion"
    elif mm.batching == "sorted":
        algorithm["batchingPreference"] = "sorted"
        algorithm["sortByAttributes"] = list(mm.batch_sort)
    # an attribute the pool sorts on that no rule reads is declared all the same (unbound,
    # a number: FlexMatch needs it declared)
    for name in [algorithm.get("balancedAttribute"), *algorithm.get("sortByAttributes", [])]:
        if name is not None and all(d["name"] != name for d in declared):
            declared.append({"name": name, "type": "number", "default": 0})
    algorithm["expansionAgeSelection"] = clock
    document: dict[str, Any] = {
        "name": scenario.name,
        "ruleLanguageVersion": "1.0",
        "playerAttributes": declared,
        "algorithm": algorithm,
        "teams": teams,
        "rules": out_rules,
    }
    if expansions or team_expansions:
        document["expansions"] = team_expansions + expansions
    if problems:
        raise ScenarioError(problems)
    _check_round_trip(scenario, document)
    return document


def _name_teams(
    out_rules: list[dict[str, Any]], rules: Sequence[RuleConfig], teams: Sequence[TeamConfig]
) -> None:
    """Write each ``team_sizes`` rule of limit 0 on the game's own teams: the EqualTeamSizes
    idiom on their names where there are two (a team of ``quantity`` 2 is ``NAME_1`` and
    ``NAME_2``, as the import names them), else the sizes' spread within 0 (in place)."""
    names = [
        f"{t.name or f'team{k}'}_{q + 1}" if t.quantity > 1 else t.name or f"team{k}"
        for k, t in enumerate(teams)
        for q in range(t.quantity)
    ]
    for out in out_rules:
        rule = next((r for r in rules if r.name == out.get("name")), None)
        if rule is None or rule.kind != "team_sizes" or rule.limit:
            continue
        if len(names) == 2:
            out["measurements"] = [f"count(teams[{names[0]}].players)"]
            out["referenceValue"] = f"count(teams[{names[1]}].players)"
        else:
            out.clear()
            out.update(
                {
                    "name": rule.name,
                    "type": "distance",
                    "measurements": ["max(count(teams[*].players))"],
                    "referenceValue": "min(count(teams[*].players))",
                    "maxDistance": 0,
                }
            )


def _teams(teams: Sequence[TeamConfig]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return ``game.teams`` as FlexMatch's teams (an unnamed team is ``teamK``), and the
    expansions of their minimums."""
    out: list[dict[str, Any]] = []
    expansions: list[dict[str, Any]] = []
    for k, team in enumerate(teams):
        name = team.name or f"team{k}"
        entry: dict[str, Any] = {
            "name": name,
            "minPlayers": team.low,
            "maxPlayers": team.max_players,
        }
        if team.quantity > 1:
            entry["quantity"] = team.quantity
        out.append(entry)
        if team.expansions:
            steps = [
                {"waitTimeSeconds": _seconds(wait), "value": int(value)}
                for wait, value in team.expansions
            ]
            expansions.append({"target": f"teams[{name}].minPlayers", "steps": steps})
    return out, expansions


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
            if f.name == "read_from":  # where a limit is shown from, not what the rule is
                continue
            mine, theirs = getattr(rule, f.name), getattr(back, f.name)
            if f.name == "attribute" and _reads_rating(rule):
                mine = mine or RATING
            if mine != theirs:
                problems.append(
                    f"matchmaker.rules[{i}].{f.name}: {mine!r} has no FlexMatch form (it reads "
                    f"back as {theirs!r})"
                )
                break
    back = build(GameRules, dict(imported.game), "game")
    if back.mode != scenario.game.mode or back.shape != scenario.game.shape:
        problems.append(
            f"game: {scenario.game.describe()} reads back as {back.describe()} ({imported.game})"
        )
    if problems:
        raise ScenarioError(problems)
