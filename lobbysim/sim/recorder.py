"""The recorder of a run: record rows, their buffers and sink, departed players, rating samples.

:class:`Recorder` appends the rows of every record kind (``Records.KINDS``) as tuples, cheap on
the hot path: a queueing spell's wait, a scored game with its participants (and the players'
tallies of games and wins the players records carry), the rating samples, and, when the records
are streamed, the row of each departed player once all their games are scored, after which the
lobby forgets them. It decides nothing about the model and does no file I/O: the sink does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lobbysim.raters import Rater
from lobbysim.records import GameResult
from lobbysim.sim.entities import IdArray, Player, Records


def player_row(p: Player) -> tuple[Any, ...]:
    """Return a player's row of the players records (``simulation.PLAYER_COLUMNS``)."""
    return (p.pid, p.skill, p.mu0, p.var0, p.registered, p.games, p.wins, p.state)


class Recorder:
    """Appends record rows to :class:`Records` and writes out departed players when streaming.

    Args:
        records: the row buffers; with a sink, the records are streamed and departed players
            are written out and forgotten as the run goes.
    """

    def __init__(self, records: Records) -> None:
        self.records = records
        self._departed: list[Player] = []  # streaming: departed since the last write-out
        # streaming: departed players whose last game is not scored yet, by id, with the order
        # in which they were found; and the ids of those whose games have been scored since
        self._awaiting: dict[int, tuple[int, Player]] = {}
        self._awaiting_seq = 0
        self._scored_awaiting: list[int] = []

    @property
    def streaming(self) -> bool:
        """Whether the records go to a sink as the run goes (departed players are forgotten)."""
        return self.records.sink is not None

    def wait(self, pid: int, since: float, now: float, outcome: str) -> None:
        """Record a queueing spell of player ``pid`` from ``since`` to ``now`` (its outcome)."""
        self.records.waits.append((pid, since, now, outcome, now - since))

    def game(
        self,
        result: GameResult,
        quality: float,
        truth: tuple[float, float, bool | None],
        players: Sequence[Player],
    ) -> None:
        """Record a scored game: its participants, the players' tallies, and the game's row.

        Args:
            result: the game as the raters get it.
            quality: the match quality the matchmaker predicted.
            truth: the true draw density, true skill gap and whether the stronger side won.
            players: the player of each seat, in seat order.
        """
        winner, game_id = result.winner, result.game_id
        awaiting = self._awaiting
        add = self.records.participants.append
        for seat, player in zip(result.seats, players, strict=True):
            player.unscored -= 1
            if not player.unscored and player.pid in awaiting:
                self._scored_awaiting.append(player.pid)
            player.games += 1
            player.wins += winner is not None and seat.team == winner
            joined, left = seat.joined, seat.left
            add(
                (
                    game_id,
                    seat.player_id,
                    seat.team,
                    joined,
                    left,
                    left - joined,  # seat.minutes
                    seat.score,
                    seat.registered,
                    seat.quit,
                )
            )
        draw, gap, stronger_won = truth
        self.records.games.append(
            (
                result.game_id,
                result.mode,
                result.start,
                result.end,
                draw,
                gap,
                quality,
                stronger_won,
                winner,
            )
        )

    def game_1v1(
        self,
        game_id: int,
        start: float,
        end: float,
        players: tuple[Player, Player],
        scores: tuple[float, float],
        quit_side: int,
        winner: int,
        quality: float,
        truth: tuple[float, float, bool | None],
    ) -> None:
        """Record a scored 1v1 game as :meth:`game` does (side 0 is ``players[0]``).

        Both stints last from ``start`` to ``end``; ``quit_side`` is the side that quit (-1:
        none). The rows and tallies are :meth:`game`'s, without reading them back from seats.
        """
        minutes = end - start
        records = self.records
        pa, pb = players
        awaiting = self._awaiting
        # side 0, then side 1 (unrolled: two players, no loop)
        pa.unscored -= 1
        if not pa.unscored and pa.pid in awaiting:
            self._scored_awaiting.append(pa.pid)
        pa.games += 1
        pa.wins += winner == 0
        pb.unscored -= 1
        if not pb.unscored and pb.pid in awaiting:
            self._scored_awaiting.append(pb.pid)
        pb.games += 1
        pb.wins += winner == 1
        records.participants += (
            (game_id, pa.pid, 0, start, end, minutes, scores[0], pa.registered, quit_side == 0),
            (game_id, pb.pid, 1, start, end, minutes, scores[1], pb.registered, quit_side == 1),
        )
        draw, gap, stronger_won = truth
        records.games.append((game_id, "1v1", start, end, draw, gap, quality, stronger_won, winner))

    def depart(self, player: Player) -> None:
        """Note a player who has left; with streaming, :meth:`write_departed` writes them out
        after their last game is scored."""
        if self.records.sink is not None:
            self._departed.append(player)

    def write_departed(self) -> list[Player]:
        """Append the rows of departed players whose games are all scored; return them.

        The caller forgets the players returned (a quitter may have left while the game goes
        on: such a player waits until that game is scored). Rows come in the order of the list
        ``[still waiting for scores, in the order found] + [departed since the last call]``,
        filtered to the players with every game scored; the players still waiting are not
        rescanned: :meth:`game` notes those it finishes scoring, and their order is restored
        from when they were found.
        """
        written: list[Player] = []
        awaiting = self._awaiting
        if self._scored_awaiting:
            ready, self._scored_awaiting = self._scored_awaiting, []
            ready.sort(key=lambda pid: awaiting[pid][0])
            for pid in ready:
                written.append(awaiting.pop(pid)[1])
        for player in self._departed:
            if player.unscored:
                awaiting[player.pid] = (self._awaiting_seq, player)
                self._awaiting_seq += 1
            else:
                written.append(player)
        self._departed = []
        self.records.players.extend(map(player_row, written))
        return written

    def sample_ratings(self, raters: Sequence[tuple[str, Rater]], ids: IdArray, now: float) -> None:
        """Record every rater's rating (and variance, NaN without one) of players ``ids``."""
        if ids.size == 0:
            return
        ratings = self.records.ratings
        id_list = ids.tolist()
        for name, rater in raters:
            means = rater.means(ids).tolist()
            variances = rater.variances(ids)
            var_list = [math.nan] * len(means) if variances is None else variances.tolist()
            ratings.extend(
                zip(
                    [now] * len(means),
                    [name] * len(means),
                    id_list,
                    means,
                    var_list,
                    strict=True,
                )
            )

    def flush(self, force: bool = False) -> None:
        """Hand full buffers (every non-empty one with ``force``) to the sink, if any."""
        self.records.flush(force)
