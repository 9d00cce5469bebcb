"""Benchmark: the paper study's knowledge gradient against a plain numpy implementation, one worker.

The lobby speed issue asks how much lobbysim's vectorised KG engine gains over what a careful user
would write with numpy and ``scipy.stats.norm``. Both run the paper's study (Section 4) with the
KG policy only (eq. 13, gamma = 0.99), one position of player 0 and ``--paths`` sample paths of
N = 500 games, in this process on ONE core:

* lobbysim: :func:`lobbysim.paper.run_study` with ``jobs=1`` (blocks of 250 paths, the pruned
  look-ahead of :mod:`lobbysim.policies.knowledge_gradient`);
* plain: the straightforward translation written below. For every path and every candidate j it
  computes the win probability and the two post-game beliefs (Proposition 1 and the TrueSkill
  update with ``norm.pdf / norm.cdf``), then, for each outcome, the draw density of eq. (5)
  between player 0's new belief and every candidate k (j's own belief replaced by its updated
  one) as one (paths, M, M) array, and its max over k; the study loop advances all paths of a
  block one game at a time. The density is written out with ``np.exp``: ``norm.pdf`` on those
  arrays would make the plain version nearly twice as slow, so the stronger reference is used.

The plain version draws the same priors, truths, performance noise and tie-break uniforms (the
same seed layout as :mod:`lobbysim.paper.study`), so it must pick the same opponents: the
benchmark checks that the per-game metrics (means and standard errors over paths) and every
path's window averages agree to 1e-9 (one other opponent in one game moves that path's average
skill difference by about 1e-2), and fails otherwise. Each repeat times both, alternating
which goes first; the figures are medians. Target (lobby speed issue): plain / lobbysim >= 4.

Wall-clock time is the measure. It is printed split into user and system CPU time, because much of
the plain version's is system time: glibc's malloc hands the freed (paths, M, M) temporaries (about
5 MB each) back to the kernel and faults them in again on the next call. That is a real cost of the
straightforward code, but an allocator setting removes it (e.g. MALLOC_TOP_PAD_=100000000), so the
ratio in user CPU time alone is printed as well.

    python benchmarks/bench_kg_numpy.py [--paths 1000] [--case top] [--equal-priors]
        [--seed 2011] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import sys
import time

import numpy as np
from scipy.stats import norm

from lobbysim.paper import CASES, METRICS, PaperResult, PaperStudy, run_study

TARGET_RATIO = 4.0  # the lobby speed issue: lobbysim's KG at least 4x the plain numpy one
TOLERANCE = 1e-9  # agreement of the two implementations' metrics
GAMMA = 0.99  # KG's default discount factor (the paper's tuned value)


def plain_priors(study: PaperStudy, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (policy means, truth means, variances), player 0 first, as the engine draws them."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    means = rng.normal(0.0, math.sqrt(study.prior_mean_variance), study.n_players)
    variances = rng.uniform(*study.prior_variance_range, study.n_players)
    ranking = np.argsort(-means, kind="stable")
    rank = {"top": 0, "bottom": study.n_players - 1, "middle": study.middle_rank - 1}[study.case]
    focal = ranking[rank]
    order = [focal] + [i for i in range(study.n_players) if i != focal]
    truth_means = means[order]
    policy_means = np.zeros(study.n_players) if study.equal_priors else truth_means.copy()
    return policy_means, truth_means, variances[order]


def plain_update(
    mu_w: np.ndarray, var_w: np.ndarray, mu_l: np.ndarray, var_l: np.ndarray, beta2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return the beliefs of winner w and loser l after the game (TrueSkill, no draw margin)."""
    c2 = var_w + var_l + 2 * beta2
    c = np.sqrt(c2)
    t = (mu_w - mu_l) / c
    v = norm.pdf(t) / norm.cdf(t)
    w = v * (v + t)
    return (
        mu_w + var_w / c * v,
        var_w * (1 - var_w / c2 * w),
        mu_l - var_l / c * v,
        var_l * (1 - var_l / c2 * w),
    )


def plain_density(d: np.ndarray, c2: np.ndarray) -> np.ndarray:
    """Return the draw-probability density of eq. (5), phi(d / c) / c with c^2 = ``c2``."""
    return np.exp(-(d**2) / (2 * c2)) / np.sqrt(2 * np.pi * c2)


