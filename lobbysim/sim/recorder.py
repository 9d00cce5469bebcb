"""The recorder of a run: record rows, their buffers and sink, departed players, rating samples.

:class:`Recorder` appends the rows of every record kind (``Records.KINDS``) as tuples, cheap on
the hot path: a queueing spell's wait, a scored game with its participants (and the players'
tallies of games and wins the players records carry), the rating samples, and, when the records
are streamed, the row of each departed player once all their games are scored, after which the
lobby forgets them. It decides nothing about the model and does no file I/O: the sink does.

With a world and with parties the rows carry the columns they add
(:func:`lobbysim.records.rows.record_schema`): a game's data centre, a seat's region, latency and
party, a queueing spell's region and party, a player's region; a team game's row carries its
predicted win chance and true gap at the start; under a rule set, a seat's row carries the
rules' columns its game gives (:mod:`lobbysim.sim.seat_rules`; a 1v1 game's through
:meth:`Recorder.duels`' ``rule_values``). A run without them writes the rows it always wrote.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lobbysim.raters import Rater
from lobbysim.raters.base import rater_plugin
from lobbysim.records.rows import DuelBatch, GameResult
from lobbysim.sim.entities import IdArray, Player, Records, Waiting

if TYPE_CHECKING:
    from lobbysim.sim.world import World


def player_row(p: Player) -> tuple[Any, ...]:
    """Return a player's row of the players records (``simulation.PLAYER_COLUMNS``)."""
    return (p.pid, p.skill, p.mu0, p.var0, p.registered, p.games, p.wins, p.state)


