"""Tests of the Glicko-2 rater (lobbysim.raters.glicko2).

The oracles: Glickman's worked example ("Example of the Glicko-2 system", 2013,
http://www.glicko.net/glicko/glicko2.pdf) to its published figures, and ``reference`` of
tests/raters/glicko2_reference.py, a plain scalar transcription of the paper's steps 2 to 8 for
one player, one period at a time.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lobbysim.raters import RATERS, Glicko2Rater, Rater
from lobbysim.raters.glicko2 import SCALE
from lobbysim.records.rows import GameResult, Seat
from lobbysim.registry import PluginError
from tests.raters.glicko2_reference import reference

# --------------------------------------------------------------------------------------------
# Games
# --------------------------------------------------------------------------------------------


def stint(pid: int, team: int | None, score: float, joined: float, left: float) -> Seat:
    """A registered player's stint."""
    return Seat(pid, team, joined, left, score, True, False, 0.0)


def duel(gid: int, a: int, b: int, winner: int, end: float) -> GameResult:
    """A 10-minute 1v1 game ending at ``end``: ``a`` on side 0, ``b`` on side 1."""
    seats = (stint(a, 0, 5.0, end - 10.0, end), stint(b, 1, 5.0, end - 10.0, end))
    return GameResult(gid, "1v1", end - 10.0, end, seats, winner)


def rater_with(
    ratings: list[tuple[float, float, float]], n: int = 0, **params: float
) -> Glicko2Rater:
    """A rater with players 0..len-1 at the given (r, RD, sigma) and ``n`` more unrated ones."""
    rater = Glicko2Rater(**params)
    total = len(ratings) + n
    rater.add_players(np.arange(total), np.zeros(total), np.ones(total))
    if ratings:
        r, rd, vol = (np.array(column) for column in zip(*ratings, strict=True))
        rater.set_ratings(np.arange(len(ratings)), r, rd, vol)
    return rater


def state(rater: Glicko2Rater, n: int) -> np.ndarray:
    """Rating, RD and volatility of players 0..n-1, one row per player."""
    ids = np.arange(n)
    return np.stack([rater.means(ids), rater.deviations(ids), rater.volatilities(ids)], axis=1)


PAPER = [(1500.0, 200.0, 0.06), (1400.0, 30.0, 0.06), (1550.0, 100.0, 0.06), (1700.0, 300.0, 0.06)]
PAPER_GAMES = [duel(0, 0, 1, 0, 10.0), duel(1, 0, 2, 1, 25.0), duel(2, 0, 3, 1, 50.0)]
CLOSE_PERIOD_0 = duel(3, 4, 5, 0, 61.0)  # two other players, in period 1: closes period 0


# --------------------------------------------------------------------------------------------
# Glickman's example
# --------------------------------------------------------------------------------------------


def test_glickmans_worked_example_through_the_update_path() -> None:
    rater = rater_with(PAPER, n=2)
    rater.update(PAPER_GAMES)  # three games in period 0 = [0, 60): not applied yet
    assert rater.closed_periods == 0
    np.testing.assert_allclose(state(rater, 4), np.array(PAPER), rtol=1e-15)  # RD: 1 ulp
    rater.update([CLOSE_PERIOD_0])
    assert rater.closed_periods == 1
    r, rd, vol = state(rater, 1)[0]
    # The published figures come from mu' = -0.2069 and phi' = 0.8722, rounded to 4 places, so
    # r' and RD' may differ from them by up to 173.7178 * 0.00005 + 0.005 = 0.0137.
    assert round((r - 1500.0) / SCALE, 4) == -0.2069
    assert round(rd / SCALE, 4) == 0.8722
    assert abs(r - 1464.06) < 0.0137 and abs(rd - 151.52) < 0.0137
    assert abs(vol - 0.05999) < 1e-5  # printed to five places
    # Full precision: the same as the well-known implementations, and as the scalar reference.
    assert r == pytest.approx(1464.0506705393013, rel=1e-12)
    assert rd == pytest.approx(151.51652412385727, rel=1e-12)
    assert vol == pytest.approx(0.059995984286488495, rel=1e-12)
    r_ref, rd_ref, vol_ref, inter = reference(
        *PAPER[0], [(*PAPER[j][:2], s) for j, s in [(1, 1.0), (2, 0.0), (3, 0.0)]]
    )
    # The paper prints v = 1.7785 and Delta = -0.4834 from g and E rounded to 4 and 3 places.
    assert abs(inter["v"] - 1.7785) < 1e-3 and abs(inter["delta"] + 0.4834) < 1e-3
    np.testing.assert_allclose([r, rd, vol], [r_ref, rd_ref, vol_ref], rtol=1e-12)


