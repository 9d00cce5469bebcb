"""Churn in the lobby: what each member of a player base lived through, and whether they stay.

:class:`Retention` runs the retention model of a player base (:mod:`lobbysim.players.retention`).
It keeps
a tally of each member's current visit (games, wins, losses, true skill gaps, queueing time, and
whether they gave up in the queue) and the streak of losses each member carries across visits.
When a visit ends, the decision waits until every game of the visit has been scored (the lobby
scores finished games before each matchmaking pass, so at most a tick later); then the member
leaves the base for good with the model's probability (one uniform from the stream
``retention``), or comes back after the visit model's gap times the model's delay.

Outcomes per seat: in 1v1 and team games the winning side won and the other lost, and a team
draw is neither; in a free-for-all (no winner) a player won if their score per minute was above
the game's mean and lost if below. The true skill gap of a seat is the gap between the two sides'
mean true skills (1v1, team), or the mean gap to the other players (free-for-all).

It also measures retention from ``metrics_start`` on: the members in the base then are the
cohort; :meth:`Retention.metrics` gives the daily active players, visits per member and week,
churn per week and the share still in the base at the end, for the whole cohort, by tenure group
(``newcomer_``: fewer than ``base.newcomer_games`` games at the start, ``veteran_``: the rest)
and, for the share retained and the visits, by true skill decile of the cohort. The churn per
week of a decile is ``(1 - retained_decile_k) / weeks``: the share retained says it already.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import simpy

from lobbysim.players.retention import (
    RetentionModel,
    Visit,
    Visits,
    check_delay,
    check_probability,
    leave_probabilities,
    retention_plugin,
)
from lobbysim.records.rows import GameResult
from lobbysim.scenario import BaseConfig
from lobbysim.sim.entities import LEFT, Player
from lobbysim.streams import Streams

MINUTES_PER_DAY = 1440.0
DECILES = 10
TENURE_PREFIXES = ("newcomer_", "veteran_")
"""The tenure groups of the cohort: fewer than ``base.newcomer_games`` games at the start, and
the rest (the prefixes of the metrics by tenure of :mod:`lobbysim.stats.metrics`)."""


class Members(Protocol):
    """What churn needs of its player base (:class:`lobbysim.sim.player_base.PlayerBase`, which
    runs it): the environment, the base's configuration, and the two ways a member goes."""

    @property
    def env(self) -> simpy.Environment: ...

    @property
    def config(self) -> BaseConfig: ...

    def leave(self, player: Player) -> None: ...

    def return_later(self, player: Player, delay: float) -> None: ...


