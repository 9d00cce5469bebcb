"""A scenario's reference to a FlexMatch rule set, expanded before the scenario is built.

A scenario names a rule set with ``matchmaker.rules: {flexmatch: FILE, attributes: {...}}``:
:func:`resolve_rule_files` names a relative FILE from the scenario file's folder, and
:func:`expand_scenario_data` reads it (:func:`lobbysim.flexmatch.read.read_flexmatch`)
into plain ``matchmaker.rules``, ``attributes`` and ``game`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.registry import did_you_mean
from lobbysim.validation import ScenarioError


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
    ``matchmaker.algorithm`` is ``flexmatch`` (FlexMatch's builder) unless the scenario sets
    one, with the rule set's ``batching`` (``fastestRegion``: ``fastest_region``;
    ``largestPopulation``: ``largest_population``; ``sorted``) and ``batch_sort`` when the
    algorithm is ``flexmatch`` and the scenario sets no batching.

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
    algorithm = mm.get("algorithm", imported.algorithm)
    out["matchmaker"] = {**mm, "rules": [dict(r) for r in imported.rules], "algorithm": algorithm}
    if algorithm == "flexmatch" and imported.batching != "none" and "batching" not in mm:
        out["matchmaker"]["batching"] = imported.batching
        if imported.batch_sort and "batch_sort" not in mm:
            out["matchmaker"]["batch_sort"] = list(imported.batch_sort)
    game = data.get("game", {})
    if isinstance(game, Mapping):
        merged = dict(game)
        shown = ", ".join(f"{k} {v}" for k, v in imported.game.items())
        for key in ("mode", "team_size", "ffa_size", "teams"):
            mine, theirs = game.get(key), imported.game.get(key)
            if mine is None or mine == theirs:
                if theirs is not None:
                    merged[key] = theirs
                continue
            hint = (
                f"; leave game.{key} out (--set game.{key}=null) to take the rule set's teams"
                if theirs is None
                else ""
            )
            problems.append(
                f"game.{key}: {mine!r} disagrees with the FlexMatch rule set {file}'s teams "
                f"({shown}){hint}"
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