def test_every_player_of_the_period_is_rated_against_pre_period_values() -> None:
    rater = rater_with(PAPER, n=2)
    rater.update([*PAPER_GAMES, CLOSE_PERIOD_0])
    results = {0: [(1, 1.0), (2, 0.0), (3, 0.0)], 1: [(0, 0.0)], 2: [(0, 1.0)], 3: [(0, 1.0)]}
    got = state(rater, 4)
    for player, games in results.items():
        opponents = [(*PAPER[j][:2], s) for j, s in games]
        np.testing.assert_allclose(
            got[player], reference(*PAPER[player], opponents)[:3], rtol=1e-12
        )
    # Players 4 and 5 were idle in period 0 (their game is in period 1): step 6 only.
    np.testing.assert_allclose(
        state(rater, 6)[4:], [[1500.0, math.sqrt(350.0**2 + (SCALE * 0.06) ** 2), 0.06]] * 2
    )


# --------------------------------------------------------------------------------------------
# Rating periods
# --------------------------------------------------------------------------------------------


def test_an_idle_players_deviation_grows_by_step_6_once_per_period() -> None:
    rater = rater_with([(1600.0, 80.0, 0.09)], n=2, period=30.0)
    phi2, vol2 = (80.0 / SCALE) ** 2, 0.09**2
    for k, end in enumerate([35.0, 61.0, 100.0, 200.0], start=1):
        rater.update([duel(k, 1, 2, 0, end)])  # others' games close the periods before ``end``
        closed = math.floor(end / 30.0)
        assert rater.closed_periods == closed
        assert rater.means(np.array([0]))[0] == pytest.approx(1600.0, rel=1e-15)
        expected = SCALE * math.sqrt(phi2 + closed * vol2)
        assert rater.deviations(np.array([0]))[0] == pytest.approx(expected, rel=1e-13)
        assert rater.variances(np.array([0]))[0] == pytest.approx(expected**2, rel=1e-13)


def test_a_returning_player_is_rated_from_the_inflated_deviation() -> None:
    rater = rater_with([(1600.0, 80.0, 0.09), (1500.0, 60.0, 0.05)], n=2, period=30.0)
    rater.update([duel(0, 2, 3, 0, 170.0)])  # periods 0..4 close with 0 and 1 idle
    rater.update([duel(1, 0, 1, 1, 175.0), duel(2, 2, 3, 0, 185.0)])  # closes period 5
    rd0 = SCALE * math.sqrt((80.0 / SCALE) ** 2 + 5 * 0.09**2)
    rd1 = SCALE * math.sqrt((60.0 / SCALE) ** 2 + 5 * 0.05**2)
    np.testing.assert_allclose(
        state(rater, 2),
        [
            reference(1600.0, rd0, 0.09, [(1500.0, rd1, 0.0)])[:3],
            reference(1500.0, rd1, 0.05, [(1600.0, rd0, 1.0)])[:3],
        ],
        rtol=1e-12,
    )


def test_batches_and_game_by_game_agree_and_runs_are_deterministic() -> None:
    rng = np.random.default_rng(7)
    ends = np.sort(rng.uniform(0.0, 500.0, 120))
    games = []
    for k, end in enumerate(ends):
        a, b = rng.choice(12, size=2, replace=False)
        games.append(duel(k, int(a), int(b), int(rng.integers(0, 2)), float(end)))
    whole = rater_with([], n=12, period=45.0)
    whole.update(games)
    single = rater_with([], n=12, period=45.0)
    for game in games:
        single.update([game])
    split = rater_with([], n=12, period=45.0)
    for lo in range(0, 120, 17):
        split.update(games[lo : lo + 17])
    again = rater_with([], n=12, period=45.0)
    again.update(games)
    for other in (single, split, again):
        np.testing.assert_array_equal(state(other, 12), state(whole, 12))
        np.testing.assert_array_equal(
            other.variances(np.arange(12)), whole.variances(np.arange(12))
        )
    assert whole.closed_periods == math.floor(ends[-1] / 45.0)
    assert len(set(state(whole, 12)[:, 0].tolist())) > 6  # periods were rated


