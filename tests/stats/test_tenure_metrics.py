"""Metrics by tenure (newcomers and veterans), veterans' rank correlation and the convergence
curve: hand-built frames with known answers, then end-to-end runs with a player base."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from lobbysim.experiments import run_experiment, simulate
from lobbysim.reporting.run import write_report
from lobbysim.reporting.run_figures import FIGURE_FILES
from lobbysim.reporting.tenure_figures import TENURE_FIGURE_FILE, trueskill_games_needed
from lobbysim.reporting.tradeoff_figure import TRADEOFF_FIGURE_FILE
from lobbysim.reporting.verdicts import better_direction
from lobbysim.scenario import Scenario, load_scenario
from lobbysim.stats.metrics import (
    TENURE_BIN_EDGES,
    VETERAN_GAMES,
    VETERANS_COUNT,
    games_before,
    metric_names,
    player_games,
    rating_error_by_tenure,
    tenure_metric_names,
    tenure_metrics,
    veteran_kendall_taus,
)

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NO_BASE_ENGINE = importlib.util.find_spec("lobbysim.players.visits") is None

# --------------------------------------------------------------------------------------------
# Hand-built frames: games A (id 10, start 10), B (id 20, start 20), C (id 30, start 30);
# player 0 plays A, B, C; player 1 plays A, B; player 2 is back-filled into C at 33.

GAMES = pd.DataFrame(
    {
        "game_id": [30, 10, 20],
        "start": [30.0, 10.0, 20.0],
        "end": [40.0, 18.0, 28.0],
        "skill_gap_true": [4.0, 1.0, 2.0],
        "draw_prob_true": [0.1, 0.3, 0.2],
    }
)
PARTICIPANTS = pd.DataFrame(
    {
        "game_id": [30, 20, 10, 20, 10, 30],
        "player_id": [0, 0, 0, 1, 1, 2],
        "joined": [30.0, 20.0, 10.0, 20.0, 10.0, 33.0],
    }
)
WAITS = pd.DataFrame(
    [
        (0, 5.0, "matched", 5.0),  # tenure 0
        (0, 18.0, "matched", 2.0),  # joined A at 10: tenure 1
        (0, 28.0, "matched", 2.0),  # tenure 2
        (0, 40.0, "abandoned", 1.0),  # tenure 3
        (1, 9.0, "matched", 1.0),  # tenure 0
        (1, 35.0, "still_waiting", 5.0),  # tenure 2, counted nowhere
        (2, 31.0, "matched", 2.0),  # C started at 30 but player 2 joined at 33: tenure 0
        (2, 1.0, "abandoned", 1.0),  # tenure 0
    ],
    columns=["player_id", "enqueued", "outcome", "wait"],
)


def test_tenure_follows_game_start_then_game_id() -> None:
    games = pd.DataFrame({"game_id": [3, 1, 2, 4], "start": [0.0, 5.0, 5.0, 9.0]})
    participants = pd.DataFrame(
        {
            "game_id": [2, 4, 1, 3, 1, 2],
            "player_id": [7, 7, 7, 7, 7, 8],
            "joined": [5.0, 9.0, 5.0, 0.0, 6.0, 5.0],  # player 7 has two stints in game 1
        }
    )
    seats = player_games(participants, games)
    tenure = {(p, g): t for p, g, t in seats[["player_id", "game_id", "tenure"]].to_numpy()}
    # Game 3 first (start 0); games 1 and 2 start together, so by id; game 4 last.
    assert tenure == {(7, 3): 0, (7, 1): 1, (7, 2): 2, (7, 4): 3, (8, 2): 0}
    assert seats.loc[(seats.player_id == 7) & (seats.game_id == 1), "joined"].item() == 5.0


def test_games_before_is_strict_or_inclusive() -> None:
    events_p, events_t = np.array([1, 1, 1, 2]), np.array([10.0, 20.0, 30.0, 5.0])
    players, times = np.array([1, 1, 1, 2, 2, 3]), np.array([10.0, 25.0, 99.0, 4.0, 5.0, 50.0])
    assert games_before(players, times, events_p, events_t).tolist() == [0, 2, 3, 0, 0, 0]
    inclusive = games_before(players, times, events_p, events_t, inclusive=True)
    assert inclusive.tolist() == [1, 2, 3, 0, 1, 0]


def test_newcomer_and_veteran_split_by_hand() -> None:
    got = tenure_metrics(GAMES, PARTICIPANTS, WAITS, start=0.0, newcomer_games=2)
    assert list(got) == tenure_metric_names([])[:-1]
    # Seats: newcomers p0 A, p0 B, p1 A, p1 B, p2 C; the one veteran seat is p0 in C.
    assert got["newcomer_skill_gap_true_mean"] == pytest.approx((1 + 2 + 1 + 2 + 4) / 5)
    assert got["veteran_skill_gap_true_mean"] == pytest.approx(4.0)
    assert got["newcomer_draw_prob_true_mean"] == pytest.approx((0.3 + 0.2 + 0.3 + 0.2 + 0.1) / 5)
    assert got["veteran_draw_prob_true_mean"] == pytest.approx(0.1)
    # Spells: newcomers matched 5, 2, 1, 2 and one abandoned; veterans matched 2, one abandoned.
    assert got["newcomer_queue_time_mean"] == pytest.approx(2.5)
    assert got["newcomer_abandonment_rate"] == pytest.approx(1 / 5)
    assert got["veteran_queue_time_mean"] == pytest.approx(2.0)
    assert got["veteran_abandonment_rate"] == pytest.approx(1 / 2)


def test_a_back_filled_spell_counts_the_games_joined_before_it() -> None:
    # Player 2 queued at 31 and was back-filled at 33 into game C, which had started at 30:
    # C is the game the spell led to, not one played before it, so the spell is a newcomer's.
    got = tenure_metrics(GAMES, PARTICIPANTS, WAITS, start=0.0, newcomer_games=1)
    assert got["newcomer_queue_time_mean"] == pytest.approx((5 + 1 + 2) / 3)
    assert got["newcomer_abandonment_rate"] == pytest.approx(1 / 4)
    assert got["veteran_queue_time_mean"] == pytest.approx(2.0)
    assert got["veteran_abandonment_rate"] == pytest.approx(1 / 3)


def test_the_window_drops_early_records_but_tenure_counts_every_game() -> None:
    got = tenure_metrics(GAMES, PARTICIPANTS, WAITS, start=15.0, newcomer_games=2)
    # Games B and C only; p0's seat in B is still a newcomer's (game A counts for tenure).
    assert got["newcomer_skill_gap_true_mean"] == pytest.approx((2 + 2 + 4) / 3)
    assert got["veteran_skill_gap_true_mean"] == pytest.approx(4.0)
    assert got["newcomer_queue_time_mean"] == pytest.approx(2.0)
    assert got["newcomer_abandonment_rate"] == 0.0
    assert got["veteran_abandonment_rate"] == pytest.approx(1 / 2)
    empty = tenure_metrics(GAMES, PARTICIPANTS, WAITS, start=15.0, newcomer_games=99)
    assert math.isnan(empty["veteran_queue_time_mean"])
    assert math.isnan(empty["veteran_skill_gap_true_mean"])


def test_veterans_tau_ranks_only_players_with_enough_games() -> None:
    n = VETERAN_GAMES
    games = pd.DataFrame({"game_id": np.arange(n), "start": np.arange(n, dtype=float)})
    # Players 0-3 play every game; player 4 only one; player 3 is a guest.
    participants = pd.DataFrame(
        {
            "game_id": np.r_[np.tile(np.arange(n), 4), 0],
            "player_id": np.r_[np.repeat(np.arange(4), n), 4],
        }
    )
    skills = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    ratings = {"good": np.array([10.0, 20.0, 30.0, -1.0, -9.0]), "bad": -skills}
    registered = np.array([True, True, True, False, True])
    got = veteran_kendall_taus(games, participants, ratings, skills, registered, start=0.0)
    expected = {"good.kendall_tau_veterans": 1.0, "bad.kendall_tau_veterans": -1.0}
    assert got == {**expected, VETERANS_COUNT: 3.0}
    late = veteran_kendall_taus(games, participants, ratings, skills, registered, start=1e9)
    assert late[VETERANS_COUNT] == 0.0 and math.isnan(late["good.kendall_tau_veterans"])


def test_rating_error_by_tenure_bins_samples_by_games_finished() -> None:
    players = pd.DataFrame(
        {"player_id": [0, 1, 2], "skill": [0.0, 1.0, 2.0], "registered": [True, True, False]}
    )
    ratings = pd.DataFrame(
        [
            (5.0, "r", 0, 3.0),  # player 0 before any game: bin 0, error 3
            (18.0, "r", 0, 2.0),  # game A ended at 18 (inclusive): bin 1, error 2
            (30.0, "r", 0, 1.0),  # A and B finished: bin 2-4, error 1
            (30.0, "r", 1, 5.0),  # player 1, A and B: bin 2-4, error 4
            (30.0, "other", 1, 99.0),  # another rater
            (30.0, "r", 2, 99.0),  # a guest
            (1.0, "r", 1, 99.0),  # before the start
        ],
        columns=["time", "rater", "player_id", "rating"],
    )
    curve = rating_error_by_tenure(
        ratings, GAMES, PARTICIPANTS, players, "r", start=2.0, horizon=100.0
    )
    assert curve["games_from"].tolist() == list(TENURE_BIN_EDGES)
    assert curve["samples"].tolist()[:4] == [1, 1, 2, 0]
    assert curve["rmse"].iloc[0] == pytest.approx(3.0)
    assert curve["rmse"].iloc[1] == pytest.approx(2.0)
    assert curve["rmse"].iloc[2] == pytest.approx(math.sqrt((1 + 16) / 2))
    assert curve["rmse"].iloc[3:].isna().all() and math.isinf(curve["games_to"].iloc[-1])


def test_trueskill_reference_reproduces_the_published_table() -> None:
    # Microsoft Research's TrueSkill page: games per gamer to identify the skill level.
    table = {(2, 1): 12, (2, 4): 46, (2, 8): 91, (16, 1): 3, (8, 1): 3, (4, 1): 5, (4, 2): 10}
    table[(4, 4)] = 20
    assert {mode: trueskill_games_needed(*mode) for mode in table} == table


def test_metrics_by_tenure_are_registered_with_directions() -> None:
    names = metric_names(["bayesian"], base=True)
    assert names[: len(metric_names(["bayesian"]))] == metric_names(["bayesian"])
    assert names[len(metric_names(["bayesian"])) :] == tenure_metric_names(["bayesian"])
    assert better_direction("newcomer_queue_time_mean") == "lower"
    assert better_direction("veteran_draw_prob_true_mean") == "higher"
    assert better_direction("bayesian.kendall_tau_veterans") == "higher"
    assert better_direction(VETERANS_COUNT) == "neither"


# --------------------------------------------------------------------------------------------
# End to end


OLD_KEYS = [
    "queue_time_mean",
    "queue_time_p50",
    "queue_time_p90",
    "queue_time_p99",
    "queue_time_tail_mean",
    "abandonment_rate",
    "games_per_hour",
    "draw_prob_true_mean",
    "skill_gap_true_mean",
    "stronger_side_win_rate",
    "win_ratio_dispersion",
    "bayesian.kendall_tau",
    "bayesian.rating_rmse",
    "sph_elo.kendall_tau",
    "sph_elo.rating_rmse",
]


def test_a_bundled_scenario_without_a_base_has_exactly_the_old_metrics() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "one_visit.yaml")
    assert scenario.base is None
    result = simulate(scenario.replace(horizon=120.0, warmup=30.0))
    assert list(result.metrics) == OLD_KEYS


def _base_scenario(**base: object) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "base",
            "horizon": 1440.0,
            "warmup": 120.0,
            "seed": 3,
            "base": {
                "size": 60,
                "newcomer_games": 10,
                "newcomers_per_day": 20,
                "visits": {"name": "daily", "per_day": 4},
                **base,
            },
            "arrivals": {"name": "poisson", "rate": 0.01},
            "population": {"patience_mean": 10.0},
            "records": {"ratings_every": 30},
        }
    )


NO_BASE = "the player base engine (lobbysim.players.visits) is missing"


@pytest.mark.skipif(NO_BASE_ENGINE, reason=NO_BASE)
def test_simulate_with_a_base_measures_newcomers_and_veterans() -> None:
    scenario = _base_scenario()
    result = simulate(scenario)
    metrics = result.metrics
    assert list(metrics) == OLD_KEYS + tenure_metric_names(["bayesian", "sph_elo"])
    games, seats, waits = result.games, result.participants, result.waits
    assert games is not None and seats is not None and waits is not None
    # Brute force, one spell and one seat at a time.
    start, k = scenario.metrics_start, 10
    seats = seats.drop_duplicates(["player_id", "game_id"]).merge(games, on="game_id")
    tenure_of_seat = [
        int(((seats.player_id == s.player_id) & (seats.start < s.start)).sum())
        for s in seats.itertuples()
    ]
    chosen = seats[(seats.start >= start) & (np.array(tenure_of_seat) >= k)]
    assert metrics["veteran_skill_gap_true_mean"] == pytest.approx(chosen.skill_gap_true.mean())
    spells = waits[(waits.enqueued >= start) & (waits.outcome == "matched")]
    tenure_of_wait = np.array(
        [
            int(((seats.player_id == w.player_id) & (seats.joined < w.enqueued)).sum())
            for w in spells.itertuples()
        ]
    )
    new = spells[tenure_of_wait < k]
    assert len(new) and (tenure_of_wait >= k).any()
    assert metrics["newcomer_queue_time_mean"] == pytest.approx(new.wait.mean())
    # Veterans' tau, from the final ratings (the sample of every player at the horizon).
    counts = seats.groupby("player_id").game_id.nunique()
    recent = set(seats.player_id[seats.start >= start])
    players = result.players
    assert players is not None
    ids = [p for p, n in counts.items() if n >= VETERAN_GAMES and p in recent]
    ids = sorted(p for p in ids if players.registered[p])
    assert metrics[VETERANS_COUNT] == len(ids) >= 2
    ratings = result.ratings
    assert ratings is not None
    final = ratings[(ratings.time == ratings.time.max()) & (ratings.rater == "bayesian")]
    final = final.set_index("player_id").rating
    expected = kendalltau(final[ids], players.skill[ids]).statistic
    assert metrics["bayesian.kendall_tau_veterans"] == pytest.approx(expected)


@pytest.mark.skipif(NO_BASE_ENGINE, reason=NO_BASE)
def test_streamed_records_give_the_same_metrics_by_tenure(tmp_path: Path) -> None:
    scenario = _base_scenario(size=30)
    in_memory = simulate(scenario).metrics
    streamed_scenario = scenario.replace(records=dataclasses.replace(scenario.records, stream=True))
    streamed = simulate(streamed_scenario, records_dir=tmp_path).metrics
    assert list(streamed) == list(in_memory)
    assert streamed == pytest.approx(in_memory, nan_ok=True)


@pytest.mark.slow
@pytest.mark.skipif(NO_BASE_ENGINE, reason=NO_BASE)
def test_the_convergence_figure_is_written_with_a_base(tmp_path: Path) -> None:
    scenario = _base_scenario(size=40)
    result = run_experiment(scenario, policies=["draw_chance", "point_estimate"], replications=2)
    written = write_report(result, tmp_path)
    assert [p.name for p in written] == [
        TRADEOFF_FIGURE_FILE,
        *FIGURE_FILES,
        TENURE_FIGURE_FILE,
        "report.md",
        "report.html",
    ]
    data = (tmp_path / TENURE_FIGURE_FILE).read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 20_000
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = text[text.index("## Newcomers, veterans and rating convergence") :]
    assert "is 12 for 1 vs 1" in section
    assert "https://www.microsoft.com/en-us/research/project/trueskill-ranking-system/" in section
    assert "| 0 | " in section and f"]({TENURE_FIGURE_FILE})" in text
    assert re.search(r"\| newcomer_queue_time_mean \| (s|min) \| lower \|", text), text


def test_no_convergence_figure_without_a_base(tmp_path: Path) -> None:
    scenario = Scenario.from_dict({"name": "plain", "horizon": 90.0, "warmup": 10.0})
    written = write_report(run_experiment(scenario, replications=1), tmp_path)
    assert TENURE_FIGURE_FILE not in {p.name for p in written}
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Newcomers, veterans" not in text and "TrueSkill" not in text
