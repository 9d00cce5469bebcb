"""``lobbysim rules``: a rule set as lobbysim reads it, and a scenario's rule set as FlexMatch's.

* ``lobbysim rules show FILE``: FILE a FlexMatch rule set (``.json``) or a scenario (a YAML file
  or a bundled scenario's name); prints the game, the search, one line per rule (kind,
  attribute, limit, expansions in minutes, clock, optional_after; for a rule read from a
  FlexMatch file, whether shown alone or through a scenario that names it, then the rule's limit
  and expansions in the file's own units: ``in the file: maxDistance 25, expansions
  [10 s: 50, 30 s: 100]``) and the attributes with their bindings. A FlexMatch rule set read
  alone has no bindings: the attributes its rules read are marked unbound.
* ``lobbysim rules export SCENARIO --flexmatch [--out FILE]``: the scenario's rule set as a
  FlexMatch rule set (:func:`lobbysim.flexmatch.export.export_flexmatch`), to FILE or standard
  output. FILE is written as every output file is
  (:func:`lobbysim.records.outputs.write_output_file`:
  new unless ``--force``, never through a link, to a device or into a folder); nothing is
  written on an error.

Problems are :class:`~lobbysim.validation.ScenarioError` lines, which the command line prints
one a line with exit status 2.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lobbysim.records.outputs import OutputTargetError, output_file_problem, write_output_text
from lobbysim.scenario.compound import compound_children
from lobbysim.scenario.rules import RuleConfig, list_party
from lobbysim.validation import ScenarioError


def add_rules_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim rules show`` and ``lobbysim rules export``."""
    rules = subparsers.add_parser(
        "rules",
        help="show a rule set as lobbysim reads it, or export a scenario's as FlexMatch's",
        description="Rule sets in and out: show one as lobbysim reads it (a FlexMatch rule set "
        "or a scenario's), or export a scenario's rule set as an Amazon GameLift FlexMatch "
        "rule set.",
    )
    actions = rules.add_subparsers(dest="rules_action", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show",
        help="print a rule set as lobbysim reads it",
        description="Print a rule set as lobbysim reads it: FILE is a FlexMatch rule set "
        "(.json; its attributes unbound) or a scenario (YAML, or a bundled scenario's name).",
    )
    show.add_argument("file", type=Path, help="a FlexMatch rule set (.json) or a scenario")
    show.set_defaults(handler=_show)
    export = actions.add_parser(
        "export",
        help="write a scenario's rule set as a FlexMatch rule set",
        description="Write the scenario's rule set as an Amazon GameLift FlexMatch rule set "
        "(rule language 1.0), to --out or standard output; nothing is written on an error.",
    )
    export.add_argument("scenario", type=Path, help="a scenario YAML file or bundled name")
    export.add_argument(
        "--flexmatch", action="store_true", required=True, help="as a FlexMatch rule set"
    )
    export.add_argument("--out", type=Path, default=None, help="the JSON file to write (new)")
    export.add_argument(
        "--force", action="store_true", help="replace --out if it is an existing regular file"
    )
    export.set_defaults(handler=_export)


def _show(args: argparse.Namespace) -> int:
    lines = show_lines(args.file)  # a ScenarioError is one line per problem, exit 2 (cli)
    print("\n".join(lines))
    return 0


def _export(args: argparse.Namespace) -> int:
    if args.out is not None:  # before any work (an OutputTargetError: exit 2, cli)
        problem = output_file_problem(args.out, force=args.force)
        if problem is not None:
            raise OutputTargetError(f"--out: {problem}")
    text = export_text(args.scenario)
    if args.out is None:
        print(text, end="")
        return 0
    write_output_text(args.out, text, force=args.force)
    print(f"wrote {args.out}")
    return 0


def export_text(scenario: str | Path) -> str:
    """Return the scenario's rule set as FlexMatch rule set JSON text (ending with a newline)."""
    from lobbysim.flexmatch.export import export_flexmatch
    from lobbysim.scenario.files import load_scenario

    loaded = load_scenario(scenario)
    try:
        document = export_flexmatch(loaded)
    except ScenarioError as exc:
        raise ScenarioError([f"{scenario}: {p}" for p in exc.problems]) from None
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


_NOTES = {
    "team_sizes": "always holds: lobbysim's teams have one fixed size",
    "absolute_sort": "orders the flexmatch builder's candidates, constrains nothing: the exact "
    "and seed_greedy searches ignore it",
    "distance_sort": "orders the flexmatch builder's candidates by distance from the anchor "
    "ticket, constrains nothing: the exact and seed_greedy searches ignore it",
    "compound": "the rules it names hold only through it",
}


