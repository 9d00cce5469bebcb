"""The opponent-selection protocol, its registry, and random tie-breaking.

A policy scores the candidates for one focal player (the paper's "player 0") from the current
beliefs; higher is better. Every array may carry leading batch dimensions: ``focal_mu`` has shape
``S`` and ``mu`` has shape ``S + (M,)`` for M candidates, so that one call scores a single lobby
decision (``S == ()``) or thousands of independent sample paths of the paper's study at once. The
same code therefore serves the SimPy lobby and the vectorised paper engine.

Policies are SimPy-free, hold only their parameters (frozen dataclasses, validated on creation), and
never draw random numbers: ties are broken by :func:`choose` with a generator the caller injects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from lobbysim.registry import Registry

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


@dataclass(frozen=True)
class Decision:
    """What a policy sees when it picks an opponent for a focal player.

    Attributes:
        focal_mu, focal_var: the focal player's belief, shape ``S``.
        mu, var: the candidates' beliefs, shape ``S + (M,)``.
        beta2: the performance-noise variance sigma_eps^2.
        waited: how long each candidate has waited (lobby: minutes in the queue; paper study:
            games since the candidate last played), shape ``S + (M,)``; used by ``fifo``.
        games_played: games the focal player has played so far (n), for finite-horizon rules:
            one count for every decision (the paper engine's sample paths all play their n-th
            game together), or one per focal player, shape ``S`` (a lobby's pass).
        future_mu, future_var: the beliefs of the players online now (the lobby: everyone
            waiting plus everyone in a running game), whom the focal player may meet in a
            later game; 1-D arrays of length N shared by every decision of the batch. None
            (default): not known (the paper engine; a lobby passes them only to a policy with
            the flag ``needs_online``, see :func:`needs_online`).
        future_pool: about how many candidates the focal player will have at the next pass
            (the lobby: the pass's pool size less one, at least 1); None: not known.
        future_focal: where the focal player is in ``future_mu``, shape ``S`` (-1: not there);
            None: not known.
        future_candidates: where each candidate is in ``future_mu``, shape ``S + (M,)`` (-1:
            not there, e.g. a padding slot); None: not known.
    """

    focal_mu: FloatArray
    focal_var: FloatArray
    mu: FloatArray
    var: FloatArray
    beta2: float
    waited: FloatArray | None = None
    games_played: int | IntArray = 0
    future_mu: FloatArray | None = None
    future_var: FloatArray | None = None
    future_pool: int | None = None
    future_focal: IntArray | None = None
    future_candidates: IntArray | None = None

    @property
    def n_candidates(self) -> int:
        """Return M, the number of candidates."""
        return int(self.mu.shape[-1])


@runtime_checkable
class OpponentPolicy(Protocol):
    """Scores candidate opponents for a focal player; the highest score is chosen.

    Class attributes: ``name`` (the registry key) and ``needs_variance`` (True if the policy reads
    belief variances, so a rater without variances cannot drive it). Two optional capability
    flags change what the lobby's matchmaker does with the policy: ``pairing = "uniform"`` (pair
    uniformly at random over the whole pool, bypassing the assignment and the threshold) and
    ``sees_truth = True`` (be given the true skills instead of beliefs); see
    :mod:`lobbysim.policies.baselines`. A third, ``needs_online = True``, asks for the beliefs
    of every player online in each decision (:attr:`Decision.future_mu` and the fields after
    it; :func:`needs_online`).
    """

    name: ClassVar[str]
    needs_variance: ClassVar[bool]

    def score(self, decision: Decision) -> FloatArray:
        """Return one score per candidate, shape ``S + (M,)``; higher is better."""
        ...


POLICIES: Registry[OpponentPolicy] = Registry("policy", required=("score", "needs_variance"))


def needs_online(policy: object) -> bool:
    """Return whether ``policy`` asks for the beliefs of the players online (``needs_online``).

    The lobby's matchmaker collects them only for such a policy (everyone online, at every
    pass that scores candidates, costs more than many passes themselves) and puts them into
    every :class:`Decision` of the pass: ``future_mu``, ``future_var``, ``future_pool``,
    ``future_focal`` and ``future_candidates``. A policy that sees the truth is not given them.

    Raises:
        ValueError: the flag is set to something other than True or False.
    """
    return _flag(policy, "needs_online")


def scores_match_quality(policy: object) -> bool:
    """Return whether ``policy`` declares that its score is the match quality of the pair.

    ``scores_match_quality = True`` promises that :meth:`OpponentPolicy.score` returns
    TrueSkill's match quality of the focal player's and each candidate's beliefs,
    :func:`lobbysim.skill.gaussian.match_quality` of ``(focal_mu, focal_var, mu, var, beta2)``,
    bit for bit (DrawChance, eq. 9). The lobby then decides small passes on floats without
    asking the policy (:mod:`lobbysim.sim.fast.small_pass`), with the same pairs; a user's
    policy that declares it gets that path too.

    Raises:
        ValueError: the flag is set to something other than True or False.
    """
    return _flag(policy, "scores_match_quality")


def _flag(policy: object, name: str) -> bool:
    """Return a policy's flag ``name`` (False when unset); refuse anything but True or False."""
    flag = getattr(policy, name, False)
    if not isinstance(flag, bool):
        raise ValueError(f"{name} must be True or False, got {flag!r}")
    return flag


def choose(scores: FloatArray, rng: np.random.Generator) -> IntArray:
    """Return the index of the best score along the last axis, ties broken uniformly at random.

    Every call draws one uniform per score from ``rng`` (whether or not there is a tie), so the
    stream's position never depends on the scores: policies compared on common random numbers
    stay in step.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape[-1] == 0:
        raise ValueError("choose() needs at least one candidate")
    best = scores.max(axis=-1, keepdims=True)
    keys = rng.random(scores.shape)
    keys[scores != best] = -1.0
    return np.argmax(keys, axis=-1)
