"""The vectorised engine for the paper's simulation study (Ryzhov, Tariq & Powell 2011, Section 4).

Players 0..M (M = 49 by default). Prior means are drawn once from N(0, 4) and prior variances from
U[2, 3]; player 0 is relabelled to sit at the top, the bottom or the middle (rank 25) of the prior
ranking. Each sample path draws true skills s_i ~ N(mu_i^0, sigma_i^0^2); player 0 then plays
N = 500 games, each against the opponent the policy picks from the current beliefs, and both
players' beliefs are updated after each game (the corrected TrueSkill update of
:mod:`lobbysim.skill.gaussian`). With ``equal_priors`` every prior mean is 0 while the truths are
drawn as before, so the prior carries no information about who is better; the position then refers
to player 0's rank in the means the truths were drawn from.

**Common random numbers.** Paths come in fixed blocks of ``block_paths``; block b draws its true
skills, its performance noise (two standard normals per game: player 0's and the opponent's) and its
tie-break uniforms from its own streams, spawned from the seed with ``numpy.random.SeedSequence``.
Every policy sees the same truths and noise on every path, so differences between policies are
paired; and the results are the same whatever the number of worker processes.

**Speed.** All paths of a block advance together, one game at a time; policies score all paths in
one call (KG's O(M^2) look-ahead is one broadcast per block of rows, see
:mod:`lobbysim.policies.knowledge_gradient`). Blocks run on a process pool.

Metrics per game n (1..N), averaged over paths with standard errors: the true draw probability of
the match (eq. 14), the squared error (mu_0^n - s_0)^2 after the game, the signed skill difference
s_0 - s_opponent, and player 0's win indicator. This module does no file I/O; see
:mod:`lobbysim.reporting.paper` for the CSV files, figures and summary.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from lobbysim.policies import POLICIES, Decision, OpponentPolicy, choose
from lobbysim.registry import PluginRef
from lobbysim.running.workers import run_tasks
from lobbysim.skill.gaussian import true_draw_density, update_1v1

CASES = ("top", "bottom", "middle")
METRICS = ("draw_prob_true", "sq_error", "skill_diff", "win")
DEFAULT_POLICIES = ("point_estimate", "draw_chance", "knowledge_gradient")

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class PaperStudy:
    """The set-up of one study (the paper's defaults).

    Attributes:
        case: player 0's place in the prior ranking: ``"top"``, ``"bottom"`` or ``"middle"``.
        equal_priors: all prior means 0 (the truths are still drawn around the original means).
        n_players: players including player 0 (the paper: 50).
        n_games: N, games player 0 plays on each path (the paper: 500).
        beta2: performance-noise variance sigma_eps^2 (the paper: 2.5).
        prior_mean_variance: variance of the prior means' distribution (the paper: 4).
        prior_variance_range: the prior variances are uniform on this interval (the paper: [2, 3]).
        middle_rank: player 0's rank (1 = top) in the ``"middle"`` case (the paper: 25).
        windows: game-index windows (first, last) for the window averages and paired differences.
        block_paths: paths per random-stream block; part of the random-number layout, so changing
            it changes the draws (not the distribution).
    """

    case: str = "top"
    equal_priors: bool = False
    n_players: int = 50
    n_games: int = 500
    beta2: float = 2.5
    prior_mean_variance: float = 4.0
    prior_variance_range: tuple[float, float] = (2.0, 3.0)
    middle_rank: int = 25
    windows: tuple[tuple[int, int], ...] = ((1, 100), (101, 200), (201, 500))
    block_paths: int = 250

    def __post_init__(self) -> None:
        if self.case not in CASES:
            raise ValueError(f"case must be one of {', '.join(CASES)}, got {self.case!r}")
        if self.n_players < 2:
            raise ValueError(f"n_players must be >= 2, got {self.n_players}")
        if self.n_games < 1:
            raise ValueError(f"n_games must be >= 1, got {self.n_games}")
        if not self.beta2 > 0:
            raise ValueError(f"beta2 must be > 0, got {self.beta2}")
        low, high = self.prior_variance_range
        if not 0 < low <= high:
            raise ValueError(f"prior_variance_range must satisfy 0 < low <= high, got {low, high}")
        if not 1 <= self.middle_rank <= self.n_players:
            raise ValueError(f"middle_rank must be in 1..{self.n_players}, got {self.middle_rank}")
        for first, last in self.windows:
            if not 1 <= first <= last <= self.n_games:
                raise ValueError(f"window {first}-{last} is not within games 1..{self.n_games}")
        if self.block_paths < 1:
            raise ValueError(f"block_paths must be >= 1, got {self.block_paths}")

    def window_labels(self) -> list[str]:
        """Return the windows as ``"first-last"`` labels."""
        return [f"{first}-{last}" for first, last in self.windows]


def draw_priors(study: PaperStudy, seed: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return ``(policy_means, truth_means, variances)``, player 0 first, for the study's case.

    ``truth_means`` are the means the true skills are drawn around; ``policy_means`` are the prior
    means the policies start from (equal to ``truth_means`` unless ``equal_priors``). The draw
    depends only on the seed, so the cases of one seed share one population.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    means = rng.normal(0.0, math.sqrt(study.prior_mean_variance), study.n_players)
    variances = rng.uniform(*study.prior_variance_range, study.n_players)
    ranking = np.argsort(-means, kind="stable")  # ranking[0] is the top
    focal = {
        "top": ranking[0],
        "bottom": ranking[-1],
        "middle": ranking[study.middle_rank - 1],
    }[study.case]
    order = np.concatenate([[focal], np.delete(np.arange(study.n_players), focal)])
    truth_means = means[order]
    policy_means = np.zeros_like(truth_means) if study.equal_priors else truth_means.copy()
    return policy_means, truth_means, variances[order]


def _block_streams(seed: int, block: int) -> list[np.random.Generator]:
    """Return the (truth, noise, ties) generators of one block of paths."""
    children = np.random.SeedSequence(seed, spawn_key=(1, block)).spawn(3)
    return [np.random.default_rng(child) for child in children]


@dataclass
class BlockResult:
    """Per-block sums, for combining blocks in a fixed order."""

    count: int
    mean: FloatArray  # (N, metrics): per-game means over the block's paths
    m2: FloatArray  # (N, metrics): per-game sums of squared deviations from those means
    window_means: FloatArray  # (paths in block, windows, metrics)


def simulate_block(
    study: PaperStudy,
    policy: OpponentPolicy,
    seed: int,
    block: int,
    n_paths: int,
    *,
    trace: list[dict[str, Any]] | None = None,
) -> BlockResult:
    """Simulate ``n_paths`` paths of block ``block`` under ``policy``.

    If ``trace`` is a list, one dict per game of the block's first path is appended to it (the
    opponent, the outcome and the beliefs after the game), for consistency checks.
    """
    policy_means, truth_means, variances = draw_priors(study, seed)
    truth_rng, noise_rng, tie_rng = _block_streams(seed, block)
    m = study.n_players
    skills = truth_means + np.sqrt(variances) * truth_rng.standard_normal((n_paths, m))
    noise = noise_rng.standard_normal((study.n_games, n_paths, 2))
    beta = math.sqrt(study.beta2)

    mu = np.tile(policy_means, (n_paths, 1))
    var = np.tile(variances, (n_paths, 1))
    last_played = np.zeros((n_paths, m - 1))
    rows = np.arange(n_paths)
    s0 = skills[:, 0]
    per_game = np.empty((len(METRICS), study.n_games, n_paths))

    for n in range(study.n_games):
        decision = Decision(
            focal_mu=mu[:, 0],
            focal_var=var[:, 0],
            mu=mu[:, 1:],
            var=var[:, 1:],
            beta2=study.beta2,
            waited=n - last_played,
            games_played=n,
        )
        try:
            scores = policy.score(decision)
        except (Exception, SystemExit) as exc:  # a policy's own bug or exit: one line
            name = getattr(policy, "name", type(policy).__qualname__)
            raise PluginRef("", "policy", name).failure("score(decision)", exc) from None
        pick = choose(scores, tie_rng)
        opp = pick + 1
        last_played[rows, pick] = n + 1
        s_opp = skills[rows, opp]
        win = s0 + beta * noise[n, :, 0] > s_opp + beta * noise[n, :, 1]

        mu0, v0, mu_j, v_j = mu[:, 0], var[:, 0], mu[rows, opp], var[rows, opp]
        new_w = update_1v1(
            np.where(win, mu0, mu_j),
            np.where(win, v0, v_j),
            np.where(win, mu_j, mu0),
            np.where(win, v_j, v0),
            study.beta2,
        )
        mu_w, v_w, mu_l, v_l = new_w
        mu[:, 0] = np.where(win, mu_w, mu_l)
        var[:, 0] = np.where(win, v_w, v_l)
        mu[rows, opp] = np.where(win, mu_l, mu_w)
        var[rows, opp] = np.where(win, v_l, v_w)

        per_game[0, n] = true_draw_density(s0, s_opp, study.beta2)
        per_game[1, n] = (mu[:, 0] - s0) ** 2
        per_game[2, n] = s0 - s_opp
        per_game[3, n] = win
        if trace is not None:
            trace.append(
                {
                    "game": n + 1,
                    "opponent": int(opp[0]),
                    "won": bool(win[0]),
                    "mu": mu[0].copy(),
                    "var": var[0].copy(),
                }
            )

    window_means = np.stack(
        [per_game[:, first - 1 : last].mean(axis=1).T for first, last in study.windows], axis=1
    )
    mean = per_game.mean(axis=2)
    m2 = np.square(per_game - mean[:, :, None]).sum(axis=2)
    return BlockResult(count=n_paths, mean=mean.T, m2=m2.T, window_means=window_means)


@dataclass
class PaperResult:
    """The outcome of a study: per-game and per-window metrics of every policy.

    Attributes:
        study, seed, paths, policies: what was run.
        per_game: one row per policy and game: the metrics' means over paths and ``_se`` columns.
        windows: window averages per policy (``kind == "mean"``) and paired differences
            ``knowledge_gradient - other`` (``kind == "paired_difference"``), with ``_se`` columns.
        path_windows: per policy, the per-path window averages, shape (paths, windows, metrics).
    """

    study: PaperStudy
    seed: int
    paths: int
    policies: list[str]
    per_game: pd.DataFrame
    windows: pd.DataFrame
    path_windows: dict[str, FloatArray] = field(repr=False)


def _run_task(args: tuple[PaperStudy, str, int, int, int]) -> BlockResult:
    study, policy_name, seed, block, n_paths = args
    return simulate_block(study, POLICIES.create(policy_name), seed, block, n_paths)


def run_study(
    study: PaperStudy,
    policies: Sequence[str] = DEFAULT_POLICIES,
    paths: int = 1000,
    seed: int = 0,
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> PaperResult:
    """Run the study for each policy on the same ``paths`` sample paths.

    Args:
        study: the set-up.
        policies: registered policy names, each run with its default parameters.
        paths: the number of sample paths (>= 2).
        seed: the master seed.
        jobs: worker processes (1: run in this process). The result does not depend on it.
        progress: called as ``progress(done, total)`` after each finished block.
    """
    if paths < 2:
        raise ValueError(f"paths must be >= 2 (standard errors need two), got {paths}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    names = list(dict.fromkeys(policies))
    if not names:
        raise ValueError("policies must name at least one policy")
    for name in names:
        POLICIES.create(name)  # fail early on unknown names
    sizes = [min(study.block_paths, paths - start) for start in range(0, paths, study.block_paths)]
    tasks = [(study, name, seed, block, size) for name in names for block, size in enumerate(sizes)]
    results = run_tasks(_run_task, tasks, jobs, progress)  # in task order: deterministic
    per_policy = {
        name: results[k * len(sizes) : (k + 1) * len(sizes)] for k, name in enumerate(names)
    }
    return _summarise(study, seed, paths, names, per_policy)


def _summarise(
    study: PaperStudy,
    seed: int,
    paths: int,
    names: list[str],
    per_policy: dict[str, list[BlockResult]],
) -> PaperResult:
    games = np.arange(1, study.n_games + 1)
    frames = []
    path_windows: dict[str, FloatArray] = {}
    for name in names:
        blocks = per_policy[name]
        # Chan et al.'s pairwise combination of (count, mean, M2), in block order.
        count, mean, m2 = blocks[0].count, blocks[0].mean, blocks[0].m2
        for b in blocks[1:]:
            total = count + b.count
            delta = b.mean - mean
            mean = mean + delta * (b.count / total)
            m2 = m2 + b.m2 + delta**2 * (count * b.count / total)
            count = total
        se = np.sqrt(m2 / (paths - 1) / paths)
        frame = pd.DataFrame({"policy": name, "game": games})
        for k, metric in enumerate(METRICS):
            frame[metric] = mean[:, k]
            frame[f"{metric}_se"] = se[:, k]
        frames.append(frame)
        path_windows[name] = np.concatenate([b.window_means for b in blocks], axis=0)
    per_game = pd.DataFrame(pd.concat(frames, ignore_index=True))
    columns = ["policy", "game", *METRICS, *(f"{m}_se" for m in METRICS)]
    per_game = per_game[columns]

    rows: list[dict[str, Any]] = []
    labels = study.window_labels()

    def add_rows(kind: str, label: str, values: FloatArray) -> None:
        for w, window in enumerate(labels):
            row: dict[str, Any] = {"kind": kind, "policy": label, "window": window}
            for k, metric in enumerate(METRICS):
                column = values[:, w, k]
                row[metric] = float(column.mean())
                row[f"{metric}_se"] = float(column.std(ddof=1) / math.sqrt(paths))
            rows.append(row)

    for name in names:
        add_rows("mean", name, path_windows[name])
    if "knowledge_gradient" in path_windows:
        kg = path_windows["knowledge_gradient"]
        for name in names:
            if name != "knowledge_gradient":
                add_rows(
                    "paired_difference", f"knowledge_gradient - {name}", kg - path_windows[name]
                )
    windows = pd.DataFrame(rows)
    windows = windows[["kind", "policy", "window", *METRICS, *(f"{m}_se" for m in METRICS)]]
    return PaperResult(study, seed, paths, names, per_game, windows, path_windows)


def default_jobs() -> int:
    """Return the number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)
