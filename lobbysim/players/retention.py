"""Retention models: whether a member of a player base comes back after a visit, and how soon.

With ``base.retention`` set (:class:`lobbysim.scenario.BaseConfig`), every visit of a member ends
with a decision of the retention model, made once every game of the visit has been scored: the
member leaves the base for good with probability ``leave_probability(visit)``, and otherwise their
next visit comes after the visit model's gap *times* ``return_delay(visit)`` (> 0; 1: as usual).
``visit`` is a :class:`Visit`, what the member lived through in the visit just ended and the streak
of losses they carry. A model is a small plug-in with those two verbs; the engine checks what it
returns (a probability in [0, 1], a finite delay > 0; any real number, numpy scalars included,
but not a bool) and names the model in the error, as it does for arrival and visit models; a verb
that raises or calls ``sys.exit`` stops the run with one line naming the model and the verb.

The built-in ``experience`` model is a logistic hazard in the spirit of the engagement model of
Chen et al., "EOMM: An Engagement Optimized Matchmaking Framework" (WWW 2017), where the chance of
leaving depends on recent wins, losses and draws; here also on how uneven the games were and on
time in the queue, the things a matchmaker changes::

    x = intercept + loss_streak * streak + skill_gap * mean_gap + queue * mean_wait
        + abandoned * gave_up - win_rate * wins / games
    leave_probability = 1 / (1 + exp(-x))
    return_delay = exp(delay * (x - intercept))

``streak`` is the number of consecutive losses at the end of the visit (carried over from earlier
visits when the visit had no game), ``mean_gap`` the mean true skill gap of the visit's games (in
skill units), ``mean_wait`` the mean minutes per queueing spell, ``gave_up`` 1 if the visit ended
with the member giving up in the queue, and ``wins / games`` the share of the visit's games won (0
without games): with ``win_rate`` > 0 winning makes a member more likely to come back, so that
a matchmaker that lets strong players win more can keep them (off by default). A visit as good
as it gets (no streak, even games, no wait, no win) gives the base rate
``1 / (1 + exp(-intercept))`` and the usual return time; every coefficient is a scenario field,
and 0 switches its term off.

**Many visits at once.** The ``engagement`` policy asks for the leave probability of thousands of
visits that might happen (every candidate pair, both outcomes) at each pass. A model may add the
optional verb ``leave_probabilities(visits)``, taking :class:`Visits` (the same fields as
columns) and returning one probability per visit; the engine checks its shape and values as it
checks ``leave_probability``'s and asks a model without it one :class:`Visit` at a time
(:func:`leave_probabilities`). ``experience`` has it, computed with the same operations as its
one-visit verb (equal but for the last bit numpy's ``exp`` may differ in; tested).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from lobbysim.registry import PluginError, PluginRef, Registry
from lobbysim.validation import real_parameter


@dataclass(frozen=True)
class Visit:
    """What a member lived through in one visit.

    Attributes:
        games: games played in the visit.
        wins, losses: of those games (a draw is neither).
        streak: consecutive losses at the end of the visit, counted across visits.
        mean_gap: mean true skill gap of the visit's games (0 without games).
        mean_wait: mean minutes per queueing spell of the visit.
        gave_up: the visit ended with the member giving up in the queue.
        skill: the member's true skill.
        tenure: games the member has played in all, this visit's included.
    """

    games: int
    wins: int
    losses: int
    streak: int
    mean_gap: float
    mean_wait: float
    gave_up: bool
    skill: float
    tenure: int


@dataclass(frozen=True)
class Visits:
    """Many visits as columns, one row per visit, the fields of :class:`Visit` (arrays of one
    length: ``gave_up`` bool, ``games``/``wins``/``losses``/``streak``/``tenure`` integers, the
    rest floats)."""

    games: NDArray[np.int64]
    wins: NDArray[np.int64]
    losses: NDArray[np.int64]
    streak: NDArray[np.int64]
    mean_gap: NDArray[np.float64]
    mean_wait: NDArray[np.float64]
    gave_up: NDArray[np.bool_]
    skill: NDArray[np.float64]
    tenure: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.games.shape[0])

    def row(self, k: int) -> Visit:
        """Return visit ``k`` as a :class:`Visit` of Python numbers."""
        return Visit(**{f.name: getattr(self, f.name)[k].item() for f in fields(Visit)})


@runtime_checkable
class RetentionModel(Protocol):
    """Whether a member comes back after a visit, and how soon."""

    name: ClassVar[str]

    def leave_probability(self, visit: Visit) -> float:
        """Return the probability that the member leaves the base for good now, in [0, 1]."""
        ...

    def return_delay(self, visit: Visit) -> float:
        """Return the factor (> 0) applied to the gap before the member's next visit."""
        ...


RETENTION: Registry[RetentionModel] = Registry(
    "retention model", required=("leave_probability", "return_delay")
)


def retention_plugin(model_name: str) -> PluginRef:
    """Return the retention model named ``model_name`` as errors name it (``base.retention``):
    a verb that raises or calls ``sys.exit`` stops the run with one line naming it."""
    return PluginRef("base.retention", RETENTION.family, model_name)


