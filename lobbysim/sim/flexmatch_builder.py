"""FlexMatch's way of building matches under a rule set (``matchmaker.algorithm: flexmatch``).

Amazon GameLift FlexMatch documents its default algorithm as: the open tickets are grouped into
batches, the tickets of a batch are sorted by age, and a match is built from the oldest ticket
of each batch, the other tickets of the batch evaluated against it until the match is full.
:func:`flexmatch_matches` builds matches that way from the pass's tickets (a solo player, or a
whole party):

* **Batches.** Every ticket is in one batch (FlexMatch forms several batches only once its pool
  outgrows a batch size it does not publish). With ``batching: fastest_region`` (a FlexMatch
  ``batchingPreference`` of ``fastestRegion``; a world is needed) the tickets are batched by the
  data centre where their latency is lowest (a party's latency to a data centre is its worst
  member's). With a ``batch_size`` the pool (each data centre's, with ``fastest_region``) is
  cut into batches of that many tickets, in the order of its batching
  (:func:`cut_batches`): ``largest_population`` and ``sorted`` sort it on ``batch_sort``
  (FlexMatch's ``balancedAttribute``, ``sortByAttributes``), so a batch holds players alike in
  them; ``none`` (FlexMatch's ``random``) deals it at random; ``fastest_region`` keeps it
  oldest first. A batch's matches are built before the next's, the batch whose oldest ticket
  has waited longest first.
* **Anchors.** Within a batch, the oldest free ticket anchors a match (ties to the earlier in the
  queue); if it cannot be completed in this pass, it waits for the next and the next oldest
  anchors.
* **Candidates.** The anchor's batch-mates that can keep every pairwise rule with it (the check
  :func:`~lobbysim.sim.seed_greedy.seed_greedy` makes) are evaluated oldest first (ties to the
  earlier in the queue), or, with sort rules (:class:`SortKey`), in their order: by a sort's
  value (``absoluteSort``: the ticket's value of the attribute; ``distanceSort``: its distance
  from the anchor's), ascending or descending, each later sort breaking the earlier's ties and
  age breaking the last. A candidate joins while the match still keeps every rule a match short
  of players can be held to, until the match is full; a full match is split into teams (team
  games) and starts if it keeps every rule.
* **Teams of ranges** (``game.teams``; FlexMatch fills teams towards their ``maxPlayers`` but
  makes matches with fewer): when the candidates run out first, the match starts with the
  players it has if every team gets its minimum (after the team-size expansions the match's
  clock has reached) and the rules hold; else the longest of its first tickets that can does
  (:func:`~lobbysim.sim.seed_greedy.grow_matches`). Its teams are filled in FlexMatch's order
  and balanced on the ratings (:func:`~lobbysim.policies.team_shapes.spread_split`).

It differs from ``seed_greedy`` only in the candidates' order: ``seed_greedy`` ranks them by
their weighted rule distance from the seed (the closest first), FlexMatch by age (the oldest
first), so FlexMatch serves the longest waits first where ``seed_greedy`` packs the closest
players. Neither is an exact search (``algorithm: exact`` is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lobbysim.scenario.matchmaker import BATCHINGS
from lobbysim.scenario.teams import TeamShape
from lobbysim.sim.rules import RuleSet, View, combine, ticket_latency
from lobbysim.sim.seed_greedy import Match, Split, grow_matches
from lobbysim.sim.ticket_table import TicketTable


@dataclass(frozen=True)
class SortKey:
    """A FlexMatch sort rule, as the builder orders candidates by it.

    Attributes:
        attribute: the number attribute sorted on.
        distance: ``distanceSort`` (the distance of a candidate's value from the anchor's)
            rather than ``absoluteSort`` (the candidate's value itself).
        descending: larger first (``sortDirection: descending``), else smaller first.
        party: how a ticket's members' values combine (``average``, ``min``, ``max``).
    """

    attribute: str
    distance: bool = False
    descending: bool = False
    party: str = "average"
    keys: tuple[str, ...] = ()
    map_key: str | None = None

    def values(self, view: View) -> NDArray[np.float64]:
        """Return each player's value sorted on: the attribute's, or of a
        ``string_number_map`` (``keys``) the smallest or largest of its values (``map_key``
        ``minValue``, ``maxValue``)."""
        if self.map_key is None:
            return view.numbers[self.attribute]
        stacked = np.stack([view.numbers[f"{self.attribute}[{k}]"] for k in self.keys])
        out: NDArray[np.float64] = (
            stacked.min(axis=0) if self.map_key == "minValue" else stacked.max(axis=0)
        )
        return out


def sort_keys(rules: RuleSet) -> list[SortKey]:
    """Return the rule set's sort rules (``absolute_sort``, ``distance_sort``) as the builder's
    sort keys, in the order listed."""
    out = []
    for rule in rules.sorts:
        config = rule.config
        name = config.attribute or "rating"
        attribute = rules.configs.get(name)
        keys = tuple(attribute.values) if attribute is not None and config.map_key else ()
        out.append(
            SortKey(
                attribute=rule.attribute if config.map_key is None else name,
                distance=rule.kind == "distance_sort",
                descending=config.direction == "descending",
                party=config.party,
                keys=keys,
                map_key=config.map_key,
            )
        )
    return out


def fastest_region_batches(view: View, tickets: Sequence[Sequence[int]]) -> list[NDArray[np.intp]]:
    """Return the tickets (indices) batched by the data centre of their lowest latency (a
    ticket's latency to a data centre being its worst member's; ties to the first data
    centre), the batches in the order of their data centres."""
    assert view.latency is not None, "fastest_region batching needs a world"
    best = np.array(
        [int(np.argmin(ticket_latency(view.latency[list(t)], "max"))) for t in tickets],
        dtype=np.intp,
    )
    return [np.flatnonzero(best == centre) for centre in np.unique(best).tolist()]


def batch_order_values(view: View, tickets: Sequence[Sequence[int]], name: str) -> NDArray[Any]:
    """Return each ticket's value of attribute ``name`` as the pool is sorted on it before it
    is cut into batches: a number's party average; a string's code (equal strings, equal
    codes), the ticket's first player's."""
    if name in view.numbers:
        x = view.numbers[name]
        return np.array([combine(x[list(t)], "average") for t in tickets], dtype=float)
    codes = view.codes[name]
    return np.array([int(codes[t[0]]) for t in tickets], dtype=np.int64)


def cut_batches(
    groups: Sequence[NDArray[np.intp]],
    size: int,
    order: str,
    sort_values: Sequence[NDArray[Any]] = (),
    waits: NDArray[np.float64] | None = None,
    rng: np.random.Generator | None = None,
) -> list[NDArray[np.intp]]:
    """Cut each group of tickets (indices, in queue order) into batches of ``size`` tickets
    (the last of a group may hold fewer), in the order ``order`` gives: ``sorted`` by
    ``sort_values`` (the first sorts, the next break its ties, then queue order), ``random``
    (a permutation drawn from ``rng``) or ``oldest`` (the longest ``waits`` first, then queue
    order)."""
    out: list[NDArray[np.intp]] = []
    for group in groups:
        group = np.asarray(group, dtype=np.intp)
        if order == "sorted":
            keys = [group] + [np.asarray(v)[group] for v in reversed(sort_values)]
            ordered = group[np.lexsort(tuple(keys))]
        elif order == "random":
            assert rng is not None, "random batches need a generator"
            ordered = group[rng.permutation(len(group))]
        else:
            assert waits is not None
            ordered = group[np.lexsort((group, -waits[group]))]
        out += [ordered[k : k + size] for k in range(0, len(ordered), size)]
    return out


def flexmatch_matches(
    view: View,
    rules: RuleSet,
    tickets: Sequence[Sequence[int]],
    seats: int,
    team_size: int | None = None,
    split: Split | None = None,
    *,
    sorts: Sequence[SortKey] = (),
    batching: str = "none",
    shape: TeamShape | None = None,
    batch_size: int | None = None,
    batch_sort: Sequence[str] = (),
    rng: np.random.Generator | None = None,
) -> list[Match]:
    """Build matches of ``seats`` players from ``tickets`` as FlexMatch does (see the module
    docstring).

    Args:
        view: the pass's view of its pool.
        rules: the rule set (its rejections are tallied).
        tickets: the tickets, in queue order (pool positions of their players).
        seats: players per match.
        team_size: players per team (team games).
        split: splits a full team match into teams (team games).
        sorts: the sort rules, in the rule set's order.
        batching: ``none`` (one batch) or ``fastest_region`` (by the data centre of each
            ticket's lowest latency; needs the view's latencies).
        shape: the game's teams, if of ranges, uneven or more than two (``seats``: its most
            players; :func:`~lobbysim.sim.seed_greedy.grow_matches`).
        batch_size: tickets per batch (None: one batch, or one per data centre).
        batch_sort: the attributes ``largest_population`` and ``sorted`` sort the pool on.
        rng: deals the tickets into batches for ``none`` with a ``batch_size``.
    """
    if batching not in BATCHINGS:
        raise ValueError(f"batching: expected one of {', '.join(BATCHINGS)}, got {batching!r}")
    if not tickets:
        return []
    table = TicketTable(view, rules, tickets)
    waits = table.waits
    values = {}
    for k, sort in enumerate(sorts):
        x = sort.values(view)
        values[k] = np.array([combine(x[list(t)], sort.party) for t in tickets])

    def rank(anchor: int, others: NDArray[np.intp]) -> list[int]:
        keys: list[NDArray[np.float64] | NDArray[np.intp]] = [others, -waits[others]]
        for k in reversed(range(len(sorts))):  # np.lexsort: the last key is the primary
            sort, x = sorts[k], values[k][others]
            if sort.distance:
                x = np.abs(x - values[k][anchor])
            keys.append(-x if sort.descending else x)
        return list(others[np.lexsort(tuple(keys))].tolist())

    if batching == "none" and batch_size is None:
        return grow_matches(view, rules, table, seats, team_size, split, rank, shape=shape)
    if batching == "fastest_region":
        batches = fastest_region_batches(view, tickets)
    else:
        batches = [np.arange(len(tickets), dtype=np.intp)]
    if batch_size is not None:
        order = {"none": "random", "fastest_region": "oldest"}.get(batching, "sorted")
        order_values = [batch_order_values(view, tickets, name) for name in batch_sort]
        batches = cut_batches(batches, batch_size, order, order_values, waits, rng)
    batches.sort(key=lambda b: (-float(waits[b].max()), int(b[0])))
    matches: list[Match] = []
    for batch in batches:
        matches += grow_matches(
            view, rules, table, seats, team_size, split, rank, batch, shape=shape
        )
    return matches
