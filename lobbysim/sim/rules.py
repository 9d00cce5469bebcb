"""A scenario's rule set at work: the players' attributes, each rule's limit on its clock, and
whether a match keeps every rule (docs/model.md, section 10).

:class:`~lobbysim.sim.attributes.Attributes` draws every player's attributes; :class:`RuleSet`
compiles ``matchmaker.rules`` (:mod:`lobbysim.scenario.rules`); a pass hands it a
:class:`View` of the pool (each player's ratings, attributes, latencies, party and wait), and it
answers for a candidate match, tickets (a solo player or a whole party) and, for team games,
their teams: :meth:`RuleSet.first_broken` (the index of the first rule the match breaks, or -1)
and :meth:`RuleSet.steps` (the expansion step each rule is at). A ticket's wait is its
longest-waiting member's; a ticket's value of a number attribute combines its members' by the
rule's ``party`` aggregation.

**Clocks.** A rule's limit is the value of the last step whose wait is at most the clock's wait:
the longest of the match's tickets' waits (``oldest``), the shortest (``newest``), their mean
(``average``), or, with ``own``, each ticket's own limit, a condition between tickets holding
under the stricter. A rule whose clock has reached ``optional_after`` holds nothing back (with
``own``: once every ticket's own wait has).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from lobbysim.scenario.attributes import RATING, AttributeConfig
from lobbysim.scenario.compound import compound_children, parse_statement
from lobbysim.scenario.rules import EACH_PLAYER_KINDS, RuleConfig
from lobbysim.sim.attributes import Attributes
from lobbysim.sim.entities import FloatArray, IdArray
from lobbysim.sim.rule_kinds import MORE_KINDS, more_kind_holds

IntArray = NDArray[np.intp]
#: The kinds of rule that constrain latency (a game's data centre).
LATENCY_KINDS = ("latency", "delta_ping")
#: A candidate match: its tickets (pool positions of their players) and, in team games, each
#: ticket's team (None: no teams, or not split yet).
Tickets = Sequence[Sequence[int]]


@dataclass
class View:
    """What a pass knows of its pool, for the rules (arrays in pool order).

    Attributes:
        waited: each player's wait, minutes.
        rating: each player's driving-rater mean; skill: their true skill (None: not asked).
        quality: the match quality of pool positions (the driving rater's).
        numbers, codes, masks: each attribute's values (number attributes bound to the rating
            or true skill included), by name; a number column an ``equal`` or ``distinct`` rule
            reads has codes too, the index of each player's value among the pool's distinct
            values (equal numbers, one code; codes compare within one view only).
        latency, best: each player's latency to every data centre and to their best (None: no
            world).
        premade: whether each player is in a party of two or more.
    """

    waited: FloatArray
    rating: FloatArray
    quality: Callable[[IntArray, IntArray], FloatArray]
    numbers: dict[str, FloatArray]
    codes: dict[str, NDArray[np.int64]]
    masks: dict[str, NDArray[np.int64]]
    latency: FloatArray | None = None
    best: FloatArray | None = None
    premade: NDArray[np.bool_] | None = None


class Rule:
    """One compiled rule: its limit by wait, on its clock (see the module docstring)."""

    def __init__(self, config: RuleConfig) -> None:
        self.config = config
        self.name, self.kind = config.name, config.kind
        self.at_least = config.at_least
        self.attribute = config.column  # the attribute, X[KEY] for a map's key
        base = -math.inf if self.at_least else math.inf
        self._waits = [0.0, *(w for w, _ in config.expansions)]
        limit = base if config.limit is None else config.limit
        self._limits = [limit, *(v for _, v in config.expansions)]
        self.optional_after = math.inf if config.optional_after is None else config.optional_after
        self.weight = config.weight

    @property
    def steps(self) -> int:
        """The number of steps: the first and its expansions."""
        return len(self._limits)

    def step_at(self, wait: float) -> int:
        """Return the expansion step in force after ``wait`` minutes (0: the first)."""
        return max(bisect.bisect_right(self._waits, wait) - 1, 0)

    def limit_at(self, wait: float) -> float:
        """Return the limit in force after ``wait`` minutes."""
        return self._limits[self.step_at(wait)]

    def limits_at(self, waits: FloatArray) -> FloatArray:
        """:meth:`limit_at` of many waits; a wait past ``optional_after`` gets no limit (an
        infinite one)."""
        index = np.maximum(np.searchsorted(self._waits, waits, side="right") - 1, 0)
        out: FloatArray = np.asarray(self._limits)[index]
        free = -np.inf if self.at_least else np.inf
        return np.where(np.asarray(waits) >= self.optional_after, free, out)

    def clock(self, waits: Sequence[float]) -> float:
        """Return the wait that drives the rule for tickets waiting ``waits`` (not ``own``)."""
        how = self.config.clock
        if how == "oldest":
            return max(waits)
        if how == "newest":
            return min(waits)
        return math.fsum(waits) / len(waits)

    def limits(self, waits: Sequence[float]) -> list[float] | None:
        """Return the limit each ticket is held to (one for all but with ``own``); None if the
        rule holds nothing back any more (``optional_after``)."""
        if self.config.clock == "own":
            if min(waits) >= self.optional_after:
                return None
            return [
                self.limit_at(w)
                if w < self.optional_after
                else (-math.inf if self.at_least else math.inf)
                for w in waits
            ]
        wait = self.clock(waits)
        if wait >= self.optional_after:
            return None
        return [self.limit_at(wait)] * len(waits)


def ticket_latency(latency: FloatArray, how: str) -> FloatArray:
    """Return a ticket's latency to each data centre from its members' (rows), combined by
    ``how`` (``average``, ``min``, ``max``)."""
    if how == "min":
        return latency.min(axis=0)
    if how == "max":
        return latency.max(axis=0)
    return latency.mean(axis=0)


def combine(values: FloatArray, how: str) -> float:
    """Return ``values`` combined by ``how``: ``average``, ``min``, ``max`` or ``sum``."""
    if how == "min":
        return float(values.min())
    if how == "max":
        return float(values.max())
    if how == "sum":
        return float(values.sum())
    return float(values.mean())


def solo_players(tickets: Tickets) -> list[int] | None:
    """Return the tickets' players if every ticket is one player (their values are then the
    players' own, whatever the aggregation), else None."""
    if all(len(t) == 1 for t in tickets):
        return [t[0] for t in tickets]
    return None


