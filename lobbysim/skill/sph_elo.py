"""The ZoneStats score-per-hour (SPH) Elo: pure math, no SimPy, no I/O.

This module implements the rating update of the ZoneStats description ("Player Rating: Quick
View of the Algorithm" and its "Detail Equations"; docs/model.md, section 3.3) for one finished
game. Every registered ("ZoneStats enabled") player is compared with every registered opponent
by score per hour; each comparison is an Elo-style contest whose weight is the time both players
spent in the game, and the summed adjustments are scaled down together when the most-moved
player would gain or lose more than ``game_mult`` rating points per minute in the game.

For one game, with pre-game ratings ``R`` and ``p_ij = 1 / (1 + exp((R_j - R_i) / t))``::

    result_ij = {1, 0, 0.5}[SPH_i > SPH_j, SPH_i < SPH_j, SPH_i == SPH_j] - p_ij
    indiv_ij  = result_ij * game_mult * min(max_game_length, minutes_i, minutes_j)
    offset_i  = sum_j indiv_ij
    scale     = min(1, minutes_h * game_mult / |offset_h|),  h = argmax_i |offset_i|
    R_i      += offset_i * scale

Interpretations (the description is silent or ambiguous on these; each is a decision):

* **Guests.** Only registered participants (``registered=True``; "players who have a password")
  are rated. Guests play and score but are in no pair, so their score is never compared with
  anybody's, and they are absent from the result. Guests still take part in input validation
  (ids must be unique over the whole game, teams must not mix ``None`` and non-``None``).
* **Teams.** In a team game (every ``team`` is not ``None``) a registered player is compared
  only with registered players of a *different* team; teammates are never compared. In a
  free-for-all (every ``team`` is ``None``) every two registered players are compared. A game
  that mixes ``None`` and non-``None`` teams is rejected with :class:`ValueError`.
* **Players with 0 minutes.** SPH is undefined for them (division by zero hours), and their time
  factor against anybody would be ``min(..., 0) = 0`` anyway. A registered player with
  ``minutes == 0`` is therefore in no pair, has offset 0 and keeps their rating, but is still
  present in the result (with ``initial_rating`` if they had no rating). Their score is ignored.
* **Score 0 for everybody.** Nothing special: every SPH is 0, so every pair is a tie and each
  player's adjustment is ``0.5 - predicted`` weighted by time, which pulls the ratings of the
  players together (equal ratings stay exactly unchanged). A game with a single comparable
  player, or none, changes nothing.
* **The tie rule.** Two SPH values are equal when the *exact* rational numbers are equal,
  however a floating-point division would round: SPH is compared as the exact fraction
  ``Fraction(score) / Fraction(minutes)`` of the given floats (the common factor 60 of
  minutes-to-hours cancels). So 11 points in 11 minutes ties with 10 points in 10 minutes,
  although ``11 / (11 / 60) != 10 / (10 / 60)`` in floating point. The comparison is exact on the
  float values given; a score that was itself rounded (e.g. ``3 * 7.3``) is compared as stored.
* **"Winning" is a higher SPH.** The description's ``my_score_vs_opp > opp_score_vs_me`` is read
  as ``SPH_i > SPH_j`` (the source says SPH replaces score); margins do not matter.
* **The cap.** ``h`` is the player with the largest ``|offset|``; ``minutes_h`` is their own,
  *uncapped* time in the game (not limited by ``max_game_length``), as equation 5 says "the
  amount of time that the player ... was in the game". If several players share the largest
  ``|offset|``, the one giving the smallest scale (fewest minutes) is used. If every offset is 0
  the scale is 1. One common scale keeps the game zero-sum, so only ``h`` is guaranteed to move
  at most ``game_mult`` points per minute: another player with fewer minutes may move more per
  minute (equation 5 as written, rather than the looser prose of step 7).
* **Unrated players.** ``rating=None`` means unrated: they start at ``initial_rating`` (500).
* **Numerical symmetry.** Each pair is evaluated once, oriented so that the logistic is taken
  of a non-negative argument (the higher-rated player is "i"; equal ratings give exactly 0.5),
  and the other side gets exactly the negated value. Offsets are summed with :func:`math.fsum`,
  which is correctly rounded and hence independent of summation order. Together this makes
  ``indiv_ji == -indiv_ij`` exactly and the result bit-identical under any permutation of the
  participants.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

__all__ = [
    "DEFAULT_PARAMS",
    "Participant",
    "PlayerId",
    "SPHParams",
    "rate_game",
    "rating_changes",
]

PlayerId: TypeAlias = Hashable
"""A player identifier: any hashable value, in practice an ``int`` or a ``str``."""


def _is_real(value: object) -> bool:
    """Whether ``value`` is a real number (``bool`` excluded)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class SPHParams:
    """Constants of the SPH Elo (defaults from the ZoneStats description).

    Attributes:
        t: The logistic "spread" T of the predicted outcome, in rating points (> 0, finite).
        game_mult: GAME_MULT, rating points per minute of a fully decisive contest (> 0, finite).
        max_game_length: MAX_GAME_LENGTH in minutes, the cap on each pair's time factor (> 0;
            ``math.inf`` means no cap).
        initial_rating: The rating of a player without a rating (finite).

    Raises:
        ValueError: If a field is out of range; the message names the field and its value.
    """

    t: float = 120.0
    game_mult: float = 2.0
    max_game_length: float = 20.0
    initial_rating: float = 500.0

    def __post_init__(self) -> None:
        """Validate the constants."""
        for name in ("t", "game_mult"):
            value = getattr(self, name)
            if not _is_real(value) or not (math.isfinite(value) and value > 0):
                raise ValueError(f"SPHParams.{name} must be a finite number > 0, got {value!r}")
        if not _is_real(self.max_game_length) or not self.max_game_length > 0:
            raise ValueError(
                f"SPHParams.max_game_length must be a number > 0, got {self.max_game_length!r}"
            )
        if not _is_real(self.initial_rating) or not math.isfinite(self.initial_rating):
            raise ValueError(
                f"SPHParams.initial_rating must be a finite number, got {self.initial_rating!r}"
            )