def test_a_late_game_counts_in_the_first_open_period() -> None:
    late = rater_with(PAPER, n=2)
    late.update([CLOSE_PERIOD_0, duel(9, 0, 1, 0, 30.0)])  # ends in period 0, already closed
    on_time = rater_with(PAPER, n=2)
    on_time.update([CLOSE_PERIOD_0, duel(9, 0, 1, 0, 70.0)])
    assert late.closed_periods == on_time.closed_periods == 1
    np.testing.assert_array_equal(state(late, 6), state(on_time, 6))
    late.update([duel(10, 4, 5, 0, 121.0)])
    on_time.update([duel(10, 4, 5, 0, 121.0)])
    np.testing.assert_array_equal(state(late, 6), state(on_time, 6))
    assert state(late, 1)[0, 0] != 1500.0


def test_a_failed_batch_changes_nothing_pending_included() -> None:
    rater = rater_with(PAPER, n=2)
    rater.update(PAPER_GAMES[:1])
    with pytest.raises(KeyError, match="unknown player id 9"):
        rater.update([PAPER_GAMES[1], CLOSE_PERIOD_0, duel(7, 0, 9, 0, 70.0)])
    assert rater.closed_periods == 0
    np.testing.assert_allclose(state(rater, 4), np.array(PAPER), rtol=1e-15)  # RD: 1 ulp
    rater.update([*PAPER_GAMES[1:], CLOSE_PERIOD_0])
    assert state(rater, 1)[0, 0] == pytest.approx(1464.0506705393013, rel=1e-12)


# --------------------------------------------------------------------------------------------
# Team and free-for-all games: every opposing pair is a 1v1 result
# --------------------------------------------------------------------------------------------


def test_team_and_ffa_games_are_pairwise_results_by_score_per_hour() -> None:
    start = [(1500.0 + 40 * k, 120.0 + 10 * k, 0.06) for k in range(6)]
    seats = [
        stint(0, 0, 12.0, 0.0, 20.0),
        stint(1, 0, 3.0, 0.0, 20.0),
        stint(2, 1, 6.0, 0.0, 20.0),
        stint(3, 1, 3.0, 10.0, 20.0),  # joined late: 3 points in 10 minutes
        Seat(8, 1, 0.0, 20.0, 50.0, False, False, 0.0),  # a guest: never compared
        stint(4, 0, 9.0, 0.0, 5.0),  # left before player 3 came: no pair with 3; beats 2
    ]
    team = GameResult(0, "team", 0.0, 20.0, tuple(seats), 0)
    ffa_seats = (stint(5, None, 2.0, 30.0, 40.0), stint(0, None, 2.0, 30.0, 40.0))
    ffa = GameResult(1, "ffa", 30.0, 40.0, ffa_seats, None)
    closer = duel(2, 6, 7, 0, 60.0)
    rater = rater_with(start, n=2)
    rater.update([team, ffa, closer])
    shuffled = rater_with(start, n=2)
    reordered = GameResult(0, "team", 0.0, 20.0, tuple(reversed(seats)), 0)
    shuffled.update([reordered, GameResult(1, "ffa", 30.0, 40.0, ffa_seats[::-1], None), closer])
    np.testing.assert_array_equal(state(rater, 6), state(shuffled, 6))
    results = {  # teammates never compared; 0 vs 5 in the ffa is a draw (equal SPH)
        0: [(2, 1.0), (3, 1.0), (5, 0.5)],
        1: [(2, 0.0), (3, 0.0)],
        2: [(0, 0.0), (1, 1.0), (4, 0.0)],
        3: [(0, 0.0), (1, 1.0)],
        4: [(2, 1.0)],
        5: [(0, 0.5)],
    }
    for player, games in results.items():
        opponents = [(*start[j][:2], s) for j, s in games]
        expected = reference(*start[player], opponents)[:3]
        np.testing.assert_allclose(state(rater, 6)[player], expected, rtol=1e-12)


