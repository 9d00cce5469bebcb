"""The teams of a game: how many, and how many players each may hold (``game.teams``).

A game of mode ``team`` or ``ffa`` may describe its teams one by one, as a FlexMatch rule set
does: each :class:`TeamConfig` has a ``min_players`` and a ``max_players`` (a range: the game
starts once every team has its minimum and the rules hold, filled towards the maximum while the
match is built), a ``quantity`` (that many teams alike) and ``expansions`` of its minimum (the
minimum falls to each step's value once the match's clock has waited that long, on ``clock``:
``newest`` or ``oldest``, the youngest or the oldest ticket's wait, as the rules' clocks).

Mode ``ffa`` has one team (everyone for themselves; its range is the game's size). Mode ``team``
has two or more teams, of any sizes. ``team_size: n`` is two teams of ``n``; ``ffa_size: n`` one
team of ``n``: the *fixed* shapes (:attr:`TeamShape.fixed`) that every matchmaker search forms;
every other shape is formed by the rule matchmaker's builders (``matchmaker.algorithm:
seed_greedy`` or ``flexmatch``, under ``matchmaker.rules``), docs/model.md section 10.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lobbysim.validation import finite, whole

#: The most players a game may hold (FlexMatch's largest match).
MAX_GAME_PLAYERS = 200
#: The most teams a game may have.
MAX_TEAMS = 100
CLOCKS = ("newest", "oldest")


@dataclass(frozen=True)
class TeamConfig:
    """One team of a game, or ``quantity`` teams alike (see the module docstring).

    Attributes:
        name: the team's name (FlexMatch's; teams of a ``quantity`` are ``name_1``, ...).
        min_players: the fewest players the team starts a game with (default: ``max_players``).
        max_players: the most players it holds (>= 1).
        quantity: teams of this description (>= 1).
        expansions: ``[minutes waited, min_players]`` steps: the minimum once the match's clock
            has waited that long (minutes increasing, minimums decreasing, each >= 1).
        clock: whose wait the expansions read: ``newest`` (the youngest ticket's, FlexMatch's
            default) or ``oldest``.
    """

    name: str = ""
    min_players: int | None = None
    max_players: int = 1
    quantity: int = 1
    expansions: tuple[tuple[float, float], ...] = field(
        default=(), metadata={"expected": "a list of [minutes, min_players] steps"}
    )
    clock: str = "newest"

    @property
    def low(self) -> int:
        """Return the team's minimum before any expansion."""
        return self.max_players if self.min_players is None else self.min_players

    def problems(self, where: str) -> list[str]:
        """Return what is wrong with this team (``where``: its path, ``game.teams[0]``)."""
        out = [
            p
            for p in (
                whole(f"{where}.max_players", self.max_players, 1),
                None
                if self.min_players is None
                else whole(f"{where}.min_players", self.min_players, 1),
                whole(f"{where}.quantity", self.quantity, 1),
            )
            if p is not None
        ]
        if out:
            return out
        if self.low > self.max_players:
            out.append(
                f"{where}.min_players: {self.low} is more than max_players {self.max_players}"
            )
        if self.clock not in CLOCKS:
            out.append(f"{where}.clock: expected newest or oldest, got {self.clock!r}")
        previous: tuple[float, float] = (0.0, float(self.low))
        for k, step in enumerate(self.expansions):
            here = f"{where}.expansions[{k}]"
            if len(step) != 2:
                out.append(f"{here}: expected [minutes, min_players], got {list(step)!r}")
                break
            minutes, low = step
            problem = finite(f"{here}[0]", minutes) or (
                None
                if math.isfinite(low) and low == int(low) and low >= 1
                else f"{here}[1]: expected a whole number of players >= 1, got {low!r}"
            )
            if problem is not None:
                out.append(problem)
                break
            if minutes <= previous[0] or low >= previous[1]:
                out.append(
                    f"{here}: the minutes increase from step to step (above 0) and the minimum "
                    f"falls (below {previous[1]:g}), got [{minutes:g}, {low:g}]"
                )
                break
            previous = (minutes, low)
        return out


@dataclass(frozen=True)
class TeamShape:
    """A game's teams one by one (``quantity`` expanded): each team's least and most players and
    its minimum's steps; built by :func:`team_shape`."""

    lows: tuple[int, ...]
    highs: tuple[int, ...]
    steps: tuple[tuple[tuple[float, int], ...], ...]
    clocks: tuple[str, ...]
    #: Whether it is a shape every search forms: one team of a fixed size (a free-for-all) or
    #: two teams of one fixed size (no ranges, no expansions).
    fixed: bool

    @property
    def teams(self) -> int:
        """Return the number of teams."""
        return len(self.highs)

    @property
    def seats(self) -> int:
        """Return the most players a game holds."""
        return sum(self.highs)

    def lows_at(self, newest: float, oldest: float) -> list[int]:
        """Return each team's minimum once the match's youngest ticket has waited ``newest``
        minutes and its oldest ``oldest``."""
        out = []
        for low, steps, clock in zip(self.lows, self.steps, self.clocks, strict=True):
            wait = newest if clock == "newest" else oldest
            for minutes, value in steps:
                if wait >= minutes:
                    low = value
            out.append(low)
        return out

    def least(self, newest: float, oldest: float) -> int:
        """Return the fewest players a game starts with at these waits (see :meth:`lows_at`)."""
        return sum(self.lows_at(newest, oldest))

    def least_of(self, newest: Any, oldest: Any) -> Any:
        """Return :meth:`least` of each pair of waits (arrays of one shape), at once."""
        newest, oldest = np.asarray(newest, dtype=float), np.asarray(oldest, dtype=float)
        total = np.zeros(newest.shape, dtype=np.int64)
        for low, steps, clock in zip(self.lows, self.steps, self.clocks, strict=True):
            wait = newest if clock == "newest" else oldest
            value = np.full(newest.shape, low, dtype=np.int64)
            for minutes, step in steps:
                value[wait >= minutes] = int(step)
            total += value
        return total

    @property
    def least_ever(self) -> int:
        """Return the fewest players a game can ever start with (every minimum at its last
        step)."""
        return sum(
            steps[-1][1] if steps else low for low, steps in zip(self.lows, self.steps, strict=True)
        )

    @property
    def equal(self) -> bool:
        """Whether every team has the same range (the sizes a split can keep within one)."""
        return len(set(zip(self.lows, self.highs, strict=True))) == 1


