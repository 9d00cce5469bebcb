"""The reference points of a comparison: no matchmaking at all, and matchmaking on the truth.

* ``uniform_random``: the no-matchmaking baseline. It pairs uniformly at random among **all**
  waiting players: no candidate lists, no blocks of players adjacent in rating, no quality
  threshold. An assignment cannot do that (``sequential`` gives each player only its rating
  neighbours as candidates, ``global`` solves blocks of rating neighbours), so the policy says
  so with the capability flag ``pairing = "uniform"`` and the lobby's matchmaker bypasses the
  assignment: it shuffles the pool with its tie-break stream and pairs consecutive players.
  (The ``random`` policy of :mod:`lobbysim.policies.simple` stays what it is: a random pick
  among the candidates the assignment offers, under the threshold.)
* ``oracle``: matchmaking on the players' **true** skills, which no real system can see: the
  upper reference. The flag ``sees_truth = True`` makes the lobby's matchmaker build its pool
  from the true skills (variances zero) with the true match quality
  ``exp(-(s_i - s_j)^2 / (4 beta2))``, ``beta2`` the game's true performance variance; the
  threshold applies to that quality, and the oracle scores candidates as ``point_estimate``
  does, so each player gets the opponent closest in true skill.

Both flags are optional class attributes of any policy (:func:`pairing_of`, :func:`sees_truth`);
a policy without them uses the assignment on the driving rater's beliefs. Engines that do not
honour them (the paper's vectorised study feeds every policy beliefs) see ``uniform_random`` as
``random`` and ``oracle`` as ``point_estimate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lobbysim.policies.base import POLICIES, Decision, FloatArray

#: The ways a policy's players can be paired: by the scenario's assignment (the default), or
#: uniformly at random over the whole pool (the assignment and the threshold bypassed), or by the
#: least predicted churn (:mod:`lobbysim.policies.engagement`).
PAIRINGS = ("assignment", "uniform", "engagement")


def pairing_of(policy: object) -> str:
    """Return how the players of ``policy`` are paired: its ``pairing`` flag, or ``assignment``.

    Raises:
        ValueError: the flag is set to something other than one of :data:`PAIRINGS`.
    """
    pairing = getattr(policy, "pairing", "assignment")
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {', '.join(PAIRINGS)}, got {pairing!r}")
    return str(pairing)


def sees_truth(policy: object) -> bool:
    """Return whether ``policy`` is given the true skills instead of beliefs (``sees_truth``).

    Raises:
        ValueError: the flag is set to something other than True or False.
    """
    flag = getattr(policy, "sees_truth", False)
    if not isinstance(flag, bool):
        raise ValueError(f"sees_truth must be True or False, got {flag!r}")
    return flag


@POLICIES.register
@dataclass(frozen=True)
class UniformRandom:
    """Lower bound, no matchmaking: random pairs drawn from the whole pool, ratings unused.

    Its scores are equal (so where an engine does use scores, as the paper's study does, the
    tie-break picks uniformly among the candidates); the lobby pairs without them.
    """

    name: ClassVar[str] = "uniform_random"
    needs_variance: ClassVar[bool] = False
    pairing: ClassVar[str] = "uniform"

    def score(self, decision: Decision) -> FloatArray:
        """Return equal scores for every candidate."""
        return np.zeros(decision.mu.shape)


@POLICIES.register
@dataclass(frozen=True)
class Oracle:
    """Upper bound: the candidate closest in true skill, which no real system knows.

    The lobby's matchmaker puts the true skills in ``Decision.mu`` (and zeros in ``var``), so
    the score below, eq. (8) of point estimate, is the true gap.
    """

    name: ClassVar[str] = "oracle"
    needs_variance: ClassVar[bool] = False
    sees_truth: ClassVar[bool] = True

    def score(self, decision: Decision) -> FloatArray:
        """Return -|s_0 - s_j| for every candidate j (true skills, given as the means)."""
        return -np.abs(decision.mu - np.asarray(decision.focal_mu)[..., None])