class Recorder:
    """Appends record rows to :class:`Records` and writes out departed players when streaming.

    Args:
        records: the row buffers; with a sink, the records are streamed and departed players
            are written out and forgotten as the run goes.
        world: the run's world (its rows then carry regions, data centres and latencies).
        parties: whether the run has parties (its rows then carry party ids).
    """

    def __init__(self, records: Records, world: World | None = None, parties: bool = False) -> None:
        self.records = records
        self._world = world
        self._parties = parties
        self._extras = world is not None or parties
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

    def wait(self, pid: int, since: float, now: float, outcome: str, party: int = -1) -> None:
        """Record a queueing spell of player ``pid`` from ``since`` to ``now`` (its outcome),
        queued with ``party`` (-1: solo)."""
        if self._extras:
            row = (pid, since, now, outcome, now - since, *self._place(pid, party))
            self.records.waits.append(row)
            return
        self.records.waits.append((pid, since, now, outcome, now - since))

    def _place(self, pid: int, party: int) -> tuple[Any, ...]:
        """Return a queueing spell's region and party columns (those the run has)."""
        region = () if self._world is None else (self._world.region_name(pid),)
        return (*region, party if party >= 0 else None) if self._parties else region

    def still_waiting(self, pool: Sequence[Waiting], horizon: float) -> list[tuple[Any, ...]]:
        """Return the rows of the players still waiting at the horizon (``still_waiting``)."""
        rows = [(w.pid, w.since, math.nan, "still_waiting", horizon - w.since) for w in pool]
        if not self._extras:
            return rows
        return [(*r, *self._place(w.pid, w.player.party)) for r, w in zip(rows, pool, strict=True)]

    def player_rows(self, players: Sequence[Player]) -> list[tuple[Any, ...]]:
        """Return the players records' rows of ``players`` (with a world, their regions)."""
        rows = list(map(player_row, players))
        world = self._world
        if world is None:
            return rows
        return [(*r, world.region_name(p.pid)) for r, p in zip(rows, players, strict=True)]

    def game(
        self,
        result: GameResult,
        quality: float,
        truth: tuple[float, float, bool | None],
        players: Sequence[Player],
        data_centre: int = -1,
        party_ids: Sequence[int] | None = None,
        team_start: tuple[float, float] | None = None,
        rule_values: Sequence[tuple[Any, ...]] | None = None,
    ) -> None:
        """Record a scored game: its participants, the players' tallies, and the game's row.

        Args:
            result: the game as the raters get it.
            quality: the match quality the matchmaker predicted.
            truth: the true draw density, true skill gap and whether the stronger side won.
            players: the player of each seat, in seat order.
            data_centre: where the game was hosted (-1: no world).
            party_ids: each seat's party when the player sat down (-1: solo; None: no parties).
            team_start: a team game's predicted win chance of its stronger team and true gap
                between its teams at the start (:data:`lobbysim.records.rows.TEAM_COLUMNS`).
            rule_values: under a rule set, each seat's rule columns, in seat order
                (:func:`lobbysim.records.rows.rule_columns`; None: no rule set).
        """
        winner, game_id = result.winner, result.game_id
        awaiting = self._awaiting
        add = self.records.participants.append
        if self._extras or rule_values is not None:  # a world's, parties', rules' columns
            add = self._seat_adder(data_centre, party_ids, rule_values)
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
        row: tuple[Any, ...] = (
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
        if self._world is not None:
            row += (self._world.data_centres[data_centre],)
        if team_start is not None:
            row += team_start
        self.records.games.append(row)

    def _seat_adder(
        self,
        data_centre: int,
        party_ids: Sequence[int] | None,
        rule_values: Sequence[tuple[Any, ...]] | None = None,
    ) -> Callable[[tuple[Any, ...]], None]:
        """Return what appends a game's participant rows with the world's, the parties' and the
        rules' columns (a seat's region and latency at ``data_centre``, its party of
        ``party_ids``, its ``rule_values``, in seat order)."""
        append = self.records.participants.append
        world, parties = self._world, self._parties
        seats = iter(range(1 << 62))

        def add(row: tuple[Any, ...]) -> None:
            k = next(seats)
            pid = row[1]
            extra: tuple[Any, ...] = ()
            if world is not None:
                extra = (world.region_name(pid), world.latency_of(pid, data_centre))
            if parties:
                party = -1 if party_ids is None else party_ids[k]
                extra += (party if party >= 0 else None,)
            if rule_values is not None:
                extra += rule_values[k]
            append((*row, *extra))

        return add

    def duels(
        self,
        batch: DuelBatch,
        players_a: Sequence[Player],
        players_b: Sequence[Player],
        minutes: Sequence[float],
        quality: Sequence[float],
        truths: Sequence[tuple[float, float, bool | None]],
        rule_values: Sequence[Sequence[tuple[Any, ...]]] | None = None,
    ) -> None:
        """Record scored 1v1 games as :meth:`game` records each of them, in order.

        Args:
            batch: the games (side 0 is ``players_a``, side 1 ``players_b``).
            players_a, players_b: each game's players.
            minutes: each game's length (both stints last the whole game).
            quality: the match quality the matchmaker predicted for each game.
            truths: each game's true draw density, true skill gap and whether the stronger won.
            rule_values: under a rule set, each game's two seats' rule columns, side 0's then
                side 1's (:class:`lobbysim.sim.rule_columns.DuelRules`; None: no rule columns).

        The rows and tallies are :meth:`game`'s, made column by column: the participants of a
        game in seat order, a game after another.
        """
        awaiting, ready = self._awaiting, self._scored_awaiting
        for pa, pb, winner in zip(players_a, players_b, batch.winner, strict=True):
            pa.unscored -= 1
            if not pa.unscored and pa.pid in awaiting:
                ready.append(pa.pid)
            pa.games += 1
            pa.wins += winner == 0
            pb.unscored -= 1
            if not pb.unscored and pb.pid in awaiting:
                ready.append(pb.pid)
            pb.games += 1
            pb.wins += winner == 1
        ids, start, end = batch.game_id, batch.start, batch.end
        records = self.records
        if self._extras or rule_values is not None:
            self._duels_placed(batch, minutes, quality, truths, rule_values)
            return
        if len(ids) == 1:  # one game (a pass on every arrival): its rows as tuples
            quit_side, winner = batch.quit_side[0], batch.winner[0]
            game_id, begun, ended, length = ids[0], start[0], end[0], minutes[0]
            records.participants += (
                (
                    game_id,
                    batch.player_a[0],
                    0,
                    begun,
                    ended,
                    length,
                    batch.score_a[0],
                    batch.registered_a[0],
                    quit_side == 0,
                ),
                (
                    game_id,
                    batch.player_b[0],
                    1,
                    begun,
                    ended,
                    length,
                    batch.score_b[0],
                    batch.registered_b[0],
                    quit_side == 1,
                ),
            )
            truth = truths[0]
            records.games.append(
                (game_id, "1v1", begun, ended, truth[0], truth[1], quality[0], truth[2], winner)
            )
            return
        side_a = zip(
            ids,
            batch.player_a,
            itertools.repeat(0),
            start,
            end,
            minutes,
            batch.score_a,
            batch.registered_a,
            [q == 0 for q in batch.quit_side],
        )
        side_b = zip(
            ids,
            batch.player_b,
            itertools.repeat(1),
            start,
            end,
            minutes,
            batch.score_b,
            batch.registered_b,
            [q == 1 for q in batch.quit_side],
        )
        records.participants += itertools.chain.from_iterable(zip(side_a, side_b, strict=True))
        draw, gap, stronger_won = zip(*truths, strict=True)
        records.games += zip(
            ids, itertools.repeat("1v1"), start, end, draw, gap, quality, stronger_won, batch.winner
        )

    def _duels_placed(
        self,
        batch: DuelBatch,
        minutes: Sequence[float],
        quality: Sequence[float],
        truths: Sequence[tuple[float, float, bool | None]],
        rule_values: Sequence[Sequence[tuple[Any, ...]]] | None = None,
    ) -> None:
        """The rows of :meth:`duels` with the world's, the parties' and the rules' columns (a
        1v1 game's data centre is the world's :meth:`~lobbysim.sim.world.World.duel_host`;
        1v1 games have no parties; ``rule_values``: each game's seats' rule columns)."""
        world = self._world
        for k, game_id in enumerate(batch.game_id):
            begun, ended, length = batch.start[k], batch.end[k], minutes[k]
            host = -1 if world is None else world.duel_host(game_id)
            add = self._seat_adder(host, None, None if rule_values is None else rule_values[k])
            quit_side = batch.quit_side[k]
            for side, pid, score, registered in (
                (0, batch.player_a[k], batch.score_a[k], batch.registered_a[k]),
                (1, batch.player_b[k], batch.score_b[k], batch.registered_b[k]),
            ):
                add(
                    (game_id, pid, side, begun, ended, length, score, registered, quit_side == side)
                )
            draw, gap, stronger_won = truths[k]
            row: tuple[Any, ...] = (game_id, "1v1", begun, ended, draw, gap, quality[k])
            row += (stronger_won, batch.winner[k])
            if world is not None:
                row += (world.data_centres[host],)
            self.records.games.append(row)

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
        if not self._scored_awaiting and not self._departed:  # most back-fill passes
            return []
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
        self.records.players.extend(self.player_rows(written))
        return written

    def sample_ratings(self, raters: Sequence[tuple[str, Rater]], ids: IdArray, now: float) -> None:
        """Record every rater's rating (and variance, NaN without one) of players ``ids``.

        ``raters``: the driving rater first, then the shadows (as errors name them).
        """
        if ids.size == 0:
            return
        ratings = self.records.ratings
        id_list = ids.tolist()
        for k, (name, rater) in enumerate(raters):
            plugin = rater_plugin(k, name)
            means = plugin.call("means(ids)", rater.means, ids).tolist()
            variances = plugin.call("variances(ids)", rater.variances, ids)
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