def plain_kg_scores(
    mu0: np.ndarray, v0: np.ndarray, mu: np.ndarray, var: np.ndarray, beta2: float, weight: float
) -> np.ndarray:
    """Return q_0j + W * F_j for every path (rows) and candidate j (columns), eq. (12)/(13).

    ``mu0``/``v0`` are player 0's beliefs, shape (P,); ``mu``/``var`` the candidates', (P, M).
    """
    mu0 = mu0[:, None]
    v0 = v0[:, None]
    c2 = v0 + var + 2 * beta2
    q_now = plain_density(mu0 - mu, c2)
    p_win = norm.cdf((mu0 - mu) / np.sqrt(c2))  # Proposition 1
    # k^w: player 0 beats j; k^l: j beats player 0. Both players' beliefs change.
    mu0_w, v0_w, muj_l, varj_l = plain_update(mu0, v0, mu, var, beta2)
    muj_w, varj_w, mu0_l, v0_l = plain_update(mu, var, mu0, v0, beta2)
    f = p_win * plain_best_q(mu0_w, v0_w, muj_l, varj_l, mu, var, beta2) + (
        1 - p_win
    ) * plain_best_q(mu0_l, v0_l, muj_w, varj_w, mu, var, beta2)
    return q_now + weight * f


def plain_best_q(
    mu0_new: np.ndarray,
    v0_new: np.ndarray,
    muj_new: np.ndarray,
    varj_new: np.ndarray,
    mu: np.ndarray,
    var: np.ndarray,
    beta2: float,
) -> np.ndarray:
    """Return max_k q_0k after the game against each j (rows: paths, columns: j).

    ``mu0_new``/``v0_new`` are player 0's beliefs and ``muj_new``/``varj_new`` j's after the game,
    (P, M); every other candidate k keeps its belief ``mu``/``var``.
    """
    m = mu.shape[1]
    own = np.eye(m, dtype=bool)  # [j, k]: k is the candidate j just played
    # (P, j, k): every candidate k's belief after the game against j (only j's changed)
    mu_k = np.where(own, muj_new[:, :, None], mu[:, None, :])
    var_k = np.where(own, varj_new[:, :, None], var[:, None, :])
    q = plain_density(mu0_new[:, :, None] - mu_k, v0_new[:, :, None] + var_k + 2 * beta2)
    return q.max(axis=2)


