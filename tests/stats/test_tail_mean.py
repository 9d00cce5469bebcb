"""The continuous tail measure of the queue times: the mean of the longest 1% of waits."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lobbysim.stats.metrics import QUEUE_METRICS, compute_metrics, tail_mean


def test_the_tail_mean_averages_the_ceil_of_one_percent_longest() -> None:
    waits = np.arange(1, 1001, dtype=float)  # 1,000 waits: the 10 longest, 991..1000
    assert tail_mean(waits) == np.mean(np.arange(991, 1001))
    # 1,001 waits: ceil(10.01) = 11 longest
    assert tail_mean(np.arange(1, 1002, dtype=float)) == np.mean(np.arange(991, 1002))
    # fewer than 100 waits: the longest alone (at least one)
    assert tail_mean(np.array([3.0, 1.0, 2.0])) == 3.0
    assert tail_mean(np.array([0.5])) == 0.5
    assert math.isnan(tail_mean(np.array([])))
    # order does not matter
    rng = np.random.default_rng(4)
    shuffled = rng.permutation(np.arange(1, 1001, dtype=float))
    assert tail_mean(shuffled) == tail_mean(np.arange(1, 1001, dtype=float))


def test_on_a_pass_grid_the_tail_mean_leaves_the_grid_where_the_p99_cannot() -> None:
    # waits on a 0.5-minute grid: p99 sits on the grid, the tail mean moves with the tail's mix
    rng = np.random.default_rng(7)
    grid = 0.5 * rng.choice([1, 2, 3, 4], size=2000, p=[0.6, 0.3, 0.095, 0.005])
    p99 = float(np.percentile(grid, 99))
    assert p99 / 0.5 == round(p99 / 0.5)
    tail = tail_mean(grid)
    assert abs(tail / 0.5 - round(tail / 0.5)) > 1e-6
    assert p99 <= tail <= grid.max()


def test_compute_metrics_reports_the_tail_mean_of_matched_waits_after_the_warmup() -> None:
    waits = pd.DataFrame(
        {
            "enqueued": [0.0, 5.0, 6.0, 7.0, 8.0],
            "wait": [99.0, 1.0, 4.0, 2.0, 50.0],
            "outcome": ["matched", "matched", "matched", "matched", "abandoned"],
        }
    )
    games = pd.DataFrame(
        columns=[
            "game_id",
            "start",
            "draw_prob_true",
            "skill_gap_true",
            "stronger_side_won",
            "winner",
        ]
    )
    participants = pd.DataFrame(columns=["game_id", "player_id", "team"])
    out = compute_metrics(
        games, participants, waits, {}, {}, np.zeros(0), np.zeros(0, bool), 5.0, 60.0
    )
    assert "queue_time_tail_mean" in QUEUE_METRICS
    # the wait begun before the warm-up (99) and the abandoned spell (50) do not count
    assert out["queue_time_tail_mean"] == 4.0
    assert out["queue_time_p99"] < 4.0
