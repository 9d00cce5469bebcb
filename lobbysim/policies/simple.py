"""The myopic policies of the paper (point estimate, DrawChance) and the two baselines.

* ``point_estimate`` (eq. 8): the candidate whose mean is nearest the focal player's; a team
  game scored by its teams' rating sums alone (:func:`~lobbysim.policies.teams.point_team_quality`).
* ``draw_chance`` (eq. 9): the highest TrueSkill match quality q~, so uncertainty counts; a team
  game scored by TrueSkill's two-team quality of its split
  (:func:`~lobbysim.policies.teams.team_quality`).
* ``random``: every candidate ties, so :func:`lobbysim.policies.choose` picks uniformly.
* ``fifo``: first come, first served: the candidate who has waited longest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lobbysim.policies.base import POLICIES, Decision, FloatArray
from lobbysim.policies.teams import point_team_quality, team_quality
from lobbysim.skill.gaussian import match_quality


@POLICIES.register
@dataclass(frozen=True)
class PointEstimate:
    """The candidate nearest in rating mean (eq. 8: argmin_j |mu_0 - mu_j|), blind to the spread."""

    name: ClassVar[str] = "point_estimate"
    needs_variance: ClassVar[bool] = False

    def score(self, decision: Decision) -> FloatArray:
        """Return -|mu_0 - mu_j| for every candidate j."""
        return -np.abs(decision.mu - np.asarray(decision.focal_mu)[..., None])

    def score_teams(
        self, gap: FloatArray, var_sum: FloatArray, players: int, beta2: float
    ) -> FloatArray:
        """Return a two-team game's quality with the variances taken as 0 (blind to them)."""
        return point_team_quality(gap, var_sum, players, beta2)


@POLICIES.register
@dataclass(frozen=True)
class DrawChance:
    """The candidate of highest predicted draw chance (eq. 9: TrueSkill's match quality q~)."""

    name: ClassVar[str] = "draw_chance"
    needs_variance: ClassVar[bool] = True
    #: Its score of a candidate is TrueSkill's match quality of the two beliefs
    #: (:func:`lobbysim.policies.base.scores_match_quality`): the lobby may decide its small
    #: passes on floats. A subclass with its own ``score`` loses it unless it declares it again.
    scores_match_quality: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "score" in vars(cls) and "scores_match_quality" not in vars(cls):
            cls.scores_match_quality = False

    def score(self, decision: Decision) -> FloatArray:
        """Return q~_0j for every candidate j."""
        d = decision
        focal_mu = np.asarray(d.focal_mu)[..., None]
        focal_var = np.asarray(d.focal_var)[..., None]
        return match_quality(focal_mu, focal_var, d.mu, d.var, d.beta2)

    def score_teams(
        self, gap: FloatArray, var_sum: FloatArray, players: int, beta2: float
    ) -> FloatArray:
        """Return a two-team game's draw chance: TrueSkill's two-team match quality."""
        return team_quality(gap, var_sum, players, beta2)


@POLICIES.register
@dataclass(frozen=True)
class RandomOpponent:
    """Baseline in the matchmaker's loop: a waiting player takes one of its candidates at random."""

    name: ClassVar[str] = "random"
    needs_variance: ClassVar[bool] = False

    def score(self, decision: Decision) -> FloatArray:
        """Return equal scores, so the tie-break draws the candidate at random."""
        return np.zeros(decision.mu.shape)


@POLICIES.register
@dataclass(frozen=True)
class FirstComeFirstServed:
    """Baseline: the candidate who has waited longest (equal waits are tie-broken at random)."""

    name: ClassVar[str] = "fifo"
    needs_variance: ClassVar[bool] = False

    def score(self, decision: Decision) -> FloatArray:
        """Return each candidate's waiting time."""
        if decision.waited is None:
            raise ValueError("policy 'fifo' needs the candidates' waiting times (Decision.waited)")
        return np.asarray(decision.waited, dtype=np.float64)
