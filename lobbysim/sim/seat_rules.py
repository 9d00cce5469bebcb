"""A rule set at the seats of games: what each seat's record carries for the rules, and whether
a back-fill of a team or free-for-all game keeps them (docs/model.md, section 10).

A run under ``matchmaker.rules`` with team or free-for-all games gives its
:class:`~lobbysim.sim.group_games.GroupGames` a :class:`SeatRules`
(:meth:`GroupGames.follow_rules <lobbysim.sim.group_games.GroupGames.follow_rules>`). It notes,
for every seat taken, the values the rules read then (the rating the pass used, the true
skill, the minute a back-filled seat was opened), and turns them into the seat's record columns
(:func:`lobbysim.records.rows.rule_columns`): each attribute a rule reads, with a world the
player's best latency over the data centres, and ``seat_opened``. A 1v1 run under a rule set
records the same columns through a :class:`DuelRules` (1v1 games have no back-fill: their
``seat_opened`` is always empty).

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
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lobbysim.scenario import Scenario
from lobbysim.scenario.rules import RATING, AttributeConfig, RuleConfig
from lobbysim.sim.entities import FloatArray, GroupGame, Waiting
from lobbysim.sim.parties import Parties
from lobbysim.sim.rule_pass import RulePass
from lobbysim.sim.rules import LATENCY_KINDS, RuleSet, View
from lobbysim.sim.world import World

#: The attribute types a seat's record carries (a ``number`` as a float, a ``string`` as its
#: text, a ``string_list`` as JSON text); a rule on another type has no column.
RECORDED_TYPES = {"number": "float64", "string": "str", "string_list": "str"}
#: The rule kinds that read the rating when they name no attribute.
_RATING_KINDS = ("skill_distance", "team_balance", "mean_distance")


def rule_attributes(
    rules: Sequence[RuleConfig], configs: Mapping[str, AttributeConfig]
) -> dict[str, str]:
    """Return the attributes the rules read, in order of first use, each with its record dtype
    (``rating``, lobbysim's built-in, is a number; a ``reference_overlap`` rule reads its
    ``reference`` attribute after its own)."""
    out: dict[str, str] = {}
    for rule in rules:
        name = rule.attribute
        if name is None and rule.kind in _RATING_KINDS:
            name = RATING
        for each in (name, rule.reference):
            if each is None or each in out:
                continue
            config = configs.get(each)
            if config is None:
                if each == RATING:
                    out[each] = "float64"
                continue
            dtype = RECORDED_TYPES.get(config.type)
            if dtype is not None:
                out[each] = dtype
    return out


def recorded_attributes(
    rules: Sequence[RuleConfig], configs: Mapping[str, AttributeConfig]
) -> dict[str, str] | None:
    """Return :func:`rule_attributes` of a rule set that reads an attribute or latency, else
    None (its records have no rule columns: a rule set of ``match_quality`` or
    ``party_parity`` rules reads nothing a seat's record could carry)."""
    attributes = rule_attributes(rules, configs)
    if not attributes and not any(r.kind in LATENCY_KINDS for r in rules):
        return None
    return attributes


def scenario_rule_attributes(scenario: Scenario) -> dict[str, str] | None:
    """Return :func:`recorded_attributes` of a scenario's rule set (any game mode), or None
    without one: the attributes whose columns its participants records carry."""
    rules = scenario.matchmaker.rules
    if rules is None:
        return None
    return recorded_attributes(rules, dict(scenario.attributes or {}))


def seat_values(
    rule_set: RuleSet,
    attributes: Mapping[str, str],
    world: World | None,
    pid: int,
    rating: float,
    skill: float,
    opened: float,
) -> tuple[Any, ...]:
    """Return the rule columns of a seat of player ``pid`` (:func:`rule_columns
    <lobbysim.records.rows.rule_columns>`): each of ``attributes`` as the rules read it (a
    number bound to the rating or true skill from ``rating`` or ``skill``, the values the
    rules used when the seat was taken), with a world the player's best latency, then
    ``opened`` (the minute a back-filled seat was opened, NaN: taken at the formation)."""
    values: list[Any] = []
    for name in attributes:
        config = rule_set.configs.get(name)
        if config is None:  # the built-in rating
            values.append(rating)
        elif config.type == "number":
            if config.source == "drawn":
                assert rule_set.attributes is not None
                values.append(float(rule_set.attributes.column(name, np.array([pid]))[0]))
            else:
                x = rating if config.source == "rating" else skill
                values.append(float(config.offset + config.scale * x))
        else:
            assert rule_set.attributes is not None
            code = int(rule_set.attributes.column(name, np.array([pid]))[0])
            names = rule_set.attributes.values[name]
            if config.type == "string":
                values.append(names[code])
            else:
                has = [v for b, v in enumerate(names) if code >> b & 1]
                values.append(json.dumps(has, ensure_ascii=False, separators=(",", ":")))
    if world is not None:
        values.append(float(world.latencies_of(np.array([pid])).min()))
    values.append(opened)
    return tuple(values)


class DuelRules:
    """A rule set at the seats of 1v1 games: the rule columns of each seat's record.

    Made by the 1v1 pass of a run under a rule set whose records carry rule columns
    (:func:`recorded_attributes`; :class:`~lobbysim.sim.duel_pass.DuelPass`) and given to the
    run's :class:`~lobbysim.sim.games.Games`, which notes each 1v1 game's two seats as it
    starts (the ratings the pass used, the true skills) and asks for their columns as it
    records the game. A 1v1 game has no back-fill: ``seat_opened`` is NaN.

    Args:
        rule_set: the run's rule set (its rules, attribute configs and drawn attributes).
        world: where games are hosted (None: none; then no ``best_latency_ms``).
    """

    def __init__(self, rule_set: RuleSet, world: World | None = None) -> None:
        self.rule_set = rule_set
        self._world = world
        attributes = recorded_attributes([r.config for r in rule_set.rules], rule_set.configs)
        #: Whether the seats' records carry rule columns; the attributes they carry.
        self.recorded = attributes is not None
        self.attributes = attributes or {}
        #: Per 1v1 game started and not yet recorded: each side's rating and true skill.
        self._notes: dict[int, tuple[float, float, float, float]] = {}

    def note(self, game_id: int, a: Waiting, b: Waiting, rating_a: float, rating_b: float) -> None:
        """Note 1v1 game ``game_id`` of ``a`` (side 0) and ``b`` (side 1) as it starts, with
        the ratings the pass used."""
        self._notes[game_id] = (
            float(rating_a),
            float(a.player.skill),
            float(rating_b),
            float(b.player.skill),
        )

    def record(self, game_id: int, pid_a: int, pid_b: int) -> tuple[tuple[Any, ...], ...]:
        """Return the rule columns of game ``game_id``'s two seats, side 0's then side 1's
        (and forget its note)."""
        rating_a, skill_a, rating_b, skill_b = self._notes.pop(game_id)
        rule_set, attributes, world = self.rule_set, self.attributes, self._world
        return (
            seat_values(rule_set, attributes, world, pid_a, rating_a, skill_a, math.nan),
            seat_values(rule_set, attributes, world, pid_b, rating_b, skill_b, math.nan),
        )


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
