"""The answer first: the share of the oracle's gain a policy captures and its costs against
random pairing, the bounds never ranked, queue times in seconds under two minutes, and the
pass-grid warning."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest

from lobbysim.experiments.replications import (
    ExperimentResult,
    oracle_shares,
    paired_differences,
    run_experiment,
)
from lobbysim.reporting.answer import (
    ON_GRID,
    ZERO_WIDTH,
    Answer,
    Cost,
    answer_sentence,
    answers,
    duration_text,
    grid_notes,
    measure_flags,
    queue_seconds,
    queue_time_unit,
    runs_answers,
)
from lobbysim.reporting.document import format_number
from lobbysim.reporting.headline import experiment_headline, headline_text, item_sentence
from lobbysim.reporting.tables import FLAG_MARK, metrics_text
from lobbysim.scenario import Scenario
from lobbysim.stats.intervals import detectable_difference

SMALL = {
    "name": "answer",
    "horizon": 120,
    "warmup": 10,
    "seed": 5,
    "arrivals": {"name": "poisson", "rate": 3.0},
    "population": {"session_games_mean": 4, "patience_mean": 3.0},
    "game": {"length": 8},
    "matchmaker": {"policy": "draw_chance", "threshold": [[0, 0.5], [1, 0.0]]},
}


@pytest.fixture(scope="module")
def compared() -> ExperimentResult:
    scenario = Scenario.from_dict(SMALL)
    return run_experiment(
        scenario, ["draw_chance", "uniform_random", "oracle"], replications=4, jobs=2
    )


def test_durations_are_seconds_under_two_minutes() -> None:
    assert duration_text(0.5, 0.4, 0.6) == "+30.0 s [+24.0, +36.0]"
    assert duration_text(-0.05, -0.1, 0.0, signed=True) == "-3.00 s [-6.00, 0]"
    assert duration_text(2.5, 1.5, 3.5) == "+2.50 min [+1.50, +3.50]"  # not all under 2
    assert duration_text(1.0, math.nan, math.nan, signed=False) == "60.0 s"
    assert duration_text(math.nan, 0.0, 1.0) == "n/a"


@pytest.mark.slow
def test_the_answer_is_the_share_of_the_oracles_gain_and_the_costs_against_random(
    compared: ExperimentResult,
) -> None:
    (answer,) = answers(compared)
    assert answer.policy == "draw_chance" and answer.fairness == "skill_gap_true_mean"
    share = oracle_shares(compared.metrics, names=["skill_gap_true_mean"]).iloc[0]
    assert (answer.share, answer.low, answer.high) == pytest.approx(
        (share["share"], share["ci_low"], share["ci_high"]), rel=1e-12
    )
    assert 0 < answer.share < 1.5
    frame = compared.metrics[compared.metrics.policy.isin(["uniform_random", "draw_chance"])]
    costs = paired_differences(frame, "uniform_random").set_index("metric")
    for cost in answer.costs:
        row = costs.loc[cost.metric]
        assert (cost.mean, cost.low, cost.high) == pytest.approx(
            (row["mean"], row["ci_low"], row["ci_high"]), rel=1e-12
        )
    sentence = answer_sentence(answer)
    assert sentence.startswith(f"draw_chance captures {100 * answer.share:.0f}% [")
    assert [c.metric for c in answer.costs] == [
        "queue_time_mean", "queue_time_tail_mean", "abandonment_rate"
    ]  # fmt: skip
    mean_wait = next(c for c in answer.costs if c.metric == "queue_time_mean")
    if mean_wait.low > 0:
        wait = duration_text(mean_wait.mean, mean_wait.low, mean_wait.high, seconds=True)
        assert f"at a cost of {wait} mean wait" in sentence
    abandonment = next(c for c in answer.costs if c.metric == "abandonment_rate")
    if abandonment.low > 0:
        assert f"{format_number(100 * abandonment.mean, signed=True)} points [" in sentence
    for cost in answer.costs:  # a difference whose interval holds 0 is never a cost
        if cost.low <= 0 <= cost.high:
            assert "no significant change in " in sentence


def test_the_bounds_are_never_ranked_and_the_answer_comes_first(
    compared: ExperimentResult,
) -> None:
    headline = experiment_headline(compared)
    text = headline_text(headline)
    assert text.splitlines()[0].startswith("draw_chance captures ")
    for item in headline.items:
        sentence = item_sentence(item, headline.baseline)
        assert "uniform_random is best" not in sentence and "oracle is best" not in sentence
    assert "oracle (bound)" in text and "uniform_random (bound)" in text


def test_a_queue_time_on_the_pass_grid_in_every_run_is_flagged_and_never_quoted(
    compared: ExperimentResult,
) -> None:
    runs = compared.metrics.copy()
    tick = compared.scenario.matchmaker.tick
    before = measure_flags(runs, tick)  # continuous waits (a pass on every arrival)
    assert "queue_time_p90" not in before and "queue_time_tail_mean" not in before
    # every run of every policy a multiple of the tick, not all the same
    runs["queue_time_p90"] = tick * (1 + runs["replication"] % 3)
    runs["queue_time_tail_mean"] = tick * (2 + runs["replication"] % 2)
    flagged = dataclasses.replace(compared, metrics=runs)
    flags = measure_flags(runs, tick)
    assert (flags["queue_time_p90"], flags["queue_time_tail_mean"]) == (ON_GRID, ON_GRID)
    notes = grid_notes(flagged)
    grid = [n.split(" is ")[0] for n in notes if "pass interval" in n]
    assert grid == ["queue time p90", "tail wait"]
    assert f"a multiple of the {format_number(tick)}-minute pass interval" in notes[-2]
    (answer,) = answers(flagged)
    assert [c.metric for c in answer.costs] == ["queue_time_mean", "abandonment_rate"]
    assert "tail wait" not in answer_sentence(answer)
    # one run off the grid: not flagged
    runs = runs.copy()
    runs.loc[0, "queue_time_p90"] += tick / 3
    assert "queue_time_p90" not in measure_flags(runs, tick)
    # one policy with one value in every replication: a zero-width interval, flagged
    runs.loc[runs["policy"] == "oracle", "queue_time_p50"] = 0.123
    assert measure_flags(runs, tick)["queue_time_p50"] == ZERO_WIDTH
    # in the terminal's table: the mark and its footnote
    table = metrics_text(flagged)
    assert f"queue_time_p90 {FLAG_MARK}" in table and f"queue_time_tail_mean {FLAG_MARK}" in table
    assert f"{FLAG_MARK} flagged, not used in the answer: queue_time_p90: on the pass grid" in (
        " ".join(table.split())
    )


def _cost(metric: str, mean: float, low: float, high: float, sd: float = 0.1) -> Cost:
    return Cost(metric, mean, low, high, sd, 10)


def test_words_follow_the_signs_of_shares_and_costs() -> None:
    waits = _cost("queue_time_mean", 0.1, 0.05, 0.15)
    tail = _cost("queue_time_tail_mean", -0.02, -0.03, -0.01)
    held = _cost("abandonment_rate", 0.001, -0.002, 0.004, sd=0.004)
    answer = Answer("p", "skill_gap_true_mean", 0.55, 0.5, 0.59, (waits, tail, held), seconds=True)
    assert answer_sentence(answer) == (
        "p captures 55% [50%, 59%] of the fairness the oracle adds over random pairing (true "
        "skill gap), at a cost of +6.00 s [+3.00, +9.00] mean wait; with 1.20 s [0.600, 1.80] "
        "less tail wait; no significant change in abandonment (could detect "
        f"±{format_number(100 * detectable_difference(0.004, 10))} points)."
    )
    worse = dataclasses.replace(answer, share=-0.74, low=-1.01, high=-0.46)
    sentence = answer_sentence(worse)
    assert sentence.startswith(
        "p is less fair than random pairing by 74% [46%, 101%] of the fairness the oracle adds "
        "over it (true skill gap)"
    )
    assert "captures" not in sentence
    tied = dataclasses.replace(answer, share=0.05, low=-0.1, high=0.2, costs=(held,))
    assert answer_sentence(tied) == (
        "p is not significantly fairer than random pairing: 5% [-10%, 20%] of the fairness the "
        "oracle adds over it (true skill gap), no significant change in abandonment (could "
        f"detect ±{format_number(100 * detectable_difference(0.004, 10))} points)."
    )
    # a bound that rounds to 0 reads 0%, not -0% (ladder_4v4 printed "22% [-0%, 44%]")
    edge = dataclasses.replace(answer, share=0.22, low=-0.004, high=0.44, costs=())
    assert answer_sentence(edge).startswith(
        "p is not significantly fairer than random pairing: 22% [0%, 44%] of"
    )
    # one unit for every queue time of the comparison: minutes when a mean wait reaches 2
    assert "+0.100 min [+0.0500, +0.150] mean wait" in answer_sentence(
        dataclasses.replace(answer, seconds=False)
    )
    runs = pd.DataFrame({"policy": ["a", "b"], "queue_time_mean": [0.5, 1.99]})
    assert queue_seconds(runs) and queue_time_unit(runs) == (60.0, "s")
    runs.loc[1, "queue_time_mean"] = 2.0
    assert not queue_seconds(runs) and queue_time_unit(runs) == (1.0, "min")


def _runs(gaps: dict[str, list[float]], draws: dict[str, list[float]]) -> pd.DataFrame:
    """Per-run metrics: a policy's true skill gap and draw probability per replication, a mean
    wait of 0.1 minutes (the policy 0.15)."""
    return pd.DataFrame(
        [
            {
                "policy": policy,
                "replication": r,
                "skill_gap_true_mean": gap,
                "draw_prob_true_mean": draws[policy][r],
                "queue_time_mean": 0.15 + 0.002 * r * r
                if policy == "draw_chance"
                else 0.1 + 0.001 * r,
            }
            for policy, values in gaps.items()
            for r, gap in enumerate(values)
        ]
    )


def test_no_share_is_claimed_where_the_oracle_is_no_fairer_than_random() -> None:
    """Team games can make the oracle less fair than random pairing (its teams balanced after
    the players are chosen): the answer then gives both differences from random pairing, never
    a ratio of two losses; where the draw probability shows an oracle's gain, that is used."""
    policies = ["draw_chance", "uniform_random", "oracle"]
    gaps = {
        "draw_chance": [1.06, 1.05, 1.07, 1.06],
        "uniform_random": [1.0, 0.99, 1.01, 1.0],
        "oracle": [1.02, 1.02, 1.03, 1.03],  # +0.0225 against random: less fair
    }
    flat = {p: [0.15] * 4 for p in policies}
    (answer,) = runs_answers(_runs(gaps, flat), policies)
    assert math.isnan(answer.share) and answer.fairness == "skill_gap_true_mean"
    assert answer.oracle_gain is not None and answer.gain is not None
    assert answer.oracle_gain.mean == pytest.approx(0.025)
    assert answer.gain.mean == pytest.approx(0.06)
    sentence = answer_sentence(answer)
    assert sentence.startswith(
        "draw_chance has no share of the oracle's gain to capture: matching on true skill is no "
        "fairer than random pairing here (true skill gap +0.0250 [+0.0158, +0.0342] skill points "
        "for the oracle); draw_chance's is +0.0600 [+0.0600, +0.0600] skill points against "
        "random pairing, at a cost of +3.33 s [+2.68, +3.98] mean wait."
    )
    assert "captures" not in sentence and "%" not in sentence
    # the draw probability shows a gain: its share is the answer
    draws = {"draw_chance": [0.155] * 4, "uniform_random": [0.15] * 4,
             "oracle": [0.16, 0.161, 0.159, 0.16]}  # fmt: skip
    (answer,) = runs_answers(_runs(gaps, draws), policies)
    assert answer.fairness == "draw_prob_true_mean" and answer.oracle_gain is None
    assert answer.share == pytest.approx(0.5)
    assert answer_sentence(answer).startswith(
        "draw_chance captures 50% [44%, 56%] of the fairness the oracle adds over random pairing "
        "(true draw probability)"
    )


