"""A rule set at the seats of games: what each seat's record carries for the rules, and whether
a back-fill of a team or free-for-all game keeps them (docs/model.md, section 10).

A run under ``matchmaker.rules`` with team or free-for-all games gives its
:class:`~lobbysim.sim.group_games.GroupGames` a :class:`SeatRules`
(:meth:`GroupGames.follow_rules <lobbysim.sim.group_games.GroupGames.follow_rules>`). It notes,
for every seat taken, the values the rules read then (the rating the pass used, the true
skill, the minute a back-filled seat was opened), and turns them into the seat's record columns
(:mod:`lobbysim.sim.rule_columns`, which also has a 1v1 run's :class:`~lobbysim.sim.rule_columns
.DuelRules`).

**Back-fill under the rules.** FlexMatch fills a running match's open slots through a back-fill
ticket that carries the players in the match and is matched through the same rule set as any
ticket (the AWS GameLift FlexMatch guide, "backfill"): the match as it would stand, its
seated players with the new ticket, must keep every rule, latency included, at the match's own
location. Here the seated players are that back-fill ticket, created when the quit opened the
seat: its age is the minutes since then, the new ticket's age its own wait, and each rule's
limit is read off the rule's own clock from those two ages (``newest``, FlexMatch's default: the
younger; ``oldest``: the older; ``average``: their mean; ``own``: each ticket its own). The
seated players keep the tickets (parties) and teams they sat down with; a seated player's
number attribute bound to the rating is the value the rules used when the player sat down. A
``match_quality`` rule is the matchmaker's quality of waiting players and is not asked of a
back-fill. A ``team_balance`` rule on team averages is read, when a back-fill leaves the teams
of unequal sizes, as FlexMatch's distance of each team's average from the match's, within half
the limit (for teams of one size, the rule's own reading; else stricter). A seat is filled, as
without rules, by the eligible player nearest the leaver (at
random for a policy that pairs at random), but only by one whose ticket keeps every rule; a
back-fill counts in the rules' telemetry as a match formed
(:meth:`~lobbysim.sim.rule_pass.RulePass.formed`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lobbysim.scenario import Scenario
from lobbysim.sim.entities import FloatArray, GroupGame, Waiting
from lobbysim.sim.parties import Parties
from lobbysim.sim.rule_columns import scenario_rule_attributes, seat_values
from lobbysim.sim.rule_pass import RulePass
from lobbysim.sim.rules import View
from lobbysim.sim.world import World


class SeatRules:
    """The rule set of a run at its group games' seats (see the module docstring).

    Args:
        rule_pass: the run's rules in its passes (its rule set, its telemetry).
        scenario: the scenario (the rules' attributes, the game's mode).
        world, parties: where games are hosted, who queues with whom (each None: none).
    """

    def __init__(
        self,
        rule_pass: RulePass,
        scenario: Scenario,
        world: World | None = None,
        parties: Parties | None = None,
    ) -> None:
        self.rule_pass = rule_pass
        self.rule_set = rule_pass.rule_set
        self._team = scenario.game.mode == "team"
        self._world, self._parties = world, parties
        assert scenario.matchmaker.rules is not None
        attributes = scenario_rule_attributes(scenario)
        #: Whether seats' records carry the rule columns; the attributes they carry.
        self.recorded = attributes is not None
        self.attributes = attributes or {}
        #: Per seat taken and not yet recorded, by (game, player): the rating the rules used,
        #: the true skill, and the minute the seat was opened (NaN: taken at the formation).
        self._notes: dict[tuple[int, int], tuple[float, float, float]] = {}
        #: The back-fills made under the rules (each counted in the telemetry as a match).
        self.backfills = 0

    # ------------------------------------------------------------------ the seats' records
    def note(self, game_id: int, player: Waiting, rating: float, opened: float) -> None:
        """Note a seat about to be taken in game ``game_id``: the rating the pass used
        (``opened``: the minute a back-filled seat was opened, NaN at the formation)."""
        self._notes[(game_id, player.pid)] = (float(rating), float(player.player.skill), opened)

    def record(self, game_id: int, pid: int) -> tuple[Any, ...]:
        """Return the rule columns of a seat of game ``game_id`` (and forget its note)."""
        rating, skill, opened = self._notes.pop((game_id, pid))
        return seat_values(self.rule_set, self.attributes, self._world, pid, rating, skill, opened)

    # ------------------------------------------------------------------ back-fill
    def candidates(
        self,
        game: GroupGame,
        waiting: Sequence[Waiting],
        rating: FloatArray,
        positions: Sequence[int],
        team: int | None,
        opened: float,
        now: float,
        *,
        first: bool = False,
    ) -> list[bool]:
        """Return, for each waiting player at ``positions`` (pass ratings ``rating``, in pool
        order), whether the game's seated players with that player's ticket keep every rule
        for a seat of ``team`` opened at ``opened`` (see the module docstring); ``first``:
        only up to the first who does (the list then ends there)."""
        if not positions:
            return []
        view, tickets, teams = self._view(game, waiting, rating, positions, team, opened, now)
        n_seated = len(tickets) - len(positions)
        seated = tickets[:n_seated]
        seated_teams = None if teams is None else teams[:n_seated]
        rule_set = self.rule_set
        if seated:  # seated players who break a rule no ticket can mend: nobody may sit
            # (on the loosest clock any ticket could give: limits relax as waits grow; a rule
            # on the whole match, which a new player may mend, waits)
            waited = view.waited.copy()
            waited[: len(game.seated)] = max(float(view.waited.max()), now - opened)
            loosest = dataclasses.replace(view, waited=waited)
            if rule_set.first_broken(loosest, seated, seated_teams, partial=True, count=False) >= 0:
                return [False] * len(positions)
        out = []
        for k in range(len(positions)):
            match = [*seated, tickets[n_seated + k]]
            sides = None if seated_teams is None else [*seated_teams, team or 0]
            keeps = rule_set.first_broken(view, match, sides, count=False) < 0
            out.append(keeps and (sides is None or self._even(view, match, sides)))
            if first and out[-1]:
                break
        return out

    def _even(self, view: View, tickets: list[list[int]], teams: list[int]) -> bool:
        """Whether the teams of a back-fill of unequal sizes keep each ``team_balance`` rule
        on averages as FlexMatch's distance between each team's average and the match's: each
        within half the limit of the match's average (with teams of one size, the rule's own
        reading; otherwise stricter than it)."""
        side = np.repeat(np.asarray(teams), [len(t) for t in tickets])
        if (side == 0).sum() == (side == 1).sum():
            return True
        players = np.array([p for t in tickets for p in t], dtype=np.intp)
        waits = [float(view.waited[t].max()) for t in tickets]
        for rule in self.rule_set.rules:
            if rule.kind != "team_balance" or rule.config.team != "average":
                continue
            limits = rule.limits(waits)
            if limits is None:
                continue
            x = view.numbers[rule.attribute][players]
            overall = float(x.mean())
            half = min(limits) / 2
            if any(abs(float(x[side == s].mean()) - overall) > half for s in (0, 1)):
                return False
        return True

    def formed(
        self,
        game: GroupGame,
        member: Waiting,
        rating: float,
        team: int | None,
        opened: float,
        now: float,
    ) -> None:
        """Count a back-fill of ``member`` (pass rating ``rating``) in the rules' telemetry as
        a match formed (before the player is seated)."""
        view, tickets, teams = self._view(
            game, [member], np.array([rating]), [0], team, opened, now
        )
        self.backfills += 1
        self.rule_pass.formed(view.waited, tickets, now, view, teams)

    def _view(
        self,
        game: GroupGame,
        waiting: Sequence[Waiting],
        rating: FloatArray,
        positions: Sequence[int],
        team: int | None,
        opened: float,
        now: float,
    ) -> tuple[View, list[list[int]], list[int] | None]:
        """Return the rules' view of a back-fill: the game's seated players (their tickets
        first, one per party) then the waiting players at ``positions``, a ticket each; and
        each ticket's team in a team game (the candidates' that of the seat)."""
        stints = list(game.seated.values())
        notes = self._notes
        gid = game.game_id
        pids = [s.player.pid for s in stints] + [waiting[k].pid for k in positions]
        ratings = [notes[(gid, s.player.pid)][0] for s in stints]
        ratings += [float(rating[k]) for k in positions]
        skills = [notes[(gid, s.player.pid)][1] for s in stints]
        skills += [waiting[k].player.skill for k in positions]
        age = now - opened  # the back-fill ticket's
        waited = np.array([age] * len(stints) + [now - waiting[k].since for k in positions])
        ids = np.array(pids, dtype=np.int64)
        latency = best = None
        if self._world is not None:
            every = self._world.latencies_of(ids)
            best = every.min(axis=1)
            latency = every[:, [game.data_centre]]  # the match's own location only
        premade = None
        if self._parties is not None:
            premade = np.array(
                [s.party >= 0 for s in stints] + [waiting[k].player.party >= 0 for k in positions]
            )
        view = self.rule_set.view(
            ids,
            waited,
            np.array(ratings, dtype=float),
            _no_quality,
            np.array(skills, dtype=float),
            latency,
            best,
            premade,
        )
        tickets: list[list[int]] = []
        teams: list[int] = []
        by_party: dict[int, list[int]] = {}
        for k, stint in enumerate(stints):
            if stint.party >= 0 and stint.party in by_party:
                by_party[stint.party].append(k)
                continue
            tickets.append([k])
            teams.append(stint.team or 0)
            if stint.party >= 0:
                by_party[stint.party] = tickets[-1]
        for k in range(len(positions)):
            tickets.append([len(stints) + k])
            teams.append(team or 0)
        return view, tickets, teams if self._team else None


def _no_quality(i: Any, j: Any) -> FloatArray:
    """The match quality of a back-fill's view: not asked (a ``match_quality`` rule holds)."""
    return np.full(np.shape(i), math.inf)