DEFAULT_PARAMS = SPHParams()
"""The constants of the description: T = 120, GAME_MULT = 2, MAX_GAME_LENGTH = 20, start 500."""


@dataclass(frozen=True)
class Participant:
    """One player's part in a finished game.

    ``score``, ``minutes`` and ``rating`` are validated and stored as ``float``.

    Attributes:
        player_id: Hashable identifier, unique within a game (an ``int`` or a ``str``).
        team: The player's team, or ``None`` for everybody in a free-for-all.
        score: The player's score in the game (>= 0, finite).
        minutes: The player's own time in the game, in minutes (>= 0, finite).
        registered: Whether the player is registered ("ZoneStats enabled") and thus rated.
        rating: The pre-game rating, or ``None`` for an unrated player (starts at
            ``SPHParams.initial_rating``). Ignored for guests, but still validated.

    Raises:
        ValueError: If ``score`` or ``minutes`` is negative, NaN or infinite, or ``rating`` is
            NaN or infinite; the message names the ``player_id`` and the field.
        TypeError: If ``player_id`` is unhashable or a numeric field is not a real number.
    """

    player_id: PlayerId
    team: Hashable | None
    score: float
    minutes: float
    registered: bool
    rating: float | None = None

    def __post_init__(self) -> None:
        """Validate and normalise the fields."""
        _check_participant(self)
        object.__setattr__(self, "score", float(self.score))
        object.__setattr__(self, "minutes", float(self.minutes))
        if self.rating is not None:
            object.__setattr__(self, "rating", float(self.rating))


def rating_changes(
    participants: Iterable[Participant], params: SPHParams = DEFAULT_PARAMS
) -> dict[PlayerId, float]:
    """Rating change (scaled offset) of every registered participant of one game.

    The changes sum to zero up to rounding (each pair's adjustments cancel exactly; the offsets
    and the common scale are each rounded once). Only pre-game ratings are used, and the result
    does not depend on the order of ``participants``.

    Args:
        participants: Everybody who played the game, guests included.
        params: The constants of the rating system.

    Returns:
        ``{player_id: offset_i * scale}`` for every registered participant, in input order;
        guests are absent. Registered players with 0 minutes map to ``0.0``.

    Raises:
        ValueError: On invalid input; the message names the participant and the field:
            negative, NaN or infinite score or minutes, NaN or infinite rating, duplicate
            player ids, a mix of ``None`` and non-``None`` teams.
    """
    players = _validate_game(participants)
    rated = [p for p in players if p.registered]
    ratings = {p.player_id: _pre_rating(p, params) for p in rated}
    active = [p for p in rated if p.minutes > 0]
    # Exact SPH (score per minute; the factor 60 to hours is common to all and cancels).
    sph = {p.player_id: Fraction(p.score) / Fraction(p.minutes) for p in active}
    team_game = any(p.team is not None for p in players)

    contributions: dict[PlayerId, list[float]] = {p.player_id: [] for p in rated}
    for a, b in itertools.combinations(active, 2):
        if team_game and a.team == b.team:
            continue
        indiv = pair_adjustment(
            ratings[a.player_id],
            ratings[b.player_id],
            _comparison(sph[a.player_id], sph[b.player_id]),
            min(params.max_game_length, a.minutes, b.minutes),
            params,
        )
        contributions[a.player_id].append(indiv)
        contributions[b.player_id].append(-indiv)

    offsets = {pid: math.fsum(values) for pid, values in contributions.items()}
    scale = cap_scale(offsets, {p.player_id: p.minutes for p in rated}, params.game_mult)
    return {pid: offset * scale for pid, offset in offsets.items()}