def check_probability(model_name: str, value: object) -> float:
    """Return a model's leave probability as a float, or raise naming the model.

    Any real number is one (a numpy scalar such as ``np.float32`` too), a bool is not.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PluginError(
            f"retention model '{model_name}': leave_probability returned {value!r}, expected a "
            "number in [0, 1]"
        )
    p = float(value)
    if not 0.0 <= p <= 1.0:  # also refuses NaN
        raise PluginError(
            f"retention model '{model_name}': leave_probability returned {p!r}, outside [0, 1]"
        )
    return p


def leave_probabilities(
    model_name: str, model: RetentionModel, visits: Visits
) -> NDArray[np.float64]:
    """Return the model's leave probability of every visit of ``visits``, checked.

    By the model's ``leave_probabilities`` where it has one (its result must be one number in
    [0, 1] per visit), else by ``leave_probability`` one visit at a time.

    Raises:
        PluginError: the model failed (raised, or called ``sys.exit``), or returned a result
            of the wrong shape or type or a value outside [0, 1]; naming the model.
    """
    plugin = retention_plugin(model_name)
    many = getattr(model, "leave_probabilities", None)
    if many is None:
        one = model.leave_probability
        return np.array(
            [
                check_probability(
                    model_name, plugin.call("leave_probability(visit)", one, visits.row(k))
                )
                for k in range(len(visits))
            ],
            dtype=np.float64,
        )
    value = plugin.call("leave_probabilities(visits)", many, visits)
    try:
        out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != (len(visits),):
        raise PluginError(
            f"retention model '{model_name}': leave_probabilities returned "
            f"{type(value).__name__} of shape {getattr(value, 'shape', '?')}, expected "
            f"{len(visits)} numbers in [0, 1]"
        )
    bad = ~((out >= 0.0) & (out <= 1.0))  # also NaN
    if bad.any():
        raise PluginError(
            f"retention model '{model_name}': leave_probabilities returned "
            f"{float(out[bad][0])!r}, outside [0, 1]"
        )
    return out


def check_delay(model_name: str, value: object) -> float:
    """Return a model's return delay as a float, or raise naming the model (any real number
    but a bool, numpy scalars too)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PluginError(
            f"retention model '{model_name}': return_delay returned {value!r}, expected a "
            "finite number > 0"
        )
    d = float(value)
    if not (math.isfinite(d) and d > 0.0):
        raise PluginError(
            f"retention model '{model_name}': return_delay returned {d!r}, expected a finite "
            "number > 0"
        )
    return d


@RETENTION.register
@dataclass(frozen=True)
class Experience:
    """A logistic hazard of leaving after each visit, driven by the visit's experience.

    Attributes:
        intercept: the log-odds of leaving after a visit as good as it gets (default -5.3: a
            0.5% chance, about a hundred visits on average before leaving).
        loss_streak: added per loss of the streak at the visit's end.
        skill_gap: added per unit of mean true skill gap of the visit's games.
        queue: added per minute of mean queueing time.
        abandoned: added when the visit ended with the member giving up in the queue.
        delay: how much a bad visit also delays the next one: the gap is multiplied by
            ``exp(delay * (x - intercept))`` (0: not at all).
        win_rate: subtracted per unit of the visit's share of games won (0: winning counts
            only by ending a losing streak).
    """

    name: ClassVar[str] = "experience"
    intercept: float = -5.3
    loss_streak: float = 0.3
    skill_gap: float = 0.3
    queue: float = 0.2
    abandoned: float = 1.0
    delay: float = 0.5
    win_rate: float = 0.0

    def __post_init__(self) -> None:
        real_parameter("intercept", self.intercept)
        for name in ("loss_streak", "skill_gap", "queue", "abandoned", "delay", "win_rate"):
            value = real_parameter(name, getattr(self, name))
            if value < 0:
                raise ValueError(
                    f"{name} must be >= 0 (a worse experience never makes staying more likely), "
                    f"got {value!r}"
                )

    def predictor(self, visit: Visit) -> float:
        """Return the log-odds ``x`` of leaving after ``visit``."""
        return (
            self.intercept
            + self.loss_streak * visit.streak
            + self.skill_gap * visit.mean_gap
            + self.queue * visit.mean_wait
            + self.abandoned * float(visit.gave_up)
            - self.win_rate * (visit.wins / visit.games if visit.games else 0.0)
        )

    def leave_probability(self, visit: Visit) -> float:
        """Return the logistic of the predictor (computed without overflow)."""
        x = self.predictor(visit)
        if x >= 0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)

    def leave_probabilities(self, visits: Visits) -> NDArray[np.float64]:
        """Return :meth:`leave_probability` of every visit, on columns (the same operations)."""
        games = visits.games
        share = np.divide(visits.wins, games, out=np.zeros(len(visits)), where=games > 0)
        x = (
            self.intercept
            + self.loss_streak * visits.streak
            + self.skill_gap * visits.mean_gap
            + self.queue * visits.mean_wait
            + self.abandoned * visits.gave_up.astype(np.float64)
            - self.win_rate * share
        )
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def return_delay(self, visit: Visit) -> float:
        """Return ``exp(delay * (x - intercept))`` (capped at 1e6): at least 1 unless wins count."""
        return min(math.exp(min(self.delay * (self.predictor(visit) - self.intercept), 50.0)), 1e6)
