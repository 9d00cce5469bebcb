"""No accidental rematches: which waiting players may not meet again yet, and their pairs barred.

With a persistent player base the same few players wait together again and again, and a
matchmaker that pairs the closest ratings would pair the same two players game after game.
:class:`RematchRule` keeps, for every player who has played lately, the opponents they met and
when; two players who played each other are not matched again until each has played ``games``
other games since, and not within ``minutes`` minutes of the end of their game
(``matchmaker.rematch_games`` and ``matchmaker.rematch_minutes``).

The rule acts through the pool's match quality: :meth:`RematchRule.mask` wraps the quality
function of a pass so that a barred pair gets quality ``-inf``, which no threshold admits (the
built-in assignments and :func:`~lobbysim.policies.groups.form_groups` admit a pair or a group
only if its quality reaches the threshold, and a group's quality is the mean over its pairs).
The quality recorded for a game is the unmasked one.

**Bookkeeping.** Each player's entry holds a count of the games they have started since the
entry was created and, per recent opponent, that count just after their game and the time the
player left it (infinite until they do: a callback on the event that ends the player's stint
sets it). A pair is barred while either player's entry for the other says so, so an entry is
dropped, at the player's next game, once the player's own count has moved on by ``games`` and
the time has passed (an entry left with no opponents is dropped). The cost of a pass is one
look-up per recent opponent of each waiting player, and a player keeps about ``games`` games'
worth of opponents; the entries of players gone for good are swept out from time to time.

**Team and free-for-all games.** The rule holds for any two players of a group the matchmaker
forms, and the time counts from when the later of the two left the game. A back-filled seat
counts as a game played, but it is not checked against the rule, nor are its players recorded
as having met (back-fill picks the free player nearest in rating to the one who left).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import simpy
from numpy.typing import NDArray

from lobbysim.policies.assignment import QualityFn
from lobbysim.sim.entities import FloatArray, Waiting

IntArray = NDArray[np.intp]
SWEEP_MIN = 4096  # players on record before the first sweep of those gone for good


class _Left:
    """When a player left a game (infinite while they play); called by the stint's end event."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at = math.inf

    def __call__(self, event: simpy.Event) -> None:
        self.at = float(event.env.now)


class _Recent:
    """One player's games since their entry was made, and their recent opponents.

    ``opponents`` maps an opponent's id to (this player's count just after their game, when
    this player left that game).
    """

    __slots__ = ("games", "opponents")

    def __init__(self) -> None:
        self.games = 0
        self.opponents: dict[int, tuple[int, _Left]] = {}


