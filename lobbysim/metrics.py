"""Metrics of one replication, computed from its record frames and the true skills.

Queue times count only players who queued and were matched (``waits`` rows with outcome
``matched``); the abandonment rate is abandoned / (matched + abandoned) over queueing spells. A
warm-up period is excluded: waits that began, and games that started, before it. Per rater, the
final ratings of registered players who played at least one game after the warm-up are compared
with their true skills: ``rating_rmse`` (only for raters on the skill scale) and Kendall's tau.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

QUEUE_METRICS = ("queue_time_mean", "queue_time_p50", "queue_time_p90", "queue_time_p99")

MIN_GAMES_FOR_WIN_RATIO = 5
"""Decided games a player needs for their win ratio to count (``win_ratio_dispersion``)."""


def rating_rmse(ratings: np.ndarray, skills: np.ndarray) -> float:
    """Return the root mean squared error of ratings against true skills (NaN without any)."""
    return float(np.sqrt(np.mean((ratings - skills) ** 2))) if ratings.size else math.nan


def rating_kendall_tau(ratings: np.ndarray, skills: np.ndarray) -> float:
    """Return Kendall's tau between ratings and true skills (NaN for < 2 or constant values)."""
    if ratings.size < 2 or np.ptp(ratings) == 0 or np.ptp(skills) == 0:
        return math.nan
    return float(kendalltau(ratings, skills).statistic)


def win_ratio_distance(wins: np.ndarray, games: np.ndarray) -> np.ndarray:
    """Return per player |wins / games - 0.5|, NaN for fewer than the games needed.

    ``games`` counts the decided games a player played, at least :data:`MIN_GAMES_FOR_WIN_RATIO`
    for the distance to count (the per-player terms of ``win_ratio_dispersion``).
    """
    wins = np.asarray(wins, dtype=float)
    games = np.asarray(games, dtype=float)
    enough = games >= MIN_GAMES_FOR_WIN_RATIO
    out = np.full(wins.shape, np.nan)
    out[enough] = np.abs(wins[enough] / games[enough] - 0.5)
    return out


def compute_metrics(
    games: pd.DataFrame,
    participants: pd.DataFrame,
    waits: pd.DataFrame,
    final_ratings: Mapping[str, np.ndarray],
    skill_scale: Mapping[str, bool],
    skills: np.ndarray,
    registered: np.ndarray,
    warmup: float,
    horizon: float,
) -> dict[str, float]:
    """Return the metrics dict of one run (NaN where a metric has no data)."""
    out: dict[str, float] = {}
    w = waits[waits.enqueued >= warmup]
    matched = w[w.outcome == "matched"].wait.to_numpy()
    abandoned = int((w.outcome == "abandoned").sum())
    out["queue_time_mean"] = float(matched.mean()) if matched.size else math.nan
    for q, name in ((50, "queue_time_p50"), (90, "queue_time_p90"), (99, "queue_time_p99")):
        out[name] = float(np.percentile(matched, q)) if matched.size else math.nan
    decided = matched.size + abandoned
    out["abandonment_rate"] = abandoned / decided if decided else math.nan

    g = games[games.start >= warmup]
    out["games_per_hour"] = len(g) / (horizon - warmup) * 60.0
    out["draw_prob_true_mean"] = float(g.draw_prob_true.mean()) if len(g) else math.nan
    out["skill_gap_true_mean"] = float(g.skill_gap_true.mean()) if len(g) else math.nan
    decided_games = g.stronger_side_won.dropna()
    out["stronger_side_win_rate"] = (
        float(decided_games.astype(float).mean()) if len(decided_games) else math.nan
    )
    out["win_ratio_dispersion"] = _win_ratio_dispersion(g, participants)

    played = participants[participants.game_id.isin(g.game_id)].player_id.unique()
    rated = np.asarray(sorted(int(p) for p in played if registered[int(p)]), dtype=np.int64)
    for name, ratings in final_ratings.items():
        if rated.size >= 2:
            r, s = ratings[rated], skills[rated]
            out[f"{name}.kendall_tau"] = rating_kendall_tau(r, s)
            out[f"{name}.rating_rmse"] = rating_rmse(r, s) if skill_scale[name] else math.nan
        else:
            out[f"{name}.kendall_tau"] = math.nan
            out[f"{name}.rating_rmse"] = math.nan
    return out


def _win_ratio_dispersion(games: pd.DataFrame, participants: pd.DataFrame) -> float:
    """Mean |win ratio - 0.5| over players with at least 5 decided games after the warm-up.

    Only games with a winner count (not free-for-all games, nor drawn team games).
    """
    games = games[games.winner.notna()]
    if games.empty:
        return math.nan
    p = participants[participants.game_id.isin(games.game_id)]
    winners = games.set_index("game_id").winner
    won = p.team.to_numpy() == winners.reindex(p.game_id).to_numpy()
    per_player = pd.DataFrame({"player_id": p.player_id.to_numpy(), "won": won})
    stats = per_player.groupby("player_id").won.agg(["mean", "size"])
    stats = stats[stats["size"] >= MIN_GAMES_FOR_WIN_RATIO]
    return float((stats["mean"] - 0.5).abs().mean()) if len(stats) else math.nan


def metric_names(rater_names: Sequence[str]) -> list[str]:
    """Return every metric name for a run with these raters, in report order."""
    names = [
        *QUEUE_METRICS,
        "abandonment_rate",
        "games_per_hour",
        "draw_prob_true_mean",
        "skill_gap_true_mean",
        "stronger_side_win_rate",
        "win_ratio_dispersion",
    ]
    for rater in rater_names:
        names += [f"{rater}.rating_rmse", f"{rater}.kendall_tau"]
    return names