def test_1v1_guests_and_bad_winners() -> None:
    rater = rater_with(PAPER, n=2)
    guest = GameResult(
        0,
        "1v1",
        0.0,
        10.0,
        (stint(0, 0, 1.0, 0.0, 10.0), Seat(1, 1, 0.0, 10.0, 0.0, False, False, 0.0)),
        0,
    )
    rater.update([guest, CLOSE_PERIOD_0])
    np.testing.assert_allclose(state(rater, 1)[0], reference(*PAPER[0], [])[:3], rtol=1e-14)
    with pytest.raises(ValueError, match=r"game 5 \(1v1\): winner 3 is neither side"):
        rater.update([duel(5, 0, 1, 3, 70.0)])
    with pytest.raises(ValueError, match="end nan is not finite"):
        rater.update([GameResult(6, "1v1", 0.0, math.nan, duel(6, 0, 1, 0, 10.0).seats, 0)])


# --------------------------------------------------------------------------------------------
# Win model, parameters, protocol
# --------------------------------------------------------------------------------------------


def test_win_probability_is_glickmans_predictive_probability_and_quality_its_evenness() -> None:
    rater = rater_with([(1700.0, 50.0, 0.06), (1500.0, 200.0, 0.06), (1500.0, 80.0, 0.06)])
    a, b = np.array([0, 1, 2, 1, 0]), np.array([1, 0, 1, 1, 2])
    p = rater.win_probability(a, b)
    rd = np.array([50.0, 200.0, 80.0])
    r = np.array([1700.0, 1500.0, 1500.0])
    g = 1.0 / np.sqrt(1.0 + 3.0 * (np.log(10) / 400) ** 2 * (rd[a] ** 2 + rd[b] ** 2) / np.pi**2)
    np.testing.assert_allclose(p, 1.0 / (1.0 + 10.0 ** (-g * (r[a] - r[b]) / 400.0)), rtol=1e-6)
    np.testing.assert_allclose(p + rater.win_probability(b, a), 1.0, rtol=1e-15)
    assert p[2] == 0.5 and p[3] == 0.5 and p[0] > 0.5
    np.testing.assert_array_equal(rater.quality(a, b), 1.0 - np.abs(2.0 * p - 1.0))
    assert rater.beta2 == pytest.approx(math.pi**2 * SCALE**2 / 6.0)


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("tau", 0.0),
        ("tau", -1.0),
        ("tau", math.nan),
        ("initial_rating", math.inf),
        ("initial_deviation", 0.0),
        ("initial_volatility", -0.06),
        ("period", 0.0),
        ("period", True),
        ("period", "60"),
    ],
)
def test_bad_parameters_are_one_line_errors_naming_the_parameter(param: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^{param} must be ") as info:
        Glicko2Rater(**{param: value})  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
    with pytest.raises(PluginError, match=rf"^rater 'glicko2': {param} must be "):
        RATERS.create("glicko2", {param: value})


def test_conforms_to_the_rater_protocol() -> None:
    rater = RATERS.create("glicko2", {"period": 15.0, "tau": 0.8})
    assert isinstance(rater, Rater) and rater.has_variance and not rater.skill_scale
    rater.add_players(np.arange(3), np.full(3, 25.0), np.full(3, 8.0))
    np.testing.assert_array_equal(rater.means(np.arange(3)), 1500.0)
    np.testing.assert_allclose(rater.variances(np.arange(3)), 350.0**2)
    with pytest.raises(KeyError, match="unknown player id 3"):
        rater.means(np.array([3]))
    # the second game (pending in period 2) closes period 1, which holds the first
    rater.update([duel(0, 0, 2, 0, 20.0), duel(1, 1, 2, 1, 31.0)])
    after = rater.means(np.arange(3))
    assert after[0] > 1500.0 > after[2] and after[1] == 1500.0
    with pytest.raises(ValueError, match="deviation must be > 0"):
        rater.set_ratings(np.array([0]), [1500.0], [0.0], [0.06])