def rate_game(
    participants: Iterable[Participant], params: SPHParams = DEFAULT_PARAMS
) -> dict[PlayerId, float]:
    """New rating of every registered participant after one game.

    Args:
        participants: Everybody who played the game, guests included.
        params: The constants of the rating system.

    Returns:
        ``{player_id: pre-game rating + change}`` for every registered participant, in input
        order; an unrated participant's pre-game rating is ``params.initial_rating``. Guests are
        absent.

    Raises:
        ValueError: On invalid input, as for :func:`rating_changes`.
    """
    players = list(participants)
    changes = rating_changes(players, params)
    return {
        p.player_id: _pre_rating(p, params) + changes[p.player_id] for p in players if p.registered
    }


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _check_participant(p: Participant) -> None:
    """Raise if a field of ``p`` is invalid; messages name ``p.player_id`` and the field."""
    try:
        hash(p.player_id)
    except TypeError:
        raise TypeError(
            f"participant {p.player_id!r}: field 'player_id' must be hashable"
        ) from None
    for name in ("score", "minutes"):
        value = getattr(p, name)
        if not _is_real(value):
            raise TypeError(
                f"participant {p.player_id!r}: field {name!r} must be a real number, got {value!r}"
            )
        if not math.isfinite(value) or value < 0:
            raise ValueError(
                f"participant {p.player_id!r}: field {name!r} must be finite and >= 0, "
                f"got {value!r}"
            )
    if p.rating is not None:
        if not _is_real(p.rating):
            raise TypeError(
                f"participant {p.player_id!r}: field 'rating' must be a real number or None, "
                f"got {p.rating!r}"
            )
        if not math.isfinite(p.rating):
            raise ValueError(
                f"participant {p.player_id!r}: field 'rating' must be finite or None, "
                f"got {p.rating!r}"
            )


def _validate_game(participants: Iterable[Participant]) -> list[Participant]:
    """Check every participant and the game as a whole; return the participants as a list."""
    players = list(participants)
    seen: set[PlayerId] = set()
    for p in players:
        _check_participant(p)
        if p.player_id in seen:
            raise ValueError(
                f"participant {p.player_id!r}: field 'player_id' is duplicated in the game"
            )
        seen.add(p.player_id)
    if players:
        first = players[0]
        for p in players[1:]:
            if (p.team is None) != (first.team is None):
                raise ValueError(
                    f"participant {p.player_id!r}: field 'team' is {p.team!r} but participant "
                    f"{first.player_id!r} has team {first.team!r}; a game is either a "
                    "free-for-all (every team None) or a team game (no team None)"
                )
    return players


def _pre_rating(p: Participant, params: SPHParams) -> float:
    """Pre-game rating of ``p``: its rating, or ``params.initial_rating`` if unrated."""
    return params.initial_rating if p.rating is None else float(p.rating)


def _comparison(sph_a: Fraction, sph_b: Fraction) -> float:
    """Actual outcome for ``a`` against ``b``: 1 (higher SPH), 0 (lower) or 0.5 (equal)."""
    if sph_a > sph_b:
        return 1.0
    if sph_a < sph_b:
        return 0.0
    return 0.5


def _logistic_nonneg(x: float) -> float:
    """``1 / (1 + exp(-x))`` for ``x >= 0`` (stable: ``exp(-x) <= 1``)."""
    return 1.0 / (1.0 + math.exp(-x))


def pair_adjustment(
    rating_a: float, rating_b: float, outcome_a: float, time: float, params: SPHParams
) -> float:
    """``indiv_ab``: ``a``'s time-weighted adjustment against ``b`` (``b`` gets the negation).

    The pair is evaluated from the side of the higher-rated player, whose predicted outcome
    ``1 / (1 + exp(-(R_hi - R_lo) / t))`` is a logistic of a non-negative argument; the other
    side's value is its exact negation. The result is thus exactly antisymmetric in ``a``/``b``.
    """
    if rating_a >= rating_b:
        predicted_a = _logistic_nonneg((rating_a - rating_b) / params.t)
        return (outcome_a - predicted_a) * params.game_mult * time
    predicted_b = _logistic_nonneg((rating_b - rating_a) / params.t)
    return -((1.0 - outcome_a - predicted_b) * params.game_mult * time)


def cap_scale(
    offsets: dict[PlayerId, float], minutes: dict[PlayerId, float], game_mult: float
) -> float:
    """Common scale ``min(1, minutes_h * game_mult / |offset_h|)`` (equations 5 and 6).

    ``h`` has the largest ``|offset|``; among ties the smallest scale wins. ``minutes_h`` is
    uncapped. The scale is 1 if every offset is 0.
    """
    largest = max((abs(offset) for offset in offsets.values()), default=0.0)
    if largest == 0.0:
        return 1.0
    candidates = [
        minutes[pid] * game_mult / largest
        for pid, offset in offsets.items()
        if abs(offset) == largest
    ]
    return min(1.0, *candidates)
