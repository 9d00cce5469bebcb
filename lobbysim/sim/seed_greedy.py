"""Seed-and-greedy matching under a rule set, as the matchmaking services describe it.

:func:`seed_greedy` forms matches from the pass's tickets (a solo player, or a whole party):
the longest-waiting free ticket seeds a match (ties to the earlier in the queue); the other free
tickets are ranked by their weighted rule distance from the seed (:func:`distances`: each rule's
own measure times its ``weight``; ties to the longer wait, then the earlier in the queue) and
added one by one, each only if the match with it still keeps every rule that a match short of
players can be held to (the rules on a whole match, team balance, party parity and counts, wait)
and it fits (in a team game, a ticket larger than a team never does); a compound rule of
``and``/``or`` only is held to whether it may still hold, each rule it names read so. A full
match is split into
teams (team games: ``split``) and starts if it keeps every rule; otherwise, or if the candidates
run out first, its seed waits for the next pass and the next free ticket seeds. Before the
one-by-one checks, the candidates that cannot keep a pairwise rule (distance, equality,
distinctness, overlap, latency) with the seed alone under the loosest limit the match could
reach are set aside at once, and counted as that rule's rejections.

The measures: ``skill_distance`` and ``team_balance``, the distance of the tickets' values;
``match_quality``, one minus the mean quality of the seed's and the candidate's players' pairs;
``latency`` and ``delta_ping``, the worst of the two tickets' latencies at their best common
data centre (ms); ``equal`` (``distinct``), 1 if the two differ (are alike), else 0;
``overlap``, minus the number of values in common; the others, 0.

It is not an exact search: a ticket that would fit a later match better may be taken by an
earlier seed, and a seed may fail where another grouping would have started a game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from lobbysim.scenario.teams import TeamShape
from lobbysim.sim.rule_kinds import popcount
from lobbysim.sim.rules import Rule, RuleSet, View
from lobbysim.sim.ticket_table import TicketTable

#: Splits a full team match's tickets into teams: each ticket's team, or None.
Split = Callable[[Sequence[Sequence[int]]], list[int] | None]
#: A formed match: its tickets (pool positions) and each ticket's team (None: no teams).
Match = tuple[list[list[int]], list[int] | None]
PAIRWISE = ("skill_distance", "equal", "distinct", "overlap", "latency", "delta_ping")


def seed_greedy(
    view: View,
    rules: RuleSet,
    tickets: Sequence[Sequence[int]],
    seats: int,
    team_size: int | None = None,
    split: Split | None = None,
    shape: TeamShape | None = None,
) -> list[Match]:
    """Form matches of ``seats`` players from ``tickets`` (see the module docstring).

    Args:
        view: the pass's view of its pool.
        rules: the rule set (its rejections are tallied).
        tickets: the tickets, in queue order (pool positions of their players).
        seats: players per match.
        team_size: players per team (team games).
        split: splits a full team match into teams (team games).
        shape: the game's teams, if of ranges, uneven or more than two (``seats``: its most
            players; :func:`grow_matches`).
    """
    if not tickets:
        return []
    table = TicketTable(view, rules, tickets)

    def rank(seed: int, others: NDArray[np.intp]) -> list[int]:
        cost = distances(view, rules, table, seed, others)
        return list(others[np.lexsort((others, -table.waits[others], cost))].tolist())

    return grow_matches(view, rules, table, seats, team_size, split, rank, shape=shape)


#: Ranks the candidates a seed's match may take (ticket indices), best first.
Rank = Callable[[int, NDArray[np.intp]], list[int]]


def grow_matches(
    view: View,
    rules: RuleSet,
    table: TicketTable,
    seats: int,
    team_size: int | None,
    split: Split | None,
    rank: Rank,
    batch: NDArray[np.intp] | None = None,
    shape: TeamShape | None = None,
) -> list[Match]:
    """Grow matches from seeds, the longest-waiting free ticket first (ties to the earlier in
    the queue): the candidates that can keep every pairwise rule with the seed, taken one by
    one in ``rank``'s order while the match keeps every rule a match short of players can be
    held to, until it is full; a full match is split into teams and starts if it keeps every
    rule (see the module docstring). ``batch``: the tickets (indices in ``table``) seeds and
    candidates are drawn from (None: all). ``shape``: a game's teams of ranges, uneven sizes
    or more than two (not :attr:`~lobbysim.scenario.teams.TeamShape.fixed`; ``seats`` is then
    its most players): the match grows towards its most players and starts, if it has at
    least the teams' minimums at its tickets' waits, with what it has (:func:`_settle`)."""
    n = len(table.tickets)
    sizes, waits = table.sizes, table.waits
    order = np.lexsort((np.arange(n), -waits))  # longest wait first, then queue order
    free = np.zeros(n, dtype=bool) if batch is not None else np.ones(n, dtype=bool)
    if batch is not None:
        free[batch] = True
    if team_size is not None:
        free &= sizes <= team_size
    ranged = shape is not None and not shape.fixed
    least = seats
    if ranged:
        assert shape is not None
        free &= sizes <= max(shape.highs)
        least = shape.least_ever
    # the loosest clock a match could reach: the longest wait among the tickets it may hold
    loosest = float(waits.max() if batch is None else waits[batch].max())
    matches: list[Match] = []
    if ranged:
        assert shape is not None
        if not may_start(shape, sizes[free], waits[free]):
            return matches
    elif int(sizes[free].sum()) < seats:
        return matches  # too few players for a match: no seed is examined
    fast = RunningCheck.applies(rules)
    for seed in order.tolist():
        if not free[seed]:
            continue
        others = np.flatnonzero(free)
        others = others[others != seed]
        others = pairwise_fit(rules, table, seed, others, loosest)
        if ranged:  # a match with the seed has a clock no younger than its wait (newest)
            assert shape is not None
            least = int(shape.least_of(waits[seed], loosest))
        if sizes[seed] + sizes[others].sum() < least:
            continue
        chosen, filled = [seed], int(sizes[seed])
        growing = RunningCheck(rules, table, seed) if fast else None
        ranked = rank(seed, others)
        unseen = int(sizes[ranked].sum()) if ranged else 0  # the players not yet examined
        for t in ranked:
            if ranged:
                if filled + unseen < least:
                    break  # (a ranged match short of its least can never start)
                unseen -= int(sizes[t])
            if filled + sizes[t] > seats:
                continue
            if growing is not None:
                if not growing.admits(t):
                    continue
            elif (
                rules.first_broken(view, [table.tickets[k] for k in (*chosen, t)], partial=True)
                >= 0
            ):
                continue
            chosen.append(t)
            filled += int(sizes[t])
            if filled == seats:
                break
        if ranged:
            assert shape is not None
            settled = _settle(view, rules, table, chosen, shape, split)
            if settled is not None:
                matches.append(settled[0])
                free[settled[1]] = False
            continue
        started = _formed(view, rules, table, chosen, split) if filled == seats else None
        if started is not None:
            matches.append(started)
            free[chosen] = False
    return matches


def may_start(shape: TeamShape, sizes: NDArray[np.int64], waits: NDArray[np.float64]) -> bool:
    """Whether tickets of these sizes and waits could start any match of ``shape`` by their
    count alone: some j of them hold at least the teams' minimums at the loosest clocks j
    tickets can have (their newest wait at most the j-th longest, their oldest at most the
    longest), counting the j largest tickets. A necessary condition, in O(n log n): a pass
    that fails it forms no match, and :func:`grow_matches` then examines no seed (so a large
    match's pool, short of its minimum most of the time, costs a sort per pass instead of a
    growth per seed; the rules' rejections are tallied only in passes a match could start).
    A fixed shape's is the plain count: fewer players than seats, no seed."""
    if len(sizes) == 0:
        return False
    longest = np.sort(waits)[::-1]
    players = np.cumsum(np.sort(sizes)[::-1])
    least = shape.least_of(longest, np.full(len(longest), longest[0]))
    return bool((players >= least).any())


#: The most shorter matches :func:`_settle` tries after the longest that holds the minimums.
SETTLE_TRIES = 8


def _settle(
    view: View,
    rules: RuleSet,
    table: TicketTable,
    chosen: list[int],
    shape: TeamShape,
    split: Split | None,
) -> tuple[Match, list[int]] | None:
    """Return the match a grown match of a ranged shape starts (and its tickets), or None: the
    longest of its first tickets (the seed and those taken first; all of them first) that hold
    at least the teams' minimums at their own waits (a match without its youngest tickets has
    an older clock, so a lower minimum after an expansion), can be split and keep every rule of
    the whole match (teams of one size, say); at most :data:`SETTLE_TRIES` + 1 are tried."""
    sizes, waits = table.sizes[chosen], table.waits[chosen]
    players = np.cumsum(sizes)
    least = shape.least_of(np.minimum.accumulate(waits), np.maximum.accumulate(waits))
    fits = np.flatnonzero(players >= least)[::-1][: SETTLE_TRIES + 1]  # longest first
    for end in (fits + 1).tolist():
        part = chosen[:end]
        started = _formed(view, rules, table, part, split)
        if started is not None:
            return started, part
    return None


def _formed(
    view: View, rules: RuleSet, table: TicketTable, part: list[int], split: Split | None
) -> Match | None:
    """Return the match of tickets ``part`` split into teams (team games), if it can be split
    and keeps every rule of a whole match; else None."""
    match = [table.tickets[k] for k in part]
    teams = None
    if split is not None:
        teams = split(match)
        if teams is None:
            return None
    if rules.first_broken(view, match, teams) >= 0:
        return None
    return match, teams


class RunningCheck:
    """The rules a match short of players is held to, kept as it grows one ticket at a time:
    for rule sets of only ``skill_distance``, ``equal`` and ``latency``/``delta_ping`` rules on
    the ``oldest`` or ``newest`` clock (and sort rules, which hold nothing back), the running
    range of each number, the common code (-1 once two differ) and each data centre's worst
    latency decide what
    :meth:`RuleSet.first_broken` would on the whole match, in O(1) per candidate instead of
    O(match size) (large matches); the first broken rule is tallied the same way."""

    KINDS = ("skill_distance", "equal", "latency", "delta_ping", "absolute_sort", "distance_sort")

    @staticmethod
    def applies(rules: RuleSet) -> bool:
        """Whether every rule of ``rules`` is one this check keeps (see the class docstring)."""
        return not rules.children and all(
            r.kind in RunningCheck.KINDS
            and (
                r.kind in ("absolute_sort", "distance_sort")
                or r.config.clock in ("oldest", "newest")
            )
            for r in rules.rules
        )

    def __init__(self, rules: RuleSet, table: TicketTable, seed: int) -> None:
        self.rules = rules
        self.plain = plain = table.plain()
        self.plan = [
            (index, rule.kind, rule.config.clock == "oldest", rule.optional_after, rule)
            for index, rule in enumerate(rules.rules)
            if rule.kind not in ("absolute_sort", "distance_sort")
        ]
        self.oldest = self.newest = plain.waits[seed]
        self.low = {k: v[seed] for k, v in plain.values.items()}
        self.high = dict(self.low)
        self.code = {k: c[seed] for k, c in plain.codes.items()}
        self.worst = {k: list(rows[seed]) for k, rows in plain.latency.items()}

    def admits(self, t: int) -> bool:
        """Whether the match keeps its rules with ticket ``t`` added; if so, add it."""
        plain = self.plain
        wait = plain.waits[t]
        oldest, newest = max(self.oldest, wait), min(self.newest, wait)
        for index, kind, by_oldest, optional_after, rule in self.plan:
            clock = oldest if by_oldest else newest
            if clock >= optional_after:
                continue  # the rule holds nothing back any more
            limit = rule.limit_at(clock)
            if kind == "skill_distance":
                x = plain.values[index][t]
                ok = max(self.high[index], x) - min(self.low[index], x) <= limit
            elif kind == "equal":
                c = plain.codes[index][t]
                ok = c >= 0 and c == self.code[index]
            elif index in plain.latency:
                ok = any(
                    max(w, lat) <= limit
                    for w, lat in zip(self.worst[index], plain.latency[index][t], strict=True)
                )
            else:  # a latency rule without a world holds nothing back
                ok = True
            if not ok:
                self.rules.rejections[index] += 1
                return False
        self.oldest, self.newest = oldest, newest
        for index in self.low:
            x = plain.values[index][t]
            self.low[index], self.high[index] = min(self.low[index], x), max(self.high[index], x)
        for index, code in self.code.items():  # -1 once the codes differ (a rule past its
            if plain.codes[index][t] != code:  # optional_after let them; newest may
                self.code[index] = -1  # bring it back)
        for index, worst in self.worst.items():
            self.worst[index] = [
                max(w, lat) for w, lat in zip(worst, plain.latency[index][t], strict=True)
            ]
        return True


def _limits(
    rule: Rule, table: TicketTable, seed: int, others: NDArray[np.intp], loosest: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Return the seed's and each candidate's limit for a pairwise check, and whether the rule
    still holds the pair back: under ``own`` their own limits, else the loosest the match could
    reach (the clock of a match with both is at most the longest wait in the pass; ``newest``:
    at most the shorter of the two)."""
    clock = rule.config.clock
    if clock == "own":
        mine = np.full(others.size, rule.limits_at(table.waits[[seed]])[0])
        theirs = rule.limits_at(table.waits[others])
        waits = np.minimum(table.waits[seed], table.waits[others])
        return mine, theirs, waits < rule.optional_after
    if clock == "newest":
        wait = np.minimum(table.waits[seed], table.waits[others])
    else:
        wait = np.full(others.size, loosest)
    limit = rule.limits_at(wait)
    return limit, limit, wait < rule.optional_after


def pairwise_fit(
    rules: RuleSet, table: TicketTable, seed: int, others: NDArray[np.intp], loosest: float
) -> NDArray[np.intp]:
    """Return the candidates that can keep every pairwise rule with the seed (see the module
    docstring); count the others as the first such rule's rejections."""
    keep = np.ones(others.size, dtype=bool)
    for index, rule in enumerate(rules.rules):
        kind = rule.kind
        if kind not in PAIRWISE or others.size == 0 or index in rules.children:
            continue  # (a compound's rule holds only through it)
        mine, theirs, active = _limits(rule, table, seed, others, loosest)
        if kind == "skill_distance":
            v = table.values[index]
            ok = np.abs(v[others] - v[seed]) <= np.minimum(mine, theirs)
        elif kind == "equal":
            c = table.codes[index]
            ok = (c[others] == c[seed]) & (c[seed] >= 0)
        elif kind == "distinct":  # a party's own codes are checked with the whole match
            c = table.codes[index]
            ok = (c[others] != c[seed]) | (c[others] < 0) | (c[seed] < 0)
        elif kind == "overlap":
            m = table.masks[index]
            ok = popcount(m[others] & m[seed]) >= np.maximum(mine, theirs)
        else:
            if index not in table.latency:
                continue
            lat = table.latency[index]
            ok = ((lat[seed][None, :] <= mine[:, None]) & (lat[others] <= theirs[:, None])).any(
                axis=1
            )
        ok |= ~active
        rules.rejections[index] += int((keep & ~ok).sum())
        keep &= ok
    return others[keep]


def distances(
    view: View, rules: RuleSet, table: TicketTable, seed: int, others: NDArray[np.intp]
) -> NDArray[np.float64]:
    """Return each candidate's weighted rule distance from the seed (see the module
    docstring)."""
    total = np.zeros(others.size)
    for index, rule in enumerate(rules.rules):
        if rule.weight == 0.0 or others.size == 0:
            continue
        kind = rule.kind
        if kind in ("skill_distance", "team_balance"):
            v = table.values[index]
            measure = np.abs(v[others] - v[seed])
        elif kind == "match_quality":
            measure = _quality_gaps(view, table, seed, others)
        elif kind in ("equal", "distinct"):
            c = table.codes[index]
            same = (c[others] == c[seed]) & (c[seed] >= 0)
            measure = (~same if kind == "equal" else same).astype(float)
        elif kind == "overlap":
            m = table.masks[index]
            measure = -popcount(m[others] & m[seed]).astype(float)
        elif kind in ("latency", "delta_ping") and index in table.latency:
            lat = table.latency[index]
            measure = np.maximum(lat[seed][None, :], lat[others]).min(axis=1)
        else:
            continue
        total += rule.weight * measure
    return total


def _quality_gaps(
    view: View, table: TicketTable, seed: int, others: NDArray[np.intp]
) -> NDArray[np.float64]:
    """Return one minus the mean quality of the pairs of the seed's and each candidate's
    players."""
    mine = table.tickets[seed]
    theirs = [table.tickets[t] for t in others.tolist()]
    i = np.concatenate([np.repeat(mine, len(t)) for t in theirs]).astype(np.intp)
    j = np.concatenate([np.tile(t, len(mine)) for t in theirs]).astype(np.intp)
    pairs = len(mine) * table.sizes[others]
    sums = np.add.reduceat(view.quality(i, j), np.concatenate([[0], np.cumsum(pairs)[:-1]]))
    gaps: NDArray[np.float64] = 1.0 - sums / pairs
    return gaps