def rule_line(rule: RuleConfig, held_by: str | None = None, fixed: bool = True) -> str:
    """Return one rule on one line: kind, attribute, limit, expansions, clock, optional_after
    (``held_by``: the compound rule through which alone it holds; ``fixed``: whether the game's
    teams are of one fixed size, so that team sizes always hold)."""
    parts = [f"{rule.name}: {rule.kind}"]
    numbers = ("skill_distance", "team_balance", "absolute_sort", "distance_sort", "mean_distance")
    if rule.attribute is not None or rule.kind in numbers or rule.kind == "compare":
        key = f"[{rule.key}]" if rule.key is not None else ""
        parts.append(f"attribute {rule.attribute or 'rating'}{key}")
    if rule.statement is not None:
        parts.append(f"statement {rule.statement}")
    if rule.kind == "compare" and rule.center is not None:
        sign = "<=" if rule.op == "within" else ">="
        parts.append(
            f"each ticket's distance from {_number(rule.center)} {sign} {_number(rule.limit)}"
        )
    elif rule.kind == "compare":
        shown = rule.value if rule.value is not None else _number(rule.limit)
        parts.append(f"each {'player' if rule.value is not None else 'ticket'} {rule.op} {shown}")
    elif rule.value is not None:
        parts.append(f"value {rule.value}")
    if rule.values:
        parts.append(f"reference [{', '.join(rule.values)}]")
    if rule.reference is not None:
        parts.append(f"reference: the values common to every player's {rule.reference}")
    if rule.limit is not None and rule.kind != "compare":
        sign = ">=" if rule.at_least else "<="
        unit = " ms" if rule.kind in ("latency", "delta_ping") else ""
        parts.append(f"limit {sign} {_number(rule.limit)}{unit}")
    if rule.direction is not None or rule.kind in ("absolute_sort", "distance_sort"):
        parts.append(f"direction {rule.direction or 'ascending'}")
    if rule.map_key is not None:
        parts.append(f"map_key {rule.map_key}")
    if rule.kind in ("overlap", "contains", "reference_overlap"):
        parts.append(f"party {list_party(rule.party)}")
    if rule.kind in ("skill_distance", "latency", "delta_ping", *numbers[2:]) or (
        rule.kind == "compare" and rule.value is None
    ):
        parts.append(f"party {rule.party}")
    if rule.kind == "team_balance":
        parts.append(f"team {rule.team}")
    if rule.expansions:
        steps = ", ".join(f"{_number(w)} min: {_number(v)}" for w, v in rule.expansions)
        parts.append(f"expansions [{steps}]")
    parts.append(f"clock {rule.clock}")
    parts.append(f"optional_after {_number(rule.optional_after)}")
    if rule.weight != 1.0:
        parts.append(f"weight {_number(rule.weight)}")
    if rule.kind in _NOTES and (fixed or rule.kind != "team_sizes"):
        parts.append(f"({_NOTES[rule.kind]})")
    if held_by is not None:
        parts.append(f"(holds only through compound rule {held_by})")
    if rule.in_file() is not None:
        parts.append(f"in the file: {rule.in_file()}")
    return "  " + "; ".join(parts)


def rule_lines(rules: list[RuleConfig] | tuple[RuleConfig, ...], fixed: bool = True) -> list[str]:
    """Return :func:`rule_line` of each rule, marking those a compound rule holds (``fixed``:
    whether the game's teams are of one fixed size, so that team sizes always hold)."""
    held: dict[str, str] = {}
    for rule in rules:
        if rule.kind == "compound" and rule.statement is not None:
            for name in compound_children([rule]):
                held.setdefault(name, rule.name)
    return [rule_line(r, held.get(r.name), fixed) for r in rules]


def _binding(attribute: Any) -> str:
    if attribute.type == "string_number_map":
        keys = ", ".join(f"{k} {v:g}" for k, v in attribute.values.items())
        return f"string_number_map, drawn: normal per key, means {keys}, sd {attribute.sd:g}"
    if attribute.type != "number":
        shares = ", ".join(f"{v} {s:g}" for v, s in attribute.values.items())
        return f"{attribute.type}, drawn: {shares}"
    if attribute.source == "drawn":
        return f"number, drawn: normal, mean {attribute.mean:g}, sd {attribute.sd:g}"
    what = "the driving rater's mean" if attribute.source == "rating" else "true skill"
    return f"number, {attribute.offset:g} + {attribute.scale:g} * {what}"


def _fixed(game: Mapping[str, Any]) -> bool:
    """Whether a game's teams (its ``game`` data) are of one fixed size."""
    from lobbysim.scenario.model import GameRules
    from lobbysim.scenario.parse import build

    shape = build(GameRules, dict(game), "game").shape
    return shape is None or shape.fixed