def team_shape(
    mode: str, team_size: int | None, ffa_size: int | None, teams: Sequence[TeamConfig]
) -> TeamShape | None:
    """Return the teams of a game of ``mode`` (None for 1v1): ``teams`` if given, else two teams
    of ``team_size`` or one of ``ffa_size``."""
    if mode == "1v1":
        return None
    if not teams:
        size = (team_size or 2) if mode == "team" else (ffa_size or 8)
        count = 2 if mode == "team" else 1
        return TeamShape((size,) * count, (size,) * count, ((),) * count, ("newest",) * count, True)
    lows: list[int] = []
    highs: list[int] = []
    steps: list[tuple[tuple[float, int], ...]] = []
    clocks: list[str] = []
    for team in teams:
        for _ in range(team.quantity):
            lows.append(team.low)
            highs.append(team.max_players)
            steps.append(tuple((float(m), int(v)) for m, v in team.expansions))
            clocks.append(team.clock if team.expansions else "newest")  # (read by none)
    fixed = (
        all(lo == hi for lo, hi in zip(lows, highs, strict=True))
        and not any(steps)
        and (len(highs) == 1 or (len(highs) == 2 and highs[0] == highs[1]))
    )
    return TeamShape(tuple(lows), tuple(highs), tuple(steps), tuple(clocks), fixed)


def teams_problems(
    mode: str, team_size: int | None, ffa_size: int | None, teams: Sequence[TeamConfig]
) -> list[str]:
    """Return what is wrong with ``game.teams`` given the mode and sizes."""
    if not teams:
        return []
    if mode == "1v1":
        return ["game.teams: mode 1v1 has one player a side; use mode: team for teams"]
    if team_size is not None or ffa_size is not None:
        given = "team_size" if team_size is not None else "ffa_size"
        return [f"game.teams: give either teams or {given}, not both"]
    out = [p for k, team in enumerate(teams) for p in team.problems(f"game.teams[{k}]")]
    if out:
        return out
    count = sum(t.quantity for t in teams)
    if mode == "ffa" and count != 1:
        out.append(
            f"game.teams: mode ffa has one team (everyone for themselves), got {count}; use "
            "mode: team for two or more"
        )
    if mode == "team" and count < 2:
        out.append("game.teams: mode team needs two or more teams; one team is mode: ffa")
    if count > MAX_TEAMS:
        out.append(f"game.teams: {count} teams; at most {MAX_TEAMS}")
    players = sum(t.max_players * t.quantity for t in teams)
    if players > MAX_GAME_PLAYERS:
        out.append(
            f"game.teams: {players} players at most; a game holds at most {MAX_GAME_PLAYERS}"
        )
    least = sum(min([t.low, *[v for _, v in t.expansions]]) * t.quantity for t in teams)
    if mode == "team" and least < 2:
        out.append("game.teams: a game of one player is not a team game")
    names = [t.name for t in teams if t.name]
    for name in sorted({n for n in names if names.count(n) > 1}):
        out.append(f"game.teams: the name {name!r} is given to two teams")
    return out


def describe_shape(mode: str, shape: TeamShape | None) -> str:
    """Return a game's mode and teams in words: ``1v1``, ``team (5 vs 5)``, ``free-for-all
    (4-8 players)``, ``team (5 vs 1)``, ``team (3 teams of 3-5)``, ``team (11 teams: 5 + 10 x
    7-15)`` (a range from the least minimum its expansions reach)."""
    if shape is None:
        return "1v1"

    def size(k: int) -> str:
        low, high = shape.lows[k], shape.highs[k]
        steps = shape.steps[k]
        least = steps[-1][1] if steps else low
        return str(high) if least == high else f"{least}-{high}"

    sizes = [size(k) for k in range(shape.teams)]
    if mode == "ffa":
        return f"free-for-all ({sizes[0]} players)"
    if len(sizes) == 2:
        return f"team ({sizes[0]} vs {sizes[1]})"
    if len(set(sizes)) == 1:
        return f"team ({len(sizes)} teams of {sizes[0]})"
    runs: list[list[Any]] = []  # consecutive teams of one size, as [size, count]
    for text in sizes:
        if runs and runs[-1][0] == text:
            runs[-1][1] += 1
        else:
            runs.append([text, 1])
    parts = [str(text) if count == 1 else f"{count} x {text}" for text, count in runs]
    return f"team ({len(sizes)} teams: {' + '.join(parts)})"
