"""The parts of a matchmaking pass that need no lobby: the policy in force, the pairs it gets.

* :class:`InForce`: a policy with its capability flags (:mod:`lobbysim.policies.baselines`) read
  and checked once, and the defaults of the switch (:func:`switch_time`) and of the rematch rule
  (:func:`rematch_games`) resolved from the scenario.
* :func:`true_quality`: the match quality a policy that sees the truth is given.
* :func:`uniform_pairs`: the pairs of ``pairing = "uniform"``: consecutive players of a shuffle
  of the whole pool, no assignment and no threshold.
* :func:`check_pairs`: what an assignment returned, checked before any game starts;
  :func:`check_quality`: the match qualities of games about to start.
* :class:`PoolQuality`: the driving rater's match quality of pool indices, remembered in a small
  pass; :func:`raised_in`: whether a failure came from inside a plug-in's verb.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from lobbysim.policies import OpponentPolicy, needs_online, pairing_of, sees_truth
from lobbysim.policies.assignment import QualityFn
from lobbysim.policies.teams import TeamScore, TeamScoring, team_quality, team_score_of
from lobbysim.registry import PluginError, PluginRef
from lobbysim.scenario import MatchmakerConfig
from lobbysim.sim.entities import FloatArray, IdArray

IntArray = NDArray[np.intp]


class InForce(NamedTuple):
    """A policy the matchmaker may use, with its name and its capability flags."""

    policy: OpponentPolicy
    name: str
    uniform: bool  # pairing = "uniform": no assignment, no threshold, no rematch rule
    truth: bool  # sees_truth: the pool holds true skills and the true match quality
    engagement: bool = False  # pairing = "engagement": least predicted churn, no threshold
    online: bool = False  # needs_online: the pool carries the beliefs of everyone online
    field: str = "matchmaker.policy"  # the scenario field naming it, for messages
    team_score: TeamScore = team_quality  # how it scores a two-team game (team_score_of)

    def team_scoring(self, var: FloatArray, beta2: float) -> TeamScoring:
        """Return how a pass of this policy scores two-team games, a failure inside a plug-in's
        ``score_teams`` named (one line)."""
        score = self.team_score
        if str(getattr(score, "__module__", "")).startswith("lobbysim."):  # a built-in's
            return TeamScoring(var, beta2, score)
        ref = PluginRef(self.field, "policy", self.name)

        def named(gap: FloatArray, var_sum: FloatArray, players: int, b2: float) -> FloatArray:
            try:
                values = np.asarray(score(gap, var_sum, players, b2), dtype=np.float64)
            except (Exception, SystemExit) as exc:
                raise ref.failure("score_teams(gap, var_sum, players, beta2)", exc) from None
            if values.shape != np.shape(gap) or not np.all((values >= 0) & (values <= 1)):
                raise PluginError(
                    f"{self.field}: '{self.name}': score_teams returned {values!r}; expected "
                    f"one score in [0, 1] per game, shape {np.shape(gap)}"
                )
            return values

        return TeamScoring(var, beta2, named)


def in_force(policy: OpponentPolicy, name: str, field_name: str) -> InForce:
    """Return ``policy`` with its flags read and checked (a bad flag names ``field_name``)."""
    try:
        pairing = pairing_of(policy)
        return InForce(
            policy,
            name,
            pairing == "uniform",
            sees_truth(policy),
            pairing == "engagement",
            needs_online(policy),
            field_name,
            team_score_of(policy),
        )
    except ValueError as exc:
        raise PluginError(f"{field_name}: '{name}': {exc}") from None


def rematch_games(settings: MatchmakerConfig, has_base: bool) -> int:
    """Return ``settings.rematch_games``, its default resolved: 1 with a player base, else 0."""
    if settings.rematch_games is not None:
        return settings.rematch_games
    return 1 if has_base else 0


def switch_time(settings: MatchmakerConfig, warmup: float) -> float:
    """Return when the policy switches: ``switch_at``, by default the warm-up's end; never
    (infinity) without a status quo."""
    if settings.status_quo is None:
        return math.inf
    return warmup if settings.switch_at is None else settings.switch_at


def true_quality(skill: FloatArray, beta2: float) -> QualityFn:
    """Return the true match quality of pool indices: TrueSkill's quality with no uncertainty,
    ``exp(-(s_i - s_j)^2 / (4 beta2))`` for true skills ``skill`` and the game's ``beta2``."""

    def pool_quality(i: IntArray, j: IntArray) -> FloatArray:
        gap = skill[i] - skill[j]
        return np.exp(-(gap * gap) / (4.0 * beta2))

    return pool_quality


