"""An engagement-optimised policy: pair players to keep them, not to make even games.

In the spirit of EOMM (Chen et al., "EOMM: An Engagement Optimized Matchmaking Framework", WWW
2017): each possible pair of waiting players gets the predicted churn risk of both players if
they played each other, and the pass pairs the pool by a maximum-weight matching that pairs as
many players as it can with the least total risk. A player's risk for a pair is the retention
model's leave probability after a visit ending with that game, averaged over its outcome with the
driving rater's win probability: a win ends their losing streak, a loss extends it, and the gap
between the two players' rating means stands for the game's skill gap. The lobby's matchmaker does
this (:mod:`lobbysim.sim.engagement`) for a policy with the capability flag
``pairing = "engagement"``; it needs a player base with a retention model (``base.retention``),
whose churn it predicts, and 1v1 games.

Like EOMM it ignores the quality threshold (a pair is admissible whatever its quality) but it keeps
the rematch rule. Each player's candidates are the ``candidates`` waiting players nearest in rating
mean, so a pass costs O(n * candidates) risk evaluations and a sparse matching.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lobbysim.policies.base import POLICIES, Decision, FloatArray


@POLICIES.register
@dataclass(frozen=True)
class Engagement:
    """Pairs that minimise the predicted churn of the pool (maximum-weight matching).

    Attributes:
        candidates: the waiting players nearest in rating mean considered as each player's
            opponents (>= 1).
    """

    name: ClassVar[str] = "engagement"
    needs_variance: ClassVar[bool] = False
    pairing: ClassVar[str] = "engagement"
    candidates: int = 16

    def __post_init__(self) -> None:
        if isinstance(self.candidates, bool) or not (
            isinstance(self.candidates, int) and self.candidates >= 1
        ):
            raise ValueError(f"candidates must be a whole number >= 1, got {self.candidates!r}")

    def score(self, decision: Decision) -> FloatArray:
        """Return equal scores (engines that do not honour the flag pick at random)."""
        return np.zeros(np.shape(decision.mu))
