"""The skills' spread fitted to a match log.

:func:`fit_skill` gives the standard deviation of the players' skills (a scenario's
``population.skill_sd``) on the scale of the performance noise ``beta2``, :func:`skill_error`
its standard error; :func:`fixed_effects_spread` and :func:`replay_beliefs` are the two
estimators it uses. :mod:`lobbysim.calibration.fit` fits the other quantities of a scenario
(docs/calibrate.md gives the same in prose).

**Skill, 1v1 logs: fixed effects, deconvolved.** Each player's skill is a free parameter of
the results' likelihood, ``P(i beats j) = Phi((s_i - s_j) / sqrt(2 beta^2))`` (a probit:
lobbysim's performances are N(skill, beta^2)), found by Newton's method with a vague prior
N(0, 100^2) that only keeps a player who won or lost every game finite. Over the players with at
least ``min_games`` decided games, some won and some lost (a perfect record has no finite
estimate), the variance of these estimates, less their mean error variance (the inverse
information's diagonal; beyond :data:`DENSE_PLAYERS` players its diagonal's inverse) and plus
the mean of its entries among them (the estimates' common level is what the results cannot
tell), is the skills' variance. The
estimates depend on the results alone, whoever was paired with whom: a log from a running
game, whose matchmaker pairs players its raters already know to be close, is read as one from
a new game. (A prior N(0, s^2) on the skills, as the rater replay below and any marginal
likelihood assume, takes close pairings for a narrow spread: the skills of players paired by
skill are not independent draws given the pairings. On a 10-day log cut from a week-old lobby
of skill sd 3.0, the replay's predictive likelihood read 0.51 times the skills the log's players
drew, where on the same game's log from its first minute it read 1.00; fixed effects read 1.14
and 1.19 on them, a bias the refinement by simulation measures and takes off.)

**Skill, team and free-for-all logs, or too few players with enough games.** The Bayesian
rater replayed over the log in time order (1v1 and team games; a free-for-all by its pairs of
adjacent places) with the template's performance noise beta^2 and a prior N(0, s^2); s^2 is
then the law of total variance over the players with at least ``min_games`` games (the
variance of their posterior means plus their mean posterior variance), refined on 1v1 logs by
the predictive likelihood: the prior under which the results, each predicted before it was
applied, were most probable (parabolas through three replays, moved until one brackets the
peak).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import scipy.sparse as sparse
from numpy.typing import NDArray
from scipy import linalg, special
from scipy.sparse.linalg import cg

from lobbysim.calibration.matchlog import MatchLog

FloatArray = NDArray[np.float64]


def replay_beliefs(
    log: MatchLog, prior_var: float, beta2: float
) -> tuple[FloatArray, FloatArray, NDArray[np.int64], float]:
    """Replay a Gaussian rater over the log in the order games end; return every player's
    posterior mean and variance, their number of games, and the mean log-probability the
    beliefs gave each decided 1v1 result before it was applied (the predictive likelihood)."""
    seats = log.seats.sort_values(["end", "match", "side", "player"], kind="stable")
    match = seats["match"].to_numpy()
    player = seats["player"].to_numpy()
    side = seats["side"].to_numpy()
    rank = seats["rank"].to_numpy()
    mu = [0.0] * log.players
    var = [float(prior_var)] * log.players
    games = np.bincount(player, minlength=log.players).astype(np.int64)
    bounds = np.flatnonzero(np.diff(match)) + 1
    starts = np.concatenate([[0], bounds]).tolist()
    stops = np.concatenate([bounds, [len(match)]]).tolist()
    players, sides, ranks = player.tolist(), side.tolist(), rank.tolist()
    total, decided = 0.0, 0
    two_beta2 = 2.0 * beta2
    for a, b in zip(starts, stops, strict=True):
        if b - a == 2 and sides[a] != sides[a + 1]:
            i, j = players[a], players[a + 1]
            if ranks[a] == ranks[a + 1]:
                continue  # a draw: lobbysim's games have none; left out of the beliefs
            w, lo = (i, j) if ranks[a] < ranks[a + 1] else (j, i)
            c = math.sqrt(var[w] + var[lo] + two_beta2)
            total += math.log(max(0.5 * math.erfc(-(mu[w] - mu[lo]) / c / _SQRT2), 1e-300))
            decided += 1
            mu[w], var[w], mu[lo], var[lo] = _win(mu[w], var[w], mu[lo], var[lo], beta2)
            continue
        _group(players[a:b], sides[a:b], ranks[a:b], mu, var, beta2)
    mean_ll = total / decided if decided else math.nan
    return np.array(mu), np.array(var), games, mean_ll


_SQRT2 = math.sqrt(2.0)


def _win(
    mu_w: float, v_w: float, mu_l: float, v_l: float, beta2: float
) -> tuple[float, float, float, float]:
    c2 = v_w + v_l + 2 * beta2
    c = math.sqrt(c2)
    t = (mu_w - mu_l) / c
    v = _v(t)
    w = v * (v + t)
    return (
        mu_w + v_w / c * v,
        v_w * max(1 - v_w / c2 * w, 1e-12),
        mu_l - v_l / c * v,
        v_l * max(1 - v_l / c2 * w, 1e-12),
    )


def _v(t: float) -> float:
    """The truncated-Gaussian mean correction N(t) / Phi(t), stable for t << 0."""
    return float(math.sqrt(2 / math.pi) / special.erfcx(-t / math.sqrt(2)))


def _group(
    players: list[int],
    sides: list[int],
    ranks: list[int],
    mu: list[float],
    var: list[float],
    beta2: float,
) -> None:
    """Update a team game (two sides, each the mean of its members, noise beta^2 / k) or a
    free-for-all (each pair of adjacent places)."""
    by_side: dict[int, list[int]] = {}
    rank_of: dict[int, int] = {}
    for p, s, r in zip(players, sides, ranks, strict=True):
        by_side.setdefault(s, []).append(p)
        rank_of[s] = r
    order = sorted(by_side, key=lambda s: rank_of[s])
    for upper, lower in itertools.pairwise(order):
        if rank_of[upper] == rank_of[lower]:
            continue
        a, b = by_side[upper], by_side[lower]
        k = max(len(a), len(b))
        m_a = sum(mu[p] for p in a) / len(a)
        m_b = sum(mu[p] for p in b) / len(b)
        v_a = sum(var[p] for p in a) / len(a) ** 2
        v_b = sum(var[p] for p in b) / len(b) ** 2
        c2 = v_a + v_b + 2 * beta2 / k
        c = math.sqrt(c2)
        t = (m_a - m_b) / c
        v = _v(t)
        w = v * (v + t)
        for team, sign in ((a, 1.0), (b, -1.0)):
            n = len(team)
            for p in team:
                share = var[p] / n
                mu[p] += sign * share / c * v
                var[p] *= max(1 - share / n / c2 * w, 1e-12)


#: The vague prior's variance that keeps a player who won (or lost) every game finite.
FIXED_EFFECTS_PRIOR = 1.0e4
#: Up to this many players the information matrix is inverted whole; beyond, each estimate's
#: error variance is taken as the inverse of its own information (the diagonal's), which leaves
#: out what its opponents' errors add and is biased low, a bias the refinement by simulation
#: measures with the rest (an exact inverse costs n^3: 20 s at 6,000 players on one core).
DENSE_PLAYERS = 4000


def decided_pairs(log: MatchLog) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the winner and the loser of every decided 1v1 match of ``log``."""
    seats = log.seats
    size = seats.groupby("match")["rank"].transform("size").to_numpy()
    two = seats[size == 2].sort_values(["match", "side", "player"], kind="stable")
    first, second = two.iloc[0::2], two.iloc[1::2]
    ra, rb = first["rank"].to_numpy(), second["rank"].to_numpy()
    pa, pb = first["player"].to_numpy(), second["player"].to_numpy()
    keep = (ra != rb) & (first["side"].to_numpy() != second["side"].to_numpy())
    a_won = ra[keep] < rb[keep]
    winner = np.where(a_won, pa[keep], pb[keep]).astype(np.int64)
    loser = np.where(a_won, pb[keep], pa[keep]).astype(np.int64)
    return winner, loser