def uniform_pairs(
    n: int,
    rng: np.random.Generator,
    focal: NDArray[np.bool_] | None,
    allowed: QualityFn | None = None,
) -> IntArray:
    """Return uniformly random pairs of a pool of ``n``: consecutive players of a shuffle.

    With focal players (``focal``), each focal player in the shuffled order takes the first free
    player of that order: uniform among those still free, since the shuffle's order of the rest
    is. With ``allowed`` (a quality that is ``-inf`` for a pair that may not meet: latency
    limits), each player in the shuffled order takes the first free later player it may meet,
    which is the consecutive pairing where every pair may meet. Every call draws one permutation
    of ``n`` from ``rng``.
    """
    order = rng.permutation(n)
    if allowed is not None and focal is None and n >= 2:
        return _allowed_pairs(order, allowed)
    if focal is None:
        return order[: n - n % 2].reshape(-1, 2).astype(np.intp)
    free = np.ones(n, dtype=bool)
    out: list[tuple[int, int]] = []
    first = 0  # the first free position of the shuffled order never moves back
    for i in order.tolist():
        if not (free[i] and focal[i]):
            continue
        free[i] = False
        while first < n and not free[order[first]]:
            first += 1
        if first == n:
            break
        j = int(order[first])
        free[j] = False
        out.append((i, j))
    return np.array(out, dtype=np.intp).reshape(-1, 2)


def _allowed_pairs(order: IntArray, allowed: QualityFn) -> IntArray:
    """:func:`uniform_pairs` where only some pairs may meet (see there)."""
    n = len(order)
    i, j = np.triu_indices(n, k=1)  # positions in the shuffled order
    ok = np.isfinite(allowed(order[i].astype(np.intp), order[j].astype(np.intp)))
    may = np.zeros((n, n), dtype=bool)
    may[i[ok], j[ok]] = True
    free = np.ones(n, dtype=bool)
    out: list[tuple[int, int]] = []
    for a in range(n):
        if not free[a]:
            continue
        later = np.flatnonzero(may[a] & free)
        if later.size:
            b = int(later[0])
            free[a] = free[b] = False
            out.append((int(order[a]), int(order[b])))
    return np.array(out, dtype=np.intp).reshape(-1, 2)


def check_quality(driver_name: str, values: list[float]) -> None:
    """Check the match qualities of games about to start (they go into the records): each must
    lie in [0, 1], or the run stops with a :class:`~lobbysim.registry.PluginError` naming the
    driving rater ``driver_name``, whose quality it is."""
    if not all(0.0 <= q <= 1.0 for q in values):
        bad = next(q for q in values if not 0.0 <= q <= 1.0)
        raise PluginError(
            f"raters.driver: '{driver_name}' returned the match quality {bad!r}, outside [0, 1]"
        )


def check_pairs(name: str, pairs: object, n: int) -> IntArray:
    """Check what an assignment returned for a pool of ``n`` players.

    Args:
        name: the assignment's name, used in the error message.
        pairs: its return value.
        n: the number of waiting players in the pool.

    Returns:
        The pairs as an ``(n_pairs, 2)`` array of ``intp`` pool indices.

    Raises:
        PluginError: naming the assignment and the problem: not a numpy array, not of shape
            ``(n_pairs, 2)``, not integers, an index outside the pool, a player paired with
            themself, or a player in two pairs.
    """
    said = f"matchmaker.assignment: '{name}' returned"
    if not isinstance(pairs, np.ndarray):
        raise PluginError(f"{said} {type(pairs).__name__}, not an (n, 2) array of pool indices")
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise PluginError(f"{said} an array of shape {pairs.shape}, not (n, 2)")
    if not np.issubdtype(pairs.dtype, np.integer):
        raise PluginError(f"{said} an array of {pairs.dtype}, not of integer pool indices")
    flat = pairs.ravel().tolist()
    if not flat or (min(flat) >= 0 and max(flat) < n and len(set(flat)) == len(flat)):
        return pairs.astype(np.intp, copy=False)
    # something is wrong: say what, for the first pair where it shows
    for row, (a, b) in enumerate(pairs.tolist()):
        if not (0 <= a < n and 0 <= b < n):
            raise PluginError(
                f"{said} the pair {[a, b]} (row {row}) with an index outside the pool of {n} "
                f"waiting players (0..{n - 1})"
            )
    seen: dict[int, int] = {}
    for row, (a, b) in enumerate(pairs.tolist()):
        if a == b:
            raise PluginError(
                f"{said} the pair {[a, b]} (row {row}): a player paired with themself"
            )
        for index in (a, b):
            if index in seen:
                raise PluginError(
                    f"{said} the pool index {index} in two pairs (rows {seen[index]} and {row})"
                )
            seen[index] = row
    raise AssertionError("unreachable: the pairs passed every check")  # pragma: no cover


