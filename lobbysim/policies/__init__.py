"""Opponent-selection policies (docs/model.md, 3.2): SimPy-free, batched, registered by name.

``POLICIES.create(name, params)`` builds one; ``policy.score(decision)`` scores the candidates and
``choose(scores, rng)`` picks the best with random tie-breaking. The reference points
``uniform_random`` (no matchmaking) and ``oracle`` (true skill) carry capability flags the lobby's
matchmaker honours (:mod:`lobbysim.policies.baselines`); so does ``engagement``, which pairs for
the least predicted churn (:mod:`lobbysim.policies.engagement`). ``lobby_knowledge_gradient``
looks ahead over the players online (:mod:`lobbysim.policies.lobby_knowledge_gradient`).
"""

from lobbysim.policies.base import (
    POLICIES,
    Decision,
    OpponentPolicy,
    choose,
    needs_online,
    scores_match_quality,
)
from lobbysim.policies.knowledge_gradient import KnowledgeGradient, kg_lookahead
from lobbysim.policies.simple import DrawChance, FirstComeFirstServed, PointEstimate, RandomOpponent

# isort: split
# the reference points are registered (and listed) after the paper's policies and baselines
from lobbysim.policies.baselines import Oracle, UniformRandom, pairing_of, sees_truth
from lobbysim.policies.engagement import Engagement
from lobbysim.policies.lobby_knowledge_gradient import LobbyKnowledgeGradient

__all__ = [
    "POLICIES",
    "Decision",
    "DrawChance",
    "Engagement",
    "FirstComeFirstServed",
    "KnowledgeGradient",
    "LobbyKnowledgeGradient",
    "OpponentPolicy",
    "Oracle",
    "PointEstimate",
    "RandomOpponent",
    "UniformRandom",
    "choose",
    "kg_lookahead",
    "needs_online",
    "pairing_of",
    "scores_match_quality",
    "sees_truth",
]
