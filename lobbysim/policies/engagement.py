"""An engagement-optimised policy: pair players to keep them, not to make even games.

In the spirit of EOMM (Chen et al., "EOMM: An Engagement Optimized Matchmaking Framework", WWW
2017): the pass pairs the pool for the least total predicted churn of *every* waiting player. A
player's risk in a pair is the retention model's leave probability after a visit ending with that
game, averaged over its outcome with the driving rater's win probability: a win ends their losing
streak, a loss extends it, and the gap between the two players' rating means stands for the
game's skill gap. A player left waiting counts too, with their leave probability after another
pass in the queue without a game, so the matching (maximum cardinality, then maximum total fall
in predicted churn) leaves out whoever has least to gain from playing now, not the player most
likely to leave. The lobby's matchmaker does this (:mod:`lobbysim.sim.engagement`) for a policy
with the capability flag ``pairing = "engagement"``; it needs a player base with a retention model
(``base.retention``), whose churn it predicts, and 1v1 games.

Like EOMM it ignores the quality threshold (a pair is admissible whatever its quality) but it keeps
the rematch rule. Each player's candidates are the ``candidates`` waiting players nearest in rating
mean and, with ``reach``, a few further away (:func:`lobbysim.sim.engagement.candidate_edges`), so
a pass costs O(n log n) risk evaluations and one exact matching on that sparse graph (about 9 ms
over 200 waiting players: ``benchmarks/bench_engagement.py``).
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
        reach: also consider, for each player, a few players further away in rating order
            (rank distances growing by a quarter each beyond the nearest), so that in a large
            pool a player on a losing streak can meet an opponent they likely beat (False: the
            nearest only).
    """

    name: ClassVar[str] = "engagement"
    needs_variance: ClassVar[bool] = False
    pairing: ClassVar[str] = "engagement"
    candidates: int = 16
    reach: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.reach, bool):
            raise ValueError(f"reach must be true or false, got {self.reach!r}")
        if isinstance(self.candidates, bool) or not (
            isinstance(self.candidates, int) and self.candidates >= 1
        ):
            raise ValueError(f"candidates must be a whole number >= 1, got {self.candidates!r}")

    def score(self, decision: Decision) -> FloatArray:
        """Return equal scores (engines that do not honour the flag pick at random)."""
        return np.zeros(np.shape(decision.mu))