def check_not_barred(
    name: str, pairs: IntArray, masked: QualityFn, latency_limits: bool = False
) -> None:
    """Refuse a pair the rematch rule or the latency limits bar (an assignment ``name`` that
    ignores the threshold).

    Raises:
        PluginError: the first barred pair, naming the assignment.
    """
    barred = np.isneginf(masked(pairs[:, 0], pairs[:, 1]))
    if barred.any():
        a, b = pairs[int(np.argmax(barred))].tolist()
        why = "matchmaker.rematch_games, matchmaker.rematch_minutes"
        if latency_limits:
            why += ", or no data centre within matchmaker.max_latency_ms, max_delta_ping_ms"
        raise PluginError(
            f"matchmaker.assignment: '{name}' returned the pair {[a, b]} of players who may not "
            f"meet yet ({why}): a pair must clear the quality threshold"
        )


REMEMBERED_POOL = 16  # a pass over at most this many players remembers each pair's quality


class PoolQuality:
    """The driving rater's match quality of pool indices, for one pass.

    In a small pass (at most :data:`REMEMBERED_POOL` players, as passes on every arrival are)
    every pair's quality is remembered once asked for: the matchmaker asks again for the pairs
    the assignment chose among those it judged, and gets the same values without asking the
    rater twice (a rater's quality is that of each pair, whatever else is asked with it).
    """

    __slots__ = ("_ids", "_known", "_quality", "_rater")

    def __init__(
        self,
        quality: Callable[[IdArray, IdArray], FloatArray],
        ids: IdArray,
        rater: PluginRef | None = None,
    ) -> None:
        self._quality = quality
        self._ids = ids
        #: The rater as errors name it (a quality that raises stops the run on one line).
        self._rater = rater if rater is not None else PluginRef("raters.driver", "rater", "?")
        self._known: dict[tuple[int, int], float] | None = (
            {} if ids.size <= REMEMBERED_POOL else None
        )

    def __call__(self, i: IntArray, j: IntArray) -> FloatArray:
        ids, known = self._ids, self._known
        if known is None or i.ndim != 1:
            ids_a, ids_b = ids[i], ids[j]
            try:
                return self._quality(ids_a, ids_b)
            except (Exception, SystemExit) as exc:  # a rater's own bug or exit: one line
                raise self._rater.failure("quality(ids_a, ids_b)", exc) from None
        pairs = list(zip(i.tolist(), j.tolist(), strict=True))
        if all(pair in known for pair in pairs):
            return np.array([known[pair] for pair in pairs], dtype=np.float64)
        ids_a, ids_b = ids[i], ids[j]
        try:
            values = self._quality(ids_a, ids_b)
        except (Exception, SystemExit) as exc:
            raise self._rater.failure("quality(ids_a, ids_b)", exc) from None
        known.update(zip(pairs, values.tolist(), strict=True))
        return values


def raised_in(exc: BaseException, plugin: object, verb: str) -> bool:
    """Return whether ``exc`` was raised inside ``plugin``'s method ``verb`` (a frame of its
    traceback runs that method on that object)."""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == verb and frame.f_locals.get("self") is plugin:
            return True
        tb = tb.tb_next
    return False


def player_of_rank(ids: IdArray, means: FloatArray, rank: int) -> int:
    """Return the present player (of ``ids``) whose driving-rater mean (``means``) has this
    rank (1 = highest, -1 = lowest): the focal player of ``matchmaker.focal_rank``."""
    if not 1 <= abs(rank) <= ids.size:
        raise PluginError(
            f"matchmaker.focal_rank: {rank} is out of range: {ids.size} players were present "
            "at the first matchmaking pass"
        )
    order = ids[np.argsort(-means, kind="stable")]
    return int(order[rank - 1] if rank > 0 else order[rank])


def online_beliefs(
    rater: PluginRef, driver: Any, playing: list[int], mu: FloatArray, var: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Return the driving rater's beliefs of every player online now: the pool's (``mu``,
    ``var``, in pool order) first, then those of ``playing``, everyone in a running game
    (present but not queueing), in the order they came (for a policy that ``needs_online``;
    ``rater`` names the driving rater ``driver`` in a failure)."""
    if not playing:
        return mu.copy(), var.copy()
    others = np.array(playing, dtype=np.int64)
    variances = rater.call("variances(ids)", driver.variances, others)
    other_var = np.zeros(others.size) if variances is None else variances
    return (
        np.concatenate([mu, rater.call("means(ids)", driver.means, others)]),
        np.concatenate([var, other_var]),
    )