class RematchRule:
    """Who may not meet whom yet (see the module docstring).

    Args:
        env: the run's environment (its clock).
        games: other games each of two players must play before they meet again (0: none).
        minutes: minutes after the end of their game before they meet again (0: none).
        gone: whether a player has left for good (a guest whose session is over); their
            entries are dropped whenever the players on record have doubled since the last
            time, so a long run of one-visit guests does not keep every guest forever.
    """

    def __init__(
        self,
        env: simpy.Environment,
        games: int,
        minutes: float,
        gone: Callable[[int], bool] = lambda pid: False,
    ) -> None:
        self.env = env
        self.games = games
        self.minutes = minutes
        self._gone = gone
        self._recent: dict[int, _Recent] = {}
        self._sweep_at = SWEEP_MIN

    def __len__(self) -> int:
        """Return the number of players with recent opponents on record."""
        return len(self._recent)

    # ------------------------------------------------------------------- games started
    def met(self, members: Sequence[Waiting]) -> None:
        """Note a game the matchmaker has just started: every two of ``members`` have met,
        but members of one party (who queue together by choice) never count as having met.

        Each member must have been handed to the game already: their queue entry's ``leave``
        holds the event that ends their stint (:meth:`lobbysim.sim.sessions.Lobby.hand_over`).
        """
        lefts = []
        for member in members:
            entry = self._played(member.pid)
            left = _Left()
            stint_end = member.leave
            stint_end.callbacks.append(left)
            lefts.append((entry, left))
        pids = [member.pid for member in members]
        party = [member.player.party for member in members]
        for (entry, left), pid, mine in zip(lefts, pids, party, strict=True):
            for other, theirs in zip(pids, party, strict=True):
                if other != pid and (mine < 0 or theirs != mine):
                    entry.opponents[other] = (entry.games, left)

    def met_pair(self, a: Waiting, b: Waiting) -> None:
        """:meth:`met` for the two players of a 1v1 game, whose stints end at one event."""
        entry_a = self._played(a.pid)
        entry_b = self._played(b.pid)
        left = _Left()
        a.leave.callbacks.append(left)
        if b.leave is not a.leave:
            left_b = _Left()
            b.leave.callbacks.append(left_b)
        else:
            left_b = left
        entry_a.opponents[b.pid] = (entry_a.games, left)
        entry_b.opponents[a.pid] = (entry_b.games, left_b)

    def played(self, members: Sequence[Waiting]) -> None:
        """Note back-filled seats: another game for each of ``members``, no meeting recorded."""
        for member in members:
            entry = self._played(member.pid)
            if not entry.opponents:
                del self._recent[member.pid]

    def _played(self, pid: int) -> _Recent:
        """Count a game for player ``pid`` and drop the opponents they may meet again."""
        entry = self._recent.get(pid)
        if entry is None:
            if len(self._recent) >= self._sweep_at:
                self._sweep()
            entry = self._recent[pid] = _Recent()
        count = entry.games = entry.games + 1
        opponents = entry.opponents
        if opponents:
            now, games, minutes = self.env.now, self.games, self.minutes
            stale = [
                other
                for other, (at, left) in opponents.items()
                if count - at >= games and now >= left.at + minutes
            ]
            for other in stale:
                del opponents[other]
        return entry

    def _sweep(self) -> None:
        """Drop the entries of players who have left for good (they never wait again)."""
        gone = self._gone
        for pid in [pid for pid in self._recent if gone(pid)]:
            del self._recent[pid]
        self._sweep_at = max(SWEEP_MIN, 2 * len(self._recent))

    # ------------------------------------------------------------------------- a pass
    def barred(self, ids: Sequence[int]) -> NDArray[np.int64]:
        """Return the barred pairs among the waiting players ``ids``, as sorted keys.

        A pair of pool indices ``(i, j)``, ``i < j``, has the key ``i * len(ids) + j``.
        """
        recent = self._recent
        n = len(ids)
        keys: list[int] = []
        index: dict[int, int] | None = None
        now, games, minutes = self.env.now, self.games, self.minutes
        for k, pid in enumerate(ids):
            entry = recent.get(pid)
            if entry is None or not entry.opponents:
                continue
            if index is None:
                index = {p: m for m, p in enumerate(ids)}
            for other, (at, left) in entry.opponents.items():
                m = index.get(other)
                if m is not None and (entry.games - at < games or now < left.at + minutes):
                    keys.append(min(k, m) * n + max(k, m))
        return np.unique(np.array(keys, dtype=np.int64))

    def mask(self, quality: QualityFn, ids: Sequence[int]) -> QualityFn:
        """Return ``quality`` over pool indices with the barred pairs of this pass at ``-inf``.

        Args:
            quality: the pass's match quality of pool indices (checked in [0, 1] elsewhere).
            ids: the waiting players' ids, in pool order.
        """
        keys = self.barred(ids)
        if keys.size == 0:
            return quality
        n = len(ids)

        def masked(i: IntArray, j: IntArray) -> FloatArray:
            values = quality(i, j)
            pair = np.minimum(i, j) * n + np.maximum(i, j)
            at = np.searchsorted(keys, pair)  # keys are sorted: a pair is barred if found
            bar = keys[np.minimum(at, keys.size - 1)] == pair
            return np.where(bar, -np.inf, values) if bar.any() else values

        return masked