def batching_text(batching: str, sort: tuple[str, ...], size: int | None) -> str:
    """Return how FlexMatch's builder batches its pool, as ``rules show`` prints it after the
    algorithm: `` (batching largest_population on skill, batches of 40 tickets)``; with no
    batch size, the pool is one batch (each data centre's, with ``fastest_region``), so its
    order does not matter and the line says so."""
    parts = []
    if batching != "none":
        parts.append(f"batching {batching}" + (f" on {', '.join(sort)}" if sort else ""))
    if size is not None:
        parts.append(f"batches of {size} tickets")
    elif sort:
        parts.append("one batch: set matchmaker.batch_size to cut the sorted pool")
    return f" ({'; '.join(parts)})" if parts else ""


def _game_lines(game: Mapping[str, Any]) -> list[str]:
    """Return the game's line (its mode and teams in words), and a line per team where the
    teams are given one by one (their ranges and the expansions of their minimum, in seconds)."""
    from lobbysim.scenario.model import GameRules
    from lobbysim.scenario.parse import build

    rules: GameRules = build(GameRules, dict(game), "game")
    lines = [f"game: {rules.describe()}"]
    for team in rules.teams:
        low, high = team.low, team.max_players
        text = f"  team {team.name or '(unnamed)'}: " + (
            f"{high} players" if low == high else f"{low} to {high} players"
        )
        if team.quantity > 1:
            text += f", {team.quantity} teams alike"
        if team.expansions:
            steps = ", ".join(f"{_number(m * 60)} s: {_number(v)}" for m, v in team.expansions)
            text += f"; its minimum falls [{steps}] on the {team.clock} ticket's wait"
        lines.append(text)
    return lines


def show_lines(file: str | Path) -> list[str]:
    """Return ``lobbysim rules show``'s lines for a FlexMatch rule set or a scenario."""
    from lobbysim.flexmatch.read import read_flexmatch
    from lobbysim.scenario.files import load_scenario
    from lobbysim.scenario.parse import build

    path = Path(file)
    if path.suffix.lower() == ".json":
        imported = read_flexmatch(path)
        rules = [build(RuleConfig, r, f"rules[{i}]") for i, r in enumerate(imported.rules)]
        title = f" {imported.name!r}" if imported.name else ""
        lines = [
            f"FlexMatch rule set{title} ({path}), as lobbysim reads it:",
            *_game_lines(imported.game),
            f"matchmaker.algorithm: {imported.algorithm}"
            + batching_text(imported.batching, imported.batch_sort, None),
            "rules:",
            *rule_lines(rules, _fixed(imported.game)),
        ]
        if imported.declared:
            lines.append("attributes:")
        for name, kind in imported.declared.items():
            if name in imported.unbound:
                lines.append(
                    f"  {name}: {kind}, UNBOUND (bind it in the scenario's "
                    f"matchmaker.rules.attributes.{name})"
                )
            else:
                lines.append(f"  {name}: {kind}, read by no rule (left out unless bound)")
        lines += imported.notes
        for origin, count in imported.split_expansions:
            lines.append(
                f"expansions[{origin}]: {count} expansions written in one object (target and "
                f"steps given {count} times), read in the order written; a JSON reader keeping "
                "a key's last value would read only the last"
            )
        from lobbysim.flexmatch.json_text import comment_lines

        skipped = comment_lines(path.read_text(encoding="utf-8-sig"))
        if skipped:
            lines.append(f"{skipped} comment lines skipped (FlexMatch's service takes plain JSON)")
        return lines
    scenario = load_scenario(path)
    game = {
        k: v
        for k, v in scenario.to_dict()["game"].items()
        if k in ("mode", "team_size", "ffa_size", "teams")
    }
    mm = scenario.matchmaker
    lines = [f"scenario {scenario.name!r} ({path}), its rule set:", *_game_lines(game)]
    if mm.rules is None:
        steps = ", ".join(f"{_number(w)} min: {_number(q)}" for w, q in mm.threshold)
        return [*lines, f"no rule set: the matchmaker's threshold alone [{steps}]"]
    batching = batching_text(mm.batching, mm.batch_sort, mm.batch_size)
    lines += [
        f"matchmaker.algorithm: {mm.algorithm}{batching}",
        "rules:",
        *rule_lines(mm.rules, _fixed(game)),
    ]
    if scenario.attributes:
        lines.append("attributes:")
        lines += [f"  {name}: {_binding(a)}" for name, a in scenario.attributes.items()]
    return lines