def fixed_effects_spread(
    log: MatchLog, beta2: float, min_games: int = 20
) -> tuple[float, float] | None:
    """Return the skills' spread by fixed effects, deconvolved (the module docstring), and its
    standard error (the sample variance's, ``sqrt(2 / (K - 1))`` times the estimates' variance
    over ``K`` players, by the delta method); None where fewer than 10 players have
    ``min_games`` decided 1v1 games."""
    winner, loser = decided_pairs(log)
    n = log.players
    games = np.bincount(np.concatenate([winner, loser]), minlength=n)
    wins = np.bincount(winner, minlength=n)
    # a player who won (or lost) every game has no finite estimate: only the vague prior holds
    # it, hundreds of points out, so it is left out of the spread (with random pairings and a
    # wide spread the best and the worst do; a running game's pairings by skill rarely allow it)
    known = np.flatnonzero((games >= min_games) & (wins > 0) & (wins < games))
    if len(known) < 10:
        return None
    sigma = math.sqrt(2.0 * beta2)
    ridge = 1.0 / FIXED_EFFECTS_PRIOR
    rows = np.concatenate([winner, loser, winner, loser])
    cols = np.concatenate([winner, loser, loser, winner])
    skill = np.zeros(n)

    def information(skill: FloatArray) -> tuple[FloatArray, Any]:
        t = (skill[winner] - skill[loser]) / sigma
        r = math.sqrt(2.0 / math.pi) / special.erfcx(-t / math.sqrt(2.0))  # phi(t) / Phi(t)
        h = r * (r + t) / sigma**2  # minus the second derivative, per game
        grad = (np.bincount(winner, r, n) - np.bincount(loser, r, n)) / sigma - ridge * skill
        matrix = sparse.coo_matrix(
            (np.concatenate([h, h, -h, -h]), (rows, cols)), shape=(n, n)
        ).tocsr() + ridge * sparse.identity(n, format="csr")
        return grad, matrix

    def solve(matrix: Any, rhs: FloatArray) -> FloatArray:
        # conjugate gradients, preconditioned by the diagonal (a player who won every game
        # has next to no information: alone, they would slow it to a crawl)
        jacobi = sparse.diags(1.0 / matrix.diagonal())
        x, _ = cg(matrix, rhs, rtol=1e-9, maxiter=5000, M=jacobi)
        return np.asarray(x)

    for _ in range(60):  # Newton's method on a concave log-likelihood
        grad, matrix = information(skill)
        step = solve(matrix, grad)
        skill += np.clip(step, -5.0, 5.0)
        if float(np.max(np.abs(step))) < 1e-6:
            break
    _, matrix = information(skill)
    if n <= DENSE_PLAYERS:
        indicator = np.zeros(n)
        indicator[known] = 1.0
        common = float(indicator @ solve(matrix, indicator)) / len(known) ** 2
        factor = linalg.cho_factor(matrix.toarray(), lower=True)
        # the inverse's diagonal: the squared columns of L^-1
        inverse_l = linalg.solve_triangular(factor[0], np.eye(n), lower=True)
        error_var = float(np.mean(np.sum(inverse_l[:, known] ** 2, axis=0)))
    else:
        error_var = float(np.mean(1.0 / matrix.diagonal()[known]))
        common = 0.0
    spread = float(np.var(skill[known]))
    variance = max(spread - error_var + common, 1e-12)
    sd = math.sqrt(variance)
    error = math.sqrt(2.0 / (len(known) - 1)) * spread / (2.0 * sd)
    return sd, error


