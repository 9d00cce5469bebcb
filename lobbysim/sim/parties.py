"""Parties: guests who arrive, queue and play together as one ticket (docs/model.md, section 9).

A scenario's ``parties`` (:class:`~lobbysim.scenario.parties.PartiesConfig`) gives the share of
tickets of each party size. The guests of an arrival window are cut, in arrival order, into
parties of sizes drawn from those shares (stream ``parties``; the window's last party may be
smaller); a party arrives at its first member's time and its members share that member's session
(its games and minutes), so they queue again and leave together. A player base cuts its members
into crews that visit together (:class:`lobbysim.sim.player_base.PlayerBase`). A party has one
patience per queueing round (:meth:`Parties.patience`).

**One ticket.** A party is matched only whole: a pass sees its ticket only when every member is
waiting (a member who quit a game waits for the others), forms groups of tickets, never splits a
ticket across games or teams, and back-fills open seats with solo players only. A party's rating
for matching is combined from its members' means by the ``skill`` rule (:func:`party_skill`).
Teams are split by tickets (:func:`lobbysim.policies.teams.best_split`, as every team game is):
of every way to fill the two teams with whole tickets, the one with the smallest difference of
the teams' totals (a ticket counts its combined rating once per member) whose counts of players
in parties of two or more differ by at most the ``parity`` limit of the longest wait in the game.
A party that loses a member for good (gave up in the queue, or the session ended) is dissolved;
its other waiting members give up with it.

**Metrics** (from the metrics' start): ``party_split_games`` (games that started with a party
split across teams or games: 0 by construction, counted so that a test can hold it),
``party_queue_time_mean`` (the mean wait of matched queueing spells of players in parties of two
or more), ``premade_win_rate`` (team games whose two teams differ in players in parties: how
often the team with more of them won) and ``premade_share`` (the share of seats taken by players
in parties).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from lobbysim.scenario.parties import PartiesConfig
from lobbysim.sim.entities import Player
from lobbysim.streams import Streams


def party_skill(means: Sequence[float], rule: str, bonus: float = 0.0) -> float:
    """Return a party's rating for matching from its members' means, by ``rule``."""
    if rule == "max":
        return max(means)
    if rule == "min":
        return min(means)
    average = math.fsum(means) / len(means)
    if rule == "average_plus":
        return average + bonus * (len(means) - 1)
    return average


class Parties:
    """Who is in which party, their tickets, and the party metrics (see the module docstring).

    Args:
        config: the scenario's parties.
        streams: the run's random streams (``parties``).
        metrics_start: when the metrics start.
    """

    def __init__(self, config: PartiesConfig, streams: Streams, metrics_start: float) -> None:
        self.config = config
        self._sizes = np.array([int(n) for n, _ in config.sizes])
        shares = np.array([s for _, s in config.sizes])
        self._shares = shares / shares.sum()
        self._rng = streams.get("parties")
        #: The members of each party now, by party id (a party of one is no party).
        self.members: dict[int, list[Player]] = {}
        self._next_id = 0
        self._start = metrics_start
        self._in_party: set[int] = set()  # players who ever queued in a party of two or more
        self._deadlines: dict[int, float] = {}  # a party's give-up time in this queueing round
        self.split_games = 0
        self._premade_games = 0
        self._premade_wins = 0
        self._seats = 0
        self._premade_seats = 0

    # ------------------------------------------------------------------ forming parties
    def cut(self, n: int) -> list[int]:
        """Return the sizes of the parties ``n`` guests arriving in order form (the last one
        cut to what is left)."""
        sizes: list[int] = []
        left = n
        while left > 0:
            size = int(self._rng.choice(self._sizes, p=self._shares))
            sizes.append(min(size, left))
            left -= sizes[-1]
        return sizes

    def form(self, players: Sequence[Player]) -> None:
        """Make ``players`` a party (nothing for one player)."""
        if len(players) < 2:
            return
        party = self._next_id
        self._next_id += 1
        self.members[party] = list(players)
        for player in players:
            player.party = party
            self._in_party.add(player.pid)

    def patience(self, party: int, now: float, drawn: float) -> float:
        """Return the patience of a party member queueing now: the party's, one per queueing
        round, set by the first member to queue (``drawn``, that member's own draw); the
        round ends when the party starts a game."""
        deadline = self._deadlines.get(party)
        if deadline is None:
            deadline = self._deadlines[party] = now + drawn
        return deadline - now

    def dissolve(self, player: Player) -> list[Player]:
        """Dissolve the party of ``player`` (who leaves for good); return its other members,
        solo from now on."""
        members = self.members.pop(player.party, [])
        self._deadlines.pop(player.party, None)
        for member in members:
            member.party = -1
        return [m for m in members if m is not player]

    def tickets(self, players: Sequence[Player]) -> list[list[int]]:
        """Return the tickets among ``players`` (positions in it), in order of their first
        member: a solo player, or a party whose members are all in ``players``; a party that
        is not whole is left out."""
        seen: dict[int, list[int]] = {}
        tickets: list[list[int]] = []
        for k, player in enumerate(players):
            if player.party < 0:
                tickets.append([k])
                continue
            group = seen.get(player.party)
            if group is None:
                group = seen[player.party] = []
                tickets.append(group)
            group.append(k)
        return [
            t
            for t in tickets
            if (len(t) == 1 and players[t[0]].party < 0)
            or len(t) == len(self.members.get(players[t[0]].party, ()))
        ]

    # ------------------------------------------------------------------------ tallies
    def started(self, players: Sequence[Player], teams: Sequence[int | None], now: float) -> None:
        """Note a game starting with these players on these teams (a new queueing round for
        their parties)."""
        for player in players:
            if player.party >= 0:
                self._deadlines.pop(player.party, None)
        if now < self._start:
            return
        where: dict[int, set[int | None]] = {}
        for player, team in zip(players, teams, strict=True):
            self._seats += 1
            if player.party >= 0:
                self._premade_seats += 1
                where.setdefault(player.party, set()).add(team)
        present = {p.pid for p in players}
        split = any(
            len(teams_of) > 1 or any(m.pid not in present for m in self.members.get(party, ()))
            for party, teams_of in where.items()
        )
        self.split_games += split

    def scored(self, premade: tuple[int, int], winner: int | None, start: float) -> None:
        """Note a team game's result: its teams' counts of players in parties at the start."""
        if start < self._start or premade[0] == premade[1] or winner is None:
            return
        self._premade_games += 1
        self._premade_wins += winner == (0 if premade[0] > premade[1] else 1)

    def metrics(self, waits: pd.DataFrame) -> dict[str, float]:
        """Return the party metrics (see the module docstring)."""
        w = waits[(waits.enqueued >= self._start) & (waits.outcome == "matched")]
        mine = w[w.player_id.isin(self._in_party)]
        return {
            "party_split_games": float(self.split_games),
            "party_queue_time_mean": float(mine.wait.mean()) if len(mine) else math.nan,
            "premade_win_rate": (
                self._premade_wins / self._premade_games if self._premade_games else math.nan
            ),
            "premade_share": self._premade_seats / self._seats if self._seats else math.nan,
        }


def as_parties(
    parties: Parties,
    times: list[float],
    sizes: list[int],
    rows: list[tuple[float, float, float, bool, int, float]],
) -> tuple[list[float], list[int], list[tuple[float, float, float, bool, int, float]]]:
    """Cut a window's arrivals, in order, into parties (:meth:`Parties.cut`): each arrives at
    its first member's time, and its members take that member's session (games, minutes)."""
    each = [t for t, size in zip(times, sizes, strict=True) for _ in range(size)]
    cut = parties.cut(len(each))
    party_times, out = [], []
    k = 0
    for size in cut:
        lead = rows[k]
        party_times.append(each[k])
        out.append(lead)
        out += [(*row[:4], lead[4], lead[5]) for row in rows[k + 1 : k + size]]
        k += size
    return party_times, cut, out