def test_a_difference_the_same_in_every_replication_is_never_quoted() -> None:
    """A shared noise gives a paired difference of zero width (up to float rounding): no
    sentence quotes it as a cost (issue 45: "+60.0 s [+60.0, +60.0] p99 wait")."""
    policies = ["draw_chance", "uniform_random", "oracle"]
    gaps = {
        "draw_chance": [1.5, 1.45, 1.55, 1.5],
        "uniform_random": [2.0, 1.9, 2.1, 2.05],
        "oracle": [1.0, 0.98, 1.03, 1.0],
    }
    flat = {p: [0.15] * 4 for p in policies}
    runs = _runs(gaps, flat)
    noise = 0.1 + 0.013 * runs["replication"] ** 2
    runs["queue_time_mean"] = noise + runs["policy"].map({"draw_chance": 0.25}).fillna(0.0)
    (answer,) = runs_answers(runs, policies)
    assert "queue_time_mean" not in [c.metric for c in answer.costs]
    assert "mean wait" not in answer_sentence(answer)
    # with a spread, it is quoted again
    runs.loc[(runs["policy"] == "draw_chance") & (runs["replication"] == 1), "queue_time_mean"] += (
        0.01
    )
    (answer,) = runs_answers(runs, policies)
    assert "mean wait" in answer_sentence(answer)