#: The most rounds of three replays :func:`fit_skill` takes to bracket the likelihood's peak
#: (each moves at most 25%: 1.25^6 = 3.8 times the first guess).
MAX_ROUNDS = 6


def fit_skill(
    log: MatchLog, beta2: float, min_games: int = 20, start_sd: float = 2.0
) -> tuple[float, str]:
    """Return the skills' standard deviation on the scale of ``beta2`` and how it was found
    (:func:`skill_fit`, without its error)."""
    sd, method, _ = skill_fit(log, beta2, min_games, start_sd)
    return sd, method


def skill_fit(
    log: MatchLog, beta2: float, min_games: int = 20, start_sd: float = 2.0
) -> tuple[float, str, float]:
    """Return the skills' standard deviation on the scale of ``beta2``, how it was found and
    its standard error (NaN where none is known).

    On a log of mostly decided 1v1 matches with at least 10 players of ``min_games`` of them,
    fixed effects deconvolved (:func:`fixed_effects_spread`). Otherwise :func:`replay_spread`.
    """
    winner, _ = decided_pairs(log)
    if len(winner) >= 0.5 * log.matches:
        found = fixed_effects_spread(log, beta2, min_games)
        if found is not None:
            return found[0], "fixed effects", found[1]
    sd, method = replay_spread(log, beta2, min_games, start_sd)
    error = skill_error(log, beta2, sd) if method.startswith("predictive") else math.nan
    return sd, method, error