def plain_choose(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return each row's best column, ties broken by one uniform per score (as lobbysim does)."""
    keys = rng.random(scores.shape)
    keys[scores != scores.max(axis=1, keepdims=True)] = -1.0
    return keys.argmax(axis=1)


def plain_block(study: PaperStudy, seed: int, block: int, n_paths: int) -> np.ndarray:
    """Play one block of paths under KG; return the metrics, shape (metrics, N, paths)."""
    policy_means, truth_means, variances = plain_priors(study, seed)
    streams = np.random.SeedSequence(seed, spawn_key=(1, block)).spawn(3)
    truth_rng, noise_rng, tie_rng = (np.random.default_rng(s) for s in streams)
    m = study.n_players
    skills = truth_means + np.sqrt(variances) * truth_rng.standard_normal((n_paths, m))
    noise = noise_rng.standard_normal((study.n_games, n_paths, 2))
    beta = math.sqrt(study.beta2)
    weight = GAMMA / (1 - GAMMA)

    mu = np.tile(policy_means, (n_paths, 1))
    var = np.tile(variances, (n_paths, 1))
    rows = np.arange(n_paths)
    s0 = skills[:, 0]
    metrics = np.empty((len(METRICS), study.n_games, n_paths))
    for n in range(study.n_games):
        scores = plain_kg_scores(mu[:, 0], var[:, 0], mu[:, 1:], var[:, 1:], study.beta2, weight)
        opp = plain_choose(scores, tie_rng) + 1
        s_opp = skills[rows, opp]
        win = s0 + beta * noise[n, :, 0] > s_opp + beta * noise[n, :, 1]

        mu0, v0, mu_j, v_j = mu[:, 0], var[:, 0], mu[rows, opp], var[rows, opp]
        mu_w, v_w, mu_l, v_l = plain_update(
            np.where(win, mu0, mu_j),
            np.where(win, v0, v_j),
            np.where(win, mu_j, mu0),
            np.where(win, v_j, v0),
            study.beta2,
        )
        mu[:, 0] = np.where(win, mu_w, mu_l)
        var[:, 0] = np.where(win, v_w, v_l)
        mu[rows, opp] = np.where(win, mu_l, mu_w)
        var[rows, opp] = np.where(win, v_l, v_w)

        metrics[0, n] = plain_density(s0 - s_opp, 2 * study.beta2)  # eq. (14)
        metrics[1, n] = (mu[:, 0] - s0) ** 2
        metrics[2, n] = s0 - s_opp
        metrics[3, n] = win
    return metrics


def plain_study(study: PaperStudy, paths: int, seed: int) -> dict[str, np.ndarray]:
    """Run all blocks; return per-game means and standard errors and per-path window means."""
    blocks = [
        plain_block(study, seed, block, min(study.block_paths, paths - start))
        for block, start in enumerate(range(0, paths, study.block_paths))
    ]
    metrics = np.concatenate(blocks, axis=2)
    windows = [metrics[:, first - 1 : last].mean(axis=1).T for first, last in study.windows]
    return {
        "mean": metrics.mean(axis=2).T,
        "se": metrics.std(axis=2, ddof=1).T / math.sqrt(paths),
        "windows": np.stack(windows, axis=1),
    }


def lobbysim_study(study: PaperStudy, paths: int, seed: int) -> PaperResult:
    """Run lobbysim's engine with the KG policy only, in this process."""
    return run_study(study, ["knowledge_gradient"], paths=paths, seed=seed, jobs=1)


def disagreement(result: PaperResult, plain: dict[str, np.ndarray]) -> dict[str, float]:
    """Return the largest absolute differences between the two implementations' metrics."""
    per_game = result.per_game
    return {
        "per-game means": float(np.max(np.abs(per_game[list(METRICS)].to_numpy() - plain["mean"]))),
        "per-game SEs": float(
            np.max(np.abs(per_game[[f"{m}_se" for m in METRICS]].to_numpy() - plain["se"]))
        ),
        "per-path window means": float(
            np.max(np.abs(result.path_windows["knowledge_gradient"] - plain["windows"]))
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--case", choices=CASES, default="top")
    parser.add_argument("--equal-priors", action="store_true")
    parser.add_argument("--seed", type=int, default=2011)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each (medians)")
    args = parser.parse_args()

    study = PaperStudy(case=args.case, equal_priors=args.equal_priors)
    warm = PaperStudy(case=args.case, n_games=5, windows=((1, 5),))
    lobbysim_study(warm, 2, args.seed)  # warm-up: imports and first-call costs, not timed
    plain_study(warm, 2, args.seed)

    wall: dict[str, list[float]] = {"lobbysim": [], "plain": []}
    user: dict[str, list[float]] = {"lobbysim": [], "plain": []}
    system: dict[str, list[float]] = {"lobbysim": [], "plain": []}
    result: PaperResult | None = None
    plain_result: dict[str, np.ndarray] | None = None
    for repeat in range(args.repeats):
        order = ["lobbysim", "plain"] if repeat % 2 == 0 else ["plain", "lobbysim"]
        for which in order:
            before = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            if which == "lobbysim":
                result = lobbysim_study(study, args.paths, args.seed)
            else:
                plain_result = plain_study(study, args.paths, args.seed)
            wall[which].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_SELF)
            user[which].append(after.ru_utime - before.ru_utime)
            system[which].append(after.ru_stime - before.ru_stime)
            print(
                f"  repeat {repeat + 1}: {which} {wall[which][-1]:.2f} s "
                f"(user {user[which][-1]:.2f} s, system {system[which][-1]:.2f} s)",
                flush=True,
            )
    assert result is not None and plain_result is not None

    diffs = disagreement(result, plain_result)
    agree = all(d <= TOLERANCE for d in diffs.values())
    print(
        "agreement (max |lobbysim - plain|): "
        + ", ".join(f"{name} {d:.1e}" for name, d in diffs.items())
        + f" (tolerance {TOLERANCE:.0e}): {'OK' if agree else 'FAILED'}"
    )
    median = {
        name: {which: statistics.median(values[which]) for which in values}
        for name, values in (("wall", wall), ("user", user), ("system", system))
    }
    print(
        f"KG paper study, case {args.case}, {args.paths:,} paths x {study.n_games} games, "
        f"1 worker, medians of {args.repeats}: lobbysim {median['wall']['lobbysim']:.2f} s "
        f"(user {median['user']['lobbysim']:.2f}, system {median['system']['lobbysim']:.2f}), "
        f"plain numpy {median['wall']['plain']:.2f} s (user {median['user']['plain']:.2f}, "
        f"system {median['system']['plain']:.2f})"
    )
    ratio = median["wall"]["plain"] / median["wall"]["lobbysim"]
    user_ratio = median["user"]["plain"] / median["user"]["lobbysim"]
    print(
        f"plain / lobbysim = {ratio:.2f} (target >= {TARGET_RATIO:g}): "
        f"{'MET' if ratio >= TARGET_RATIO else 'MISSED'}; "
        f"in user CPU time alone {user_ratio:.2f}"
    )
    if not agree:
        sys.exit("the two implementations disagree: the ratio compares different work")


if __name__ == "__main__":
    main()