@dataclass(slots=True)
class Tally:
    """One member's current visit, so far."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    gaps: float = 0.0
    waits: float = 0.0
    spells: int = 0
    gave_up: bool = False


class Retention:
    """The retention model of a player base, applied after every visit; retention metrics.

    Args:
        base: the player base whose members it decides about.
        model: the retention model.
        model_name: its name, for messages.
        streams: the run's streams (``retention``).
        players: every player so far by id (the lobby's list, kept by the lobby).
        metrics_start: when the cohort is taken and the metrics start.

    Each queueing spell reaches :meth:`waited` through the lobby (the builder hands it over:
    :meth:`Lobby.serve_base <lobbysim.sim.sessions.Lobby.serve_base>`).
    """

    def __init__(
        self,
        base: Members,
        model: RetentionModel,
        model_name: str,
        streams: Streams,
        players: list[Player | None],
        metrics_start: float = 0.0,
    ) -> None:
        self._base = base
        self.model = model
        self._name = model_name
        self._plugin = retention_plugin(model_name)  # names the model if a verb fails
        self._rng = streams.get("retention")
        self._tallies: dict[int, Tally] = {}
        self._streaks: dict[int, int] = {}
        self._pending: dict[int, Player] = {}
        self._players = players
        self._start = metrics_start
        self._cohort: tuple[np.ndarray, np.ndarray] | None = None  # (ids, skills) at the start
        self._left_at: dict[int, float] = {}
        self._last_day: dict[int, int] = {}
        self._active: dict[int, int] = {}  # day -> members who started a visit that day
        self._visits = 0  # visits started from the start on
        self._member_visits: dict[int, int] = {}  # cohort member -> visits from the start on
        self._group: dict[int, int] = {}  # cohort member -> tenure group (0 newcomer, 1 veteran)
        self._group_active: list[dict[int, int]] = [{}, {}]  # per group: day -> active members
        #: Every decision, for traces: (time, player, leave probability, delay or None, left).
        self.decisions: list[tuple[float, int, float, float | None, bool]] | None = None
        base.env.timeout(metrics_start).callbacks.append(self._take_cohort)  # the cohort

    # ------------------------------------------------------------------ the tally
    def _tally(self, pid: int) -> Tally:
        tally = self._tallies.get(pid)
        if tally is None:
            tally = self._tallies[pid] = Tally()
        return tally

    def waited(self, player: Player, minutes: float, gave_up: bool) -> None:
        """Count a member's queueing spell."""
        if player.member:
            tally = self._tally(player.pid)
            tally.waits += minutes
            tally.spells += 1
            tally.gave_up = gave_up

    def observe(self, games: Sequence[GameResult]) -> None:
        """Count freshly scored games; decide about members whose visits are now all scored."""
        players = self._players
        for game in games:
            for pid, result, gap in _seat_outcomes(game, players):
                player = players[pid]
                if player is None or not player.member:
                    continue
                tally = self._tally(pid)
                tally.games += 1
                tally.gaps += gap if math.isfinite(gap) else 0.0
                if result > 0:
                    tally.wins += 1
                    self._streaks[pid] = 0
                elif result < 0:
                    tally.losses += 1
                    self._streaks[pid] = self._streaks.get(pid, 0) + 1
        if self._pending:
            ready = [p for p in self._pending.values() if not p.unscored]
            for player in ready:
                del self._pending[player.pid]
                self.decide(player)

    # ------------------------------------------------------------------ decisions
    def visit_ended(self, player: Player) -> None:
        """Decide now if the visit's games are all scored, else once they are."""
        if player.unscored:
            self._pending[player.pid] = player
        else:
            self.decide(player)

    def visit_of(self, player: Player) -> Visit:
        """Return the visit just ended by ``player`` as the model sees it."""
        tally = self._tallies.pop(player.pid, None) or Tally()
        return Visit(
            games=tally.games,
            wins=tally.wins,
            losses=tally.losses,
            streak=self._streaks.get(player.pid, 0),
            mean_gap=tally.gaps / tally.games if tally.games else 0.0,
            mean_wait=tally.waits / tally.spells if tally.spells else 0.0,
            gave_up=tally.gave_up,
            skill=player.skill,
            tenure=player.games,
        )

    def decide(self, player: Player) -> None:
        """Let ``player`` leave the base with the model's probability, or come back later."""
        visit = self.visit_of(player)
        model = self.model
        try:
            value = model.leave_probability(visit)
        except (Exception, SystemExit) as exc:  # a model's own bug, or its sys.exit: one line
            raise self._plugin.failure("leave_probability(visit)", exc) from None
        p = check_probability(self._name, value)
        leaves = bool(self._rng.random() < p)
        delay = None
        if leaves:
            self._base.leave(player)
        else:
            try:
                value = model.return_delay(visit)
            except (Exception, SystemExit) as exc:
                raise self._plugin.failure("return_delay(visit)", exc) from None
            delay = check_delay(self._name, value)
            self._base.return_later(player, delay)
        if self.decisions is not None:
            self.decisions.append((self._base.env.now, player.pid, p, delay, leaves))
        if player.state == LEFT:
            self._streaks.pop(player.pid, None)

    def churn_risk(
        self, player: Player, p_win: float, gap: float, waited: float, belief: float
    ) -> float:
        """Return the predicted chance that ``player`` leaves after one more game.

        The model's leave probability of a visit ending with that game, averaged over the game's
        outcome: with ``p_win`` a win (the losing streak ends), else a loss (it grows by one);
        the game's gap is ``gap`` and its queueing time ``waited`` (the visit so far counts).
        The prediction sees the player's rating mean ``belief``, never their true skill.
        """
        _, risk = self.pool_risks(
            [player], [belief], [waited], 0.0, np.zeros(1, np.intp), [p_win], [gap]
        )
        return float(risk[0])

    def waiting_risk(self, player: Player, waited: float, belief: float) -> float:
        """Return the predicted chance that ``player`` leaves if left waiting for another pass.

        The model's leave probability of a visit ending without another game after a queueing
        spell of ``waited`` minutes (the wait so far plus the time to the next pass): the losing
        streak and the visit's games stay as they are. It is as myopic as :meth:`churn_risk`
        (as if the visit ended there), so the two can be added up over a pool.
        """
        stay, _ = self.pool_risks([player], [belief], [0.0], waited, np.zeros(0, np.intp), [], [])
        return float(stay[0])

    def pool_risks(
        self,
        players: Sequence[Player],
        beliefs: Sequence[float],
        waited: Sequence[float],
        next_pass: float,
        seats: np.ndarray,
        p_wins: Sequence[float] | np.ndarray,
        gaps: Sequence[float] | np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return the predicted churn of a pool's players left waiting and of possible games.

        ``stay[i]``: :meth:`waiting_risk` of ``players[i]`` after ``waited[i] + next_pass``
        minutes in the queue; ``risk[k]``: :meth:`churn_risk` of player ``seats[k]`` in a game
        they win with probability ``p_wins[k]`` with a gap ``gaps[k]`` (its queueing time
        ``waited``). Every visit goes to the model in one call
        (:func:`~lobbysim.players.retention.leave_probabilities`).
        """
        n = len(players)
        cols = np.zeros((8, n))  # games, wins, losses, gaps, waits, spells, streak, tenure
        for i, player in enumerate(players):
            tally = self._tallies.get(player.pid) or Tally()
            cols[:, i] = (
                tally.games,
                tally.wins,
                tally.losses,
                tally.gaps,
                tally.waits,
                tally.spells,
                self._streaks.get(player.pid, 0),
                player.games,
            )
        games, wins, losses, past_gaps, waits, spells, streak, tenure = cols
        belief = np.asarray(beliefs, dtype=np.float64)
        wait = np.asarray(waited, dtype=np.float64)
        k = seats
        played = games[k] + 1
        gap_mean = (past_gaps[k] + np.asarray(gaps, dtype=np.float64)) / played
        wait_mean = (waits[k] + wait[k]) / (spells[k] + 1)
        stay_wait = (waits + (wait + next_pass)) / (spells + 1)
        stay_gap = np.divide(past_gaps, games, out=np.zeros(n), where=games > 0)
        m = k.size

        def ints(*parts: np.ndarray) -> np.ndarray:
            return np.concatenate(parts).astype(np.int64)

        visits = Visits(
            games=ints(games, played, played),
            wins=ints(wins, wins[k] + 1, wins[k]),
            losses=ints(losses, losses[k], losses[k] + 1),
            streak=ints(streak, np.zeros(m), streak[k] + 1),
            mean_gap=np.concatenate([stay_gap, gap_mean, gap_mean]),
            mean_wait=np.concatenate([stay_wait, wait_mean, wait_mean]),
            gave_up=np.zeros(n + 2 * m, dtype=bool),
            skill=np.concatenate([belief, belief[k], belief[k]]),
            tenure=ints(tenure, tenure[k] + 1, tenure[k] + 1),
        )
        leave = leave_probabilities(self._name, self.model, visits)
        p = np.asarray(p_wins, dtype=np.float64)
        risk = p * leave[n : n + m] + (1.0 - p) * leave[n + m :]
        return leave[:n], risk

    # ------------------------------------------------------------------ metrics
    def _take_cohort(self, _event: simpy.Event) -> None:
        members = [p for p in self._players if p is not None and p.member and p.state != LEFT]
        ids = np.array([p.pid for p in members], dtype=np.int64)
        skills = np.array([p.skill for p in members], dtype=np.float64)
        self._cohort = (ids, skills)
        newcomer_games = self._base.config.newcomer_games
        self._group = {p.pid: int(p.games >= newcomer_games) for p in members}

    def visit_started(self, player: Player) -> None:
        """Count a visit for the activity metrics (from the start on)."""
        now = self._base.env.now
        if now < self._start:
            return
        self._visits += 1
        pid = player.pid
        group = self._group.get(pid)
        if group is not None:
            self._member_visits[pid] = self._member_visits.get(pid, 0) + 1
        day = int((now - self._start) // MINUTES_PER_DAY)
        if self._last_day.get(pid) != day:
            self._last_day[pid] = day
            self._active[day] = self._active.get(day, 0) + 1
            if group is not None:
                active = self._group_active[group]
                active[day] = active.get(day, 0) + 1

    def left(self, player: Player) -> None:
        """Note when a member left the base."""
        self._left_at[player.pid] = self._base.env.now

    def metrics(self, horizon: float) -> dict[str, float]:
        """Return the retention metrics of the cohort over ``[metrics_start, horizon]``.

        ``daily_active_players``: mean over the days of the window (whole days; the last part
        day too if the window is shorter than a day) of the members who started a visit that
        day; ``visits_per_member_week``: visits per cohort member and week; ``churn_per_week``:
        the share of the cohort leaving per week; ``retained``: the share of the cohort still in
        the base at the end. The same four for each tenure group of the cohort
        (``newcomer_...``, ``veteran_...``; the overall daily active players and visits also
        count members who joined after the start, the groups only the cohort's), and by true
        skill decile of the cohort (k = 1 lowest to 10 highest) ``retained_decile_k`` and
        ``visits_per_member_week_decile_k``; ``retained_deciles_1_9`` is the mean share
        retained of deciles 1 to 9, the "bottom 90%" of Activision's 2024 white paper on
        skill-based matchmaking (the deciles differ in size by at most one member).
        """
        empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
        ids, skills = self._cohort if self._cohort is not None else empty
        weeks = (horizon - self._start) / (7 * MINUTES_PER_DAY)
        whole = max(int((horizon - self._start) / MINUTES_PER_DAY), 1)
        id_list: list[int] = [int(pid) for pid in ids]
        stayed = np.array([pid not in self._left_at for pid in id_list], dtype=bool)
        visits = np.array([self._member_visits.get(pid, 0) for pid in id_list], dtype=np.float64)
        groups = np.array([self._group.get(pid, 0) for pid in id_list], dtype=np.int64)
        out = {
            "daily_active_players": sum(self._active.get(d, 0) for d in range(whole)) / whole,
            "visits_per_member_week": self._visits / ids.size / weeks if ids.size else math.nan,
            "churn_per_week": _mean(~stayed) / weeks,
            "retained": _mean(stayed),
        }
        for group, prefix in enumerate(TENURE_PREFIXES):
            part = groups == group
            active = self._group_active[group]
            out |= {
                f"{prefix}daily_active_players": sum(active.get(d, 0) for d in range(whole))
                / whole,
                f"{prefix}visits_per_member_week": _mean(visits[part]) / weeks,
                f"{prefix}churn_per_week": _mean(~stayed[part]) / weeks,
                f"{prefix}retained": _mean(stayed[part]),
            }
        order = np.argsort(skills, kind="stable")
        for k, part in enumerate(np.array_split(order, DECILES), start=1):
            out[f"retained_decile_{k}"] = _mean(stayed[part])
            out[f"visits_per_member_week_decile_{k}"] = _mean(visits[part]) / weeks
        bottom = [out[f"retained_decile_{k}"] for k in range(1, DECILES)]
        out["retained_deciles_1_9"] = sum(bottom) / len(bottom)
        return out


def _mean(values: np.ndarray) -> float:
    """Return the mean of ``values`` (NaN when empty)."""
    return float(values.mean()) if values.size else math.nan


def _seat_outcomes(
    game: GameResult, players: Sequence[Player | None]
) -> list[tuple[int, int, float]]:
    """Return (player, +1 won / -1 lost / 0 neither, true skill gap) for each seat of ``game``."""

    def skill(pid: int) -> float:
        player = players[pid]
        return player.skill if player is not None else math.nan

    seats = game.seats
    if game.mode == "ffa":
        rates = [s.score / s.minutes if s.minutes > 0 else 0.0 for s in seats]
        mean_rate = sum(rates) / len(rates)
        skills = [skill(s.player_id) for s in seats]
        out = []
        for k, seat in enumerate(seats):
            others = [abs(skills[k] - x) for j, x in enumerate(skills) if j != k]
            gap = sum(others) / len(others) if others else 0.0
            result = (rates[k] > mean_rate) - (rates[k] < mean_rate)
            out.append((seat.player_id, result, gap))
        return out
    sides: dict[int, list[float]] = {}
    for seat in seats:
        sides.setdefault(int(seat.team or 0), []).append(skill(seat.player_id))
    means = {team: sum(v) / len(v) for team, v in sides.items()}
    gap = abs(max(means.values()) - min(means.values())) if len(means) > 1 else 0.0
    return [
        (
            seat.player_id,
            0 if game.winner is None else (1 if seat.team == game.winner else -1),
            gap,
        )
        for seat in seats
    ]
