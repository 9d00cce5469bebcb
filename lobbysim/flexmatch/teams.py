"""FlexMatch's teams read into a scenario's ``game`` (see :mod:`lobbysim.flexmatch`).

:class:`TeamsReader` reads a rule set's ``teams`` (each team's ``name``, ``minPlayers``,
``maxPlayers``, ``quantity``) and the expansions of a team's ``minPlayers``: the fixed shapes
(two teams of one player, two teams of one size, one team or teams of one player of one size)
into ``game.mode`` with ``team_size`` or ``ffa_size`` as before, every other shape (ranges,
uneven teams, more than two, a falling minimum) into ``game.teams``
(:mod:`lobbysim.scenario.teams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lobbysim.flexmatch.rule_types import RuleTypes
from lobbysim.flexmatch.rules import MAX_PLAYERS, quoted
from lobbysim.registry import did_you_mean


def game_of(teams: list[dict[str, Any]], always: bool = False) -> dict[str, Any]:
    """Return the ``game`` fields of FlexMatch's teams (each read as ``name``, ``min_players``,
    ``max_players``, ``quantity``): the fixed shapes as ``mode`` and ``team_size`` or
    ``ffa_size`` (two teams of one player: 1v1; teams of one player each, three or more: a
    free-for-all of them), every other shape (or any, ``always``) as ``teams`` (one team: mode
    ``ffa``)."""
    sizes = [(t["min_players"], t["max_players"]) for t in teams for _ in range(t["quantity"])]
    fixed = all(low == high for low, high in sizes) and not always
    highs = [high for _, high in sizes]
    if fixed and len(sizes) == 1:
        return {"mode": "ffa", "ffa_size": highs[0]}
    if fixed and all(h == 1 for h in highs):
        return {"mode": "1v1"} if len(highs) == 2 else {"mode": "ffa", "ffa_size": len(highs)}
    if fixed and len(highs) == 2 and highs[0] == highs[1]:
        return {"mode": "team", "team_size": highs[0]}
    written = [
        {
            "name": t["name"],
            **({} if t["min_players"] == t["max_players"] else {"min_players": t["min_players"]}),
            "max_players": t["max_players"],
            **({} if t["quantity"] == 1 else {"quantity": t["quantity"]}),
        }
        for t in teams
    ]
    return {"mode": "ffa" if len(sizes) == 1 else "team", "teams": written}


class TeamsReader(RuleTypes):
    """The reading of a rule set's teams and of the expansions of a team's minimum, which the
    reader of :func:`lobbysim.flexmatch.read.read_flexmatch` builds on."""

    def read_teams(self, teams: Any) -> None:
        if not isinstance(teams, list) or not teams:
            self.problem(f"teams: expected a non-empty list of teams, got {quoted(teams)}")
            return
        read: list[dict[str, Any]] = []
        for i, raw in enumerate(teams):
            where = f"teams[{i}]"
            if not isinstance(raw, Mapping):
                self.problem(f"{where}: expected an object, got {quoted(raw)}")
                return
            self.keys(raw, ("name", "minPlayers", "maxPlayers", "quantity"), where, "a team")
            low = self.number(raw.get("minPlayers"), f"{where}.minPlayers", whole=True, minimum=1)
            high = self.number(raw.get("maxPlayers"), f"{where}.maxPlayers", whole=True, minimum=1)
            quantity = self.number(
                raw.get("quantity", 1), f"{where}.quantity", whole=True, minimum=1
            )
            if low is None or high is None or quantity is None:
                return
            if low > high:
                self.problem(f"{where}.minPlayers: {low:g} is more than maxPlayers {high:g}")
                return
            name = str(raw.get("name", f"team{i}"))
            count = int(quantity)
            self.team_names += [f"{name}_{k + 1}" for k in range(count)] if count > 1 else [name]
            read.append(
                {"name": name, "min_players": int(low), "max_players": int(high), "quantity": count}
            )
        self.players = sum(t["max_players"] * t["quantity"] for t in read)
        if self.players > MAX_PLAYERS:
            self.problem(f"teams: {self.players} players; a FlexMatch match holds at most 200")
            return
        self.team_list = read
        self.game = game_of(read)
        if self.game.get("mode") == "ffa" and self.game.get("ffa_size") == 1:
            self.problem("teams[0].maxPlayers: a game of one player is not a game")
            self.game = {}
            return
        # each team's lobbysim description by FlexMatch name, for expansions of its minimum
        self.team_configs = {t["name"]: t for t in self.game.get("teams", [])}

    def team_expansion(self, name: str, prop: str, steps: Any, where: str) -> None:
        """Read an expansion of a team's ``minPlayers`` into its ``game.teams`` entry's
        ``expansions`` (minutes and minimums; the rule set's clock)."""
        if not self.game:
            return  # the teams were refused
        teams = self.team_list
        known = [t["name"] for t in teams]
        target = f"teams[{name}].{prop}"
        if name not in known:
            self.problem(
                f"{where}.target: {target!r} names no team of the rule set"
                + did_you_mean(name, known)
            )
            return
        if prop != "minPlayers":
            self.problem(
                f"{where}.target: {target!r}: lobbysim expands a team's minPlayers only (a "
                "match starts once every team has its minimum; the maximum is what it fills to)"
            )
            return
        if "teams" not in self.game:  # a fixed shape whose minimum now falls: written as teams
            self.game = game_of(teams, always=True)
            self.team_configs = {t["name"]: t for t in self.game["teams"]}
        config = self.team_configs[name]
        if "expansions" in config:
            self.problem(f"{where}.target: {target!r} is expanded twice")
            return
        if not isinstance(steps, list) or not steps:
            self.problem(f"{where}.steps: expected a non-empty list of steps, got {quoted(steps)}")
            return
        out: list[list[float]] = []
        previous = (0.0, config.get("min_players", config["max_players"]))
        for j, step in enumerate(steps):
            here = f"{where}.steps[{j}]"
            if not isinstance(step, Mapping):
                self.problem(f"{here}: expected an object, got {quoted(step)}")
                return
            self.keys(step, ("waitTimeSeconds", "value"), here, "an expansion step")
            seconds = self.number(step.get("waitTimeSeconds"), f"{here}.waitTimeSeconds")
            value = self.number(step.get("value"), f"{here}.value", whole=True, minimum=1)
            if seconds is None or value is None:
                return
            if seconds <= previous[0] or value >= previous[1]:
                self.problem(
                    f"{here}: the waits increase from step to step (above 0) and the minimum "
                    f"falls (below {previous[1]:g}), got {seconds:g} s: {value:g}"
                )
                return
            out.append([seconds / 60.0, int(value)])
            previous = (seconds, value)
        config["min_players"] = config.get("min_players", config["max_players"])
        config["expansions"] = out
        if self.clock != "newest":
            config["clock"] = self.clock
