"""Opponent-selection policies (docs/model.md, 3.2): SimPy-free, batched, registered by name.

``POLICIES.create(name, params)`` builds one; ``policy.score(decision)`` scores the candidates and
``choose(scores, rng)`` picks the best with random tie-breaking.
"""

from lobbysim.policies.base import POLICIES, Decision, OpponentPolicy, choose
from lobbysim.policies.knowledge_gradient import KnowledgeGradient, kg_lookahead
from lobbysim.policies.simple import DrawChance, FirstComeFirstServed, PointEstimate, RandomOpponent

__all__ = [
    "POLICIES",
    "Decision",
    "DrawChance",
    "FirstComeFirstServed",
    "KnowledgeGradient",
    "OpponentPolicy",
    "PointEstimate",
    "RandomOpponent",
    "choose",
    "kg_lookahead",
]
