"""A group pass's tickets, formed once a pass and read off for each data centre's candidates.

With parties and latency limits, a group pass forms groups data centre by data centre, each
among the free players the data centre is open to (:meth:`GroupPass._groups_by_data_centre
<lobbysim.sim.group_pass.GroupPass._groups_by_data_centre>`), and the general path forms the
tickets (:meth:`Parties.tickets <lobbysim.sim.parties.Parties.tickets>`) anew among each data
centre's candidates. :class:`PassTickets` forms them once, among all the free players of the
pass: the tickets among a subset of them are then those whose members are all in it, in the
same order (of their first member), bit for bit; tested against the general path in
tests/sim/test_fast_tickets.py (the plan's ``group_tickets``).

Why it is exact: a ticket among players is a solo player, or a party whose members are all
among them (as many as the party has); a party can have no more players among them than it has
members. So a ticket among a subset is a ticket among all the pass's players whose members are
all in the subset, and the tickets' order (by first member) is kept. Should a party ever have
more players among them than members, :meth:`PassTickets.among` says so (None), and the pass
forms that subset's tickets itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sized

import numpy as np
from numpy.typing import NDArray

from lobbysim.sim.entities import Player


class PassTickets:
    """The tickets among a group pass's free players (positions in ``players``), in order of
    their first member; ``members``: each party's members now, by party id."""

    __slots__ = ("_sizes", "_ticket_of", "overfull", "tickets")

    def __init__(self, players: list[Player], members: Mapping[int, Sized]) -> None:
        first: dict[int, list[int]] = {}
        groups: list[list[int]] = []  # every solo player and party here, by first member
        for k, player in enumerate(players):
            party = player.party
            if party < 0:
                groups.append([k])
                continue
            group = first.get(party)
            if group is None:
                group = first[party] = []
                groups.append(group)
            group.append(k)
        #: The whole tickets: solo players, and parties with all their members here.
        self.tickets: list[list[int]] = []
        #: Whether a party has more players here than members (never; see the module).
        self.overfull = False
        for group in groups:
            party = players[group[0]].party
            need = 1 if party < 0 else len(members.get(party, ()))
            if len(group) == need:
                self.tickets.append(group)
            elif len(group) > need:
                self.overfull = True
        n = len(self.tickets)
        ticket_of = [n] * len(players)  # n: in no whole ticket
        for t, ticket in enumerate(self.tickets):
            for k in ticket:
                ticket_of[k] = t
        self._ticket_of = np.array(ticket_of, dtype=np.intp)
        self._sizes = np.array([len(t) for t in self.tickets], dtype=np.intp)

    def among(self, cand: NDArray[np.intp]) -> list[int] | None:
        """Return the indices into :attr:`tickets` of the tickets among the players ``cand``
        (positions in ``players``, each once), in order; None if the pass must form them
        itself (:attr:`overfull`)."""
        if self.overfull:
            return None
        n = len(self.tickets)
        count = np.bincount(self._ticket_of[cand], minlength=n + 1)[:n]
        found: list[int] = np.flatnonzero(count == self._sizes).tolist()
        return found