def replay_spread(
    log: MatchLog, beta2: float, min_games: int = 20, start_sd: float = 2.0
) -> tuple[float, str]:
    """Return the skills' standard deviation by the rater replay and how it was found.

    First the law of total variance: replayed with the prior N(0, start_sd^2), the variance of
    the posterior means of the players with at least ``min_games`` games plus their mean
    posterior variance, s0 (it leans towards the prior it was replayed with: a first guess).
    Then, for 1v1 logs, the predictive likelihood (each result's probability under the beliefs
    before it) at 0.9 c, c and 1.1 c from c = s0, and the vertex of the parabola through the
    three on log s: the prior the results themselves favour. Where the vertex lies beyond
    [0.8 c, 1.25 c] (or the parabola opens upwards), the search moves c that far towards it
    and looks again, at most :data:`MAX_ROUNDS` times. (It used to stop at the bound: a log of
    skill sd 3 read 2.69, 1.25 s0, as the peak was at 3.1.)
    """
    mu, var, games, _ = replay_beliefs(log, start_sd * start_sd, beta2)
    known = games >= min_games
    if known.sum() < 10:
        known = games >= 1
    s0 = math.sqrt(float(np.var(mu[known]) + np.mean(var[known])))
    seen: dict[float, float] = {}

    def likelihood(s: float) -> float:
        if s not in seen:
            seen[s] = replay_beliefs(log, s * s, beta2)[3]
        return seen[s]

    centre = s0
    for _ in range(MAX_ROUNDS):
        points = [0.9 * centre, centre, 1.1 * centre]
        values = [likelihood(s) for s in points]
        if not all(math.isfinite(v) for v in values):
            return s0, "law of total variance"
        a, b, _ = np.polyfit(np.log(points), values, 2)
        lo, hi = math.log(0.8 * centre), math.log(1.25 * centre)
        if a < 0 and lo < -b / (2 * a) < hi:  # the vertex within this round's reach
            return float(np.exp(-b / (2 * a))), "predictive likelihood"
        # the likelihood still rises towards an end: move the centre there and look again
        if a < 0:
            centre = float(np.exp(np.clip(-b / (2 * a), lo, hi)))
        else:
            centre = points[int(np.argmax(values))] * (1.25 if values[2] > values[0] else 0.8)
    return centre, "predictive likelihood (search ended at its last round)"


def skill_error(log: MatchLog, beta2: float, sd: float) -> float:
    """Return the standard error of the skill spread ``sd`` that :func:`fit_skill` found by the
    predictive likelihood: from the curvature of the log-likelihood of the decided 1v1 results
    in log s (a parabola through 0.95 sd, sd and 1.05 sd; ``se(log s) = 1 / sqrt(-L'')``, the
    observed information), times ``sd``; NaN where it cannot be told (no decided 1v1 result,
    or a likelihood that does not curve down)."""
    seats = log.seats
    sizes = seats.groupby("match")["rank"].agg(["size", "nunique"])
    decided = int(((sizes["size"] == 2) & (sizes["nunique"] == 2)).sum())
    if decided == 0 or not (math.isfinite(sd) and sd > 0):
        return math.nan
    points = [0.95 * sd, sd, 1.05 * sd]
    values = [replay_beliefs(log, s * s, beta2)[3] * decided for s in points]
    if not all(math.isfinite(v) for v in values):
        return math.nan
    a = float(np.polyfit(np.log(points), values, 2)[0])
    return sd / math.sqrt(-2.0 * a) if a < 0 else math.nan