class RuleSet:
    """A scenario's rules, compiled, and the tallies of their telemetry.

    Args:
        rules: ``matchmaker.rules``.
        attributes: the players' drawn attributes (None: the scenario declares none).
        configs: the scenario's ``attributes:`` section (bound numbers' scale and offset).
    """

    def __init__(
        self,
        rules: Sequence[RuleConfig],
        attributes: Attributes | None,
        configs: Mapping[str, AttributeConfig] | None = None,
    ) -> None:
        self.rules = [Rule(r) for r in rules]
        self.attributes = attributes
        self.configs = dict(configs or {})
        #: Per rule: how often it was the first a candidate match broke.
        self.rejections = [0] * len(self.rules)
        #: The rules that hold only through a compound rule naming them (by index), the rules
        #: by name, and each compound rule's statement as a tree (by index).
        children = compound_children(list(rules))
        self.children = {k for k, r in enumerate(rules) if r.name in children}
        self.by_name = {r.name: k for k, r in enumerate(rules)}
        self.trees = {
            k: parse_statement(r.statement)[0]
            for k, r in enumerate(rules)
            if r.kind == "compound" and r.statement is not None
        }
        #: The number columns an ``equal`` or ``distinct`` rule reads: the view gives them
        #: codes too (see :meth:`view`).
        numbers = ("number", "string_number_map")
        numeric = {n for n, c in self.configs.items() if c.type in numbers} | {RATING}
        self.coded_numbers = sorted(
            {
                r.attribute
                for r in self.rules
                if r.kind in EACH_PLAYER_KINDS and (r.config.attribute or "") in numeric
            }
        )

    # ------------------------------------------------------------------ the pool's view
    def view(
        self,
        pids: IdArray,
        waited: FloatArray,
        rating: FloatArray,
        quality: Callable[[IntArray, IntArray], FloatArray],
        skill: FloatArray | None = None,
        latency: FloatArray | None = None,
        best: FloatArray | None = None,
        premade: NDArray[np.bool_] | None = None,
    ) -> View:
        """Return the rules' view of a pool of players ``pids`` (see :class:`View`)."""
        numbers: dict[str, FloatArray] = {RATING: np.asarray(rating, dtype=float)}
        codes: dict[str, NDArray[np.int64]] = {}
        masks: dict[str, NDArray[np.int64]] = {}
        for name, config in self.configs.items():
            if config.type == "string_number_map":
                assert self.attributes is not None
                for key in config.values:
                    keyed = f"{name}[{key}]"
                    numbers[keyed] = self.attributes.column(keyed, pids).astype(float)
            elif config.type == "number":
                if config.source == "drawn":
                    assert self.attributes is not None
                    numbers[name] = self.attributes.column(name, pids).astype(float)
                else:
                    x = rating if config.source == "rating" else skill
                    assert x is not None, "an attribute bound to true skill needs the players"
                    numbers[name] = config.offset + config.scale * np.asarray(x, dtype=float)
            else:
                assert self.attributes is not None
                column = self.attributes.column(name, pids).astype(np.int64)
                (codes if config.type == "string" else masks)[name] = column
        for name in self.coded_numbers:  # equal numbers share a code, valid in this view
            inverse = np.unique(numbers[name], return_inverse=True)[1]
            codes[name] = inverse.reshape(-1).astype(np.int64)
        return View(waited, rating, quality, numbers, codes, masks, latency, best, premade)

    @property
    def sorts(self) -> list[Rule]:
        """The sort rules (``absolute_sort``, ``distance_sort``) in the order listed: how a
        builder orders its candidates, each by its ``config``'s ``direction`` (unset:
        ascending), ``attribute`` (a ``string_number_map``'s key by ``map_key``) and
        ``party``. They constrain nothing: :meth:`first_broken` passes them."""
        return [r for r in self.rules if r.kind in ("absolute_sort", "distance_sort")]

    @property
    def needs_skill(self) -> bool:
        """Whether a number attribute is bound to true skill (the pass must give it)."""
        return any(c.type == "number" and c.source == "skill" for c in self.configs.values())

    # ------------------------------------------------------------------ a candidate match
    def first_broken(
        self,
        view: View,
        tickets: Tickets,
        teams: Sequence[int] | None = None,
        *,
        partial: bool = False,
        count: bool = True,
    ) -> int:
        """Return the index of the first rule the match of ``tickets`` breaks (-1: none).

        ``teams``: each ticket's team (team games, once split; None: the team rules wait);
        ``partial``: the match is not full yet (the rules on a whole match wait: team balance,
        party parity, counts); ``count``: tally a broken rule in :attr:`rejections`.
        """
        solo = solo_players(tickets)
        waits = (
            view.waited[solo].tolist()
            if solo is not None
            else [float(view.waited[list(t)].max()) for t in tickets]
        )
        for index, rule in enumerate(self.rules):
            if index in self.children:  # it holds through its compound rule
                continue
            limits = rule.limits(waits)
            if limits is None:
                continue
            if not self.holds(rule, limits, view, tickets, teams, partial=partial):
                if count:
                    self.rejections[index] += 1
                return index
        return -1

    def steps(self, waited: FloatArray, tickets: Tickets) -> list[int]:
        """Return the expansion step each rule is at for a match of ``tickets`` (``waited``:
        the pool's waits; by the rule's clock; with ``own``, the furthest of the tickets')."""
        waits = [float(waited[list(t)].max()) for t in tickets]
        return [
            max(r.step_at(w) for w in waits)
            if r.config.clock == "own"
            else r.step_at(r.clock(waits))
            for r in self.rules
        ]

    def holds(
        self,
        rule: Rule,
        limits: list[float],
        view: View,
        tickets: Tickets,
        teams: Sequence[int] | None = None,
        *,
        partial: bool = False,
    ) -> bool:
        """Return whether a match of ``tickets`` (``teams``: each ticket's team) keeps one rule
        under ``limits`` (each ticket's); ``partial``: the rules on a whole match hold."""
        kind = rule.kind
        if kind in MORE_KINDS:
            return more_kind_holds(self, rule, limits, view, tickets, teams, partial=partial)
        strict = max(limits) if rule.at_least else min(limits)
        players = np.array([p for t in tickets for p in t], dtype=np.intp)
        if kind == "match_quality":
            if len(players) < 2:
                return True
            i, j = np.triu_indices(len(players), k=1)
            return bool(np.mean(view.quality(players[i], players[j])) >= strict)
        if kind == "mean_distance":  # each ticket's value within the limit of the mean
            if partial:
                return True  # (the mean moves as players join)
            x = view.numbers[rule.attribute]
            mean = float(x[players].mean())
            values = [combine(x[list(t)], rule.config.party) for t in tickets]
            return all(abs(v - mean) <= lim for v, lim in zip(values, limits, strict=True))
        if kind == "skill_distance":
            x = view.numbers[rule.attribute]
            solo = solo_players(tickets)
            values = (
                x[solo].tolist()
                if solo is not None
                else [combine(x[list(t)], rule.config.party) for t in tickets]
            )
            if rule.config.clock != "own":  # one limit: the values' range is their widest gap
                return max(values) - min(values) <= limits[0]
            return all(
                abs(values[a] - values[b]) <= min(limits[a], limits[b])
                for a in range(len(values))
                for b in range(a + 1, len(values))
            )
        if kind in ("latency", "delta_ping"):
            assert view.latency is not None and view.best is not None
            lat = view.latency
            if kind == "delta_ping":
                lat = lat - view.best[:, None]
            # a ticket's latency to each data centre: its members' combined by ``party``
            solo = solo_players(tickets)
            each = (
                lat[solo]
                if solo is not None
                else np.array([ticket_latency(lat[list(t)], rule.config.party) for t in tickets])
            )
            return bool((each <= np.asarray(limits)[:, None]).all(axis=0).any())
        if kind == "equal":
            return len(set(view.codes[rule.attribute][players].tolist())) <= 1
        if kind == "distinct":
            codes = view.codes[rule.attribute][players].tolist()
            return len(set(codes)) == len(codes)
        if partial:
            return True
        if kind == "count":
            config = rule.config
            assert self.attributes is not None and config.value is not None
            target = self.attributes.values[rule.attribute].index(config.value)
            hits = view.codes[rule.attribute][players] == target
            if teams is None:
                return bool(hits.sum() >= strict)
            side = np.repeat(np.asarray(teams), [len(t) for t in tickets])
            return all(hits[side == s].sum() >= strict for s in np.unique(side).tolist())
        if teams is None:
            return True
        side = np.repeat(np.asarray(teams), [len(t) for t in tickets])
        present = np.unique(side).tolist()
        if kind == "team_balance":
            x = view.numbers[rule.attribute][players]
            how = rule.config.team
            if present == [0, 1] and (side == 0).sum() * 2 == side.size:
                return abs(combine(x[side == 0], how) - combine(x[side == 1], how)) <= strict
            if how == "average":  # each team's average within half the limit of the match's
                overall = float(x.mean())
                return all(abs(float(x[side == s].mean()) - overall) <= strict / 2 for s in present)
            values = [combine(x[side == s], how) for s in present]
            return max(values) - min(values) <= strict
        assert kind == "party_parity"
        premade = (
            np.zeros(len(players), dtype=bool) if view.premade is None else view.premade[players]
        )
        counts = [int(premade[side == s].sum()) for s in present]
        return max(counts) - min(counts) <= strict
