"""The vectorised engine for the paper's study: reproduction, determinism, common random numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lobbysim.paper import METRICS, PaperStudy, draw_priors, run_study, simulate_block
from lobbysim.policies import POLICIES, DrawChance, KnowledgeGradient

SHORT = PaperStudy(case="top", n_games=40, windows=((1, 10), (11, 20), (21, 40)), block_paths=16)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_case_kg_has_the_highest_true_draw_probability_late(seed: int) -> None:
    # The paper's central claim (Section 4, Figure 1): player 0 at the top of the ranking, after
    # ~100 games KG's matches have a higher true draw probability than PE's and DrawChance's.
    result = run_study(PaperStudy(case="top"), paths=300, seed=seed, jobs=2)
    paired = result.windows.query("kind == 'paired_difference' and window == '201-500'")
    assert set(paired.policy) == {
        "knowledge_gradient - point_estimate",
        "knowledge_gradient - draw_chance",
    }
    z = paired.draw_prob_true / paired.draw_prob_true_se
    assert (z > 2).all(), paired


def test_same_seed_same_results_whatever_the_number_of_workers() -> None:
    policies = ["point_estimate", "knowledge_gradient"]
    one = run_study(SHORT, policies, paths=40, seed=5, jobs=1)
    two = run_study(SHORT, policies, paths=40, seed=5, jobs=2)
    pd.testing.assert_frame_equal(one.per_game, two.per_game, check_exact=True)
    pd.testing.assert_frame_equal(one.windows, two.windows, check_exact=True)
    other = run_study(SHORT, policies, paths=40, seed=6, jobs=1)
    assert not one.per_game.equals(other.per_game)


def test_policies_see_the_same_truths_and_noise() -> None:
    # DrawChance and KG with a negligible look-ahead weight rank candidates alike (q~ is q times a
    # constant), so on common random numbers they must produce identical paths.
    a = simulate_block(SHORT, DrawChance(), seed=3, block=1, n_paths=16)
    b = simulate_block(SHORT, KnowledgeGradient(gamma=1e-12), seed=3, block=1, n_paths=16)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.window_means, b.window_means)
    # ... while another block draws other skills and noise.
    c = simulate_block(SHORT, DrawChance(), seed=3, block=2, n_paths=16)
    assert not np.array_equal(a.mean, c.mean)


def test_cases_share_one_population_and_place_player_0() -> None:
    top = draw_priors(PaperStudy(case="top"), seed=9)
    bottom = draw_priors(PaperStudy(case="bottom"), seed=9)
    middle = draw_priors(PaperStudy(case="middle"), seed=9)
    equal = draw_priors(PaperStudy(case="top", equal_priors=True), seed=9)
    for means, truth, variances in (top, bottom, middle):
        np.testing.assert_array_equal(means, truth)
        assert sorted(truth) == sorted(top[1]) and sorted(variances) == sorted(top[2])
    assert top[1][0] == top[1].max()
    assert bottom[1][0] == bottom[1].min()
    assert int((middle[1] > middle[1][0]).sum()) == 24  # rank 25 of 50
    np.testing.assert_array_equal(equal[0], np.zeros(50))
    np.testing.assert_array_equal(equal[1], top[1])


def test_window_averages_agree_with_the_per_game_means() -> None:
    result = run_study(SHORT, ["point_estimate", "draw_chance"], paths=30, seed=1)
    for (first, last), label in zip(SHORT.windows, SHORT.window_labels(), strict=True):
        for policy in ("point_estimate", "draw_chance"):
            pg = result.per_game
            games = pg[(pg.policy == policy) & (pg.game >= first) & (pg.game <= last)]
            w = result.windows
            row = w[(w.kind == "mean") & (w.policy == policy) & (w.window == label)]
            for metric in METRICS:
                assert games[metric].mean() == pytest.approx(float(row[metric].iloc[0]), rel=1e-12)
    assert (result.windows.kind == "paired_difference").sum() == 0  # no KG, no paired rows
    se = result.per_game.draw_prob_true_se
    assert (se > 0).all() and (se < result.per_game.draw_prob_true).all()
    # the blockwise (Chan) standard error equals the direct one over all paths
    values = np.concatenate(
        [
            simulate_block(SHORT, POLICIES.create("draw_chance"), 1, b, n).window_means
            for b, n in enumerate([16, 14])
        ]
    )
    row = result.windows[(result.windows.kind == "mean") & (result.windows.policy == "draw_chance")]
    direct = values[:, :, 0].std(axis=0, ddof=1) / np.sqrt(30)
    np.testing.assert_allclose(row.draw_prob_true_se.to_numpy(), direct, rtol=1e-12)


def test_learning_happens() -> None:
    # Beliefs converge: player 0's squared error falls by a large factor over the games.
    result = run_study(
        PaperStudy(case="middle", n_games=200, windows=((1, 10), (191, 200))),
        ["draw_chance"],
        paths=200,
        seed=2,
    )
    early, late = result.windows.query("kind == 'mean'").sq_error
    assert late < 0.4 * early


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"case": "center"}, "case must be one of top, bottom, middle, got 'center'"),
        ({"n_games": 0}, "n_games must be >= 1, got 0"),
        ({"beta2": 0.0}, "beta2 must be > 0, got 0.0"),
        ({"middle_rank": 51}, "middle_rank must be in 1..50, got 51"),
        ({"n_games": 150}, "window 101-200 is not within games 1..150"),
    ],
)
def test_study_rejects_bad_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PaperStudy(**kwargs)  # type: ignore[arg-type]


def test_run_study_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="paths must be >= 2"):
        run_study(SHORT, paths=1)
    with pytest.raises(ValueError, match=r"did you mean 'draw_chance'"):
        run_study(SHORT, ["draw_chanse"], paths=4)
