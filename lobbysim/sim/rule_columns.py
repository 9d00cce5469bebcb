"""The rule columns of a seat's record under a rule set (docs/model.md, section 10): each
attribute the rules read (the value they read when the seat was taken), with a world the
player's best latency over the data centres, and ``seat_opened`` (the minute a quit opened a
back-filled seat) (:func:`lobbysim.records.rows.rule_columns`).

:func:`recorded_attributes` says which attributes a rule set's records carry (None: no rule
columns), :func:`seat_values` makes one seat's columns; :class:`DuelRules` notes a run's 1v1
games as they start and gives their seats' columns as they are recorded (1v1 games have no
back-fill: ``seat_opened`` is always empty). Team and free-for-all games' seats go through
:class:`~lobbysim.sim.seat_rules.SeatRules`, which also keeps back-fills within the rules.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lobbysim.records.rows import DuelBatch
from lobbysim.scenario import Scenario
from lobbysim.scenario.attributes import RATING, AttributeConfig
from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.entities import Waiting
from lobbysim.sim.rules import LATENCY_KINDS, RuleSet
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

    def note_games(
        self,
        first: int,
        duels: Sequence[tuple[Waiting, Waiting, float]],
        ratings: Sequence[tuple[float, float]] | None,
        means: Callable[[Any], Any],
    ) -> None:
        """Note the 1v1 games about to start, ids ``first`` on, each of two waiting players,
        with the ratings the pass's rules read (None: the driving rater's ``means`` of the
        players' ids now)."""
        if ratings is None:
            ids = np.array([w.pid for wa, wb, _ in duels for w in (wa, wb)], dtype=np.int64)
            values = means(ids).tolist()
            ratings = list(zip(values[0::2], values[1::2], strict=True))
        for k, ((wa, wb, _), (ra, rb)) in enumerate(zip(duels, ratings, strict=True)):
            self.note(first + k, wa, wb, ra, rb)

    def record_games(self, batch: DuelBatch) -> list[tuple[tuple[Any, ...], ...]]:
        """Return :meth:`record` of each game of a batch of finished 1v1 games."""
        games = zip(batch.game_id, batch.player_a, batch.player_b, strict=True)
        return [self.record(g, a, b) for g, a, b in games]

    def record(self, game_id: int, pid_a: int, pid_b: int) -> tuple[tuple[Any, ...], ...]:
        """Return the rule columns of game ``game_id``'s two seats, side 0's then side 1's
        (and forget its note)."""
        rating_a, skill_a, rating_b, skill_b = self._notes.pop(game_id)
        rule_set, attributes, world = self.rule_set, self.attributes, self._world
        return (
            seat_values(rule_set, attributes, world, pid_a, rating_a, skill_a, math.nan),
            seat_values(rule_set, attributes, world, pid_b, rating_b, skill_b, math.nan),
        )
