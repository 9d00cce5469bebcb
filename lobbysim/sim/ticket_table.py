"""Each ticket's values for a rule set, computed once per matchmaking pass.

The searches that grow a match one ticket at a time (:mod:`lobbysim.sim.seed_greedy`,
:mod:`lobbysim.sim.flexmatch_builder`) read each ticket as one unit: a solo player, or a whole
party, its members' values combined as each rule says (``party``). :class:`TicketTable` holds
those values as arrays, for checks of many candidates at once; :class:`PlainTable`, the same as
Python lists, for a growing match's check of one ticket at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lobbysim.sim.rules import RuleSet, View, combine, ticket_latency


class TicketTable:
    """Each ticket's values for the rules, computed once per pass: its wait (its longest
    waiting member's), size, per rule its party-combined number, its members' common code (-1
    if they differ), the values its members' lists share, its worst latency per data centre."""

    def __init__(self, view: View, rules: RuleSet, tickets: Sequence[Sequence[int]]) -> None:
        self.tickets = [list(t) for t in tickets]
        self.sizes = np.array([len(t) for t in tickets])
        # a ticket of one player has its player's values: taken at once; a party's, combined
        first = np.array([t[0] for t in self.tickets], dtype=np.intp)
        parties = np.flatnonzero(self.sizes > 1).tolist()

        def per_ticket(of_one: NDArray[Any], of_party: Callable[[list[int]], Any]) -> NDArray[Any]:
            out = of_one[first]  # (a copy: indexed by an array)
            for k in parties:
                out[k] = of_party(self.tickets[k])
            return out

        waited = np.asarray(view.waited, dtype=float)
        self.waits = per_ticket(waited, partial(_longest, waited))
        self.values: dict[int, NDArray[np.float64]] = {}
        self.codes: dict[int, NDArray[np.int64]] = {}
        self.masks: dict[int, NDArray[np.int64]] = {}
        self.latency: dict[int, NDArray[np.float64]] = {}
        for index, rule in enumerate(rules.rules):
            kind, how = rule.kind, rule.config.party
            if kind in ("skill_distance", "team_balance"):
                x = np.asarray(view.numbers[rule.attribute], dtype=float)
                self.values[index] = per_ticket(x, partial(_combined, x, how))
            elif kind in ("equal", "distinct"):
                c = np.asarray(view.codes[rule.attribute]).astype(np.int64)
                self.codes[index] = per_ticket(c, partial(_common_code, c))
            elif kind == "overlap":
                m = np.asarray(view.masks[rule.attribute]).astype(np.int64)
                self.masks[index] = per_ticket(m, partial(_shared_mask, m))
            elif kind in ("latency", "delta_ping") and view.latency is not None:
                assert view.best is not None
                lat = np.asarray(view.latency, dtype=float)
                if kind == "delta_ping":
                    lat = lat - view.best[:, None]
                self.latency[index] = per_ticket(lat, partial(_latencies, lat, how))
        self._plain: PlainTable | None = None

    def plain(self) -> PlainTable:
        """Return the table's columns as Python lists (made once)."""
        if self._plain is None:
            self._plain = PlainTable(
                self.waits.tolist(),
                {k: v.tolist() for k, v in self.values.items()},
                {k: v.tolist() for k, v in self.codes.items()},
                {k: v.tolist() for k, v in self.latency.items()},
            )
        return self._plain


@dataclass(frozen=True)
class PlainTable:
    """A :class:`TicketTable`'s columns as Python lists (a float, an int, a row of latencies
    per ticket), for checks one ticket at a time, where indexing NumPy arrays costs more than
    the check."""

    waits: list[float]
    values: dict[int, list[float]]
    codes: dict[int, list[int]]
    latency: dict[int, list[list[float]]]


def _longest(waited: NDArray[np.float64], ticket: list[int]) -> float:
    return float(waited[ticket].max())


def _combined(x: NDArray[np.float64], how: str, ticket: list[int]) -> float:
    return combine(x[ticket], how)


def _common_code(c: NDArray[np.int64], ticket: list[int]) -> int:
    return int(c[ticket[0]]) if (c[ticket] == c[ticket[0]]).all() else -1


def _shared_mask(m: NDArray[np.int64], ticket: list[int]) -> int:
    return int(np.bitwise_and.reduce(m[ticket]))


def _latencies(lat: NDArray[np.float64], how: str, ticket: list[int]) -> NDArray[np.float64]:
    return ticket_latency(lat[ticket], how)
